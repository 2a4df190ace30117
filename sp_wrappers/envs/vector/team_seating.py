"""A learner team in the vector env: one slot per team agent (parameter sharing).

:class:`LearnerTeam` is the seating :class:`~sp_wrappers.SelfPlayVecEnv` holds when built with
``teams=`` (what ``make_selfplay_vec_env(..., teams=...)`` does): ``n_envs`` game copies,
``team_size`` slots each; slot ``g * team_size + k`` is agent ``k`` (game order) of the learner's
team in copy ``g``, so one SB3 model plays every agent of the team and learns from all of their
experience (as SuperSuit's ``pettingzoo_env_to_vec_env``). Each game is driven by a
:class:`~sp_wrappers.envs.vector.team_driver.TeamDriver`: a vector step plays each team agent's
action at its next turn (one round in simultaneous-move games). The copy's slots end their episode
together, when every agent of the team is done; only the copy's first slot carries
``info["selfplay"]`` (one match record per game), every slot carries ``seat``, ``team`` and, at
the end, its own ``terminal_observation`` and ``TimeLimit.truncated``: its agent's own end (an
agent that terminated early is not bootstrapped; a teammate cut by the time limit is, from its
own last observation).

Opponents: each opposing team plays one policy per episode, drawn from its entry of
``opponent={team: source}`` (or once per opposing team from a plain source), so all of its agents
in all copies facing the same policy are answered by one batched ``act`` call.
``sync_latest_weights`` reaches a plain opponent source (the symmetric case: every team drawn from
the learner's archive) but not a per-team mapping's sources, which hold the other teams' policies.
With ``swap_unit="steps"`` a vector step counts as one round of each copy's game: a team's own
source (``{team: source}``) counts that team's agent steps (its size per round), so an opposing
team's swaps are counted in its own steps, as ML-Agents counts a ghost's; a plain source counts
the learner team's (``team_size`` per vector step, as SB3's ``num_timesteps``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.policies import Policy
from ...core.seats import check_learner_action
from ..seating import LEARNER_SEAT_MODES, zero_observation
from ..team_seating import TeamSeating
from .team_driver import OpponentActions, TeamActions, TeamDriver

__all__ = ["LearnerTeam"]


class LearnerTeam(TeamSeating):
    """A vector env's learner team, one slot per agent (see the module docstring).

    :param game: the game, or the vector env's stand-in with its agents and spaces.
    :param learner: a team name, ``"random"`` or ``"alternate"`` (an agent name only for a team
        of one).
    :param keep_dict_obs: whether the learner sees PettingZoo's dict observations.
    :param teams: ``"prefix"`` or ``{team: [agent, ...]}`` (see :class:`~sp_wrappers.TeamLayout`).

    >>> from mpe2 import simple_tag_v3
    >>> seating = LearnerTeam(simple_tag_v3.env(), "adversary", False, "prefix")
    >>> seating.learner_seats, seating.team_size, seating.slot_agents("adversary")
    (['adversary'], 3, ('adversary_0', 'adversary_1', 'adversary_2'))
    """

    driver_type = TeamDriver

    def _learner_seats(self, game: Any, learner: str) -> list[str]:
        """The teams the learner may play (it plays every agent of one), checked: a named
        agent must be a team of one; a turn-based game is warned about."""
        members = self.layout.teams[self.learner_teams[0]]
        if learner not in self.layout.teams and learner not in LEARNER_SEAT_MODES:
            if len(members) > 1:
                raise ValueError(
                    f"learner={learner!r} is one agent of team {self.learner_teams[0]!r} "
                    f"{list(members)}; with teams, SelfPlayVecEnv's learner plays the whole team "
                    f"(one slot per agent): pass learner={self.learner_teams[0]!r}."
                )
        if len(members) > 1 and not self.rounds:
            warnings.warn(
                f"{self.metadata.get('name', 'This game')} is turn-based (its metadata does not "
                "say is_parallelizable), but a team vec env steps every team agent once per "
                "vector step on the observations of the step's start: an agent that moves after "
                "others in the step acts on an old observation (and may find its action no longer "
                "legal). Prefer SelfPlayEnv for turn-based team games (its learner and teammates "
                "act on their own turns).",
                stacklevel=9,  # make_selfplay_vec_env(..., teams=...)'s caller
            )
        return list(self.learner_teams)

    @property
    def team_size(self) -> int:  # type: ignore[override]
        """The learner's slots in one copy: its team's agents."""
        return len(self.layout.teams[self.learner_teams[0]])

    def slot_agents(self, seat: str) -> tuple[str, ...]:
        return self.layout.teams[seat]

    def lineup(
        self, seat: str, slots: Any, rng: np.random.Generator, defaults: Any = None
    ) -> dict[str, Policy]:
        """One policy per team that ``seat`` (a team) plays against."""
        return slots.seat_lineup(seat, rng, self.spaces_of)

    def summary(self, seat: str, *args: Any) -> dict[str, Any]:
        """The team's episode seen from its first agent (``team_return``: the sum over the
        team)."""
        return super().summary(self.layout.teams[seat][0], *args)

    # -- slots -----------------------------------------------------------------------------------
    def game_learner(self, seat: str) -> Any:
        return self.layout.teams[seat]

    def game_action(self, action: Any) -> Any:
        return TeamActions(action)

    def slot_infos(self, seat: str) -> list[dict[str, Any]]:
        return [{"seat": agent, "team": seat} for agent in self.layout.teams[seat]]

    def copy_masks(self, status: Any, view: Any) -> np.ndarray:
        """The team agents' legal actions, shape ``(team_size, n_actions)``."""
        masks = None if status is None else status.mask
        if masks is None or any(m is None for m in masks):
            raise TypeError("action_masks() needs a Discrete action space (and a reset env).")
        return np.stack(masks)

    def copy_actions(self, actions: list, copies: Sequence[Any], start: int | None) -> list:
        size = self.team_size
        if start is not None:
            for copy in copies:
                for k, agent in enumerate(self.layout.teams[copy.learner]):
                    action = actions[copy.index * size + k]
                    check_learner_action(action, copy.status.mask[k], agent, start)
        return [actions[g * size : (g + 1) * size] for g in range(len(copies))]

    def observations(self, copies: Sequence[Any]) -> list[Any]:
        zeros = None
        out = []
        for copy in copies:
            for obs in copy.status.observation:
                if obs is None:
                    zeros = zero_observation(self.observation_space) if zeros is None else zeros
                    obs = zeros
                out.append(obs)
        return out

    def ongoing(self, copy: Any) -> list[tuple[float, dict[str, Any]]]:
        out = []
        rewards = np.broadcast_to(copy.status.reward, (self.team_size,))
        for k, info in enumerate(self.slot_infos(copy.learner)):
            info["TimeLimit.truncated"] = False
            out.append((copy.config.transform(rewards[k], info), info))
        return out

    def finished(
        self, copy: Any, status: Any, summary: dict[str, Any], space: spaces.Space
    ) -> list[tuple[float, dict[str, Any]]]:
        team_end = (status.terminated, status.truncated)
        ends = status.slot_ends or [team_end] * self.team_size
        results = []
        for k, info in enumerate(self.slot_infos(copy.learner)):
            obs = status.observation[k]
            terminated, truncated = ends[k]  # the slot's own agent's end, not the team's
            info["TimeLimit.truncated"] = bool(truncated and not terminated)
            info["terminal_observation"] = zero_observation(space) if obs is None else obs
            if k == 0:
                info["selfplay"] = summary
            # Only the copy's first slot reports the episode (one match per game), but every
            # teammate's reward transform sees the outcome, as the docs promise.
            view = info if k == 0 else {**info, "selfplay": summary}
            results.append((copy.config.transform(status.reward[k], view), info))
        return results

    def answer(self, turns: list[tuple[Any, Any]], batches: Any) -> list[Any]:
        """As :meth:`LearnerSeat.answer`, with a turn of several seats (a simultaneous-move
        round) split into one row per seat and its actions sent back together."""
        rows = []
        for copy, status in turns:
            if isinstance(status.seat, tuple):
                for k, seat in enumerate(status.seat):
                    rows.append(copy.opponent_row(seat, status.observation[k], status.mask[k]))
            else:
                rows.append(copy.opponent_row(status.seat, status.observation, status.mask))
        actions = iter(batches.answer(rows))
        answers = []
        for _, status in turns:
            if isinstance(status.seat, tuple):
                answer: Any = OpponentActions()
                for seat in status.seat:
                    answer[seat] = next(actions)
            else:
                answer = next(actions)
            answers.append(answer)
        return answers

    def describe(self, learner_mode: str) -> list[str]:
        return [
            f"teams={self.teams!r}",
            f"learner={learner_mode!r}",
            f"team_size={self.team_size}",
        ]
