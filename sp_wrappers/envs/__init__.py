"""The envs layer: a PettingZoo game seen as a single-agent Gymnasium or SB3 env.

A self-play env plays one seat of a game against opponents from the opponents layer; around it
live per-copy game configurations, reward shaping, checks on wrappers, the Gymnasium ids that
``import sp_wrappers`` registers, and the batched envs (``sp_wrappers.envs.vector``).

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from ..core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".selfplay_env": ["SelfPlayEnv"],
        ".shaping": ["DrawReward"],
        ".registration": ["ENV_IDS", "register_envs"],
        ".errors": ["ObservationWrapperError"],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
