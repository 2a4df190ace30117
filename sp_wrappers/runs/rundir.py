"""The run directory, one object: :class:`RunDir` owns the layout every kind of run writes.

The names of its files are spelled once, in :mod:`sp_wrappers.core.run_layout`, which the layers
below ``runs`` that write inside a run directory import too. The resolver reads a run's
configuration through :class:`RunDir`, the runs write through its paths, and every command that
works on a run (inspect, play, watch, report, exploitability, exploit) finds its archive and typed
configuration with :meth:`RunArchive.locate`. The layout of every kind (single, teams, league,
PSRO), with what the layers below write in it under their own names::

    config.json        everything that reproduces the run (game, algo, hyperparams, the kind's
                       settings, seed, timesteps, ...), its "kind" and its history;
                       `sp-wrappers train --config` replays a single or team run's
    model.zip          single: the learner, rewritten at every snapshot (a crashed run resumes)
    magnet.safetensors single, with --magnet: the magnet's weights at the last two checkpoints,
                       written just before model.zip (training/magnet.py's)
    archive/           single, league, PSRO: the SnapshotArchive (snapshots, match history,
                       ratings; single: at most --max-snapshots listed; league: every player's
                       snapshots tagged by role and parent; PSRO: the members and meta-weights)
    models/<name>.zip  teams: one model per entry of config.json's "models" (a team, or "shared"
                       when one model plays every team), rewritten at every team change
    archives/<team>/   teams: each team's SnapshotArchive
    team_selfplay.json teams: the learning team, step counts, Elo per team (TeamSelfPlay's)
    league.json        league: players, roles, steps, frozen pool, payoff table;  players/: each
                       learning player's model and initial model (the league's)
    psro.json          PSRO: the population, payoffs and every iteration (league/psro.py's)
    ratings.json       Bradley-Terry ratings of the snapshots (and bots) and the final learner's
                       record against the baselines (teams: per team, against random teams)
    env_generator.json single, with --env-generator: each env copy's game configuration
    strength.json      single: the learner against the game's ladder every --strength-every steps
    exploitability.json  single, games small enough to walk: the exact exploitability of the
                       learner, the Nash mixture and every snapshot, every --exploitability-every
    progress.csv       SB3's logger (single, PSRO; a resumed call: progress-<from step>.csv)
    plots/             ratings.png, payoff.png, strength.png (league: league_payoff.png), when
                       matplotlib is installed
    report.html        one self-contained page (teams: report-<team>.html per team), rewritten by
                       sp-wrappers report RUN_DIR; a page that cannot be written is a note
    tb/                TensorBoard logs, when tensorboard is installed (teams: one folder per
                       model; league: tb/<player>/)
    exploit/           sp-wrappers exploit's own archive and its exploit.json

>>> run = RunDir("runs/ttt")
>>> run.config_path.as_posix(), run.team_archive_path("red").as_posix()
('runs/ttt/config.json', 'runs/ttt/archives/red')
>>> run.exists()
False
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from ..archive.index import INDEX_NAME
from ..archive.policy_spec import TRUSTED_MODULES
from ..core.errors import DependencyNotInstalled
from ..core.extras import require
from ..core.run_layout import (
    ARCHIVE_DIR,
    ARCHIVES_DIR,
    CONFIG_NAME,
    EXPLOIT_DIR,
    MAGNET_NAME,
    MODEL_NAME,
    MODELS_DIR,
    PLOTS_DIR,
    PSRO_NAME,
    RATINGS_NAME,
    REPORT_NAME,
    TB_DIR,
)
from .config import TrainError
from .kinds import config_class, kind_of_json

__all__ = [  # 0.2's three names of the layout stay here; all of them: core.run_layout
    "CONFIG_NAME",
    "MODEL_NAME",
    "ARCHIVE_DIR",
    "RunDir",
    "RunArchive",
    "RunDirError",
    "new_run_dir",
    "POLICY_CLASS_KWARGS",
    "module_prefix",
    "run_trusted_modules",
    "trust_line",
    "slug",
    "tensorboard_dir",
    "write_plots",
]

#: The ``policy_kwargs`` that name a class by its import path (``"module:Class"``) in a recipe,
#: ``--hp`` and ``config.json``.
POLICY_CLASS_KWARGS = ("features_extractor_class",)


class RunDirError(TrainError, FileNotFoundError):
    """A path that is not the run directory or archive asked for; the message says what to
    pass."""


class RunDir:
    """A run directory: its layout, its kind and its typed configuration.

    :param path: the folder (it need not exist yet).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    # -- the layout -------------------------------------------------------------------------------

    @property
    def config_path(self) -> Path:
        """``config.json``."""
        return self.path / CONFIG_NAME

    @property
    def model_path(self) -> Path:
        """A single learner's ``model.zip``."""
        return self.path / MODEL_NAME

    @property
    def archive_path(self) -> Path:
        """``archive/``: a single learner's or a league's :class:`~sp_wrappers.SnapshotArchive`."""
        return self.path / ARCHIVE_DIR

    @property
    def archives_path(self) -> Path:
        """``archives/``: a team run's archives, one folder per team."""
        return self.path / ARCHIVES_DIR

    def team_archive_path(self, team: str) -> Path:
        """``archives/<team>``."""
        return self.archives_path / team

    def team_model_path(self, name: str) -> Path:
        """``models/<name>.zip``: a team run's model ``name`` (a team, or ``shared``)."""
        return self.path / MODELS_DIR / f"{name}.zip"

    @property
    def ratings_path(self) -> Path:
        """``ratings.json``."""
        return self.path / RATINGS_NAME

    @property
    def report_path(self) -> Path:
        """``report.html``."""
        return self.path / REPORT_NAME

    def team_report_path(self, team: str) -> Path:
        """``report-<team>.html``: a team run's page for one team."""
        return self.path / f"report-{team}.html"

    @property
    def plots_path(self) -> Path:
        """``plots/``."""
        return self.path / PLOTS_DIR

    @property
    def psro_state_path(self) -> Path:
        """``psro.json``: a PSRO run's population, payoffs and iterations."""
        return self.path / PSRO_NAME

    @property
    def magnet_path(self) -> Path:
        """``magnet.safetensors``: a run's magnet (``magnet`` set) at its last checkpoints."""
        return self.path / MAGNET_NAME

    @property
    def tb_path(self) -> Path:
        """``tb/``: TensorBoard logs."""
        return self.path / TB_DIR

    @property
    def exploit_path(self) -> Path:
        """``exploit/``: ``sp-wrappers exploit``'s own archive (``exploit/archive``) and its
        results (``exploit/exploit.json``), apart from the run's opponents."""
        return self.path / EXPLOIT_DIR

    # -- what it holds ----------------------------------------------------------------------------

    def exists(self) -> bool:
        """Whether the folder holds a run (its ``config.json``)."""
        return self.config_path.is_file()

    def read_json(self, what: str = "pass a run directory") -> dict[str, Any]:
        """``config.json``'s object; a missing file says ``what`` to do."""
        from .config import read_json_object

        return read_json_object(self.config_path, what)

    def kind(self, what: str = "pass a run directory") -> str:
        """The kind of run it holds (``single``, ``teams``, ``league``, ``psro``; files of 0.2
        too)."""
        return kind_of_json(self.read_json(what))

    def config(self, what: str = "pass a run directory") -> Any:
        """The run's typed configuration (:class:`~sp_wrappers.runs.config.RunConfig`,
        :class:`~sp_wrappers.runs.config.TeamRunConfig`,
        :class:`~sp_wrappers.runs.config.LeagueConfig`,
        :class:`~sp_wrappers.runs.psro.PSROConfig`, by its kind)."""
        stored = self.read_json(what)
        return config_class(kind_of_json(stored)).from_json(stored, self.config_path)

    # -- new runs ---------------------------------------------------------------------------------

    @classmethod
    def new(cls, path: str | Path, another: str = "pass another `run_dir`") -> RunDir:
        """The run directory of a new run, refused when it already holds one or when it or a
        folder above it is a file (see :func:`new_run_dir`)."""
        return cls(new_run_dir(path, another))

    @classmethod
    def default_for(cls, config: Any) -> RunDir:
        """Where a run goes when no folder is named: ``runs/<game>`` (a league:
        ``runs/league-<game>``, PSRO: ``runs/psro-<game>``)."""
        kind = kind_of_json(config.to_json())
        prefix = f"{kind}-" if kind in ("league", "psro") else ""
        return cls(Path("runs") / f"{prefix}{slug(config.game)}")


