"""The batched self-play envs: SB3 ``VecEnv`` s over many copies of a game.

Copies of a game played in this process or in worker processes, their opponents' actions
batched (with a numpy fast path for small SB3 policies), a learner team's env, and the factory
that picks between them.

It may import ``sp_wrappers.envs``, ``opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from ...core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".vec_env": ["SelfPlayVecEnv"],
        ".team_vec_env": ["TeamVecEnv"],
        ".factory": ["make_selfplay_vec_env"],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
