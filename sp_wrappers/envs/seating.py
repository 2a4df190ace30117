"""Seats as a collaborator: who the learner plays in a self-play env, and how its games are scored.

:class:`~sp_wrappers.SelfPlayEnv` and :class:`~sp_wrappers.SelfPlayVecEnv` hold one seating and
ask it every question whose answer depends on what the learner is: which seats it may take and
with which spaces, who sits in the other seats each episode (the line-up), what
``info["selfplay"]`` says at the end, and, in the vector env, which slots a game copy fills and
what each slot sees. :class:`LearnerSeat` is the seating of a learner that plays one seat of the
game, every other seat an opponent. A learner *team* has its own seatings
(:mod:`sp_wrappers.envs.team_seating`, :mod:`sp_wrappers.envs.vector.team_seating`): the envs are
the same classes with another seating, and an env without teams never loads them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ..core.policies import (
    Policy,
    RandomPolicy,
    act_in_games,
    check_opponent_action,
    stack_observations,
)
from ..core.seats import (
    SeatDriver,
    check_learner_action,
    conform_observation,
    episode_outcome,
    seat_outcomes,
    seat_spaces,
)
from ..opponents.slots import OpponentSlots, as_opponent_source, shared_slots

__all__ = [
    "LEARNER_SEAT_MODES",
    "LearnerSeat",
    "play_turn",
    "resolve_learner_seats",
    "zero_observation",
]

LEARNER_SEAT_MODES = ("random", "alternate")


def resolve_learner_seats(game: Any, learner: str, keep_dict_obs: bool) -> list[str]:
    """The seats the learner may take, checking names and that their spaces agree."""
    agents = list(game.possible_agents)
    if learner not in LEARNER_SEAT_MODES:
        if learner not in agents:
            raise ValueError(
                f"learner={learner!r} is not an agent of this game; choose one of {agents}, "
                f"or one of {list(LEARNER_SEAT_MODES)} to change seats between episodes."
            )
        return [learner]
    obs0, act0 = seat_spaces(game, agents[0], keep_dict_obs)
    for agent in agents[1:]:
        obs, act = seat_spaces(game, agent, keep_dict_obs)
        if obs != obs0 or act != act0:
            raise ValueError(
                f"learner={learner!r} needs every seat to have the same spaces, but {agents[0]!r} "
                f"has ({obs0}, {act0}) and {agent!r} has ({obs}, {act}). "
                f"Pass a fixed seat instead, e.g. learner={agents[0]!r}."
            )
    return agents


def zero_observation(space: spaces.Space) -> Any:
    """An all-zero observation of ``space`` (a learner whose agent left the game sees it).

    >>> zero_observation(spaces.Box(0, 1, (2,)))
    array([0., 0.], dtype=float32)
    """
    if isinstance(space, spaces.Dict):
        return {key: zero_observation(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Discrete):
        return conform_observation(space.start, space)
    return np.zeros(space.shape, dtype=space.dtype)


def play_turn(
    driver: SeatDriver,
    turn: Any,
    policy: Policy,
    action_space: spaces.Space,
    rng: np.random.Generator,
    key: Hashable,
) -> None:
    """Answer one opponent ``turn`` of ``driver``'s game with ``policy`` (``key``: a recurrent
    policy's state key) and play the checked action."""
    masks = None if turn.action_mask is None else turn.action_mask[None]
    obs = stack_observations([turn.observation])
    action = act_in_games(policy, obs, masks, rng, [key])[0]
    driver.play(check_opponent_action(policy, action, action_space, turn.action_mask, turn.seat))


