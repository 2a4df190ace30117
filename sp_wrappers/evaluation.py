"""Evaluation: play policies against each other, count the results, rate the archive.

This module holds:

- :func:`play_match` and :class:`MatchResult`: ``n`` games between two policies, seats swapped.
- :func:`round_robin` and :class:`RoundRobinResult`: every pair of an archive's snapshots and
  some baselines, played serially, in worker processes (``backend="process"``) or as Ray tasks
  (``backend="ray"``), written to the archive's match history; the payoff matrix comes back.
- :func:`archive_ratings`, :func:`store_archive_ratings`, :class:`ArchiveRatings` and
  :class:`SnapshotRating`, re-exported from :mod:`sp_wrappers.snapshot_ratings` where they live.
- :data:`BACKENDS`, the backend names.

Parallel work is split into one task per pair. A task names its snapshots by id and carries the
archive *path*, never a policy object built from a snapshot: each worker reopens the archive and
loads the weights itself (safetensors, hash-checked). Baselines and ``env_fn`` travel pickled, so
they must be picklable (module-level functions or ``functools.partial``, not lambdas). Each pair's
seed is derived from ``(seed, pair index)`` alone, so the results do not depend on the backend,
the number of workers or the order in which tasks finish. Only the calling process writes to the
archive.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._seats import as_aec_env, seat_spaces
from .archive import SnapshotInfo, as_archive
from .env import SelfPlayEnv
from .policies import Policy, RandomPolicy, SB3Policy, is_policy, stack_observations
from .snapshot_ratings import (
    ArchiveRatings,
    SnapshotRating,
    archive_ratings,
    attributed_games,
    store_archive_ratings,
)

__all__ = [
    "play_match",
    "MatchResult",
    "as_policy",
    "round_robin",
    "RoundRobinResult",
    "archive_ratings",
    "store_archive_ratings",
    "ArchiveRatings",
    "SnapshotRating",
    "BACKENDS",
    "pair_seed",
]

BACKENDS = ("process", "ray", "serial")
EVALUATION_SOURCE = "evaluation"
_NON_PLAYERS = ("learner", "latest")


def as_policy(player: Any, policy_id: str | None = None, archive: Any = None) -> Policy:
    """A policy from a policy, an SB3 model (frozen, deterministic) or, with ``archive``, a
    snapshot id or ``SnapshotInfo`` (its frozen policy, sampling its actions)."""
    if is_policy(player):
        return player
    if isinstance(player, SnapshotInfo):
        player = player.id
    if isinstance(player, str):
        if archive is None:
            raise TypeError(
                f"Got the snapshot id {player!r} but no archive to load it from; pass archive=."
            )
        return archive.load_policy(player, deterministic=False)
    return SB3Policy(player, deterministic=True, policy_id=policy_id or type(player).__name__)


@dataclass
class MatchResult:
    """Wins, draws and losses of ``policy_a`` against ``policy_b`` (b's are the mirror image).

    ``games`` lists ``(seat_a, outcome_a)`` per game; ``by_seat`` counts per seat of ``a``.
    ``opponent_seats`` lists ``b``'s seat per game.

    >>> result = MatchResult("a", "b", wins=1, losses=1, games=[("x", 1.0), ("o", 0.0)])
    >>> result.score_a, result.n_games
    (0.5, 2)
    """

    player_a: str
    player_b: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    games: list[tuple[str, float]] = field(default_factory=list)
    opponent_seats: list[str | None] = field(default_factory=list)

    @property
    def n_games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score_a(self) -> float:
        """The mean outcome of ``a`` (1 win, 0.5 draw, 0 loss)."""
        return (self.wins + 0.5 * self.draws) / max(self.n_games, 1)

    def by_seat(self) -> dict[str, tuple[int, int, int]]:
        """``seat -> (wins, draws, losses)`` of ``a``."""
        table: dict[str, list[int]] = {}
        for seat, outcome in self.games:
            row = table.setdefault(seat, [0, 0, 0])
            row[0 if outcome == 1.0 else 1 if outcome == 0.5 else 2] += 1
        return {seat: (w, d, lo) for seat, (w, d, lo) in sorted(table.items())}

    def records(self, source: str = EVALUATION_SOURCE, step: int | None = None) -> list[dict]:
        """One dict per game in the form :meth:`SnapshotArchive.record_matches` takes.

        >>> MatchResult("a", "b", wins=1, games=[("x", 1.0)], opponent_seats=["o"]).records()
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'player_a': 'a', 'player_b': 'b', 'score_a': 1.0, 'step': None, 'seat_a': 'x',
          'seat_b': 'o', 'source': 'evaluation'}]
        """
        seats_b = list(self.opponent_seats) + [None] * (len(self.games) - len(self.opponent_seats))
        return [
            dict(
                player_a=self.player_a,
                player_b=self.player_b,
                score_a=float(outcome),
                step=step,
                seat_a=seat,
                seat_b=seat_b,
                source=source,
            )
            for (seat, outcome), seat_b in zip(self.games, seats_b, strict=True)
        ]

    def __str__(self) -> str:
        return (
            f"{self.player_a} vs {self.player_b}: {self.wins} wins, {self.draws} draws, "
            f"{self.losses} losses in {self.n_games} games"
        )


def _with_action_space(policy: Policy, action_space: Any) -> Policy:
    """A ``RandomPolicy`` without an action space gets the seat's (for games without masks)."""
    if isinstance(policy, RandomPolicy) and policy.action_space is None:
        return RandomPolicy(action_space, policy_id=policy.policy_id)
    return policy


