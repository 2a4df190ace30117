"""Driving one PettingZoo game around a learner *team*: the game side of a team ``SelfPlayVecEnv``.

A team vector env drives its games with :class:`TeamDriver`, a
:class:`~sp_wrappers.core.seats.SeatDriver` whose learner is a team: each agent of the team is its
own slot of the vector env (parameter sharing). It takes the team's actions for one vector step
together (:class:`TeamActions`), and the actions of several opponents at once
(:class:`OpponentActions`).

One vector step plays every team agent's action at that agent's next turn, answering the
opponents' turns in between; it ends when a team agent that has already acted in this step is to
act again (or the team's episode ends). In simultaneous-move games (Parallel envs converted to
AEC, MPE, Atari) that is one round of the game. An agent whose turn does not come within the step
has its action dropped. Each slot's reward is what its agent received since the previous step.
In turn-based games every team agent acts on its observation of the step's start, which the moves
before its turn may have outdated (the vec env warns; ``SelfPlayEnv`` has no such lag).
A team agent that leaves the game early keeps its slot until the team's episode ends ("black
death", as SuperSuit does): zero observations, reward 0, actions ignored. The team's episode ends
when every team agent is done; it is truncated when they were truncated and none terminated.
Each slot's end, though, is its own agent's (``Status.slot_ends``): an agent that terminated
early ends terminated (no bootstrap) with its last observation as terminal observation, and a
teammate truncated by the time limit ends truncated (bootstrapped from its own last observation)
even when another agent terminated in the same round.

Simultaneous-move games (``metadata["is_parallelizable"]``: Parallel envs, MPE, Atari) let every
opponent still to act in the current round observe before any of them acts, as PettingZoo's own
``aec_to_parallel`` does: the driver then reports all of them in one turn (``seat`` a tuple, one
observation and mask each), so the vector env answers a whole opposing team in one batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.seats import (
    OpponentTurn,
    SeatDriver,
    check_learner_action,
    conform_observation,
    is_illegal,
)
from .game_workers import Status

__all__ = ["TeamActions", "OpponentActions", "TeamDriver"]


class TeamActions(tuple):
    """The learner team's actions for one vector step, one per team agent (team order)."""

    __slots__ = ()


class OpponentActions(dict):
    """The actions of several opponents whose turns were reported together (seat -> action)."""

    __slots__ = ()


