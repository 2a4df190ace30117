"""The 0.1 path of :mod:`sp_wrappers.evaluation.plots` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .evaluation.plots import *  # noqa: F403
from .evaluation.plots import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.evaluation.plots")
