"""PettingZoo wrappers that the game registry applies to its games.

This module holds :class:`ScaledObservations` (byte observations as ``float32`` in [0, 1]),
:class:`RepeatedActions` (a frame skip for Parallel games) and :class:`RandomOpenings` (games that
start from random legal first moves, so training sees every opening). It imports PettingZoo, so the
registry (``games.py``, imported by ``import sp_wrappers`` to register the Gymnasium ids) imports it
only when it builds such a game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseParallelWrapper, BaseWrapper

__all__ = ["ScaledObservations", "RepeatedActions", "RandomOpenings", "ply_distribution"]


def ply_distribution(plies: int | tuple[int, int] | Mapping[int, float]) -> dict[int, float]:
    """``{number of random moves: probability}`` for :class:`RandomOpenings`' ``plies``.

    >>> ply_distribution(2)
    {2: 1.0}
    >>> ply_distribution((1, 2))
    {1: 0.5, 2: 0.5}
    >>> ply_distribution({0: 0.2, 3: 0.8})
    {0: 0.2, 3: 0.8}
    """
    if isinstance(plies, bool):
        raise ValueError(f"plies must be a number of moves, a range or a mapping, got {plies!r}.")
    if isinstance(plies, int | np.integer):
        if plies < 1:
            raise ValueError(
                f"plies must be a positive number of moves, got {plies!r} (a range such as "
                "(0, 3) may include 0)."
            )
        return {int(plies): 1.0}
    if isinstance(plies, Mapping):
        counts = {}
        for count, share in plies.items():
            if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
                raise ValueError(f"plies keys must be numbers of moves (0 or more), got {count!r}.")
            if not 0.0 <= float(share) <= 1.0:
                raise ValueError(f"plies probabilities must be in [0, 1], got {share!r}.")
            counts[int(count)] = float(share)
        if not counts or abs(sum(counts.values()) - 1.0) > 1e-6:
            raise ValueError(
                f"plies probabilities must sum to 1, got {sum(counts.values())} ({plies!r})."
            )
        return dict(sorted(counts.items()))
    if (
        isinstance(plies, tuple | list)
        and len(plies) == 2
        and all(isinstance(n, int | np.integer) and not isinstance(n, bool) for n in plies)
        and 0 <= plies[0] <= plies[1]
    ):
        low, high = int(plies[0]), int(plies[1])
        return {n: 1.0 / (high - low + 1) for n in range(low, high + 1)}
    raise ValueError(
        f"plies must be a positive number of moves, a range (low, high) with 0 <= low <= high, "
        f"or a mapping {{moves: probability}}; got {plies!r}."
    )


class ScaledObservations(BaseWrapper):
    """An AEC wrapper dividing ``Box`` observations by their upper bound: ``float32`` in [0, 1].

    Meant for byte observations (Atari RAM or pixels, bounds 0 and 255): every observation
    becomes ``obs / high`` as ``float32`` and the observation spaces ``Box(0, 1)``. Neural
    networks train badly on raw bytes, whose scale is far from their weights' initialisation.

    :param env: a PettingZoo ``AECEnv`` whose observation spaces are ``Box`` with ``low == 0``
        and a finite, positive ``high``.

    >>> from sp_wrappers.games.registry import make_game
    >>> game = make_game("pong_v3", max_cycles=10)          # already wrapped
    >>> game.reset(seed=0)
    >>> obs = game.observe("first_0")
    >>> obs.dtype.name, bool(0.0 <= obs.min() and obs.max() <= 1.0)
    ('float32', True)
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._scale: dict[Any, np.ndarray] = {}
        self._spaces: dict[Any, spaces.Box] = {}
        for agent in env.possible_agents:
            space = env.observation_space(agent)
            if (
                not isinstance(space, spaces.Box)
                or np.any(space.low != 0)
                or not np.all(np.isfinite(space.high))
                or np.any(space.high <= 0)
            ):
                raise TypeError(
                    f"ScaledObservations needs Box observations with low 0 and a finite positive "
                    f"high, got {space} for {agent!r}; scale this game's observations yourself."
                )
            self._scale[agent] = np.asarray(space.high, dtype=np.float32)
            self._spaces[agent] = spaces.Box(0.0, 1.0, space.shape, np.float32)

    def observation_space(self, agent: Any) -> spaces.Box:
        return self._spaces[agent]

    def observe(self, agent: Any) -> np.ndarray | None:
        obs = self.env.observe(agent)
        return None if obs is None else np.asarray(obs, dtype=np.float32) / self._scale[agent]

    def __str__(self) -> str:
        return f"ScaledObservations<{self.env}>"


