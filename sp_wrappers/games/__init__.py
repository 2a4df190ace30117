"""The games layer: the PettingZoo games sp_wrappers knows by name, and players to measure against.

It holds the registry of games (``registry``: ``GAMES``, ``make_game``, ``game_factory``), the
reference players (``baselines``: perfect tic-tac-toe, alpha-beta Connect Four), wrappers that
make games fit self-play (``wrappers``) and adapters for other game families (``adapters``:
OpenSpiel through Shimmy).

It may import ``sp_wrappers.core`` only.
"""

from .registry import (
    GAMES,
    QUADRAPONG_TEAMS,
    GameSpec,
    MissingGameError,
    UnknownGameError,
    game_factory,
    make_game,
    reference_opponents,
    resolve_game,
)

__all__ = [
    "GameSpec",
    "GAMES",
    "UnknownGameError",
    "MissingGameError",
    "QUADRAPONG_TEAMS",
    "resolve_game",
    "make_game",
    "game_factory",
    "reference_opponents",
]
