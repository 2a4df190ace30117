"""``ratings.json``'s format: the ratings and final evaluation a single, team or league run
writes at its end (``docs/formats.md``), one reader and one writer for the three.

>>> RATINGS_FORMAT.name, RATINGS_FORMAT.version
('ratings.json', 1)
"""

from __future__ import annotations

from typing import Any

from ..core.run_layout import RATINGS_NAME
from ..core.state_file import (
    AnyValue,
    Int,
    List,
    Map,
    Num,
    Obj,
    Optional,
    SnapshotId,
    Spec,
    StateFormat,
    Str,
)

__all__ = ["RATINGS_FORMAT"]

_RECORD = Obj(
    {"games": Int(min=0), "wins": Int(min=0), "draws": Int(min=0), "losses": Int(min=0)},
    optional={"distinct_games": Int(min=0), "openings": Int(min=0), "opening_plies": Int(min=0)},
)


class _Evaluation(Spec):
    """The final evaluation, however deeply it nests: a record (``games``, ``wins``, ``draws``,
    ``losses``), or an object of such trees (train: opponent -> record; league: player ->
    opponent -> record; teams: team -> record)."""

    def check(self, value: Any, where: str, context: Any) -> None:
        if not isinstance(value, dict):
            raise self.refuse(value, where)
        if "games" in value:
            _RECORD.check(value, where, context)
            return
        for key, item in value.items():
            self.check(item, self.at(where, key), context)

    def describe(self) -> str:
        return "a record of games, wins, draws and losses, or an object of them"


#: ``ratings.json``: one reader, one writer (:class:`~sp_wrappers.core.state_file.StateFormat`).
RATINGS_FORMAT = StateFormat(
    RATINGS_NAME,
    1,
    Obj(
        {"method": Str()},
        optional={
            "kind": Str(),
            "anchor": Optional(Str()),
            "anchor_rating": Optional(Num()),
            "final_snapshot": Optional(SnapshotId()),
            "final": Optional(Map(AnyValue())),
            "final_snapshots": Map(SnapshotId()),
            "evaluation": _Evaluation(),
            "players": List(Map(AnyValue())),
            "models": Map(List(Str())),
            "teams": Map(Obj(optional={"elo": Optional(Num()), "snapshots": Map(AnyValue())})),
            "exploitability": AnyValue(),
        },
    ),
    fix="restore ratings.json from a backup, or move it away (the run's report then leaves out "
    "its final evaluation)",
)
