"""sp_wrappers: self-play training for Stable-Baselines3 learners on any PettingZoo game.

Wrap a game, build the callback, call ``model.learn``::

    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO
    from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayEnv, SnapshotArchive

    archive = SnapshotArchive("runs/ttt/archive")
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random", opponent=OpponentSampler(archive))
    MaskablePPO("MlpPolicy", env).learn(100_000, callback=SelfPlayCallback(archive))

Or, without a script, from a Gymnasium id that ``import sp_wrappers`` registers (one per game of
``sp_wrappers.games.GAMES``)::

    import gymnasium as gym
    env = gym.make("sp_wrappers/ConnectFour-v0", archive="runs/c4/archive", latest_ratio=0.5)

Public names are loaded on first use, so ``import sp_wrappers`` stays cheap (it imports Gymnasium
to register the ids, never torch) and optional extras (Ray, matplotlib, openskill) are only
imported by the code that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # opponents
    "Policy": "policies",
    "RandomPolicy": "policies",
    "CallablePolicy": "policies",
    "SB3Policy": "policies",
    "PerfectTicTacToePolicy": "baselines",
    "AlphaBetaConnectFourPolicy": "baselines",
    # envs
    "SelfPlayEnv": "env",
    "SelfPlayVecEnv": "vec_env",
    "make_selfplay_vec_env": "vec_env",
    "ENV_IDS": "registration",
    "register_envs": "registration",
    "IllegalActionError": "_seats",
    "openspiel_env": "adapters",
    # teams
    "TeamLayout": "teams",
    "team_outcome": "teams",
    # the self-play loop
    "SnapshotArchive": "archive",
    "SnapshotInfo": "archive",
    "MatchRecord": "archive",
    "OpponentSampler": "sampler",
    "SelfPlayCallback": "callbacks",
    "DrawReward": "shaping",
    # asymmetric self-play over teams
    "TeamSelfPlay": "team_selfplay",
    "make_team_vec_env": "team_selfplay",
    "swap_steps": "team_selfplay",
    # k-opponent rollouts
    "KOpponentRollouts": "k_opponents",
    "KOpponentRecord": "k_opponents",
    "EpisodeResult": "k_opponents",
    "novelty_reward": "k_opponents",
    # environment generators (curricula, handicaps, environment design)
    "EnvGenerator": "env_generator",
    "GameConfig": "env_generator",
    "EnvHistory": "env_generator",
    "ConfigResult": "env_generator",
    "win_rates_by_config": "env_generator",
    # league training
    "League": "league",
    "LeagueBuilder": "league",
    "AlphaStarLeague": "league",
    "SelfPlayLeague": "league",
    "PayoffTable": "league",
    # ratings and evaluation
    "EloRatings": "ratings",
    "BradleyTerryResult": "ratings",
    "fit_bradley_terry": "ratings",
    "expected_score": "ratings",
    "play_match": "evaluation",
    "legal_openings": "openings",
    "play_openings": "openings",
    "OpeningsResult": "openings",
    "MatchResult": "evaluation",
    "round_robin": "evaluation",
    "RoundRobinResult": "evaluation",
    "archive_ratings": "snapshot_ratings",
    "store_archive_ratings": "snapshot_ratings",
}

__all__ = sorted(_EXPORTS) + ["__version__"]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ._seats import IllegalActionError
    from .adapters import openspiel_env
    from .archive import MatchRecord, SnapshotArchive, SnapshotInfo
    from .baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy
    from .callbacks import SelfPlayCallback
    from .env import SelfPlayEnv
    from .env_generator import (
        ConfigResult,
        EnvGenerator,
        EnvHistory,
        GameConfig,
        win_rates_by_config,
    )
    from .evaluation import MatchResult, RoundRobinResult, play_match, round_robin
    from .k_opponents import EpisodeResult, KOpponentRecord, KOpponentRollouts, novelty_reward
    from .league import AlphaStarLeague, League, LeagueBuilder, PayoffTable, SelfPlayLeague
    from .openings import OpeningsResult, legal_openings, play_openings
    from .policies import CallablePolicy, Policy, RandomPolicy, SB3Policy
    from .ratings import BradleyTerryResult, EloRatings, expected_score, fit_bradley_terry
    from .registration import ENV_IDS, register_envs
    from .sampler import OpponentSampler
    from .shaping import DrawReward
    from .snapshot_ratings import archive_ratings, store_archive_ratings
    from .team_selfplay import TeamSelfPlay, make_team_vec_env, swap_steps
    from .teams import TeamLayout, team_outcome
    from .vec_env import SelfPlayVecEnv, make_selfplay_vec_env


# Gymnasium ids (string entry points: registering imports neither torch nor the games).
importlib.import_module(".registration", __name__).register_envs()


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'sp_wrappers' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