class RunArchive:
    """An archive and the run it belongs to, found from a path that is either: what every
    command that opens a run's snapshots works on.

    :param archive_path: the archive directory.
    :param run_dir: the run directory holding its ``config.json`` (``None``: an archive alone).
    """

    def __init__(self, archive_path: Path, run_dir: RunDir | None) -> None:
        self.archive_path = archive_path
        self.run_dir = run_dir

    @classmethod
    def locate(cls, path: str | Path) -> RunArchive:
        """The archive of ``path``: ``path/archive`` of a run directory, else ``path`` itself (an
        archive directory, a run's ``archive/``, or a team's ``archives/<team>``), with the run
        whose ``config.json`` lies beside it.

        :raises RunDirError: ``path`` is no folder, or is a team run (which holds one archive
            per team: the message lists them). A folder that holds no archive is refused when
            the archive is opened (:meth:`open`).
        """
        root = Path(path)
        if not root.is_dir():
            raise RunDirError(
                f"{root} is not a directory; pass a run directory (sp-wrappers train `run_dir`) "
                "or an archive directory."
            )
        archive = root / ARCHIVE_DIR if (root / ARCHIVE_DIR).is_dir() else root
        if archive == root and not (root / INDEX_NAME).exists():
            teams = RunDir(root).archives_path
            if teams.is_dir():
                found = sorted(str(p) for p in teams.iterdir() if p.is_dir())
                raise RunDirError(
                    f"{root} is a team run with one archive per team; pass one of them: "
                    f"{', '.join(found) or str(teams / '<team>')}."
                )
        homes = [root]
        if archive.name == ARCHIVE_DIR:
            homes.append(archive.parent)
        if archive.parent.name == ARCHIVES_DIR:  # a team's archive
            homes.append(archive.parent.parent)
        for home in homes:
            if RunDir(home).exists():
                return cls(archive, RunDir(home))
        return cls(archive, None)

    def exists(self) -> bool:
        """Whether the archive is there (its index)."""
        return (self.archive_path / INDEX_NAME).exists()

    @property
    def config_path(self) -> Path | None:
        """The run's ``config.json`` (``None``: an archive alone)."""
        return None if self.run_dir is None else self.run_dir.config_path

    @cached_property
    def config(self) -> Any:
        """The run's typed configuration (``None``: an archive alone); a ``config.json`` that
        names a game but no whole run reads as a :class:`~sp_wrappers.runs.config.GameConfig`."""
        if self.run_dir is None:
            return None
        from .config import GameConfig

        stored = self.run_dir.read_json()
        try:
            return config_class(kind_of_json(stored)).from_json(stored, self.config_path)
        except TrainError:
            return GameConfig.from_json(stored, self.config_path)

    @property
    def greedy(self) -> bool | None:
        """How the run plays its snapshots where its kind fixes that: a PSRO run's members play
        their most likely move (``True``, its ``settings.greedy``) or their probabilities
        (``False``); ``None`` for a run that fixes no form (the command's default applies)."""
        greedy = getattr(self.config, "greedy", None)
        return None if greedy is None else bool(greedy)

    def game(self, override: str | None = None) -> tuple[str | None, dict[str, Any]]:
        """The game and its keyword arguments: ``override`` (with no keyword arguments, which
        belong to the configuration's game) or the configuration's; ``(None, {})`` without
        either."""
        config = self.config
        stored = None if config is None else config.game
        name = override or stored
        if name != stored or config is None:
            return name, {}
        if not isinstance(config.game_kwargs, Mapping):
            raise TrainError(
                f"'game_kwargs' in {self.config_path} must be an object, got "
                f"{config.game_kwargs!r}."
            )
        return name, dict(config.game_kwargs)

    def trusted_modules(self, extra: Iterable[str] = ()) -> tuple[str, ...]:
        """The modules the archive's snapshots may name (see :func:`run_trusted_modules`)."""
        return run_trusted_modules(self.config or {}, extra)

    def trust_line(self, extra: Iterable[str] = ()) -> str | None:
        """The line saying which modules :meth:`trusted_modules` trusts (see :func:`trust_line`)."""
        return trust_line(self.config or {}, extra, str(self.config_path or CONFIG_NAME))

    def open(self, trust: Iterable[str] = ()) -> Any:
        """The :class:`~sp_wrappers.SnapshotArchive`, never created (a clear error when
        absent), trusting :meth:`trusted_modules`."""
        from ..archive.store import SnapshotArchive

        return SnapshotArchive(
            self.archive_path, create=False, trusted_modules=self.trusted_modules(trust)
        )


