"""Round robins: every pair of an archive's snapshots and some baselines.

The payoff matrix comes from a round robin or from an archive's history. Each pair's seed is
derived from ``(seed, pair index)`` alone, so the results do not depend on the backend, the number
of workers or the order in which tasks finish. Only the calling process writes to the archive."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..archive.matches import HUMAN, PLAY_SOURCE
from ..archive.records import SnapshotInfo
from ..archive.store import as_archive
from ..core.policies import Policy, is_policy
from ..envs.selfplay_env import SelfPlayEnv
from ..ratings.attribution import attributed_games
from .backends import PAIR_RUNNERS, PairTask, check_backend
from .match import EVALUATION_SOURCE, MatchResult

__all__ = ["RoundRobinResult", "round_robin", "pair_seed"]


@dataclass
class RoundRobinResult:
    """The payoff matrix of a round robin.

    :param players: participant ids, snapshots first, then baselines (rows and columns).
    :param scores: ``scores[i, j]`` is player ``i``'s mean score against ``j`` (1 win, 0.5 draw,
        0 loss); ``nan`` on the diagonal and where the pair has no games.
        ``scores[i, j] + scores[j, i] == 1`` for every played pair.
    :param games: ``games[i, j]`` games between ``i`` and ``j`` (symmetric).
    :param matches: the :class:`MatchResult` of every pair played by this call, in pair order.

    >>> result = RoundRobinResult.from_games(["a", "b", "c"], [("a", "b", 1.0), ("b", "a", 0.5)])
    >>> result.score("a", "b"), result.score("b", "a"), int(result.games[0, 1])
    (0.75, 0.25, 2)
    >>> bool(np.isnan(result.score("a", "c")))
    True
    """

    players: list[str]
    scores: np.ndarray
    games: np.ndarray
    matches: list[MatchResult] = field(default_factory=list)

    @classmethod
    def from_games(
        cls,
        players: Sequence[str],
        games: Iterable[tuple[str, str, float]],
        matches: Sequence[MatchResult] = (),
    ) -> RoundRobinResult:
        """Build the matrix from ``(player_a, player_b, score_a)`` games (others are ignored)."""
        players = list(players)
        index = {p: i for i, p in enumerate(players)}
        n = len(players)
        totals = np.zeros((n, n))
        counts = np.zeros((n, n), dtype=np.int64)
        for a, b, score in games:
            i, j = index.get(a), index.get(b)
            if i is None or j is None or i == j:
                continue
            totals[i, j] += score
            totals[j, i] += 1.0 - score
            counts[i, j] += 1
            counts[j, i] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)
        return cls(players, scores, counts, list(matches))

    @classmethod
    def from_archive(
        cls, archive: Any, players: Sequence[str] | None = None, source: str | None = None
    ) -> RoundRobinResult:
        """The matrix of games already in an archive's match history.

        :param players: rows and columns (default: every listed snapshot, then every other player
            met in the selected games, such as baselines).
        :param source: only games with this source (``"evaluation"``, ``"training"``); ``None``
            takes all but a person's (``"play"``: one game against one snapshot says little
            about a pair), with the learner's training games credited to its snapshots.
        """
        archive = as_archive(archive, create=False, owner="RoundRobinResult.from_archive")
        games = attributed_games(archive, source)
        if source != PLAY_SOURCE:  # a person's games (player HUMAN) only when asked for
            games = [g for g in games if HUMAN not in g[:2]]
        if players is None:
            every = archive.snapshots(include_pruned=True)
            snapshot_ids = [info.id for info in every if not info.pruned]
            others = sorted({p for g in games for p in g[:2]} - {info.id for info in every})
            players = [p for p in snapshot_ids if any(p in g[:2] for g in games)] + others
        return cls.from_games(players, games)

    def score(self, a: str, b: str) -> float:
        """``a``'s mean score against ``b``."""
        return float(self.scores[self.players.index(a), self.players.index(b)])

    def table(self) -> str:
        """The matrix as text (row player's score against the column player)."""
        width = max([len(p) for p in self.players] + [5])
        lines = [" " * width + " " + " ".join(f"{p[-width:]:>{width}}" for p in self.players)]
        for i, player in enumerate(self.players):
            cells = [
                "-".rjust(width) if np.isnan(v) else f"{v:.2f}".rjust(width) for v in self.scores[i]
            ]
            lines.append(f"{player:<{width}} " + " ".join(cells))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def pair_seed(seed: int, pair_index: int) -> int:
    """The seed of pair ``pair_index`` in a round robin seeded with ``seed``.

    >>> pair_seed(0, 1) == pair_seed(0, 1) != pair_seed(0, 2)
    True
    """
    state = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(pair_index)]).generate_state(1)
    return int(state[0] >> 1)  # < 2**31, so ``seed + game`` stays a small positive integer


def _check_game_fits(archive: Any, env_fn: Callable[[], Any]) -> None:
    """Raise ``IncompatibleSnapshotError`` (before any worker starts) when ``env_fn``'s game does
    not give the spaces the snapshots were trained with."""
    env = SelfPlayEnv(env_fn())
    try:
        archive.check_compatible(env.observation_space, env.action_space)
    finally:
        env.close()


def _evaluation_counts(archive: Any) -> dict[frozenset[str], list[tuple[str, str, float]]]:
    """The archive's evaluation games, grouped by unordered pair of players."""
    by_pair: dict[frozenset[str], list[tuple[str, str, float]]] = {}
    for match in archive.matches(source=EVALUATION_SOURCE):
        key = frozenset((match.player_a, match.player_b))
        by_pair.setdefault(key, []).append((match.player_a, match.player_b, match.score_a))
    return by_pair


