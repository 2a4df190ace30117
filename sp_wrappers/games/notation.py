"""Move notation: a turn-based game's board as text and its moves in the game's own words.

The board games' notations live here, :func:`notation_for` picks one by PettingZoo's
``metadata["name"]``; the interface (:class:`Notation`) and the fallback :class:`IndexNotation`
(action indices and the action mask) come from :mod:`sp_wrappers.games.notation_base`, the card
games' notations from :mod:`sp_wrappers.games.card_notation`, and this module serves them all.

Every notation maps text to PettingZoo's own action index and back for the position the env is
in (``describe`` names a move *before* it is played). The board is read from the env itself
(``env.unwrapped.board``, chess's ``python-chess`` board, Go's ``_go`` position, hold'em's RLCard
game, OpenSpiel's state); chess moves go through PettingZoo's ``chess_utils``, which mirrors the
board for black.
Every notation also reads ``#N``, the raw action index.

This is the one way a person reads or types a move, everywhere: ``sp-wrappers play``, ``watch``
and its ``--opening``, replays and their text. Tic-tac-toe cells are numbered 1-9 row by row from
the top left (PettingZoo numbers its actions 0-8 down the columns); Connect Four columns 1-7 from
the left (PettingZoo: 0-6). :func:`parse_moves` and :func:`describe_moves` convert a sequence of
moves; the library's ``opening=`` arguments keep PettingZoo's action indices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .card_notation import (
    LeducHoldemNotation,
    LimitHoldemNotation,
    NoLimitHoldemNotation,
    OpenSpielNotation,
    is_openspiel_game,
)
from .errors import MoveError
from .notation_base import IndexNotation, Notation

__all__ = [
    "Notation",
    "MoveError",
    "IndexNotation",
    "TicTacToeNotation",
    "ConnectFourNotation",
    "GoNotation",
    "ChessNotation",
    "LimitHoldemNotation",
    "NoLimitHoldemNotation",
    "LeducHoldemNotation",
    "OpenSpielNotation",
    "NOTATIONS",
    "notation_for",
    "parse_moves",
    "describe_moves",
]


class TicTacToeNotation(Notation):
    """Tic-tac-toe (``tictactoe_v3``): cells 1-9 in reading order, top left first.

    PettingZoo numbers its actions down the columns (``0 3 6`` is the top row), so cell ``c``
    in reading order is action ``3 * column + row``.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> env = tictactoe_v3.env()
    >>> env.reset()
    >>> env.step(2)  # X in PettingZoo's cell 2: bottom left
    >>> print(TicTacToeNotation().board(env))
     1 | 2 | 3
    ---+---+---
     4 | 5 | 6
    ---+---+---
     X | 8 | 9
    >>> TicTacToeNotation().parse("3", env, env.observe("player_2")["action_mask"])
    6
    """

    example = "5"

    def board(self, env: Any, viewer: str | None = None) -> str:
        squares = env.unwrapped.board.squares
        rows = []
        for row in range(3):
            cells = [" XO"[squares[3 * col + row]] for col in range(3)]
            rows.append(
                " | ".join(c if c != " " else str(3 * row + k + 1) for k, c in enumerate(cells))
            )
        return "\n---+---+---\n".join(f" {r}" for r in rows)

    def describe(self, action: int, env: Any) -> str:
        column, row = divmod(int(action), 3)
        return str(3 * row + column + 1)

    def read(self, text: str, env: Any) -> int | None:
        if not (text.isdigit() and 1 <= int(text) <= 9):
            return None
        row, column = divmod(int(text) - 1, 3)
        return 3 * column + row

    def _ordered(self, actions: list[int], env: Any) -> list[int]:
        return sorted(actions, key=lambda a: int(self.describe(a, env)))

    def seat_label(self, env: Any, seat: str) -> str:
        return "XO"[env.unwrapped.possible_agents.index(seat)]


class ConnectFourNotation(Notation):
    """Connect Four (``connect_four_v3``): a move is a column number, 1 to 7 from the left.

    >>> from pettingzoo.classic import connect_four_v3
    >>> env = connect_four_v3.env()
    >>> env.reset()
    >>> env.step(3)
    >>> print(ConnectFourNotation().board(env).splitlines()[-2:])
    ['. . . X . . .', '1 2 3 4 5 6 7']
    """

    example = "4"

    def board(self, env: Any, viewer: str | None = None) -> str:
        cells = env.unwrapped.board
        rows = [" ".join(".XO"[cells[7 * r + c]] for c in range(7)) for r in range(6)]
        return "\n".join(rows + ["1 2 3 4 5 6 7"])

    def describe(self, action: int, env: Any) -> str:
        return str(int(action) + 1)

    def read(self, text: str, env: Any) -> int | None:
        return int(text) - 1 if text.isdigit() and 1 <= int(text) <= 7 else None

    def seat_label(self, env: Any, seat: str) -> str:
        return "XO"[env.unwrapped.possible_agents.index(seat)]


#: Go's column letters: GTP skips ``I``.
GO_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


class GoNotation(Notation):
    """Go (``go_v5``): GTP coordinates such as ``C3`` (column letter without ``I``, row counted
    from the bottom) and ``pass``; the board size comes from the env.

    >>> from pettingzoo.classic import go_v5
    >>> env = go_v5.env(board_size=5)
    >>> env.reset()
    >>> go = GoNotation()
    >>> go.parse("c3", env, env.observe("black_0")["action_mask"]), go.describe(25, env)
    (12, 'pass')
    """

    example = "D4"

    def board(self, env: Any, viewer: str | None = None) -> str:
        raw = env.unwrapped
        size, position = int(raw._N), raw._go
        letters = "   " + " ".join(GO_COLUMNS[:size])
        lines = [letters]
        for row in range(size):
            stones = " ".join({1: "X", -1: "O"}.get(int(v), ".") for v in position.board[row])
            lines.append(f"{size - row:>2} {stones} {size - row}")
        lines.append(letters)
        recent = getattr(position, "recent", ())
        if recent:
            move = recent[-1].move
            last = "pass" if move is None else self.describe(move[0] * size + move[1], env)
            colour = "black" if recent[-1].color == 1 else "white"
            lines.append(f"Last move: {last} ({colour})")
        lines.append(f"Captures: black {position.caps[0]}, white {position.caps[1]}")
        return "\n".join(lines)

    def describe(self, action: int, env: Any) -> str:
        size = int(env.unwrapped._N)
        if int(action) == size * size:
            return "pass"
        row, column = divmod(int(action), size)
        return f"{GO_COLUMNS[column]}{size - row}"

    def read(self, text: str, env: Any) -> int | None:
        size = int(env.unwrapped._N)
        word = text.upper()
        if word == "PASS":
            return size * size
        column = GO_COLUMNS.find(word[:1]) if word[:1].isalpha() else -1
        if not (0 <= column < size and word[1:].isdigit() and 1 <= int(word[1:]) <= size):
            return None
        return (size - int(word[1:])) * size + column

    def _ordered(self, actions: list[int], env: Any) -> list[int]:
        return sorted(actions)  # reading order, pass (the highest index) last

    def seat_label(self, env: Any, seat: str) -> str:
        return seat.split("_")[0]


class ChessNotation(Notation):
    """Chess (``chess_v6``): UCI moves such as ``e2e4`` or ``e7e8q`` (SAN such as ``Nf3`` is
    read too). Actions map to moves through PettingZoo's own ``chess_utils.action_to_move``,
    which mirrors the board when black moves.

    >>> from pettingzoo.classic import chess_v6
    >>> env = chess_v6.env()
    >>> env.reset()
    >>> chess = ChessNotation()
    >>> action = chess.parse("e2e4", env, env.observe("player_0")["action_mask"])
    >>> env.step(action)
    >>> chess.describe(chess.parse("Nf6", env, env.observe("player_1")["action_mask"]), env)
    'g8f6'
    """

    example = "e2e4"

    @staticmethod
    def _move(action: int, env: Any) -> Any:
        import chess
        from pettingzoo.classic.chess import chess_utils

        board = env.unwrapped.board
        return chess_utils.action_to_move(board, int(action), int(board.turn == chess.BLACK))

    def describe(self, action: int, env: Any) -> str:
        return self._move(action, env).uci()

    def _ordered(self, actions: list[int], env: Any) -> list[int]:
        return sorted(actions, key=lambda a: self.describe(a, env))

    def parse(self, text: str, env: Any, mask: Any) -> int:
        cleaned = text.strip()
        move = self._read_move(cleaned, env)
        if move is None and len(cleaned) == 4:  # e7e8 promotes to a queen
            move = self._read_move(cleaned + "q", env)
        if move is not None:
            action = self._action(move, env)
            if action is not None and np.asarray(mask, dtype=bool)[action]:
                return action
        return super().parse(text, env, mask)

    def _action(self, move: Any, env: Any) -> int | None:
        """PettingZoo's action index of a legal ``move`` (``chess_utils``' own table, the move
        mirrored for black), checked by mapping it back; ``None`` if the two disagree."""
        import chess
        from pettingzoo.classic.chess import chess_utils

        black = env.unwrapped.board.turn == chess.BLACK
        key = (chess_utils.mirror_move(move) if black else move).uci()
        action = chess_utils.moves_to_actions.get(key)
        if action is None or self.describe(action, env) != move.uci():
            return None
        return int(action)

    @staticmethod
    def _read_move(text: str, env: Any) -> Any:
        """A legal move from UCI (castling as king takes rook too) or SAN, else ``None``."""
        board = env.unwrapped.board
        for parse, form in ((board.parse_uci, text.lower()), (board.parse_san, text)):
            try:
                return parse(form)
            except ValueError:
                continue
        return None

    def read(self, text: str, env: Any) -> int | None:
        """``-1`` for a well-formed move that is not legal here (it has no action index)."""
        import chess

        try:
            chess.Move.from_uci(text.lower())
            return -1
        except ValueError:
            pass
        try:
            env.unwrapped.board.parse_san(text)
        except chess.IllegalMoveError:
            return -1
        except ValueError:
            return None
        return -1

    def board(self, env: Any, viewer: str | None = None) -> str:
        board = env.unwrapped.board
        lines = []
        for rank in range(7, -1, -1):
            pieces = []
            for file in range(8):
                piece = board.piece_at(8 * rank + file)
                pieces.append(piece.symbol() if piece else ".")
            lines.append(f"{rank + 1}  {' '.join(pieces)}")
        lines.append("   a b c d e f g h")
        if board.move_stack:
            mover = "black" if board.turn else "white"  # the side that is not to move now
            lines.append(f"Last move: {board.peek().uci()} ({mover})")
        if board.is_check():
            lines.append("Check.")
        return "\n".join(lines)

    def seat_label(self, env: Any, seat: str) -> str:
        return ("white", "black")[env.unwrapped.possible_agents.index(seat)]


#: PettingZoo's ``metadata["name"]`` -> its notation; other games get :class:`IndexNotation`.
NOTATIONS: dict[str, type[Notation]] = {
    "tictactoe_v3": TicTacToeNotation,
    "connect_four_v3": ConnectFourNotation,
    "go_v5": GoNotation,
    "chess_v6": ChessNotation,
    "texas_holdem_v4": LimitHoldemNotation,
    "texas_holdem_no_limit_v6": NoLimitHoldemNotation,
    "leduc_holdem_v4": LeducHoldemNotation,
}


def notation_for(env: Any) -> Notation:
    """The notation of ``env`` (a PettingZoo env, by its ``metadata["name"]``; an OpenSpiel game
    through Shimmy's adapter gets :class:`OpenSpielNotation`), or :class:`IndexNotation` for a
    game without one.

    >>> from pettingzoo.classic import connect_four_v3, rps_v2
    >>> notation_for(connect_four_v3.env()).describe(0, None), notation_for(rps_v2.env())
    ('1', IndexNotation())
    """
    if is_openspiel_game(env):
        return OpenSpielNotation()
    name = (getattr(env, "metadata", None) or {}).get("name")
    return NOTATIONS.get(str(name), IndexNotation)()


def _mask(env: Any, agent: str) -> Any:
    """``agent``'s legal actions now: the action mask of its observation or info, else all."""
    observation = env.observe(agent)
    if isinstance(observation, dict) and "action_mask" in observation:
        return observation["action_mask"]
    info = (getattr(env, "infos", None) or {}).get(agent) or {}
    if "action_mask" in info:
        return info["action_mask"]
    return np.ones(env.action_space(agent).n, dtype=bool)


def parse_moves(text: str | None, env: Any) -> tuple[int, ...]:
    """Moves typed in the game's notation (``"5,1"`` or ``"5 1"``) as PettingZoo action indices.

    The moves are played on ``env`` (a turn-based PettingZoo AEC game, reset here), so each is
    read in its own position and checked legal for the seat to move.

    :param text: the moves, both players', separated by commas or spaces; ``None`` or empty: none.
    :param env: a fresh AEC env of the game (it is reset and stepped).
    :raises MoveError: a move that cannot be read or is not legal then; the message names the
        move's number and the legal moves.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> parse_moves("5, 1", tictactoe_v3.env())  # the centre, then the top left
    (4, 0)
    """
    words = (text or "").replace(",", " ").split()
    if not words:
        return ()
    notation = notation_for(env)
    env.reset(seed=0)
    actions: list[int] = []
    for number, word in enumerate(words, start=1):
        agent = env.agent_selection
        try:
            action = notation.parse(word, env, _mask(env, agent))
        except MoveError as error:
            raise MoveError(
                word, f"Move {number} of {text!r}: {error.problem}", error.legal
            ) from None
        actions.append(action)
        env.step(action)
        if all(env.terminations.get(a) or env.truncations.get(a) for a in env.agents):
            if number < len(words):
                raise MoveError(word, f"The game is over after move {number} of {text!r}.", [])
    return tuple(actions)


def describe_moves(actions: Any, env: Any) -> list[str]:
    """PettingZoo action indices as the moves a person reads, each in its own position.

    :param actions: the moves, both players', from the start.
    :param env: a fresh AEC env of the game (it is reset and stepped).

    >>> from pettingzoo.classic import connect_four_v3
    >>> describe_moves([3, 0], connect_four_v3.env())
    ['4', '1']
    """
    notation = notation_for(env)
    env.reset(seed=0)
    moves = []
    for action in actions:
        moves.append(notation.describe(int(action), env))
        env.step(int(action))
    return moves
