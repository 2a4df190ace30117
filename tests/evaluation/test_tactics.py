"""Specification of the one-move tactics check (``sp_wrappers.evaluation.tactics``) on real
games: hand-made positions for each case, the alpha-beta depth-1 player, an OpenSpiel game
through Shimmy, and an env that cannot be copied."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3

from sp_wrappers.core.policies import CallablePolicy, RandomPolicy
from sp_wrappers.evaluation.errors import LookAheadError
from sp_wrappers.evaluation.openings import OpeningGame, OpeningsResult, play_openings
from sp_wrappers.evaluation.tactics import TacticsReport, copy_game, game_tactics, tactics_check
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy


def position(env_fn, seat: str, forced: tuple[int, ...], chosen: int) -> TacticsReport:
    """The counts of one hand-made position: ``forced`` moves, then ``seat`` plays ``chosen``."""
    record = OpeningGame(forced, seat, 0, 0.5, 0.0, 0.0, forced + (chosen,))
    return game_tactics(env_fn, OpeningsResult("a", "b", [record]))


# tic-tac-toe cells: 0 1 2 / 3 4 5 / 6 7 8 (player_1 is X and moves first)
X_WINS_AT_2_O_THREATENS_5 = (0, 3, 1, 4)
O_THREATENS_6 = (0, 4, 8, 2)  # X to move, no win of its own, O's only threat is 6
X_HOLDS_TWO_THREATS = (0, 4, 8, 2, 6)  # O to move: X threatens 3 and 7, nothing is safe


def test_a_win_available_is_taken_or_missed():
    taken = position(tictactoe_v3.env, "player_1", X_WINS_AT_2_O_THREATENS_5, 2)
    assert (taken.positions, taken.wins_taken, taken.win_chances) == (1, 1, 1)
    assert taken.safe_chances == 0 and taken.wins_taken_share == 1.0
    missed = position(tictactoe_v3.env, "player_1", X_WINS_AT_2_O_THREATENS_5, 8)
    assert (missed.wins_taken, missed.win_chances) == (0, 1)
    # 8 neither wins nor stops O's 5, while 2 (the win) was safe: a win handed over
    assert (missed.wins_handed, missed.safe_chances) == (1, 1)
    # a win was there, so no single-threat position is counted
    assert missed.single_threats == 0


def test_a_single_threat_is_blocked_or_not():
    blocked = position(tictactoe_v3.env, "player_1", O_THREATENS_6, 6)
    assert (blocked.win_chances, blocked.threats_blocked, blocked.single_threats) == (0, 1, 1)
    assert (blocked.wins_handed, blocked.safe_chances) == (0, 1)
    ignored = position(tictactoe_v3.env, "player_1", O_THREATENS_6, 1)
    assert (ignored.threats_blocked, ignored.single_threats) == (0, 1)
    assert (ignored.wins_handed, ignored.safe_chances) == (1, 1)
    assert ignored.threats_blocked_share == 0.0 and ignored.wins_handed_share == 1.0


def test_connect_four_column_threat_and_an_open_three():
    # X (player_0) holds three in column 6, O must block there: 5 hands X the column
    handed = position(connect_four_v3.env, "player_1", (6, 1, 6, 2, 6), 5)
    assert (handed.win_chances, handed.single_threats, handed.threats_blocked) == (0, 1, 0)
    assert (handed.wins_handed, handed.safe_chances) == (1, 1)
    blocked = position(connect_four_v3.env, "player_1", (6, 1, 6, 2, 6), 6)
    assert (blocked.single_threats, blocked.threats_blocked, blocked.wins_handed) == (1, 1, 0)
    # O holds 1 2 3 on the bottom row, open at both ends: two threats, X loses whatever it plays,
    # so the position counts neither as a single threat nor as a chance to stay safe
    lost = position(connect_four_v3.env, "player_0", (6, 1, 6, 2, 5, 3), 0)
    assert (lost.positions, lost.single_threats, lost.safe_chances) == (1, 0, 0)


def test_no_safe_move_counts_as_neither_a_threat_nor_a_handed_win():
    report = position(tictactoe_v3.env, "player_2", X_HOLDS_TWO_THREATS, 3)
    assert report.positions == 1
    assert (report.win_chances, report.single_threats, report.safe_chances) == (0, 0, 0)
    assert math.isnan(report.threats_blocked_share) and math.isnan(report.wins_handed_share)
    assert report.as_dict()["wins_handed_share"] is None


def test_connect_four_win_on_the_bottom_row():
    forced = (0, 0, 1, 1, 2, 2)  # X holds 0 1 2 on the bottom row, O on top of them
    assert position(connect_four_v3.env, "player_0", forced, 3).wins_taken == 1
    missed = position(connect_four_v3.env, "player_0", forced, 6)
    assert (missed.wins_taken, missed.win_chances) == (0, 1)


def test_alphabeta_depth_one_never_misses_a_one_move_tactic():
    depth1 = AlphaBetaConnectFourPolicy(depth=1)
    openings = [(3, 3), (0, 6), (2, 4), (6, 0), (1, 1), (5, 2)]
    report = tactics_check(connect_four_v3.env, depth1, RandomPolicy(), openings=openings)
    report += tactics_check(
        connect_four_v3.env,
        depth1,
        AlphaBetaConnectFourPolicy(depth=2, tie_break="random"),
        openings=openings,
    )
    assert report.win_chances > 0 and report.single_threats > 0 and report.safe_chances > 0
    assert report.shares() == {"wins_taken": 1.0, "threats_blocked": 1.0, "wins_handed": 0.0}


def test_random_play_misses_tactics_that_perfect_play_takes():
    random_report = tactics_check(
        tictactoe_v3.env, RandomPolicy(), PerfectTicTacToePolicy(), repeats=4
    )
    assert random_report.single_threats > 0 and random_report.threats_blocked_share < 1.0
    assert random_report.wins_handed > 0
    perfect = tactics_check(tictactoe_v3.env, PerfectTicTacToePolicy(), RandomPolicy(), repeats=4)
    assert perfect.win_chances > 0
    assert perfect.shares() == {"wins_taken": 1.0, "threats_blocked": 1.0, "wins_handed": 0.0}


def test_game_tactics_replays_the_games_play_openings_played():
    depth1 = AlphaBetaConnectFourPolicy(depth=1)
    openings = [(3, 3), (1, 5)]
    played = play_openings(connect_four_v3.env, RandomPolicy(), depth1, openings, seed=7)
    replayed = game_tactics(connect_four_v3.env, played, seed=7)
    checked = tactics_check(connect_four_v3.env, RandomPolicy(), depth1, openings, seed=7)
    assert replayed == checked
    assert replayed.positions == sum(
        len(g.moves[len(g.opening) :][::2])
        if g.seat == "player_0"
        else len(g.moves[len(g.opening) :][1::2])
        for g in played.games
    )


def test_openspiel_tictactoe_through_shimmy():
    pytest.importorskip("pyspiel")
    from sp_wrappers.games.adapters import openspiel_env

    def env_fn():
        return openspiel_env("tic_tac_toe")

    # OpenSpiel's cells are numbered as PettingZoo's; player_0 moves first
    taken = position(env_fn, "player_0", X_WINS_AT_2_O_THREATENS_5, 2)
    assert (taken.wins_taken, taken.win_chances) == (1, 1)
    ignored = position(env_fn, "player_0", O_THREATENS_6, 1)
    assert (ignored.single_threats, ignored.threats_blocked, ignored.wins_handed) == (1, 0, 1)
    report = tactics_check(env_fn, RandomPolicy(), RandomPolicy(policy_id="r2"), repeats=2)
    assert report.positions > 0


def test_copy_game_leaves_the_original_where_it_was():
    game = connect_four_v3.env()
    game.reset(seed=0)
    game.step(3)
    twin = copy_game(game)
    twin.step(3)
    twin.step(4)
    board = game.observe("player_1")["observation"]
    assert int(np.sum(board)) == 1 and game.agent_selection == "player_1"
    assert int(np.sum(twin.observe("player_1")["observation"])) == 3


def test_an_env_that_cannot_be_copied_is_refused_in_one_line():
    def locked_tictactoe():
        game = tictactoe_v3.env()
        game.unwrapped.lock = threading.Lock()
        return game

    first_legal = CallablePolicy(lambda obs, mask: int(np.flatnonzero(mask)[0]), "first")
    with pytest.raises(LookAheadError, match="cannot be copied for a one-move look-ahead") as info:
        tactics_check(locked_tictactoe, first_legal, RandomPolicy())
    assert "\n" not in str(info.value) and "'lock'" in str(info.value)


def test_a_game_that_does_not_replay_is_refused():
    record = OpeningGame((), "player_1", 0, 0.5, 0.0, 0.0, (4, 4))
    with pytest.raises(LookAheadError, match="illegal when the game is replayed"):
        game_tactics(tictactoe_v3.env, OpeningsResult("a", "b", [record]))
