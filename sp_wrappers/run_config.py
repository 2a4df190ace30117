"""The run configuration of ``sp-wrappers train``: what ``config.json`` holds and how it is made.

This module holds :func:`new_run_config` (a configuration from the command's arguments, with the
algorithm's recipe and the game's probe filled in), the checks a configuration must pass before
a run starts or resumes (``_check_config``), the command-line overrides a resumed or replayed run
accepts (``_apply_overrides``), :class:`TrainError` (a user error the command prints on one line)
and :data:`CONFIG_FORMAT_VERSION`. :mod:`sp_wrappers.train` runs a configuration;
:mod:`sp_wrappers.train_command` and :mod:`sp_wrappers.team_train_command` parse the command.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._opponents import OPPONENT_DRAWS, SWAP_UNITS
from ._seats import ILLEGAL_ACTION_MODES
from .cli import PROG, CLIError
from .games import GAMES, UnknownGameError, game_factory, reference_opponents
from .recipes import ALGOS, RECIPES, SAMPLER_DEFAULTS, recipe_for
from .recipes import linear_schedule as _learning_rate
from .rundir import CONFIG_NAME
from .sampler import STRATEGIES

__all__ = ["new_run_config", "TrainError", "CONFIG_FORMAT_VERSION"]

CONFIG_FORMAT_VERSION = 1


class TrainError(CLIError):
    """A user error in ``train``: the command prints it on one line and exits with status 2."""


@dataclass
class _Probe:
    """What one copy of the game tells about itself before training."""

    observation_space: Any
    action_space: Any
    has_masks: bool


def _probe_game(env_fn: Callable[[], Any], learner: str) -> _Probe:
    from .env import SelfPlayEnv

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


def _probe_or_fail(
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


def _parse_pairs(pairs: Sequence[str] | None, option: str) -> dict[str, Any]:
    """``["a=1", "b=[64, 64]", "c=tanh"]`` -> ``{"a": 1, "b": [64, 64], "c": "tanh"}``."""
    result: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise TrainError(
                f"{option} takes KEY=VALUE (VALUE in JSON, or a plain string), got {pair!r}."
            )
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        result[key.strip()] = value
    return result


def _read_json(path: Path, what: str) -> dict[str, Any]:
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
    config = _read_json(run / CONFIG_NAME, "--resume needs a run directory written by train")
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


def _check_config(config: Mapping[str, Any]) -> None:
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
        from .env_generator import load_generator

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


_SAMPLER_OPTIONS = (
    "window",
    "latest_ratio",
    "swap_every",
    "swap_unit",
    "strategy",
    "random_ratio",
    "reference_ratio",
)


def copy_given_options(
    args: argparse.Namespace, keys: Sequence[str], target: dict[str, Any]
) -> None:
    """Copy into ``target`` each option of ``keys`` given on the command line (not ``None``)."""
    for key in keys:
        value = getattr(args, key, None)
        if value is not None:
            target[key] = value


def _apply_overrides(config: dict[str, Any], args: argparse.Namespace) -> None:
    given = (
        "timesteps",
        "n_envs",
        "save_every",
        "seed",
        "eval_games",
        "learner",
        "draw_reward",
        "max_snapshots",
        "fit_every",
        "opponent_draw",
        "illegal_action",
        "env_generator",
    )
    copy_given_options(args, given, config)
    if getattr(args, "max_snapshots", None) == 0:
        config["max_snapshots"] = None
    copy_given_options(args, _SAMPLER_OPTIONS, config["sampler"])
    if getattr(args, "window", None) == 0:
        config["sampler"]["window"] = None
    if getattr(args, "deterministic_opponents", None) is not None:
        config["sampler"]["deterministic"] = args.deterministic_opponents


def new_run_config(args: argparse.Namespace) -> dict[str, Any]:
    """The config of a new run: the game's recipe, then ``--config``'s file, then the options."""
    base: dict[str, Any] = {}
    if args.config:
        base = _read_json(Path(args.config), "pass the config.json of a run")
    game = args.game or base.get("game")
    if not game:
        raise TrainError(
            f"Name a game: {', '.join(GAMES)} or an import path 'module:function' "
            f"(e.g. `{PROG} train tictactoe_v3`)."
        )
    try:
        game_factory(game)
    except UnknownGameError as error:
        raise TrainError(str(error)) from None
    same_game = base.get("game") == game
    algo = args.algo or (base.get("algo") if same_game else None)
    if algo is None and game not in RECIPES:
        # No recipe: MaskablePPO when the game has action masks, PPO otherwise.
        kwargs = dict(base.get("game_kwargs") or {}) if same_game else {}
        kwargs.update(_parse_pairs(args.game_kwarg, "--game-kwarg"))
        probe = _probe_or_fail(game_factory(game, kwargs), game, kwargs, args.learner or "random")
        algo = "maskable_ppo" if probe.has_masks else "ppo"
    try:
        recipe = recipe_for(game, algo)
    except KeyError:
        raise TrainError(f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}.") from None
    config: dict[str, Any] = {
        "format_version": CONFIG_FORMAT_VERSION,
        "game": game,
        "game_kwargs": dict(recipe.game_kwargs),
        "algo": recipe.algo,
        "recipe": "tuned" if recipe.tuned else "generic",
        "hyperparams": dict(recipe.hyperparams),
        "sampler": {**SAMPLER_DEFAULTS, **recipe.sampler},
        "learner": recipe.learner,
        "n_envs": recipe.n_envs,
        "save_every": recipe.save_every,
        "seed": 0,
        "timesteps": recipe.timesteps,
        "eval_games": recipe.eval_games,
        "draw_reward": recipe.draw_reward,
        "max_snapshots": None,
        "fit_every": 0,
        "opponent_draw": "per_env",
        "illegal_action": "loss",
        "env_generator": None,
    }
    if same_game:
        for key in (
            "game_kwargs",
            "learner",
            "n_envs",
            "save_every",
            "seed",
            "timesteps",
            "eval_games",
            "draw_reward",
            "max_snapshots",
            "fit_every",
            "opponent_draw",
            "illegal_action",
            "env_generator",
        ):
            if key in base:
                config[key] = base[key]
        config["sampler"].update(base.get("sampler") or {})
        if base.get("algo") == config["algo"]:
            config["hyperparams"] = dict(base.get("hyperparams") or config["hyperparams"])
            config["recipe"] = base.get("recipe", "file")
    config["game_kwargs"].update(_parse_pairs(args.game_kwarg, "--game-kwarg"))
    hp = _parse_pairs(args.hp, "--hp")
    if hp:
        config["hyperparams"].update(hp)
        config["recipe"] = config["recipe"] + "+overrides"
    _apply_overrides(config, args)
    _check_config(config)
    return config


# ------------------------------------------------------------------------------------------------
# Training
# ------------------------------------------------------------------------------------------------
