"""``strength.json``'s format: the strength history :class:`~sp_wrappers.training.strength.
StrengthCallback` writes and a resumed run reads back (``docs/formats.md``).

>>> STRENGTH_FORMAT.name, STRENGTH_FORMAT.version
('strength.json', 1)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.state_file import Int, List, Map, Num, Obj, Optional, StateFormat, Str

__all__ = ["STRENGTH_FORMAT"]


def _check_rungs(data: Mapping[str, Any], refuse: Callable[[str, str], Exception]) -> None:
    """Every evaluation scores the ladder's rungs."""
    ladder = set(data["ladder"])
    for index, evaluation in enumerate(data["evaluations"]):
        if set(evaluation["scores"]) != ladder:
            raise refuse(
                f"evaluations[{index}].scores",
                f"scores {sorted(evaluation['scores'])}, not the ladder {sorted(ladder)}",
            )


_WDL = List(Int(min=0), max_length=3)
_COUNT = Int(min=0)
#: One evaluation's one-move tactics (:class:`~sp_wrappers.evaluation.tactics.TacticsReport`'s
#: ``as_dict`` and the rung it played): counts, with shares that are ``null`` when empty.
_TACTICS = Obj(
    {
        name: _COUNT
        for name in (
            "positions",
            "wins_taken",
            "win_chances",
            "threats_blocked",
            "single_threats",
            "wins_handed",
            "safe_chances",
        )
    },
    optional={
        "opponent": Str(),
        **{
            f"{name}_share": Optional(Num(min=0, max=1))
            for name in ("wins_taken", "threats_blocked", "wins_handed")
        },
    },
)
_EVALUATION = Obj(
    {"step": Int(min=0), "scores": Map(Num(min=0, max=1))},
    optional={
        "wall_time": Num(min=0),
        "seconds": Num(min=0),
        "wdl": Map(_WDL),
        "by_seat": Map(Map(_WDL)),
        "distinct_games": Map(Int(min=0)),
        "rating": Optional(Num(finite=False)),
        "rating_std_error": Optional(Num(finite=False)),
        "rating_interval": Optional(List(Optional(Num(finite=False)))),
        "tactics": _TACTICS,
    },
)
_RUNG_MATCH = Obj(
    {"player_a": Str(), "player_b": Str(), "games": Int(min=0)},
    optional={"wins": Int(min=0), "draws": Int(min=0), "losses": Int(min=0)},
)

#: ``strength.json``: one reader, one writer (:class:`~sp_wrappers.core.state_file.StateFormat`).
STRENGTH_FORMAT = StateFormat(
    "strength.json",
    1,
    Obj(
        {
            "ladder": List(Str()),
            "evaluations": List(_EVALUATION),
        },
        optional={
            "openings": List(List(Int(min=0))),
            "anchor_rating": Num(),
            "repeats": Int(min=1),
            "seed": Optional(Int()),
            "rung_matches": List(_RUNG_MATCH),
            "ladder_seconds": Num(min=0),
            "ladder_ratings": Map(Num(finite=False)),
        },
    ),
    fix="restore strength.json from a backup, or move it away to measure the run's strength "
    "again from its next evaluation",
    checks=(_check_rungs,),
)
