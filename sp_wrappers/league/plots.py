"""The league's payoff matrix, grouped and coloured by role.

Rows and columns are the league's snapshots (and the bots that played them), grouped by the
``role:`` tag their league wrote, oldest first within a group; each cell is the row player's mean
score against the column player over the archive's games (learning players' games credited as in
:func:`~sp_wrappers.league.league_games`). Tick labels take their role's colour and lines separate
the groups.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..evaluation.plots import new_figure, save_figure
from ..evaluation.round_robin import RoundRobinResult
from ..ratings.attribution import league_games

__all__ = ["league_payoff", "plot_league_payoff", "ROLE_COLOURS"]

ROLE_COLOURS = {
    "main_agent": "tab:blue",
    "main_exploiter": "tab:red",
    "league_exploiter": "tab:green",
    "learner": "tab:purple",
    "bot": "tab:gray",
}


def _role(tags: tuple[str, ...]) -> str:
    return next((t[len("role:") :] for t in tags if t.startswith("role:")), "learner")


def _label(player: str, info: Any) -> str:
    """``main_agent_0@4096 (snapshot-0003)`` for a league snapshot, the name for anything else."""
    if info is None:
        return player
    parent = next((t[len("parent:") :] for t in info.tags if t.startswith("parent:")), None)
    return f"{parent}@{info.step} ({player})" if parent else player


def league_payoff(archive: Any) -> tuple[list[str], list[str], np.ndarray]:
    """``(players, roles, scores)``: every player with games, grouped by role (bots last), and
    ``scores[i, j]`` the mean score of ``players[i]`` against ``players[j]`` (``nan``: no game).

    >>> import tempfile
    >>> from sp_wrappers import SnapshotArchive
    >>> players, roles, scores = league_payoff(SnapshotArchive(tempfile.mkdtemp()))
    >>> players, scores.shape
    ([], (0, 0))
    """
    infos = {info.id: info for info in archive.snapshots(include_pruned=True)}
    games = league_games(archive)
    named = {p for a, b, _ in games for p in (a, b)}
    role_of = {p: (_role(infos[p].tags) if p in infos else "bot") for p in named}
    order = list(ROLE_COLOURS) + sorted(set(role_of.values()) - set(ROLE_COLOURS))
    players = sorted(
        named,
        key=lambda p: (order.index(role_of[p]), infos[p].seq if p in infos else 0, p),
    )
    scores = RoundRobinResult.from_games(players, games).scores
    return players, [role_of[p] for p in players], scores


def plot_league_payoff(archive: Any, path: str | os.PathLike[str], title: str | None = None) -> str:
    """Write the payoff matrix grouped and coloured by role as a PNG; returns the path.

    :raises ImportError: matplotlib is missing (the message names the extra to install).
    """
    players, roles, scores = league_payoff(archive)
    infos = {info.id: info for info in archive.snapshots(include_pruned=True)}
    labels = [_label(p, infos.get(p)) for p in players]
    n = len(players)
    size = min(4.0 + 0.35 * n, 22.0)
    figure = new_figure(size + 1.5, size)
    axes = figure.add_subplot()
    image = axes.imshow(np.ma.masked_invalid(scores), cmap="RdBu", vmin=0.0, vmax=1.0)
    figure.colorbar(image, ax=axes, label="row player's mean score")
    ticks = np.arange(n)
    axes.set_xticks(ticks, labels=labels, rotation=70, ha="right", fontsize="x-small")
    axes.set_yticks(ticks, labels=labels, fontsize="x-small")
    for labels in (axes.get_xticklabels(), axes.get_yticklabels()):
        for label, role in zip(labels, roles, strict=True):
            label.set_color(ROLE_COLOURS.get(role, "black"))
    for k in range(1, n):
        if roles[k] != roles[k - 1]:
            axes.axhline(k - 0.5, color="black", linewidth=1)
            axes.axvline(k - 0.5, color="black", linewidth=1)
    handles = [
        axes.plot([], [], "s", color=ROLE_COLOURS.get(role, "black"), label=role)[0]
        for role in dict.fromkeys(roles)
    ]
    if handles:
        axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.25, 1.0), fontsize="small")
    axes.set_title(title or "League payoff matrix by role")
    figure.tight_layout()
    return save_figure(figure, path)
