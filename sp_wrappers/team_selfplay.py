"""The 0.1 path of :mod:`sp_wrappers.training.team_selfplay` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .training.team_selfplay import *  # noqa: F403
from .training.team_selfplay import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.training.team_selfplay")
