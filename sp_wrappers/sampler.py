"""The 0.1 path of :mod:`sp_wrappers.opponents.sampler` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .opponents.sampler import *  # noqa: F403
from .opponents.sampler import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.opponents.sampler")