def slug(game: str) -> str:
    """A directory name for ``game``: ``"pkg.mod:make"`` -> ``"pkg_mod_make"``."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in game).strip("_") or "run"


def new_run_dir(run: str | Path, another: str = "pass another `run_dir`") -> Path:
    """``run`` for a new run, refused when it already holds one (its ``config.json``) or when it
    or a folder above it is a file; ``another`` ends the message (how to pick another
    directory)."""
    run = Path(run)
    for folder in (run, *run.parents):
        if folder.exists() and not folder.is_dir():
            raise TrainError(
                f"{folder} is a file, so {run} cannot be a run directory; pass `run_dir` with a "
                "folder (a new one, or a run's to `resume`)."
            )
    if RunDir(run).config_path.exists():
        raise TrainError(
            f"{run} already holds a run; continue it with `resume` {run}, or {another}."
        )
    return run


def tensorboard_dir(run_dir: Path, notes: list[str]) -> str | None:
    """``run_dir/tb`` when tensorboard is installed, else ``None`` and a note saying so."""
    try:
        require("tensorboard", "tensorboard", "TensorBoard logs")
    except DependencyNotInstalled as error:
        notes.append(f"no TensorBoard logs: {error}")
        return None
    return str(RunDir(run_dir).tb_path)


def write_plots(run: Path, archive: Any, ratings: Any, notes: list[str]) -> list[str]:
    """``plots/ratings.png`` and ``plots/payoff.png`` (a note without matplotlib); what it wrote."""
    try:
        require("matplotlib", "plots", f"{PLOTS_DIR}/")
    except DependencyNotInstalled as error:
        notes.append(f"no plots: {error}")
        return []
    from ..evaluation.plots import plot_payoff, plot_ratings
    from ..evaluation.round_robin import RoundRobinResult

    out = RunDir(run).plots_path
    out.mkdir(exist_ok=True)
    plot_ratings(ratings, out / "ratings.png", title=f"{run.name}: rating by training step")
    payoff = RoundRobinResult.from_archive(archive)
    plot_payoff(payoff, out / "payoff.png", title=f"{run.name}: payoff matrix, all games")
    return [f"{PLOTS_DIR}/"]


def module_prefix(module: str) -> str:
    """The trusted-module prefix of ``module`` and its submodules, what
    :class:`~sp_wrappers.SnapshotArchive`'s ``trusted_modules`` takes (``"mymod"`` ->
    ``"mymod."``, which trusts ``mymod`` and ``mymod.nets`` but not ``mymodule``).

    >>> module_prefix("mymod"), module_prefix("mypkg.nets.")
    ('mymod.', 'mypkg.nets.')
    """
    module = str(module).strip()
    if not module.strip("."):
        raise TrainError(f"`trusted_modules` takes a module name such as mymod, got {module!r}.")
    return module if module.endswith(".") else module + "."


def _config_classes(config: Any) -> list[str]:
    """The classes (``"module:Class"``) a run's configuration names in its ``policy_kwargs``."""
    hyperparams = getattr(config, "hyperparams", None)
    if hyperparams is None and isinstance(config, Mapping):
        hyperparams = config.get("hyperparams")
    policy_kwargs = hyperparams.get("policy_kwargs") if isinstance(hyperparams, Mapping) else None
    if not isinstance(policy_kwargs, Mapping):
        return []
    names = [policy_kwargs.get(key) for key in POLICY_CLASS_KWARGS]
    return [
        n
        for n in names
        if isinstance(n, str)
        and ":" in n
        and n.split(":")[0]
        and not (n.split(":")[0] + ".").startswith(TRUSTED_MODULES)  # trusted anyway: no line
    ]


