"""Move notation: every game's text maps to PettingZoo's action index and back, legal moves only."""

from __future__ import annotations

import chess
import numpy as np
import pytest
from pettingzoo.classic import (
    chess_v6,
    connect_four_v3,
    go_v5,
    rps_v2,
    texas_holdem_no_limit_v6,
    texas_holdem_v4,
    tictactoe_v3,
)
from pettingzoo.classic.chess import chess_utils

from sp_wrappers.games.notation import (
    ChessNotation,
    ConnectFourNotation,
    GoNotation,
    IndexNotation,
    LimitHoldemNotation,
    MoveError,
    NoLimitHoldemNotation,
    TicTacToeNotation,
    describe_moves,
    notation_for,
    parse_moves,
)


def mask_of(env) -> np.ndarray:
    return np.asarray(env.observe(env.agent_selection)["action_mask"], dtype=bool)


def over(env) -> bool:
    return any(env.terminations.values()) or any(env.truncations.values())


def assert_round_trips(notation, env) -> list[str]:
    """Every legal action's text parses back to it; the texts are distinct."""
    mask = mask_of(env)
    legal = np.flatnonzero(mask).tolist()
    texts = notation.legal_moves(env, mask)
    assert len(set(texts)) == len(texts) == len(legal)
    assert sorted(notation.parse(text, env, mask) for text in texts) == legal
    for action in legal:
        assert notation.parse(notation.describe(action, env), env, mask) == action
    return texts


def random_games(make, n_games: int, max_plies: int, seed: int = 0):
    """Yield ``env`` at every position of ``n_games`` random games."""
    rng = np.random.default_rng(seed)
    for game in range(n_games):
        env = make()
        env.reset(seed=seed + game)
        for _ in range(max_plies):
            if over(env):
                break
            yield env
            env.step(int(rng.choice(np.flatnonzero(mask_of(env)))))


# -- tic-tac-toe ---------------------------------------------------------------------------------


def test_tictactoe_cells_are_numbered_in_reading_order_over_pettingzoos_column_order():
    env = tictactoe_v3.env()
    env.reset()
    notation = TicTacToeNotation()
    # PettingZoo's cells run down the columns: 0 3 6 is the top row.
    assert [notation.read(str(cell), env) for cell in range(1, 10)] == [0, 3, 6, 1, 4, 7, 2, 5, 8]
    env.step(notation.parse("3", env, mask_of(env)))  # X top right
    assert env.unwrapped.board.squares[6] == 1
    assert notation.board(env).splitlines()[0] == " 1 | 2 | X"
    assert "3" not in notation.legal_moves(env, mask_of(env))


def test_tictactoe_round_trips_in_every_position_of_random_games():
    for env in random_games(tictactoe_v3.env, 20, 9):
        assert_round_trips(TicTacToeNotation(), env)


# -- Connect Four ------------------------------------------------------------------------------


def test_connect_four_moves_are_column_numbers_under_the_board():
    env = connect_four_v3.env()
    env.reset()
    notation = ConnectFourNotation()
    env.step(notation.parse("1", env, mask_of(env)))
    env.step(notation.parse("1", env, mask_of(env)))
    lines = notation.board(env).splitlines()
    assert lines[-1] == "1 2 3 4 5 6 7"
    assert lines[-2].startswith("X") and lines[-3].startswith("O")


def test_connect_four_round_trips_and_refuses_a_full_column():
    for env in random_games(connect_four_v3.env, 10, 42):
        texts = assert_round_trips(ConnectFourNotation(), env)
        full = [str(c) for c in range(1, 8) if str(c) not in texts]
        for column in full:
            with pytest.raises(MoveError, match="not legal now"):
                ConnectFourNotation().parse(column, env, mask_of(env))


# -- Go ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [5, 9, 19])
def test_go_coordinates_agree_with_pettingzoos_own_gtp_helpers(size):
    from pettingzoo.classic.go import coords

    env = go_v5.env(board_size=size)  # sets go_base.N, which coords reads
    env.reset()
    notation = GoNotation()
    for action in range(size * size + 1):
        text = notation.describe(action, env)
        assert text == coords.to_gtp(coords.from_flat(action))
        assert notation.read(text.lower(), env) == action
    assert notation.board(env).splitlines()[0].split() == list("ABCDEFGHJKLMNOPQRST"[:size])


