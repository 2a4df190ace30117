"""Specification of the reference opponents: perfect tic-tac-toe and alpha-beta Connect Four."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3

from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.evaluation.match import play_match
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def ttt_board(own: list[int], opp: list[int]) -> np.ndarray:
    """A batch of one tic-tac-toe observation with marks on the given actions (cells)."""
    board = np.zeros((1, 3, 3, 2), dtype=np.int8)
    for cell in own:
        board[0, cell // 3, cell % 3, 0] = 1
    for cell in opp:
        board[0, cell // 3, cell % 3, 1] = 1
    return board


def ttt_masks(board: np.ndarray) -> np.ndarray:
    return board.reshape(len(board), 9, 2).sum(axis=2) == 0


def c4_board(own: list[tuple[int, int]], opp: list[tuple[int, int]]) -> np.ndarray:
    """A batch of one Connect Four observation; cells are (row, column), row 5 the bottom."""
    board = np.zeros((1, 6, 7, 2), dtype=np.int8)
    for r, c in own:
        board[0, r, c, 0] = 1
    for r, c in opp:
        board[0, r, c, 1] = 1
    return board


def c4_masks(board: np.ndarray) -> np.ndarray:
    return board[:, 0].sum(axis=2) == 0


# ------------------------------------------------------------------------------------------------
# Tic-tac-toe
# ------------------------------------------------------------------------------------------------


def test_perfect_tictactoe_never_loses_to_random_in_either_seat():
    result = play_match(tictactoe_v3.env, PerfectTicTacToePolicy(), RandomPolicy(), 200, seed=0)
    assert result.losses == 0, str(result)
    assert {seat: sum(row) for seat, row in result.by_seat().items()} == {
        "player_1": 100,
        "player_2": 100,
    }
    assert result.wins > 150


def test_perfect_tictactoe_draws_against_itself():
    result = play_match(
        tictactoe_v3.env, PerfectTicTacToePolicy(), PerfectTicTacToePolicy(policy_id="m2"), 30
    )
    assert result.draws == 30, str(result)


def test_perfect_tictactoe_as_the_envs_opponent_is_never_beaten():
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random", opponent=PerfectTicTacToePolicy())
    for seed in range(40):
        env.reset(seed=seed)
        done = False
        while not done:
            action = int(env.np_random.choice(np.flatnonzero(env.action_masks())))
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        assert info["selfplay"]["outcome"] <= 0.5


@pytest.mark.parametrize("seed", range(5))
def test_perfect_tictactoe_takes_a_winning_move(seed):
    board = ttt_board(own=[0, 1], opp=[3, 4])  # 2 wins at once, 5 only blocks
    assert PerfectTicTacToePolicy().act(board, ttt_masks(board), rng(seed)).tolist() == [2]


@pytest.mark.parametrize("seed", range(5))
def test_perfect_tictactoe_blocks_an_immediate_loss(seed):
    board = ttt_board(own=[0, 8], opp=[3, 4])  # the opponent threatens 3-4-5
    assert PerfectTicTacToePolicy().act(board, ttt_masks(board), rng(seed)).tolist() == [5]


def test_perfect_tictactoe_action_values_grade_every_move():
    board = ttt_board(own=[0, 1], opp=[3, 4])
    values = PerfectTicTacToePolicy().action_values(board)
    assert values[0, 2] == values.max() > 0
    assert np.isneginf(values[0, [0, 1, 3, 4]]).all()
    assert values[0, 5] == 0.0  # only blocking: a draw
    assert (values[0, [6, 7, 8]] < 0).all()  # letting the opponent complete 3-4-5 loses


def test_perfect_tictactoe_respects_the_mask_and_a_dict_batch():
    board = ttt_board(own=[], opp=[])
    masks = np.zeros((1, 9), dtype=bool)
    masks[0, 7] = True
    policy = PerfectTicTacToePolicy(tie_break="first")
    assert policy.act(board, masks, rng()).tolist() == [7]
    batch = {"observation": np.repeat(board, 2, axis=0), "action_mask": np.repeat(masks, 2, axis=0)}
    assert policy.act(batch, None, rng()).tolist() == [7, 7]


def test_perfect_tictactoe_tie_break_first_is_deterministic_random_varies():
    board = ttt_board(own=[], opp=[])
    first = {
        int(PerfectTicTacToePolicy(tie_break="first").act(board, None, rng(s))[0])
        for s in range(10)
    }
    assert len(first) == 1
    randomised = {int(PerfectTicTacToePolicy().act(board, None, rng(s))[0]) for s in range(30)}
    assert len(randomised) > 1


@pytest.mark.parametrize(
    ("observations", "message"),
    [
        (np.zeros((3, 3, 2)), r"shape \(n, 3, 3, 2\).*Add a batch dimension"),
        (np.zeros((1, 9)), r"shape \(n, 3, 3, 2\), got shape \(1, 9\)"),
        (np.ones((1, 3, 3, 2)), "marks a cell for both players"),
        ({"obs": np.zeros((1, 3, 3, 2))}, "needs an 'observation' key"),
    ],
)
def test_perfect_tictactoe_bad_observations_error(observations, message):
    with pytest.raises(ValueError, match=message):
        PerfectTicTacToePolicy().act(observations, None, rng())


def test_perfect_tictactoe_bad_masks_and_full_boards_error():
    with pytest.raises(ValueError, match=r"action masks of shape \(1, 9\), got \(1, 7\)"):
        PerfectTicTacToePolicy().act(ttt_board([], []), np.ones((1, 7)), rng())
    with pytest.raises(ValueError, match="no legal move"):
        PerfectTicTacToePolicy().act(ttt_board([], []), np.zeros((1, 9), dtype=bool), rng())
    with pytest.raises(ValueError, match="tie_break must be"):
        PerfectTicTacToePolicy(tie_break="best")


# ------------------------------------------------------------------------------------------------
# Connect Four
# ------------------------------------------------------------------------------------------------


def test_alphabeta_depth_2_beats_random_at_least_95_percent():
    result = play_match(
        connect_four_v3.env, AlphaBetaConnectFourPolicy(depth=2), RandomPolicy(), 100, seed=0
    )
    assert result.wins >= 95, str(result)


def test_alphabeta_depth_4_beats_depth_1_more_than_it_loses():
    result = play_match(
        connect_four_v3.env,
        AlphaBetaConnectFourPolicy(depth=4),
        AlphaBetaConnectFourPolicy(depth=1),
        20,
        seed=0,
    )
    assert result.wins > result.losses, str(result)


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_alphabeta_takes_a_winning_move(depth):
    horizontal = c4_board(own=[(5, 0), (5, 1), (5, 2)], opp=[(4, 0), (4, 1), (4, 2)])
    vertical = c4_board(own=[(5, 6), (4, 6), (3, 6)], opp=[(5, 0), (5, 1), (4, 0)])
    policy = AlphaBetaConnectFourPolicy(depth=depth)
    for seed in range(3):
        assert policy.act(horizontal, c4_masks(horizontal), rng(seed)).tolist() == [3]
        assert policy.act(vertical, c4_masks(vertical), rng(seed)).tolist() == [6]


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_alphabeta_blocks_an_immediate_loss(depth):
    board = c4_board(own=[(4, 0), (4, 1), (5, 6)], opp=[(5, 0), (5, 1), (5, 2)])
    policy = AlphaBetaConnectFourPolicy(depth=depth)
    for seed in range(3):
        assert policy.act(board, c4_masks(board), rng(seed)).tolist() == [3]


def test_alphabeta_respects_the_mask():
    board = c4_board(own=[(5, 0), (5, 1), (5, 2)], opp=[(4, 0), (4, 1), (4, 2)])
    masks = np.zeros((1, 7), dtype=bool)
    masks[0, 5] = True  # the winning column 3 is masked out
    assert AlphaBetaConnectFourPolicy(depth=2).act(board, masks, rng()).tolist() == [5]


def test_alphabeta_acts_on_a_batch():
    boards = np.concatenate(
        [
            c4_board(own=[(5, 0), (5, 1), (5, 2)], opp=[(4, 0), (4, 1), (4, 2)]),
            c4_board(own=[(4, 0), (4, 1), (5, 6)], opp=[(5, 0), (5, 1), (5, 2)]),
        ]
    )
    assert AlphaBetaConnectFourPolicy(depth=2).act(boards, None, rng()).tolist() == [3, 3]


def test_alphabeta_policy_id_names_the_depth():
    assert AlphaBetaConnectFourPolicy(depth=3).policy_id == "alphabeta-d3"
    assert AlphaBetaConnectFourPolicy(depth=3, policy_id="ab").policy_id == "ab"


@pytest.mark.parametrize(
    ("observations", "message"),
    [
        (np.zeros((6, 7, 2)), r"shape \(n, 6, 7, 2\).*Add a batch dimension"),
        (np.zeros((1, 7, 6, 2)), r"shape \(n, 6, 7, 2\), got shape \(1, 7, 6, 2\)"),
        (c4_board(own=[(5, 0)], opp=[(5, 0)]), "marks a cell for both players"),
        (c4_board(own=[(0, 3)], opp=[]), "floating piece in column 3"),
    ],
)
def test_alphabeta_bad_observations_error(observations, message):
    with pytest.raises(ValueError, match=message):
        AlphaBetaConnectFourPolicy().act(observations, None, rng())


@pytest.mark.parametrize("depth", [0, -1, 1.5])
def test_alphabeta_depth_must_be_a_positive_integer(depth):
    with pytest.raises(ValueError, match="depth must be an integer >= 1"):
        AlphaBetaConnectFourPolicy(depth=depth)


def test_alphabeta_without_a_legal_move_errors():
    with pytest.raises(ValueError, match="no legal move"):
        AlphaBetaConnectFourPolicy().act(c4_board([], []), np.zeros((1, 7), dtype=bool), rng())
