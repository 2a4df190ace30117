"""Evaluation: play policies against each other, count the results, rate the archive.

``n`` games between two policies, seats swapped, counted as wins, draws and losses; round robins
over an archive build on them (:mod:`sp_wrappers.evaluation.round_robin`), played serially, in
worker processes or as Ray tasks, written to the archive's match history.

Parallel work is split into one task per pair. A task names its snapshots by id and carries the
archive *path*, never a policy object built from a snapshot: each worker reopens the archive and
loads the weights itself (safetensors, hash-checked). Baselines and ``env_fn`` travel pickled, so
they must be picklable (module-level functions or ``functools.partial``, not lambdas). Each pair's
seed is derived from ``(seed, pair index)`` alone, so the results do not depend on the backend,
the number of workers or the order in which tasks finish. Only the calling process writes to the
archive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..archive.records import SnapshotInfo
from ..archive.store import as_archive
from ..core.policies import (
    Policy,
    PolicyPlayer,
    RandomPolicy,
    SB3Policy,
    is_policy,
    stack_observations,
)
from ..core.seats import as_aec_env, seat_spaces
from ..envs.selfplay_env import SelfPlayEnv

__all__ = ["play_match", "MatchResult", "as_policy", "EVALUATION_SOURCE", "with_action_space"]

EVALUATION_SOURCE = "evaluation"


def as_policy(
    player: Any, policy_id: str | None = None, archive: Any = None, deterministic: bool = False
) -> Policy:
    """A policy from a policy, an SB3 model (frozen, deterministic) or, with ``archive``, a
    snapshot id or ``SnapshotInfo`` (its frozen policy, sampling its actions unless
    ``deterministic``)."""
    if is_policy(player):
        return player
    if isinstance(player, SnapshotInfo):
        player = player.id
    if isinstance(player, str):
        if archive is None:
            raise TypeError(
                f"Got the snapshot id {player!r} but no archive to load it from; pass archive=."
            )
        return archive.load_policy(player, deterministic=deterministic)
    return SB3Policy(player, deterministic=True, policy_id=policy_id or type(player).__name__)


@dataclass
class MatchResult:
    """Wins, draws and losses of ``policy_a`` against ``policy_b`` (b's are the mirror image).

    ``games`` lists ``(seat_a, outcome_a)`` per game; ``by_seat`` counts per seat of ``a``.
    ``opponent_seats`` lists ``b``'s seat per game. ``distinct_games`` is how many different games
    (move sequences) those were, and ``openings`` how many forced openings of ``opening_plies``
    moves they started from, where known (``None`` otherwise).

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
    distinct_games: int | None = None
    openings: int | None = None
    opening_plies: int | None = None

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


def with_action_space(policy: Policy, action_space: Any) -> Policy:
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
    a = with_action_space(a, action_space)
    b = with_action_space(b, action_space)
    env = SelfPlayEnv(
        game,
        learner="random" if swap_seats else (seat or "random"),
        opponent=b,
        illegal_action=illegal_action,
    )
    seats = env.learner_seats if swap_seats else [seat or env.learner_seats[0]]
    result = MatchResult(a.policy_id, b.policy_id)
    player_a = PolicyPlayer(a)
    try:
        for index in range(n_games):
            options = {"learner_seat": seats[index % len(seats)]}
            obs, _ = env.reset(seed=seed + index, options=options)
            player_a.reset()
            done = False
            while not done:
                mask = env.driver.learner_mask()
                batch = stack_observations([obs])
                masks = None if mask is None else mask[None]
                action = player_a.act(batch, masks, env.np_random)[0]
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
