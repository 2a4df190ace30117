"""The archive's records: one snapshot's index row and one match row, as Python objects.

Iterating an archive gives one record per snapshot, reading its history one per game; rows and
ids read from the index are checked as they become records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checks import (
    check_row,
)

__all__ = ["SnapshotInfo", "MatchRecord", "as_snapshot_id", "player_name", "info_from_row"]


@dataclass(frozen=True)
class SnapshotInfo:
    """One snapshot's index row. ``pruned`` rows (from ``snapshots(include_pruned=True)``) have
    no weights file any more; their ids stay meaningful in the match history and ratings."""

    id: str
    step: int
    wall_time: float
    tags: tuple[str, ...]
    sha256: str
    file: Path
    ratings: dict[str, float] = field(default_factory=dict)
    games: int = 0
    policy_spec: dict[str, Any] = field(default_factory=dict, repr=False)
    seq: int = 0
    pruned: bool = False


@dataclass(frozen=True)
class MatchRecord:
    """One game: ``score_a`` is player A's outcome (1 win, 0.5 draw, 0 loss)."""

    id: int
    wall_time: float
    step: int | None
    player_a: str
    player_b: str
    score_a: float
    seat_a: str | None
    seat_b: str | None
    source: str
    team_a: str | None = None
    team_b: str | None = None
    config: dict[str, Any] | None = None


def info_from_row(row: Sequence[Any], index: Path, directory: Path) -> SnapshotInfo:
    """A checked snapshots row; its file is always ``snapshots/<id>.safetensors``."""
    fields = check_row(row, index)
    return SnapshotInfo(file=directory / f"{fields['id']}.safetensors", **fields)


def as_snapshot_id(snapshot: str | SnapshotInfo) -> str:
    """A snapshot id from an id or a :class:`SnapshotInfo` (what iterating an archive gives)."""
    if isinstance(snapshot, SnapshotInfo):
        return snapshot.id
    if isinstance(snapshot, str):
        return snapshot
    raise TypeError(
        f"Expected a snapshot id (str) or a SnapshotInfo, got {type(snapshot).__name__}."
    )


def player_name(player: str | SnapshotInfo) -> str:
    return player.id if isinstance(player, SnapshotInfo) else str(player)
