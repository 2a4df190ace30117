"""From a game and the user's choices to one checked run configuration, of any kind.

:func:`resolve` is the one place that decides the kind of run (a single learner, teams, or a
league when asked), reads ``config.json`` (of a run to resume, through
:class:`~sp_wrappers.runs.rundir.RunDir`) or a config file (to replay) once, fills in the game's
recipe and probe, applies the user's overrides and checks the result once. The command line
turns its options into the overrides; a Python user passes them directly::

    config = resolve("tictactoe_v3", {"timesteps": 50_000, "hyperparams": {"ent_coef": 0.0}})
    sp_wrappers.runs.start(config, "runs/ttt")

Overrides are keyed by the configuration's field names (:class:`~sp_wrappers.runs.config.RunConfig`,
:class:`~sp_wrappers.runs.config.TeamRunConfig`, :class:`~sp_wrappers.runs.config.LeagueConfig`)
and by the sampler's settings (``window``, ``latest_ratio``, ..., ``deterministic``); a key
missing from the mapping is a choice the user did not make. :func:`resolve_run` (single learner
or teams) and :func:`resolve_league` are its two halves.

>>> config = resolve("simple_tag_v3", {"team_change": 5000})
>>> type(config).__name__, config.teams, config.team_change, config.sampler["swap_every"]
('TeamRunConfig', 'prefix', 5000, None)
>>> config = resolve("tictactoe_v3", {"timesteps": 256, "main_exploiters": 0}, kind="league")
>>> config.league["kind"], config.league["main_exploiters"], config.chunk_steps
('alphastar', 0, 4096)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.settings import declared
from ..games.registry import GAMES, UnknownGameError, game_factory
from .config import (
    LEAGUE_CONFIG_KIND,
    SINGLE_CONFIG_KIND,
    TEAM_CONFIG_KIND,
    TEAM_SAMPLER_KEYS,
    LeagueConfig,
    LeagueError,
    LeagueRoles,
    RunConfig,
    TeamRunConfig,
    TrainError,
    check_config,
    check_magnet_algo,
    check_team_config,
    declared_settings,
    option_name,
    probe_or_fail,
    read_json_object,
)
from .kinds import kind_of_json, kind_resolver
from .options import RunOptions
from .recipes import ALGOS, RECIPES, SAMPLER_DEFAULTS, fit_to_budget, recipe_for
from .rundir import RunDir

__all__ = [
    "resolve",
    "resolve_run",
    "resolve_league",
    "OVERRIDES",
    "LEAGUE_OVERRIDES",
    "parse_teams",
]

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
#: What a call chooses, not the run (``RunOptions``): no override.
_OPTIONS = set(declared(RunOptions))
_SINGLE, _TEAMS = declared_settings(SINGLE_CONFIG_KIND), declared_settings(TEAM_CONFIG_KIND)
#: Every key an override may have: the settings a single-learner or a team run takes.
OVERRIDES = frozenset((set(_SINGLE) | set(_TEAMS)) - _OPTIONS)
#: Overrides of single-learner runs only, refused on a team run.
_SINGLE_ONLY = tuple(sorted(OVERRIDES - set(_TEAMS)))
#: What cannot change when a run resumes (``config_file``: a config file given with a run).
_FIXED_ON_PLAIN_RESUME = (
    *(key for key, (what, _) in _SINGLE.items() if SINGLE_CONFIG_KIND in what.fixed),
    "config_file",
)
_FIXED_ON_TEAM_RESUME = (
    *(key for key, (what, _) in _TEAMS.items() if TEAM_CONFIG_KIND in what.fixed),
    "config_file",
)
#: What a new run takes from a config file of the same game (the rest: the recipe's).
_FROM_FILE = _PLAIN_FIELDS - _RECORDED - {"game", "algo", "hyperparams", "sampler"}
_TEAM_FROM_FILE = _TEAM_FIELDS - _RECORDED - {"game", "algo", "hyperparams", "sampler"}


def resolve(
    game: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    resume: str | Path | None = None,
    config_file: str | Path | None = None,
    kind: str | None = None,
) -> Any:
    """The checked configuration of a run of any kind: a new one of ``game`` (the game's recipe,
    then ``config_file``'s settings when it holds a run of the same game, then ``overrides``),
    or the run in ``resume`` with ``overrides`` applied.

    :param game: a registered game or ``module:function`` (optional with ``resume`` or
        ``config_file``).
    :param overrides: the user's choices (see :data:`OVERRIDES`, a league's
        :data:`LEAGUE_OVERRIDES`).
    :param resume: a run directory to continue (its ``config.json`` says its kind).
    :param config_file: a run's ``config.json`` to start a new run from.
    :param kind: ``"league"`` for a league, ``"psro"`` for PSRO
        (:func:`~sp_wrappers.runs.psro.resolve_psro`); ``None`` (or ``"single"``, ``"teams"``): a
        single learner or teams, as :func:`resolve_run` decides. With ``resume``, the run's kind
        must agree.
    :return: a :class:`RunConfig`, :class:`TeamRunConfig`, :class:`LeagueConfig` or
        :class:`~sp_wrappers.runs.psro.PSROConfig`.
    :raises TrainError: a bad game, option or file, with the fix.
    """
    stored = None
    if resume is not None and kind_resolver(kind) is None:
        stored = RunDir(resume).kind(f"`resume` needs a run directory written by {kind or 'train'}")
    own = kind_resolver(kind or stored)  # a kind that resolves its own (PSRO): the kinds table's
    if own is not None:
        if stored is not None and kind != stored:
            raise TrainError(
                f"{resume} holds a {stored} run; continue it with sp-wrappers {stored} `resume`."
            )
        if config_file is not None:
            raise TrainError(f"A {kind} run starts from a game, not from a config file; drop it.")
        return own(game, overrides, resume)
    if resume is not None:
        run = RunDir(resume)
        if kind == LEAGUE_CONFIG_KIND and stored != LEAGUE_CONFIG_KIND:
            raise LeagueError(f"{run.path} holds a train run, not a league; use sp-wrappers train.")
        if kind != LEAGUE_CONFIG_KIND and stored == LEAGUE_CONFIG_KIND:
            raise TrainError(
                f"{run.path} holds a league; continue it with sp-wrappers league `resume` "
                f"{run.path}."
            )
        kind = stored
    if kind == LEAGUE_CONFIG_KIND:
        if config_file is not None:
            raise LeagueError("A league starts from a game, not from a config file; drop it.")
        return resolve_league(game, overrides, resume)
    return resolve_run(game, overrides, resume, config_file)


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
        is the steps of this call, not the run's: ``RunOptions.timesteps``.
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
            f"`teams` takes 'prefix' or a JSON object of team -> list of agent names, got "
            f'{raw!r}; e.g. `teams` \'{{"red": ["first_0", "third_0"], "blue": '
            f'["second_0", "fourth_0"]}}\'.'
        )
    return {team: list(agents) for team, agents in value.items()}


# ------------------------------------------------------------------------------------------------
# The kind of run
# ------------------------------------------------------------------------------------------------


def _is_team_game(game: str | None, given: Mapping[str, Any], base: Mapping[str, Any]) -> bool:
    if "teams" in given:
        return True
    if kind_of_json(base) == TEAM_CONFIG_KIND and game == base.get("game"):
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
                f"{option_name(key)} applies to team runs; {what} has no teams: pass `teams` "
                "prefix or `teams` '{\"team\": [agent, ...], ...}' (a new run)."
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
        where = "the `config_file` file's env_generator" if from_file else "`env_generator`"
        raise TrainError(
            f"{where} does not work with a team run (`teams`, a team game's recipe or a team "
            "run's directory): environment generators configure the games of single-learner "
            "runs only, and a team run would ignore it. Drop `teams` or `env_generator` (or the "
            "env_generator key of the config file)."
        )


# ------------------------------------------------------------------------------------------------
# Resuming
# ------------------------------------------------------------------------------------------------


def _resume(run: Path, game: str | None, given: dict[str, Any]) -> RunConfig | TeamRunConfig:
    path = RunDir(run).config_path
    stored = RunDir(run).read_json("`resume` needs a run directory written by train")
    if kind_of_json(stored) == LEAGUE_CONFIG_KIND:
        raise TrainError(
            f"{run} holds a league; continue it with sp-wrappers league `resume` {run}."
        )
    team = kind_of_json(stored) == TEAM_CONFIG_KIND or "teams" in given
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
                f"{option_name(key)} cannot change on `resume`; start a new run instead."
            )
    given.pop("timesteps", None)  # this call's steps, not the run's: train() takes them
    if team:
        _refuse_single_options(given)
        if "models" not in stored:  # written once the models exist: a run that trained
            raise TrainError(f"{path} has no 'models'; it was not written by a team run of train.")
        config = TeamRunConfig.from_json(stored, path)
        config = _with_overrides(config, given)
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
            f"Name a game: {', '.join(GAMES)}, a PettingZoo or OpenSpiel game by its name "
            f"(chess_v6, kuhn_poker) or an import path 'module:function' "
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
        magnet=recipe.magnet,
    ).to_json()
    from_file = _take_file(data, base, same_game, _FROM_FILE, None)
    config = _fit(_with_overrides(RunConfig.from_json(data), given), given, from_file)
    check_config(config)
    return config


def _take_file(
    data: dict[str, Any],
    base: Mapping[str, Any],
    same_game: bool,
    keys: Iterable[str],
    sampler_keys: Iterable[str] | None,
) -> bool:
    """Put a config file's settings of the same game (``keys``, its sampler's ``sampler_keys``,
    ``None``: all) into ``data``, a recipe's configuration; with the same algorithm its
    hyperparameters too. Returns whether they were (the file's settings are then the user's, not
    fitted again)."""
    from_file = same_game and base.get("algo") == data["algo"]
    if same_game:
        data.update({key: base[key] for key in keys if key in base})
        stored = base.get("sampler") or {}
        keep = (
            stored if sampler_keys is None else {k: stored[k] for k in sampler_keys if k in stored}
        )
        data["sampler"].update(keep)
        if from_file:
            data["hyperparams"] = dict(base.get("hyperparams") or data["hyperparams"])
            data["recipe"] = base.get("recipe", "file")
    return from_file


def _fit(config: Any, given: Mapping[str, Any], from_file: bool) -> Any:
    """``config`` with its recipe's hyperparameters fitted to its budget (``from_file``: as the
    file has them), the user's own kept."""
    if from_file:
        return config
    mine = given.get("hyperparams") or {}
    return config.replace(
        hyperparams=fit_to_budget(config.algo, config.hyperparams, config.timesteps, given=mine)
    )


