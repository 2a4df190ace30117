"""A small team game whose agents leave at different times (for team slots' termination tests).

This module holds :class:`DeathGame`, a PettingZoo ``ParallelEnv`` with two teams (``a_0``,
``a_1`` against ``b_0``, grouped by ``teams="prefix"``): each agent terminates at the round given
for it in ``deaths`` and every agent still in the game is truncated after ``max_cycles`` rounds.
Every observation is non-zero (``[1, round, agent index]``), so a zero terminal observation can
only come from the wrapper; every live agent gets reward 1 per round.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

__all__ = ["DeathGame"]


class DeathGame(ParallelEnv):
    """Agents terminate at their round in ``deaths``; the rest are truncated at ``max_cycles``.

    :param deaths: ``agent -> round`` (1-based) after which that agent terminates.
    :param max_cycles: rounds after which every agent still in the game is truncated.
    """

    metadata = {"name": "death_v0", "render_modes": [], "is_parallelizable": True}
    render_mode = None

    def __init__(self, deaths: dict[str, int] | None = None, max_cycles: int = 4) -> None:
        self.deaths = dict(deaths or {})
        self.max_cycles = max_cycles
        self.possible_agents = ["a_0", "a_1", "b_0"]
        self.agents: list[str] = []
        self._obs_space = spaces.Box(-1.0, 100.0, (3,), np.float32)
        self._act_space = spaces.Discrete(2)
        self.round = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def _obs(self, agent: str) -> np.ndarray:
        index = self.possible_agents.index(agent)
        return np.array([1.0, self.round, index], dtype=np.float32)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
        self.agents = list(self.possible_agents)
        self.round = 0
        return {a: self._obs(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple:
        self.round += 1
        agents = list(self.agents)
        observations = {a: self._obs(a) for a in agents}
        rewards = {a: 1.0 for a in agents}
        terminations = {a: self.deaths.get(a) == self.round for a in agents}
        truncations = {a: self.round >= self.max_cycles and not terminations[a] for a in agents}
        infos: dict[str, dict] = {a: {} for a in agents}
        self.agents = [a for a in agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos
