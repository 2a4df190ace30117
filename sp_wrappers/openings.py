"""The 0.1 path of :mod:`sp_wrappers.evaluation.openings` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .evaluation.openings import *  # noqa: F403
from .evaluation.openings import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.evaluation.openings")
