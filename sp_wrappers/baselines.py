"""The 0.1 path of :mod:`sp_wrappers.games.baselines` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .games.baselines import *  # noqa: F403
from .games.baselines import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.games.baselines")
