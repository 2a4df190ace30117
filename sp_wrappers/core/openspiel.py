"""The fix for Shimmy's OpenSpiel adapter on games with chance events: an adapter that ends games
only when OpenSpiel does.

Shimmy 2.0's ``OpenSpielCompatibilityV0`` counts the start state and every chance event (each card
dealt, each die rolled) against the game's maximum number of player moves, so it truncates games
with chance events early: Kuhn poker is truncated after its first move. OpenSpiel games always end
within that maximum, so the fixed adapter never truncates them. ``openspiel_env`` (in
:mod:`sp_wrappers.games.adapters`) builds games with it; ``SelfPlayEnv`` and the vector env apply
it to a raw adapter they are given (:func:`fix_shimmy_truncation`).

>>> from shimmy import OpenSpielCompatibilityV0
>>> game = OpenSpielCompatibilityV0(game_name="kuhn_poker")
>>> fix_shimmy_truncation(game), type(game).__name__
(True, 'OpenSpielGame')
>>> fix_shimmy_truncation(game)   # already fixed
False
"""

from __future__ import annotations

from typing import Any

__all__ = ["fixed_openspiel_class", "fix_shimmy_truncation"]

_CLASSES: dict[str, type] = {}


def fixed_openspiel_class() -> type:
    """Shimmy's ``OpenSpielCompatibilityV0`` with games ended only when OpenSpiel says so (built
    on first use: Shimmy is optional)."""
    if "OpenSpielGame" in _CLASSES:
        return _CLASSES["OpenSpielGame"]
    try:
        from shimmy.openspiel_compatibility import OpenSpielCompatibilityV0
    except ImportError as error:  # pragma: no cover - depends on the optional extra
        raise ImportError(
            f"openspiel_env needs Shimmy's OpenSpiel adapter ({error}). "
            'Install it with pip install "sp-wrappers[openspiel]".'
        ) from None

    class OpenSpielGame(OpenSpielCompatibilityV0):
        """Shimmy's OpenSpiel adapter that ends games only when OpenSpiel does."""

        def _update_termination_truncation(self) -> None:
            super()._update_termination_truncation()
            self.truncations = {agent: False for agent in self.agents}

    # pickled under its historical home, which resolves it here (sp_wrappers.games.adapters)
    OpenSpielGame.__module__ = "sp_wrappers.games.adapters"
    OpenSpielGame.__qualname__ = "OpenSpielGame"
    _CLASSES["OpenSpielGame"] = OpenSpielGame
    return OpenSpielGame


def fix_shimmy_truncation(game: Any) -> bool:
    """Give a raw ``OpenSpielCompatibilityV0`` env of a game with chance events the fix of
    :func:`fixed_openspiel_class`, in place; return whether it was applied.

    :param game: any PettingZoo env; only Shimmy's raw OpenSpiel adapter on a game with chance
        events is changed (its class becomes the fixed subclass, which only overrides how
        truncation is computed).
    """
    if type(game).__name__ != "OpenSpielCompatibilityV0":
        return False
    game_type = getattr(game, "game_type", None)
    if game_type is None or "DETERMINISTIC" in str(getattr(game_type, "chance_mode", "")):
        return False
    fixed = fixed_openspiel_class()
    if not issubclass(fixed, type(game)):
        return False
    game.__class__ = fixed
    if getattr(game, "agents", None):  # already reset: drop the early truncations it computed
        game.truncations = {agent: False for agent in game.agents}
    return True
