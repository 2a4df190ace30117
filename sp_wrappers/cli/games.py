"""``sp-wrappers games``: every game name the commands take, one list per source.

::

    sp-wrappers games               # registered, PettingZoo and OpenSpiel names
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_command

__all__ = ["add_games_parser", "cmd_games"]


def cmd_games(args: argparse.Namespace) -> int:
    """Print the registered games, PettingZoo's environments and OpenSpiel's games. Returns 0."""
    from ..games.registry import OPENSPIEL_PREFIX, game_names

    names = game_names()
    print("Registered:", ", ".join(names["registered"]))
    print(f"PettingZoo ({len(names['pettingzoo'])}):", ", ".join(names["pettingzoo"]))
    print(
        f"OpenSpiel ({len(names['openspiel'])}; {OPENSPIEL_PREFIX}NAME where a name clashes):",
        ", ".join(names["openspiel"]) or 'not installed: pip install "sp-wrappers[openspiel]"',
    )
    return 0


def add_games_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``games`` command to ``sp-wrappers``'s subparsers."""
    return add_command(
        subparsers,
        "games",
        cmd_games,
        help="list the game names train, league and psro take",
        description="The registered games, every PettingZoo environment by its own name and "
        "every OpenSpiel game by its OpenSpiel name (openspiel:NAME where a name clashes).",
        run_dir=None,
    )
