"""The games layer: the PettingZoo games sp_wrappers knows by name, and players to measure against.

The registry of games by name, reference players (perfect tic-tac-toe, alpha-beta Connect Four),
wrappers that make games fit self-play, board symmetries, move notations for people, and adapters
for other game families (OpenSpiel through Shimmy).

It may import ``sp_wrappers.core`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports
from .errors import MissingGameError, MoveError, UnknownGameError

if TYPE_CHECKING:  # pragma: no cover
    from .adapters import openspiel_env
    from .baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy
    from .notation import Notation, notation_for
    from .registry import (
        GAMES,
        QUADRAPONG_TEAMS,
        GameSpec,
        game_factory,
        make_game,
        reference_opponents,
        resolve_game,
    )
    from .symmetries import Symmetry, symmetries_for
    from .wrappers import RandomOpenings

__all__ = [
    "GameSpec",
    "GAMES",
    "QUADRAPONG_TEAMS",
    "resolve_game",
    "make_game",
    "game_factory",
    "reference_opponents",
    "UnknownGameError",
    "MissingGameError",
    "MoveError",
    "PerfectTicTacToePolicy",
    "AlphaBetaConnectFourPolicy",
    "openspiel_env",
    "RandomOpenings",
    "Symmetry",
    "symmetries_for",
    "Notation",
    "notation_for",
]

# Names load on first use: the registry's names without the reference players, notations and
# symmetries, and RandomOpenings (a PettingZoo wrapper) only when asked for, so that ``import
# sp_wrappers`` (which registers the Gymnasium ids through this package) stays cheap.
__getattr__, __dir__ = lazy_exports(
    __name__,
    modules={
        ".adapters": ["openspiel_env"],
        ".baselines": ["AlphaBetaConnectFourPolicy", "PerfectTicTacToePolicy"],
        ".notation": ["Notation", "notation_for"],
        ".registry": [
            "GAMES",
            "QUADRAPONG_TEAMS",
            "GameSpec",
            "game_factory",
            "make_game",
            "reference_opponents",
            "resolve_game",
        ],
        ".symmetries": ["Symmetry", "symmetries_for"],
        ".wrappers": ["RandomOpenings"],
    },
)
