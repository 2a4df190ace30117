"""The run directory that ``sp-wrappers train`` and ``sp-wrappers league`` write.

The names of a run directory's files, defined here once, and the helpers that write its folders,
so that every kind of run shares one layout::

    config.json     everything that reproduces the run; its "game" is what ratings/plot read
    model.zip       the learner (train) / players/ (league)
    archive/        SnapshotArchive: snapshots, match history, ratings
    ratings.json    Bradley-Terry ratings and the final learner's record against the baselines
    plots/          ratings.png, payoff.png (league: league_payoff.png)
    tb/             TensorBoard logs (when tensorboard is installed)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..archive.policy_spec import TRUSTED_MODULES
from .config import TrainError

__all__ = [
    "CONFIG_NAME",
    "MODEL_NAME",
    "ARCHIVE_DIR",
    "new_run_dir",
    "POLICY_CLASS_KWARGS",
    "module_prefix",
    "run_trusted_modules",
    "trust_line",
    "slug",
    "tensorboard_dir",
    "write_plots",
]

CONFIG_NAME = "config.json"
MODEL_NAME = "model.zip"
ARCHIVE_DIR = "archive"
#: The ``policy_kwargs`` that name a class by its import path (``"module:Class"``) in a recipe,
#: ``--hp`` and ``config.json``.
POLICY_CLASS_KWARGS = ("features_extractor_class",)


def slug(game: str) -> str:
    """A directory name for ``game``: ``"pkg.mod:make"`` -> ``"pkg_mod_make"``."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in game).strip("_") or "run"


def new_run_dir(run: str | Path, another: str = "pass another --out") -> Path:
    """``run`` for a new run, refused when it already holds one (its ``config.json``) or when it
    or a folder above it is a file; ``another`` ends the message (how to pick another
    directory)."""
    run = Path(run)
    for folder in (run, *run.parents):
        if folder.exists() and not folder.is_dir():
            raise TrainError(
                f"{folder} is a file, so {run} cannot be a run directory; pass --out with a "
                "folder (a new one, or a run's to --resume)."
            )
    if (run / CONFIG_NAME).exists():
        raise TrainError(
            f"{run} already holds a run; continue it with --resume {run}, or {another}."
        )
    return run


def tensorboard_dir(run_dir: Path, notes: list[str]) -> str | None:
    """``run_dir/tb`` when tensorboard is installed, else ``None`` and a note saying so."""
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        notes.append("no TensorBoard logs: tensorboard is not installed (pip install tensorboard).")
        return None
    return str(run_dir / "tb")


def write_plots(run: Path, archive: Any, ratings: Any, notes: list[str]) -> list[str]:
    """``plots/ratings.png`` and ``plots/payoff.png`` (a note without matplotlib); what it wrote."""
    try:
        import matplotlib  # noqa: F401

        from ..evaluation.plots import plot_payoff, plot_ratings
        from ..evaluation.round_robin import RoundRobinResult
    except ImportError as error:
        notes.append(f'no plots: {error} (pip install "sp-wrappers[plots]").')
        return []
    out = run / "plots"
    out.mkdir(exist_ok=True)
    plot_ratings(ratings, out / "ratings.png", title=f"{run.name}: rating by training step")
    payoff = RoundRobinResult.from_archive(archive)
    plot_payoff(payoff, out / "payoff.png", title=f"{run.name}: payoff matrix, all games")
    return ["plots/"]


def module_prefix(module: str) -> str:
    """The trusted-module prefix of ``module`` and its submodules, what
    :class:`~sp_wrappers.SnapshotArchive`'s ``trusted_modules`` takes (``"mymod"`` ->
    ``"mymod."``, which trusts ``mymod`` and ``mymod.nets`` but not ``mymodule``).

    >>> module_prefix("mymod"), module_prefix("mypkg.nets.")
    ('mymod.', 'mypkg.nets.')
    """
    module = str(module).strip()
    if not module.strip("."):
        raise TrainError(f"--trust-module takes a module name such as mymod, got {module!r}.")
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


def trust_line(config: Any, extra: Iterable[str] = (), where: str = "config.json") -> str | None:
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
        parts.append(f"{', '.join(extra)}: --trust-module")
    if not parts:
        return None
    count = len({*(c.split(":")[0] for c in classes), *extra})
    return f"trusting module{'s' if count > 1 else ''} " + "; ".join(parts)
