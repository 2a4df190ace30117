"""How a vector env answers its opponents: one batched forward pass per policy.

This module holds :class:`OpponentBatches`, the base of
:class:`~sp_wrappers.envs.vector.vec_env.SelfPlayVecEnv` that, at each vector step, groups the
opponent turns of every game copy by the policy that plays them, asks each policy once for the
whole group (the numpy fast path for small SB3 policies, else ``Policy.act``), checks the actions
against the seats' spaces and masks, and turns them into the games' play operations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.policies import (
    act_in_games,
    check_opponent_action,
    stack_observations,
)
from .env_copy import _EnvCopy
from .fast_path import _batch_key, _RowGenerators, _scoring
from .game_workers import _PLAY, _Status

__all__ = ["OpponentBatches"]


class OpponentBatches:
    """The part of :class:`SelfPlayVecEnv` described in the module docstring."""

    def _answer(self, turns: list[tuple[_EnvCopy, _Status]]) -> list[tuple]:
        """One ``act`` call per group of (policy, seat spaces, masked or not)."""
        groups: dict[tuple, list[tuple[_EnvCopy, _Status]]] = {}
        for copy, status in turns:
            policy = copy.seat_policies[status.seat]
            key = (_batch_key(policy), self._seat_kind[status.seat], status.mask is None)
            groups.setdefault(key, []).append((copy, status))
        items: list[tuple] = []
        merged: dict[tuple[int, str], list[tuple]] = {}  # numpy-plan groups, sampled together
        for members in groups.values():
            first_copy, first = members[0]
            policy = first_copy.seat_policies[first.seat]
            generators = [copy.np_random for copy, _ in members]
            masks = None
            if getattr(policy, "batched", True) is False:  # e.g. an unbatched CallablePolicy
                actions = [
                    act_in_games(
                        policy,
                        stack_observations([s.observation]),
                        None if s.mask is None else s.mask[None],
                        g,
                        [(id(c), c.games_started, s.seat)],
                    )[0]
                    for (c, s), g in zip(members, generators, strict=True)
                ]
            else:
                obs = stack_observations([s.observation for _, s in members])
                masks = None if first.mask is None else np.stack([s.mask for _, s in members])
                route = self._fast.route(policy, obs, masks)
                if isinstance(route, list):
                    n_actions = route[-1][2].shape[0]  # the plan ends in action_net's bias
                    key = (n_actions, _scoring(policy.policy))
                    part = (route, obs, masks, policy.deterministic, generators, members)
                    merged.setdefault(key, []).append(part)
                    continue
                rng = generators[0] if len(members) == 1 else _RowGenerators(generators)
                if route == "torch":
                    actions = self._fast._act(policy, obs, masks, rng, None)
                else:
                    keys = [(id(c), c.games_started, s.seat) for c, s in members]
                    actions = act_in_games(policy, obs, masks, rng, keys)
                if len(actions) != len(members):
                    raise ValueError(
                        f"Opponent {policy.policy_id!r} returned {len(actions)} actions for "
                        f"{len(members)} observations; act() must return one action per row."
                    )
            if not self._all_legal(members, actions, masks):
                actions = self._checked(members, actions)
            items.extend(self._play_items(members, actions))
        for (_, scoring), parts in merged.items():
            actions = self._fast.sample_merged(parts, scoring).tolist()
            members = [member for part in parts for member in part[5]]
            if not all(s.seat in self._plain_discrete_seats for _, s in members):
                actions = self._checked(members, actions)
            items.extend(self._play_items(members, actions))
        return items

    def _all_legal(
        self, members: list[tuple[_EnvCopy, _Status]], actions: Any, masks: np.ndarray | None
    ) -> bool:
        """Whether ``actions`` (one group: one seat kind, all masked or none) are legal moves of
        a plain ``Discrete(n)`` seat, checked in one go; then each becomes a plain ``int``.
        Anything else goes through :meth:`_checked`, which also names what is wrong."""
        seat = members[0][1].seat
        if seat not in self._plain_discrete_seats or not isinstance(actions, np.ndarray):
            return False
        if actions.shape != (len(members),) or actions.dtype.kind not in "iu":
            return False
        n = self._action_spaces[seat].n
        if not (actions.astype(np.uint64, copy=False) < n).all():  # negatives wrap to huge
            return False
        return masks is None or bool(masks[np.arange(len(actions)), actions].all())

    def _checked(self, members: list[tuple[_EnvCopy, _Status]], actions: Any) -> list[Any]:
        """Each action checked against its seat's space and mask (the error names the opponent,
        the seat and the action), in the form the game expects."""
        return [
            check_opponent_action(
                copy.seat_policies[status.seat],
                action,
                self._action_spaces[status.seat],
                status.mask,
                status.seat,
            )
            for (copy, status), action in zip(members, actions, strict=True)
        ]

    def _play_items(self, members: list[tuple[_EnvCopy, _Status]], actions: Any) -> list[tuple]:
        """The game items that play ``actions`` (checked ones: see :meth:`_answer`)."""
        if isinstance(actions, np.ndarray):
            actions = actions.tolist()  # plain ints, as check_opponent_action returns them
        return [
            (_PLAY, copy.index, action, copy.phase == _PLAY)
            for (copy, _), action in zip(members, actions, strict=True)
        ]