def round_robin(
    archive: Any,
    participants: Sequence[Any] | None = None,
    games_per_pair: int = 20,
    baselines: Sequence[Policy] = (),
    env_fn: Callable[[], Any] | None = None,
    seed: int = 0,
    backend: str = "process",
    n_workers: int | None = None,
    skip_played: bool = False,
    deterministic: bool = False,
    progress: bool = True,
) -> RoundRobinResult:
    """Play every pair of snapshots and baselines; record the games; return the payoff matrix.

    Each pair plays ``games_per_pair`` games with seats swapped game by game. Every finished pair
    is written to the archive's match history at once (``source="evaluation"``), so an
    interrupted tournament keeps what it played and ``skip_played=True`` resumes it.

    :param archive: a :class:`~sp_wrappers.SnapshotArchive` or the path of one.
    :param participants: snapshot ids (default: every listed snapshot); policies are accepted too
        and play like baselines.
    :param games_per_pair: games per pair.
    :param baselines: fixed policies that join the tournament (``RandomPolicy()``,
        ``PerfectTicTacToePolicy()``, ...); picklable for the parallel backends.
    :param env_fn: builds the PettingZoo game the snapshots were trained on; picklable for the
        parallel backends (a module-level function or ``functools.partial``).
    :param seed: pair ``k`` plays its games with seeds ``pair_seed(seed, k) + i``; the results are
        the same whatever the backend and the number of workers.
    :param backend: ``"process"`` (a spawn-safe process pool), ``"ray"`` (Ray tasks; ``ray.init``
        is called only if Ray is not initialised yet) or ``"serial"`` (this process).
    :param n_workers: worker processes (default: one per CPU, at most one per pair); for Ray, the
        CPUs given to ``ray.init`` when this call starts Ray.
    :param skip_played: play only the missing games: a pair that already has ``k`` evaluation games
        in the archive plays ``games_per_pair - k`` more (none when ``k >= games_per_pair``).
        Its earlier games count in the returned matrix.
    :param deterministic: snapshots take their most likely action instead of sampling (sampled
        play, the default, makes repeated games between two snapshots informative).
    :param progress: show a tqdm progress bar over pairs.
    :raises ValueError: an unknown backend, duplicate player ids, or fewer than two players.
    :raises ImportError: ``backend="ray"`` without Ray installed.

    >>> import tempfile
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import PerfectTicTacToePolicy, RandomPolicy, SnapshotArchive
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> result = round_robin(archive, games_per_pair=4, baselines=[RandomPolicy(),
    ...     PerfectTicTacToePolicy()], env_fn=tictactoe_v3.env, backend="serial", progress=False)
    >>> result.players, result.score("minimax", "random") > 0.5, archive.n_matches()
    (['random', 'minimax'], True, 4)
    """
    archive = as_archive(archive, create=False, owner="round_robin(archive=...)")
    check_backend(backend)
    if env_fn is None:
        raise ValueError(
            "round_robin needs env_fn, a zero-argument function that builds the game the "
            "snapshots were trained on (e.g. pettingzoo.classic.tictactoe_v3.env)."
        )
    if games_per_pair < 1:
        raise ValueError(f"games_per_pair must be >= 1, got {games_per_pair}.")
    if participants is None:
        participants = [info.id for info in archive.snapshots()]
    players: list[Any] = [p.id if isinstance(p, SnapshotInfo) else p for p in participants] + list(
        baselines
    )
    for player in players:
        if isinstance(player, str):
            archive.get(player)  # KeyError naming the known ids
        elif not is_policy(player):
            raise TypeError(
                f"Participants are snapshot ids, SnapshotInfo rows or policies, got "
                f"{type(player).__name__}."
            )
    ids = [p if isinstance(p, str) else p.policy_id for p in players]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"Player ids must be unique; {duplicates} appear more than once.")
    if len(players) < 2:
        raise ValueError(
            f"A round robin needs at least two players, got {ids}; add snapshots or baselines."
        )

    if any(isinstance(p, str) for p in players):
        _check_game_fits(archive, env_fn)

    played = _evaluation_counts(archive) if skip_played else {}
    tasks: list[PairTask] = []
    earlier: list[tuple[str, str, float]] = []
    pair_index = 0
    for i in range(len(players)):
        for j in range(i + 1, len(players)):
            before = played.get(frozenset((ids[i], ids[j])), [])
            earlier += before
            missing = games_per_pair - len(before)
            if missing > 0:
                tasks.append(
                    PairTask(
                        index=pair_index,
                        archive_path=str(archive.path),
                        player_a=players[i],
                        player_b=players[j],
                        env_fn=env_fn,
                        n_games=missing,
                        seed=pair_seed(seed, pair_index) + len(before),
                        deterministic=deterministic,
                        trusted_modules=tuple(getattr(archive, "trusted_modules", ())),
                    )
                )
            pair_index += 1

    results: dict[int, MatchResult] = {}
    if tasks:
        from tqdm.auto import tqdm

        run = PAIR_RUNNERS[backend]
        with tqdm(total=len(tasks), desc="round robin", unit="pair", disable=not progress) as bar:
            for index, result in run(tasks, archive, n_workers):
                archive.record_matches(result.records())
                results[index] = result
                bar.update(1)
    matches = [results[index] for index in sorted(results)]
    games = earlier + [(m.player_a, m.player_b, outcome) for m in matches for _, outcome in m.games]
    return RoundRobinResult.from_games(ids, games, matches)
