"""``OpponentSampler``: who the learner plays next, drawn from a snapshot archive.

The sampler plugs into :class:`~sp_wrappers.SelfPlayEnv` (and the vector env) as the ``opponent``:
the env calls :meth:`OpponentSampler.draw` at an episode start whenever its swap schedule says so
(``swap_every`` episodes or learner steps, counted per env copy). A draw is, in order of
precedence:

1. one of the ``fixed_opponents`` with its stated probability (e.g. 10% ``RandomPolicy``);
2. the learner's latest weights with probability ``latest_ratio`` (kept current by
   :class:`~sp_wrappers.SelfPlayCallback` through :meth:`OpponentSampler.sync_latest_weights`);
3. otherwise a snapshot from the newest ``window`` snapshots, uniformly, by prioritized
   fictitious self-play (``strategy="pfsp"``) or from the Nash equilibrium of the game between
   them (``strategy="nash"``, PSRO's meta-solver: :mod:`sp_wrappers.opponents.nash`).

PFSP and the Nash strategy read the archive's payoff table (:mod:`sp_wrappers.archive.payoff`),
kept up to date as matches are recorded, so a draw costs the same at a million recorded games as at
a thousand. PFSP reads the learner's *recent* results: each game against a snapshot is weighted
``pfsp_decay ** k``, ``k`` the number of later games against it (``PFSP_DECAY = 0.99``, AlphaStar's
payoff decay, which the league's :class:`~sp_wrappers.league.payoff.PayoffTable` uses too), so a
snapshot the learner lost to long ago and now beats stops being drawn as if it were still hard.

The Nash strategy reads the snapshots' scores against each other (every recorded game between two
eligible snapshots) and draws from the equilibrium of that symmetric zero-sum game, solved again
whenever the eligible snapshots or their results change. Pairs that never met count as even (0.5)
until measured: :meth:`OpponentSampler.missing_pairs` lists them, and
:class:`~sp_wrappers.SelfPlayCallback` plays evaluation games for them after each snapshot it
saves (``nash_games``). :attr:`OpponentSampler.nash_mixture` is the mixture drawn from.

Other processes may save into and prune the archive while a sampler draws: a snapshot pruned
between the listing and its load, or found corrupt, is left out and the snapshot draw is made
again from the listing as it is then.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..archive.store import (
    CorruptSnapshotError,
    SnapshotArchive,
    SnapshotPrunedError,
    as_archive,
)
from ..core.policies import Policy, RandomPolicy, SB3Policy, frozen_copy, is_policy
from .nash import SnapshotPayoffs, archive_payoffs
from .slots import SWAP_UNITS

__all__ = [
    "OpponentSampler",
    "STRATEGIES",
    "PFSP_WEIGHTINGS",
    "PFSP_DECAY",
    "pfsp_weights",
    "LATEST_ID",
]

STRATEGIES = ("uniform", "pfsp", "nash")
PFSP_WEIGHTINGS = ("hard", "variance", "linear", "squared", "linear_capped")
LATEST_ID = "latest"
#: Each game's weight in PFSP win rates is ``PFSP_DECAY ** (later games of the pair)``:
#: AlphaStar's payoff decay (a game 100 games back weighs 0.37 of the newest).
PFSP_DECAY = 0.99


def pfsp_weights(
    win_rates: Sequence[float], weighting: str = "hard", exponent: float = 2.0
) -> np.ndarray:
    """Prioritized fictitious self-play weights from the learner's win rate against each opponent.

    ``"hard"`` weights ``(1 - p) ** exponent`` (focus on opponents the learner loses to),
    ``"variance"`` weights ``p * (1 - p)`` (focus on even matches). AlphaStar's league (Vinyals et
    al. 2019, pseudocode ``pfsp``) also uses ``"linear"`` ``1 - p``, ``"squared"`` ``(1 - p) ** 2``
    and ``"linear_capped"`` ``min(0.5, 1 - p)``. Returned weights sum to 1; when every weight is
    zero (the learner beats everyone) they fall back to uniform.

    >>> pfsp_weights([0.0, 0.5, 1.0], "hard").round(3).tolist()
    [0.8, 0.2, 0.0]
    >>> pfsp_weights([0.0, 0.5, 1.0], "variance").tolist()
    [0.0, 1.0, 0.0]
    >>> pfsp_weights([0.0, 0.5, 1.0], "linear").round(3).tolist()
    [0.667, 0.333, 0.0]
    """
    p = np.clip(np.asarray(win_rates, dtype=np.float64), 0.0, 1.0)
    if weighting == "hard":
        w = (1.0 - p) ** exponent
    elif weighting == "variance":
        w = p * (1.0 - p)
    elif weighting == "linear":
        w = 1.0 - p
    elif weighting == "squared":
        w = (1.0 - p) ** 2
    elif weighting == "linear_capped":
        w = np.minimum(0.5, 1.0 - p)
    else:
        raise ValueError(f"pfsp weighting must be one of {PFSP_WEIGHTINGS}, got {weighting!r}.")
    total = w.sum()
    if len(w) and total <= 0:
        return np.full(len(w), 1.0 / len(w))
    return w / total


def draw_index(rng: np.random.Generator, probabilities: Sequence[float]) -> int:
    """An index drawn with ``probabilities`` (non-negative, summing to 1), exactly as
    ``rng.choice(len(probabilities), p=probabilities)`` draws it (the running sums divided by
    their total, the first one above one uniform from ``rng``), without its argument checks and
    array calls: they were most of an episode's snapshot draw. Probabilities that cannot be
    drawn from go to ``rng.choice``, which says why.

    >>> draw_index(np.random.default_rng(0), np.array([0.0, 0.25, 0.75]))
    2
    """
    return draw_from_sums(rng, running_sums(probabilities), probabilities)


def running_sums(probabilities: Sequence[float]) -> list[float]:
    """The running sums :func:`draw_index` draws with (as ``np.cumsum``, in order), for a caller
    that draws many times from the same probabilities (:func:`draw_from_sums`)."""
    weights = probabilities.tolist() if isinstance(probabilities, np.ndarray) else probabilities
    return list(itertools.accumulate(float(w) for w in weights))


def draw_from_sums(
    rng: np.random.Generator, sums: Sequence[float], probabilities: Sequence[float]
) -> int:
    """:func:`draw_index` from its :func:`running_sums` of ``probabilities``.

    >>> probabilities = [0.0, 0.25, 0.75]
    >>> draw_from_sums(np.random.default_rng(0), running_sums(probabilities), probabilities)
    2
    """
    total = sums[-1] if sums else 0.0
    if not 0.0 < total < math.inf:
        return int(rng.choice(len(sums), p=probabilities))
    u = rng.random()
    for index, running in enumerate(sums):
        if running / total > u:  # searchsorted(cdf, u, side="right") on cdf = sums / total
            return index
    return len(sums) - 1  # not reached: the last running sum over the total is 1.0 > u


#: policy family -> the attribute of an SB3 policy of that family that acts alone (its other
#: modules, critics and target networks, only train)
_ACTING_MODULES = {"actor": "actor", "q_network": "q_net"}


def acting_part(policy: Any) -> tuple[str, SB3Policy, set[str]] | None:
    """For an :class:`~sp_wrappers.SB3Policy` whose network acts with one module alone (SAC's,
    TQC's and TD3's ``actor``, DQN's ``q_net``): that module's ``state_dict`` key prefix, an
    ``SB3Policy`` over that module (loading its weights in place) and its keys; ``None`` for
    every other policy.

    >>> import gymnasium as gym
    >>> from stable_baselines3 import SAC
    >>> latest = SB3Policy(SAC("MlpPolicy", gym.make("Pendulum-v1")))
    >>> prefix, loader, keys = acting_part(latest)
    >>> prefix, loader.policy is latest.policy.actor, "mu.weight" in keys
    ('actor.', True, True)
    """
    from ..core.policy_families import policy_family

    if type(policy) is not SB3Policy:
        return None
    network = policy.policy
    name = _ACTING_MODULES.get(policy_family(network))
    module = getattr(network, name, None) if name is not None else None
    if module is None or module is network:
        return None
    try:
        loader = SB3Policy(
            module, policy_id=policy.policy_id, device=policy.device, copy_weights=False
        )
    except (TypeError, ValueError):
        return None
    keys = set(module.state_dict().keys())
    prefix = f"{name}."
    if not keys or not {prefix + key for key in keys} <= set(network.state_dict().keys()):
        return None
    return prefix, loader, keys


class OpponentSampler:
    """Draws opponents from a :class:`~sp_wrappers.SnapshotArchive`, ML-Agents-ghost style.

    :param archive: the snapshot archive to draw from, or the path of its directory (opened here,
        created when missing); also read from env worker processes.
    :param window: only the newest ``window`` snapshots are eligible; ``None`` means all.
    :param latest_ratio: probability (0..1) of facing the learner's latest weights instead of a
        snapshot, as a share of the draws ``fixed_opponents`` leave (with ``[(random, 0.2)]`` and
        ``latest_ratio=0.5``: 40% of all draws). Until the callback has sent weights, that share
        goes to the snapshots.
    :param swap_every: keep an opponent for this many ``swap_unit`` before drawing again
        (per env copy; a draw takes effect at the next episode start).
    :param swap_unit: ``"episodes"`` or ``"steps"`` (learner steps).
    :param strategy: ``"uniform"`` over the window, ``"pfsp"`` (prioritized fictitious self-play)
        weighting snapshots by the learner's recorded win rate against them, or ``"nash"``: the
        Nash equilibrium of the game between the window's snapshots (see :attr:`nash_mixture`).
    :param pfsp_weighting: ``"hard"`` (``(1-p)^k``), ``"variance"`` (``p(1-p)``), ``"linear"``,
        ``"squared"`` or ``"linear_capped"`` (see :func:`pfsp_weights`).
    :param pfsp_exponent: ``k`` of the hard weighting.
    :param pfsp_decay: how fast old results fade from PFSP win rates: each game is weighted
        ``pfsp_decay ** (games played against that snapshot since)`` (see
        :meth:`SnapshotArchive.scores_against <sp_wrappers.SnapshotArchive.scores_against>`);
        ``1.0`` weighs the whole history alike.
    :param fixed_opponents: ``[(policy, probability), ...]`` always in the mix, e.g.
        ``[(RandomPolicy(), 0.1)]``; probabilities sum to at most 1.
    :param learner_id: the player name the callback records the learner's matches under.
    :param deterministic: whether snapshot opponents take their most likely action.
    :param fallback: the opponent while the archive is still empty (default ``RandomPolicy()``).
    :param seed: seeds draws made without an explicit generator.

    >>> import tempfile
    >>> from sp_wrappers import SnapshotArchive
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> sampler = OpponentSampler(archive, window=5, latest_ratio=0.5, seed=0)
    >>> sampler.draw().policy_id                 # empty archive: the fallback
    'random'
    """

    def __init__(
        self,
        archive: SnapshotArchive | str | os.PathLike[str],
        window: int | None = 10,
        latest_ratio: float = 0.5,
        swap_every: int = 1,
        swap_unit: str = "episodes",
        strategy: str = "uniform",
        pfsp_weighting: str = "hard",
        pfsp_exponent: float = 2.0,
        pfsp_decay: float = PFSP_DECAY,
        fixed_opponents: Sequence[tuple[Policy, float]] = (),
        learner_id: str = "learner",
        deterministic: bool = False,
        fallback: Policy | None = None,
        seed: int | None = None,
    ) -> None:
        archive = as_archive(archive, owner="OpponentSampler(archive=...)")
        if window is not None and (not isinstance(window, int | np.integer) or window < 1):
            raise ValueError(f"window must be a positive integer or None (all), got {window!r}.")
        if not 0.0 <= float(latest_ratio) <= 1.0:
            raise ValueError(f"latest_ratio must be between 0 and 1, got {latest_ratio!r}.")
        if not isinstance(swap_every, int | np.integer) or swap_every < 1:
            raise ValueError(f"swap_every must be a positive integer, got {swap_every!r}.")
        if swap_unit not in SWAP_UNITS:
            raise ValueError(
                f"swap_unit must be one of {SWAP_UNITS}, got {swap_unit!r} "
                "(ML-Agents' swap_steps corresponds to swap_unit='steps')."
            )
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}.")
        if pfsp_weighting not in PFSP_WEIGHTINGS:
            raise ValueError(
                f"pfsp_weighting must be one of {PFSP_WEIGHTINGS}, got {pfsp_weighting!r}."
            )
        if not 0.0 < float(pfsp_decay) <= 1.0:
            raise ValueError(
                f"pfsp_decay must be in (0, 1], got {pfsp_decay!r}: 0.99 (the default) weighs a "
                "game 100 games back 0.37 of the newest; 1.0 weighs the whole history alike."
            )
        fixed = list(fixed_opponents)
        for entry in fixed:
            if not (isinstance(entry, tuple | list) and len(entry) == 2 and is_policy(entry[0])):
                raise ValueError(
                    "fixed_opponents must be a list of (policy, probability) pairs, e.g. "
                    f"[(RandomPolicy(), 0.1)]; got {entry!r}."
                )
            if not 0.0 <= float(entry[1]) <= 1.0:
                raise ValueError(f"fixed opponent probability must be in [0, 1], got {entry[1]!r}.")
        if sum(float(p) for _, p in fixed) > 1.0 + 1e-9:
            raise ValueError("fixed_opponents probabilities sum to more than 1.")
        self.archive = archive
        self.window = None if window is None else int(window)
        self.latest_ratio = float(latest_ratio)
        self.swap_every = int(swap_every)
        self.swap_unit = swap_unit
        self.strategy = strategy
        self.pfsp_weighting = pfsp_weighting
        self.pfsp_exponent = float(pfsp_exponent)
        self.pfsp_decay = float(pfsp_decay)
        self.fixed_opponents = [(policy, float(p)) for policy, p in fixed]
        self.learner_id = learner_id
        self.deterministic = deterministic
        self.fallback = fallback if fallback is not None else RandomPolicy()
        self.rng = np.random.default_rng(seed)
        self.latest: SB3Policy | None = None
        self.latest_version = -1
        # (key prefix, loader, its keys) of the part of the latest policy that acts
        self._acting: tuple[str, SB3Policy, set[str]] | None = None
        self._payoffs: tuple[SnapshotPayoffs, dict[str, float]] | None = None

    # -- what the env calls ------------------------------------------------------------------------
    def draw(self, rng: np.random.Generator | None = None) -> Policy:
        """Pick the next opponent (see the module docstring for the order of precedence)."""
        rng = self.rng if rng is None else rng
        u = rng.random()
        for policy, probability in self.fixed_opponents:
            if u < probability:
                return policy
            u -= probability
        remaining = 1.0 - sum(p for _, p in self.fixed_opponents) if self.fixed_opponents else 1.0
        wants_latest = remaining > 0 and u < self.latest_ratio * remaining
        if wants_latest and self.latest is not None:
            return self.latest  # without reading the archive's listing (every other draw)
        while True:
            candidates, probabilities, sums = self._candidates()
            if self.latest is not None and not candidates:
                return self.latest
            if not candidates:
                return self.fallback
            choice = candidates[draw_from_sums(rng, sums, probabilities)]
            try:
                return self.archive.load_policy(choice, deterministic=self.deterministic)
            except (SnapshotPrunedError, CorruptSnapshotError):
                # Pruned by another process since the listing, or warned about and left out:
                # either way it is gone from the next listing, so the loop ends.
                continue

    def sync_latest_weights(self, version: int, state: Mapping[str, Any]) -> None:
        """Receive the learner's newest weights; repeated versions are ignored (shared samplers).

        The first weights are loaded whole. After them, where the policy acts with one part of
        its network only (SAC's, TQC's and TD3's actor beside their critics, DQN's ``q_net``
        beside its target network) and ``state`` holds exactly that part's weights, only that
        part is copied (in place, as a whole load would): the opponent acts as with the whole
        load, at a fraction of the copying (for SAC, every step); the rest keeps the first
        weights. Anything else is loaded whole, as before (and refused as before).
        """
        if version <= self.latest_version:
            return
        if self.latest is None:
            template = self._newest_policy()
            latest = copy.copy(template)
            latest.policy = frozen_copy(template.policy)
            latest.policy_id = LATEST_ID
            latest.load_state_dict(state)
            self.latest = latest
            self._acting = acting_part(latest)
        elif not self._load_acting_part(state):
            self.latest.load_state_dict(state)
        self.latest_version = version

    def _load_acting_part(self, state: Mapping[str, Any]) -> bool:
        """Load only the weights the latest policy acts with; ``False`` where it cannot."""
        acting = getattr(self, "_acting", None)
        if acting is None:
            return False
        prefix, loader, keys = acting
        part = {name[len(prefix) :]: w for name, w in state.items() if name.startswith(prefix)}
        if part.keys() != keys:
            return False
        loader.load_state_dict(part)
        return True

    def _newest_policy(self) -> Policy:
        """The newest snapshot's policy (the template of the latest weights); a newest snapshot
        that another process prunes before it loads gives way to the next newest."""
        while True:
            newest = self.archive.latest()
            if newest is None:
                raise RuntimeError(
                    f"The sampler got latest weights before its archive {self.archive.path} had "
                    "any snapshot to learn the policy's shape from. SelfPlayCallback saves one at "
                    "the start into its own archive: give the callback and the sampler the same "
                    "archive (or save a snapshot first)."
                )
            try:
                return self.archive.load_policy(newest.id, deterministic=self.deterministic)
            except (SnapshotPrunedError, CorruptSnapshotError):
                continue

    # -- inspection --------------------------------------------------------------------------------
    def eligible_ids(self) -> list[str]:
        """Ids of the snapshots a draw may pick: the newest ``window`` of the archive."""
        ids = self.archive.snapshot_ids()
        return list(ids if self.window is None else ids[-self.window :])

    def _candidates(self) -> tuple[Sequence[str], Sequence[float], list[float]]:
        """The eligible ids, their probabilities and :func:`running_sums` for a draw. Uniform
        ones are kept with the archive's listing (the same tuple until it changes: see
        :meth:`SnapshotArchive.snapshot_ids <sp_wrappers.SnapshotArchive.snapshot_ids>`);
        PFSP's and Nash's are computed at each draw from the results as they are then."""
        if self.strategy != "uniform":
            candidates = self.eligible_ids()
            probabilities = self.snapshot_probabilities(candidates)
            return candidates, probabilities, running_sums(probabilities)
        ids = self.archive.snapshot_ids()
        cached = self.__dict__.get("_uniform")
        if cached is None or cached[0] is not ids or cached[1] != self.window:
            candidates = ids if self.window is None else ids[-self.window :]
            probabilities = self.snapshot_probabilities(candidates).tolist()
            cached = (ids, self.window, candidates, probabilities, running_sums(probabilities))
            self.__dict__["_uniform"] = cached
        return cached[2], cached[3], cached[4]

    def snapshot_probabilities(self, ids: Sequence[str] | None = None) -> np.ndarray:
        """The probability of each eligible snapshot, given that a snapshot is drawn."""
        ids = self.eligible_ids() if ids is None else list(ids)
        if not ids:
            return np.zeros(0)
        if self.strategy == "uniform":
            return np.full(len(ids), 1.0 / len(ids))
        if self.strategy == "nash":
            mixture = self._nash(ids)[1]
            return np.array([mixture[i] for i in ids])
        scores = self.archive.scores_against(self.learner_id, decay=self.pfsp_decay)
        win_rates = [scores[i][0] if i in scores else 0.5 for i in ids]
        return pfsp_weights(win_rates, self.pfsp_weighting, self.pfsp_exponent)

    @property
    def nash_mixture(self) -> dict[str, float]:
        """``{snapshot id: probability}``: the Nash equilibrium of the game between the eligible
        snapshots, as :meth:`draw` uses it with ``strategy="nash"`` (solved again when the
        snapshots or the match history change; pairs that never met count as even)."""
        return dict(self._nash(self.eligible_ids())[1])

    def missing_pairs(self) -> list[tuple[str, str]]:
        """Pairs of eligible snapshots with no recorded game between them, whose score the Nash
        mixture takes as even (0.5): the games to schedule so it rests on measured results."""
        return self._nash(self.eligible_ids())[0].missing_pairs

    def _nash(self, ids: Sequence[str]) -> tuple[SnapshotPayoffs, dict[str, float]]:
        # The payoffs are read from the archive's payoff table (one indexed read per snapshot,
        # cached until the index changes), never by counting the match rows; the linear program
        # is solved again only when the snapshots' game changed (games against the learner
        # leave it as it was).
        payoffs = archive_payoffs(self.archive, ids)
        cached = self._payoffs
        if (
            cached is None
            or cached[0].ids != payoffs.ids
            or not np.array_equal(cached[0].games, payoffs.games)
            or not np.array_equal(cached[0].scores, payoffs.scores)
        ):
            self._payoffs = cached = (payoffs, payoffs.nash())
        return cached[0], cached[1]

    def __getstate__(self) -> dict[str, Any]:
        # Worker processes rebuild the latest policy from the weights the callback sends.
        state = self.__dict__.copy()
        state["latest"] = None
        state["latest_version"] = -1
        state["_acting"] = None
        state.pop("_uniform", None)
        return state

    def __repr__(self) -> str:
        return (
            f"OpponentSampler(window={self.window}, latest_ratio={self.latest_ratio}, "
            f"swap_every={self.swap_every}, swap_unit={self.swap_unit!r}, "
            f"strategy={self.strategy!r})"
        )
