"""The core layer: what every other layer builds on.

The policy protocol and its ready-made policies, how a PettingZoo game's seats are driven and
scored, teams of agents, the root of the package's errors, and small helpers (JSON files, the
warning of moved module paths). It imports nothing else of sp_wrappers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import IllegalActionError, SpWrappersError
from .lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from .networks import BoardExtractor
    from .policies import CallablePolicy, Policy, PolicyPlayer, RandomPolicy, SB3Policy
    from .teams import TeamLayout, team_outcome

__all__ = [
    "SpWrappersError",
    "IllegalActionError",
    "Policy",
    "RandomPolicy",
    "CallablePolicy",
    "SB3Policy",
    "PolicyPlayer",
    "TeamLayout",
    "team_outcome",
    "BoardExtractor",
]

# Names load on first use (BoardExtractor is a torch module; the policies import numpy and
# Gymnasium), so that ``import sp_wrappers`` (which registers the Gymnasium ids through this
# package) imports neither torch nor PettingZoo, and the command line starts quickly.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CallablePolicy": ".policies",
        "Policy": ".policies",
        "PolicyPlayer": ".policies",
        "RandomPolicy": ".policies",
        "SB3Policy": ".policies",
        "TeamLayout": ".teams",
        "team_outcome": ".teams",
        "BoardExtractor": ".networks",
    },
)
