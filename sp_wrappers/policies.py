"""The 0.1 path of :mod:`sp_wrappers.core.policies` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .core.policies import *  # noqa: F403
from .core.policies import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.core.policies")