def _with_overrides(config: Any, given: Mapping[str, Any]) -> Any:
    """``config`` (a run's or a team run's) with the user's choices: ``game_kwargs`` and
    ``hyperparams`` added to its own, the sampler's settings to its sampler, the others in place
    (0 ``window`` and 0 ``max_snapshots``: all; ``symmetries`` ``"none"``: off). ``algo`` and
    ``teams`` are the resolver's to apply."""
    fields = {f.name for f in dataclasses.fields(config)}
    changes = {
        key: value
        for key, value in given.items()
        if key in fields and key not in ("algo", "teams", "game_kwargs", "hyperparams", "sampler")
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
    keys = dict.fromkeys([*config.sampler, *TEAM_SAMPLER_KEYS])  # a team's: only its own
    sampler = {key: given[key] for key in keys if key in given}
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
    same_game = base.get("game") == game and kind_of_json(base) == TEAM_CONFIG_KIND
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
    from_file = _take_file(data, base, same_game, _TEAM_FROM_FILE, TEAM_SAMPLER_KEYS)
    config = TeamRunConfig.from_json(data)
    if "teams" in given:
        config = config.replace(teams=parse_teams(given["teams"]))
    if config.teams is None:  # pragma: no cover - a game without teams is a plain run
        raise TrainError(f"{game} has no teams; pass `teams` prefix or a JSON mapping.")
    _refuse_single_options(given)
    config = _with_overrides(config, given)
    # No team_change: the team run picks one that fits every team's rollout once the models
    # exist (about a tenth of the run, a multiple of each rollout).
    config = _fit(config, given, from_file)
    check_team_config(config)
    return config


# ------------------------------------------------------------------------------------------------
# A league
# ------------------------------------------------------------------------------------------------

#: The AlphaStar settings a user may override (the others keep the league's defaults).
_SETTINGS = LeagueRoles.ALPHASTAR

#: Every key a league's overrides may have: the settings a league takes.
LEAGUE_OVERRIDES = frozenset(set(declared_settings(LEAGUE_CONFIG_KIND)) - _OPTIONS)


def resolve_league(
    game: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    resume: str | Path | None = None,
) -> LeagueConfig:
    """The configuration of a new league of ``game`` (its recipe, then ``overrides``), or of the
    league in ``resume`` (``overrides``' ``timesteps``, the total to reach, and ``eval_games``
    replace its own).

    :param game: a registered game or ``module:function``.
    :param overrides: the user's choices (keys of :data:`LEAGUE_OVERRIDES`).
    :param resume: a league's run directory.
    :raises LeagueError: a bad option or run directory, with the fix.
    """
    given = dict(overrides or {})
    unknown = sorted(set(given) - LEAGUE_OVERRIDES)
    if unknown:
        raise LeagueError(
            f"Unknown settings {', '.join(unknown)}; choose from "
            f"{', '.join(sorted(LEAGUE_OVERRIDES))}."
        )
    if resume is not None:
        run = RunDir(resume)
        if run.kind("`resume` needs a run directory written by league") != LEAGUE_CONFIG_KIND:
            raise LeagueError(f"{run.path} holds a train run, not a league; use sp-wrappers train.")
        config = run.config()
        for key in ("timesteps", "eval_games"):  # this call's budget and end-of-run games
            if given.get(key) is not None:
                config = config.replace(**{key: int(given[key])})
        return config
    if game is None:
        raise LeagueError("Name the game: sp-wrappers league GAME (e.g. tictactoe_v3).")
    _check_game(game, "tictactoe_v3")  # before anything is printed or written
    algo = given.get("algo")
    try:
        recipe = recipe_for(game, algo)
    except KeyError:
        raise LeagueError(
            f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}."
        ) from None
    hp = dict(given.get("hyperparams") or {})
    algo = algo or recipe.algo
    budget = int(given.get("timesteps") or recipe.timesteps)
    settings = {key: given[key] for key in _SETTINGS if given.get(key) is not None}
    if "snapshot_max_steps" in settings and "snapshot_min_steps" not in settings:
        from ..league.builders import ALPHASTAR_DEFAULTS

        settings["snapshot_min_steps"] = min(
            ALPHASTAR_DEFAULTS["snapshot_min_steps"], settings["snapshot_max_steps"]
        )
    league = {
        "kind": "selfplay" if given.get("selfplay") else "alphastar",
        "main_agents": given.get("main_agents", 1),
        "main_exploiters": given.get("main_exploiters", 1),
        "league_exploiters": given.get("league_exploiters", 1),
        "settings": settings,
        "save_every": int(given.get("save_every") or recipe.save_every),
        "latest_ratio": float(recipe.sampler.get("latest_ratio", 0.5)),
    }
    eval_games = given.get("eval_games")
    symmetries = given.get("symmetries", recipe.symmetries)
    check_magnet_algo(given.get("magnet"), algo, LeagueError)
    return LeagueConfig(
        game=game,
        game_kwargs={**recipe.game_kwargs, **(given.get("game_kwargs") or {})},
        algo=algo,
        hyperparams={**fit_to_budget(algo, recipe.hyperparams, budget, hp), **hp},
        league=league,
        chunk_steps=int(given.get("chunk_steps") or 4096),
        n_envs=int(given.get("n_envs") or recipe.n_envs),
        seed=int(given.get("seed") or 0),
        timesteps=budget,
        max_frozen=given.get("max_frozen"),
        eval_games=int(eval_games if eval_games is not None else recipe.eval_games),
        symmetries=None if symmetries == "none" else symmetries,
        magnet=given.get("magnet"),
    )