class LearnerSeat:
    """The seating of a learner that plays one seat of the game, every other seat an opponent.

    :param game: the game, or anything with ``possible_agents``, ``observation_space(agent)`` and
        ``action_space(agent)`` (the vector env's game spec).
    :param learner: the learner's agent name, ``"random"`` or ``"alternate"``.
    :param keep_dict_obs: whether the learner sees PettingZoo's ``{"observation",
        "action_mask"}`` dict.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> seating = LearnerSeat(tictactoe_v3.env(), "random", keep_dict_obs=False)
    >>> seating.learner_seats, seating.team_size, seating.info("player_2")
    (['player_1', 'player_2'], 1, {'seat': 'player_2'})
    >>> slots, defaults = seating.opponent_slots(None, random_when_none=True)
    >>> sorted(seating.lineup("player_1", slots, np.random.default_rng(0), defaults))
    ['player_2']
    """

    #: the game's teams (``None``: every agent its own team)
    layout: Any = None
    #: the teams the learner may play (``None``: it plays seats, not teams)
    learner_teams: list[str] | None = None
    #: the learner's slots in one copy of the game (a vector env's ``team_size``)
    team_size = 1
    #: each vector-env game's driver
    driver_type: type[SeatDriver] = SeatDriver

    def __init__(self, game: Any, learner: str, keep_dict_obs: bool) -> None:
        self.keep_dict_obs = keep_dict_obs
        self.possible_agents = list(game.possible_agents)
        #: the seats the learner may take (``reset(options={"learner_seat": ...})`` too)
        self.learner_seats = self._learner_seats(game, learner)
        #: what the learner's place is drawn from at each episode start
        self.chooser_seats = self._chooser_seats(learner)
        self.observation_space, self.action_space = seat_spaces(
            game, self.slot_agents(self.learner_seats[0])[0], keep_dict_obs
        )
        self._seat_spaces = {a: seat_spaces(game, a, keep_dict_obs) for a in self.possible_agents}
        #: each seat's action space (what an opponent's action is checked against)
        self.action_spaces = {agent: pair[1] for agent, pair in self._seat_spaces.items()}
        #: the policy of each seat when no opponent is given: random play in its own space
        self.default_policies = self._default_policies(
            {a: game.action_space(a) for a in self.possible_agents}
        )

    @classmethod
    def build(cls, game: Any, learner: str, keep_dict_obs: bool, teams: Any) -> LearnerSeat:
        """The seating for ``teams`` (a learner seat has none: ``None``)."""
        return cls(game, learner, keep_dict_obs)

    def _learner_seats(self, game: Any, learner: str) -> list[str]:
        return resolve_learner_seats(game, learner, self.keep_dict_obs)

    def _chooser_seats(self, learner: str) -> list[str]:
        return self.learner_seats

    def _default_policies(self, action_spaces: Mapping[str, spaces.Space]) -> dict[str, Policy]:
        return {agent: RandomPolicy(space) for agent, space in action_spaces.items()}

    def spaces_of(self, seat: str) -> tuple[spaces.Space, spaces.Space]:
        """The (observation, action) spaces an opponent in ``seat`` must fit."""
        return self._seat_spaces[seat]

    @classmethod
    def check_symmetries(cls, symmetries: Any) -> None:
        """Refuse symmetries this seating cannot play in (a learner seat plays them all)."""

    # -- opponents -------------------------------------------------------------------------------
    def shared_opponent(self, opponent: Any) -> Any:
        """``opponent`` as one source for several copies (``set_attr("opponent_source", x)``)."""
        return as_opponent_source(opponent)

    def opponent_slots(
        self, opponent: Any, random_when_none: bool = False, shared_by: int = 1
    ) -> tuple[Any, Mapping[str, Policy] | None]:
        """The opponent slots that ``opponent`` fills, and the per-seat policies a line-up takes
        instead (random play in each seat's own space, when ``opponent`` is ``None`` and
        ``random_when_none``)."""
        if opponent is None and random_when_none:
            source = as_opponent_source(self.default_policies[self.learner_seats[0]])
            return OpponentSlots(source, shared_by), self.default_policies
        return OpponentSlots(as_opponent_source(opponent), shared_by), None

    def lineup(
        self, seat: str, slots: Any, rng: np.random.Generator, defaults: Any = None
    ) -> dict[str, Policy]:
        """The policy of every other seat for an episode with the learner in ``seat``, drawn
        from ``slots`` (``defaults``: the seats' own policies instead, see
        :meth:`opponent_slots`), each fitted to its seat."""
        opponent_seats = [a for a in self.possible_agents if a != seat]
        drawn = slots.start_episode(len(opponent_seats), rng)
        if defaults is not None:
            drawn = [defaults[a] for a in opponent_seats]
        return slots.bind_lineup(dict(zip(opponent_seats, drawn, strict=True)), self.spaces_of)

    def sync_latest_weights(
        self, slots: Any, source: Any, version: int, state: Mapping[str, Any]
    ) -> bool:
        """Give the opponents' source the learner's newest weights (whether it took them)."""
        sync = getattr(source, "sync_latest_weights", None)
        if sync is None:
            return False
        sync(version, state)
        return True

    def share_slots(self, copies: Sequence[Any]) -> None:
        """One set of slots per source for copies that share draws (``opponent_draw="shared"``)."""
        sources = [copy.opponent_source for copy in copies]
        shared = shared_slots(sources, [copy.slots for copy in copies])
        for copy, slots in zip(copies, shared, strict=True):
            copy.slots = slots

    def play_turn(
        self, driver: SeatDriver, turn: Any, policies: Any, rng: Any, game: tuple
    ) -> None:
        """Answer an opponent's turn in a ``SelfPlayEnv`` with its policy among ``policies``
        (``game``: the episode's state key)."""
        seat = turn.seat
        play_turn(driver, turn, policies[seat], self.action_spaces[seat], rng, (*game, seat))

    # -- the learner's template (teammates play it; a learner seat has none) --------------------
    @property
    def wants_template(self) -> bool:
        """Whether teammates wait for the learner's policy (see ``set_learner_template``)."""
        return False

    def set_template(self, policy: Any) -> None:
        """Let teammates play a frozen copy of ``policy`` (a learner seat has none)."""

    # -- outcomes --------------------------------------------------------------------------------
    def info(self, seat: str) -> dict[str, Any]:
        """The learner's ``info`` at every step (with the learner in ``seat``)."""
        return {"seat": seat}

    def summary(
        self, seat: str, returns: Mapping[str, float], policies: Any, outcome_fn: Any, illegal: Any
    ) -> dict[str, Any]:
        """``info["selfplay"]`` at the end of the learner's episode in ``seat`` against the
        seats' ``policies``, scored by ``outcome_fn`` (``illegal``: the illegal action that ended
        it, if any); the env adds ``length``, its configuration and symmetry."""
        opponents = {agent: p.policy_id for agent, p in policies.items()}
        summary = {
            "opponent": next(iter(opponents.values())),
            "opponents": opponents,
            "outcome": episode_outcome(returns, seat, outcome_fn, illegal),
            "seat": seat,
            "return": returns.get(seat, 0.0),
            "returns": dict(returns),
            "seat_outcomes": seat_outcomes(returns, seat, opponents, outcome_fn, illegal),
        }
        if illegal is not None:
            summary["illegal_action"] = illegal
        return summary

    # -- the vector env's slots: one per game copy -----------------------------------------------
    def slot_agents(self, seat: str) -> tuple[str, ...]:
        """The agents the learner plays in one copy of the game, one slot each."""
        return (seat,)

    def game_learner(self, seat: str) -> Any:
        """Who the game's driver seats as the learner."""
        return seat

    def game_action(self, action: Any) -> Any:
        """The learner's action as the game's driver takes it."""
        return action

    def slot_infos(self, seat: str) -> list[dict[str, Any]]:
        """The ``info`` of each of a copy's slots (``reset_infos`` too)."""
        return [{"seat": seat}]

    def copy_masks(self, status: Any, view: Any) -> np.ndarray:
        """A copy's legal learner actions (in its episode's view)."""
        mask = None if status is None else status.mask
        if mask is None:
            raise TypeError("action_masks() needs a Discrete action space (and a reset env).")
        return view.mask(mask)

    def copy_actions(self, actions: list, copies: Sequence[Any], start: int | None) -> list:
        """The game-side action of each copy from the slots' checked ``actions`` (mapped from
        the copy's view), each checked against its mask when ``start`` (the action space's first
        action) is given: ``illegal_action="raise"``."""
        if copies and copies[0].view.symmetries is not None:  # the learner acts in its view
            pairs = zip(copies, actions, strict=True)
            actions = [copy.view.action_to_game(a) for copy, a in pairs]
        if start is not None:  # ("loss" is applied by each game's SeatDriver)
            for copy, a in zip(copies, actions, strict=True):
                check_learner_action(a, copy.status.mask, copy.learner, start)
        return actions

    def observations(self, copies: Sequence[Any]) -> list[Any]:
        """Every slot's observation, in slot order."""
        return [copy.view.observation(copy.status.observation) for copy in copies]

    def ongoing(self, copy: Any) -> list[tuple[float, dict[str, Any]]]:
        """``(reward, info)`` of each of a copy's slots when its episode goes on."""
        info = {"seat": copy.learner, "TimeLimit.truncated": False}
        return [(copy.config.transform(copy.status.reward, info), info)]

    def finished(
        self, copy: Any, status: Any, summary: dict[str, Any], space: spaces.Space
    ) -> list[tuple[float, dict[str, Any]]]:
        """``(reward, info)`` of each of a copy's slots at its episode's end."""
        obs = status.observation
        if obs is None:
            obs = zero_observation(space)
        info: dict[str, Any] = {"seat": copy.learner, "selfplay": summary}
        info["TimeLimit.truncated"] = status.truncated and not status.terminated
        info["terminal_observation"] = copy.view.observation(obs)  # the ending episode's view
        return [(copy.config.transform(status.reward, info), info)]

    def answer(self, turns: list[tuple[Any, Any]], batches: Any) -> list[Any]:
        """The opponents' answer to each of ``turns`` (``(copy, status)`` each), one batch per
        policy: see :class:`~sp_wrappers.envs.vector.batching.OpponentBatches`."""
        rows = [copy.opponent_row(s.seat, s.observation, s.mask) for copy, s in turns]
        return batches.answer(rows)

    def describe(self, learner_mode: str) -> list[str]:
        """The seating's part of the vector env's ``repr``."""
        return [f"learner={learner_mode!r}"]
