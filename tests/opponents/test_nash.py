"""The Nash meta-solver: zero-sum matrix games by linear programming, and snapshot payoffs."""

from __future__ import annotations

import numpy as np
import pytest

from sp_wrappers.opponents.nash import (
    SnapshotPayoffs,
    archive_payoffs,
    solve_zero_sum,
    symmetric_nash,
)

ROCK_PAPER_SCISSORS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)


def test_rock_paper_scissors_is_solved_by_the_uniform_mixture_with_value_zero():
    row, column, value = solve_zero_sum(ROCK_PAPER_SCISSORS)
    assert row == pytest.approx([1 / 3] * 3, abs=1e-9)
    assert column == pytest.approx([1 / 3] * 3, abs=1e-9)
    assert value == pytest.approx(0.0, abs=1e-9)


def test_a_dominated_strategy_gets_weight_zero():
    # Rock-paper-scissors plus a fourth row that does worse than rock against everything.
    payoff = np.vstack([ROCK_PAPER_SCISSORS, ROCK_PAPER_SCISSORS[0] - 0.5])
    row, column, value = solve_zero_sum(payoff)
    assert row[3] == pytest.approx(0.0, abs=1e-9)
    assert row[:3] == pytest.approx([1 / 3] * 3, abs=1e-9)
    assert value == pytest.approx(0.0, abs=1e-9)


def test_the_equilibrium_mixtures_guarantee_the_value_for_both_sides():
    rng = np.random.default_rng(0)
    payoff = rng.normal(size=(5, 7))
    row, column, value = solve_zero_sum(payoff)
    assert row.sum() == pytest.approx(1.0) and column.sum() == pytest.approx(1.0)
    assert (row @ payoff).min() == pytest.approx(value, abs=1e-7)  # row secures at least v
    assert (payoff @ column).max() == pytest.approx(value, abs=1e-7)  # column concedes at most v


def test_a_matching_pennies_with_a_bias_has_the_textbook_mixture():
    row, column, value = solve_zero_sum([[2, -1], [-1, 1]])
    assert row == pytest.approx([0.4, 0.6]) and column == pytest.approx([0.4, 0.6])
    assert value == pytest.approx(0.2)


def test_symmetric_games_between_players_put_weight_on_the_cycle_not_the_loser():
    # a beats b, b beats c, c beats a, and everyone beats d.
    scores = np.full((4, 4), 0.5)
    for winner, loser in [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]:
        scores[winner, loser], scores[loser, winner] = 1.0, 0.0
    mixture = symmetric_nash(scores)
    assert mixture == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0.0], abs=1e-9)


@pytest.mark.parametrize("payoff", [[], [[1.0, np.nan]], [1.0, 2.0]])
def test_a_matrix_that_is_not_one_is_refused(payoff):
    with pytest.raises(ValueError, match="2-D matrix of finite payoffs"):
        solve_zero_sum(payoff)


def test_archive_payoffs_read_games_between_snapshots_and_list_the_missing_pairs(tmp_path):
    from pettingzoo.classic import tictactoe_v3
    from stable_baselines3 import PPO

    from sp_wrappers import SelfPlayEnv, SnapshotArchive

    model = PPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env()), n_steps=16, batch_size=16)
    archive = SnapshotArchive(tmp_path)
    a, b, c = (archive.save(model, step=s).id for s in (0, 1, 2))
    archive.record_matches(
        [dict(player_a=a, player_b=b, score_a=1.0)] * 3
        + [dict(player_a=b, player_b=a, score_a=1.0)]  # b wins one back
        + [dict(player_a="learner", player_b=c, score_a=0.0)] * 5  # not between snapshots
    )
    payoffs = archive_payoffs(archive, [a, b, c])
    assert isinstance(payoffs, SnapshotPayoffs)
    assert payoffs.scores[0, 1] == pytest.approx(0.75)
    assert payoffs.scores[1, 0] == pytest.approx(0.25)
    assert payoffs.games[0, 1] == 4 and payoffs.games[0, 2] == 0
    assert payoffs.missing_pairs == [(a, c), (b, c)]
    mixture = payoffs.nash()
    assert mixture[b] == pytest.approx(0.0, abs=1e-9)  # a beats b; c is taken as even with both


def test_among_many_equilibria_the_weight_is_spread_over_every_strategy_that_can_play():
    row, column, value = solve_zero_sum(np.zeros((3, 3)))
    assert row == pytest.approx([1 / 3] * 3) and column == pytest.approx([1 / 3] * 3)
    twins = symmetric_nash([[0.5, 0.5, 1.0], [0.5, 0.5, 1.0], [0.0, 0.0, 0.5]])
    assert twins == pytest.approx([0.5, 0.5, 0.0], abs=1e-9)
