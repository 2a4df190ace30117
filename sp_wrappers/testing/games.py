"""Small PettingZoo games for testing self-play code, each simple enough to reason about by hand.

They cover what real games lack: simultaneous moves, masks in the observation or only in
``info``, more than two seats, seats with different spaces, a player eliminated before the game
ends. sp_wrappers' own tests play them; so can a user's tests, beside
:func:`sp_wrappers.testing.check_selfplay`.

- :class:`GuessGame` (parallel, no masks, plain ``Box`` observation): both players see a cue and
  score by naming it. A plain PPO learns it in a few thousand steps.
- :class:`AsymmetricGuessGame`: like :class:`GuessGame` but the seats' action spaces differ.
- :class:`RaceGame` (AEC, any number of players): players in turn add 1-3 to a counter; whoever
  reaches the target exactly wins. Masks live in the dict observation or, with
  ``mask_in="info"``, only in ``info["action_mask"]``.
- :class:`EarlyExitGame` (AEC): the ``"leaver"`` seat is eliminated by the opponent's first move
  (with its final reward) while the ``"stayer"`` plays on alone.

>>> from pettingzoo.test import api_test
>>> api_test(RaceGame(n_players=3), num_cycles=20)  # doctest: +ELLIPSIS
Starting API test
...
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

__all__ = ["GuessGame", "AsymmetricGuessGame", "RaceGame", "EarlyExitGame"]


class GuessGame(ParallelEnv):
    """Simultaneous one-shot game without masks.

    Both players observe the same one-hot cue ``c`` in ``range(n_cues)`` and choose an action in
    ``Discrete(n_cues)``; a player scores 1 when its action equals the cue. Each player's reward
    is its score minus the other's, so "name the cue" is the dominant strategy.
    """

    metadata = {"name": "guess_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(self, n_cues: int = 3, render_mode: str | None = None) -> None:
        self.n_cues = n_cues
        self.render_mode = render_mode
        self.possible_agents = ["p0", "p1"]
        self.agents: list[str] = []
        self._obs_space = spaces.Box(0.0, 1.0, (n_cues,), np.float32)
        self._act_spaces = {a: spaces.Discrete(self._n_actions(a)) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self.cue = 0

    def _n_actions(self, agent: str) -> int:
        return self.n_cues

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_spaces[agent]

    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.n_cues, dtype=np.float32)
        obs[self.cue] = 1.0
        return obs

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.cue = int(self._rng.integers(self.n_cues))
        return {a: self._obs() for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]):
        scores = {a: float(int(actions[a]) == self.cue) for a in self.agents}
        p0, p1 = self.possible_agents
        rewards = {p0: scores[p0] - scores[p1], p1: scores[p1] - scores[p0]}
        observations = {a: self._obs() for a in self.agents}
        terminations = {a: True for a in self.agents}
        truncations = {a: False for a in self.agents}
        infos = {a: {} for a in self.agents}
        self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str:
        return f"cue={self.cue}"


class AsymmetricGuessGame(GuessGame):
    """:class:`GuessGame` whose seats differ: ``p0`` has 3 actions, ``p1`` only 2."""

    metadata = {"name": "asymmetric_guess_v0", "render_modes": [], "is_parallelizable": True}

    def _n_actions(self, agent: str) -> int:
        return 3 if agent == "p0" else 2

    def reset(self, seed: int | None = None, options: dict | None = None):
        out = super().reset(seed=seed, options=options)
        self.cue = min(self.cue, 1)  # a cue every seat can name
        return out


class _TurnGame(AECEnv):
    """What the turn-based games share: one observation and one action space for every seat,
    a new episode, and the start of each step."""

    _obs_space: spaces.Space
    _act_space: spaces.Space

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def _start_episode(self) -> None:
        """Every seat in the game again, with no reward, ending or info yet."""
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}

    def _finished_seat_steps(self, action: Any) -> bool:
        """Take the step of a seat whose game is over (``True``), or clear the last step's
        rewards for the seat to move (``False``)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return True
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        return False


