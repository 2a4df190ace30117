"""The 0.1 path of :mod:`sp_wrappers.cli.team_train` (deprecated: it goes away in 0.3)."""

from .cli.team_train import *  # noqa: F403
from .cli.team_train import __all__  # noqa: F401
from .core.deprecation import warn_moved

warn_moved(__name__, "sp_wrappers.cli.team_train")
