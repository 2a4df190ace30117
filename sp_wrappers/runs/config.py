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
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..archive.store import PRUNE_BY
from ..core.errors import SpWrappersError
from ..core.seats import ILLEGAL_ACTION_MODES
from ..core.settings import (
    RUN_KINDS_ALL,
    TRAIN_KINDS,
    check_settings,
    count,
    declared,
    setting,
    share,
)
from ..games.registry import GAMES, reference_opponents
from ..opponents.settings import SAMPLER_GROUP, SamplerSettings
from ..opponents.slots import OPPONENT_DRAWS
from .options import RunOptions
from .recipes import ALGOS, SAMPLER_DEFAULTS, installed_algos
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
    "check_sampler",
    "LeagueRoles",
    "declared_settings",
    "SETTING_SOURCES",
    "option_name",
    "probe_or_fail",
    "read_json_object",
    "random_openings_range",
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
#: The help's group of the team options.
TEAMS_GROUP = (
    "teams (one learner per team, TeamSelfPlay; default: the game's recipe, e.g. simple_tag_v3 "
    "and quadrapong_v4)"
)

#: The sampler settings a team run uses (TeamSelfPlay's knobs, applied to every team).
TEAM_SAMPLER_KEYS = SamplerSettings.keys(TEAM_CONFIG_KIND)


class TrainError(SpWrappersError):
    """A user error in a training run (a bad config, game or algorithm); the message names the
    fix. ``sp-wrappers`` prints it on one line and exits with status 2."""


