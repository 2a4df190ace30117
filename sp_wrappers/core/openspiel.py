"""Shimmy's OpenSpiel adapter, fixed for games with chance events and able to observe through
OpenSpiel's information-state tensor: :func:`fixed_openspiel_class` (the adapter that ends games
only when OpenSpiel does) and :func:`fix_shimmy_truncation` (applies it to an env built with the
raw adapter).

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

import numpy as np

from .errors import SpWrappersError
from .extras import require

__all__ = ["fixed_openspiel_class", "fix_shimmy_truncation", "OBSERVATIONS", "ObservationError"]

#: What an OpenSpiel game's ``observe`` gives: Shimmy's choice (``"default"``: the observation
#: tensor where the game has one) or the information-state tensor, which keeps the whole history a
#: player knows (Leduc poker's observation tensor drops the betting rounds' history).
OBSERVATIONS = ("default", "information_state")


class ObservationError(SpWrappersError, ValueError):
    """An OpenSpiel observation that is unknown, or that the game does not provide."""


_CLASSES: dict[str, type] = {}


def fixed_openspiel_class() -> type:
    """Shimmy's ``OpenSpielCompatibilityV0`` with games ended only when OpenSpiel says so (built
    on first use: Shimmy is optional)."""
    if "OpenSpielGame" in _CLASSES:
        return _CLASSES["OpenSpielGame"]
    adapter = require("shimmy.openspiel_compatibility", "openspiel", "openspiel_env")
    OpenSpielCompatibilityV0 = adapter.OpenSpielCompatibilityV0

    from gymnasium import spaces
    from gymnasium.utils import EzPickle

    class OpenSpielGame(OpenSpielCompatibilityV0):
        """Shimmy's OpenSpiel adapter that ends games only when OpenSpiel does, and observes
        either as Shimmy does or through OpenSpiel's information-state tensor.

        :param observation: ``"default"`` (Shimmy's choice: the observation tensor, else the
            information-state tensor, else a string) or ``"information_state"``.
        """

        def __init__(
            self,
            env: Any = None,
            game_name: str | None = None,
            render_mode: str | None = None,
            config: dict | None = None,
            observation: str = "default",
        ) -> None:
            if observation not in OBSERVATIONS:
                raise ObservationError(
                    f"observation must be one of {OBSERVATIONS}, got {observation!r}."
                )
            self.observation_type = observation  # read by the spaces Shimmy builds below
            super().__init__(env=env, game_name=game_name, render_mode=render_mode, config=config)
            # Shimmy pickles (env, game_name, render_mode) only: keep the config and the view.
            EzPickle.__init__(
                self,
                env=env,
                game_name=game_name,
                render_mode=render_mode,
                config=config,
                observation=observation,
            )

        @property
        def openspiel_game(self) -> Any:
            """The ``pyspiel.Game`` this env plays."""
            return self._env

        def _information_state(self) -> bool:
            return getattr(self, "observation_type", "default") == "information_state"

        def _update_observation_spaces(self) -> None:
            if not self._information_state():
                super()._update_observation_spaces()
                return
            if not self._env.get_type().provides_information_state_tensor:
                raise ObservationError(
                    f"OpenSpiel's {self._env.get_type().short_name} has no information-state "
                    "tensor, so observation='information_state' cannot be given; use the "
                    "default observation."
                )
            shape = self._env.information_state_tensor_shape()
            for agent in self.possible_agents:
                self.observation_spaces[agent] = spaces.Box(-np.inf, np.inf, shape, np.float64)

        def _update_observations(self) -> None:
            if not self._information_state():
                super()._update_observations()
                return
            if self.game_state.is_terminal():
                return
            self.observations = {
                self.agents[i]: self.observation_of(self.game_state, i) for i in self.agent_ids
            }

        def observation_of(self, state: Any, player: int) -> Any:
            """What ``observe`` gives player ``player`` (its OpenSpiel number) at the OpenSpiel
            ``state``, computed as this adapter computes it during a game (a tree walk asks this
            for states no game has reached)."""
            kind = self.game_type
            shape = self.observation_spaces[self.possible_agents[player]].shape
            if self._information_state():
                return np.array(state.information_state_tensor(player)).reshape(shape)
            if kind.provides_observation_tensor:
                return np.array(state.observation_tensor(player)).reshape(shape)
            if kind.provides_information_state_tensor:
                return np.array(state.information_state_tensor(player)).reshape(shape)
            if kind.provides_observation_string:
                return state.observation_string(player)
            return state.information_state_string(player)

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