def test_go_round_trips_in_random_games_and_names_an_occupied_point_illegal():
    notation = GoNotation()
    for env in random_games(lambda: go_v5.env(board_size=7), 3, 40):
        assert_round_trips(notation, env)
    env = go_v5.env(board_size=7)
    env.reset()
    env.step(notation.parse("D4", env, mask_of(env)))
    with pytest.raises(MoveError, match="'D4' is not legal now. Legal moves: A7, B7"):
        notation.parse("D4", env, mask_of(env))
    with pytest.raises(MoveError, match="'I4' is not a move"):
        notation.parse("I4", env, mask_of(env))
    assert notation.parse("PASS", env, mask_of(env)) == 49
    assert "Last move: D4 (black)" in notation.board(env)


# -- chess -------------------------------------------------------------------------------------


def check_chess_position(env, mask: np.ndarray) -> None:
    """Every legal move of the python-chess board, as UCI and as SAN, gives the action whose
    move PettingZoo plays, and every masked action is one of those moves."""
    notation = ChessNotation()
    board = env.unwrapped.board
    by_text = {notation.describe(a, env): int(a) for a in np.flatnonzero(mask)}
    assert set(by_text) == {move.uci() for move in board.legal_moves}
    for move in board.legal_moves:
        action = notation.parse(move.uci(), env, mask)
        assert action == by_text[move.uci()]
        black = int(board.turn == chess.BLACK)
        assert chess_utils.action_to_move(board, action, black) == move
        assert notation.parse(board.san(move), env, mask) == action


def test_chess_uci_round_trips_on_every_legal_move_of_random_positions():
    positions = 0
    for env in random_games(chess_v6.env, 6, 80, seed=1):
        check_chess_position(env, mask_of(env))
        positions += 1
    assert positions > 300


@pytest.mark.parametrize(
    "fen",
    [
        "8/P6k/8/8/8/8/6Kp/8 w - - 0 1",  # white promotes (and under-promotes)
        "8/P6k/8/8/8/8/6Kp/8 b - - 0 1",  # black promotes: the mirrored board
        "1n5k/P7/8/8/8/8/8/6K1 w - - 0 1",  # promotion by capture
        "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",  # castling, white
        "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",  # castling, black
        "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",  # en passant, white
        "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1",  # en passant, black
    ],
)
def test_chess_special_moves_round_trip_for_both_colours(fen):
    env = chess_v6.env()
    env.reset()
    env.unwrapped.board = chess.Board(fen)
    mask = np.zeros(env.action_space("player_0").n, dtype=bool)
    mask[chess_utils.legal_moves(env.unwrapped.board)] = True
    check_chess_position(env, mask)


def test_chess_reads_castling_as_king_takes_rook_and_a_bare_promotion_as_a_queen():
    env = chess_v6.env()
    env.reset()
    notation = ChessNotation()
    env.unwrapped.board = chess.Board("1n2k2r/P7/8/8/8/8/8/R3K2R w KQk - 0 1")
    mask = np.zeros(env.action_space("player_0").n, dtype=bool)
    mask[chess_utils.legal_moves(env.unwrapped.board)] = True
    assert notation.describe(notation.parse("e1h1", env, mask), env) == "e1g1"
    assert notation.describe(notation.parse("O-O-O", env, mask), env) == "e1c1"
    assert notation.describe(notation.parse("a7a8", env, mask), env) == "a7a8q"
    assert notation.describe(notation.parse("a7b8n", env, mask), env) == "a7b8n"


def test_chess_errors_tell_unreadable_from_illegal_and_list_the_moves():
    env = chess_v6.env()
    env.reset()
    notation = ChessNotation()
    with pytest.raises(MoveError, match=r"'e2e5' is not legal now\. Legal moves: a2a3, a2a4"):
        notation.parse("e2e5", env, mask_of(env))
    with pytest.raises(MoveError, match="'castle' is not a move; write one like 'e2e4'") as error:
        notation.parse("castle", env, mask_of(env))
    assert len(error.value.legal) == 20
    with pytest.raises(MoveError, match="'Nd4' is not legal now"):  # SAN, but no knight gets there
        notation.parse("Nd4", env, mask_of(env))
    env.step(notation.parse("e4", env, mask_of(env)))
    assert "Last move: e2e4 (white)" in notation.board(env)
    assert notation.board(env).splitlines()[4] == "4  . . . . P . . ."


# -- hold'em -------------------------------------------------------------------------------------


def test_holdem_names_follow_pettingzoos_action_tables():
    from rlcard.games.nolimitholdem.round import Action

    limit = texas_holdem_v4.env()
    limit.reset(seed=0)
    assert list(LimitHoldemNotation.names) == limit.unwrapped.env.actions
    assert [a.value for a in Action] == list(range(5))
    assert [a.name for a in Action] == [
        "FOLD",
        "CHECK_CALL",
        "RAISE_HALF_POT",
        "RAISE_POT",
        "ALL_IN",
    ]


