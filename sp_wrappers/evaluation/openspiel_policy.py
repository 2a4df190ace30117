"""Our policies as OpenSpiel policies, for OpenSpiel's own exact evaluation (NashConv, best
response).

An OpenSpiel game played through Shimmy (:func:`~sp_wrappers.games.adapters.openspiel_env`) shows
each player an observation computed from OpenSpiel's state. :func:`openspiel_policy` wraps a policy
of ours (an SB3 model, a snapshot's :class:`~sp_wrappers.SB3Policy`, any
:class:`~sp_wrappers.Policy`) as an ``open_spiel.python.policy.Policy`` whose
``action_probabilities(state, player)`` are that policy's probabilities on the legal actions
(masked and renormalised), given exactly the observation the env would give that player in that
state (the adapter's own :meth:`observation_of`). :func:`tabular_policy` turns a policy, or a
weighted mixture of policies, into OpenSpiel's ``TabularPolicy`` in one batched pass over the
information states; a mixture is reach-weighted as OpenSpiel's ``PolicyAggregator`` does: at each
information state, each policy counts with its weight times the probability that it would have
played the player's own moves so far.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.openspiel import fixed_openspiel_class
from .policy_probabilities import action_probabilities, as_mixture, as_scored_policy

__all__ = ["find_openspiel_adapter", "openspiel_policy", "tabular_policy"]

_CLASSES: dict[str, type] = {}


def find_openspiel_adapter(game: Any) -> Any | None:
    """The Shimmy OpenSpiel adapter inside ``game`` (itself, or under PettingZoo wrappers that do
    not change observations), ready to answer ``observation_of``; ``None`` for other games.

    A raw ``OpenSpielCompatibilityV0`` is answered by a fixed adapter on the same OpenSpiel game
    (same observations). A wrapper that changes observations on the way raises ``ValueError``:
    the policy would be evaluated on observations it never sees.
    """
    from pettingzoo.utils.wrappers import BaseWrapper

    layer = game
    for _ in range(64):
        if callable(getattr(type(layer), "observation_of", None)):
            return layer
        if type(layer).__name__ == "OpenSpielCompatibilityV0" and hasattr(layer, "_env"):
            return fixed_openspiel_class()(env=layer._env)
        inner = getattr(layer, "env", None)
        if inner is None or inner is layer:
            return None
        if isinstance(layer, BaseWrapper) and type(layer).observe is not BaseWrapper.observe:
            if not type(layer).__module__.startswith("pettingzoo.utils.wrappers"):
                found = find_openspiel_adapter(inner)
                if found is not None:
                    raise ValueError(
                        f"{type(layer).__name__} changes the observations of the OpenSpiel game "
                        "under it; evaluate the policy on the game it was trained on without "
                        "that wrapper, or with the observation it gives."
                    )
                return None
        layer = inner
    return None


def _policy_class() -> type:
    if "OpenSpielPolicy" in _CLASSES:
        return _CLASSES["OpenSpielPolicy"]
    from open_spiel.python import policy as openspiel

    class OpenSpielPolicy(openspiel.Policy):
        """A policy of ours as an OpenSpiel ``Policy`` (see :func:`openspiel_policy`)."""

        def __init__(self, adapter: Any, policy: Any) -> None:
            game = adapter.openspiel_game
            super().__init__(game, list(range(game.num_players())))
            self.adapter = adapter
            self.policy = policy
            self.n_actions = game.num_distinct_actions()
            self._cache: dict[tuple[int, str], np.ndarray] = {}

        def observation(self, state: Any, player: int) -> Any:
            """What the env shows ``player`` in ``state`` (and what the policy is given)."""
            return self.adapter.observation_of(state, player)

        def probabilities(self, state: Any, player: int) -> np.ndarray:
            """The policy's probability of every action (0 on illegal ones) in ``state``."""
            key = (player, state.information_state_string(player))
            cached = self._cache.get(key)
            if cached is None:
                mask = np.zeros((1, self.n_actions), dtype=bool)
                mask[0, state.legal_actions(player)] = True
                obs = np.asarray(self.observation(state, player))[None]
                cached = self._cache[key] = action_probabilities(self.policy, obs, mask)[0]
            return cached

        def action_probabilities(self, state: Any, player_id: int | None = None) -> dict:
            player = state.current_player() if player_id is None else player_id
            probabilities = self.probabilities(state, player)
            return {int(a): float(probabilities[a]) for a in state.legal_actions(player)}

    OpenSpielPolicy.__module__ = __name__
    _CLASSES["OpenSpielPolicy"] = OpenSpielPolicy
    return OpenSpielPolicy


