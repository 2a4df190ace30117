"""Which policy sits in each opponent seat, and when it changes.

What a user passes as ``opponent`` (one policy, a callable returning a policy, or a sampler with
``draw(rng)``) becomes one uniform source. Each env copy keeps the current policy of each opponent
slot and the swap schedule (``swap_every`` in learner steps or episodes, counted per env copy). A
draw only takes effect at an episode start, so every episode faces one opponent line-up and its
``info["selfplay"]`` names it; a line-up is fitted to its seats (a ``RandomPolicy()`` without an
action space plays in its seat's). Env copies may share one set of slots (``SelfPlayVecEnv``'s
``opponent_draw="shared"``): they then face one line-up between swaps.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..archive.spaces import spaces_match
from ..core.policies import Policy, is_policy

__all__ = [
    "as_opponent_source",
    "OpponentSlots",
    "SWAP_UNITS",
    "OPPONENT_DRAWS",
    "check_policy_fits",
    "shared_slots",
]

SWAP_UNITS = ("episodes", "steps")
OPPONENT_DRAWS = ("per_env", "shared")


class _FixedSource:
    """Always the same policy."""

    swap_every = 1
    swap_unit = "episodes"

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def draw(self, rng: np.random.Generator) -> Policy:
        return self.policy


class _CallableSource:
    """A user callable, called once per episode (with the env's generator if it takes one)."""

    swap_every = 1
    swap_unit = "episodes"

    def __init__(self, fn: Callable[..., Policy]) -> None:
        self.fn = fn
        try:
            self._takes_rng = len(inspect.signature(fn).parameters) >= 1
        except (TypeError, ValueError):
            self._takes_rng = False

    def draw(self, rng: np.random.Generator) -> Policy:
        policy = self.fn(rng) if self._takes_rng else self.fn()
        if not is_policy(policy):
            raise TypeError(
                f"The opponent callable {self.fn!r} returned {type(policy).__name__}, not a "
                "policy. It must return an object with act(observations, action_masks, rng) "
                "and policy_id, such as RandomPolicy() or SB3Policy(model)."
            )
        return policy


def as_opponent_source(opponent: Any) -> Any:
    """Normalise ``opponent`` to an object with ``draw(rng)``, ``swap_every`` and ``swap_unit``."""
    if is_policy(opponent):
        return _FixedSource(opponent)
    if callable(getattr(opponent, "draw", None)):
        unit = getattr(opponent, "swap_unit", "episodes")
        if unit not in SWAP_UNITS:
            raise ValueError(f"swap_unit must be one of {SWAP_UNITS}, got {unit!r}.")
        return opponent
    if callable(opponent):
        return _CallableSource(opponent)
    raise TypeError(
        f"opponent must be a policy (RandomPolicy, CallablePolicy, SB3Policy, ...), a callable "
        f"returning one per episode, or an OpponentSampler; got {type(opponent).__name__}."
    )


def check_policy_fits(policy: Policy, seat: str, observation_space: Any, action_space: Any) -> None:
    """Raise a ``ValueError`` naming the opponent and the fix when a policy that declares its
    spaces (an ``SB3Policy``, a snapshot) was built for spaces other than its seat's."""
    policy_obs = getattr(policy, "observation_space", None)
    policy_act = getattr(policy, "action_space", None)
    if policy_obs is None or policy_act is None:
        return
    if spaces_match(policy_obs, observation_space) and spaces_match(policy_act, action_space):
        return
    network = getattr(policy, "policy", None)
    if network is not None and hasattr(network, "action_space"):
        from ..core.policy_families import check_family_plays

        check_family_plays(network, action_space, seat)  # names the family and what to use
    raise ValueError(
        f"Opponent {policy.policy_id!r} in seat {seat!r} was built for observation space "
        f"{policy_obs} and action space {policy_act}, but that seat has {observation_space} and "
        f"{action_space}. A snapshot archive holds one game and wrapper stack: use a new archive "
        "directory for this env (or the same wrappers as when the snapshots were saved)."
    )


class OpponentSlots:
    """The current opponent of each slot of one env copy, redrawn on the source's schedule.

    Slots are the opponent seats in game order; when the learner changes seat, each slot keeps its
    policy until the schedule says to draw again.

    :param source: the output of :func:`as_opponent_source`.
    A draw only happens at an episode start, so with ``swap_unit="steps"`` each line-up plays at
    least ``swap_every`` steps, usually a little more. A source with ``exact_swap_rate = True``
    (:class:`~sp_wrappers.TeamSampler`-style sources, where every team must see the same number
    of swaps) has the steps an episode ran past a due swap counted towards the next one (at most
    ``swap_every - 1``), so that over a run the number of draws is the steps over ``swap_every``
    whatever the episode lengths.

    :param shared_by: how many env copies share these slots (one line-up for all of them). Their
        episodes and learner steps are counted together, and a new line-up is drawn after
        ``shared_by * swap_every`` of them: each line-up gets as much play as it would in one
        copy alone. It is drawn at the first episode start once due, with that copy's generator;
        every copy takes it up at its own next episode start.
    """

    def __init__(self, source: Any, shared_by: int = 1) -> None:
        self.source = source
        self.shared_by = max(int(shared_by), 1)
        self.policies: list[Policy] = []
        self._steps_since_draw = 0
        self._episodes_since_draw = 0
        # policy -> seats it was checked for; weak, so policies dropped by the archive's bounded
        # cache are not kept alive here (memory stays flat as the archive grows)
        self._checked: weakref.WeakKeyDictionary[Policy, set[str]] = weakref.WeakKeyDictionary()

    def start_episode(self, n_slots: int, rng: np.random.Generator) -> list[Policy]:
        """Return the line-up for a new episode, drawing new opponents when due."""
        every = max(int(getattr(self.source, "swap_every", 1)), 1) * self.shared_by
        unit = getattr(self.source, "swap_unit", "episodes")
        since = self._episodes_since_draw if unit == "episodes" else self._steps_since_draw
        if len(self.policies) != n_slots or since >= every:
            carry = 0
            if self.policies and unit == "steps" and getattr(self.source, "exact_swap_rate", False):
                carry = min(since - every, every - 1)  # the steps the last episode ran over
            self.policies = [self.source.draw(rng) for _ in range(n_slots)]
            self._steps_since_draw = carry
            self._episodes_since_draw = 0
        self._episodes_since_draw += 1
        return self.policies

    def bind_lineup(
        self, lineup: dict[str, Policy], spaces_of: Callable[[str], tuple[Any, Any]]
    ) -> dict[str, Policy]:
        """The line-up with each policy fitted to its seat: a policy with ``in_space`` (a
        ``RandomPolicy()`` built without an action space) gets its seat's action space, and each
        policy that declares its spaces is checked against its seat's (once per policy and seat).
        """
        bound = {}
        for seat, policy in lineup.items():
            in_space = getattr(policy, "in_space", None)
            if in_space is not None:
                policy = in_space(spaces_of(seat)[1])
            try:
                seats = self._checked.setdefault(policy, set())
            except TypeError:  # not weak-referenceable or not hashable: check it every time
                seats = set()
            if seat not in seats:
                check_policy_fits(policy, seat, *spaces_of(seat))
                seats.add(seat)
            bound[seat] = policy
        return bound

    def count_step(self) -> None:
        """Count one learner step towards a step-based swap."""
        self._steps_since_draw += 1


def _source_key(source: Any) -> int:
    """One key for sources that draw the same opponents: one policy or one callable given to
    several copies (each copy wraps it anew) is one source."""
    if isinstance(source, _FixedSource):
        return id(source.policy)
    if isinstance(source, _CallableSource):
        return id(source.fn)
    return id(source)


def shared_slots(sources: list[Any], current: list[OpponentSlots]) -> list[OpponentSlots]:
    """The slots of each env copy when copies share draws (``opponent_draw="shared"``): one
    :class:`OpponentSlots` per group of copies drawing from one source. A group whose copies and
    source have not changed keeps its slots (its line-up and its place in the swap schedule).

    :param sources: each copy's opponent source (:func:`as_opponent_source`'s output).
    :param current: each copy's slots now.

    >>> from sp_wrappers.core.policies import RandomPolicy
    >>> source = as_opponent_source(RandomPolicy())
    >>> slots = shared_slots([source] * 3, [OpponentSlots(source) for _ in range(3)])
    >>> slots[0] is slots[1] is slots[2], slots[0].shared_by
    (True, 3)
    >>> shared_slots([source] * 3, slots)[0] is slots[0]
    True
    """
    groups: dict[int, list[int]] = {}
    for index, source in enumerate(sources):
        groups.setdefault(_source_key(source), []).append(index)
    out: list[OpponentSlots] = list(current)
    for key, members in groups.items():
        slots = current[members[0]]
        unchanged = (
            all(current[i] is slots for i in members)
            and slots.shared_by == len(members)
            and _source_key(slots.source) == key
        )
        if not unchanged:
            slots = OpponentSlots(sources[members[0]], shared_by=len(members))
        for i in members:
            out[i] = slots
    return out