def play_match(
    env_fn: Callable[[], Any],
    policy_a: Any,
    policy_b: Any,
    n_games: int,
    swap_seats: bool = True,
    seed: int = 0,
    seat: str | None = None,
    archive: Any = None,
    source: str = EVALUATION_SOURCE,
    illegal_action: str = "loss",
) -> MatchResult:
    """Play ``n_games`` of a two-seat game between two policies (or SB3 models).

    ``policy_a`` plays by the learner's rule for illegal actions (``SelfPlayEnv``'s
    ``illegal_action``): by default an action its seat's mask forbids loses the game, as in
    training; ``policy_b``, like every opponent, must play legal actions or raise an error.

    :param env_fn: builds the PettingZoo game.
    :param policy_a: a policy, an SB3 model (played deterministically) or, with ``archive``, a
        snapshot id (its policy samples its actions with the game's seeded generator).
    :param policy_b: likewise; it takes every other seat.
    :param n_games: games to play.
    :param swap_seats: alternate ``a`` over the seats game by game (else ``seat`` or the first).
    :param seed: game ``i`` is reset with ``seed + i``: results are reproducible.
    :param seat: ``a``'s seat when ``swap_seats`` is false.
    :param archive: a :class:`~sp_wrappers.SnapshotArchive` or the path of one: snapshot ids are
        loaded from it and every game is written to its match history with ``source``.
    :param source: the match-history source of the recorded games.
    :param illegal_action: ``"loss"`` (``a`` loses a game on an illegal action) or ``"raise"``.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import RandomPolicy
    >>> result = play_match(tictactoe_v3.env, RandomPolicy(), RandomPolicy(policy_id="r2"), 10)
    >>> result.n_games, sorted(result.by_seat())
    (10, ['player_1', 'player_2'])
    """
    if n_games < 0:
        raise ValueError(f"n_games must be >= 0, got {n_games}.")
    if archive is not None:
        archive = as_archive(archive, create=False, owner="play_match(archive=...)")
    a = as_policy(policy_a, "a", archive)
    b = as_policy(policy_b, "b", archive)
    game = as_aec_env(env_fn())
    _, action_space = seat_spaces(game, seat or game.possible_agents[0], keep_dict_obs=False)
    a = _with_action_space(a, action_space)
    b = _with_action_space(b, action_space)
    env = SelfPlayEnv(
        game,
        learner="random" if swap_seats else (seat or "random"),
        opponent=b,
        illegal_action=illegal_action,
    )
    seats = env.learner_seats if swap_seats else [seat or env.learner_seats[0]]
    result = MatchResult(a.policy_id, b.policy_id)
    try:
        for index in range(n_games):
            options = {"learner_seat": seats[index % len(seats)]}
            obs, _ = env.reset(seed=seed + index, options=options)
            done = False
            while not done:
                mask = env.driver.learner_mask()
                batch = stack_observations([obs])
                masks = None if mask is None else mask[None]
                action = a.act(batch, masks, env.np_random)[0]
                obs, _, terminated, truncated, info = env.step(action)
                done = terminated or truncated
            summary = info["selfplay"]
            outcome = float(summary["outcome"])
            result.games.append((summary["seat"], outcome))
            result.opponent_seats.append(next(iter(summary.get("opponents") or {None: None})))
            if outcome == 1.0:
                result.wins += 1
            elif outcome == 0.0:
                result.losses += 1
            else:
                result.draws += 1
    finally:
        env.close()
    if archive is not None and result.n_games:
        archive.record_matches(result.records(source=source))
    return result


