"""Specification of games from forced openings (``sp_wrappers.evaluation.openings``) on real
games."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, texas_holdem_v4, tictactoe_v3

from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.evaluation.openings import (
    ForcedOpening,
    OpeningGame,
    OpeningsResult,
    legal_openings,
    play_openings,
)
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy


def test_connect_four_has_49_two_move_openings_and_tictactoe_9_first_moves():
    c4 = legal_openings(connect_four_v3.env, plies=2)
    assert len(c4) == 49 and len(set(c4)) == 49
    assert {a for a, _ in c4} == set(range(7)) and {b for _, b in c4} == set(range(7))
    assert legal_openings(tictactoe_v3.env, plies=1) == [(a,) for a in range(9)]
    assert legal_openings(tictactoe_v3.env, plies=0) == [()]


def test_tictactoe_two_move_openings_never_repeat_a_cell():
    openings = legal_openings(tictactoe_v3.env, plies=2)
    assert len(openings) == 72 and all(a != b for a, b in openings)


def test_every_game_starts_with_its_opening_in_both_seats():
    openings = legal_openings(connect_four_v3.env, plies=2)[::8]
    result = play_openings(
        connect_four_v3.env, RandomPolicy(), AlphaBetaConnectFourPolicy(depth=1), openings
    )
    assert result.n_games == 2 * len(openings)
    for game in result.games:
        assert game.moves[:2] == game.opening
    assert {g.seat for g in result.games} == {"player_0", "player_1"}
    assert sorted(result.by_opening()) == sorted(openings)


def test_deterministic_players_replay_one_game_per_seat_unless_openings_are_forced():
    first = AlphaBetaConnectFourPolicy(depth=1, tie_break="first")
    second = AlphaBetaConnectFourPolicy(depth=2, tie_break="first")
    seeded = play_openings(connect_four_v3.env, first, second, [()], repeats=5, seed=3)
    assert seeded.n_games == 10 and seeded.distinct_games() == 2
    openings = legal_openings(connect_four_v3.env, plies=2)
    forced = play_openings(connect_four_v3.env, first, second, openings)
    assert forced.n_games == 98 and forced.distinct_games() == 98


def test_perfect_tictactoe_never_loses_from_any_first_move_in_either_seat():
    openings = legal_openings(tictactoe_v3.env, plies=1)
    result = play_openings(tictactoe_v3.env, PerfectTicTacToePolicy(), RandomPolicy(), openings)
    assert result.wdl()[2] == 0, result.by_opening()
    assert {seat: sum(wdl) for seat, wdl in result.by_seat().items()} == {
        "player_1": 9,
        "player_2": 9,
    }


def test_an_illegal_opening_is_refused_with_the_ply_named():
    with pytest.raises(ValueError, match="illegal action 4 at ply 1"):
        play_openings(tictactoe_v3.env, RandomPolicy(), RandomPolicy(policy_id="b"), [(4, 4)])


def test_forced_opening_plays_the_shared_script_then_the_wrapped_policy():
    a, b = ForcedOpening.pair(RandomPolicy(), RandomPolicy(), opening=(2,))
    masks = np.zeros((1, 9), dtype=bool)
    masks[0, 7] = True
    board = np.zeros((1, 3, 3, 2))
    assert b.act(board, np.ones((1, 9), dtype=bool), None).tolist() == [2]
    assert a.act(board, masks, np.random.default_rng(0)).tolist() == [7]
    assert a.script.moves == [2, 7]


def test_hands_of_holdem_record_zero_sum_chip_returns():
    result = play_openings(
        texas_holdem_v4.env, RandomPolicy(), RandomPolicy(policy_id="b"), [()], repeats=20
    )
    assert result.n_games == 40
    assert all(g.return_a == -g.return_b for g in result.games)
    assert any(g.return_a != 0 for g in result.games)


def game(opening: tuple[int, ...], outcome: float, seat: str = "x") -> OpeningGame:
    return OpeningGame(opening, seat, 0, outcome, 2 * outcome - 1, 1 - 2 * outcome, opening)


def test_bootstrap_over_openings_is_degenerate_when_every_opening_agrees():
    result = OpeningsResult("a", "b", [game((k,), 1.0) for k in range(10)])
    assert result.bootstrap("win") == (1.0, 1.0)
    assert result.bootstrap("return") == (1.0, 1.0)


def test_bootstrap_interval_brackets_the_rate_and_resamples_whole_openings():
    games = [game((k,), 1.0 if k % 3 else 0.0) for k in range(30)]
    result = OpeningsResult("a", "b", games)
    low, high = result.bootstrap("win")
    assert low < 20 / 30 < high
    # Two openings, one won every time and one lost: a resample holds 0, 1 or 2 winning ones.
    clustered = OpeningsResult("a", "b", [game((k % 2,), float(k % 2)) for k in range(30)])
    low, high = clustered.bootstrap("win", level=0.9)
    assert low == 0.0 and high == 1.0
    assert 0.3 < clustered.win_interval()[0] < 0.5 < clustered.win_interval()[1] < 0.7


def test_seeded_games_without_openings_are_resampled_one_by_one():
    result = OpeningsResult("a", "b", [game((), 1.0 if k % 3 else 0.0) for k in range(60)])
    low, high = result.bootstrap("win")
    assert low < 40 / 60 < high


def test_summary_is_json_ready_with_results_per_seat_and_opening():
    import json

    games = [game((0,), 1.0, "x"), game((0,), 0.5, "o"), game((1,), 0.0, "x")]
    summary = json.loads(json.dumps(OpeningsResult("a", "b", games).summary()))
    assert (summary["wins"], summary["draws"], summary["losses"]) == (1, 1, 1)
    assert summary["by_opening"] == {"o": {"0": [0, 1, 0]}, "x": {"0": [1, 0, 0], "1": [0, 0, 1]}}
    assert summary["openings"] == 2 and summary["distinct_games"] == 2  # moves (0,) twice


class _Counting:
    """An SB3 policy's ``act``, counting calls and rows; ``deterministic`` as the policy's."""

    def __init__(self, policy, deterministic: bool) -> None:
        self.policy, self.policy_id, self.calls, self.rows = policy, "learner", 0, 0
        if deterministic:
            self.deterministic = True

    def act(self, observations, action_masks, rng):
        self.calls += 1
        self.rows += len(observations)
        return self.policy.act(observations, action_masks, rng)


def test_a_greedy_network_plays_its_openings_in_batches_with_the_same_games():
    # the strength callback's games: a network, greedy, from every opening in every seat; its
    # forward passes go in one call per ply across the games, as the vectorised envs do
    from sb3_contrib import MaskablePPO

    from sp_wrappers import SelfPlayVecEnv
    from sp_wrappers.core.policies import SB3Policy

    model = MaskablePPO("MlpPolicy", SelfPlayVecEnv(connect_four_v3.env, n_envs=1), seed=0)
    greedy = SB3Policy(model, deterministic=True, policy_id="learner")
    openings = legal_openings(connect_four_v3.env, plies=2)[:12]
    one_by_one, batched = _Counting(greedy, False), _Counting(greedy, True)
    rung = AlphaBetaConnectFourPolicy(depth=1)
    expected = play_openings(connect_four_v3.env, one_by_one, rung, openings, seed=3)
    result = play_openings(connect_four_v3.env, batched, rung, openings, seed=3)
    assert result.games == expected.games and len(result.games) == 24
    assert batched.rows == one_by_one.rows == one_by_one.calls
    assert batched.calls * 5 < one_by_one.calls  # about one call per ply, not per move
    mixed = play_openings(connect_four_v3.env, batched, RandomPolicy(), openings, repeats=2)
    again = play_openings(connect_four_v3.env, one_by_one, RandomPolicy(), openings, repeats=2)
    assert mixed.games == again.games  # the opponent's draws are the game-by-game loop's
