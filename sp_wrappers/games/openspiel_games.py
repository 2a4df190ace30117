"""OpenSpiel's small poker games as game constructors for ``sp-wrappers train``.

Each is :func:`~sp_wrappers.games.adapters.openspiel_env` with the observation the game needs, so
that its import path names the game (``sp-wrappers train
sp_wrappers.games.openspiel_games:kuhn_poker``) and gets the tuned recipe of
:mod:`sp_wrappers.runs.recipes` (``KUHN_POKER``, ``LEDUC_POKER``). Both are two-player zero-sum
games small enough for exact exploitability
(:func:`~sp_wrappers.evaluation.exploitability.exploitability`). Needs the ``openspiel`` extra.

>>> kuhn_poker().observation_space("player_0").shape
(7,)
>>> leduc_poker().observation_space("player_0").shape   # the information state: with history
(30,)
"""

from __future__ import annotations

from typing import Any

from .adapters import openspiel_env

__all__ = ["kuhn_poker", "leduc_poker"]


def kuhn_poker(**kwargs: Any) -> Any:
    """OpenSpiel's Kuhn poker (three cards, one bet) as a PettingZoo ``AECEnv``; ``kwargs`` go
    to :func:`~sp_wrappers.games.adapters.openspiel_env`. Its default observation already holds
    everything a player has seen."""
    return openspiel_env("kuhn_poker", **kwargs)


def leduc_poker(observation: str = "information_state", **kwargs: Any) -> Any:
    """OpenSpiel's Leduc poker (six cards, two rounds) as a PettingZoo ``AECEnv``, observing
    OpenSpiel's information-state tensor by default: Shimmy's default observation drops the
    betting history, which bounds how well any policy that sees only it can play."""
    return openspiel_env("leduc_poker", observation=observation, **kwargs)
