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

from pathlib import Path
from typing import Any

from .config import TrainError

__all__ = [
    "CONFIG_NAME",
    "MODEL_NAME",
    "ARCHIVE_DIR",
    "new_run_dir",
    "slug",
    "tensorboard_dir",
    "write_plots",
]

CONFIG_NAME = "config.json"
MODEL_NAME = "model.zip"
ARCHIVE_DIR = "archive"


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
