"""What the players of a game see of each other, and what follows for playing it.

:func:`hidden_information`: the players see different things (cards in a hand), so nothing
computed from one seat's observation may be shown to another player before the game is over.
:func:`mixed_equilibria`: hidden information or simultaneous moves, where good play is random
(a poker bot that always makes its most likely move is read by its opponent), so a policy
plays such a game by sampling its moves. :func:`is_openspiel_game` tells an OpenSpiel game
played through Shimmy's adapter.

A game is known by its ``metadata["name"]`` (:data:`HIDDEN_INFORMATION_GAMES`), by OpenSpiel's
own game type, or says so itself: ``metadata["hidden_information"] = True`` in a game of your own.

>>> from pettingzoo.classic import texas_holdem_v4, tictactoe_v3
>>> hidden_information(texas_holdem_v4.env()), mixed_equilibria(tictactoe_v3.env())
(True, False)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "HIDDEN_INFORMATION_GAMES",
    "hidden_information",
    "mixed_equilibria",
    "is_openspiel_game",
]

#: PettingZoo's games (``metadata["name"]``) in which the players see different things.
HIDDEN_INFORMATION_GAMES = frozenset(
    {"texas_holdem_v4", "texas_holdem_no_limit_v6", "leduc_holdem_v4", "gin_rummy_v4", "hanabi_v5"}
)


def is_openspiel_game(env: Any) -> bool:
    """Whether ``env`` is an OpenSpiel game played through Shimmy's ``OpenSpielCompatibilityV0``
    (under any PettingZoo wrappers), such as :func:`~sp_wrappers.games.adapters.openspiel_env`.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> is_openspiel_game(tictactoe_v3.env())
    False
    """
    raw = getattr(env, "unwrapped", env)
    return any(kind.__name__ == "OpenSpielCompatibilityV0" for kind in type(raw).__mro__)


def _openspiel_type(env: Any) -> Any:
    raw = getattr(env, "unwrapped", env)
    return getattr(raw, "game_type", None) if is_openspiel_game(env) else None


def hidden_information(env: Any) -> bool:
    """Whether the players of ``env`` (a PettingZoo env) see different things: a game of
    :data:`HIDDEN_INFORMATION_GAMES`, an OpenSpiel game of imperfect information (Kuhn and Leduc
    poker), or a game whose ``metadata["hidden_information"]`` says so.

    >>> from sp_wrappers.games.adapters import openspiel_env
    >>> hidden_information(openspiel_env("kuhn_poker"))
    True
    """
    metadata = getattr(env, "metadata", None) or {}
    if "hidden_information" in metadata:
        return bool(metadata["hidden_information"])
    game_type = _openspiel_type(env)
    if game_type is not None:
        return "IMPERFECT" in str(game_type.information)
    return str(metadata.get("name")) in HIDDEN_INFORMATION_GAMES


def mixed_equilibria(env: Any) -> bool:
    """Whether good play of ``env`` is random: hidden information (:func:`hidden_information`)
    or simultaneous moves (a parallel env, ``metadata["is_parallelizable"]``, OpenSpiel's
    simultaneous games). Board games such as tic-tac-toe, Connect Four, chess and Go are not.

    >>> from pettingzoo.classic import rps_v2
    >>> mixed_equilibria(rps_v2.env())
    True
    """
    from pettingzoo.utils.env import ParallelEnv

    if hidden_information(env) or isinstance(env, ParallelEnv):
        return True
    game_type = _openspiel_type(env)
    if game_type is not None:
        return "SIMULTANEOUS" in str(game_type.dynamics)
    return bool((getattr(env, "metadata", None) or {}).get("is_parallelizable", False))
