"""Frame stacking inside the game, one stack per agent.

A PettingZoo AEC wrapper gives every agent its own last ``n_stack`` observations. It is what
``VecFrameStack`` does for a single-agent env, moved into the game: in self-play the opponents
play inside the env, so a stack built above it (``VecFrameStack``) would reach the learner only,
and the snapshots it saves would later be given single frames. Inside the game, the learner's seat
and every opponent's seat each keep their own stack, so a snapshot plays on the same stacked
observations it was trained on."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

__all__ = ["StackedObservations"]


def _stacked_box(space: spaces.Box, n_stack: int) -> spaces.Box:
    # frames concatenated along the last axis, oldest first (VecFrameStack's channels-last order)
    low = np.concatenate([space.low] * n_stack, axis=-1)
    high = np.concatenate([space.high] * n_stack, axis=-1)
    return spaces.Box(low, high, dtype=space.dtype)


class StackedObservations(BaseWrapper):
    """An AEC wrapper: each agent observes its own last ``n_stack`` observations, concatenated
    along the last axis, oldest first (as ``VecFrameStack`` with ``channels_order="last"``).

    An agent's stack holds the observations it had at its own past turns, plus its current one:
    when an agent acts, the observation it acted on joins its stack. The stacks start as zeros
    at every ``reset``. A ``Dict`` observation with an ``"observation"`` entry (PettingZoo's
    classic games) stacks that entry and keeps its ``"action_mask"`` as it is, so masks still work.

    :param env: a PettingZoo ``AECEnv`` whose observations are ``Box`` (at least one dimension),
        or ``Dict`` with a ``Box`` entry ``"observation"``.
    :param n_stack: observations per stack (the current one included), at least 1.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> game = StackedObservations(tictactoe_v3.env(), 2)
    >>> game.observation_space("player_1")["observation"].shape
    (3, 3, 4)
    >>> game.reset(seed=0)
    >>> game.step(4)                                   # player_1 took the centre
    >>> obs = game.observe("player_2")["observation"]  # player_2: zeros, then its current view
    >>> int(obs[..., :2].sum()), int(obs[..., 2:].sum())
    (0, 1)
    """

    def __init__(self, env: Any, n_stack: int) -> None:
        super().__init__(env)
        if not isinstance(n_stack, int | np.integer) or n_stack < 1:
            raise ValueError(f"n_stack must be a positive integer, got {n_stack!r}.")
        self.n_stack = int(n_stack)
        self._spaces: dict[Any, spaces.Space] = {}
        self._keyed: dict[Any, bool] = {}
        for agent in env.possible_agents:
            space = env.observation_space(agent)
            if isinstance(space, spaces.Dict) and isinstance(
                space.spaces.get("observation"), spaces.Box
            ):
                inner = space.spaces["observation"]
                keyed = True
            elif isinstance(space, spaces.Box):
                inner, keyed = space, False
            else:
                raise TypeError(
                    f"StackedObservations stacks Box observations (or a Dict's 'observation' "
                    f"entry), but {agent!r} observes {space}; flatten it first (e.g. SuperSuit's "
                    "flatten_v0) or stack its frames yourself."
                )
            if not inner.shape:
                raise TypeError(
                    f"StackedObservations needs observations with at least one dimension, but "
                    f"{agent!r} observes {inner}."
                )
            stacked = _stacked_box(inner, self.n_stack)
            self._keyed[agent] = keyed
            self._spaces[agent] = (
                spaces.Dict({**space.spaces, "observation": stacked}) if keyed else stacked
            )
        self._stacks: dict[Any, deque[np.ndarray]] = {}

    def observation_space(self, agent: Any) -> spaces.Space:
        return self._spaces[agent]

    def _frame(self, agent: Any, obs: Any) -> np.ndarray:
        return np.asarray(obs["observation"] if self._keyed[agent] else obs)

    def _past(self, agent: Any) -> deque[np.ndarray]:
        past = self._stacks.get(agent)
        if past is None:
            space = self._spaces[agent]
            box = space["observation"] if self._keyed[agent] else space
            width = box.shape[-1] // self.n_stack
            zero = np.zeros((*box.shape[:-1], width), dtype=box.dtype)
            past = deque([zero] * (self.n_stack - 1), maxlen=max(self.n_stack - 1, 1))
            self._stacks[agent] = past
        return past

    def observe(self, agent: Any) -> Any:
        obs = self.env.observe(agent)
        if obs is None:
            return None
        frames = [*self._past(agent)][-(self.n_stack - 1) :] if self.n_stack > 1 else []
        stacked = np.concatenate([*frames, self._frame(agent, obs)], axis=-1)
        if self._keyed[agent]:
            return {**obs, "observation": stacked}
        return stacked

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._stacks = {}
        super().reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if agent in self.env.agents and not (
            self.terminations.get(agent, False) or self.truncations.get(agent, False)
        ):
            obs = self.env.observe(agent)
            if obs is not None and self.n_stack > 1:
                self._past(agent).append(self._frame(agent, obs).copy())
        super().step(action)

    def __str__(self) -> str:
        return f"StackedObservations<{self.env}, {self.n_stack}>"
