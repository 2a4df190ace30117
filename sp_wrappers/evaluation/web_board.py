"""The position of a game as the web page draws it: :func:`board_view`.

Tic-tac-toe, Connect Four and Go are grids of cells (each with the move a click plays, or why it
is not legal, and the policy's probability of it), chess a board of squares; any other game its
text board in its notation (:mod:`sp_wrappers.games.notation`: each hand shown to its owner only)
or else its own ``rgb_array`` frame as a PNG (zlib and struct: no imaging package needed). A frame
draws every hand, so in a game with hidden information it is drawn only for no viewer (the end).
:mod:`sp_wrappers.evaluation.web_play` serves it.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import numpy as np

__all__ = ["board_view"]

_CHESS_PIECES = dict(zip("KQRBNPkqrbnp", "♔♕♖♗♘♙♚♛♜♝♞♟", strict=True))


def _png(frame: np.ndarray) -> str:
    """An RGB frame as a ``data:image/png`` URI (zlib and struct: no imaging package needed)."""
    frame = np.ascontiguousarray(frame[:, :, :3], dtype=np.uint8)
    height, width = frame.shape[:2]
    raw = b"".join(b"\0" + frame[row].tobytes() for row in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
    return "data:image/png;base64," + base64.b64encode(png + chunk(b"IEND", b"")).decode()


def board_view(
    env: Any,
    notation: Any,
    mask: np.ndarray | None,
    probabilities: dict[int, float] | None = None,
    viewer: str | None = None,
    hidden: bool = False,
) -> dict[str, Any]:
    """The position of ``env`` as the page draws it, hidden information shown only to
    ``viewer`` (an agent; ``None`` shows everything). ``hidden``: the players of ``env`` see
    different things, so its ``rgb_array`` frame (which draws every hand) is only drawn for no
    ``viewer``; the view then says so in ``note``.

    ``kind`` is ``"grid"`` (tic-tac-toe, Connect Four, Go: ``cells`` row by row, each with its
    ``text``, the ``move`` a click plays when it is legal under ``mask``, else ``why`` not, and
    the move's probability ``p``), ``"chess"`` (``cells`` with pieces and square names; a move is
    two clicks) or ``"frame"``: the game's board as ``text`` in its notation (hold'em: the
    ``viewer``'s hand only), else its ``rgb_array`` frame as a PNG ``image`` (or none).

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers.games.notation import notation_for
    >>> env = tictactoe_v3.env()
    >>> env.reset()
    >>> env.step(4)
    >>> view = board_view(env, notation_for(env), env.observe("player_2")["action_mask"])
    >>> view["cells"][1][1], view["cells"][0][0]["move"]
    ({'text': 'X', 'move': None, 'why': 'Cell 5 is taken.', 'p': None}, '1')
    """
    name = str((getattr(env, "metadata", None) or {}).get("name"))
    legal = set() if mask is None else {int(a) for a in np.flatnonzero(mask)}
    probabilities = probabilities or {}
    raw = env.unwrapped

    def cell(text: str, action: int | None, why: str) -> dict[str, Any]:
        playable = action is not None and action in legal
        return {
            "text": text,
            "move": notation.describe(action, env) if playable else None,
            "why": None if playable else why,
            "p": probabilities.get(action) if action is not None else None,
        }

    if name == "tictactoe_v3":
        squares = raw.board.squares
        rows = [
            [
                cell(
                    " XO"[squares[3 * c + r]].strip(), 3 * c + r, f"Cell {3 * r + c + 1} is taken."
                )
                for c in range(3)
            ]
            for r in range(3)
        ]
        return {"kind": "grid", "game": name, "cells": rows, "columns": None}
    if name == "connect_four_v3":
        board = raw.board
        rows = []
        for r in range(6):
            row = []
            for c in range(7):
                landing = r == 5 or board[7 * (r + 1) + c] != 0
                empty = board[7 * r + c] == 0
                action = c if c in legal else None
                entry = cell(".XO"[board[7 * r + c]].strip("."), action, f"Column {c + 1} is full.")
                if not (empty and landing):
                    entry["p"] = None  # the column's probability sits where the piece lands
                row.append(entry)
            rows.append(row)
        return {"kind": "grid", "game": name, "cells": rows, "columns": list("1234567")}
    if name == "go_v5":
        from ..games.notation import GO_COLUMNS

        size, position = int(raw._N), raw._go
        rows = []
        for r in range(size):
            row = []
            for c in range(size):
                stone = {1: "X", -1: "O"}.get(int(position.board[r][c]), "")
                point = f"{GO_COLUMNS[c]}{size - r}"
                why = (
                    f"{point} is taken." if stone else f"{point} is not legal now (suicide or ko)."
                )
                row.append(cell(stone, r * size + c, why))
            rows.append(row)
        return {"kind": "grid", "game": name, "cells": rows, "columns": list(GO_COLUMNS[:size])}
    if name == "chess_v6":
        board = raw.board
        rows = []
        for rank in range(7, -1, -1):
            row = []
            for file in range(8):
                piece = board.piece_at(8 * rank + file)
                symbol = piece.symbol() if piece else ""
                square = f"{'abcdefgh'[file]}{rank + 1}"
                row.append({"text": _CHESS_PIECES.get(symbol, ""), "square": square})
            rows.append(row)
        return {"kind": "chess", "game": name, "cells": rows, "columns": list("abcdefgh")}
    text, frame, note = notation.board(env, viewer=viewer), None, ""
    rgb = "rgb_array" in (getattr(env, "render_mode", None), getattr(raw, "render_mode", None))
    if not text and rgb:  # a frame shows everything: only for games without a text board
        if hidden and viewer is not None:
            note = "This game's picture shows every hand, so it is shown when the game is over."
        else:
            rendered = env.render()
            if isinstance(rendered, np.ndarray) and rendered.ndim == 3:
                frame = _png(rendered)
    return {"kind": "frame", "game": name, "image": frame, "text": text, "note": note}
