"""PSRO: a population of best responses whose meta-mixture a new best response is trained against.

Policy-Space Response Oracles (Lanctot et al. 2017) grows a population on purpose. Each
iteration:

1. **oracle**: an SB3 learner trains for ``steps_per_iteration`` learner steps in a
   :class:`~sp_wrappers.SelfPlayVecEnv` whose :class:`~sp_wrappers.OpponentSampler` draws each
   episode's opponent from the members with the current meta-weights (fresh each iteration, or
   warm-started from the previous best response: ``warm_start``); with ``random_ratio`` and
   ``reference_ratio`` a share of its episodes goes to a uniformly random player and to the
   game's reference players instead (what the training recipes call the same: a response then
   also learns to answer lines no member plays). With ``max_doublings`` a
   response that does not improve on the mixture (its payoff against the mixture, read from a
   payoff row computed without adding it, is at most ``min_gain`` times the mixture's
   exploitability; at most 0 where that is not measured) trains on, its steps doubled each
   time, up to ``steps_per_iteration * 2**max_doublings`` or the run's ``seconds``, and only
   then joins: a short best response that found nothing is not added as a dud. With
   ``keep_budget`` the next responses start at the steps the last one needed (the budget is
   in ``psro.json``, so a resumed run goes on with it);
2. **member**: its weights join the archive as a snapshot (tagged ``psro``), played by its most
   likely move (``greedy=True``: a best response is deterministic, the stochastic policy PPO
   learns is not one) or by its probabilities;
3. **payoffs**: its payoff against every member, exact where the game can be walked
   (:class:`~sp_wrappers.evaluation.payoffs.ExactPayoffs`: OpenSpiel games, tic-tac-toe),
   estimated from games with their 95% intervals elsewhere
   (:class:`~sp_wrappers.evaluation.payoffs.SampledPayoffs`);
4. **meta-solver**: the new meta-weights (``nash``, ``uniform`` or ``prd``:
   :func:`~sp_wrappers.opponents.meta_solvers.meta_strategy`), stored in the archive
   (:meth:`~sp_wrappers.SnapshotArchive.store_mixture`);
5. **measure**: ``response_gain``, what the new member wins per game against the mixture it
   was trained against (an exact best response wins that mixture's exploitability: the gap is
   the oracle's shortfall); where the game can be walked, the exploitability and NashConv of
   the meta-mixture as the product plays it (each member in its form, reach-weighted:
   :func:`~sp_wrappers.evaluation.exploitability.exploitability`), logged as
   ``psro/exploitability`` and ``psro/nash_conv``.

The population starts with the learner's initial weights. ``psro.json`` (:data:`PSRO_FORMAT`,
version 1) records the members, the payoff matrix, the meta-weights and the measurements of
every iteration; it is written atomically after each iteration, so a run killed at any moment
resumes from its last complete iteration with the budget the next response starts at. It is
checked whole before a resume acts on it (its members must be the archive's snapshots of their
iterations); a snapshot that the archive's own records (its ``iteration:<n>`` tag and step)
show an unfinished iteration saved is moved into ``archive/orphaned/``, never deleted.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..archive.store import SnapshotArchive
from ..core.policies import RandomPolicy, SB3Policy
from ..core.run_layout import ARCHIVE_DIR, PSRO_NAME
from ..core.save_util import save_model
from ..core.state_file import (
    AnyValue,
    Int,
    List,
    Map,
    Num,
    Obj,
    Optional,
    SnapshotId,
    StateFormat,
    Str,
)
from ..envs.vector.factory import make_selfplay_vec_env
from ..evaluation.exploitability import (
    GameNotWalkableError,
    exploitability,
    exploitability_method,
)
from ..evaluation.payoffs import ExactPayoffs, SampledPayoffs
from ..opponents.meta_solvers import META_SOLVERS, meta_strategy
from ..opponents.sampler import OpponentSampler
from ..training.errors import MagnetError
from ..training.magnet import MagnetCallback, MagnetSettings
from ..training.nash_games import mixture_statistics
from ..training.schedules import BudgetSchedules
from .errors import LeagueSetupError

__all__ = [
    "PSRO",
    "PSROSettings",
    "PSROResult",
    "PSRO_STATE",
    "PSRO_FORMAT",
    "PAYOFF_MODES",
    "read_psro",
    "plot_psro",
]

#: The state file in a PSRO run directory.
PSRO_STATE = PSRO_NAME
PAYOFF_MODES = ("auto", "exact", "sampled")
#: Gains within this of the threshold are ties (exact payoffs of greedy members carry rounding of
#: about 1e-9: a copy of a member "won" 6e-10 against a Kuhn mixture).
GAIN_TOLERANCE = 1e-6
#: The tags of a member's snapshot: ``psro`` and the iteration that saved it.
PSRO_TAG, ITERATION_TAG = "psro", "iteration:"


@dataclass(frozen=True)
class PSROSettings:
    """What a PSRO run does each iteration (stored in ``psro.json``; a resumed run keeps them).

    :param steps_per_iteration: learner steps of each best response.
    :param meta_solver: ``"nash"``, ``"uniform"`` or ``"prd"``.
    :param greedy: members play their most likely legal move (else their probabilities).
    :param warm_start: each best response starts from the previous one's weights (else fresh).
    :param n_envs: env copies the oracle trains on.
    :param learner: the oracle's seat mode (``"random"``, ``"alternate"`` or an agent name).
    :param payoffs: ``"auto"`` (exact where the game can be walked), ``"exact"`` or
        ``"sampled"``.
    :param games_per_pair: games per pair for sampled payoffs.
    :param seed: seeds the oracles, their envs and the samplers.
    :param max_doublings: how many times a response that does not improve on the mixture
        trains on with its steps doubled before it joins anyway (0: never; 3: up to 8 times
        ``steps_per_iteration`` learner steps). The learner's schedules (a ``lin_...`` learning
        rate) then run once over those most steps, whether or not the response trains on.
    :param min_gain: the fraction of the mixture's exploitability a response must win against
        the mixture (per game) to join without training on; where the mixture's exploitability
        is not measured, a response must win more than 0.
    :param keep_budget: the next response starts at the learner steps the last one needed
        (else every response starts at ``steps_per_iteration``).
    :param random_ratio: the share of the oracle's episodes against a uniformly random player.
    :param reference_ratio: the share against the game's reference players (``PSRO``'s
        ``reference``: tic-tac-toe's minimax), split evenly; the meta-mixture gets the rest.
    :param magnet: each best response trains with a magnet regulariser of these settings
        (:class:`~sp_wrappers.training.magnet.MagnetSettings`: ``{"kl", "refresh", ...}`` or
        ``"kl=0.05,refresh=20"``), a fresh magnet per response; ``None``: none.
    """

    steps_per_iteration: int = 50_000
    meta_solver: str = "nash"
    greedy: bool = True
    warm_start: bool = False
    n_envs: int = 8
    learner: str = "random"
    payoffs: str = "auto"
    games_per_pair: int = 100
    seed: int = 0
    max_doublings: int = 0
    min_gain: float = 0.0
    keep_budget: bool = False
    random_ratio: float = 0.0
    reference_ratio: float = 0.0
    magnet: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.magnet is not None:
            try:
                magnet = MagnetSettings.from_json(self.magnet).to_json()
            except MagnetError as error:
                raise LeagueSetupError(f"{error} (--magnet)") from None
            object.__setattr__(self, "magnet", magnet)
        if int(self.steps_per_iteration) < 1:
            raise LeagueSetupError(
                f"steps_per_iteration must be a positive number of learner steps, got "
                f"{self.steps_per_iteration!r} (--steps)."
            )
        if self.meta_solver not in META_SOLVERS:
            raise LeagueSetupError(
                f"meta_solver must be one of {META_SOLVERS}, got {self.meta_solver!r} "
                "(--meta-solver)."
            )
        if self.payoffs not in PAYOFF_MODES:
            raise LeagueSetupError(
                f"payoffs must be one of {PAYOFF_MODES}, got {self.payoffs!r} (--payoffs)."
            )
        if int(self.n_envs) < 1:
            raise LeagueSetupError(f"n_envs must be at least 1, got {self.n_envs!r} (--n-envs).")
        if int(self.max_doublings) < 0:
            raise LeagueSetupError(
                f"max_doublings must be 0 or more, got {self.max_doublings!r} (--doublings)."
            )
        shares = (("random_ratio", "--random-ratio"), ("reference_ratio", "--reference-ratio"))
        for name, flag in shares:
            if not 0.0 <= float(getattr(self, name)) < 1.0:
                raise LeagueSetupError(
                    f"{name} is a share of the oracle's episodes in [0, 1), got "
                    f"{getattr(self, name)!r} ({flag})."
                )
        if float(self.random_ratio) + float(self.reference_ratio) >= 1.0:
            raise LeagueSetupError(
                f"random_ratio + reference_ratio = "
                f"{float(self.random_ratio) + float(self.reference_ratio):g} leaves the "
                "meta-mixture no episodes; keep their sum under 1 (--random-ratio, "
                "--reference-ratio)."
            )
        if not 0.0 <= float(self.min_gain) < 1.0:
            raise LeagueSetupError(
                f"min_gain is a fraction of the mixture's exploitability in [0, 1), got "
                f"{self.min_gain!r} (--min-gain)."
            )

    def improves(self, gain: float, exploitability: float | None) -> bool:
        """Whether a response that wins ``gain`` per game against a mixture of that
        ``exploitability`` (``None``: not measured) joins without training on: it wins more
        than ``min_gain`` times the exploitability (more than 0 where it is not measured), by
        more than :data:`GAIN_TOLERANCE`.

        >>> settings = PSROSettings(max_doublings=3)
        >>> settings.improves(0.0185, 0.0556), settings.improves(6e-10, 0.0556)
        (True, False)
        >>> PSROSettings(min_gain=0.5).improves(0.0185, 0.0556)
        False
        """
        threshold = 0.0 if exploitability is None else float(self.min_gain) * exploitability
        return gain > threshold + GAIN_TOLERANCE

    @staticmethod
    def unexploitable(exploitability: float | None) -> bool:
        """Whether a measured mixture cannot be exploited (no response can improve on it)."""
        return exploitability is not None and exploitability <= GAIN_TOLERANCE

    @property
    def max_steps(self) -> int:
        """The most learner steps one response trains for (``steps_per_iteration`` doubled
        ``max_doublings`` times)."""
        return int(self.steps_per_iteration) * 2 ** int(self.max_doublings)


@dataclass(frozen=True)
class PSROResult:
    """What :meth:`PSRO.run` ended with.

    :param iterations: complete iterations (this call's and earlier ones').
    :param members: the members' snapshot ids, oldest first (the initial weights first).
    :param weights: the last meta-weights, ``{snapshot id: probability}``.
    :param exploitability: the last meta-mixture's exploitability (``None`` where not exact).
    :param nash_conv: its NashConv (``None`` where not exact).
    :param best: the least exploitable iteration's record (``None`` where not exact).
    :param history: every iteration's record, as ``psro.json`` holds them.
    """

    iterations: int
    members: list[str]
    weights: dict[str, float]
    exploitability: float | None
    nash_conv: float | None
    best: dict[str, Any] | None
    history: list[dict[str, Any]]


class PSRO:
    """PSRO on one game, in one run directory (``archive/`` holds the members, ``psro.json`` the
    rest). A directory with ``psro.json`` is resumed with its stored settings.

    :param env_fn: builds the PettingZoo game (two seats, zero-sum).
    :param make_model: ``make_model(venv, seed)`` returns a fresh SB3 learner on ``venv``.
    :param run_dir: the run directory (created when missing).
    :param settings: :class:`PSROSettings` (a resumed run keeps the ones ``psro.json`` stored).
    :param logger: an SB3 ``Logger`` the oracles log to and ``psro/*`` is recorded in, dumped
        once per iteration (``None``: none).
    :param reference: the game's reference players, which the oracle plays for
        ``settings.reference_ratio`` of its episodes (not members: never in the meta-mixture).

    ``docs/how-to/psro.md`` runs one; the settings alone:

    >>> PSROSettings(steps_per_iteration=2048, meta_solver="prd").greedy
    True
    """

    def __init__(
        self,
        env_fn: Callable[[], Any],
        make_model: Callable[[Any, int], Any],
        run_dir: str | os.PathLike[str],
        settings: PSROSettings | None = None,
        logger: Any = None,
        reference: Sequence[Any] = (),
    ) -> None:
        self.env_fn = env_fn
        self.make_model = make_model
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.logger = logger
        #: called with each iteration's record once it is written (``None``: nothing)
        self.on_iteration: Callable[[dict[str, Any]], None] | None = None
        self.state_path = self.run_dir / PSRO_STATE
        self.archive = SnapshotArchive(self.run_dir / ARCHIVE_DIR, max_snapshots=None)
        state = self._read_state()
        stored = None if state is None else PSROSettings(**state["settings"])
        self.settings = stored or settings or PSROSettings()
        self.reference = list(reference)
        if self.settings.reference_ratio > 0 and not self.reference:
            raise LeagueSetupError(
                f"reference_ratio={self.settings.reference_ratio:g} needs the game's reference "
                "players and this game has none; drop it (--reference-ratio 0) or play a "
                "registered game with a reference bot (tictactoe_v3, connect_four_v3)."
            )
        self.members: list[str] = [] if state is None else list(state["members"])
        self.history: list[dict[str, Any]] = [] if state is None else list(state["iterations"])
        self.steps = 0 if state is None else int(state["steps"])
        #: the learner steps the next response starts with
        self.budget = int(self.settings.steps_per_iteration)
        if state is not None:
            self.budget = int(state.get("budget", self.budget))
        self.oracle_file: str | None = None if state is None else state.get("oracle")
        self.payoffs = self._payoffs(self.settings.payoffs)
        self.exact = isinstance(self.payoffs, ExactPayoffs)
        #: whether each iteration's meta-mixture is measured exactly (the game can be walked,
        #: whatever the payoffs: sampled payoffs on a walkable game are still measured)
        self.measured = self.exact or _walkable(env_fn)
        self._policies: list[Any] = []
        self._set_aside_unfinished(state)
        for member in self.members:
            self._add_member(member, stored=state)

    # -- state --------------------------------------------------------------------------------
    def _read_state(self) -> dict[str, Any] | None:
        if not self.state_path.exists():
            return None
        listed = {info.id: info for info in self.archive.snapshots()}
        state = PSRO_FORMAT.read(self.state_path, snapshots=listed)
        for index, member in enumerate(state["members"]):  # the archive's word on each member
            info = listed[member]
            if (
                f"{ITERATION_TAG}{index}" not in info.tags
                or info.step != state["iterations"][index]["steps"]
            ):
                raise PSRO_FORMAT.refuse(
                    self.state_path,
                    f"members[{index}]",
                    f"is {member!r}, which the archive records as saved at step {info.step} "
                    f"with tags {list(info.tags)}, not by iteration {index} at step "
                    f"{state['iterations'][index]['steps']}",
                )
        return state

    def _set_aside_unfinished(self, state: Mapping[str, Any] | None) -> None:
        """Move aside (``archive/orphaned/``) the snapshots an unfinished iteration saved: those
        the archive itself tags ``psro`` and ``iteration:<n>`` for an iteration ``psro.json``
        does not record, saved at or after its last step. Nothing else is touched."""
        recorded = 0 if state is None else len(state["iterations"])
        steps = 0 if state is None else int(state["steps"])
        members = set(self.members)
        unfinished = [
            info.id
            for info in self.archive.snapshots()
            if info.id not in members
            and PSRO_TAG in info.tags
            and _iteration_of(info.tags) >= recorded
            and info.step >= steps
        ]
        if unfinished:
            self.archive.discard(snapshots=unfinished)

    def _write_state(self) -> None:
        PSRO_FORMAT.write(
            self.state_path,
            {
                "settings": asdict(self.settings),
                "members": self.members,
                "steps": self.steps,
                "budget": self.budget,
                "oracle": self.oracle_file,
                "payoff": self.payoffs.matrix.tolist(),
                "half_width": (
                    self.payoffs.half_width.tolist()
                    if isinstance(self.payoffs, SampledPayoffs)
                    else None
                ),
                "iterations": self.history,
            },
        )

    def _payoffs(self, mode: str) -> ExactPayoffs | SampledPayoffs:
        s = self.settings
        if mode != "sampled":
            try:
                return ExactPayoffs(self.env_fn(), deterministic=s.greedy)
            except GameNotWalkableError as error:
                if mode == "exact":
                    raise LeagueSetupError(
                        f"Exact payoffs need a walkable game: {error} Use payoffs='sampled' "
                        "(--payoffs sampled)."
                    ) from None
        return SampledPayoffs(self.env_fn, s.games_per_pair, seed=s.seed + 10_000)

    def _add_member(self, member: str, stored: Mapping[str, Any] | None = None) -> None:
        policy = self.archive.load_policy(member, deterministic=self.settings.greedy)
        self._policies.append(policy)
        if self.exact or stored is None:
            self.payoffs.add(policy)
            return
        # sampled payoffs are not played again on resume: the stored matrix is kept
        n = len(self._policies)
        sampled = self.payoffs
        assert isinstance(sampled, SampledPayoffs)
        sampled.matrix = np.asarray(stored["payoff"], dtype=np.float64)[:n, :n]
        sampled.half_width = np.asarray(stored["half_width"], dtype=np.float64)[:n, :n]
        sampled.restore(policy)

    # -- the mixture ----------------------------------------------------------------------------
    @property
    def weights(self) -> dict[str, float]:
        """The current meta-weights, ``{snapshot id: probability}`` (empty before the start)."""
        if not self.members:
            return {}
        probabilities = meta_strategy(self.payoffs.matrix, self.settings.meta_solver)
        return {m: float(p) for m, p in zip(self.members, probabilities, strict=True)}

    def mixture(self) -> list[tuple[Any, float]]:
        """The meta-mixture as the product plays it: ``[(member policy, weight), ...]`` (members
        of weight 0 left out), each member in its form (greedy or not)."""
        weights = self.weights
        pairs = zip(self.members, self._policies, strict=True)
        return [(p, weights[m]) for m, p in pairs if weights[m] > 0]

    # -- the loop -------------------------------------------------------------------------------
    def run(self, iterations: int | None = None, seconds: float | None = None) -> PSROResult:
        """Run until ``iterations`` complete iterations in all (resumed ones count) or until the
        best responses' training time reaches ``seconds`` (checked between iterations).

        :param iterations: the total number of iterations to reach.
        :param seconds: the best responses' total training time to stop at (wall-clock seconds;
            measurements excluded).
        """
        if iterations is None and seconds is None:
            raise LeagueSetupError("PSRO.run needs iterations or seconds (--iterations/--seconds).")
        s = self.settings
        model = None
        if not self.members:
            model = self._oracle(self._sampler({}), iteration=0)
            self._new_member(model, iteration=0, train_seconds=0.0)
            if not s.warm_start:
                model.get_env().close()
        while True:
            done = len(self.history) - 1
            trained = sum(r["train_seconds"] for r in self.history)
            if (iterations is not None and done >= iterations) or (
                seconds is not None and trained >= seconds
            ):
                break
            iteration = done + 1
            sampler = self._sampler(self.weights, iteration)
            if not s.warm_start or model is None:
                model = self._oracle(sampler, iteration)
            else:
                model.set_env(self._venv(sampler, iteration))
            left = None if seconds is None else seconds - trained
            elapsed, response = self._train(model, left)
            model.get_env().close()
            self._new_member(model, iteration, elapsed, response)
        last = self.history[-1]
        measured = [r for r in self.history if r.get("exploitability") is not None]
        best = min(measured, key=lambda r: r["exploitability"]) if measured else None
        return PSROResult(
            iterations=len(self.history) - 1,
            members=list(self.members),
            weights=dict(last["weights"]),
            exploitability=last.get("exploitability"),
            nash_conv=last.get("nash_conv"),
            best=best,
            history=list(self.history),
        )

    def _sampler(self, weights: Mapping[str, float], iteration: int = 0) -> OpponentSampler:
        s = self.settings
        anchors: list[tuple[Any, float]] = []
        if s.random_ratio > 0:
            anchors.append((RandomPolicy(), float(s.random_ratio)))
        if s.reference_ratio > 0:
            share = float(s.reference_ratio) / len(self.reference)
            anchors += [(bot, share) for bot in self.reference]
        left = 1.0 - sum(p for _, p in anchors)  # the meta-mixture's share of the episodes
        ids = [m for m in self.members if weights.get(m, 0.0) > 0]
        members = [(self._policies[self.members.index(m)], left * weights[m]) for m in ids]
        fixed = anchors + members
        if members:  # the last one takes what rounding left, so the draws never fall through
            fixed[-1] = (fixed[-1][0], max(0.0, 1.0 - sum(p for _, p in fixed[:-1])))
        # before the first member (iteration 0) the anchors' shares stand and the fallback
        # (a random player) takes the rest
        return OpponentSampler(
            self.archive,
            window=None,
            latest_ratio=0.0,
            fixed_opponents=fixed,
            deterministic=s.greedy,
            seed=s.seed + 7919 * iteration,
        )

    def _venv(self, sampler: OpponentSampler, iteration: int) -> Any:
        s = self.settings
        return make_selfplay_vec_env(
            self.env_fn,
            n_envs=s.n_envs,
            seed=s.seed + 1000 * iteration,
            learner=s.learner,
            opponent=sampler,
        )

    def _train(self, model: Any, seconds: float | None) -> tuple[float, dict[str, Any]]:
        """Train the iteration's response from :attr:`budget` steps on, doubling its steps
        while it does not improve on the mixture (up to ``max_steps``, or until ``seconds`` of
        training); returns the time it took (gain checks included) and what it did."""
        s = self.settings
        previous = self.weights
        measured = self.history[-1].get("exploitability") if self.history else None
        check = s.max_doublings > 0 and bool(self.history) and not s.unexploitable(measured)
        start = time.perf_counter()
        steps, chunk, gains, doublings = 0, min(self.budget, s.max_steps), [], 0
        check_seconds = 0.0
        # the schedules (a "lin_..." learning rate, a clip range) run once over the most steps
        # this response may train for, never restarting at a doubled ``learn`` call
        reset = not s.warm_start
        horizon = s.max_steps if check else chunk
        schedules = BudgetSchedules((0 if reset else model.num_timesteps) + horizon)
        magnet = None if s.magnet is None else MagnetCallback.from_settings(s.magnet)
        callbacks = [schedules] if magnet is None else [schedules, magnet]
        while True:
            model.learn(chunk, reset_num_timesteps=steps == 0 and reset, callback=callbacks)
            steps += chunk
            self.steps += chunk
            late = seconds is not None and time.perf_counter() - start >= seconds
            if not check or steps * 2 > s.max_steps or late:
                break
            checking = time.perf_counter()
            gains.append(self._gain(SB3Policy(model, deterministic=s.greedy), previous))
            check_seconds += time.perf_counter() - checking
            if s.improves(gains[-1], measured):
                break
            chunk, doublings = steps, doublings + 1  # the response's steps doubled
        if s.keep_budget:
            self.budget = steps
        response = {
            "response_steps": steps,
            "doublings": doublings,
            "budget": self.budget,
            "checked_gains": gains,
            "check_seconds": round(check_seconds, 3),
        }
        return time.perf_counter() - start, response

    def _gain(self, policy: Any, weights: Mapping[str, float]) -> float:
        """What ``policy`` wins per game against the mixture of ``weights``: exact where the
        payoffs are, else from games against the members of positive weight."""
        if isinstance(self.payoffs, ExactPayoffs):
            row = self.payoffs.row(policy)
        else:
            among = [i for i, m in enumerate(self.members) if weights.get(m, 0.0) > 0]
            row = self.payoffs.row(policy, among)
        return float(sum(row[i] * weights.get(m, 0.0) for i, m in enumerate(self.members)))

    def _oracle(self, sampler: OpponentSampler, iteration: int) -> Any:
        """A best-response learner: fresh, or the previous one's weights when warm-starting."""
        venv = self._venv(sampler, iteration)
        model = self.make_model(venv, self.settings.seed + iteration)
        if self.settings.warm_start and self.oracle_file and iteration > 0:
            model.set_parameters(str(self.run_dir / self.oracle_file))
        if self.logger is not None:
            model.set_logger(self.logger)
        return model

    def _new_member(
        self,
        model: Any,
        iteration: int,
        train_seconds: float,
        response: Mapping[str, Any] | None = None,
    ) -> None:
        previous = self.weights
        info = self.archive.save(model, step=self.steps, tags=("psro", f"iteration:{iteration}"))
        self.members.append(info.id)
        self._add_member(info.id)
        weights = self.weights
        # what the new member wins per game against the mixture it was trained against (an
        # exact best response wins that mixture's exploitability)
        row = self.payoffs.matrix[-1, :-1]
        gain = float(sum(row[i] * previous[m] for i, m in enumerate(self.members[:-1])))
        record: dict[str, Any] = {
            "iteration": iteration,
            "member": info.id,
            "steps": self.steps,
            "train_seconds": round(train_seconds, 3),
            "wall_time": time.time(),
            "weights": weights,
            "exploitability": None,
            "nash_conv": None,
            "response_gain": gain if previous else None,
            "response_steps": 0,
            "doublings": 0,
            "budget": self.budget,
            "checked_gains": [],
            "check_seconds": 0.0,
            **(response or {}),
        }
        if self.measured:
            start = time.perf_counter()
            report = exploitability(self.mixture(), self.env_fn(), self.settings.greedy)
            record["exploitability"] = float(report.exploitability)
            record["nash_conv"] = float(report.nash_conv)
            record["measure_seconds"] = round(time.perf_counter() - start, 3)
        self.history.append(record)
        self.archive.store_mixture(weights, step=self.steps)
        old_oracle = self.oracle_file
        if self.settings.warm_start:
            self.oracle_file = f"oracle-{iteration}.zip"
            save_model(model, self.run_dir / self.oracle_file)
        self._write_state()
        if old_oracle and old_oracle != self.oracle_file:
            (self.run_dir / old_oracle).unlink(missing_ok=True)
        self._log(record)
        if self.on_iteration is not None:
            self.on_iteration(record)

    def _log(self, record: Mapping[str, Any]) -> None:
        if self.logger is None:
            return
        stats = mixture_statistics(record["weights"])
        self.logger.record("psro/iteration", record["iteration"])
        self.logger.record("psro/members", len(self.members))
        self.logger.record("psro/support", stats["support"])
        self.logger.record("psro/top", stats["top"])
        self.logger.record("psro/steps_per_iteration", record["response_steps"])
        self.logger.record("psro/doublings", record["doublings"])
        if record["response_gain"] is not None:
            self.logger.record("psro/response_gain", record["response_gain"])
        if record["exploitability"] is not None:
            self.logger.record("psro/exploitability", record["exploitability"])
            self.logger.record("psro/nash_conv", record["nash_conv"])
        self.logger.dump(record["steps"])


def _walkable(env_fn: Callable[[], Any]) -> bool:
    try:
        exploitability_method(env_fn())
    except GameNotWalkableError:
        return False
    return True


def read_psro(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A run's ``psro.json``, checked against :data:`PSRO_FORMAT` (its snapshot ids not
    against the archive: :class:`PSRO` does that before it resumes).

    :raises StateFileError: (a ``ValueError``) naming the file, the field and the fix.
    """
    return PSRO_FORMAT.read(path)


def _iteration_of(tags: Sequence[str]) -> int:
    """The iteration a snapshot's ``iteration:<n>`` tag names (-1: none)."""
    for tag in tags:
        if re.fullmatch(rf"{ITERATION_TAG}\d{{1,9}}", tag):
            return int(tag[len(ITERATION_TAG) :])
    return -1


_SETTINGS_FIELDS = {f.name for f in dataclasses.fields(PSROSettings)}


def _check_psro(data: Mapping[str, Any], refuse: Callable[[str, str], Exception]) -> None:
    """``psro.json``'s fields agree: one iteration record per member, in order, weights over the
    members, an n-by-n payoff matrix, settings a PSRO run takes."""
    unknown = sorted(set(data["settings"]) - _SETTINGS_FIELDS)
    if unknown:
        raise refuse("settings", f"holds {unknown}, which are not PSRO settings")
    try:
        PSROSettings(**data["settings"])
    except (LeagueSetupError, TypeError, ValueError) as error:
        raise refuse("settings", f"are refused: {str(error).rstrip('.')}") from None
    members, records = data["members"], data["iterations"]
    if len(records) != len(members):
        raise refuse("iterations", f"holds {len(records)} records for {len(members)} members")
    if len(set(members)) != len(members):
        raise refuse("members", "names a snapshot twice")
    for index, (member, record) in enumerate(zip(members, records, strict=True)):
        if record["iteration"] != index or record["member"] != member:
            raise refuse(
                f"iterations[{index}]",
                f"is iteration {record['iteration']} of {record['member']!r}, not iteration "
                f"{index} of members[{index}] {member!r}",
            )
        stray = sorted(set(record["weights"]) - set(members[: index + 1]))
        if stray:
            raise refuse(f"iterations[{index}].weights", f"names {stray}, not members yet")
    n = len(members)
    for name in ("payoff", "half_width"):
        matrix = data.get(name)
        if matrix is not None and (len(matrix) != n or any(len(row) != n for row in matrix)):
            raise refuse(name, f"is not a {n} by {n} matrix, one row and column per member")
    if data["settings"].get("payoffs") == "sampled" and data.get("half_width") is None:
        raise refuse("half_width", "is missing: sampled payoffs keep their intervals")


_RECORD = Obj(
    {
        "iteration": Int(min=0),
        "member": SnapshotId(),
        "steps": Int(min=0),
        "train_seconds": Num(min=0),
        "weights": Map(Num(min=0, max=1), key=SnapshotId()),
    },
    optional={
        "exploitability": Optional(Num(min=0)),
        "nash_conv": Optional(Num(min=0)),
        "response_gain": Optional(Num()),
        "response_steps": Int(min=0),
        "doublings": Int(min=0),
        "budget": Int(min=1),
        "checked_gains": List(Num()),
        "check_seconds": Num(min=0),
        "measure_seconds": Num(min=0),
        "wall_time": Num(min=0),
    },
)

#: ``psro.json``: one reader, one writer (:class:`~sp_wrappers.core.state_file.StateFormat`).
PSRO_FORMAT = StateFormat(
    PSRO_NAME,
    1,
    Obj(
        {
            "settings": Map(AnyValue()),
            "members": List(SnapshotId()),
            "steps": Int(min=0),
            "payoff": List(List(Num())),
            "iterations": List(_RECORD),
        },
        optional={
            "budget": Int(min=1),
            "oracle": Optional(Str(pattern=r"oracle-\d{1,9}\.zip")),
            "half_width": Optional(List(List(Num(min=0)))),
        },
    ),
    fix="restore psro.json from a backup, or start a new run directory (--out)",
    checks=(_check_psro,),
)


def plot_psro(state: Mapping[str, Any], path: str | os.PathLike[str]) -> str:
    """Draw a PSRO run's meta-mixture exploitability per iteration against the best responses'
    training time (what ``psro.json`` holds) as a PNG; returns the path written."""
    from ..evaluation.plots import new_figure, save_figure

    figure = new_figure(7.0, 3.8)
    axes = figure.add_subplot()
    records = [r for r in state.get("iterations", []) if r.get("exploitability") is not None]
    seconds = np.cumsum([r["train_seconds"] for r in records])
    axes.plot(seconds, [r["exploitability"] for r in records], "o-", label="meta-mixture")
    for r, x in zip(records, seconds, strict=True):
        axes.annotate(str(r["iteration"]), (x, r["exploitability"]), fontsize="x-small")
    axes.set_xlabel("best responses' training time (s); points: iterations")
    axes.set_ylabel("exploitability (NashConv / 2)")
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="best", fontsize="small")
    axes.set_title(f"PSRO ({state['settings']['meta_solver']} meta-solver)")
    figure.tight_layout()
    return save_figure(figure, path)
