"""``sp-wrappers train`` on team games: the command line of
:func:`sp_wrappers.runs.team_train.train_teams`.

This module holds :func:`is_team_run` (whether ``train``'s arguments ask for a team run:
``--teams``, a team run's directory or ``config.json``, or a game whose recipe has teams),
:func:`new_team_run_config` (the game's recipe, then ``--config``'s file, then the options) and
:func:`run_team_train_command` (what ``sp-wrappers train`` runs for a team run). The options
live in :mod:`sp_wrappers.cli.train`'s parser (``--teams``, ``--team-change``,
``--shared``); the driver and the run directory in :mod:`sp_wrappers.runs.team_train`.

>>> import argparse
>>> from sp_wrappers.cli.train import build_train_parser
>>> args = build_train_parser().parse_args(["simple_tag_v3", "--team-change", "5000"])
>>> is_team_run(args)
True
>>> config = new_team_run_config(args)
>>> config["teams"], config["team_change"], config["sampler"]["swap_every"]
('prefix', 5000, None)
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..games.registry import GAMES, UnknownGameError, game_factory
from ..runs.config import TrainError, check_sampler_and_algo, read_json_object, read_resume_config
from ..runs.recipes import ALGOS, RECIPES, SAMPLER_DEFAULTS, fit_to_budget, recipe_for
from ..runs.rundir import CONFIG_NAME, _slug
from ..runs.team_train import TEAM_CONFIG_KIND, train_teams
from .common import PROG
from .run_options import copy_given_options, new_run_dir, parse_pairs

__all__ = ["is_team_run", "new_team_run_config", "run_team_train_command", "TEAM_SAMPLER_KEYS"]

#: The sampler settings a team run uses (TeamSelfPlay's knobs, applied to every team).
TEAM_SAMPLER_KEYS = ("window", "latest_ratio", "swap_every", "swap_unit", "strategy")

#: Options of ``train`` that single-learner runs use and team runs do not.
_SINGLE_ONLY = {
    "random_ratio": "--random-ratio",
    "reference_ratio": "--reference-ratio",
    "draw_reward": "--draw-reward",
    "opponent_draw": "--opponent-draw",
    "illegal_action": "--illegal-action",
    "deterministic_opponents": "--deterministic-opponents",
    "learner": "--learner",
    "max_snapshots": "--max-snapshots",
    "fit_every": "--fit-every",
}

# ------------------------------------------------------------------------------------------------
# Configuration
# ------------------------------------------------------------------------------------------------


def _parse_teams(raw: str) -> str | dict[str, list[str]]:
    """``--teams``: ``"prefix"`` or a JSON object ``{team: [agent, ...]}``."""
    if raw == "prefix":
        return raw
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(
        isinstance(agents, list) and all(isinstance(a, str) for a in agents)
        for agents in value.values()
    ):
        raise TrainError(
            f"--teams takes 'prefix' or a JSON object of team -> list of agent names, got "
            f'{raw!r}; e.g. --teams \'{{"red": ["first_0", "third_0"], "blue": '
            f'["second_0", "fourth_0"]}}\'.'
        )
    return value


def _base_config(args: argparse.Namespace) -> dict[str, Any]:
    return (
        read_json_object(Path(args.config), "pass the config.json of a run") if args.config else {}
    )


def _resume_dir(args: argparse.Namespace) -> Path | None:
    if not args.resume:
        return None
    if isinstance(args.resume, str):
        return Path(args.resume)
    if args.out is None and args.game is None:
        raise TrainError("--resume needs the run directory: --resume RUN_DIR.")
    return Path(args.out or f"runs/{_slug(args.game or '')}")


def is_team_run(args: argparse.Namespace) -> bool:
    """Whether ``train``'s parsed arguments ask for a team run: ``--teams``, a team run's
    directory (``--resume``) or ``config.json`` (``--config``), or a game whose recipe has
    teams. Team-only options on any other run fail with a message naming ``--teams``."""
    if args.teams is not None:
        return True
    run = _resume_dir(args)
    if run is not None and (run / CONFIG_NAME).is_file():
        if read_json_object(run / CONFIG_NAME, "").get("kind") == TEAM_CONFIG_KIND:
            return True
        _refuse_team_options(args, f"the run in {run}")
        return False
    base = _base_config(args) if run is None else {}
    game = args.game or base.get("game")
    if base.get("kind") == TEAM_CONFIG_KIND and game == base.get("game"):
        return True
    if game in GAMES:
        try:
            if recipe_for(game, args.algo).teams is not None:
                return True
        except KeyError:
            pass
    if run is None:
        _refuse_team_options(args, game or "this game")
    return False


def _refuse_team_options(args: argparse.Namespace, what: str) -> None:
    for option, value in (("--team-change", args.team_change), ("--shared", args.shared)):
        if value is not None:
            raise TrainError(
                f"{option} applies to team runs; {what} has no teams: pass --teams prefix or "
                "--teams '{\"team\": [agent, ...], ...}' (a new run)."
            )


def new_team_run_config(args: argparse.Namespace) -> dict[str, Any]:
    """The config of a new team run: the game's recipe, then ``--config``'s file, then the
    options (see the module docstring for the keys)."""
    base = _base_config(args)
    game = args.game or base.get("game")
    if not game:
        raise TrainError(f"Name a game, e.g. `{PROG} train simple_tag_v3`.")
    try:
        game_factory(game)
    except UnknownGameError as error:
        raise TrainError(str(error)) from None
    same_game = base.get("game") == game and base.get("kind") == TEAM_CONFIG_KIND
    algo = args.algo or (base.get("algo") if same_game else None)
    try:
        recipe = recipe_for(game, algo)
    except KeyError:
        raise TrainError(f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}.") from None
    if recipe.algo not in ALGOS:  # pragma: no cover - a typo in recipes.py
        raise TrainError(f"Unknown algorithm {recipe.algo!r}.")
    spec = GAMES.get(game)
    own = RECIPES.get(game)  # the game's own (untuned) recipe is "game", not "generic"
    teams = recipe.teams if recipe.teams is not None else (spec.teams if spec else None)
    config: dict[str, Any] = {
        "format_version": 1,
        "kind": TEAM_CONFIG_KIND,
        "game": game,
        "game_kwargs": dict(recipe.game_kwargs),
        "algo": recipe.algo,
        "recipe": "tuned" if recipe.tuned else ("game" if recipe is own else "generic"),
        "hyperparams": dict(recipe.hyperparams),
        "teams": teams,
        "team_change": recipe.team_change,
        "shared": None,
        # swap_every None: TeamSelfPlay's default, the same number of swaps for every team.
        "sampler": {
            "window": recipe.sampler.get("window", SAMPLER_DEFAULTS["window"]),
            "latest_ratio": recipe.sampler.get("latest_ratio", SAMPLER_DEFAULTS["latest_ratio"]),
            "swap_every": None,
            "swap_unit": "steps",
            "strategy": recipe.sampler.get("strategy", SAMPLER_DEFAULTS["strategy"]),
        },
        "n_envs": recipe.n_envs,
        "save_every": recipe.save_every,
        "seed": 0,
        "timesteps": recipe.timesteps,
        "eval_games": recipe.eval_games,
    }
    if same_game:
        for key in (
            "game_kwargs",
            "teams",
            "team_change",
            "shared",
            "n_envs",
            "save_every",
            "seed",
            "timesteps",
            "eval_games",
        ):
            if key in base:
                config[key] = base[key]
        config["sampler"].update(
            {k: v for k, v in (base.get("sampler") or {}).items() if k in TEAM_SAMPLER_KEYS}
        )
        if base.get("algo") == config["algo"]:
            config["hyperparams"] = dict(base.get("hyperparams") or config["hyperparams"])
            config["recipe"] = base.get("recipe", "file")
    if args.teams is not None:
        config["teams"] = _parse_teams(args.teams)
    if config["teams"] is None:  # pragma: no cover - is_team_run let it through
        raise TrainError(f"{game} has no teams; pass --teams prefix or a JSON mapping.")
    config["game_kwargs"].update(parse_pairs(args.game_kwarg, "--game-kwarg"))
    hp = parse_pairs(args.hp, "--hp")
    if hp:
        config["hyperparams"].update(hp)
        config["recipe"] = config["recipe"] + "+overrides"
    _apply_team_overrides(config, args)
    # No --team-change: train_teams picks one that fits every team's rollout once the models
    # exist (about a tenth of the run, a multiple of each rollout).
    if not (same_game and base.get("algo") == config["algo"]):  # a --config file's are the user's
        config["hyperparams"] = fit_to_budget(
            config["algo"], config["hyperparams"], int(config["timesteps"]), given=hp
        )
    _check_team_config(config)
    return config


def _apply_team_overrides(config: dict[str, Any], args: argparse.Namespace) -> None:
    for key, option in _SINGLE_ONLY.items():
        if getattr(args, key, None) is not None:
            raise TrainError(
                f"{option} applies to single-learner runs, not to team runs (TeamSelfPlay draws "
                "each team's opponents from the other teams' archives); drop it."
            )
    keys = ("timesteps", "n_envs", "save_every", "seed", "eval_games", "team_change", "shared")
    copy_given_options(args, keys, config)
    copy_given_options(args, TEAM_SAMPLER_KEYS, config["sampler"])
    if getattr(args, "window", None) == 0:
        config["sampler"]["window"] = None


def _check_team_config(config: Mapping[str, Any]) -> None:
    """Range checks with one-line messages."""
    s = config["sampler"]
    for key, least in (("timesteps", 1), ("n_envs", 1), ("save_every", 1), ("eval_games", 0)):
        if int(config[key]) < least:
            option = "--" + key.replace("_", "-")
            raise TrainError(f"{option} must be at least {least}, got {config[key]}.")
    if config["team_change"] is not None and int(config["team_change"]) < 1:
        raise TrainError(
            f"--team-change must be a positive number of learner steps, got "
            f"{config['team_change']}."
        )
    if not 0.0 <= float(s["latest_ratio"]) <= 1.0:
        raise TrainError(f"--latest-ratio must be between 0 and 1, got {s['latest_ratio']}.")
    check_sampler_and_algo(config)


# ------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------


def run_team_train_command(args: argparse.Namespace) -> int:
    """``sp-wrappers train`` for a team run: resolve the config, train, print the summary."""
    run = _resume_dir(args)
    from_config = run is None and bool(_base_config(args).get("env_generator"))
    if getattr(args, "env_generator", None) is not None or from_config:
        where = "the --config file's env_generator" if from_config else "--env-generator"
        raise TrainError(
            f"{where} does not work with a team run (--teams, a team game's recipe or a team "
            "run's directory): environment generators configure the games of single-learner "
            "runs only, and a team run would ignore it. Drop --teams or --env-generator (or the "
            "env_generator key of the config file)."
        )
    timesteps = None
    if run is not None:
        fixed = (
            ("--algo", args.algo),
            ("--hp", args.hp),
            ("--game-kwarg", args.game_kwarg),
            ("--config", args.config),
            ("--seed", args.seed),
            ("--teams", args.teams),
            ("--shared", args.shared),
            ("--team-change", args.team_change),
            ("--n-envs", args.n_envs),
        )
        required = ("game", "teams", "team_change", "models", "timesteps", "sampler", "algo")
        config = read_resume_config(run, args.game, fixed, required, "a team run of train")
        timesteps = args.timesteps
        args.timesteps = None
        _apply_team_overrides(config, args)
        _check_team_config(config)
    else:
        config = new_team_run_config(args)
        run = new_run_dir(args.out, config["game"])
    argv = getattr(args, "_argv", None)
    words = [PROG, "train", *argv] if argv is not None else [PROG, *sys.argv[1:]]
    command = shlex.join(words)
    resume = bool(args.resume)
    print(
        f"{'Resuming' if resume else 'Training'} {config['algo']} teams on {config['game']} "
        f"({'config.json' if resume else config['recipe']}) into {run}",
        flush=True,
    )
    result = train_teams(
        config,
        run,
        resume=resume,
        timesteps=timesteps,
        progress=not args.no_progress,
        device=args.device,
        torch_threads=args.threads,
        command=command,
        html_report=not getattr(args, "no_report", False),
    )
    print(result.summary(), flush=True)
    return 0
