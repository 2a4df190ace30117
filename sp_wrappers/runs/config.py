"""A run's configuration as typed, frozen data: what ``config.json`` holds, and its checks.

One dataclass per kind of run: :class:`RunConfig` (one learner against its own snapshots),
:class:`TeamRunConfig` (one learner per team, ``TeamSelfPlay``) and :class:`LeagueConfig` (a
league of players); each names its ``kind`` (see :mod:`sp_wrappers.runs.kinds`). Their
(keyword-only) fields are the keys of ``config.json``, in the order it stores them;
``to_json()`` writes exactly that file's object and ``from_json()`` reads it back (keys it does
not know are kept as they are). The format is :data:`CONFIG_FORMAT_VERSION`, unchanged since
0.1 but for the ``kind`` every file now names. :func:`sp_wrappers.runs.resolve` builds a
configuration of any kind from a game, the user's overrides and an optional run or config file.

>>> from sp_wrappers.runs.resolve import resolve_run
>>> config = resolve_run("tictactoe_v3", {"timesteps": 256, "n_envs": 2})
>>> type(config).__name__, config.algo, config.timesteps, config.n_envs
('RunConfig', 'maskable_ppo', 256, 2)
>>> RunConfig.from_json(config.to_json()) == config
True
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..archive.store import PRUNE_BY
from ..core.errors import SpWrappersError
from ..core.seats import ILLEGAL_ACTION_MODES
from ..games.registry import GAMES, reference_opponents
from ..opponents.sampler import STRATEGIES
from ..opponents.slots import OPPONENT_DRAWS, SWAP_UNITS
from .recipes import ALGOS, SAMPLER_DEFAULTS
from .recipes import linear_schedule as learning_rate_schedule

__all__ = [
    "TrainError",
    "JsonConfig",
    "WHEN_SET",
    "CONFIG_FORMAT_VERSION",
    "SINGLE_CONFIG_KIND",
    "TEAM_CONFIG_KIND",
    "LEAGUE_CONFIG_KIND",
    "PSRO_CONFIG_KIND",
    "LEAGUE_CONFIG_FORMAT_VERSION",
    "TEAM_SAMPLER_KEYS",
    "RunConfig",
    "TeamRunConfig",
    "LeagueConfig",
    "LeagueError",
    "GameConfig",
    "GameProbe",
    "check_config",
    "check_team_config",
    "check_sampler_and_algo",
    "option_name",
    "probe_or_fail",
    "read_json_object",
    "magnet_settings",
    "MAGNET_ALGOS",
    "check_magnet_algo",
]

CONFIG_FORMAT_VERSION = 1

#: ``config.json``'s ``"kind"`` of each kind of run (0.2's single-learner runs wrote none, its
#: leagues ``"command": "league"``; :func:`~sp_wrappers.runs.kinds.kind_of_json` reads both).
SINGLE_CONFIG_KIND = "single"
TEAM_CONFIG_KIND = "teams"
LEAGUE_CONFIG_KIND = "league"
#: A PSRO run's (its configuration, :class:`~sp_wrappers.runs.psro.PSROConfig`, is PSRO's).
PSRO_CONFIG_KIND = "psro"
LEAGUE_CONFIG_FORMAT_VERSION = 1

#: The sampler settings a team run uses (TeamSelfPlay's knobs, applied to every team).
TEAM_SAMPLER_KEYS = ("window", "latest_ratio", "swap_every", "swap_unit", "strategy")


class TrainError(SpWrappersError):
    """A user error in a training run (a bad config, game or algorithm); the message names the
    fix. ``sp-wrappers`` prints it on one line and exits with status 2."""


def option_name(key: str) -> str:
    """How an error of this layer names a configuration key: ``"save_every"`` ->
    ``"`save_every`"`` (the command line shows its own option there, ``--save-every``)."""
    return f"`{key}`"


# ------------------------------------------------------------------------------------------------
# The configurations
# ------------------------------------------------------------------------------------------------

#: The metadata of a field written only when set (a new run's config has no history yet).
WHEN_SET = {"when_set": True}


class JsonConfig:
    """The base of every run configuration: ``to_json`` / ``from_json`` over a frozen dataclass
    whose fields are ``config.json``'s keys, in order (``extra`` holds the keys it does not
    know, written back after its own)."""

    def to_json(self) -> dict[str, Any]:
        """The object ``config.json`` stores."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name == "extra" or (f.metadata.get("when_set") and value in (None, ())):
                continue
            out[f.name] = _plain(value)
        out.update(_plain(getattr(self, "extra", {})))
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: Path | str | None = None) -> Any:
        """The configuration in ``data`` (``config.json``'s object); ``source`` names the file in
        the error when a required key is missing."""
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        names = {f.name for f in fields} - {"extra"}
        for key in (f.name for f in fields if _required(f)):
            if key not in data:
                where = source or "the configuration"
                raise TrainError(f"{where} has no {key!r}; it was not written by {cls._writer()}.")
        kwargs = {key: _copy(data[key]) for key in names if key in data}
        if "history" in kwargs:
            kwargs["history"] = tuple(kwargs["history"] or ())
        extra = {key: _copy(value) for key, value in data.items() if key not in names}
        return cls(**kwargs, extra=extra)

    @classmethod
    def _writer(cls) -> str:
        return "train"

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (the configuration itself never changes)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