def run_trusted_modules(config: Any, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The modules a command working on a run trusts when it rebuilds the run's snapshots.

    A run directory's own ``config.json`` names the classes its user chose (``--hp
    'policy_kwargs={"features_extractor_class": "mymod:TinyExtractor"}'``): their modules are
    trusted, exactly those, and so are ``extra`` (``--trust-module MOD``). An archive without its
    run's configuration trusts only ``extra``, so an archive from elsewhere stays refused.
    Returns prefixes for :class:`~sp_wrappers.SnapshotArchive`'s ``trusted_modules``.

    :param config: the run's configuration (``config.json``'s content, a typed configuration,
        or ``{}`` without one).
    :param extra: module names the user trusts on top (``--trust-module``).

    >>> run_trusted_modules({"hyperparams": {"policy_kwargs": {
    ...     "features_extractor_class": "mymod:TinyExtractor"}}}, extra=["other"])
    ('mymod.', 'other.')
    >>> run_trusted_modules({})
    ()
    """
    modules = [name.split(":")[0] for name in _config_classes(config)]
    return tuple(dict.fromkeys(module_prefix(m) for m in [*modules, *extra]))


def trust_line(config: Any, extra: Iterable[str] = (), where: str = CONFIG_NAME) -> str | None:
    """One line saying which modules :func:`run_trusted_modules` trusts and why (``None`` when
    it trusts none), for a command to print on stderr.

    >>> trust_line({"hyperparams": {"policy_kwargs": {
    ...     "features_extractor_class": "mymod:TinyExtractor"}}}, where="runs/r/config.json")
    'trusting module mymod: runs/r/config.json names mymod:TinyExtractor'

    Classes of the modules trusted anyway (sp_wrappers', SB3's, torch's) need no line:

    >>> trust_line({"hyperparams": {"policy_kwargs": {
    ...     "features_extractor_class": "sp_wrappers.core.networks:BoardExtractor"}}}) is None
    True
    """
    extra = [module_prefix(m)[:-1] for m in extra]
    classes = _config_classes(config)
    parts = []
    if classes:
        modules = list(dict.fromkeys(name.split(":")[0] for name in classes))
        parts.append(f"{', '.join(modules)}: {where} names {', '.join(classes)}")
    if extra:
        parts.append(f"{', '.join(extra)}: `trusted_modules`")
    if not parts:
        return None
    count = len({*(c.split(":")[0] for c in classes), *extra})
    return f"trusting module{'s' if count > 1 else ''} " + "; ".join(parts)
