"""The opponents layer: who the learner plays, and when that changes.

The opponent slots of an env copy with their swap schedules, the sampler that draws opponents
from an archive's snapshots (window, latest ratio, PFSP), and the opponents of team games.

It may import ``sp_wrappers.archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from .mixture import MixturePolicy
from .sampler import OpponentSampler

__all__ = [
    "OpponentSampler",
    "MixturePolicy",
]