def _required(f: dataclasses.Field[Any]) -> bool:
    """A key ``config.json`` must hold: a field without a default."""
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value)) if isinstance(value, dict | list) else value


@dataclass(frozen=True, kw_only=True)
class RunConfig(JsonConfig):
    """The configuration of a single-learner run (``sp-wrappers train GAME``): ``config.json``.

    Build one with :func:`~sp_wrappers.runs.resolve.resolve_run` (the game's recipe, a config
    file, the user's overrides, checked) and start it with :func:`sp_wrappers.runs.train`.

    :param game: a registered game or ``module:function``.
    :param game_kwargs: the game constructor's keyword arguments.
    :param algo: the learner (a key of :data:`~sp_wrappers.runs.recipes.ALGOS`).
    :param recipe: where the settings came from (``tuned``, ``generic``, ``file``, ``+overrides``).
    :param hyperparams: the learner's keyword arguments (``learning_rate`` may be ``"lin_<r>"``).
    :param sampler: :class:`~sp_wrappers.OpponentSampler` settings (keys of ``SAMPLER_DEFAULTS``).
    :param learner: the learner's seat: ``random``, ``alternate`` or an agent name.
    :param n_envs: game copies stepped together.
    :param save_every: snapshot and checkpoint interval, in learner steps.
    :param seed: the run's seed.
    :param timesteps: the whole run's learner steps.
    :param eval_games: end-of-run games against each reference opponent.
    :param draw_reward: added to the learner's reward for a drawn game.
    :param max_snapshots: snapshots kept in the archive (``None``: all).
    :param prune_by: which snapshots pruning keeps beside the first and the newest: ``"spread"``
        or ``"rating"`` (see :class:`~sp_wrappers.SnapshotArchive`'s ``prune_by``); ``None``
        (the default, not written to ``config.json``, so files of 0.2 round-trip): ``"spread"``.
    :param fit_every: Bradley-Terry refit interval in learner steps (0: off).
    :param opponent_draw: ``per_env`` or ``shared``.
    :param illegal_action: ``loss`` or ``raise``.
    :param env_generator: ``module:function`` of an environment generator, or ``None``.
    :param symmetries: ``"auto"``, a game's name or ``None`` (the real view).
    :param strength_every: strength evaluation interval in learner steps (0: off; ``None``: a
        tenth of the run).
    :param strength_plies: forced opening moves of the strength evaluations (``None``: the
        game's).
    :param exploitability_every: exact exploitability measurement interval in learner steps,
        for games where it fits (0: off; ``None``: a tenth of runs of at least 20,000 steps; see
        :func:`~sp_wrappers.runs.run_logs.exploitability_callback`).
    :param magnet: the magnet regulariser's settings (``{"kl", "refresh", "unit", "average"}``,
        or the text ``"kl=0.05,refresh=20"``; see
        :class:`~sp_wrappers.training.magnet.MagnetSettings`); ``None`` (or ``"none"``): off.
    :param history: one entry per ``train`` call on the run (written by :func:`train`).
    :param sp_wrappers_version: the version that last trained the run.
    :param extra: keys of the file this version does not know, kept as they are.
    :param kind: ``"single"`` (0.2's files have none; they read as this).
    """

    format_version: int = CONFIG_FORMAT_VERSION
    kind: str = SINGLE_CONFIG_KIND
    game: str
    game_kwargs: Mapping[str, Any]
    algo: str
    recipe: str = "file"
    hyperparams: Mapping[str, Any]
    sampler: Mapping[str, Any]
    learner: str
    n_envs: int
    save_every: int
    seed: int
    timesteps: int
    eval_games: int
    draw_reward: float = 0.0
    max_snapshots: int | None = None
    prune_by: str | None = field(default=None, metadata=WHEN_SET)
    fit_every: int = 0
    opponent_draw: str = "per_env"
    illegal_action: str = "loss"
    env_generator: str | None = None
    symmetries: Any = None
    strength_every: int | None = None
    strength_plies: int | None = field(default=None, metadata=WHEN_SET)
    exploitability_every: int | None = field(default=None, metadata=WHEN_SET)
    magnet: Mapping[str, Any] | None = field(default=None, metadata=WHEN_SET)
    history: tuple[Mapping[str, Any], ...] = field(default=(), metadata=WHEN_SET)
    sp_wrappers_version: str | None = field(default=None, metadata=WHEN_SET)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sampler", {**SAMPLER_DEFAULTS, **self.sampler})
        object.__setattr__(self, "magnet", magnet_settings(self.magnet))


