"""The notation interface: :class:`Notation` (how a person reads and writes one game's moves) and
its fallback :class:`IndexNotation` (action indices). The games' own notations live in
:mod:`sp_wrappers.games.notation` (board games) and :mod:`sp_wrappers.games.card_notation` (card
games, whose hands are shown to their owner only); :func:`~sp_wrappers.games.notation.notation_for`
picks one for a game.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import MoveError

__all__ = ["Notation", "IndexNotation", "legal_actions"]


def legal_actions(mask: Any) -> list[int]:
    """The action indices ``mask`` allows."""
    return [int(a) for a in np.flatnonzero(np.asarray(mask, dtype=bool))]


class Notation:
    """How a person reads and writes one game's moves; this base class is the fallback by index.

    Subclasses override :meth:`read` (text -> action index, legal or not, ``None`` when it is
    not a move at all), :meth:`describe` and :meth:`board`. ``example`` shows a move's form in
    error messages.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> env = tictactoe_v3.env()
    >>> env.reset()
    >>> mask = env.observe("player_1")["action_mask"]
    >>> IndexNotation().parse("#4", env, mask), IndexNotation().legal_moves(env, mask)[:3]
    (4, ['0', '1', '2'])
    """

    example = "3"

    def board(self, env: Any, viewer: str | None = None) -> str:
        """The position as text (empty when the game has no text board). Hidden information
        is shown only to ``viewer`` (an agent name); ``None`` shows everything."""
        return ""

    def describe(self, action: int, env: Any) -> str:
        """``action`` in the game's notation, for the position ``env`` is in now."""
        return str(int(action))

    def read(self, text: str, env: Any) -> int | None:
        """The action index ``text`` names, legal or not (a negative number when the move has no
        index in this position); ``None`` when it names no move."""
        return int(text) if text.isdigit() else None

    def seat_label(self, env: Any, seat: str) -> str:
        """What the game calls ``seat`` (``"X"``, ``"white"``); empty when nothing special."""
        return ""

    def legal_moves(self, env: Any, mask: Any) -> list[str]:
        """The legal moves under ``mask`` (the seat's action mask), in the game's notation."""
        return [self.describe(a, env) for a in self._ordered(legal_actions(mask), env)]

    def _ordered(self, actions: list[int], env: Any) -> list[int]:
        return actions

    def parse(self, text: str, env: Any, mask: Any) -> int:
        """The action index of ``text``; raises :class:`MoveError` when it is unreadable or
        illegal under ``mask``."""
        legal = legal_actions(mask)
        cleaned = text.strip()
        named = {self.describe(a, env).lower(): a for a in legal}
        if cleaned.lower() in named:
            return named[cleaned.lower()]
        if cleaned.startswith("#") and cleaned[1:].isdigit():
            action: int | None = int(cleaned[1:])
        else:
            action = self.read(cleaned, env)
        moves = self.legal_moves(env, mask)
        if action is None:
            raise MoveError(
                text, f"{cleaned!r} is not a move; write one like {self.example!r}.", moves
            )
        if action not in legal:
            raise MoveError(text, f"{cleaned!r} is not legal now.", moves)
        return action

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class IndexNotation(Notation):
    """Any game with a discrete action mask: a move is its action index."""