def declared_settings(kind: str) -> dict[str, Any]:
    """``{key: (Setting, default)}`` of every setting a kind of run takes (its configuration's
    fields, the sampler's, a league's roles and the :class:`~sp_wrappers.runs.run.RunOptions`'
    are declared in :data:`SETTING_SOURCES` order, each key once)."""
    return {
        key: value for key, value in declared(*SETTING_SOURCES).items() if kind in value[0].kinds
    }


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
    file, the user's overrides, checked) and start it with :func:`sp_wrappers.runs.start`.

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
    :param random_openings: ``"LO-HI"`` (or ``[LO, HI]``): every learner game starts after a
        random number of random legal moves in [LO, HI] (:class:`~sp_wrappers.games.wrappers.
        RandomOpenings`), which the learner does not learn from; evaluations play the plain
        game. ``None``: off.
    :param exploitability_every: exact exploitability measurement interval in learner steps,
        for games where it fits (0: off; ``None``: a tenth of runs of at least 20,000 steps; see
        :func:`~sp_wrappers.runs.run_logs.exploitability_callback`).
    :param magnet: the magnet regulariser's settings (``{"kl", "refresh", "unit", "average"}``,
        or the text ``"kl=0.05,refresh=20"``; see
        :class:`~sp_wrappers.training.magnet.MagnetSettings`); ``None`` (or ``"none"``): off.
    :param history: one entry per call on the run (written by the run).
    :param sp_wrappers_version: the version that last trained the run.
    :param extra: keys of the file this version does not know, kept as they are.
    :param kind: ``"single"`` (0.2's files have none; they read as this).
    """

    format_version: int = CONFIG_FORMAT_VERSION
    kind: str = SINGLE_CONFIG_KIND
    game: str
    game_kwargs: Mapping[str, Any] = setting(
        help="a keyword argument of the game constructor (JSON value), repeatable",
        flag="game-kwarg",
        type=dict,
        metavar="KEY=VALUE",
        kinds=RUN_KINDS_ALL,
        fixed=TRAIN_KINDS,
    )
    algo: str = setting(
        help="the learner, any installed Stable-Baselines3 / sb3-contrib one: on-policy ppo, "
        "a2c, trpo, maskable_ppo (needs masks), recurrent_ppo (LSTM); off-policy dqn, qrdqn "
        "(discrete actions), sac, td3, ddpg, tqc, crossq (continuous actions); ars "
        "(default: the game's recipe; maskable_ppo when the game has action masks, else ppo)",
        choices=installed_algos,
        kinds=RUN_KINDS_ALL,
        fixed=TRAIN_KINDS,
    )
    recipe: str = "file"
    hyperparams: Mapping[str, Any] = setting(
        help="an algorithm hyperparameter (JSON value), repeatable, e.g. "
        "--hp ent_coef=0.0 --hp 'policy_kwargs={\"net_arch\": [64, 64]}'",
        flag="hp",
        type=dict,
        metavar="KEY=VALUE",
        kinds=RUN_KINDS_ALL,
        fixed=TRAIN_KINDS,
    )
    sampler: Mapping[str, Any]
    learner: str = setting(
        help="learner seat: random (default), alternate, or an agent name",
        metavar="SEAT",
        kinds=("single",),
        fixed=("single",),
    )
    n_envs: int = count(
        help="game copies stepped together (default: the recipe's)",
        low=1,
        kinds=RUN_KINDS_ALL,
        fixed=("teams",),
    )
    save_every: int = count(
        help="snapshot (and model.zip checkpoint) interval in learner steps",
        low=1,
        note="learner steps",
        kinds=(*TRAIN_KINDS, "league"),
    )
    seed: int = setting(help="seed (default: 0)", type=int, kinds=RUN_KINDS_ALL, fixed=TRAIN_KINDS)
    timesteps: int = count(
        help="learner steps, per team in a team run (default: the recipe's; with --resume: "
        "the steps still missing, or N more)",
        low=1,
        kinds=(*TRAIN_KINDS, "league"),
    )
    eval_games: int = count(
        help="end-of-run games against each baseline (default: the recipe's)",
        kinds=(*TRAIN_KINDS, "league"),
    )
    draw_reward: float = setting(
        0.0,
        help="added to the learner's reward for a drawn game (negative: contempt for draws, "
        "so it plays for wins); default: the recipe's, usually 0",
        low=-1.0,
        high=1.0,
        note="a win is worth 1",
        metavar="R",
        type=float,
        kinds=("single",),
    )
    max_snapshots: int | None = count(
        None,
        help="keep at most N snapshots in the archive: the first, the newest N/2 and an even "
        "spread of the rest; older ones are pruned (their games stay in the match history). "
        "Default (0): keep all",
        low=2,
        note="0 keeps every snapshot",
        kinds=("single",),
    )
    prune_by: str | None = setting(
        None,
        help="which snapshots --max-snapshots keeps beside the first and the newest N/2: "
        "'spread' (default) an even spread over the run; 'rating' the strongest, ranked by the "
        "lower end of their skill rating's interval (one lucky game keeps none)",
        choices=PRUNE_BY,
        kinds=("single",),
        when_set=True,
    )
    fit_every: int = count(
        0,
        help="refit the Bradley-Terry ratings over the whole match history every N learner "
        "steps and store them in the archive as 'bt' (default: 0: off; ratings.json is fitted "
        "at the end of the run either way)",
        note="0: off",
        kinds=("single",),
    )
    opponent_draw: str = setting(
        "per_env",
        help="per_env (default): each env copy draws its own opponents, so a rollout mixes "
        "them; shared: one line-up for every copy between swaps (ML-Agents' ghost trainer, one "
        "forward pass for all copies)",
        choices=OPPONENT_DRAWS,
        kinds=("single",),
        group=SAMPLER_GROUP,
    )
    illegal_action: str = setting(
        "loss",
        help="what a learner action its mask forbids does: loss (default; the episode ends as a "
        "loss) or raise (stop with an error naming the action)",
        choices=ILLEGAL_ACTION_MODES,
        kinds=("single",),
    )
    env_generator: str | None = setting(
        None,
        help="an environment generator: FUNCTION(step, index, history) returns each env copy's "
        "game configuration (game keyword arguments, e.g. a komi) at its episode starts; kept "
        "in config.json, the current configurations in env_generator.json (see the how-to)",
        metavar="MODULE:FUNCTION",
        kinds=("single",),
        fixed=("single",),
    )
    symmetries: Any = setting(
        None,
        help="play each learner episode in a random symmetric view of the board (auto: the "
        "game's built-ins: the 8 of the square for tic-tac-toe and Go, the mirror for Connect "
        "Four; checked against the game first); none: the real view (default: the recipe's)",
        metavar="auto|none|GAME",
        kinds=("single", "league"),
    )
    strength_every: int | None = count(
        None,
        help="games with reference players (tictactoe_v3, connect_four_v3): play the learner "
        "against the game's ladder from forced openings every N learner steps, logging "
        "eval/<opponent>/score and eval/rating (TensorBoard, progress.csv) and writing "
        "strength.json and plots/strength.png; 0: off (default: the recipe's, else a tenth of "
        "the run)",
        note="learner steps, 0: off",
        kinds=("single",),
    )
    strength_plies: int | None = count(
        None,
        help="forced opening moves of the strength evaluations, every legal sequence of N moves "
        "in both seats (default: the game's: 1 for tic-tac-toe, 9 openings; 2 for Connect Four, "
        "49)",
        note="moves",
        kinds=("single",),
        when_set=True,
    )
    random_openings: Any = setting(
        None,
        help="start each learner game after LO to HI random legal moves (uniform; the learner "
        "learns only its own moves), so decisive positions come in many shapes; evaluations "
        "play the plain game (e.g. 0-16; default: off)",
        metavar="LO-HI",
        type=str,
        kinds=("single",),
        when_set=True,
    )
    exploitability_every: int | None = setting(
        None,
        help="games small enough to walk (tictactoe_v3; Kuhn and Leduc poker through "
        "openspiel_env): measure the exact exploitability of the learner, of the archive's Nash "
        "mixture and of each snapshot every STEPS learner steps, logging eval/exploitability "
        "and eval/nash_conv and writing exploitability.json; 0: off (default: a tenth of runs "
        "of at least 20,000 steps)",
        low=0,
        note="learner steps, 0: off",
        metavar="STEPS",
        type=int,
        kinds=("single",),
        when_set=True,
    )
    magnet: Mapping[str, Any] | None = setting(
        None,
        help="on-policy learners (ppo, maskable_ppo, a2c, trpo): subtract ETA * (log pi(a|s) - "
        "log magnet(a|s)) from each step's reward and make the magnet the current policy every "
        "N updates (unit=steps: learner steps), or the mixture of the K newest; self-play that "
        "settles in poker instead of cycling (R-NaD, MMD); in a league every learning player "
        "has one (a resumed league starts them afresh), in PSRO each best response a fresh one. "
        "none: off (default: the recipe's)",
        metavar="kl=ETA,refresh=N[,unit=updates|steps][,average=K]",
        type=str,
        kinds=("single", "league", "psro"),
        when_set=True,
    )
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
    one with :func:`sp_wrappers.runs.start`.

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
    :param models: which teams each model plays (written by the run).
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
    teams: Any = setting(
        help="group the agents into teams and train one learner per team: 'prefix' (agent "
        "names without the trailing _N: adversary_0..2 -> adversary) or a JSON mapping "
        '\'{"red": ["first_0", "third_0"], "blue": ["second_0", "fourth_0"]}\'',
        metavar="SPEC",
        kinds=("teams",),
        fixed=("teams",),
        group=TEAMS_GROUP,
    )
    team_change: int | None = count(
        help="learner steps of the learning team before the next team learns (the recipe's, "
        "else about a tenth of --timesteps, a multiple of every team's rollout)",
        low=1,
        kinds=("teams",),
        fixed=("teams",),
        group=TEAMS_GROUP,
    )
    shared: bool | None = setting(
        None,
        help="--shared: one model plays every team (refused when their spaces differ); "
        "--no-shared: one model per team; default: one model per distinct observation/action "
        "space (teams whose spaces agree share one)",
        type=bool,
        kinds=("teams",),
        fixed=("teams",),
        group=TEAMS_GROUP,
    )
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


#: The help's group of the league's roles.
LEAGUE_GROUP = "league"


def _alphastar(text: str) -> Callable[[], str]:
    """A help line naming AlphaStar's defaults (``league.builders``, loaded when it is shown:
    a single-learner run imports no league code)."""

    def written() -> str:
        from ..league.builders import ALPHASTAR_DEFAULTS

        return text.format(**ALPHASTAR_DEFAULTS)

    return written


_role = functools.partial(count, kinds=(LEAGUE_CONFIG_KIND,), group=LEAGUE_GROUP)
_role_share = functools.partial(share, kinds=(LEAGUE_CONFIG_KIND,), group=LEAGUE_GROUP)
_role_setting = functools.partial(setting, kinds=(LEAGUE_CONFIG_KIND,), group=LEAGUE_GROUP)


@dataclass(frozen=True)
class LeagueRoles:
    """The league's players and when they are snapshotted: the settings a league's overrides
    take for ``config.json``'s ``league`` object (AlphaStar's roles, or plain self-play).

    >>> LeagueRoles().main_agents, LeagueRoles(selfplay=True).selfplay
    (1, True)
    """

    main_agents: int = _role(
        1,
        help="players trained against the whole league by PFSP and against themselves; the "
        "run's result (default: 1)",
    )
    main_exploiters: int = _role(
        1,
        help="players trained against the main agents only, to find their weaknesses (default: 1)",
    )
    league_exploiters: int = _role(
        1,
        help="players trained against the whole league by PFSP, to find the league's blind "
        "spots (default: 1)",
    )
    selfplay: bool = _role_setting(
        False,
        help="plain self-play instead: one learner and its snapshot pool",
        type=bool,
    )
    snapshot_min_steps: int | None = _role(
        None,
        help=_alphastar(
            "learner steps since a player's last snapshot before it may be snapshotted into "
            "the frozen pool (default: {snapshot_min_steps:,d})"
        ),
    )
    snapshot_max_steps: int | None = _role(
        None,
        help=_alphastar(
            "learner steps since a player's last snapshot after which it is snapshotted "
            "whatever its win rate (default: {snapshot_max_steps:,d})"
        ),
        low=1,
    )
    snapshot_win_rate: float | None = _role_share(
        None,
        help=_alphastar(
            "between the two: a player is snapshotted once its lowest win rate against the "
            "players it is meant to beat exceeds P (default: {snapshot_win_rate})"
        ),
    )
    main_agents_compute: float | None = _role_share(
        None,
        help=_alphastar(
            "the main agents' share of the league's learner steps, at least (default: "
            "{main_agents_compute}; the other players split the rest)"
        ),
    )

    #: The AlphaStar settings among them (``league["settings"]``).
    ALPHASTAR: ClassVar[tuple[str, ...]] = (
        "snapshot_min_steps",
        "snapshot_max_steps",
        "snapshot_win_rate",
        "main_agents_compute",
    )


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
    :param extra: keys this version does not know, kept as they are (0.2's ``"command"``
        among them).
    """

    format_version: int = LEAGUE_CONFIG_FORMAT_VERSION
    kind: str = LEAGUE_CONFIG_KIND
    game: str
    game_kwargs: Mapping[str, Any] = field(default_factory=dict)
    algo: str
    hyperparams: Mapping[str, Any] = field(default_factory=dict)
    league: Mapping[str, Any]
    chunk_steps: int = count(
        help="steps each player learns between league updates, on average; rounded to whole "
        "rollouts (n_steps x n_envs) in the compute shares, said in one line (default: 4096)",
        low=1,
        kinds=("league",),
    )
    n_envs: int
    seed: int = 0
    timesteps: int
    max_frozen: int | None = count(
        None,
        help="cap on frozen players in matchmaking (default: no cap)",
        low=1,
        kinds=("league",),
        group=LEAGUE_GROUP,
    )
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