@pytest.mark.parametrize(
    "make, notation",
    [
        (texas_holdem_v4.env, LimitHoldemNotation()),
        (texas_holdem_no_limit_v6.env, NoLimitHoldemNotation()),
    ],
)
def test_holdem_round_trips_and_hides_the_other_hand(make, notation):
    for env in random_games(make, 20, 30):
        assert_round_trips(notation, env)
        viewer = env.agent_selection
        board = notation.board(env, viewer=viewer)
        assert board.count("hand:") == 1 and "Your hand:" in board
    assert notation.board(env).count("hand:") == 2


def test_no_limit_holdem_says_call_when_chips_are_owed_and_reads_either_word():
    env = texas_holdem_no_limit_v6.env()
    env.reset(seed=0)
    notation = NoLimitHoldemNotation()
    mask = mask_of(env)
    assert notation.describe(1, env) == "call"  # the small blind owes the big blind
    assert notation.parse("check", env, mask) == notation.parse("Call", env, mask) == 1
    assert notation.parse("All-In", env, mask) == 4


# -- any other game ----------------------------------------------------------------------------


def test_other_games_use_action_indices_and_every_notation_reads_hash_index():
    env = rps_v2.env()
    env.reset()
    notation = notation_for(env)
    assert isinstance(notation, IndexNotation)
    mask = np.array([True, False, True])
    assert notation.legal_moves(env, mask) == ["0", "2"]
    assert notation.parse(" 2 ", env, mask) == 2
    with pytest.raises(MoveError, match="'1' is not legal now. Legal moves: 0, 2."):
        notation.parse("1", env, mask)
    with pytest.raises(MoveError, match="'rock' is not a move"):
        notation.parse("rock", env, mask)
    ttt = tictactoe_v3.env()
    ttt.reset()
    assert TicTacToeNotation().parse("#8", ttt, mask_of(ttt)) == 8


# -- one notation everywhere a person reads or types a move ---------------------------------------


def test_a_typed_sequence_of_moves_is_read_in_the_notation_play_uses():
    assert parse_moves("5, 1", tictactoe_v3.env()) == (4, 0)  # centre, then top left
    assert parse_moves("4 1 4", connect_four_v3.env()) == (3, 0, 3)  # columns 1-7
    assert parse_moves("", tictactoe_v3.env()) == parse_moves(None, tictactoe_v3.env()) == ()
    with pytest.raises(MoveError, match=r"Move 2 of '5,5': '5' is not legal now"):
        parse_moves("5,5", tictactoe_v3.env())
    with pytest.raises(MoveError, match=r"Move 1 of '0': '0' is not a move"):
        parse_moves("0", tictactoe_v3.env())  # PettingZoo's index 0 is cell 1 here


def test_describe_moves_is_the_inverse_of_parse_moves():
    actions = parse_moves("5 1 9 3", tictactoe_v3.env())
    assert describe_moves(actions, tictactoe_v3.env()) == ["5", "1", "9", "3"]
    assert describe_moves([3, 0], connect_four_v3.env()) == ["4", "1"]


def test_a_replay_names_its_moves_as_play_does_and_watch_reads_its_opening_so():
    from sp_wrappers import RandomPolicy
    from sp_wrappers.evaluation.replay import parse_opening, play_replay

    opening = parse_opening("9,1", tictactoe_v3.env)  # bottom right, top left
    assert opening == (8, 0)
    replay = play_replay(
        tictactoe_v3.env, RandomPolicy(), RandomPolicy(), opening=opening, record_frames=False
    )
    assert [m.move for m in replay.moves[:2]] == ["9", "1"]
    assert replay.moves[0].text.endswith(": 9")
    assert replay.text().splitlines()[1] == "forced opening: 9 1"


def test_baselines_have_one_name_and_the_older_spelling_is_an_alias():
    import gymnasium as gym

    import sp_wrappers  # noqa: F401 - registers the ids
    from sp_wrappers.games.baselines import bot_name
    from sp_wrappers.games.registry import BOTS, make_bot

    assert [n for n in BOTS if n.startswith("alphabeta")] == [
        "alphabeta-d1",
        "alphabeta-d2",
        "alphabeta-d4",
    ]
    assert make_bot("alphabeta1").policy_id == make_bot("alphabeta-d1").policy_id
    assert bot_name("alphabeta4") == "alphabeta-d4"
    env = gym.make("sp_wrappers/ConnectFour-v0", opponent="alphabeta2")
    assert env.unwrapped.slots.source.policy.policy_id == "alphabeta-d2"
    env.close()
