"""Winning lines: the cells that won a game of tic-tac-toe or Connect Four, read from its board.

:func:`board_cells` reads the board of a PettingZoo game as it is (``env.unwrapped``'s own
array: tic-tac-toe's ``board.squares``, Connect Four's ``board``; 0 empty, 1 and 2 the first and
second seat's marks); :func:`winning_lines` finds on such a board every line of the winner (three
in a row in tic-tac-toe, four in Connect Four, a run of five as its two lines of four). The cells
are PettingZoo's board indices: tic-tac-toe's cell ``i`` is column ``i // 3``, row ``i % 3``;
Connect Four's cell ``i`` is row ``i // 7`` from the top, column ``i % 7``. Replay videos draw
the lines over the final frame (:mod:`sp_wrappers.evaluation.replay_video`).

>>> winning_lines("tictactoe_v3", [1, 2, 0, 2, 1, 0, 0, 0, 1])  # X down the diagonal
[(0, 4, 8)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["LINE_GAMES", "board_cells", "winning_lines"]


def _tictactoe_lines() -> list[tuple[int, ...]]:
    columns = [(3 * c, 3 * c + 1, 3 * c + 2) for c in range(3)]
    rows = [(r, r + 3, r + 6) for r in range(3)]
    return [*columns, *rows, (0, 4, 8), (2, 4, 6)]


def _connect_four_lines() -> list[tuple[int, ...]]:
    lines = []
    for row in range(6):
        for column in range(7):
            for d_row, d_column in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(row + k * d_row, column + k * d_column) for k in range(4)]
                if all(0 <= r < 6 and 0 <= c < 7 for r, c in cells):
                    lines.append(tuple(7 * r + c for r, c in cells))
    return lines


#: The games with winning lines, by PettingZoo's ``metadata["name"]``: every line of cells that
#: wins, as board indices in order along the line.
LINE_GAMES: dict[str, list[tuple[int, ...]]] = {
    "tictactoe_v3": _tictactoe_lines(),
    "connect_four_v3": _connect_four_lines(),
}


def board_cells(env: Any) -> tuple[int, ...] | None:
    """The board of ``env`` (a PettingZoo game of :data:`LINE_GAMES`) as one int per cell, in
    PettingZoo's cell order; ``None`` for another game.

    >>> from pettingzoo.classic import connect_four_v3
    >>> env = connect_four_v3.env()
    >>> env.reset()
    >>> env.step(3)
    >>> board_cells(env)[35:]  # the bottom row: the first seat's disc in column 4
    (0, 0, 0, 1, 0, 0, 0)
    """
    name = (getattr(env, "metadata", None) or {}).get("name")
    raw = getattr(env, "unwrapped", env)
    if name == "tictactoe_v3":
        return tuple(int(v) for v in raw.board.squares)
    if name == "connect_four_v3":
        return tuple(int(v) for v in raw.board)
    return None


def winning_lines(game: str, board: Sequence[int] | None) -> list[tuple[int, ...]]:
    """Every line of ``board`` held by one seat (the winner's: a game ends at its first), in
    :data:`LINE_GAMES` order; empty for a drawn or unfinished game or another game.

    :param game: PettingZoo's ``metadata["name"]`` (``"connect_four_v3"``).
    :param board: :func:`board_cells` of the final position.

    >>> bottom_five = [0] * 35 + [1, 1, 1, 1, 1, 2, 0]  # a run of five is two lines of four
    >>> winning_lines("connect_four_v3", bottom_five)
    [(35, 36, 37, 38), (36, 37, 38, 39)]
    >>> winning_lines("connect_four_v3", [0] * 42), winning_lines("go_v5", [1, 1, 1])
    ([], [])
    """
    if board is None or game not in LINE_GAMES:
        return []
    return [
        line
        for line in LINE_GAMES[game]
        if board[line[0]] != 0 and all(board[cell] == board[line[0]] for cell in line)
    ]
