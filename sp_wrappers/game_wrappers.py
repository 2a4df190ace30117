"""The 0.1 path of :mod:`sp_wrappers.games.wrappers` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .games.wrappers import *  # noqa: F403
from .games.wrappers import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.games.wrappers")
