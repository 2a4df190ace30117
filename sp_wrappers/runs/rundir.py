"""The run directory that ``sp-wrappers train`` and ``sp-wrappers league`` write.

This module holds the names of a run directory's files (:data:`CONFIG_NAME`, :data:`MODEL_NAME`,
:data:`ARCHIVE_DIR`) and the helpers that write them: JSON files written atomically
(``write_json``), the TensorBoard folder (``_tensorboard_dir``), ``plots/`` (``_plot``) and the
default directory name for a game (``_slug``). Moved out of :mod:`sp_wrappers.runs.train` unchanged
so that both commands share one run-directory layout::

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

__all__ = ["CONFIG_NAME", "MODEL_NAME", "ARCHIVE_DIR"]

CONFIG_NAME = "config.json"
MODEL_NAME = "model.zip"
ARCHIVE_DIR = "archive"


def _slug(game: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in game).strip("_") or "run"


def _tensorboard_dir(run_dir: Path, notes: list[str]) -> str | None:
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        notes.append("no TensorBoard logs: tensorboard is not installed (pip install tensorboard).")
        return None
    return str(run_dir / "tb")


def _plot(run: Path, archive: Any, ratings: Any, notes: list[str]) -> list[str]:
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
