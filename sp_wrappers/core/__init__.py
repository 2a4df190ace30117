"""The core layer: what every other layer builds on.

The policy protocol and its ready-made policies, how a PettingZoo game's seats are driven and
scored, teams of agents, the root of the package's errors, and small helpers (JSON files, lazy
public faces). It imports nothing else of sp_wrappers.
"""

from __future__ import annotations

from .exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".errors": ["SpWrappersError", "IllegalActionError"],
        ".policies": ["Policy", "RandomPolicy", "CallablePolicy", "SB3Policy"],
        ".teams": ["TeamLayout", "team_outcome"],
        ".networks": ["BoardExtractor"],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
