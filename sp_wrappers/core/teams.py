"""Teams in a PettingZoo game: which agents play together, and how a team's episode is scored.

The grouping of a game's agents into teams is ``teams=`` of :class:`~sp_wrappers.SelfPlayEnv`
and :class:`~sp_wrappers.SelfPlayVecEnv`: ``None`` (every agent its own team, named after it: the
envs' behaviour without teams), ``"prefix"`` (agents grouped by their name without a trailing
``_N``: ``adversary_0..2`` -> ``adversary``) or a mapping ``{team: [agent, ...]}``. ``learner=``
and ``opponent=`` are checked against the layout (errors name the fix); a team's outcome (1 win,
0.5 draw, 0 loss) comes from the teams' returns. The learner's teammates in a ``SelfPlayEnv``
play the learner's latest weights (a random policy until they arrive).

A team's return is the sum of its agents' returns (in ``simple_tag_v3`` every predator gets the
catch reward, so the predators' team return is three times one predator's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .policies import (
    Policy,
    is_policy,
)
from .seats import OutcomeFn, episode_outcome, pairwise_outcome, seat_spaces

__all__ = [
    "TeamLayout",
    "team_outcome",
    "team_returns",
    "resolve_learner_teams",
    "is_team_mapping",
    "team_summary",
    "LEARNER_TEAM_MODES",
]

#: ``learner=`` values that change the learner's team between episodes.
LEARNER_TEAM_MODES = ("random", "alternate")
_SUFFIX = re.compile(r"^(.+)_\d+$")


@dataclass(frozen=True)
class TeamLayout:
    """A game's agents grouped into teams (team -> agents, both in game order).

    >>> layout = TeamLayout.from_spec("prefix", ["adversary_0", "adversary_1", "agent_0"])
    >>> layout.teams
    {'adversary': ('adversary_0', 'adversary_1'), 'agent': ('agent_0',)}
    >>> layout.team_of("adversary_1"), layout.names, layout.opponents_of("agent")
    ('adversary', ['adversary', 'agent'], ['adversary'])
    >>> TeamLayout.from_spec(None, ["p0", "p1"]).teams
    {'p0': ('p0',), 'p1': ('p1',)}
    """

    teams: dict[str, tuple[str, ...]]
    _team_of: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self._team_of:
            index = {agent: team for team, agents in self.teams.items() for agent in agents}
            object.__setattr__(self, "_team_of", index)

    @classmethod
    def from_spec(cls, spec: Any, possible_agents: Sequence[str]) -> TeamLayout:
        """The layout of ``spec`` (``None``, ``"prefix"`` or ``{team: [agent, ...]}``) over a
        game's ``possible_agents``.

        :raises ValueError: an agent in two teams, in none, or unknown to the game; an empty team;
            fewer than two teams; an unknown spec string.
        """
        agents = list(possible_agents)
        if spec is None:
            return cls({agent: (agent,) for agent in agents})
        if isinstance(spec, str):
            if spec != "prefix":
                raise ValueError(
                    f"teams={spec!r} is not a known grouping; pass teams='prefix' (agents grouped "
                    "by their name without a trailing _N) or a mapping {team: [agent, ...]}."
                )
            teams: dict[str, list[str]] = {}
            for agent in agents:
                match = _SUFFIX.match(agent)
                teams.setdefault(match.group(1) if match else agent, []).append(agent)
            return cls._checked({team: tuple(members) for team, members in teams.items()}, agents)
        if not isinstance(spec, Mapping):
            raise TypeError(
                f"teams must be None, 'prefix' or a mapping {{team: [agent, ...]}}, got "
                f"{type(spec).__name__}."
            )
        seen: dict[str, str] = {}
        order = {agent: i for i, agent in enumerate(agents)}
        grouped: dict[str, tuple[str, ...]] = {}
        for team, members in spec.items():
            if not isinstance(team, str):
                raise TypeError(f"Team names must be strings, got {team!r}.")
            if isinstance(members, str) or not isinstance(members, Sequence | set | frozenset):
                raise TypeError(
                    f"teams[{team!r}] must be a list of agent names, got {members!r}; e.g. "
                    f"teams={{{team!r}: [{agents[0]!r}]}}."
                )
            for agent in members:
                if agent not in order:
                    raise ValueError(
                        f"teams[{team!r}] names {agent!r}, which is not an agent of this game; "
                        f"its agents are {agents}."
                    )
                if agent in seen and seen[agent] != team:
                    raise ValueError(
                        f"Agent {agent!r} is in two teams, {seen[agent]!r} and {team!r}; put each "
                        "agent in exactly one team."
                    )
                seen[agent] = team
            grouped[team] = tuple(sorted(set(members), key=order.__getitem__))
        missing = [agent for agent in agents if agent not in seen]
        if missing:
            raise ValueError(
                f"Agents {missing} are in no team; every agent of the game needs one. Add them to "
                f"a team, e.g. teams[{next(iter(grouped), 'team')!r}] += {missing}, or give them a "
                "team of their own."
            )
        return cls._checked(grouped, agents)

    @classmethod
    def _checked(cls, teams: dict[str, tuple[str, ...]], agents: list[str]) -> TeamLayout:
        empty = [team for team, members in teams.items() if not members]
        if empty:
            raise ValueError(f"Teams {empty} have no agents; give each team at least one agent.")
        if len(teams) < 2:
            raise ValueError(
                f"Self-play needs at least two teams, but teams group all of {agents} into "
                f"{list(teams)}; split them, e.g. with a mapping {{team: [agent, ...]}}."
            )
        return cls(teams)

    @property
    def names(self) -> list[str]:
        """The team names, in order."""
        return list(self.teams)

    def team_of(self, agent: str) -> str:
        """The team ``agent`` plays for."""
        try:
            return self._team_of[agent]
        except KeyError:
            raise ValueError(
                f"{agent!r} is not an agent of this game; its agents are {list(self._team_of)}."
            ) from None

    def opponents_of(self, team: str) -> list[str]:
        """The teams ``team`` plays against (every other team, in order)."""
        self._check_team(team)
        return [other for other in self.teams if other != team]

    def _check_team(self, team: str) -> None:
        if team not in self.teams:
            raise ValueError(f"{team!r} is not a team of this game; its teams are {self.names}.")


def team_returns(layout: TeamLayout, returns: Mapping[str, float]) -> dict[str, float]:
    """Each team's return: the sum of its agents' returns (agents without one count 0).

    >>> layout = TeamLayout.from_spec("prefix", ["a_0", "a_1", "b_0"])
    >>> team_returns(layout, {"a_0": 1.0, "a_1": 2.0, "b_0": -1.0})
    {'a': 3.0, 'b': -1.0}
    """
    return {
        team: float(sum(returns.get(agent, 0.0) for agent in members))
        for team, members in layout.teams.items()
    }


def team_outcome(team_returns: Mapping[str, float], team: str) -> float:
    """``team``'s outcome against the other teams' returns: 1 if ahead of each, 0.5 if level, 0
    if behind (the mean over the other teams when there are more than two).

    >>> team_outcome({"predators": 30.0, "prey": -30.0}, "prey")
    0.0
    >>> team_outcome({"red": 1.0, "blue": 1.0}, "red")
    0.5
    """
    if team not in team_returns:
        raise ValueError(f"{team!r} has no return among {list(team_returns)}.")
    return pairwise_outcome(team_returns, team)


def is_team_mapping(opponent: Any) -> bool:
    """Whether ``opponent`` is a ``{team: source}`` mapping (and not a policy)."""
    return isinstance(opponent, Mapping) and not is_policy(opponent)


def _team_spaces(game: Any, layout: TeamLayout, team: str, keep_dict_obs: bool) -> tuple:
    """The (observation, action) spaces every agent of ``team`` shares; an error naming the
    agents and spaces when they differ (one model cannot play them all)."""
    members = layout.teams[team]
    first = seat_spaces(game, members[0], keep_dict_obs)
    for agent in members[1:]:
        pair = seat_spaces(game, agent, keep_dict_obs)
        if pair != first:
            raise ValueError(
                f"Team {team!r} cannot be played by one learner: agent {members[0]!r} has "
                f"observation space {first[0]} and action space {first[1]}, but {agent!r} has "
                f"{pair[0]} and {pair[1]}. Put agents with different spaces in different teams "
                "(teams={...}) and train one model per team."
            )
    return first


def resolve_learner_teams(
    game: Any, layout: TeamLayout, learner: str, keep_dict_obs: bool
) -> list[str]:
    """The teams the learner may play: ``[learner]`` for a team name, the agent's team for an
    agent name, every team for ``"random"``/``"alternate"`` (which then need teams of one size
    whose agents share the spaces). Every such team's agents must share their spaces.

    ``game`` is anything with ``observation_space(agent)`` and ``action_space(agent)``.
    """
    if learner in LEARNER_TEAM_MODES:
        teams = layout.names
        first = _team_spaces(game, layout, teams[0], keep_dict_obs)
        size = len(layout.teams[teams[0]])
        for team in teams[1:]:
            pair = _team_spaces(game, layout, team, keep_dict_obs)
            if pair != first or len(layout.teams[team]) != size:
                raise ValueError(
                    f"learner={learner!r} changes the learner's team between episodes, so every "
                    f"team needs the same size and spaces, but team {teams[0]!r} has {size} "
                    f"agent(s) with ({first[0]}, {first[1]}) and {team!r} has "
                    f"{len(layout.teams[team])} with ({pair[0]}, {pair[1]}). Pass one team, e.g. "
                    f"learner={teams[0]!r}, and train one model per team."
                )
        return teams
    if learner in layout.teams:
        team = learner
    elif learner in layout._team_of:
        team = layout.team_of(learner)
    else:
        raise ValueError(
            f"learner={learner!r} is neither a team ({layout.names}) nor an agent "
            f"({list(layout._team_of)}) of this game; pass a team name, e.g. "
            f"learner={layout.names[0]!r}, or one of {list(LEARNER_TEAM_MODES)}."
        )
    _team_spaces(game, layout, team, keep_dict_obs)
    return [team]


def team_summary(
    layout: TeamLayout,
    team: str,
    returns: Mapping[str, float],
    seat_policies: Mapping[str, Policy],
    outcome_fn: OutcomeFn | None,
    seat: str,
    illegal_action: Any,
) -> dict[str, Any]:
    """The team keys of ``info["selfplay"]`` (``team``, ``team_return``, ``team_returns``,
    ``opponent_teams``, ``team_outcomes``) and the ``opponents`` (seat -> id, teammates left out)
    and ``outcome`` (team against team, unless ``outcome_fn`` is given).

    ``outcome`` is the team's overall result (:func:`team_outcome`: the mean over the other
    teams when there are more than two); ``team_outcomes`` is its result against each opposing
    team alone (1, 0.5 or 0 from the two teams' returns), what each per-team match record and
    Elo update uses. A given ``outcome_fn`` overrides both (its outcome against every team), and
    an illegal learner action is a loss against every team.
    """
    by_team = team_returns(layout, returns)
    opposing = layout.opponents_of(team)
    if outcome_fn is None:
        outcome = 0.0 if illegal_action is not None else team_outcome(by_team, team)
        team_outcomes = {
            other: 0.0
            if illegal_action is not None
            else team_outcome({team: by_team[team], other: by_team[other]}, team)
            for other in opposing
        }
    else:
        outcome = episode_outcome(returns, seat, outcome_fn, illegal_action)
        team_outcomes = dict.fromkeys(opposing, float(outcome))
    opponents = {
        agent: p.policy_id for agent, p in seat_policies.items() if layout.team_of(agent) != team
    }
    opponent_teams = {}
    for agent, policy_id in opponents.items():
        opponent_teams.setdefault(layout.team_of(agent), policy_id)
    return {
        "opponent": next(iter(opponents.values())),
        "opponents": opponents,
        "outcome": float(outcome),
        "team": team,
        "team_return": by_team[team],
        "team_returns": by_team,
        "opponent_teams": opponent_teams,
        "team_outcomes": team_outcomes,
    }
