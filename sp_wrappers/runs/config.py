"""The run configuration of ``sp-wrappers train``: what ``config.json`` holds and how it is made.

This module holds :func:`new_run_config` (a configuration from the command's arguments, with the
algorithm's recipe and the game's probe filled in), the checks a configuration must pass before
a run starts or resumes (``check_config``), the command-line overrides a resumed or replayed run
accepts (``apply_overrides``), :class:`TrainError` (a user error the command prints on one line)
and :data:`CONFIG_FORMAT_VERSION`. :mod:`sp_wrappers.runs.train` runs a configuration;
:mod:`sp_wrappers.cli.train` and :mod:`sp_wrappers.cli.team_train` parse the command.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import SpWrappersError
from ..core.seats import ILLEGAL_ACTION_MODES
from ..games.registry import GAMES, reference_opponents
from ..opponents.sampler import STRATEGIES
from ..opponents.slots import OPPONENT_DRAWS, SWAP_UNITS
from .recipes import ALGOS
from .recipes import linear_schedule as _learning_rate
from .rundir import CONFIG_NAME

__all__ = [
    "TrainError",
    "CONFIG_FORMAT_VERSION",
    "SAMPLER_OPTIONS",
    "check_config",
    "check_sampler_and_algo",
    "probe_or_fail",
    "read_json_object",
    "read_resume_config",
]

CONFIG_FORMAT_VERSION = 1


class TrainError(SpWrappersError):
    """A user error in a training run (a bad config, game or algorithm); the message names the
    fix. ``sp-wrappers`` prints it on one line and exits with status 2."""


@dataclass
class _Probe:
    """What one copy of the game tells about itself before training."""

    observation_space: Any
    action_space: Any
    has_masks: bool


def _probe_game(env_fn: Callable[[], Any], learner: str) -> _Probe:
    from ..envs.selfplay_env import SelfPlayEnv

    try:
        env = SelfPlayEnv(env_fn(), learner=learner)
    except ValueError as error:  # e.g. learner="random" on a game whose seats differ
        raise TrainError(str(error)) from None
    try:
        env.reset(seed=0)
        has_masks = env.driver.learner_mask() is not None
        return _Probe(env.observation_space, env.action_space, has_masks)
    finally:
        env.close()


def probe_or_fail(
    env_fn: Callable[[], Any], game: str, kwargs: Mapping[str, Any], learner: str
) -> _Probe:
    try:
        return _probe_game(env_fn, learner)
    except TrainError:
        raise
    except Exception as error:
        raise TrainError(
            f"Cannot build the game {game!r} with game_kwargs {dict(kwargs)}: "
            f"{type(error).__name__}: {error}"
        ) from None


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise TrainError(f"{path} does not exist; {what}.") from None
    except (OSError, ValueError) as error:
        raise TrainError(f"Cannot read {path}: {error}.") from None
    if not isinstance(data, dict):
        raise TrainError(f"{path} must hold a JSON object.")
    return data


def read_resume_config(
    run: Path,
    game: str | None,
    fixed_options: Sequence[tuple[str, Any]],
    required: Sequence[str],
    writer: str = "train",
) -> dict[str, Any]:
    """The ``config.json`` of the run in ``run`` for ``--resume``, checked: the same game as
    ``game`` (when given), none of ``fixed_options`` (``(option, value)``) given, and every key
    in ``required`` present (else the file was not written by ``writer``)."""
    config = read_json_object(run / CONFIG_NAME, "--resume needs a run directory written by train")
    if game and game != config.get("game"):
        raise TrainError(
            f"{run} holds a run of {config.get('game')!r}, not {game!r}; drop GAME or "
            "pick the right run directory."
        )
    for option, value in fixed_options:
        if value is not None:
            raise TrainError(f"{option} cannot change on --resume; start a new run instead.")
    for key in required:
        if key not in config:
            raise TrainError(f"{run / CONFIG_NAME} has no {key!r}; it was not written by {writer}.")
    return config


def check_config(config: Mapping[str, Any]) -> None:
    """Range checks with one-line messages (the sampler and SB3 would raise less clearly)."""
    s = config["sampler"]
    if config["timesteps"] < 1:
        raise TrainError(f"--timesteps must be at least 1, got {config['timesteps']}.")
    if config["n_envs"] < 1:
        raise TrainError(f"--n-envs must be at least 1, got {config['n_envs']}.")
    if config["save_every"] < 1:
        raise TrainError(f"--save-every must be at least 1 step, got {config['save_every']}.")
    if config["eval_games"] < 0:
        raise TrainError(f"--eval-games must be at least 0, got {config['eval_games']}.")
    max_snapshots = config.get("max_snapshots")
    if max_snapshots is not None and max_snapshots < 2:
        raise TrainError(
            f"--max-snapshots must be at least 2 (0 keeps every snapshot), got {max_snapshots}."
        )
    strength_every = config.get("strength_every")
    if strength_every is not None and (int(strength_every) != strength_every or strength_every < 0):
        raise TrainError(
            f"--strength-every must be a number of learner steps >= 0 (0: off), got "
            f"{strength_every!r}."
        )
    plies = config.get("strength_plies")
    if plies is not None and (int(plies) != plies or plies < 0):
        raise TrainError(f"--strength-plies must be a number of moves >= 0, got {plies!r}.")
    if config.get("fit_every", 0) < 0:
        raise TrainError(f"--fit-every must be at least 0 (0: off), got {config['fit_every']}.")
    if not -1.0 <= float(config.get("draw_reward", 0.0)) <= 1.0:
        raise TrainError(
            f"--draw-reward must be between -1 and 1 (a win is worth 1), got "
            f"{config['draw_reward']}."
        )
    if config.get("opponent_draw", "per_env") not in OPPONENT_DRAWS:
        raise TrainError(
            f"--opponent-draw must be one of {', '.join(OPPONENT_DRAWS)}, got "
            f"{config['opponent_draw']!r}."
        )
    if config.get("illegal_action", "loss") not in ILLEGAL_ACTION_MODES:
        raise TrainError(
            f"--illegal-action must be one of {', '.join(ILLEGAL_ACTION_MODES)}, got "
            f"{config['illegal_action']!r}."
        )
    for key in ("latest_ratio", "random_ratio", "reference_ratio"):
        if not 0.0 <= float(s[key]) <= 1.0:
            option = "--" + key.replace("_", "-")
            raise TrainError(f"{option} must be between 0 and 1, got {s[key]}.")
    if float(s["random_ratio"]) + float(s["reference_ratio"]) > 1.0:
        raise TrainError("--random-ratio and --reference-ratio add up to more than 1.")
    if float(s["reference_ratio"]) > 0 and len(reference_opponents(config["game"])) < 2:
        with_bots = ", ".join(name for name, spec in GAMES.items() if spec.references)
        raise TrainError(
            f"--reference-ratio needs a game with a reference bot ({with_bots}); "
            f"{config['game']} has none."
        )
    if config.get("env_generator"):
        from ..training.env_generator import load_generator

        try:
            load_generator(config["env_generator"])
        except ValueError as error:
            raise TrainError(str(error)) from None
    check_sampler_and_algo(config)


def check_sampler_and_algo(config: Mapping[str, Any]) -> None:
    """The checks a single-learner and a team run share: the sampler's window, swap interval,
    unit and strategy, the algorithm's name and the learning rate (a number or a schedule)."""
    s = config["sampler"]
    if s["window"] is not None and s["window"] < 1:
        raise TrainError(f"--window must be at least 1 (0 means all snapshots), got {s['window']}.")
    if s["swap_every"] is not None and s["swap_every"] < 1:
        raise TrainError(f"--swap-every must be at least 1, got {s['swap_every']}.")
    if s["swap_unit"] not in SWAP_UNITS:
        raise TrainError(
            f"--swap-unit must be one of {', '.join(SWAP_UNITS)}, got {s['swap_unit']!r}."
        )
    if s["strategy"] not in STRATEGIES:
        raise TrainError(
            f"--strategy must be one of {', '.join(STRATEGIES)}, got {s['strategy']!r}."
        )
    if config["algo"] not in ALGOS:
        raise TrainError(f"Unknown algorithm {config['algo']!r}; choose one of {', '.join(ALGOS)}.")
    lr = config["hyperparams"].get("learning_rate")
    if lr is not None:
        try:
            _learning_rate(lr)
        except (TypeError, ValueError) as error:
            raise TrainError(str(error)) from None


SAMPLER_OPTIONS = (
    "window",
    "latest_ratio",
    "swap_every",
    "swap_unit",
    "strategy",
    "random_ratio",
    "reference_ratio",
)


# ------------------------------------------------------------------------------------------------
# Training
# ------------------------------------------------------------------------------------------------
