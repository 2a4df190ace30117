"""sp_wrappers: self-play training for Stable-Baselines3 learners on any PettingZoo game.

Wrap a game, build the callback, call ``model.learn``::

    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO
    from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayEnv, SnapshotArchive

    archive = SnapshotArchive("runs/ttt/archive")
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random", opponent=OpponentSampler(archive))
    MaskablePPO("MlpPolicy", env).learn(100_000, callback=SelfPlayCallback(archive))

Or, without a script, from a Gymnasium id that ``import sp_wrappers`` registers (one per game of
``sp_wrappers.games.registry.GAMES``)::

    import gymnasium as gym
    env = gym.make("sp_wrappers/ConnectFour-v0", archive="runs/c4/archive", latest_ratio=0.5)

The package's public names are those of its layers, each declared once in its subpackage's
``__all__`` (``sp_wrappers.envs``, ``sp_wrappers.training``, ...), and loaded on first use: ``import
sp_wrappers`` stays cheap (it imports Gymnasium to register the ids, never torch) and optional
extras (Ray, matplotlib, openskill) are only imported by the code that needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__
from .core.lazy import lazy_exports
from .envs.registration import register_envs

#: The subpackages whose ``__all__`` make the package's public names: those that import without
#: torch first, so that looking a name up in them never imports the others.
FACES = (
    "core",
    "archive",
    "games",
    "opponents",
    "envs",
    "ratings",
    "evaluation",
    "envs.vector",
    "training",
    "league",
    "runs",
)

if TYPE_CHECKING:  # pragma: no cover - type checkers read the faces' __all__
    from .archive import *  # noqa: F403
    from .core import *  # noqa: F403
    from .envs import *  # noqa: F403
    from .envs.vector import *  # noqa: F403
    from .evaluation import *  # noqa: F403
    from .games import *  # noqa: F403
    from .league import *  # noqa: F403
    from .opponents import *  # noqa: F403
    from .ratings import *  # noqa: F403
    from .runs import *  # noqa: F403
    from .training import *  # noqa: F403

__getattr__, __dir__ = lazy_exports(__name__, faces=FACES)

# Gymnasium ids (string entry points: registering imports neither torch nor the games).
register_envs()
