"""The 0.1 path of :mod:`sp_wrappers.runs.single` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .runs.single import *  # noqa: F403
from .runs.single import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.runs.single")
