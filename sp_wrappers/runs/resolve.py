"""From a game and the user's choices to one checked run configuration.

:func:`resolve_run` is the one place that decides the kind of run (a single learner or teams),
reads ``config.json`` (of a run to resume) or a config file (to replay) once, fills in the game's
recipe and probe, applies the user's overrides and checks the result once. The command line
turns its options into the overrides; a Python user passes them directly::

    config = resolve_run("tictactoe_v3", {"timesteps": 50_000, "hyperparams": {"ent_coef": 0.0}})
    sp_wrappers.runs.train(config, "runs/ttt")

Overrides are keyed by the configuration's field names (:class:`~sp_wrappers.runs.config.RunConfig`,
:class:`~sp_wrappers.runs.config.TeamRunConfig`) and by the sampler's settings (``window``,
``latest_ratio``, ..., ``deterministic``); a key missing from the mapping is a choice the user
did not make.

>>> config = resolve_run("simple_tag_v3", {"team_change": 5000})
>>> type(config).__name__, config.teams, config.team_change, config.sampler["swap_every"]
('TeamRunConfig', 'prefix', 5000, None)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..games.registry import GAMES, UnknownGameError, game_factory
from .config import (
    TEAM_CONFIG_KIND,
    TEAM_SAMPLER_KEYS,
    RunConfig,
    TeamRunConfig,
    TrainError,
    check_config,
    check_team_config,
    option_name,
    probe_or_fail,
    read_json_object,
)
from .recipes import ALGOS, RECIPES, SAMPLER_DEFAULTS, fit_to_budget, recipe_for
from .rundir import CONFIG_NAME

__all__ = ["resolve_run", "OVERRIDES", "parse_teams"]

_PLAIN_FIELDS = {f.name for f in dataclasses.fields(RunConfig)}
_TEAM_FIELDS = {f.name for f in dataclasses.fields(TeamRunConfig)}
#: Fields a user never sets: they describe the file or the run's past.
_RECORDED = {
    "format_version",
    "kind",
    "recipe",
    "models",
    "history",
    "sp_wrappers_version",
    "extra",
}
#: Every key an override may have.
OVERRIDES = frozenset(
    (_PLAIN_FIELDS | _TEAM_FIELDS | set(SAMPLER_DEFAULTS)) - _RECORDED - {"game", "sampler"}
)
#: Overrides of single-learner runs only, refused on a team run.
_SINGLE_ONLY = (
    "random_ratio",
    "reference_ratio",
    "draw_reward",
    "opponent_draw",
    "illegal_action",
    "deterministic",
    "learner",
    "max_snapshots",
    "prune_by",
    "fit_every",
)
#: What cannot change when a run resumes (``config_file``: a config file given with a run).
_FIXED_ON_RESUME = ("algo", "hyperparams", "game_kwargs", "config_file", "seed")
_FIXED_ON_PLAIN_RESUME = (*_FIXED_ON_RESUME, "learner", "env_generator")
_FIXED_ON_TEAM_RESUME = (*_FIXED_ON_RESUME, "teams", "shared", "team_change", "n_envs")
#: What a new run takes from a config file of the same game (the rest: the recipe's).
_FROM_FILE = _PLAIN_FIELDS - _RECORDED - {"game", "algo", "hyperparams", "sampler"}
_TEAM_FROM_FILE = _TEAM_FIELDS - _RECORDED - {"game", "algo", "hyperparams", "sampler"}


def resolve_run(
    game: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    resume: str | Path | None = None,
    config_file: str | Path | None = None,
) -> RunConfig | TeamRunConfig:
    """The checked configuration of a run: a new one of ``game`` (the game's recipe, then
    ``config_file``'s settings when it holds a run of the same game, then ``overrides``), or the
    run in ``resume`` with ``overrides`` applied.

    The kind of run is decided here, once: a team run when ``overrides`` has ``teams``, when
    the resumed run or the config file is a team run, or when the game's recipe has teams.

    :param game: a registered game or ``module:function`` (optional with ``resume`` or
        ``config_file``).
    :param overrides: the user's choices (see :data:`OVERRIDES`). On ``resume``, ``timesteps``
        is the steps of this call, not the run's, and is left for :func:`~sp_wrappers.runs.train`.
    :param resume: a run directory to continue (its ``config.json``).
    :param config_file: a run's ``config.json`` to start a new run from.
    :raises TrainError: a bad game, option or file, with the fix.
    """
    given = dict(overrides or {})
    unknown = sorted(set(given) - OVERRIDES)
    if unknown:
        raise TrainError(
            f"Unknown settings {', '.join(unknown)}; choose from {', '.join(sorted(OVERRIDES))}."
        )
    if config_file is not None:
        given["config_file"] = str(config_file)
    if resume is not None:
        return _resume(Path(resume), game, given)
    base = (
        read_json_object(Path(config_file), "pass the config.json of a run")
        if config_file is not None
        else {}
    )
    game = game or base.get("game")
    if _is_team_game(game, given, base):
        return _new_team_run(game, given, base)
    _refuse_team_options(given, game or "this game")
    return _new_run(game, given, base)


def parse_teams(raw: Any) -> str | dict[str, list[str]]:
    """``teams``: ``"prefix"``, a mapping ``{team: [agent, ...]}`` or that mapping in JSON."""
    if raw == "prefix":
        return raw
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
    if not isinstance(value, Mapping) or not all(
        isinstance(agents, list | tuple) and all(isinstance(a, str) for a in agents)
        for agents in value.values()
    ):
        raise TrainError(
            f"--teams takes 'prefix' or a JSON object of team -> list of agent names, got "
            f'{raw!r}; e.g. --teams \'{{"red": ["first_0", "third_0"], "blue": '
            f'["second_0", "fourth_0"]}}\'.'
        )
    return {team: list(agents) for team, agents in value.items()}


# ------------------------------------------------------------------------------------------------
# The kind of run
# ------------------------------------------------------------------------------------------------


def _is_team_game(game: str | None, given: Mapping[str, Any], base: Mapping[str, Any]) -> bool:
    if "teams" in given:
        return True
    if base.get("kind") == TEAM_CONFIG_KIND and game == base.get("game"):
        return True
    if game in GAMES:
        try:
            return recipe_for(game, given.get("algo")).teams is not None
        except KeyError:
            return False
    return False


def _refuse_team_options(given: Mapping[str, Any], what: str) -> None:
    for key in ("team_change", "shared"):
        if key in given:
            raise TrainError(
                f"{option_name(key)} applies to team runs; {what} has no teams: pass --teams "
                "prefix or --teams '{\"team\": [agent, ...], ...}' (a new run)."
            )


def _refuse_single_options(given: Mapping[str, Any]) -> None:
    for key in _SINGLE_ONLY:
        if key in given:
            raise TrainError(
                f"{option_name(key)} applies to single-learner runs, not to team runs "
                "(TeamSelfPlay draws each team's opponents from the other teams' archives); "
                "drop it."
            )


def _refuse_env_generator(given: Mapping[str, Any], base: Mapping[str, Any]) -> None:
    from_file = "env_generator" not in given and bool(base.get("env_generator"))
    if given.get("env_generator") is not None or from_file:
        where = "the --config file's env_generator" if from_file else "--env-generator"
        raise TrainError(
            f"{where} does not work with a team run (--teams, a team game's recipe or a team "
            "run's directory): environment generators configure the games of single-learner "
            "runs only, and a team run would ignore it. Drop --teams or --env-generator (or the "
            "env_generator key of the config file)."
        )


# ------------------------------------------------------------------------------------------------
# Resuming
# ------------------------------------------------------------------------------------------------


def _resume(run: Path, game: str | None, given: dict[str, Any]) -> RunConfig | TeamRunConfig:
    path = run / CONFIG_NAME
    stored = read_json_object(path, "--resume needs a run directory written by train")
    team = stored.get("kind") == TEAM_CONFIG_KIND or "teams" in given
    if team:
        _refuse_env_generator(given, {})
    else:
        _refuse_team_options(given, f"the run in {run}")
    if game and game != stored.get("game"):
        raise TrainError(
            f"{run} holds a run of {stored.get('game')!r}, not {game!r}; drop GAME or "
            "pick the right run directory."
        )
    for key in _FIXED_ON_TEAM_RESUME if team else _FIXED_ON_PLAIN_RESUME:
        if given.get(key) is not None:
            raise TrainError(
                f"{option_name(key)} cannot change on --resume; start a new run instead."
            )
    given.pop("timesteps", None)  # this call's steps, not the run's: train() takes them
    if team:
        _refuse_single_options(given)
        if "models" not in stored:  # written once the models exist: a run that trained
            raise TrainError(f"{path} has no 'models'; it was not written by a team run of train.")
        config = TeamRunConfig.from_json(stored, path)
        config = _with_team_overrides(config, given)
        check_team_config(config)
        return config
    config = RunConfig.from_json(stored, path)
    config = _with_overrides(config, given)
    check_config(config)
    return config


# ------------------------------------------------------------------------------------------------
# A new single-learner run
# ------------------------------------------------------------------------------------------------


def _check_game(game: str | None, example: str) -> str:
    if not game:
        raise TrainError(
            f"Name a game: {', '.join(GAMES)} or an import path 'module:function' "
            f"(e.g. `sp-wrappers train {example}`)."
        )
    try:
        game_factory(game)
    except UnknownGameError as error:
        raise TrainError(str(error)) from None
    return game


def _new_run(game: str | None, given: Mapping[str, Any], base: Mapping[str, Any]) -> RunConfig:
    game = _check_game(game, "tictactoe_v3")
    same_game = base.get("game") == game
    algo = given.get("algo") or (base.get("algo") if same_game else None)
    if algo is None and game not in RECIPES:
        # No recipe: MaskablePPO when the game has action masks, PPO otherwise.
        kwargs = dict(base.get("game_kwargs") or {}) if same_game else {}
        kwargs.update(given.get("game_kwargs") or {})
        learner = given.get("learner") or "random"
        probe = probe_or_fail(game_factory(game, kwargs), game, kwargs, learner)
        algo = "maskable_ppo" if probe.has_masks else "ppo"
    try:
        recipe = recipe_for(game, algo)
    except KeyError:
        raise TrainError(f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}.") from None
    data = RunConfig(
        game=game,
        game_kwargs=dict(recipe.game_kwargs),
        algo=recipe.algo,
        recipe="tuned" if recipe.tuned else "generic",
        hyperparams=dict(recipe.hyperparams),
        sampler={**SAMPLER_DEFAULTS, **recipe.sampler},
        learner=recipe.learner,
        n_envs=recipe.n_envs,
        save_every=recipe.save_every,
        seed=0,
        timesteps=recipe.timesteps,
        eval_games=recipe.eval_games,
        draw_reward=recipe.draw_reward,
        symmetries=recipe.symmetries,
        strength_every=recipe.strength_every,
    ).to_json()
    from_file = same_game and base.get("algo") == data["algo"]  # the file's settings are the user's
    if same_game:
        data.update({key: base[key] for key in _FROM_FILE if key in base})
        data["sampler"].update(base.get("sampler") or {})
        if from_file:
            data["hyperparams"] = dict(base.get("hyperparams") or data["hyperparams"])
            data["recipe"] = base.get("recipe", "file")
    config = _with_overrides(RunConfig.from_json(data), given)
    if not from_file:
        hyperparams = fit_to_budget(
            config.algo, config.hyperparams, config.timesteps, given=given.get("hyperparams") or {}
        )
        config = config.replace(hyperparams=hyperparams)
    check_config(config)
    return config


def _with_overrides(config: RunConfig, given: Mapping[str, Any]) -> RunConfig:
    """``config`` with the user's choices: ``game_kwargs`` and ``hyperparams`` added to its own,
    the sampler's settings to its sampler, the others in place (0 ``window`` and 0
    ``max_snapshots``: all; ``symmetries`` ``"none"``: off)."""
    changes = {
        key: value
        for key, value in given.items()
        if key in _PLAIN_FIELDS and key not in ("game_kwargs", "hyperparams", "sampler")
    }
    if "game_kwargs" in given:
        changes["game_kwargs"] = {**config.game_kwargs, **given["game_kwargs"]}
    if given.get("hyperparams"):
        changes["hyperparams"] = {**config.hyperparams, **given["hyperparams"]}
        changes["recipe"] = config.recipe + "+overrides"
    if changes.get("symmetries") == "none":
        changes["symmetries"] = None
    if changes.get("max_snapshots") == 0:
        changes["max_snapshots"] = None
    sampler = {key: given[key] for key in SAMPLER_DEFAULTS if key in given}
    if sampler:
        if sampler.get("window") == 0:
            sampler["window"] = None
        changes["sampler"] = {**config.sampler, **sampler}
    return config.replace(**changes)


# ------------------------------------------------------------------------------------------------
# A new team run
# ------------------------------------------------------------------------------------------------


def _new_team_run(
    game: str | None, given: Mapping[str, Any], base: Mapping[str, Any]
) -> TeamRunConfig:
    _refuse_env_generator(given, base)
    if not game:
        raise TrainError("Name a game, e.g. `sp-wrappers train simple_tag_v3`.")
    game = _check_game(game, "simple_tag_v3")
    same_game = base.get("game") == game and base.get("kind") == TEAM_CONFIG_KIND
    algo = given.get("algo") or (base.get("algo") if same_game else None)
    try:
        recipe = recipe_for(game, algo)
    except KeyError:
        raise TrainError(f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}.") from None
    spec = GAMES.get(game)
    data = TeamRunConfig(
        game=game,
        game_kwargs=dict(recipe.game_kwargs),
        algo=recipe.algo,
        recipe="tuned" if recipe.tuned else "generic",  # as a single-learner run says
        hyperparams=dict(recipe.hyperparams),
        teams=recipe.teams if recipe.teams is not None else (spec.teams if spec else None),
        team_change=recipe.team_change,
        # swap_every None: TeamSelfPlay's default, the same number of swaps for every team.
        sampler={
            "window": recipe.sampler.get("window", SAMPLER_DEFAULTS["window"]),
            "latest_ratio": recipe.sampler.get("latest_ratio", SAMPLER_DEFAULTS["latest_ratio"]),
            "swap_every": None,
            "swap_unit": "steps",
            "strategy": recipe.sampler.get("strategy", SAMPLER_DEFAULTS["strategy"]),
        },
        n_envs=recipe.n_envs,
        save_every=recipe.save_every,
        seed=0,
        timesteps=recipe.timesteps,
        eval_games=recipe.eval_games,
    ).to_json()
    from_file = same_game and base.get("algo") == data["algo"]
    if same_game:
        data.update({key: base[key] for key in _TEAM_FROM_FILE if key in base})
        data["sampler"].update(
            {k: v for k, v in (base.get("sampler") or {}).items() if k in TEAM_SAMPLER_KEYS}
        )
        if from_file:
            data["hyperparams"] = dict(base.get("hyperparams") or data["hyperparams"])
            data["recipe"] = base.get("recipe", "file")
    config = TeamRunConfig.from_json(data)
    if "teams" in given:
        config = config.replace(teams=parse_teams(given["teams"]))
    if config.teams is None:  # pragma: no cover - a game without teams is a plain run
        raise TrainError(f"{game} has no teams; pass --teams prefix or a JSON mapping.")
    if "game_kwargs" in given:
        config = config.replace(game_kwargs={**config.game_kwargs, **given["game_kwargs"]})
    if given.get("hyperparams"):
        config = config.replace(
            hyperparams={**config.hyperparams, **given["hyperparams"]},
            recipe=config.recipe + "+overrides",
        )
    _refuse_single_options(given)
    config = _with_team_overrides(config, given)
    # No team_change: train_teams picks one that fits every team's rollout once the models
    # exist (about a tenth of the run, a multiple of each rollout).
    if not from_file:
        hyperparams = fit_to_budget(
            config.algo, config.hyperparams, config.timesteps, given=given.get("hyperparams") or {}
        )
        config = config.replace(hyperparams=hyperparams)
    check_team_config(config)
    return config


def _with_team_overrides(config: TeamRunConfig, given: Mapping[str, Any]) -> TeamRunConfig:
    changes: dict[str, Any] = {
        key: value
        for key, value in given.items()
        if key in _TEAM_FIELDS and key not in ("algo", "teams", "game_kwargs", "hyperparams")
    }
    sampler = {key: given[key] for key in TEAM_SAMPLER_KEYS if key in given}
    if sampler:
        if sampler.get("window") == 0:
            sampler["window"] = None
        changes["sampler"] = {**config.sampler, **sampler}
    return config.replace(**changes)
