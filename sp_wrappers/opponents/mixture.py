"""A weighted mixture of policies played as one player: each game draws one member and plays it
to the end (a population's mixture, as PSRO's meta-strategy or an archive's Nash mixture means
it: "pick a member with these odds, then play as it does").

The member of a game is drawn at the game's first move, from the generator the caller passes,
and kept for every later move of that game. A game is known by the ``state_keys`` every caller
in this package passes to policies that say they are ``recurrent`` (the envs, :class:`PolicyPlayer
<sp_wrappers.core.policies.PolicyPlayer>`, forced openings): a key is ``(..., game, seat)``, and
the key without its seat names the game, so both seats of one game played by one mixture
player are the same member, as a snapshot playing both seats is one network.

Exact evaluation reads the mixture as its members and weights
(:func:`~sp_wrappers.evaluation.policy_probabilities.as_mixture`), reach-weighted, which is
what drawing per game means.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ..core.policies import Observations, act_in_games

__all__ = ["MixturePolicy"]

#: Games whose member a mixture remembers at once; the oldest are forgotten first (a game that
#: long unfinished starts a new draw).
MAX_OPEN_GAMES = 65_536


class MixturePolicy:
    """Members with weights, one member drawn per game (see the module docstring).

    :param members: ``(policy, weight)`` pairs; weights of 0 or more, not all 0 (normalised).
    :param policy_id: the player's name in matches and ratings.

    >>> from sp_wrappers.core.policies import RandomPolicy
    >>> a, b = RandomPolicy(policy_id="a"), RandomPolicy(policy_id="b")
    >>> mix = MixturePolicy([(a, 3.0), (b, 1.0)])
    >>> mix.weights, mix.recurrent
    ([0.75, 0.25], True)
    >>> rng = np.random.default_rng(1)
    >>> masks = np.ones((2, 9), dtype=bool)
    >>> keys = [("env", 0, "player_1"), ("env", 1, "player_1")]  # two games
    >>> _ = mix.act(np.zeros((2, 9)), masks, rng, keys)
    >>> [mix.member_of(k).policy_id for k in keys]
    ['a', 'b']
    """

    def __init__(self, members: Sequence[tuple[Any, float]], policy_id: str = "mixture") -> None:
        pairs = list(members)
        weights = np.array([float(w) for _, w in pairs], dtype=np.float64)
        if not pairs or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError(
                f"A mixture needs at least one (policy, weight) pair with finite weights of 0 or "
                f"more; got {len(pairs)} pair(s) with weights {weights.tolist()}."
            )
        if weights.sum() <= 0:
            raise ValueError("A mixture's weights sum to 0: give some member a weight.")
        keep = weights > 0
        self.members = [p for (p, _), k in zip(pairs, keep, strict=True) if k]
        self.weights = [float(w) for w in weights[keep] / weights[keep].sum()]
        self.policy_id = policy_id
        self._cumulative = np.cumsum(self.weights)
        self._games: OrderedDict[Hashable, int] = OrderedDict()

    #: Callers pass ``state_keys`` (one per row), which name the game each row belongs to.
    recurrent = True

    def pairs(self) -> list[tuple[Any, float]]:
        """``[(member, weight)]``, the weights summing to 1."""
        return list(zip(self.members, self.weights, strict=True))

    @staticmethod
    def game_of(key: Hashable) -> Hashable:
        """The game a state key names: the key without its last element (the seat)."""
        return key[:-1] if isinstance(key, tuple) and len(key) > 1 else key

    @property
    def open_games(self) -> int:
        """How many games' members the mixture remembers now."""
        return len(self._games)

    def member_of(self, key: Hashable) -> Any:
        """The member playing the game of ``key`` (a :class:`KeyError` before its first move)."""
        return self.members[self._games[self.game_of(key)]]

    def _draw(self, rng: Any, n: int) -> np.ndarray:
        if rng is None:  # no generator: the heaviest member, every game
            return np.full(n, int(np.argmax(self.weights)))
        u = np.asarray(rng.random(n), dtype=np.float64).reshape(n)
        return np.minimum(np.searchsorted(self._cumulative, u, side="right"), len(self.weights) - 1)

    def act(
        self,
        observations: Observations,
        action_masks: np.ndarray | None,
        rng: Any,
        state_keys: Sequence[Hashable] | None = None,
    ) -> np.ndarray:
        """Each row's action by its game's member (drawn at the game's first move).

        :param state_keys: one key per row, ``(..., game, seat)``; without them every call is a
            new game for each row (a draw per move).
        """
        n = len(action_masks) if action_masks is not None else _rows(observations)
        games = (
            [object() for _ in range(n)]
            if state_keys is None
            else [self.game_of(k) for k in state_keys]
        )
        new = [i for i, g in enumerate(games) if g not in self._games]
        if new:
            draws = self._draw(rng, n)
            for i in new:
                self._games.setdefault(games[i], int(draws[i]))
        for g in games:
            if g in self._games:
                self._games.move_to_end(g)
        picks = np.array([self._games[g] for g in games])
        while len(self._games) > MAX_OPEN_GAMES:
            self._games.popitem(last=False)
        if state_keys is None:
            for g in games:
                self._games.pop(g, None)
        actions: list[Any] = [None] * n
        for member in np.unique(picks):
            rows = np.flatnonzero(picks == member)
            obs = _take(observations, rows)
            masks = None if action_masks is None else np.asarray(action_masks)[rows]
            keys = None if state_keys is None else [state_keys[i] for i in rows]
            policy = self.members[member]
            if keys is not None and getattr(policy, "recurrent", False):
                out = act_in_games(policy, obs, masks, rng, keys)
            else:
                out = policy.act(obs, masks, rng)
            for row, action in zip(rows, np.asarray(out), strict=True):
                actions[row] = action
        return np.asarray(actions)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_games"] = OrderedDict()  # a copy in another process starts its own games
        return state

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{getattr(p, 'policy_id', p)!s}: {w:.3f}"
            for p, w in zip(self.members, self.weights, strict=True)
        )
        return f"MixturePolicy({self.policy_id!r}, {{{shown}}})"


def _rows(observations: Observations) -> int:
    if isinstance(observations, dict):
        return len(next(iter(observations.values())))
    return len(observations)


def _take(observations: Observations, rows: np.ndarray) -> Observations:
    if isinstance(observations, dict):
        return {k: np.asarray(v)[rows] for k, v in observations.items()}
    return np.asarray(observations)[rows]
