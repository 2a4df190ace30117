"""The seatings of a learner team: the game's agents grouped into teams, one learner per team.

:class:`TeamSeating` answers what every learner team shares (its teams, one opponent policy per
opposing team, the team keys of ``info["selfplay"]``); :class:`SeatInTeam` is a
:class:`~sp_wrappers.SelfPlayEnv`'s: the learner acts for one agent of its team and its
teammates play the learner's latest weights. The vector env's seating, a whole team with one
slot per agent, is :class:`~sp_wrappers.envs.vector.team_seating.LearnerTeam`. The envs load this
module only when given ``teams=``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
from gymnasium import spaces

from ..core.policies import Policy
from ..core.seats import SeatDriver
from ..core.teams import TeamLayout, resolve_learner_teams, team_summary
from ..opponents.team_slots import (
    LatestTeammates,
    TeamSlots,
    check_opponent_teams,
    play_round,
    shared_random_policies,
)
from .seating import LEARNER_SEAT_MODES, LearnerSeat

__all__ = ["TeamSeating", "SeatInTeam"]


class TeamSeating(LearnerSeat):
    """What the seatings of a learner team share (see the module docstring).

    :param game: the game, or a stand-in with its agents and spaces.
    :param learner: a team name, an agent name, ``"random"`` or ``"alternate"``.
    :param keep_dict_obs: whether the learner sees PettingZoo's dict observations.
    :param teams: ``"prefix"`` or ``{team: [agent, ...]}`` (see :class:`~sp_wrappers.TeamLayout`).
    """

    layout: TeamLayout

    def __init__(
        self,
        game: Any,
        learner: str,
        keep_dict_obs: bool,
        teams: Any,
    ) -> None:
        self.teams = teams
        self.layout = TeamLayout.from_spec(teams, game.possible_agents)
        self.learner_teams = resolve_learner_teams(game, self.layout, learner, keep_dict_obs)
        #: the game's metadata; ``rounds``: whether the agents of a round may all observe
        #: before any acts (a simultaneous-move game)
        self.metadata = getattr(game, "metadata", None) or {}
        self.rounds = bool(self.metadata.get("is_parallelizable"))
        super().__init__(game, learner, keep_dict_obs)

    @classmethod
    def build(cls, game: Any, learner: str, keep_dict_obs: bool, teams: Any) -> LearnerSeat:
        return cls(game, learner, keep_dict_obs, teams)

    def _default_policies(self, action_spaces: Mapping[str, spaces.Space]) -> dict[str, Policy]:
        """One random policy per distinct action space, so a random team answers in one batch."""
        return shared_random_policies(action_spaces)

    @classmethod
    def check_symmetries(cls, symmetries: Any) -> None:
        if symmetries is not None:
            raise ValueError("symmetries= does not work with teams= yet; leave one of them out.")

    def shared_opponent(self, opponent: Any) -> Any:
        return opponent  # a mapping stays one: each copy's slots take its sources

    def opponent_slots(
        self, opponent: Any, random_when_none: bool = False, shared_by: int = 1
    ) -> tuple[Any, Mapping[str, Policy] | None]:
        """One policy per opposing team per episode (random play when ``opponent`` is
        ``None``); the line-up needs no per-seat defaults."""
        check_opponent_teams(opponent, self.layout, self.learner_teams)  # a clear error first
        return TeamSlots(opponent, self.layout, self.default_policies, shared_by), None

    def sync_latest_weights(
        self, slots: Any, source: Any, version: int, state: Mapping[str, Any]
    ) -> bool:
        """A common source takes the learner's weights; a per-team mapping's sources hold the
        other teams' policies and do not."""
        return bool(slots.sync_latest_weights(version, state))

    def share_slots(self, copies: Sequence[Any]) -> None:
        """One set of team slots per group of copies given the same opponent; a group whose
        copies did not change keeps its slots (its line-up and its place in the swap schedule)."""
        groups: dict[int, list[Any]] = {}
        for copy in copies:
            groups.setdefault(id(copy.opponent), []).append(copy)
        for members in groups.values():
            slots = members[0].slots
            if all(c.slots is slots for c in members) and slots.shared_by == len(members):
                continue
            slots, _ = self.opponent_slots(members[0].opponent, shared_by=len(members))
            for copy in members:
                copy.slots = slots
                copy.opponent_source = slots.source

    def info(self, seat: str) -> dict[str, Any]:
        return {"seat": seat, "team": self.layout.team_of(seat)}

    def summary(
        self, seat: str, returns: Mapping[str, float], policies: Any, outcome_fn: Any, illegal: Any
    ) -> dict[str, Any]:
        """``info["selfplay"]`` of a team's episode seen from ``seat`` (``seat``/``return``:
        that agent's), with the team keys of :func:`~sp_wrappers.core.teams.team_summary`."""
        summary: dict[str, Any] = {
            "seat": seat,
            "return": returns.get(seat, 0.0),
            "returns": dict(returns),
        }
        team = self.layout.team_of(seat)
        summary.update(
            team_summary(self.layout, team, returns, policies, outcome_fn, seat, illegal)
        )
        if illegal is not None:
            summary["illegal_action"] = illegal
        return summary


