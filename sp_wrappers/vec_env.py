"""The 0.1 path of :mod:`sp_wrappers.envs.vector.vec_env` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .envs.vector.vec_env import *  # noqa: F403
from .envs.vector.vec_env import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.envs.vector.vec_env")
