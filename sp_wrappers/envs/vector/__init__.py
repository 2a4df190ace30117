"""The batched self-play envs: SB3 ``VecEnv`` s over many copies of a game.

This layer holds :class:`SelfPlayVecEnv` (``vec_env``), its per-copy state (``env_copy``), the
games played in this process or in worker processes (``game_workers``), the numpy fast path for
small SB3 policies (``fast_path``), a learner team's env and seat driver (``team_vec_env``,
``team_driver``) and the factory that picks between them (``factory``).

It may import ``sp_wrappers.envs``, ``opponents``, ``archive``, ``games`` and ``core``.
"""

from .factory import make_selfplay_vec_env
from .team_vec_env import TeamVecEnv
from .vec_env import SelfPlayVecEnv

__all__ = ["SelfPlayVecEnv", "TeamVecEnv", "make_selfplay_vec_env"]