class SeatInTeam(TeamSeating):
    """A :class:`~sp_wrappers.SelfPlayEnv`'s learner team: the learner acts for one agent (its
    team's first, or the agent ``learner`` names), its teammates play the learner's latest
    weights (:class:`~sp_wrappers.opponents.team_slots.LatestTeammates`), and in
    simultaneous-move games every agent still to act in a round is answered in one batch.

    >>> from pettingzoo.classic import rps_v2
    >>> seating = SeatInTeam(rps_v2.env(), "random", False, {"a": ["player_0"], "b": ["player_1"]})
    >>> seating.learner_teams, seating.chooser_seats, seating.info("player_1")
    (['a', 'b'], ['player_0', 'player_1'], {'seat': 'player_1', 'team': 'b'})
    """

    def _chooser_seats(self, learner: str) -> list[str]:
        """Each team's first agent, or the agent ``learner`` names."""
        if learner in self.layout.teams or learner in LEARNER_SEAT_MODES:
            return [self.layout.teams[team][0] for team in self.learner_teams]
        return [learner]

    @cached_property
    def teammates(self) -> LatestTeammates:
        """The policy the learner's teammates play."""
        return LatestTeammates(self.action_space)

    def _learner_seats(self, game: Any, learner: str) -> list[str]:
        """Every agent of the learner's possible teams (the named agent first)."""
        teams = self.learner_teams
        if learner not in self.layout.teams and learner not in LEARNER_SEAT_MODES:
            return [learner, *(a for a in self.layout.teams[teams[0]] if a != learner)]
        return [agent for team in teams for agent in self.layout.teams[team]]

    def lineup(
        self, seat: str, slots: Any, rng: np.random.Generator, defaults: Any = None
    ) -> dict[str, Policy]:
        """One policy per opposing team, and the learner's teammates."""
        team = self.layout.team_of(seat)
        lineup = slots.seat_lineup(team, rng, self.spaces_of)
        for agent in self.layout.teams[team]:
            if agent != seat:
                lineup[agent] = self.teammates.policy
        return lineup

    def play_turn(
        self, driver: SeatDriver, turn: Any, policies: Any, rng: Any, game: tuple
    ) -> None:
        if self.rounds:  # a team's agents in one batch (``game``: a recurrent team's state key)
            play_round(driver, turn, policies, self.action_spaces, rng, game)
            return
        super().play_turn(driver, turn, policies, rng, game)

    def sync_latest_weights(
        self, slots: Any, source: Any, version: int, state: Mapping[str, Any]
    ) -> bool:
        """The teammates take the learner's weights, and a common opponent source too."""
        self.teammates.sync(version, state)
        return super().sync_latest_weights(slots, source, version, state)

    @property
    def wants_template(self) -> bool:
        if not self.teammates.wants_template:
            return False
        return any(len(self.layout.teams[team]) > 1 for team in self.learner_teams)

    def set_template(self, policy: Any) -> None:
        self.teammates.set_template(policy)
