"""Measured payoffs for the Nash sampler: evaluation games between snapshots that never met.

``OpponentSampler(strategy="nash")`` draws from the Nash equilibrium of the game between the
archive's snapshots; a pair with no recorded game counts as even (0.5), a guess. After each
snapshot it saves, :class:`~sp_wrappers.SelfPlayCallback` hands its :class:`NashPayoffGames` the
training env: it finds the envs' Nash sampler, plays a bounded number of evaluation games for the
missing pairs (recorded in the archive, which updates its payoff table), then logs the mixture
through SB3's logger and stores it in the archive, so the mixture rests on measured results, as
PSRO's meta-solver expects (Lanctot et al. 2017).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from ..archive.store import CorruptSnapshotError, SnapshotArchive, SnapshotPrunedError
from ..evaluation.match import EVALUATION_SOURCE, play_match
from ..opponents.sampler import OpponentSampler

__all__ = ["NashPayoffGames", "mixture_statistics"]

_UNSET = object()


def mixture_statistics(mixture: dict[str, float], top: int = 3) -> dict[str, Any]:
    """What ``selfplay/nash_*`` logs of a mixture: ``support`` (snapshots with weight above
    1e-6), ``entropy`` (nats), ``top_weight`` and ``top`` (the ``top`` heaviest as text).

    >>> stats = mixture_statistics({"snapshot-0000": 0.25, "snapshot-0001": 0.75})
    >>> stats["support"], round(stats["entropy"], 3), stats["top"]
    (2, 0.562, 'snapshot-0001=0.750 snapshot-0000=0.250')
    """
    weights = sorted(mixture.items(), key=lambda item: (-item[1], item[0]))
    return {
        "support": sum(1 for _, p in weights if p > 1e-6),
        "entropy": float(-sum(p * math.log(p) for _, p in weights if p > 0)),
        "top_weight": float(weights[0][1]) if weights else 0.0,
        "top": " ".join(f"{sid}={p:.3f}" for sid, p in weights[:top]),
    }


class NashPayoffGames:
    """Fills the Nash sampler's missing payoff cells with evaluation games, bounded per call.

    :param archive: the archive the games are recorded in (the callback's).
    :param games: at most this many games per call (0: play none, still log and store).
    :param games_per_pair: games per missing pair, seats alternating.
    :param env_fn: the game's constructor (``None``: the training env's ``env_fn``).

    >>> import tempfile
    >>> from sp_wrappers import SnapshotArchive
    >>> NashPayoffGames(SnapshotArchive(tempfile.mkdtemp()), games=8).games_played
    0
    """

    def __init__(
        self,
        archive: SnapshotArchive,
        games: int = 20,
        games_per_pair: int = 2,
        env_fn: Callable[[], Any] | None = None,
    ) -> None:
        self.archive = archive
        self.games = int(games)
        self.games_per_pair = int(games_per_pair)
        self.env_fn = env_fn
        self.games_played = 0  # evaluation games played so far (the seed of the next ones)
        self._sampler: Any = _UNSET
        self._warned = False

    def sampler(self, env: Any) -> OpponentSampler | None:
        """The envs' ``OpponentSampler`` when it draws by Nash (found once; ``None`` otherwise).
        Env copies in worker processes each hold a copy of one sampler: the first is read."""
        if self._sampler is _UNSET:
            try:
                source = env.get_attr("opponent_source", indices=[0])[0]
            except Exception:  # noqa: BLE001 - an env without samplers: nothing to schedule
                source = None
            nash = isinstance(source, OpponentSampler) and source.strategy == "nash"
            self._sampler = source if nash else None
        return self._sampler

    def _env_fn(self, env: Any) -> Callable[[], Any] | None:
        """The game's constructor: given, the vector env's own (``SelfPlayVecEnv``), or its
        first copy's (``SelfPlayEnv`` built from a constructor)."""
        if self.env_fn is None:
            try:
                self.env_fn = getattr(env, "env_fn", None) or env.get_attr("env_fn", [0])[0]
            except Exception:  # noqa: BLE001 - no env_fn to find
                self.env_fn = None
        return self.env_fn

    def after_save(self, env: Any, logger: Any, step: int) -> None:
        """Play the games for the missing pairs (up to :attr:`games`), then log and store the
        mixture; nothing when the envs do not draw by Nash."""
        sampler = self.sampler(env)
        if sampler is None:
            return
        played = self.play_missing(sampler, env)
        mixture = sampler.nash_mixture
        if not mixture:
            return
        missing = len(sampler.missing_pairs())
        stats = mixture_statistics(mixture)
        logger.record("selfplay/nash_support", stats["support"])
        logger.record("selfplay/nash_entropy", stats["entropy"])
        logger.record("selfplay/nash_top_weight", stats["top_weight"])
        logger.record("selfplay/nash_top", stats["top"])
        logger.record("selfplay/nash_missing_pairs", missing)
        logger.record("selfplay/nash_games", played)
        try:
            self.archive.store_mixture(mixture, step=step, missing_pairs=missing)
        except OSError as error:
            warnings.warn(f"Could not store the Nash mixture: {error}", stacklevel=2)

    def play_missing(self, sampler: OpponentSampler, env: Any) -> int:
        """Play up to :attr:`games` games for the sampler's missing pairs, the newest snapshot's
        pairs first and, among them, those against the current mixture's heaviest snapshots
        (PSRO evaluates a new policy against the meta-strategy); returns the games played."""
        pairs = sampler.missing_pairs()
        if not pairs or self.games < 1:
            return 0
        env_fn = self._env_fn(env)
        if env_fn is None:
            if not self._warned:
                warnings.warn(
                    "SelfPlayCallback cannot play the Nash sampler's missing pairs: the training "
                    "env keeps no env_fn. Pass eval_env_fn=GAME.env to SelfPlayCallback (or build "
                    "SelfPlayEnv from the constructor); the missing pairs count as even.",
                    stacklevel=3,
                )
                self._warned = True
            return 0
        order = {sid: i for i, sid in enumerate(sampler.eligible_ids())}
        weights = sampler.nash_mixture
        pairs.sort(
            key=lambda pair: (
                -max(order.get(pair[0], -1), order.get(pair[1], -1)),
                -min(weights.get(pair[0], 0.0), weights.get(pair[1], 0.0)),
                pair,
            )
        )
        played = 0
        for a, b in pairs:
            n = min(self.games_per_pair, self.games - played)
            if n < 1:
                break
            try:
                play_match(
                    env_fn,
                    a,
                    b,
                    n,
                    seed=self.games_played,
                    archive=self.archive,
                    source=EVALUATION_SOURCE,
                )
            except (SnapshotPrunedError, CorruptSnapshotError):
                continue  # gone from the next listing: the pair stops being missing
            played += n
            self.games_played += n
        return played
