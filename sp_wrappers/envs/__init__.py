"""The envs layer: a PettingZoo game seen as a single-agent Gymnasium or SB3 env.

A self-play env plays one seat of a game against opponents from the opponents layer; around it
live per-copy game configurations, reward shaping, checks on wrappers, the Gymnasium ids that
``import sp_wrappers`` registers, and the batched envs (``sp_wrappers.envs.vector``).

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports
from .errors import ObservationWrapperError
from .registration import ENV_IDS, register_envs

if TYPE_CHECKING:  # pragma: no cover
    from .selfplay_env import SelfPlayEnv
    from .shaping import DrawReward

__all__ = [
    "SelfPlayEnv",
    "DrawReward",
    "ENV_IDS",
    "register_envs",
    "ObservationWrapperError",
]

# DrawReward is an SB3 VecEnv wrapper, which imports torch: it loads on first use, so that
# ``import sp_wrappers`` (which registers the Gymnasium ids through this package) imports
# neither torch nor PettingZoo.
__getattr__, __dir__ = lazy_exports(
    __name__, {"SelfPlayEnv": ".selfplay_env", "DrawReward": ".shaping"}
)
