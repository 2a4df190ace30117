"""The 0.1 path of :mod:`sp_wrappers.training.callbacks` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .training.callbacks import *  # noqa: F403
from .training.callbacks import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.training.callbacks")
