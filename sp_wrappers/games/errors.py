"""The games layer's errors: a game that cannot be found or built, a move that cannot be read.

Each derives from :class:`~sp_wrappers.core.errors.SpWrappersError` and keeps its built-in base.

>>> from sp_wrappers.games.errors import UnknownGameError
>>> isinstance(UnknownGameError("no game 'chess_v9'"), ValueError)
True
"""

from __future__ import annotations

from ..core.errors import DependencyNotInstalled, SpWrappersError

__all__ = ["UnknownGameError", "UnknownBotError", "MissingGameError", "MoveError"]


class UnknownGameError(SpWrappersError, ValueError):
    """A game name that is neither registered nor an importable ``module:function``."""


class UnknownBotError(SpWrappersError, ValueError):
    """A reference player name that is not registered, or one that does not play the game."""


class MissingGameError(DependencyNotInstalled):
    """A registered game whose package is not installed; the message names the extra to
    install (``pip install "sp-wrappers[mpe]"``)."""


class MoveError(SpWrappersError, ValueError):
    """A move that cannot be read, or that is not legal now; the message names the legal moves.

    :param text: what was typed.
    :param problem: what is wrong with it, one sentence.
    :param legal: the legal moves in the game's notation.
    """

    def __init__(self, text: str, problem: str, legal: list[str]) -> None:
        self.text, self.problem, self.legal = text, problem, list(legal)
        super().__init__(f"{problem} Legal moves: {', '.join(self.legal) or '(none)'}.")
