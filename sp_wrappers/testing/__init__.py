"""Test helpers for users' own games: does my PettingZoo game work with self-play?

:func:`check_selfplay` checks a game in one call, as ``pettingzoo.test.api_test`` does for the
PettingZoo API; :mod:`sp_wrappers.testing.games` holds small games with the edge cases real games
lack (simultaneous moves, masks only in ``info``, three seats, seats with different spaces, a
player eliminated early), the ones sp_wrappers' own tests play.

It may import every layer up to ``sp_wrappers.training``; nothing in the package imports it.
"""

from __future__ import annotations

from . import checks
from .checks import *  # noqa: F403 (the checks' public names are the package's)

__all__ = list(checks.__all__)
