"""Games from other frameworks as PettingZoo envs that ``SelfPlayEnv`` can drive as they are.

This module holds :func:`openspiel_env`, OpenSpiel games through Shimmy's PettingZoo adapter
(``shimmy.OpenSpielCompatibilityV0``, the Farama-maintained bridge; ``pip install
"sp-wrappers[openspiel]"``) with one fix: Shimmy 2.0 counts the start state and every chance
event (each card dealt, each die rolled) against the game's maximum number of player moves, so it
truncates games with chance events early; Kuhn poker is truncated after its first move. OpenSpiel
games always end within that maximum, so the fixed adapter never truncates them: they end when
OpenSpiel says the game is over (:mod:`sp_wrappers.core.openspiel`, which ``SelfPlayEnv`` also
applies to a raw Shimmy adapter it is given).

Everything else is Shimmy's own: action masks in ``info["action_mask"]`` (``SelfPlayEnv`` reads
them there), chance events drawn from the generator that ``reset(seed=...)`` seeds.

>>> from sp_wrappers import SelfPlayEnv
>>> env = SelfPlayEnv(openspiel_env("kuhn_poker"), learner="player_0")
>>> obs, info = env.reset(seed=0)
>>> obs.shape, env.action_masks().tolist()
((7,), [True, True])
"""

from __future__ import annotations

from typing import Any

from ..core.openspiel import fixed_openspiel_class

__all__ = ["openspiel_env"]


def __getattr__(name: str) -> Any:
    # ``OpenSpielGame`` is built on first use (Shimmy is optional); pickle finds it here.
    if name == "OpenSpielGame":
        return fixed_openspiel_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def openspiel_env(
    game_name: str,
    config: dict[str, Any] | None = None,
    observation: str = "default",
    **kwargs: Any,
) -> Any:
    """The OpenSpiel game ``game_name`` (``pyspiel.load_game`` name, e.g. ``"leduc_poker"``) as
    a PettingZoo ``AECEnv``, through Shimmy with the truncation fix described above.

    :param game_name: the OpenSpiel short name.
    :param config: game parameters (``pyspiel.load_game(game_name, config)``).
    :param observation: ``"default"`` (Shimmy's: the observation tensor where the game has one)
        or ``"information_state"``: OpenSpiel's information-state tensor, everything the player
        has seen. Shimmy's observation of Leduc poker drops the betting history (its 936
        information states look like 516 observations), which bounds how well any policy that
        sees only it can play; the information state does not.
    :param kwargs: other ``OpenSpielCompatibilityV0`` arguments (``render_mode``).

    >>> openspiel_env("leduc_poker").observation_space("player_0").shape
    (16,)
    >>> openspiel_env("leduc_poker", observation="information_state").observation_space(
    ...     "player_0").shape
    (30,)
    """
    return fixed_openspiel_class()(
        game_name=game_name, config=config, observation=observation, **kwargs
    )
