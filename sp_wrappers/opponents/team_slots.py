"""The opponents of a team game.

One policy per opposing team per episode, so all of that team's agents are answered in one
batched forward pass; ``opponent=`` is checked against the team layout; the learner's teammates in
a ``SelfPlayEnv`` play its latest weights; a simultaneous-move round makes one ``act`` call per
policy."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from ..core.policies import (
    Policy,
    RandomPolicy,
    act_in_games,
    check_opponent_action,
    stack_observations,
)
from ..core.teams import TeamLayout, is_team_mapping
from .slots import OpponentSlots, as_opponent_source

__all__ = [
    "check_opponent_teams",
    "TeamSlots",
    "shared_random_policies",
    "LatestTeammates",
    "play_round",
]


def check_opponent_teams(opponent: Any, layout: TeamLayout, learner_teams: Sequence[str]) -> None:
    """Check a ``{team: source}`` opponent mapping: known team names, and an entry for every team
    the learner's teams play against."""
    if not is_team_mapping(opponent):
        return
    unknown = [team for team in opponent if team not in layout.teams]
    if unknown:
        raise ValueError(
            f"The opponent mapping names {unknown}, which are not teams of this game; its teams "
            f"are {layout.names}."
        )
    needed = [t for team in learner_teams for t in layout.opponents_of(team)]
    missing = [t for t in dict.fromkeys(needed) if t not in opponent]
    if missing:
        example = ", ".join(f"{t!r}: RandomPolicy()" for t in missing)
        raise ValueError(
            f"The opponent mapping has no entry for the opposing team(s) {missing}; give every "
            f"team the learner plays against a source, e.g. add {{{example}}}, or pass one "
            "source for all of them."
        )
    for source in opponent.values():
        as_opponent_source(source)  # a clear error for what is not a source


class TeamSlots:
    """The opponents of one env copy in a team game: one policy per opposing team per episode.

    :param opponent: one source (a policy, a callable or an ``OpponentSampler``) drawn once per
        opposing team, a mapping ``{team: source}`` with each team's own source (and swap
        schedule), or ``None`` (a random policy in every opponent seat).
    :param layout: the game's teams.
    :param random_policies: the random policy of each seat (used when ``opponent`` is ``None``).
    :param shared_by: env copies sharing these slots (``opponent_draw="shared"``).
    """

    def __init__(
        self,
        opponent: Any,
        layout: TeamLayout,
        random_policies: Mapping[str, Policy],
        shared_by: int = 1,
    ) -> None:
        self.layout = layout
        self.shared_by = max(int(shared_by), 1)
        self.random_policies = dict(random_policies) if opponent is None else None
        if opponent is None:
            opponent = RandomPolicy()
        self.by_team: dict[str, OpponentSlots] | None = None
        self.common: OpponentSlots | None = None
        if is_team_mapping(opponent):
            self.by_team = {
                team: OpponentSlots(as_opponent_source(source), shared_by)
                for team, source in opponent.items()
            }
        else:
            self.common = OpponentSlots(as_opponent_source(opponent), shared_by)
        self._checker = OpponentSlots(None)
        self.learner_team: str | None = None

    @property
    def source(self) -> Any:
        """The opponent source (``{team: source}`` for a per-team mapping)."""
        if self.common is not None:
            return self.common.source
        return {team: slots.source for team, slots in (self.by_team or {}).items()}

    def seat_lineup(
        self, learner_team: str, rng: np.random.Generator, spaces_of: Any
    ) -> dict[str, Policy]:
        """The policy of each opponent seat for a new episode of ``learner_team`` (every agent
        of an opposing team plays its team's policy), fitted and checked against the seats."""
        opposing = self.layout.opponents_of(learner_team)
        self.learner_team = learner_team
        if self.common is not None:
            drawn = dict(zip(opposing, self.common.start_episode(len(opposing), rng), strict=True))
        else:
            assert self.by_team is not None
            drawn = {team: self.by_team[team].start_episode(1, rng)[0] for team in opposing}
        seats = {agent: drawn[team] for team in opposing for agent in self.layout.teams[team]}
        if self.random_policies is not None:
            seats = {agent: self.random_policies[agent] for agent in seats}
        return self._checker.bind_lineup(seats, spaces_of)

    def count_step(self) -> None:
        """Count one round of the game (each agent acted once) towards step-based swaps: a
        team's own source counts that team's agent steps (its size per round), as ML-Agents
        counts a ghost's steps; one source for every opposing team counts the learner team's."""
        teams = self.layout.teams
        if self.common is not None:
            for _ in range(len(teams[self.learner_team]) if self.learner_team else 1):
                self.common.count_step()
            return
        by_team = self.by_team or {}
        opposing = self.layout.opponents_of(self.learner_team) if self.learner_team else by_team
        for team in opposing:
            for _ in range(len(teams[team])):
                by_team[team].count_step()

    def sync_latest_weights(self, version: int, state: Mapping[str, Any]) -> bool:
        """Give a common source the learner's newest weights; a per-team mapping's sources belong
        to the other teams, so the learner's weights are not theirs (returns whether synced)."""
        sync = getattr(self.source, "sync_latest_weights", None) if self.common else None
        if sync is None:
            return False
        sync(version, state)
        return True


