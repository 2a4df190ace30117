"""Plots of an archive's ratings and payoff matrix, written as PNG files (needs matplotlib).

The ratings against training step (interval error bars, baselines as horizontal lines) and the
payoff matrix as a heatmap next to the number of games behind each cell (pairs that never played
are hatched).

Figures are drawn on matplotlib's Agg canvas directly (no ``pyplot``), so plotting never changes
the interactive backend of the calling program and works without a display. matplotlib is the
optional extra ``plots``: ``pip install "sp-wrappers[plots]"``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..core.extras import install_hint, require
from ..core.save_util import replacing

__all__ = [
    "plot_ratings",
    "plot_payoff",
    "PLOTS_HINT",
    "STACKED_WIDTH",
    "new_figure",
    "save_figure",
]

PLOTS_HINT = install_hint("plots")


def new_figure(width: float, height: float) -> Any:
    """An empty matplotlib figure of ``width`` x ``height`` inches, drawn without a display (an
    ``ImportError`` naming the extra to install when matplotlib is missing)."""
    agg = require("matplotlib.backends.backend_agg", "plots", "Plotting")
    figure = require("matplotlib.figure", "plots", "Plotting").Figure(
        figsize=(width, height), dpi=100
    )
    agg.FigureCanvasAgg(figure)
    return figure


def save_figure(figure: Any, path: str | os.PathLike[str]) -> str:
    """Write ``figure`` to ``path`` (its format from the suffix) beside its name first, then
    rename it: a write cut short (Ctrl-C) leaves no partial picture, and an older one stays."""
    path = os.fspath(path)
    directory, name = os.path.split(path)
    stem, suffix = os.path.splitext(name)
    partial = Path(directory, f".{stem}.{os.getpid()}.partial{suffix}")  # savefig reads suffix
    with replacing(path, partial) as written:
        figure.savefig(written)
    return path


def plot_ratings(ratings: Any, path: str | os.PathLike[str], title: str | None = None) -> str:
    """Draw each snapshot's rating against its training step and save it as a PNG.

    :param ratings: an :class:`~sp_wrappers.ratings.archive_ratings.ArchiveRatings`.
    :param path: the PNG file to write.
    :param title: the figure title.
    :return: the path written.

    >>> import os, tempfile
    >>> from sp_wrappers.ratings.archive_ratings import ArchiveRatings, SnapshotRating
    >>> rows = [SnapshotRating("snapshot-0000", 0, 1000.0, 900.0, 1100.0, 50.0, 10),
    ...         SnapshotRating("snapshot-0001", 100, 1200.0, 1100.0, 1300.0, 50.0, 10)]
    >>> path = plot_ratings(ArchiveRatings(None, rows, {"random": 1000.0}, "random", 1000.0),
    ...                     os.path.join(tempfile.mkdtemp(), "ratings.png"))
    >>> os.path.getsize(path) > 0
    True
    """
    figure = new_figure(7.0, 4.5)
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
    return save_figure(figure, path)


def _payoff_layers(result: Any) -> tuple[np.ma.MaskedArray, np.ndarray, np.ndarray]:
    """The scores to draw (masked where a pair has no games), the game counts, and where the
    pairs that never played are (off the diagonal, no games)."""
    counts = np.asarray(result.games, dtype=np.int64)
    scores = np.asarray(result.scores, dtype=float)
    unplayed = counts == 0
    np.fill_diagonal(unplayed, False)
    drawn = np.ma.masked_where((counts == 0) | ~np.isfinite(scores), scores)
    return drawn, counts, unplayed


#: the widest a stacked payoff figure gets (inches at 100 dpi): 1,000 pixels, the width of a
#: report's section in a 1280-pixel-wide window
STACKED_WIDTH = 10.0


def plot_payoff(
    result: Any, path: str | os.PathLike[str], title: str | None = None, stacked: bool = False
) -> str:
    """Draw a payoff matrix as a heatmap next to the number of games behind each cell.

    Left: the row player's mean score against the column player (blue above 0.5, red below).
    Right: games played by each pair. Pairs that never played are hatched grey and marked "–" in
    both panels, so they cannot be mistaken for an even score (0.5, drawn white); the diagonal is
    plain grey. Cells carry their score and game count as text when there are at most 16 players;
    above that, read exact counts from ``RoundRobinResult.games`` (``sp-wrappers tournament``
    prints the matrix of scores).

    :param result: a :class:`~sp_wrappers.evaluation.round_robin.RoundRobinResult`.
    :param path: the PNG file to write.
    :param title: the figure title.
    :param stacked: the two panels one above the other, the figure at most
        :data:`STACKED_WIDTH` inches (1,000 pixels) wide, whatever the number of players (the
        run report's page); default: side by side, growing with the players.
    :return: the path written.

    >>> import os, tempfile
    >>> from sp_wrappers.evaluation.round_robin import RoundRobinResult
    >>> result = RoundRobinResult.from_games(["a", "b"], [("a", "b", 1.0), ("a", "b", 0.5)])
    >>> os.path.getsize(plot_payoff(result, os.path.join(tempfile.mkdtemp(), "p.png"))) > 0
    True
    """
    import matplotlib
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    n = len(result.players)
    scores, counts, unplayed = _payoff_layers(result)
    if stacked:
        size = min(4.0 + 0.45 * n, STACKED_WIDTH - 1.2)
        figure = new_figure(size + 1.2, 2.0 * size + 1.2)
        score_axes, count_axes = figure.add_subplot(2, 1, 1), figure.add_subplot(2, 1, 2)
    else:
        size = min(4.0 + 0.45 * n, 20.0)
        figure = new_figure(2.0 * size + 2.0, size + 0.6)
        score_axes, count_axes = figure.add_subplot(1, 2, 1), figure.add_subplot(1, 2, 2)
    transparent = (0.0, 0.0, 0.0, 0.0)
    score_map = matplotlib.colormaps["RdBu"].with_extremes(bad=transparent)
    count_map = matplotlib.colormaps["Greens"].with_extremes(bad=transparent)
    played_counts = np.ma.masked_where(counts == 0, counts.astype(float))
    count_norm = LogNorm(vmin=1, vmax=max(int(counts.max(initial=0)), 2))
    layers = (
        (score_axes, scores, score_map, {"vmin": 0.0, "vmax": 1.0}, "row player's mean score"),
        (
            count_axes,
            played_counts,
            count_map,
            {"norm": count_norm},
            "games played by the pair",
        ),
    )
    ticks = np.arange(n)
    for axes, values, cmap, scale, label in layers:
        # Under the image: hatched grey, seen only where the image is masked (no games).
        axes.add_patch(
            Rectangle((-0.5, -0.5), n, n, facecolor="0.82", edgecolor="0.55", hatch="//", zorder=0)
        )
        image = axes.imshow(values, cmap=cmap, zorder=1, **scale)
        for k in range(n):  # the diagonal: plain grey, no hatch
            axes.add_patch(Rectangle((k - 0.5, k - 0.5), 1, 1, facecolor="0.65", zorder=2))
        figure.colorbar(image, ax=axes, label=label, fraction=0.046, pad=0.04)
        axes.set_xticks(ticks, labels=list(result.players), rotation=60, ha="right")
        axes.set_yticks(ticks, labels=list(result.players))
        axes.tick_params(labelsize="small")
        axes.set_xlim(-0.5, n - 0.5)
        axes.set_ylim(n - 0.5, -0.5)
    if n <= 16:
        for i in range(n):
            for j in range(n):
                if unplayed[i, j]:
                    for axes in (score_axes, count_axes):
                        axes.text(j, i, "–", ha="center", va="center", fontsize=9, zorder=3)
                elif i != j:
                    value = float(scores[i, j])
                    color = "white" if abs(value - 0.5) > 0.3 else "black"
                    score_axes.text(
                        j,
                        i,
                        f"{value:.2f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color=color,
                        zorder=3,
                    )
                    count = int(counts[i, j])
                    count_axes.text(
                        j,
                        i,
                        str(count),
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if count_norm(count) > 0.6 else "black",
                        zorder=3,
                    )
    missing = int(unplayed.sum()) // 2
    score_axes.set_title("mean score (row vs column)", fontsize="medium")
    count_axes.set_title(
        f'games per pair ({missing} of {n * (n - 1) // 2} pairs never played: hatched, "–")',
        fontsize="medium",
    )
    figure.suptitle(title or "Payoff matrix")
    # square panels (imshow) move inside their cells as the margins change: a stacked figure
    # needs a few passes before its row labels are inside it
    for _ in range(4 if stacked else 1):
        figure.tight_layout()
    return save_figure(figure, path)
