"""PettingZoo wrappers that the game registry applies to its games.

This module holds :class:`ScaledObservations` (byte observations as ``float32`` in [0, 1]) and
:class:`RepeatedActions` (a frame skip for Parallel games). It imports PettingZoo, so the registry
(``games.py``, imported by ``import sp_wrappers`` to register the Gymnasium ids) imports it only
when it builds such a game.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseParallelWrapper, BaseWrapper

__all__ = ["ScaledObservations", "RepeatedActions"]


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