# ------------------------------------------------------------------------------------------------
# Round robin
# ------------------------------------------------------------------------------------------------


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
            takes all, with the learner's training games credited to its snapshots.
        """
        archive = as_archive(archive, create=False, owner="RoundRobinResult.from_archive")
        games = attributed_games(archive, source)
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


@dataclass(frozen=True)
class _PairTask:
    """One pair's games: what a worker needs, all of it picklable."""

    index: int
    archive_path: str
    player_a: Any  # a snapshot id (str) or a picklable policy
    player_b: Any
    env_fn: Callable[[], Any]
    n_games: int
    seed: int
    deterministic: bool


_WORKER_ARCHIVES: dict[str, Any] = {}


def _worker_archive(path: str) -> Any:
    """The archive at ``path``, opened once per worker process (its policy cache is reused)."""
    from .archive import SnapshotArchive

    archive = _WORKER_ARCHIVES.get(path)
    if archive is None:
        archive = SnapshotArchive(path, create=False)
        _WORKER_ARCHIVES[path] = archive
    return archive


def _init_worker() -> None:
    """Worker processes share the CPU: one torch thread each."""
    import torch

    torch.set_num_threads(1)


def _run_pair(task: _PairTask, archive: Any = None) -> tuple[int, MatchResult]:
    """Play one pair (in a worker, or in the caller's process with its ``archive``)."""
    if archive is None:
        _init_worker()
        archive = _worker_archive(task.archive_path)

    def resolve(player: Any) -> Policy:
        if isinstance(player, str):
            return archive.load_policy(player, deterministic=task.deterministic)
        return player

    result = play_match(
        task.env_fn, resolve(task.player_a), resolve(task.player_b), task.n_games, seed=task.seed
    )
    return task.index, result


def _serial_backend(
    tasks: Sequence[_PairTask], archive: Any, n_workers: int | None
) -> Iterator[tuple[int, MatchResult]]:
    for task in tasks:
        yield _run_pair(task, archive)


def _process_backend(
    tasks: Sequence[_PairTask], archive: Any, n_workers: int | None
) -> Iterator[tuple[int, MatchResult]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    workers = n_workers or min(len(tasks), os.cpu_count() or 1)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker) as pool:
        futures = [pool.submit(_run_pair, task) for task in tasks]
        try:
            for future in as_completed(futures):
                try:
                    yield future.result()
                except BrokenProcessPool as error:
                    raise RuntimeError(
                        'A round-robin worker process died (backend="process"). Worker processes '
                        "are spawned: a script that starts a tournament must guard its entry "
                        "point with `if __name__ == '__main__':`, and env_fn and the baselines "
                        'must be importable; backend="serial" runs without workers.'
                    ) from error
        finally:
            for future in futures:
                future.cancel()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(
            'backend="ray" needs Ray, which is not installed: pip install "sp-wrappers[ray]" '
            '(or use backend="process").'
        ) from None
    return ray


def _ray_backend(
    tasks: Sequence[_PairTask], archive: Any, n_workers: int | None
) -> Iterator[tuple[int, MatchResult]]:
    ray = _import_ray()
    if not ray.is_initialized():
        ray.init(num_cpus=n_workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(_run_pair)
    pending = [remote.remote(task) for task in tasks]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    finally:
        for ref in pending:
            ray.cancel(ref)


_BACKENDS: dict[str, Callable[..., Iterator[tuple[int, MatchResult]]]] = {
    "process": _process_backend,
    "ray": _ray_backend,
    "serial": _serial_backend,
}


def _check_backend(backend: str) -> None:
    if backend not in _BACKENDS:
        raise ValueError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
    if backend == "ray":
        _import_ray()


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
    _check_backend(backend)
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
    tasks: list[_PairTask] = []
    earlier: list[tuple[str, str, float]] = []
    pair_index = 0
    for i in range(len(players)):
        for j in range(i + 1, len(players)):
            before = played.get(frozenset((ids[i], ids[j])), [])
            earlier += before
            missing = games_per_pair - len(before)
            if missing > 0:
                tasks.append(
                    _PairTask(
                        index=pair_index,
                        archive_path=str(archive.path),
                        player_a=players[i],
                        player_b=players[j],
                        env_fn=env_fn,
                        n_games=missing,
                        seed=pair_seed(seed, pair_index) + len(before),
                        deterministic=deterministic,
                    )
                )
            pair_index += 1

    results: dict[int, MatchResult] = {}
    if tasks:
        from tqdm.auto import tqdm

        run = _BACKENDS[backend]
        with tqdm(total=len(tasks), desc="round robin", unit="pair", disable=not progress) as bar:
            for index, result in run(tasks, archive, n_workers):
                archive.record_matches(result.records())
                results[index] = result
                bar.update(1)
    matches = [results[index] for index in sorted(results)]
    games = earlier + [(m.player_a, m.player_b, outcome) for m in matches for _, outcome in m.games]
    return RoundRobinResult.from_games(ids, games, matches)
