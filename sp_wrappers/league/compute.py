"""A league's compute shares: how its learner steps are split among its players.

A share is the fraction of the league's learner steps a player learns. The runner plans every
round so that after it each player's total steps are its share of the league's total
(``round(share * total) - steps``, never negative): SB3 learns whole rollouts, so a player that
learned a rollout more than planned learns that much less later, and the shares hold over the
run rather than per round. They are kept in ``league.json`` and checked on resume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .builders import PlayerSpec

__all__ = [
    "league_compute_shares",
    "check_compute_shares",
    "equal_compute_shares",
    "chunk_steps_by_share",
    "same_shares",
    "shares_changed",
]


def equal_compute_shares(players: Sequence[PlayerSpec]) -> dict[str, float]:
    """Every player the same share of the league's learner steps (a builder without
    ``compute_shares``).

    >>> equal_compute_shares([PlayerSpec("a", "x"), PlayerSpec("b", "y")])
    {'a': 0.5, 'b': 0.5}
    """
    return {p.name: 1.0 / len(players) for p in players}


def check_compute_shares(
    shares: Mapping[str, float], players: Sequence[PlayerSpec], builder: str = "the builder"
) -> dict[str, float]:
    """``shares`` checked: one positive share per player, summing to 1 (to within 1e-6).

    >>> check_compute_shares({"a": 0.75, "b": 0.25}, [PlayerSpec("a", "x"), PlayerSpec("b", "y")])
    {'a': 0.75, 'b': 0.25}
    >>> check_compute_shares({"a": 1.0}, [PlayerSpec("a", "x"), PlayerSpec("b", "y")])
    Traceback (most recent call last):
    ...
    ValueError: the builder's compute_shares() gives {'a': 1.0}: it needs one share > 0 ...
    """
    names = [p.name for p in players]
    values = {str(k): float(v) for k, v in shares.items()}
    missing = sorted(set(names) - set(values))
    unknown = sorted(set(values) - set(names))
    total = sum(values.values())
    if missing or unknown or abs(total - 1.0) > 1e-6 or min(values.values(), default=0) <= 0:
        raise ValueError(
            f"{builder}'s compute_shares() gives {values}: it needs one share > 0 per player "
            f"({names}), summing to 1; missing {missing}, unknown {unknown}."
        )
    return {name: values[name] for name in names}


def league_compute_shares(builder: Any, players: Sequence[PlayerSpec]) -> dict[str, float]:
    """The builder's ``compute_shares()`` checked, or equal shares when it has none."""
    compute = getattr(builder, "compute_shares", None)
    if compute is None:
        return equal_compute_shares(players)
    return check_compute_shares(compute(), players, type(builder).__name__)


def chunk_steps_by_share(
    shares: Mapping[str, float], steps: Mapping[str, int], round_steps: int
) -> dict[str, int]:
    """Each player's learner steps for the next round: what brings it to its share of the
    league's total after the round (``sum(steps) + round_steps``), never negative.

    >>> chunk_steps_by_share({"main": 0.5, "exploiter": 0.5}, {"main": 0, "exploiter": 0}, 128)
    {'main': 64, 'exploiter': 64}
    >>> chunk_steps_by_share({"main": 0.5, "exploiter": 0.5}, {"main": 96, "exploiter": 64}, 128)
    {'main': 48, 'exploiter': 80}
    """
    total = sum(int(s) for s in steps.values()) + int(round_steps)
    return {name: max(0, round(share * total) - int(steps[name])) for name, share in shares.items()}


def same_shares(saved: Mapping[str, float] | None, shares: Mapping[str, float]) -> bool:
    """Whether a resumed league's builder gives the shares its ``league.json`` holds (a file
    written before shares were kept, ``None``, accepts any)."""
    if saved is None:
        return True
    return set(saved) == set(shares) and all(
        abs(float(saved[name]) - share) <= 1e-9 for name, share in shares.items()
    )


def shares_changed(root: Any, saved: Mapping[str, float], shares: Mapping[str, float]) -> str:
    """The error message of a resume whose builder changed the compute shares."""
    return (
        f"{root} holds a league with the compute shares {dict(saved)}, but the builder gives "
        f"{dict(shares)}. Resume with the same builder settings (e.g. main_agents_compute, "
        "role_compute) or use a new directory."
    )