def magnet_settings(raw: Any) -> dict[str, Any] | None:
    """``magnet`` as ``config.json`` stores it: ``None`` for off (``None``, ``"none"``, ``{}``),
    else the checked settings' object (from the object or the text ``"kl=0.05,refresh=20"``)."""
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in ("none", "off", "")):
        return None
    if isinstance(raw, Mapping) and not raw:
        return None
    from ..training.magnet import MagnetSettings  # torch: only when a run has a magnet

    return MagnetSettings.from_json(raw).to_json()


@dataclass(frozen=True, kw_only=True)
class TeamRunConfig(JsonConfig):
    """The configuration of a team run (``sp-wrappers train --teams``): ``config.json``.

    ``timesteps``, ``save_every`` and ``team_change`` count each team's own learner steps. Start
    one with :func:`sp_wrappers.runs.train_teams`.

    :param game: a registered game or ``module:function``.
    :param game_kwargs: the game constructor's keyword arguments.
    :param algo: every team's learner.
    :param recipe: where the settings came from.
    :param hyperparams: the learner's keyword arguments.
    :param teams: ``"prefix"`` or ``{team: [agent, ...]}``.
    :param team_change: learner steps of the learning team before the next one learns
        (``None``: about a tenth of the run, chosen when the models exist).
    :param shared: one model for every team (``True``), one per team (``False``) or one per
        distinct pair of spaces (``None``).
    :param sampler: the sampler settings of every team (:data:`TEAM_SAMPLER_KEYS`).
    :param n_envs: game copies stepped together.
    :param save_every: snapshot interval in learner steps.
    :param seed: the run's seed.
    :param timesteps: each team's learner steps over the whole run.
    :param eval_games: end-of-run games of each team against random teams.
    :param models: which teams each model plays (written by :func:`train_teams`).
    :param history: one entry per call on the run.
    :param sp_wrappers_version: the version that last trained the run.
    :param extra: keys this version does not know, kept as they are.
    """

    format_version: int = 1
    kind: str = TEAM_CONFIG_KIND
    game: str
    game_kwargs: Mapping[str, Any] = field(default_factory=dict)
    algo: str
    recipe: str = "file"
    hyperparams: Mapping[str, Any] = field(default_factory=dict)
    teams: Any
    team_change: int | None
    shared: bool | None = None
    sampler: Mapping[str, Any]
    n_envs: int
    save_every: int
    seed: int
    timesteps: int
    eval_games: int
    models: Mapping[str, list[str]] | None = field(default=None, metadata=WHEN_SET)
    history: tuple[Mapping[str, Any], ...] = field(default=(), metadata=WHEN_SET)
    sp_wrappers_version: str | None = field(default=None, metadata=WHEN_SET)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def _writer(cls) -> str:
        return "a team run of train"


