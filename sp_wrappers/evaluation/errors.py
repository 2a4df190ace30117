"""The evaluation layer's errors: a game between a person and a policy that cannot start as asked.

Each derives from :class:`~sp_wrappers.core.errors.SpWrappersError` and keeps its built-in base.

>>> from sp_wrappers.evaluation.errors import PlayError, UnplayableGameError
>>> issubclass(UnplayableGameError, PlayError) and issubclass(PlayError, ValueError)
True
"""

from __future__ import annotations

from ..core.errors import SpWrappersError

__all__ = ["PlayError", "UnplayableGameError", "LookAheadError"]


class PlayError(SpWrappersError, ValueError):
    """A game between a person and a policy that cannot start as asked (no such seat, a
    policy trained on another game); the message says what to pass instead."""


class UnplayableGameError(PlayError):
    """A game that a person cannot play move by move: not turn-based, or without action
    masks."""


class LookAheadError(SpWrappersError, TypeError):
    """A game the tactics check cannot look one move ahead in: its state does not copy, or its
    games do not replay from their seeds; the message names the part and the fix."""
