"""The games layer: the PettingZoo games sp_wrappers knows by name, and players to measure against.

The registry of games by name, reference players (perfect tic-tac-toe, alpha-beta Connect Four),
wrappers that make games fit self-play, board symmetries, move notations for people, and adapters
for other game families (OpenSpiel through Shimmy).

It may import ``sp_wrappers.core`` only.
"""

from __future__ import annotations

from ..core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".registry": [
            "GameSpec",
            "GAMES",
            "QUADRAPONG_TEAMS",
            "resolve_game",
            "make_game",
            "game_factory",
            "reference_opponents",
        ],
        ".errors": ["UnknownGameError", "MissingGameError", "MoveError"],
        ".baselines": ["PerfectTicTacToePolicy", "AlphaBetaConnectFourPolicy"],
        ".adapters": ["openspiel_env"],
        ".wrappers": ["RandomOpenings"],
        ".symmetries": ["Symmetry", "symmetries_for"],
        ".notation": ["Notation", "notation_for"],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