def shared_random_policies(action_spaces: Mapping[str, Any]) -> dict[str, RandomPolicy]:
    """One random policy per distinct action space (seats with equal spaces share it, so a
    team of random opponents is answered in one batch)."""
    made: list[tuple[Any, RandomPolicy]] = []
    out = {}
    for agent, space in action_spaces.items():
        policy = next((p for s, p in made if s == space), None)
        if policy is None:
            policy = RandomPolicy(space)
            made.append((space, policy))
        out[agent] = policy
    return out


class LatestTeammates:
    """The policy of the learner's teammates in a ``SelfPlayEnv``: a frozen copy of the learner
    (given once by :meth:`set_template`, which :class:`~sp_wrappers.SelfPlayCallback` calls at the
    first weight sync) kept at the learner's latest weights by :meth:`sync`; a random policy until
    then.

    >>> from gymnasium import spaces
    >>> teammates = LatestTeammates(spaces.Discrete(5))
    >>> teammates.policy.policy_id, teammates.wants_template
    ('random', True)
    """

    def __init__(self, action_space: Any) -> None:
        self.random = RandomPolicy(action_space)
        self.latest: Any = None
        self.version = -1

    @property
    def policy(self) -> Policy:
        return self.latest if self.latest is not None else self.random

    @property
    def wants_template(self) -> bool:
        return self.latest is None

    def set_template(self, policy: Any) -> None:
        """Play a frozen copy of ``policy`` (an SB3 model or policy) from now on."""
        from ..core.policies import SB3Policy
        from .sampler import LATEST_ID

        self.latest = SB3Policy(policy, policy_id=LATEST_ID)

    def sync(self, version: int, state: Mapping[str, Any]) -> None:
        """Load the learner's newest weights (repeated versions are ignored)."""
        if self.latest is not None and version > self.version:
            self.latest.load_state_dict(state)
            self.version = version


def play_round(
    driver: Any,
    turn: Any,
    seat_policies: Mapping[str, Policy],
    action_spaces: Mapping[str, Any],
    rng: np.random.Generator,
    game: Hashable,
) -> None:
    """Answer ``turn`` and every other agent still to act before the learner in this round of a
    simultaneous-move game (``metadata["is_parallelizable"]``, where all of them may observe
    before any acts, as in PettingZoo's ``aec_to_parallel``), with one ``act`` call per policy:
    a whole opposing team (and the teammates) in one forward pass each. ``driver`` is the
    ``SelfPlayEnv``'s ``SeatDriver``; a turn out of the expected order is left to the caller.
    ``game`` names the episode: a recurrent policy keeps one state per ``(game, seat)``."""
    state = driver._state
    agents = list(state.agents)
    seats = [turn.seat]
    for other in agents[agents.index(turn.seat) + 1 :]:
        if other == driver.learner:
            break
        if not (state.terminations.get(other) or state.truncations.get(other)):
            seats.append(other)
    views = {turn.seat: (turn.observation, turn.action_mask)}
    for seat in seats[1:]:
        raw = driver.game.observe(seat)
        views[seat] = (driver._policy_obs(seat, raw), driver._mask(seat, raw))
    groups: dict[tuple[int, bool], list[str]] = {}
    for seat in seats:
        groups.setdefault((id(seat_policies[seat]), views[seat][1] is None), []).append(seat)
    actions = {}
    for members in groups.values():
        policy = seat_policies[members[0]]
        masks = None if views[members[0]][1] is None else np.stack([views[s][1] for s in members])
        obs = stack_observations([views[s][0] for s in members])
        out = act_in_games(policy, obs, masks, rng, [(game, s) for s in members])
        for seat, action in zip(members, out, strict=True):
            mask = views[seat][1]
            actions[seat] = check_opponent_action(policy, action, action_spaces[seat], mask, seat)
    driver.play(actions.pop(turn.seat))
    while actions:
        following = driver.next_turn()
        if following is None or following.seat not in actions:
            return
        driver.play(actions.pop(following.seat))
