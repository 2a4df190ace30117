"""The envs layer: a PettingZoo game seen as a single-agent Gymnasium or SB3 env.

A self-play env plays one seat of a game against opponents from the opponents layer; around it
live per-copy game configurations, reward shaping, checks on wrappers, the Gymnasium ids that
``import sp_wrappers`` registers, and the batched envs (``sp_wrappers.envs.vector``).

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import ObservationWrapperError
from .registration import ENV_IDS, register_envs
from .selfplay_env import SelfPlayEnv

if TYPE_CHECKING:  # pragma: no cover
    from .shaping import DrawReward

__all__ = [
    "SelfPlayEnv",
    "DrawReward",
    "ENV_IDS",
    "register_envs",
    "ObservationWrapperError",
]


def __getattr__(name: str) -> Any:
    # DrawReward is an SB3 VecEnv wrapper, which imports torch: it is imported on first
    # use, so that ``import sp_wrappers`` (which registers the Gymnasium ids through this package)
    # stays free of torch.
    if name == "DrawReward":
        from .shaping import DrawReward

        return DrawReward
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
