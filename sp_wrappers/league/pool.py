"""The league's players and frozen pool: can the players face each other, and which frozen
players stay in matchmaking when the pool grows too large.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .builders import FrozenPlayer
from .worker import LeagueSetupError

__all__ = ["check_players_fit", "prune_frozen"]


def check_players_fit(specs: Mapping[str, Mapping[str, Any]]) -> None:
    """All players must be able to face each other: the same spaces.

    :param specs: ``{player: policy spec}`` (as the archive stores them).
    :raises LeagueSetupError: naming the first player whose spaces differ.
    """
    from ..archive.spaces import space_from_json

    first = next(iter(specs))
    reference = specs[first]
    for name, spec in specs.items():
        same = all(
            space_from_json(spec[k]) == space_from_json(reference[k])
            for k in ("observation_space", "action_space")
        )
        if not same:
            raise LeagueSetupError(
                f"Player {name}'s model has other spaces than {first}'s; every make_model "
                "must build its model on the env it receives."
            )


def prune_frozen(frozen: list[FrozenPlayer], max_frozen: int | None) -> list[str]:
    """Drop frozen players beyond ``max_frozen`` from ``frozen`` (in place), keeping each player's
    first and newest snapshot and a spread over time and over players; returns the dropped ids.

    :param frozen: the pool, oldest first (changed in place).
    :param max_frozen: at most this many stay; ``None`` keeps all.

    >>> pool = [FrozenPlayer(f"s{i}", "main", "main_agent", 100 * i) for i in range(4)]
    >>> prune_frozen(pool, 3), [f.id for f in pool]
    (['s1'], ['s0', 's2', 's3'])
    """
    dropped: list[str] = []
    while max_frozen is not None and len(frozen) > max_frozen:
        groups: dict[str, list[FrozenPlayer]] = {}
        for f in frozen:
            groups.setdefault(f.player, []).append(f)
        best: tuple[Any, ...] | None = None
        for group in groups.values():
            for i in range(1, len(group) - 1):  # never a player's first or newest
                gap = group[i + 1].step - group[i - 1].step
                key = (-len(group), gap, group[i].step)
                if best is None or key < best[0]:
                    best = (key, group[i])
        if best is None:  # at most two per player: the oldest one that has a newer sibling
            candidates = [g[0] for g in groups.values() if len(g) > 1] or list(frozen)
            victim = min(candidates, key=lambda f: f.step)
        else:
            victim = best[1]
        frozen.remove(victim)
        dropped.append(victim.id)
    return dropped
