"""The batched self-play envs: SB3 ``VecEnv`` s over many copies of a game.

Copies of a game played in this process or in worker processes, their opponents' actions
batched (with a numpy fast path for small SB3 policies), a learner team's env, and the factory
that picks between them.

It may import ``sp_wrappers.envs``, ``opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from .factory import make_selfplay_vec_env
from .team_vec_env import TeamVecEnv
from .vec_env import SelfPlayVecEnv

__all__ = [
    "SelfPlayVecEnv",
    "TeamVecEnv",
    "make_selfplay_vec_env",
]
