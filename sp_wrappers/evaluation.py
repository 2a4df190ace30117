"""Evaluation: play policies against each other and count the results.

This module holds :func:`play_match` and :class:`MatchResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .env import SelfPlayEnv
from .policies import Policy, SB3Policy, is_policy, stack_observations

__all__ = ["play_match", "MatchResult", "as_policy"]


def as_policy(player: Any, policy_id: str | None = None) -> Policy:
    """A policy from a policy or an SB3 model (frozen, deterministic)."""
    if is_policy(player):
        return player
    return SB3Policy(player, deterministic=True, policy_id=policy_id or type(player).__name__)


@dataclass
class MatchResult:
    """Wins, draws and losses of ``policy_a`` against ``policy_b`` (b's are the mirror image).

    ``games`` lists ``(seat_a, outcome_a)`` per game; ``by_seat`` counts per seat of ``a``.
    """

    player_a: str
    player_b: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    games: list[tuple[str, float]] = field(default_factory=list)

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

    def __str__(self) -> str:
        return (
            f"{self.player_a} vs {self.player_b}: {self.wins} wins, {self.draws} draws, "
            f"{self.losses} losses in {self.n_games} games"
        )


def play_match(
    env_fn: Callable[[], Any],
    policy_a: Any,
    policy_b: Any,
    n_games: int,
    swap_seats: bool = True,
    seed: int = 0,
    seat: str | None = None,
) -> MatchResult:
    """Play ``n_games`` of a two-seat game between two policies (or SB3 models).

    :param env_fn: builds the PettingZoo game.
    :param policy_a: a policy or an SB3 model (played deterministically).
    :param policy_b: likewise; it takes every other seat.
    :param n_games: games to play.
    :param swap_seats: alternate ``a`` over the seats game by game (else ``seat`` or the first).
    :param seed: game ``i`` is reset with ``seed + i``: results are reproducible.
    :param seat: ``a``'s seat when ``swap_seats`` is false.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import RandomPolicy
    >>> result = play_match(tictactoe_v3.env, RandomPolicy(), RandomPolicy(policy_id="r2"), 10)
    >>> result.n_games, sorted(result.by_seat())
    (10, ['player_1', 'player_2'])
    """
    a = as_policy(policy_a, "a")
    b = as_policy(policy_b, "b")
    env = SelfPlayEnv(env_fn(), learner="random" if swap_seats else (seat or "random"), opponent=b)
    seats = env.learner_seats if swap_seats else [seat or env.learner_seats[0]]
    result = MatchResult(a.policy_id, b.policy_id)
    try:
        for game in range(n_games):
            options = {"learner_seat": seats[game % len(seats)]}
            obs, _ = env.reset(seed=seed + game, options=options)
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
            if outcome == 1.0:
                result.wins += 1
            elif outcome == 0.0:
                result.losses += 1
            else:
                result.draws += 1
    finally:
        env.close()
    return result
