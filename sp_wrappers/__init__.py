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

Public names are loaded on first use, so ``import sp_wrappers`` stays cheap (it imports Gymnasium
to register the ids, never torch) and optional extras (Ray, matplotlib, openskill) are only
imported by the code that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

_EXPORTS: dict[str, str] = {
    # opponents
    "Policy": "core.policies",
    "RandomPolicy": "core.policies",
    "CallablePolicy": "core.policies",
    "SB3Policy": "core.policies",
    "PerfectTicTacToePolicy": "games.baselines",
    "AlphaBetaConnectFourPolicy": "games.baselines",
    # envs
    "SelfPlayEnv": "envs.selfplay_env",
    "SelfPlayVecEnv": "envs.vector.vec_env",
    "make_selfplay_vec_env": "envs.vector.factory",
    "ENV_IDS": "envs.registration",
    "register_envs": "envs.registration",
    "IllegalActionError": "core.seats",
    "openspiel_env": "games.adapters",
    "RandomOpenings": "games.wrappers",
    # teams
    "TeamLayout": "core.teams",
    "team_outcome": "core.teams",
    # the self-play loop
    "SnapshotArchive": "archive.store",
    "SnapshotInfo": "archive.records",
    "MatchRecord": "archive.records",
    "OpponentSampler": "opponents.sampler",
    "SelfPlayCallback": "training.callbacks",
    "DrawReward": "envs.shaping",
    # asymmetric self-play over teams
    "TeamSelfPlay": "training.team_selfplay",
    "make_team_vec_env": "training.team_setup",
    "swap_steps": "training.team_selfplay",
    # schedules over a whole budget when learning runs in chunks
    "BudgetSchedules": "training.schedules",
    # k-opponent rollouts
    "KOpponentRollouts": "training.k_opponents",
    "KOpponentRecord": "training.k_opponents",
    "EpisodeResult": "training.k_opponents",
    "novelty_reward": "training.k_opponents",
    # environment generators (curricula, handicaps, environment design)
    "EnvGenerator": "training.env_generator",
    "GameConfig": "training.env_history",
    "EnvHistory": "training.env_history",
    "ConfigResult": "training.env_history",
    "win_rates_by_config": "training.env_generator",
    # league training
    "League": "league",
    "LeagueBuilder": "league",
    "AlphaStarLeague": "league",
    "SelfPlayLeague": "league",
    "PayoffTable": "league",
    # ratings and evaluation
    "EloRatings": "ratings.elo",
    "BradleyTerryResult": "ratings.results",
    "fit_bradley_terry": "ratings.bradley_terry",
    "expected_score": "ratings.elo",
    "play_match": "evaluation.match",
    "legal_openings": "evaluation.openings",
    "play_openings": "evaluation.openings",
    "OpeningsResult": "evaluation.openings",
    "MatchResult": "evaluation.match",
    "round_robin": "evaluation.round_robin",
    "RoundRobinResult": "evaluation.round_robin",
    "archive_ratings": "ratings.archive_ratings",
    "store_archive_ratings": "ratings.archive_ratings",
    # strength mechanisms
    "BoardExtractor": "core.networks",
    "Symmetry": "games.symmetries",
    "symmetries_for": "games.symmetries",
    "StrengthCallback": "training.strength",
    # watch and play: a person against a snapshot, replays, the run report
    "play_session": "evaluation.human_play",
    "PlayOutcome": "evaluation.human_play",
    "Notation": "games.notation",
    "notation_for": "games.notation",
    "MoveError": "games.notation",
    "play_replay": "evaluation.replay",
    "Replay": "evaluation.replay",
    "write_replay": "evaluation.replay_video",
    "write_report": "runs.report",
}

__all__ = sorted(_EXPORTS) + ["__version__"]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .archive.records import MatchRecord, SnapshotInfo
    from .archive.store import SnapshotArchive
    from .core.networks import BoardExtractor
    from .core.policies import CallablePolicy, Policy, RandomPolicy, SB3Policy
    from .core.seats import IllegalActionError
    from .core.teams import TeamLayout, team_outcome
    from .envs.registration import ENV_IDS, register_envs
    from .envs.selfplay_env import SelfPlayEnv
    from .envs.shaping import DrawReward
    from .envs.vector.factory import make_selfplay_vec_env
    from .envs.vector.vec_env import SelfPlayVecEnv
    from .evaluation.human_play import PlayOutcome, play_session
    from .evaluation.match import MatchResult, play_match
    from .evaluation.openings import OpeningsResult, legal_openings, play_openings
    from .evaluation.replay import Replay, play_replay
    from .evaluation.replay_video import write_replay
    from .evaluation.round_robin import RoundRobinResult, round_robin
    from .games.adapters import openspiel_env
    from .games.baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy
    from .games.notation import MoveError, Notation, notation_for
    from .games.symmetries import Symmetry, symmetries_for
    from .games.wrappers import RandomOpenings
    from .league import AlphaStarLeague, League, LeagueBuilder, PayoffTable, SelfPlayLeague
    from .opponents.sampler import OpponentSampler
    from .ratings.archive_ratings import archive_ratings, store_archive_ratings
    from .ratings.bradley_terry import fit_bradley_terry
    from .ratings.elo import EloRatings, expected_score
    from .ratings.results import BradleyTerryResult
    from .runs.report import write_report
    from .training.callbacks import SelfPlayCallback
    from .training.env_generator import EnvGenerator, win_rates_by_config
    from .training.env_history import ConfigResult, EnvHistory, GameConfig
    from .training.k_opponents import (
        EpisodeResult,
        KOpponentRecord,
        KOpponentRollouts,
        novelty_reward,
    )
    from .training.schedules import BudgetSchedules
    from .training.strength import StrengthCallback
    from .training.team_selfplay import TeamSelfPlay, swap_steps
    from .training.team_setup import make_team_vec_env


# Old module paths (sp_wrappers.env, sp_wrappers.vec_env, ...) keep working, with a warning.
importlib.import_module("._moved", __name__).install()

# Gymnasium ids (string entry points: registering imports neither torch nor the games).
importlib.import_module(".envs.registration", __name__).register_envs()


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'sp_wrappers' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