@dataclass(frozen=True, kw_only=True)
class GameConfig(JsonConfig):
    """The part of ``config.json`` every command that opens a run reads, whatever its kind: a
    file beside an archive that names only its game (``{"game": "tictactoe_v3"}``, written by
    hand) reads as this when it is no whole run's configuration.

    :param game: the game the archive's snapshots play (``None``: not named).
    :param game_kwargs: the game constructor's keyword arguments.
    :param hyperparams: the learner's keyword arguments (their classes are trusted).
    :param extra: the file's other keys, kept as they are.

    >>> GameConfig.from_json({"game": "tictactoe_v3", "note": 1}).game
    'tictactoe_v3'
    """

    game: str | None = None
    game_kwargs: Mapping[str, Any] = field(default_factory=dict)
    hyperparams: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)


class LeagueError(TrainError):
    """A user error in a league run: printed on one line, exit status 2."""


@dataclass(frozen=True, kw_only=True)
class LeagueConfig(JsonConfig):
    """The configuration of a league run (``sp-wrappers league GAME``): ``config.json``.

    :param game: a registered game or ``module:function``.
    :param game_kwargs: the game constructor's keyword arguments.
    :param algo: every player's learner.
    :param hyperparams: the learner's keyword arguments.
    :param league: the roles: ``kind`` (``alphastar`` or ``selfplay``), ``main_agents``,
        ``main_exploiters``, ``league_exploiters``, AlphaStar ``settings``, and the self-play
        league's ``save_every`` and ``latest_ratio``.
    :param chunk_steps: steps each player learns between league updates.
    :param n_envs: game copies per player.
    :param seed: the run's seed.
    :param timesteps: learner steps of all players together.
    :param max_frozen: cap on frozen players in matchmaking (``None``: no cap).
    :param eval_games: end-of-run games of each main agent against each reference bot.
    :param symmetries: ``"auto"`` or a game's name: every player's learner episodes in a random
        symmetric view of the board, as a train run's; ``None``: the real view only.
    :param magnet: every learning player's magnet regulariser (see :class:`RunConfig`'s
        ``magnet``); ``None``: none.
    :param history: one entry per call on the run.
    :param extra: keys this version does not know, kept as they are.
    :param command: ``"league"``, what 0.2 wrote to tell a league's file (kept, so that 0.2 still
        reads it); ``kind`` says the same.
    """

    format_version: int = LEAGUE_CONFIG_FORMAT_VERSION
    command: str = LEAGUE_CONFIG_KIND
    kind: str = LEAGUE_CONFIG_KIND
    game: str
    game_kwargs: Mapping[str, Any] = field(default_factory=dict)
    algo: str
    hyperparams: Mapping[str, Any] = field(default_factory=dict)
    league: Mapping[str, Any]
    chunk_steps: int
    n_envs: int
    seed: int = 0
    timesteps: int
    max_frozen: int | None = None
    eval_games: int
    symmetries: str | None = field(default=None, metadata=WHEN_SET)
    magnet: Mapping[str, Any] | None = field(default=None, metadata=WHEN_SET)
    history: tuple[Mapping[str, Any], ...] = field(default=(), metadata=WHEN_SET)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "magnet", magnet_settings(self.magnet))

    @classmethod
    def _writer(cls) -> str:
        return "league"


