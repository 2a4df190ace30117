"""Driving one PettingZoo game around a learner seat: turn order, rewards, masks, outcome.

This module holds:

- :func:`as_aec_env`, which accepts an AEC or Parallel PettingZoo env (wrapped or not) and returns
  an AEC env, converting with PettingZoo's own ``parallel_to_aec``.
- :class:`SeatDriver`, a small state machine over one AEC game. ``next_turn()`` advances the game
  (dead steps included) and returns the opponent seat that must act next, or ``None`` when it is the
  learner's turn or the learner's episode is over. Callers answer opponent turns with ``play()``:
  the single env one at a time, the vector env in batches across game copies.
- :func:`pairwise_outcome`, the default outcome (1 win, 0.5 draw, 0 loss) from final returns.

Rewards follow PettingZoo's own ``aec_to_parallel`` convention: after every live step, each agent's
entry in ``game.rewards`` is added to its return; dead steps add nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["as_aec_env", "SeatDriver", "OpponentTurn", "pairwise_outcome", "seat_spaces"]

OutcomeFn = Callable[[Mapping[str, float], str], float]


def as_aec_env(env: Any) -> Any:
    """Return ``env`` as a PettingZoo ``AECEnv``; raise a clear error for anything else."""
    from pettingzoo.utils.env import AECEnv, ParallelEnv

    if isinstance(env, AECEnv):
        game = env
    elif isinstance(env, ParallelEnv):
        from pettingzoo.utils.conversions import parallel_to_aec

        game = parallel_to_aec(env)
    else:
        hint = ""
        if hasattr(env, "step") and hasattr(env, "reset") and not hasattr(env, "possible_agents"):
            hint = " It looks like a single-agent Gymnasium env; train on it with SB3 directly."
        raise TypeError(
            f"Expected a PettingZoo AECEnv or ParallelEnv, got {type(env).__name__}.{hint} "
            "Pass a game such as pettingzoo.classic.tictactoe_v3.env()."
        )
    agents = list(getattr(game, "possible_agents", []))
    if len(agents) < 2:
        raise ValueError(
            f"{type(env).__name__} has {len(agents)} agent(s) ({agents}); self-play needs a game "
            "with at least two seats. For single-agent games use the Gymnasium env with SB3 "
            "directly."
        )
    return game


def pairwise_outcome(returns: Mapping[str, float], learner: str) -> float:
    """The learner's mean score against each other seat: 1 if ahead, 0.5 if level, 0 if behind.

    >>> pairwise_outcome({"a": 1.0, "b": -1.0}, "a")
    1.0
    >>> pairwise_outcome({"a": 0.0, "b": 0.0, "c": 1.0}, "a")
    0.25
    """
    mine = returns[learner]
    others = [r for seat, r in returns.items() if seat != learner]
    if not others:
        return 0.5
    return sum(1.0 if mine > r else 0.5 if mine == r else 0.0 for r in others) / len(others)


_TURN_STATE = frozenset(
    ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos")
)


def _turn_state_holder(game: Any) -> Any:
    """The object whose attributes ``game.agents``, ``agent_selection``, ``rewards``,
    ``terminations``, ``truncations`` and ``infos`` resolve to.

    PettingZoo's own AEC wrappers (order enforcing, out-of-bounds checks, illegal-move
    termination) keep no turn state: each forwards those reads to the env it wraps, one
    ``__getattr__`` per layer, which costs more than a classic game's move bookkeeping. Reading
    from the innermost env gives the same objects. Any other wrapper (SuperSuit's, a user's) may
    keep its own, so the search stops there, as it does at a layer holding such an attribute.
    """
    holder = game
    while type(holder) in _forwarding_wrappers() and not _TURN_STATE & vars(holder).keys():
        holder = holder.env
    return holder


_FORWARDING: tuple[type, ...] = ()


def _forwarding_wrappers() -> tuple[type, ...]:
    global _FORWARDING
    if not _FORWARDING:
        from pettingzoo.utils import wrappers

        _FORWARDING = (
            wrappers.OrderEnforcingWrapper,
            wrappers.AssertOutOfBoundsWrapper,
            wrappers.TerminateIllegalWrapper,
            wrappers.ClipOutOfBoundsWrapper,
            wrappers.CaptureStdoutWrapper,
        )
    return _FORWARDING


def _is_masked_dict_space(space: spaces.Space) -> bool:
    return isinstance(space, spaces.Dict) and "action_mask" in space.spaces


def seat_spaces(game: Any, seat: str, keep_dict_obs: bool) -> tuple[spaces.Space, spaces.Space]:
    """The (observation, action) spaces a policy in ``seat`` sees."""
    obs_space = game.observation_space(seat)
    if _is_masked_dict_space(obs_space) and not keep_dict_obs:
        if "observation" not in obs_space.spaces:
            raise ValueError(
                f"Seat {seat!r} has a dict observation with 'action_mask' but no 'observation' "
                "key; pass keep_dict_obs=True to give the learner the whole dict."
            )
        obs_space = obs_space["observation"]
    return obs_space, game.action_space(seat)


@dataclass
class OpponentTurn:
    """An opponent seat that must act now, with what it observes."""

    seat: str
    observation: Any
    action_mask: np.ndarray | None


class SeatDriver:
    """Runs one AEC game so that a learner seat sees only its own turns.

    :param game: a PettingZoo ``AECEnv`` (see :func:`as_aec_env`).
    :param keep_dict_obs: give policies PettingZoo's whole ``{"observation", "action_mask"}`` dict
        instead of its ``"observation"`` part.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> driver = SeatDriver(tictactoe_v3.env())
    >>> driver.reset("player_2", seed=0)
    >>> turn = driver.next_turn()          # player_1 moves first
    >>> turn.seat, int(turn.action_mask.sum())
    ('player_1', 9)
    >>> driver.play(4)
    >>> driver.next_turn() is None           # now the learner's turn
    True
    >>> int(driver.learner_mask().sum())
    8
    """

    def __init__(self, game: Any, keep_dict_obs: bool = False) -> None:
        self.game = game
        self._state = _turn_state_holder(game)  # where turn state is read (see that function)
        self.keep_dict_obs = keep_dict_obs
        self.possible_agents: list[str] = list(game.possible_agents)
        self._masked_dict = {
            a: _is_masked_dict_space(game.observation_space(a)) for a in self.possible_agents
        }
        self._n_actions = {
            a: game.action_space(a).n if isinstance(game.action_space(a), spaces.Discrete) else None
            for a in self.possible_agents
        }
        self.learner: str = self.possible_agents[0]
        self.returns: dict[str, float] = {}
        self.pending_reward = 0.0
        self.learner_steps = 0
        self.terminated = False
        self.truncated = False
        self._acting: str | None = None  # the agent next_turn() saw acting (play() reuses it)

    # -- lifecycle -------------------------------------------------------------------------------
    def reset(self, learner: str, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game with ``learner`` in its seat."""
        self.game.reset(seed=seed, options=options)
        self._state = _turn_state_holder(self.game)
        self._acting = None
        self.learner = learner
        self.returns = {a: 0.0 for a in self.game.agents}
        self.pending_reward = 0.0
        self.learner_steps = 0
        self.terminated = False
        self.truncated = False

    @property
    def learner_done(self) -> bool:
        """Whether the learner's episode has ended (terminated or truncated)."""
        return self.terminated or self.truncated

    # -- turn order ------------------------------------------------------------------------------
    def next_turn(self) -> OpponentTurn | None:
        """Advance through dead steps; return the opponent that must act, or ``None``.

        ``None`` means either it is the learner's turn or the learner's episode is over
        (see :attr:`learner_done`).
        """
        game, state = self.game, self._state
        while True:
            if self.learner_done:
                return None
            if self.learner not in state.agents:
                # The learner left without a dead step (non-standard env) or the game emptied.
                self.terminated = True
                return None
            agent = state.agent_selection
            if state.terminations[agent] or state.truncations[agent]:
                learner = self.learner
                ended = state.terminations.get(learner) or state.truncations.get(learner)
                if agent == learner or ended:
                    # over for the learner: others' dead steps would add nothing to its episode
                    self.terminated = bool(state.terminations.get(learner))
                    self.truncated = not self.terminated
                    return None
                game.step(None)
                continue
            self._acting = agent
            if agent == self.learner:
                return None
            obs = game.observe(agent)
            return OpponentTurn(agent, self._policy_obs(agent, obs), self._mask(agent, obs))

    def play(self, action: Any) -> None:
        """Play ``action`` for the agent whose turn it is (a live step) and collect rewards."""
        game = self.game
        acting = self._acting if self._acting is not None else self._state.agent_selection
        self._acting = None
        game.step(action)
        for agent, reward in self._state.rewards.items():
            if agent in self.returns:
                self.returns[agent] += float(reward)
            else:
                self.returns[agent] = float(reward)
            if agent == self.learner:
                self.pending_reward += float(reward)
        if acting == self.learner:
            self.learner_steps += 1

    def pop_reward(self) -> float:
        """The learner's reward since its previous action, and reset the tally."""
        reward, self.pending_reward = self.pending_reward, 0.0
        return reward

    # -- what the learner sees -------------------------------------------------------------------
    def learner_observation(self) -> Any:
        """The learner's observation, processed as policies see it."""
        return self._policy_obs(self.learner, self.game.observe(self.learner))

    def learner_view(self) -> tuple[Any, np.ndarray | None]:
        """The learner's observation and action mask, from one ``observe`` call."""
        obs = self.game.observe(self.learner)
        return self._policy_obs(self.learner, obs), self._mask(self.learner, obs)

    def learner_mask(self) -> np.ndarray | None:
        """The learner's current action mask (bool), or ``None`` if the game has no masks."""
        return self._mask(self.learner, None)

    def outcome(self, outcome_fn: OutcomeFn | None = None) -> float:
        """The learner's outcome from the returns so far (call at episode end)."""
        fn = outcome_fn or pairwise_outcome
        return float(fn(dict(self.returns), self.learner))

    # -- helpers ---------------------------------------------------------------------------------
    def _policy_obs(self, agent: str, obs: Any) -> Any:
        if self._masked_dict[agent] and not self.keep_dict_obs:
            return obs["observation"]
        return obs

    def _mask(self, agent: str, obs: Any) -> np.ndarray | None:
        if self._masked_dict[agent]:
            if obs is None:
                obs = self.game.observe(agent)
            return np.asarray(obs["action_mask"], dtype=bool)
        infos = self._state.infos.get(agent) or {}
        mask = infos.get("action_mask")
        return None if mask is None else np.asarray(mask, dtype=bool)

    def all_actions_mask(self, agent: str) -> np.ndarray | None:
        """A mask allowing every action of a Discrete seat (for games with no masks)."""
        n = self._n_actions[agent]
        return None if n is None else np.ones(n, dtype=bool)
