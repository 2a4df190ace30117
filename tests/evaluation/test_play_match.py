"""Specification of ``play_match``: counting, seat swapping, reproducibility, per-seat tables."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GuessGame
from pettingzoo.classic import connect_four_v3, texas_holdem_v4, tictactoe_v3

from sp_wrappers.core.policies import CallablePolicy, RandomPolicy
from sp_wrappers.evaluation.match import MatchResult, play_match
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy


def test_play_match_counts_every_game_once():
    result = play_match(tictactoe_v3.env, RandomPolicy(policy_id="a"), RandomPolicy(), 30, seed=0)
    assert result.n_games == result.wins + result.draws + result.losses == 30
    assert len(result.games) == 30
    assert [outcome for _, outcome in result.games].count(1.0) == result.wins
    assert [outcome for _, outcome in result.games].count(0.0) == result.losses
    assert result.score_a == pytest.approx((result.wins + 0.5 * result.draws) / 30)
    assert (result.player_a, result.player_b) == ("a", "random")
    assert f"{result.wins} wins, {result.draws} draws, {result.losses} losses in 30 games" in str(
        result
    )


def test_swap_seats_alternates_the_first_player_over_both_seats():
    result = play_match(tictactoe_v3.env, RandomPolicy(policy_id="a"), RandomPolicy(), 10)
    assert [seat for seat, _ in result.games] == ["player_1", "player_2"] * 5
    assert {seat: sum(row) for seat, row in result.by_seat().items()} == {
        "player_1": 5,
        "player_2": 5,
    }
    assert result.opponent_seats == ["player_2", "player_1"] * 5


def test_without_swap_seats_the_first_player_keeps_the_given_seat():
    fixed = play_match(
        tictactoe_v3.env, RandomPolicy(), RandomPolicy(), 6, swap_seats=False, seat="player_2"
    )
    assert {seat for seat, _ in fixed.games} == {"player_2"}
    default = play_match(tictactoe_v3.env, RandomPolicy(), RandomPolicy(), 6, swap_seats=False)
    assert {seat for seat, _ in default.games} == {"player_1"}


def test_play_match_is_reproducible_for_a_seed():
    def run(seed: int) -> list:
        return play_match(
            texas_holdem_v4.env, RandomPolicy(policy_id="a"), RandomPolicy(), 40, seed=seed
        ).games

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_results_are_mirror_images_when_the_players_swap_roles():
    deep = AlphaBetaConnectFourPolicy(depth=2, tie_break="first")
    shallow = AlphaBetaConnectFourPolicy(depth=1, tie_break="first")
    ab = play_match(connect_four_v3.env, deep, shallow, 4)
    ba = play_match(connect_four_v3.env, shallow, deep, 4)
    assert (ab.wins, ab.draws, ab.losses) == (ba.losses, ba.draws, ba.wins)


def test_by_seat_counts_wins_draws_losses_per_seat():
    result = MatchResult(
        "a",
        "b",
        wins=2,
        draws=1,
        losses=1,
        games=[("x", 1.0), ("o", 0.5), ("x", 0.0), ("o", 1.0)],
    )
    assert result.by_seat() == {"o": (1, 1, 0), "x": (1, 0, 1)}


def test_by_seat_shows_a_perfect_player_never_loses_in_either_seat():
    result = play_match(tictactoe_v3.env, PerfectTicTacToePolicy(), RandomPolicy(), 20, seed=1)
    table = result.by_seat()
    assert set(table) == {"player_1", "player_2"}
    assert all(losses == 0 for _, _, losses in table.values())


def test_play_match_on_a_game_without_masks():
    def cue(obs: np.ndarray, mask: None) -> int:
        return int(np.argmax(obs))

    result = play_match(GuessGame, CallablePolicy(cue, "cue"), RandomPolicy(), 60, seed=0)
    assert result.losses == 0 and result.wins > 20


def test_play_match_accepts_an_sb3_model():
    from stable_baselines3 import PPO

    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    model = PPO("MlpPolicy", SelfPlayEnv(GuessGame()), n_steps=32, batch_size=32, seed=0)
    result = play_match(GuessGame, model, RandomPolicy(), 4)
    assert result.player_a == "a" and result.n_games == 4  # models are named by their role


def test_play_match_with_zero_games_is_empty_and_negative_errors():
    assert play_match(tictactoe_v3.env, RandomPolicy(), RandomPolicy(), 0).n_games == 0
    with pytest.raises(ValueError, match="n_games must be >= 0"):
        play_match(tictactoe_v3.env, RandomPolicy(), RandomPolicy(), -1)
