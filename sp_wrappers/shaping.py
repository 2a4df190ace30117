"""The 0.1 path of :mod:`sp_wrappers.envs.shaping` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .envs.shaping import *  # noqa: F403
from .envs.shaping import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.envs.shaping")
