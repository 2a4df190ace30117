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
from .core.deprecation import serve_moved_modules
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

#: The 0.1 module paths that moved in 0.2, ``{old: new}`` (relative to ``sp_wrappers``): each
#: still imports, with a ``DeprecationWarning`` naming its new home, and goes away in 0.3.
#: ``sp_wrappers.registration`` is not here: it is a real module, kept without a warning, because
#: users' Gymnasium and RL Zoo registries store ``sp_wrappers.registration:make_env``.
MOVED = {
    "policies": "core.policies",
    "teams": "core.teams",
    "baselines": "games.baselines",
    "game_wrappers": "games.wrappers",
    "adapters": "games.adapters",
    "sampler": "opponents.sampler",
    "env": "envs.selfplay_env",
    "shaping": "envs.shaping",
    "vec_env": "envs.vector.vec_env",
    "snapshot_ratings": "ratings.archive_ratings",
    "openings": "evaluation.openings",
    "plots": "evaluation.plots",
    "callbacks": "training.callbacks",
    "k_opponents": "training.k_opponents",
    "env_generator": "training.env_generator",
    "team_selfplay": "training.team_selfplay",
    "run_config": "runs.config",
    "team_train": "runs.team_train",
    "rundir": "runs.rundir",
    "summary": "runs.summary",
    "recipes": "runs.recipes",
    "train_command": "cli.train",
    "team_train_command": "cli.team_train",
}

serve_moved_modules(__name__, MOVED)
__getattr__, __dir__ = lazy_exports(__name__, faces=FACES, moved=MOVED)

# Gymnasium ids (string entry points: registering imports neither torch nor the games).
register_envs()
