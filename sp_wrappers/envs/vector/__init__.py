"""The batched self-play envs: SB3 ``VecEnv`` s over many copies of a game.

Copies of a game played in this process or in worker processes, their opponents' actions
batched (with a numpy fast path for small SB3 policies), a learner team's seating, and the factory
that picks between a learner seat and a learner team.

It may import ``sp_wrappers.envs``, ``opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.lazy import lazy_exports
from .factory import make_selfplay_vec_env
from .vec_env import SelfPlayVecEnv

if TYPE_CHECKING:  # pragma: no cover
    from .team_vec_env import TeamVecEnv

__all__ = [
    "SelfPlayVecEnv",
    "TeamVecEnv",
    "make_selfplay_vec_env",
]

# A learner team's env loads on first use: an env without teams never imports team code.
__getattr__, __dir__ = lazy_exports(__name__, {"TeamVecEnv": ".team_vec_env"})
