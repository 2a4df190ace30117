"""How the vector env answers its opponents: one batched forward pass per policy.

At each inner step the vector env hands :class:`OpponentBatches` every opponent turn of every game
copy as an :class:`OpponentRow` (the policy, the seat, its observation and mask, the copy's
generator). The rows are grouped by the policy that plays them and the seat's spaces; each group
is answered by one call (the numpy fast path of :mod:`sp_wrappers.envs.vector.fast_path` for
small SB3 policies, whose groups are then sampled or squashed together; else ``Policy.act``), and
the actions are checked against the seats' spaces and masks. The batches know the game's seats,
not the env or its copies.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces

from ...core.policies import (
    act_in_games,
    check_opponent_action,
    stack_observations,
)
from ...core.seats import seat_spaces
from .fast_path import UNKNOWN, FastSB3, NumpyPlan, RowGenerators, batch_key

__all__ = ["OpponentBatches", "OpponentRow"]


class OpponentRow(NamedTuple):
    """One opponent turn to answer: who plays it, in which seat, on what."""

    #: the opponent's policy
    policy: Any
    #: the opponent seat that must act
    seat: str
    #: the seat's observation
    observation: Any
    #: the seat's legal actions (``None``: unknown)
    mask: np.ndarray | None
    #: the env copy's generator (the row's random draws come from it)
    rng: np.random.Generator
    #: a recurrent opponent's state key: ``(copy, game, seat)``
    key: tuple


class OpponentBatches:
    """Answers the opponent turns of one vector step in batches (see the module docstring).

    :param spec: the game (its ``possible_agents``, ``observation_space(agent)`` and
        ``action_space(agent)``), or a stand-in with them.
    :param keep_dict_obs: whether the seats see PettingZoo's ``{"observation", "action_mask"}``.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers.core.policies import RandomPolicy
    >>> game = tictactoe_v3.env()
    >>> game.reset(seed=0)
    >>> batches = OpponentBatches(game, keep_dict_obs=False)
    >>> seen = game.observe("player_1")
    >>> mask = seen["action_mask"].astype(bool)
    >>> mask[:8] = False  # only the last cell is free
    >>> policy = RandomPolicy(game.action_space("player_1"))
    >>> rows = [OpponentRow(policy, "player_1", seen["observation"], mask,
    ...                     np.random.default_rng(i), (i, 1, "player_1")) for i in range(3)]
    >>> batches.answer(rows)  # one act() call for the three rows
    [8, 8, 8]
    """

    def __init__(self, spec: Any, keep_dict_obs: bool) -> None:
        agents = list(spec.possible_agents)
        #: each seat's action space
        self.action_spaces = {a: spec.action_space(a) for a in agents}
        #: each seat's (observation, action) spaces, as an opponent policy sees them
        self.seat_spaces = {a: seat_spaces(spec, a, keep_dict_obs) for a in agents}
        #: seats whose actions are plain integers ``0..n-1``, checked in one go
        self.plain_discrete_seats = {
            seat
            for seat, space in self.action_spaces.items()
            if type(space) is spaces.Discrete and space.start == 0
        }
        kinds: list[tuple[spaces.Space, spaces.Space]] = []
        self.seat_kind: dict[str, int] = {}  # seats with equal spaces may share a batch
        for agent, pair in self.seat_spaces.items():
            if pair not in kinds:
                kinds.append(pair)
            self.seat_kind[agent] = kinds.index(pair)
        #: the numpy fast path (its checks are cached per kind of network)
        self.fast = FastSB3()

    def answer(self, rows: list[OpponentRow]) -> list[Any]:
        """One action per row (in the rows' order): one ``act`` call per group of (policy, seat
        spaces, masked or not); groups on the numpy fast path are answered together (the layers
        group by group, sampling or squashing once)."""
        groups: dict[tuple, list[int]] = {}
        keys: dict[int, tuple] = {}  # id(policy) -> its batch key, once per policy in the step
        seat_kind = self.seat_kind
        for i, row in enumerate(rows):
            policy = row.policy
            policy_key = keys.get(id(policy))
            if policy_key is None:
                policy_key = keys[id(policy)] = batch_key(policy)
            key = (policy_key, seat_kind[row.seat], row.mask is None)
            groups.setdefault(key, []).append(i)
        actions: list[Any] = [None] * len(rows)
        merged: dict[tuple, list[tuple]] = {}  # numpy-plan groups: answered at once
        for members in groups.values():
            group = [rows[i] for i in members]
            first = group[0]
            policy = first.policy
            generators = [row.rng for row in group]
            masks = None
            if getattr(policy, "batched", True) is False:  # e.g. an unbatched CallablePolicy
                answers: Any = [
                    act_in_games(
                        policy,
                        stack_observations([row.observation]),
                        None if row.mask is None else row.mask[None],
                        row.rng,
                        [row.key],
                    )[0]
                    for row in group
                ]
            else:
                obs = None  # stacked where needed: the numpy groups' rows are stacked at once
                route = UNKNOWN
                if type(first.observation) is np.ndarray:
                    route = self.fast.known_route(policy)
                if route is UNKNOWN:
                    obs, masks = self._stacked(group)
                    route = self.fast.route(policy, obs, masks)
                if isinstance(route, NumpyPlan):  # answered with the other numpy groups
                    kind = self.seat_kind[first.seat]  # one observation shape per merged set
                    key = (route.n_outputs, route.scoring, route.space, kind)
                    merged.setdefault(key, []).append((route, policy, generators, members))
                    continue
                if obs is None:
                    obs, masks = self._stacked(group)
                rng = generators[0] if len(group) == 1 else RowGenerators(generators)
                if route == "torch":
                    answers = self.fast.act_with_plan(policy, obs, masks, rng, None)
                else:
                    answers = act_in_games(policy, obs, masks, rng, [row.key for row in group])
                if len(answers) != len(group):
                    raise ValueError(
                        f"Opponent {policy.policy_id!r} returned {len(answers)} actions for "
                        f"{len(group)} observations; act() must return one action per row."
                    )
            if not self._all_legal(group, answers, masks):
                answers = self._checked(group, answers)
            self._place_answers(actions, members, answers)
        for (_, scoring, _, _), groups_of_key in merged.items():
            self._answer_merged(rows, actions, scoring, groups_of_key)
        return actions

    @staticmethod
    def _stacked(group: list[OpponentRow]) -> tuple[Any, np.ndarray | None]:
        """A group's observations and masks, stacked."""
        obs = stack_observations([row.observation for row in group])
        if group[0].mask is None:
            return obs, None
        return obs, stack_observations([row.mask for row in group])

    def _answer_merged(
        self, rows: list[OpponentRow], actions: list[Any], scoring: str, groups: list[tuple]
    ) -> None:
        """The numpy groups of one scoring, size, action space and seat kind (``(plan, policy,
        generators, members)`` each): their rows' observations and masks stacked once, each
        group's layers on its slice, then one sampling (or squashing) pass for all of them."""
        members = [i for group in groups for i in group[3]]
        obs = stack_observations([rows[i].observation for i in members])
        obs = np.asarray(obs, dtype=np.float32).reshape(len(members), -1)  # once, not per group
        masks = None
        masked = [rows[group[3][0]].mask is not None for group in groups]
        if all(masked):
            masks = stack_observations([rows[i].mask for i in members])
        elif any(masked):
            legal = np.ones(groups[0][0].n_outputs, dtype=bool)  # the rows of unmasked groups
            masks = stack_observations(
                [legal if rows[i].mask is None else rows[i].mask for i in members]
            )
        parts, start = [], 0
        for plan, policy, generators, group_members in groups:
            stop = start + len(group_members)
            part_masks = None if masks is None else masks[start:stop]
            part = (plan, obs[start:stop], part_masks, policy.deterministic, generators)
            parts.append((*part, group_members, policy))
            start = stop
        if scoring == "gaussian":  # Box actions: each checked against its seat's space
            box = self.fast.squash_merged(parts)
            answers = self._checked([rows[i] for i in members], box)
        else:
            answers = self.fast.sample_merged(parts, scoring, masks).tolist()
            if not all(rows[i].seat in self.plain_discrete_seats for i in members):
                answers = self._checked([rows[i] for i in members], answers)
        self._place_answers(actions, members, answers)

    def _all_legal(self, group: list[OpponentRow], actions: Any, masks: np.ndarray | None) -> bool:
        """Whether ``actions`` (one group: one seat kind, all masked or none) are legal moves of
        a plain ``Discrete(n)`` seat, checked in one go; then each becomes a plain ``int``.
        Anything else goes through :meth:`_checked`, which also names what is wrong."""
        seat = group[0].seat
        if seat not in self.plain_discrete_seats or not isinstance(actions, np.ndarray):
            return False
        if actions.shape != (len(group),) or actions.dtype.kind not in "iu":
            return False
        n = self.action_spaces[seat].n
        if not (actions.astype(np.uint64, copy=False) < n).all():  # negatives wrap to huge
            return False
        return masks is None or bool(masks[np.arange(len(actions)), actions].all())

    def _checked(self, group: list[OpponentRow], actions: Any) -> list[Any]:
        """Each action checked against its seat's space and mask (the error names the opponent,
        the seat and the action), in the form the game expects."""
        return [
            check_opponent_action(
                row.policy, action, self.action_spaces[row.seat], row.mask, row.seat
            )
            for row, action in zip(group, actions, strict=True)
        ]

    @staticmethod
    def _place_answers(actions: list[Any], members: list[int], answers: Any) -> None:
        """Put a group's answers in the rows' places (numpy integers as plain ``int``)."""
        if isinstance(answers, np.ndarray):
            answers = answers.tolist()  # plain ints, as check_opponent_action returns them
        for i, action in zip(members, answers, strict=True):
            actions[i] = action