#: Where the run settings are declared, in the order a key's declaration is looked up: the
#: configurations' fields, the sampler's, a league's roles, and how a call runs.
SETTING_SOURCES = (RunConfig, TeamRunConfig, LeagueConfig, LeagueRoles, SamplerSettings, RunOptions)


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


def random_openings_range(value: Any) -> tuple[int, int] | None:
    """A run's ``random_openings`` as ``(low, high)`` random moves (``None``: off), checked.

    >>> random_openings_range("0-16"), random_openings_range([2, 4]), random_openings_range(None)
    ((0, 16), (2, 4), None)
    """
    if value is None:
        return None
    parts: Any = value.split("-") if isinstance(value, str) else value
    try:
        low, high = (int(str(p).strip()) for p in parts)
    except (TypeError, ValueError):
        low, high = -1, -1
    if not 0 <= low <= high or high < 1:
        raise TrainError(
            f"`random_openings` must be LO-HI random moves with 0 <= LO <= HI and HI >= 1 (e.g. "
            f"0-16), got {value!r}."
        )
    return low, high


def check_config(config: RunConfig) -> None:
    """The declared ranges and choices of every setting (sampler included), with one-line
    messages, then what one setting cannot say alone."""
    check_settings(config, TrainError)
    random_openings_range(config.random_openings)
    s = check_sampler(config.sampler)
    if s.random_ratio + s.reference_ratio > 1.0:
        raise TrainError("`random_ratio` and `reference_ratio` add up to more than 1.")
    if s.reference_ratio > 0 and len(reference_opponents(config.game)) < 2:
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
    """The declared ranges and choices of a team run's settings, with one-line messages."""
    check_settings(config, TrainError)
    check_sampler_and_algo(config.sampler, config.algo, config.hyperparams)


def check_sampler(sampler: Mapping[str, Any]) -> SamplerSettings:
    """``config.json``'s ``"sampler"`` object as checked :class:`SamplerSettings`."""
    try:
        return SamplerSettings(**{**SAMPLER_DEFAULTS, **sampler})
    except ValueError as error:
        raise TrainError(str(error)) from None
    except TypeError:
        unknown = sorted(set(sampler) - set(SAMPLER_DEFAULTS))
        raise TrainError(f"Unknown sampler settings {', '.join(unknown)}.") from None


def check_sampler_and_algo(
    sampler: Mapping[str, Any], algo: str, hyperparams: Mapping[str, Any]
) -> None:
    """The checks a single-learner and a team run share: the sampler's settings, the
    algorithm's name and the learning rate (a number or a schedule)."""
    check_sampler(sampler)
    if algo not in ALGOS:
        raise TrainError(f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}.")
    lr = hyperparams.get("learning_rate")
    if lr is not None:
        try:
            learning_rate_schedule(lr)
        except (TypeError, ValueError) as error:
            raise TrainError(str(error)) from None