class RaceGame(_TurnGame):
    """Players take turns adding 1, 2 or 3 (actions 0, 1, 2) to a counter starting at 0.

    Whoever brings the counter to ``target`` exactly wins ``n_players - 1``; every other player
    gets -1. Moves that would pass ``target`` are illegal (masked); playing one loses at once
    (``-(n_players - 1)`` for the mover, +1 for the others). An agent observes the counter
    (one-hot) and its own seat (one-hot).

    :param n_players: number of seats (``player_0`` moves first).
    :param target: the counter value that wins.
    :param mask_in: ``"obs"`` for PettingZoo's ``{"observation", "action_mask"}`` dict,
        ``"info"`` for a plain ``Box`` observation with the mask in ``infos[agent]["action_mask"]``.
    """

    metadata = {"name": "race_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, n_players: int = 3, target: int = 10, mask_in: str = "obs") -> None:
        super().__init__()
        assert mask_in in ("obs", "info")
        self.n_players = n_players
        self.target = target
        self.mask_in = mask_in
        self.possible_agents = [f"player_{i}" for i in range(n_players)]
        board = spaces.Box(0.0, 1.0, (target + 1 + n_players,), np.float32)
        if mask_in == "obs":
            self._obs_space: spaces.Space = spaces.Dict(
                {"observation": board, "action_mask": spaces.Box(0, 1, (3,), np.int8)}
            )
        else:
            self._obs_space = board
        self._act_space = spaces.Discrete(3)
        self.counter = 0

    def _legal(self) -> np.ndarray:
        return np.array([self.counter + k + 1 <= self.target for k in range(3)], dtype=np.int8)

    def observe(self, agent: str) -> Any:
        board = np.zeros(self.target + 1 + self.n_players, dtype=np.float32)
        board[self.counter] = 1.0
        board[self.target + 1 + self.possible_agents.index(agent)] = 1.0
        if self.mask_in == "obs":
            return {"observation": board, "action_mask": self._legal()}
        return board

    def _update_infos(self) -> None:
        for agent in self.agents:
            self.infos[agent] = {"action_mask": self._legal()} if self.mask_in == "info" else {}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._start_episode()
        self.counter = int((options or {}).get("start", 0))
        self._update_infos()
        self.agent_selection = self.agents[0]

    def step(self, action: Any) -> None:
        if self._finished_seat_steps(action):
            return
        agent = self.agent_selection
        if not self._legal()[int(action)]:  # like PettingZoo's classic games: an illegal move loses
            for a in self.agents:
                self.rewards[a] = -float(self.n_players - 1) if a == agent else 1.0
                self.terminations[a] = True
        else:
            self.counter += int(action) + 1
        if self.counter == self.target:
            for a in self.agents:
                self.rewards[a] = float(self.n_players - 1) if a == agent else -1.0
                self.terminations[a] = True
        index = self.possible_agents.index(agent)
        self.agent_selection = self.possible_agents[(index + 1) % self.n_players]
        self._update_infos()
        self._accumulate_rewards()


class EarlyExitGame(_TurnGame):
    """Two seats, ``"leaver"`` then ``"stayer"``, taking turns with actions ``Discrete(2)``.

    The stayer's first move eliminates the leaver: it terminates with a final reward of +1 if its
    move matched the stayer's, else -1 (the stayer gets the opposite). The stayer then plays
    ``extra_moves`` more moves alone and gets +0.5 on its last one. No masks; the observation is
    ``[moves made so far, leaver's move]``.
    """

    metadata = {"name": "early_exit_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, extra_moves: int = 3) -> None:
        super().__init__()
        self.extra_moves = extra_moves
        self.possible_agents = ["leaver", "stayer"]
        self._obs_space = spaces.Box(0.0, 100.0, (2,), np.float32)
        self._act_space = spaces.Discrete(2)
        self.moves = 0
        self.leaver_move = 0

    def observe(self, agent: str) -> np.ndarray:
        return np.array([self.moves, self.leaver_move], dtype=np.float32)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._start_episode()
        self.moves = 0
        self.leaver_move = 0
        self.agent_selection = "leaver"

    def step(self, action: Any) -> None:
        if self._finished_seat_steps(action):
            return
        agent = self.agent_selection
        self.moves += 1
        if agent == "leaver":
            self.leaver_move = int(action)
        elif self.moves == 2:  # the stayer's first move eliminates the leaver
            won = int(action) == self.leaver_move
            self.rewards["leaver"] = 1.0 if won else -1.0
            self.rewards["stayer"] = -self.rewards["leaver"]
            self.terminations["leaver"] = True
        elif self.moves == 2 + self.extra_moves:
            self.rewards["stayer"] = 0.5
            self.terminations["stayer"] = True
        self.agent_selection = "stayer"
        self._accumulate_rewards()
        self._deads_step_first()
