"""The batched self-play envs: SB3 ``VecEnv`` s over many copies of a game.

Opponents of every copy are answered in batches, one forward pass per policy; the games run in
this process or in worker processes. A learner team plays one slot per agent, and a factory
picks the env for a learner or a team.

It may import ``sp_wrappers.envs``, ``opponents``, ``archive``, ``games`` and ``core``.
"""

from .factory import make_selfplay_vec_env
from .team_vec_env import TeamVecEnv
from .vec_env import SelfPlayVecEnv

__all__ = ["SelfPlayVecEnv", "TeamVecEnv", "make_selfplay_vec_env"]