class TeamDriver(SeatDriver):
    """Runs one AEC game so that a learner team sees only its own turns (see the module
    docstring). ``reset(learner=(agent, ...))`` names the team's agents; ``play`` takes a
    :class:`TeamActions` for the team or one action for the opponent whose turn it is."""

    def __init__(
        self, game: Any, keep_dict_obs: bool = False, illegal_action: str = "loss"
    ) -> None:
        super().__init__(game, keep_dict_obs, illegal_action)
        metadata = getattr(game, "metadata", None) or {}
        #: whether opponents of one round may all observe before any of them acts
        self.simultaneous = bool(metadata.get("is_parallelizable"))

    def reset(self, learner: Any, seed: int | None = None, options: dict | None = None) -> None:
        team = (learner,) if isinstance(learner, str) else tuple(learner)
        super().reset(team[0], seed=seed, options=options)
        self.team = team
        self._team_set = frozenset(team)
        self.pending: dict[str, Any] = {}
        self.slot_rewards = {agent: 0.0 for agent in team}
        #: team agent -> (terminated, truncated, last observation) once it has left the game
        self.ends: dict[str, tuple[bool, bool, Any]] = {}

    def _alive(self, agent: str) -> bool:
        state = self._state
        return agent in state.agents and not (
            state.terminations.get(agent) or state.truncations.get(agent)
        )

    def next_turn(self) -> OpponentTurn | None:
        """Advance through dead steps and the team's pending actions; return the opponent that
        must act, or ``None`` when the team must act again or its episode is over."""
        game, state = self.game, self._state
        while True:
            if self.learner_done:
                return None
            if not any(self._alive(agent) for agent in self.team):
                self._note_ends()
                truncated = [bool(state.truncations.get(a)) for a in self.team]
                terminated = [bool(state.terminations.get(a)) for a in self.team]
                self.truncated = any(truncated) and not any(terminated)
                self.terminated = not self.truncated
                return None
            agent = state.agent_selection
            if state.terminations[agent] or state.truncations[agent]:
                self._learner_raw = None
                game.step(None)
                continue
            self._acting = agent
            if agent in self._team_set:
                if agent not in self.pending:
                    return None  # it acted in this step (or the step has not begun)
                self._play_team_agent(agent, self.pending.pop(agent))
                continue
            seats = self._round_opponents(agent) if self.simultaneous else [agent]
            if len(seats) == 1:
                obs = game.observe(agent)
                return OpponentTurn(agent, self._policy_obs(agent, obs), self._mask(agent, obs))
            raws = [game.observe(seat) for seat in seats]
            return OpponentTurn(
                tuple(seats),  # type: ignore[arg-type]
                [self._policy_obs(seat, raw) for seat, raw in zip(seats, raws, strict=True)],
                [self._mask(seat, raw) for seat, raw in zip(seats, raws, strict=True)],  # type: ignore[arg-type]
            )

    def _round_opponents(self, agent: str) -> list[str]:
        """The live opponents still to act in this round, from ``agent`` on (team agents with a
        pending action act in between; one without ends the round for the team)."""
        agents = list(self._state.agents)
        seats = []
        for other in agents[agents.index(agent) :]:
            if other in self._team_set:
                if other in self.pending:
                    continue
                break
            if self._alive(other):
                seats.append(other)
        return seats

    def play(self, action: Any) -> None:
        """Start a vector step (``TeamActions``), or play an opponent's action (or several, as
        ``OpponentActions``, each at its turn)."""
        if isinstance(action, TeamActions):
            self.pending = dict(zip(self.team, action, strict=True))
            self.learner_steps += 1
            return
        self._acting = None
        if not isinstance(action, OpponentActions):
            self._step(action)
            return
        remaining = dict(action)
        state = self._state
        while remaining and not self.learner_done:
            agent = state.agent_selection
            if state.terminations[agent] or state.truncations[agent]:
                if not any(self._alive(a) for a in self.team):
                    break
                self.game.step(None)
            elif agent in remaining:
                self._step(remaining.pop(agent))
            elif agent in self.pending:
                self._play_team_agent(agent, self.pending.pop(agent))
            else:
                break  # not the expected turn order: the rest is dropped

    def _play_team_agent(self, agent: str, action: Any) -> None:
        self._acting = None
        if self._n_actions[agent] is not None:
            raw = self.game.observe(agent) if self._masked_dict[agent] else None
            mask = self._mask(agent, raw)
            start = self._action_start[agent]
            if is_illegal(action, mask, start):
                if self.illegal_action == "raise":
                    check_learner_action(action, mask, agent, start)
                self.returns[agent] = self.returns.get(agent, 0.0) + self.illegal_reward
                self.slot_rewards[agent] += self.illegal_reward
                self.terminated = True
                self.illegal_action_played = int(action)
                return
        self._step(action)

    def _step(self, action: Any) -> None:
        self._learner_raw = None
        self.game.step(action)
        slot_rewards = self.slot_rewards
        for agent, reward in self._state.rewards.items():
            self.returns[agent] = self.returns.get(agent, 0.0) + float(reward)
            if agent in slot_rewards:
                slot_rewards[agent] += float(reward)
        if len(self.ends) < len(self.team):
            self._note_ends()

    def _note_ends(self) -> None:
        """Remember how each team agent that has just left the game ended, with its last
        observation (taken now: once its dead step is played the game no longer has it)."""
        state = self._state
        for agent in self.team:
            if agent in self.ends:
                continue
            if agent not in state.agents:  # left without a dead step: nothing more to observe
                self.ends[agent] = (True, False, None)
                continue
            terminated = bool(state.terminations.get(agent))
            truncated = bool(state.truncations.get(agent)) and not terminated
            if terminated or truncated:
                self.ends[agent] = (terminated, truncated, self._view(agent, True)[0])

    def _view(self, agent: str, done: bool) -> tuple[Any, np.ndarray | None]:
        """``agent``'s observation (``None`` once it left the game) and action mask."""
        if done or not self._alive(agent):
            try:
                raw = self.game.observe(agent) if agent in self._state.agents else None
            except (KeyError, AttributeError):
                raw = None
            if raw is None:
                return None, self.all_actions_mask(agent)
        else:
            raw = self.game.observe(agent)
        obs = conform_observation(self._policy_obs(agent, raw), self._obs_spaces[agent])
        mask = self._mask(agent, raw)
        if mask is None or not mask.any():  # no mask, or not this agent's turn in a masked game
            mask = self.all_actions_mask(agent)
        return obs, mask

    def advance(self, pop: bool) -> Status:
        """Advance to the next decision and describe it: an opponent turn, or the team's view
        (one entry per team agent in ``observation``, ``mask`` and ``reward``)."""
        turn = self.next_turn()
        if turn is not None:
            return Status(turn.seat, turn.observation, turn.action_mask)
        self.pending = {}
        rewards = [self.slot_rewards[agent] for agent in self.team]
        if pop:
            self.slot_rewards = dict.fromkeys(self.team, 0.0)
        done = self.learner_done
        if done:
            # each slot ends as its own agent did; an agent still in the game (the team's episode
            # ended on an illegal action) ends as the team's episode does
            team_end = (self.terminated, self.truncated and not self.terminated)
            ends = [self.ends.get(agent) for agent in self.team]
            observations = [
                self._view(agent, True)[0] if end is None else end[2]
                for agent, end in zip(self.team, ends, strict=True)
            ]
            return Status(
                None,
                observations,
                None,
                self.terminated,
                self.truncated,
                rewards,
                dict(self.returns),
                self.learner_steps,
                self.illegal_action_played,
                slot_ends=[team_end if end is None else end[:2] for end in ends],
            )
        views = [self._view(agent, done) for agent in self.team]
        observations = [obs for obs, _ in views]
        return Status(None, observations, [mask for _, mask in views], reward=rewards)
