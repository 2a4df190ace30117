"""The 0.1 path of :mod:`sp_wrappers.ratings.archive_ratings` (deprecated: it goes away in 0.3)."""

from .core.deprecation import warn_moved
from .ratings.archive_ratings import *  # noqa: F403
from .ratings.archive_ratings import __all__  # noqa: F401

warn_moved(__name__, "sp_wrappers.ratings.archive_ratings")
