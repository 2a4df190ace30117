"""The 0.1 path of :mod:`sp_wrappers.runs.rundir` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .runs.rundir import *  # noqa: F403
from .runs.rundir import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.runs.rundir")
