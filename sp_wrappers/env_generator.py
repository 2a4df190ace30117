"""The 0.1 path of :mod:`sp_wrappers.training.env_generator` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .training.env_generator import *  # noqa: F403
from .training.env_generator import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.training.env_generator")