class RepeatedActions(BaseParallelWrapper):
    """A Parallel env stepping ``repeat`` frames per action (every agent repeats its action),
    summing the rewards; stops early when the game ends (Atari's frame skip).

    :param env: a PettingZoo ``ParallelEnv``.
    :param repeat: frames per action.
    """

    def __init__(self, env: Any, repeat: int) -> None:
        super().__init__(env)
        self.repeat = repeat

    def step(self, actions: dict[Any, Any]) -> tuple[dict, dict, dict, dict, dict]:
        totals: dict[Any, float] = {}
        for _ in range(self.repeat):
            obs, rewards, terminations, truncations, infos = self.env.step(actions)
            for agent, reward in rewards.items():
                totals[agent] = totals.get(agent, 0.0) + float(reward)
            if any(terminations.values()) or any(truncations.values()) or not self.env.agents:
                break
        return obs, totals, terminations, truncations, infos


class RandomOpenings(BaseWrapper):
    """An AEC wrapper that starts a share of the games from random legal first moves.

    At each reset, with probability ``probability``, the first ``plies`` moves (a number drawn
    anew each game when ``plies`` is a range or a distribution) are played at random among the
    legal ones (from the action mask in the observation or in ``info``), whoever is to move;
    then the game goes on as usual. Self-play between two copies of one deterministic learner
    keeps replaying the openings it likes and never sees the positions that follow the others,
    so a learner can be perfect in its own games and lose from a forced first move; random
    openings are the exploring starts that show it every one. A seeded reset replays the same
    opening.

    :param env: a turn-based PettingZoo ``AECEnv`` with action masks.
    :param plies: random moves at the start of a game that gets them: a number (at least 1), a
        range ``(low, high)`` drawn uniformly, both ends included (``(0, 3)``: 0, 1, 2 or 3 moves,
        a quarter of the games each), or a probability per number of moves (``{0: 0.5, 2: 0.5}``,
        summing to 1). A count that ends the game early stops at the end.
    :param probability: share of the games that start from random moves (0 to 1).

    >>> from pettingzoo.classic import tictactoe_v3
    >>> game = RandomOpenings(tictactoe_v3.env(), plies=1)
    >>> game.reset(seed=0)
    >>> game.agent_selection, int(game.observe("player_1")["observation"].sum())
    ('player_2', 1)
    >>> RandomOpenings(tictactoe_v3.env(), plies=(0, 3)).ply_probabilities
    {0: 0.25, 1: 0.25, 2: 0.25, 3: 0.25}
    """

    def __init__(
        self,
        env: Any,
        plies: int | tuple[int, int] | Mapping[int, float] = 1,
        probability: float = 1.0,
    ) -> None:
        super().__init__(env)
        self.ply_probabilities = ply_distribution(plies)
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"probability must be between 0 and 1, got {probability!r}.")
        self.plies = plies
        self.probability = float(probability)
        self._counts = np.array(list(self.ply_probabilities), dtype=np.int64)
        self._weights = np.array(list(self.ply_probabilities.values()), dtype=np.float64)
        self._rng = np.random.default_rng()

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.env.reset(seed=seed, options=options)
        if self._rng.random() >= self.probability:
            return
        if len(self._counts) == 1:  # a fixed count draws nothing more (seeded openings unchanged)
            count = int(self._counts[0])
        else:
            count = int(self._counts[self._rng.choice(len(self._counts), p=self._weights)])
        for _ in range(count):
            agent = self.env.agent_selection
            if self.env.terminations[agent] or self.env.truncations[agent]:
                return
            legal = np.flatnonzero(self._legal_mask(agent))
            if legal.size == 0:
                return
            self.env.step(int(self._rng.choice(legal)))

    def _legal_mask(self, agent: Any) -> np.ndarray:
        obs = self.env.observe(agent)
        if isinstance(obs, dict) and "action_mask" in obs:
            return np.asarray(obs["action_mask"], dtype=bool)
        mask = self.env.infos.get(agent, {}).get("action_mask")
        if mask is None:
            raise TypeError(
                f"RandomOpenings needs action masks to find legal moves, and {agent!r} of "
                f"{self.env} has none (neither in its observation nor in info); pick openings "
                "for this game yourself."
            )
        return np.asarray(mask, dtype=bool)

    def __str__(self) -> str:
        return f"RandomOpenings<{self.env}>"
