"""The core layer: what every other layer builds on.

The policy protocol and its ready-made policies, how a PettingZoo game's seats are driven and
scored, teams of agents, the root of the package's errors, and small helpers (JSON files, the
warning of moved module paths). It imports nothing else of sp_wrappers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import IllegalActionError, SpWrappersError
from .policies import CallablePolicy, Policy, RandomPolicy, SB3Policy
from .teams import TeamLayout, team_outcome

if TYPE_CHECKING:  # pragma: no cover
    from .networks import BoardExtractor

__all__ = [
    "SpWrappersError",
    "IllegalActionError",
    "Policy",
    "RandomPolicy",
    "CallablePolicy",
    "SB3Policy",
    "TeamLayout",
    "team_outcome",
    "BoardExtractor",
]


def __getattr__(name: str) -> Any:
    # BoardExtractor is a torch module: it is imported on first use, so that importing
    # any part of sp_wrappers stays free of torch (``import sp_wrappers`` registers the Gymnasium
    # ids through this package).
    if name == "BoardExtractor":
        from .networks import BoardExtractor

        return BoardExtractor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
