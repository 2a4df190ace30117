"""The 0.1 path of :mod:`sp_wrappers.training.k_opponents` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .training.k_opponents import *  # noqa: F403
from .training.k_opponents import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.training.k_opponents")