# ------------------------------------------------------------------------------------------------
# The game, probed
# ------------------------------------------------------------------------------------------------


@dataclass
class GameProbe:
    """What one copy of the game tells about itself before training."""

    observation_space: Any
    action_space: Any
    has_masks: bool


def _probe_game(env_fn: Callable[[], Any], learner: str) -> GameProbe:
    from ..envs.selfplay_env import SelfPlayEnv

    try:
        env = SelfPlayEnv(env_fn(), learner=learner)
    except ValueError as error:  # e.g. learner="random" on a game whose seats differ
        raise TrainError(str(error)) from None
    try:
        env.reset(seed=0)
        has_masks = env.driver.learner_mask() is not None
        return GameProbe(env.observation_space, env.action_space, has_masks)
    finally:
        env.close()


def probe_or_fail(
    env_fn: Callable[[], Any], game: str, kwargs: Mapping[str, Any], learner: str
) -> GameProbe:
    """The game's spaces and masks as the learner sees them; a game that cannot be built is a
    :class:`TrainError` naming the game and its keyword arguments."""
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
    """The JSON object in ``path``; a missing file says ``what`` to do."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise TrainError(f"{path} does not exist; {what}.") from None
    except (OSError, ValueError) as error:
        raise TrainError(f"Cannot read {path}: {error}.") from None
    if not isinstance(data, dict):
        raise TrainError(f"{path} must hold a JSON object.")
    return data


# ------------------------------------------------------------------------------------------------
# Checks
# ------------------------------------------------------------------------------------------------


def check_config(config: RunConfig) -> None:
    """Range checks with one-line messages (the sampler and SB3 would raise less clearly)."""
    s = config.sampler
    _check_counts(config, " step")
    if config.max_snapshots is not None and config.max_snapshots < 2:
        raise TrainError(
            "`max_snapshots` must be at least 2 (0 keeps every snapshot), got "
            f"{config.max_snapshots}."
        )
    if config.prune_by is not None and config.prune_by not in PRUNE_BY:
        raise TrainError(
            f"`prune_by` must be one of {', '.join(PRUNE_BY)}, got {config.prune_by!r}."
        )
    every = config.strength_every
    if every is not None and (int(every) != every or every < 0):
        raise TrainError(
            f"`strength_every` must be a number of learner steps >= 0 (0: off), got {every!r}."
        )
    every = config.exploitability_every
    if every is not None and (int(every) != every or every < 0):
        raise TrainError(
            f"`exploitability_every` must be a number of learner steps >= 0 (0: off), got "
            f"{every!r}."
        )
    plies = config.strength_plies
    if plies is not None and (int(plies) != plies or plies < 0):
        raise TrainError(f"`strength_plies` must be a number of moves >= 0, got {plies!r}.")
    if config.fit_every < 0:
        raise TrainError(f"`fit_every` must be at least 0 (0: off), got {config.fit_every}.")
    if not -1.0 <= float(config.draw_reward) <= 1.0:
        raise TrainError(
            f"`draw_reward` must be between -1 and 1 (a win is worth 1), got {config.draw_reward}."
        )
    choices = (("opponent_draw", OPPONENT_DRAWS), ("illegal_action", ILLEGAL_ACTION_MODES))
    for key, allowed in choices:
        if getattr(config, key) not in allowed:
            raise TrainError(
                f"{option_name(key)} must be one of {', '.join(allowed)}, got "
                f"{getattr(config, key)!r}."
            )
    for key in ("latest_ratio", "random_ratio", "reference_ratio"):
        if not 0.0 <= float(s[key]) <= 1.0:
            raise TrainError(f"{option_name(key)} must be between 0 and 1, got {s[key]}.")
    if float(s["random_ratio"]) + float(s["reference_ratio"]) > 1.0:
        raise TrainError("`random_ratio` and `reference_ratio` add up to more than 1.")
    if float(s["reference_ratio"]) > 0 and len(reference_opponents(config.game)) < 2:
        with_bots = ", ".join(name for name, spec in GAMES.items() if spec.references)
        raise TrainError(
            f"`reference_ratio` needs a game with a reference bot ({with_bots}); "
            f"{config.game} has none."
        )
    if config.env_generator:
        from ..training.env_generator import load_generator

        try:
            load_generator(config.env_generator)
        except ValueError as error:
            raise TrainError(str(error)) from None
    check_sampler_and_algo(config.sampler, config.algo, config.hyperparams)
    check_magnet_algo(config.magnet, config.algo)


def check_magnet_algo(magnet: Any, algo: str, error: type[TrainError] = TrainError) -> None:
    """A ``magnet`` only with an on-policy learner the magnet can regularise."""
    if magnet is not None and algo not in MAGNET_ALGOS:
        raise error(
            f"`magnet` regularises the on-policy learners {', '.join(MAGNET_ALGOS)}, not "
            f"{algo}; drop `magnet` or pick one of them with `algo`."
        )


#: The learners :class:`~sp_wrappers.training.magnet.MagnetCallback` regularises.
MAGNET_ALGOS = ("ppo", "maskable_ppo", "a2c", "trpo")


def check_team_config(config: TeamRunConfig) -> None:
    """Range checks of a team run with one-line messages."""
    _check_counts(config, "")
    if config.team_change is not None and int(config.team_change) < 1:
        raise TrainError(
            f"`team_change` must be a positive number of learner steps, got {config.team_change}."
        )
    if not 0.0 <= float(config.sampler["latest_ratio"]) <= 1.0:
        raise TrainError(
            f"`latest_ratio` must be between 0 and 1, got {config.sampler['latest_ratio']}."
        )
    check_sampler_and_algo(config.sampler, config.algo, config.hyperparams)


def _check_counts(config: RunConfig | TeamRunConfig, step: str) -> None:
    """The counts every run has: at least one step, one env copy, a snapshot interval of one
    step (``step`` names the unit in the message) and no negative number of games."""
    for key, least in (("timesteps", 1), ("n_envs", 1), ("save_every", 1), ("eval_games", 0)):
        value = getattr(config, key)
        if int(value) < least:
            unit = step if key == "save_every" else ""
            raise TrainError(f"{option_name(key)} must be at least {least}{unit}, got {value}.")


def check_sampler_and_algo(
    sampler: Mapping[str, Any], algo: str, hyperparams: Mapping[str, Any]
) -> None:
    """The checks a single-learner and a team run share: the sampler's window, swap interval,
    unit and strategy, the algorithm's name and the learning rate (a number or a schedule)."""
    s = sampler
    if s["window"] is not None and s["window"] < 1:
        raise TrainError(f"`window` must be at least 1 (0 means all snapshots), got {s['window']}.")
    if s["swap_every"] is not None and s["swap_every"] < 1:
        raise TrainError(f"`swap_every` must be at least 1, got {s['swap_every']}.")
    if s["swap_unit"] not in SWAP_UNITS:
        raise TrainError(
            f"`swap_unit` must be one of {', '.join(SWAP_UNITS)}, got {s['swap_unit']!r}."
        )
    if s["strategy"] not in STRATEGIES:
        raise TrainError(
            f"`strategy` must be one of {', '.join(STRATEGIES)}, got {s['strategy']!r}."
        )
    if algo not in ALGOS:
        raise TrainError(f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}.")
    lr = hyperparams.get("learning_rate")
    if lr is not None:
        try:
            learning_rate_schedule(lr)
        except (TypeError, ValueError) as error:
            raise TrainError(str(error)) from None
