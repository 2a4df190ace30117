"""Plots of an archive's ratings and payoff matrix, written as PNG files (needs matplotlib).

This module holds :func:`plot_ratings` (rating against training step, with interval error bars and
the baselines as horizontal lines) and :func:`plot_payoff` (the payoff matrix as a heatmap).

Figures are drawn on matplotlib's Agg canvas directly (no ``pyplot``), so plotting never changes
the interactive backend of the calling program and works without a display. matplotlib is the
optional extra ``plots``: ``pip install "sp-wrappers[plots]"``.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

__all__ = ["plot_ratings", "plot_payoff", "PLOTS_HINT"]

PLOTS_HINT = 'pip install "sp-wrappers[plots]"'


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            f"Plotting needs matplotlib, which is not installed: {PLOTS_HINT}"
        ) from None
    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def plot_ratings(ratings: Any, path: str | os.PathLike[str], title: str | None = None) -> str:
    """Draw each snapshot's rating against its training step and save it as a PNG.

    :param ratings: an :class:`~sp_wrappers.evaluation.ArchiveRatings`.
    :param path: the PNG file to write.
    :param title: the figure title.
    :return: the path written.

    >>> import os, tempfile
    >>> from sp_wrappers.evaluation import ArchiveRatings, SnapshotRating
    >>> rows = [SnapshotRating("snapshot-0000", 0, 1000.0, 900.0, 1100.0, 50.0, 10),
    ...         SnapshotRating("snapshot-0001", 100, 1200.0, 1100.0, 1300.0, 50.0, 10)]
    >>> path = plot_ratings(ArchiveRatings(None, rows, {"random": 1000.0}, "random", 1000.0),
    ...                     os.path.join(tempfile.mkdtemp(), "ratings.png"))
    >>> os.path.getsize(path) > 0
    True
    """
    figure = _figure(7.0, 4.5)
    axes = figure.add_subplot()
    rated = [s for s in ratings.snapshots if not math.isnan(s.rating)]
    if rated:
        steps = np.array([s.step for s in rated], dtype=float)
        values = np.array([s.rating for s in rated])
        low = np.array([s.low if math.isfinite(s.low) else s.rating for s in rated])
        high = np.array([s.high if math.isfinite(s.high) else s.rating for s in rated])
        axes.errorbar(
            steps,
            values,
            yerr=np.vstack([values - low, high - values]),
            fmt="o-",
            capsize=3,
            label="snapshots (95% interval)",
        )
    colors = ["tab:gray", "tab:red", "tab:green", "tab:purple", "tab:brown", "tab:olive"]
    for k, (name, value) in enumerate(sorted(ratings.baselines.items())):
        axes.axhline(value, linestyle="--", linewidth=1, color=colors[k % len(colors)], label=name)
    axes.set_xlabel("training step")
    axes.set_ylabel("rating (Elo scale)")
    anchor = getattr(ratings, "anchor", None)
    default_title = "Bradley-Terry rating by training step"
    if anchor:
        default_title += f" ({anchor} = {ratings.anchor_rating:.0f})"
    axes.set_title(title or default_title)
    axes.grid(True, alpha=0.3)
    if rated or ratings.baselines:
        axes.legend(loc="best", fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    return os.fspath(path)


def plot_payoff(result: Any, path: str | os.PathLike[str], title: str | None = None) -> str:
    """Draw a payoff matrix as a heatmap (row player's mean score against the column player).

    Cells are annotated with the score when the matrix is small enough to read; pairs without
    games are left blank.

    :param result: a :class:`~sp_wrappers.evaluation.RoundRobinResult`.
    :param path: the PNG file to write.
    :param title: the figure title.
    :return: the path written.

    >>> import os, tempfile
    >>> from sp_wrappers.evaluation import RoundRobinResult
    >>> result = RoundRobinResult.from_games(["a", "b"], [("a", "b", 1.0), ("a", "b", 0.5)])
    >>> os.path.getsize(plot_payoff(result, os.path.join(tempfile.mkdtemp(), "p.png"))) > 0
    True
    """
    n = len(result.players)
    size = min(4.0 + 0.45 * n, 20.0)
    figure = _figure(size + 1.0, size)
    axes = figure.add_subplot()
    scores = np.ma.masked_invalid(np.asarray(result.scores, dtype=float))
    image = axes.imshow(scores, cmap="RdBu", vmin=0.0, vmax=1.0)
    figure.colorbar(image, ax=axes, label="row player's mean score")
    ticks = np.arange(n)
    axes.set_xticks(ticks, labels=list(result.players), rotation=60, ha="right", fontsize="small")
    axes.set_yticks(ticks, labels=list(result.players), fontsize="small")
    if n <= 16:
        for i in range(n):
            for j in range(n):
                if not np.ma.is_masked(scores[i, j]):
                    value = float(scores[i, j])
                    color = "white" if abs(value - 0.5) > 0.3 else "black"
                    axes.text(
                        j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color=color
                    )
    axes.set_title(title or "Payoff matrix")
    figure.tight_layout()
    figure.savefig(path)
    return os.fspath(path)