def openspiel_policy(game: Any, policy: Any, deterministic: bool | None = None) -> Any:
    """``policy`` as an ``open_spiel.python.policy.Policy`` of the OpenSpiel game inside ``game``
    (an :func:`~sp_wrappers.games.adapters.openspiel_env` env), playing every seat.

    :param game: the PettingZoo env the policy plays (its observations are the policy's input).
    :param policy: an SB3 model or policy, an ``SB3Policy`` (a snapshot) or any ``Policy``.
    :param deterministic: play the most likely legal action; ``None`` keeps an ``SB3Policy``'s
        own setting (an SB3 model is then sampled).

    >>> from sp_wrappers import RandomPolicy
    >>> from sp_wrappers.games.adapters import openspiel_env
    >>> game = openspiel_env("kuhn_poker")
    >>> uniform = openspiel_policy(game, RandomPolicy())
    >>> state = game.openspiel_game.new_initial_state().child(0).child(1)   # cards dealt
    >>> uniform.action_probabilities(state)
    {0: 0.5, 1: 0.5}
    """
    adapter = find_openspiel_adapter(game)
    if adapter is None:
        raise ValueError(f"{game} is not an OpenSpiel game played through Shimmy's adapter.")
    return _policy_class()(adapter, as_scored_policy(policy, deterministic))


def tabular_policy(game: Any, policy_or_mixture: Any, deterministic: bool | None = None) -> Any:
    """OpenSpiel's ``TabularPolicy`` of a policy, or of a mixture of policies (a list of
    ``(policy, weight)`` pairs, reach-weighted: see the module docstring), on the OpenSpiel game
    inside ``game``. Every information state is answered in one batch per policy.

    :param game: an :func:`~sp_wrappers.games.adapters.openspiel_env` env.
    :param policy_or_mixture: a policy, or ``[(policy, weight), ...]``.
    :param deterministic: as in :func:`openspiel_policy`, for every policy of the mixture.
    """
    from open_spiel.python import policy as openspiel

    adapter = find_openspiel_adapter(game)
    if adapter is None:
        raise ValueError(f"{game} is not an OpenSpiel game played through Shimmy's adapter.")
    mixture = as_mixture(policy_or_mixture, deterministic)
    table = openspiel.TabularPolicy(adapter.openspiel_game)
    states = table.states
    masks = np.asarray(table.legal_actions_mask, dtype=bool)
    # Each policy's probabilities at every information state: (K, n_states, n_actions).
    per_policy = np.zeros((len(mixture), *masks.shape))
    for player in range(adapter.openspiel_game.num_players()):
        rows = [i for i, s in enumerate(states) if s.current_player() == player]
        if not rows:
            continue
        obs = np.stack([np.asarray(adapter.observation_of(states[i], player)) for i in rows])
        for k, (member, _) in enumerate(mixture):
            per_policy[k, rows] = action_probabilities(member, obs, masks[rows])
    weights = np.array([w for _, w in mixture])
    if len(mixture) == 1:
        table.action_probability_array[:] = per_policy[0]
        return table
    reach = np.zeros((len(states), len(mixture)))  # weight x own reach, at each state's first visit
    seen = np.zeros(len(states), dtype=bool)
    n_players = adapter.openspiel_game.num_players()
    stack = [(adapter.openspiel_game.new_initial_state(), np.tile(weights, (n_players, 1)))]
    while stack:
        state, own = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend((state.child(a), own) for a, _ in state.chance_outcomes())
            continue
        player = state.current_player()
        row = table.state_index(state)
        if not seen[row]:
            seen[row] = True
            reach[row] = own[player]
        for action in state.legal_actions():
            child_reach = own.copy()
            child_reach[player] = own[player] * per_policy[:, row, action]
            stack.append((state.child(action), child_reach))
    for row in range(len(states)):
        r = reach[row] if reach[row].sum() > 0 else weights  # unreachable: the plain weights
        table.action_probability_array[row] = (r / r.sum()) @ per_policy[:, row]
    return table
