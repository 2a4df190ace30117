"""A run's config from the command line.

This module holds :func:`new_run_config` (the game's recipe, then ``--config``'s file, then the
options given), :func:`apply_overrides`, :func:`copy_given_options` and :func:`parse_pairs`
(``--hp`` and ``--game-kwarg`` values).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..games.registry import GAMES, UnknownGameError, game_factory
from ..runs.config import (
    CONFIG_FORMAT_VERSION,
    SAMPLER_OPTIONS,
    TrainError,
    check_config,
    probe_or_fail,
    read_json_object,
)
from ..runs.recipes import ALGOS, RECIPES, SAMPLER_DEFAULTS, fit_to_budget, recipe_for
from ..runs.rundir import CONFIG_NAME, _slug
from .common import PROG

__all__ = ["apply_overrides", "copy_given_options", "new_run_config", "new_run_dir", "parse_pairs"]


def parse_pairs(pairs: Sequence[str] | None, option: str) -> dict[str, Any]:
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


def copy_given_options(
    args: argparse.Namespace, keys: Sequence[str], target: dict[str, Any]
) -> None:
    """Copy into ``target`` each option of ``keys`` given on the command line (not ``None``)."""
    for key in keys:
        value = getattr(args, key, None)
        if value is not None:
            target[key] = value


def apply_overrides(config: dict[str, Any], args: argparse.Namespace) -> None:
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
        "strength_every",
        "strength_plies",
    )
    copy_given_options(args, given, config)
    symmetries = getattr(args, "symmetries", None)
    if symmetries is not None:
        config["symmetries"] = None if symmetries == "none" else symmetries
    if getattr(args, "max_snapshots", None) == 0:
        config["max_snapshots"] = None
    copy_given_options(args, SAMPLER_OPTIONS, config["sampler"])
    if getattr(args, "window", None) == 0:
        config["sampler"]["window"] = None
    if getattr(args, "deterministic_opponents", None) is not None:
        config["sampler"]["deterministic"] = args.deterministic_opponents


def new_run_config(args: argparse.Namespace) -> dict[str, Any]:
    """The config of a new run: the game's recipe, then ``--config``'s file, then the options."""
    base: dict[str, Any] = {}
    if args.config:
        base = read_json_object(Path(args.config), "pass the config.json of a run")
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
        kwargs.update(parse_pairs(args.game_kwarg, "--game-kwarg"))
        probe = probe_or_fail(game_factory(game, kwargs), game, kwargs, args.learner or "random")
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
        "symmetries": recipe.symmetries,
        "strength_every": recipe.strength_every,
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
            "symmetries",
            "strength_every",
            "strength_plies",
        ):
            if key in base:
                config[key] = base[key]
        config["sampler"].update(base.get("sampler") or {})
        if base.get("algo") == config["algo"]:
            config["hyperparams"] = dict(base.get("hyperparams") or config["hyperparams"])
            config["recipe"] = base.get("recipe", "file")
    config["game_kwargs"].update(parse_pairs(args.game_kwarg, "--game-kwarg"))
    hp = parse_pairs(args.hp, "--hp")
    if hp:
        config["hyperparams"].update(hp)
        config["recipe"] = config["recipe"] + "+overrides"
    apply_overrides(config, args)
    if not (same_game and base.get("algo") == config["algo"]):  # a --config file's are the user's
        config["hyperparams"] = fit_to_budget(
            config["algo"], config["hyperparams"], int(config["timesteps"]), given=hp
        )
    check_config(config)
    return config


def new_run_dir(out: str | None, game: str) -> Path:
    """The directory of a new run: ``--out`` or ``runs/<game>``, refused when it holds a run."""
    run = Path(out or f"runs/{_slug(game)}")
    if (run / CONFIG_NAME).exists():
        raise TrainError(
            f"{run} already holds a run; continue it with --resume {run}, or pass another --out."
        )
    return run
