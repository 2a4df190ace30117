"""Payoffs between policies: exact ones agree with OpenSpiel's own evaluation; sampled ones
carry intervals."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3

from sp_wrappers import RandomPolicy
from sp_wrappers.core.policies import CallablePolicy
from sp_wrappers.evaluation.openspiel_policy import tabular_policy
from sp_wrappers.evaluation.payoffs import ExactPayoffs, SampledPayoffs
from sp_wrappers.games.adapters import openspiel_env
from sp_wrappers.games.baselines import PerfectTicTacToePolicy


def _always(action: int) -> CallablePolicy:
    """Plays ``action`` where legal, else the first legal action."""

    def act(obs, masks):
        masks = np.asarray(masks, dtype=bool)
        return np.where(masks[:, action], action, masks.argmax(axis=1))

    return CallablePolicy(act, policy_id=f"always-{action}", batched=True)


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_exact_payoffs_agree_with_openspiel_policy_value(name: str) -> None:
    from open_spiel.python.algorithms.expected_game_score import policy_value

    kwargs = {"observation": "information_state"} if name == "leduc_poker" else {}
    game = openspiel_env(name, **kwargs)
    policies = [RandomPolicy(), _always(1), _always(0)]
    payoffs = ExactPayoffs(game)
    for policy in policies:
        payoffs.add(policy)
    tables = [tabular_policy(game, p) for p in policies]
    root = game.openspiel_game.new_initial_state()
    for i in range(3):
        for j in range(3):
            first = policy_value(root, [tables[i], tables[j]])[0]
            second = policy_value(root, [tables[j], tables[i]])[1]
            assert payoffs.matrix[i, j] == pytest.approx((first + second) / 2, abs=1e-9)
    assert np.abs(payoffs.matrix).max() > 0.1  # the policies differ: not a trivial check


def test_exact_tictactoe_payoffs_perfect_play_draws_and_beats_random() -> None:
    payoffs = ExactPayoffs(tictactoe_v3.env())
    payoffs.add(PerfectTicTacToePolicy())
    payoffs.add(PerfectTicTacToePolicy())
    payoffs.add(RandomPolicy())
    assert payoffs.matrix[0, 1] == pytest.approx(0.0)
    assert payoffs.matrix[0, 2] > 0.8  # random loses most games to minimax in either seat
    np.testing.assert_allclose(payoffs.matrix, -payoffs.matrix.T)


def test_sampled_payoffs_have_intervals_that_cover_the_exact_value() -> None:
    sampled = SampledPayoffs(tictactoe_v3.env, games_per_pair=40, seed=3)
    exact = ExactPayoffs(tictactoe_v3.env())
    for policy in (PerfectTicTacToePolicy(), RandomPolicy()):
        sampled.add(policy)
        exact.add(policy)
    assert sampled.half_width[1, 0] > 0
    assert abs(sampled.matrix[0, 1] - exact.matrix[0, 1]) <= sampled.half_width[0, 1] + 0.05
    with pytest.raises(ValueError, match="games_per_pair"):
        SampledPayoffs(tictactoe_v3.env, games_per_pair=1)


def test_exact_row_is_the_row_the_policy_gets_when_added_without_adding_it() -> None:
    payoffs = ExactPayoffs(openspiel_env("kuhn_poker"))
    for policy in (RandomPolicy(), _always(1)):
        payoffs.add(policy)
    row = payoffs.row(_always(0))
    assert len(payoffs) == 2 and payoffs.matrix.shape == (2, 2)  # nothing added
    payoffs.add(_always(0))
    np.testing.assert_allclose(row, payoffs.matrix[2, :2], atol=1e-12)
    assert np.abs(row).max() > 0.1  # the policies differ: not a trivial check


def test_sampled_row_plays_only_the_members_asked_for() -> None:
    sampled = SampledPayoffs(tictactoe_v3.env, games_per_pair=6, seed=1)
    for policy in (PerfectTicTacToePolicy(), RandomPolicy()):
        sampled.add(policy)
    row = sampled.row(PerfectTicTacToePolicy(), among=[1])
    assert len(sampled) == 2 and row[0] == 0.0 and row[1] > 0  # minimax beats random
    sampled.add(PerfectTicTacToePolicy())
    assert row[1] == pytest.approx(sampled.matrix[2, 1])  # the same seeded games
