"""A league's compute shares: how its learner steps are split among its players.

A share is the fraction of the league's learner steps a player learns. The runner plans every
round so that after it each player's total steps are its share of the league's total
(``round(share * total) - steps``, never negative): SB3 learns whole rollouts, so a player that
learned a rollout more than planned learns that much less later, and the shares hold over the
run rather than per round. They are kept in ``league.json`` and checked on resume.

A round's size fits the players' rollouts (:class:`ChunkFit`): an on-policy learner (PPO, A2C,
``MaskablePPO``) learns whole rollouts of ``n_steps x n_envs`` steps, so the league rounds its
``chunk_steps`` to the nearest round in which every player's share is a whole number of its
rollouts, and the run's budget up to whole such steps; the shares then hold in every round and
the progress counts reach the budget exactly.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .builders import PlayerSpec

__all__ = [
    "league_compute_shares",
    "check_compute_shares",
    "equal_compute_shares",
    "chunk_steps_by_share",
    "ChunkFit",
    "LeagueChunksWarning",
    "OnChunks",
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


#: A round this many times longer than what was asked (or than every player's rollout once) is
#: too long to keep the shares exact in every round; the chunks are then rounded round by round.
_LONGEST_ROUND = 4


def _nearest_multiple(steps: float, unit: int) -> int:
    """The multiple of ``unit`` nearest to ``steps`` (the larger on ties), never negative."""
    return max(0, math.floor(steps / unit + 0.5)) * unit


class LeagueChunksWarning(UserWarning):
    """A league rounded its chunks or its budget to whole rollouts (the message is a
    :class:`ChunkFit`)."""


@dataclass(frozen=True)
class ChunkFit:
    """How a league's rounds fit its players' rollouts, for one run to ``budget``.

    An on-policy learner learns whole rollouts (``n_steps x n_envs`` steps): asked for fewer, it
    learns a whole one anyway. So the round (``chunk_steps x players`` steps asked, split by the
    compute shares) becomes the nearest multiple of :attr:`unit`, the shortest round in which
    every player's share is a whole number of its rollouts, and the run goes to the first such
    multiple at or past ``budget`` (:attr:`target`; its last round is cut to fit). Where that
    unit would be far longer than what was asked (shares such as 0.77), :attr:`unit` is ``None``
    and every round's chunks are rounded to whole rollouts instead: the steps follow the shares
    over the run, not in every round.

    :param chunk_steps: the chunk asked, per player and round on average.
    :param shares: the compute shares.
    :param rollouts: each player's rollout in learner steps (1: a learner with none to finish).
    :param budget: the run's learner steps, all players together.
    :param done: the league's learner steps when the run starts.

    >>> fit = ChunkFit(1024, {"main": 0.5, "exploiter": 0.25, "league": 0.25},
    ...                dict.fromkeys(["main", "exploiter", "league"], 2048), budget=6144)
    >>> fit.unit, fit.round_steps, fit.chunks, fit.target
    (8192, 8192, {'main': 4096, 'exploiter': 2048, 'league': 2048}, 8192)
    >>> print(fit)  # doctest: +NORMALIZE_WHITESPACE
    chunk_steps=1024 rounded to whole rollouts of 2,048 steps (n_steps x n_envs) in the compute
    shares: 8,192 steps a round (main 4,096, exploiter 2,048, league 2,048);
    total_timesteps=6144 runs to 8,192.
    >>> ChunkFit(64, {"a": 0.5, "b": 0.5}, {"a": 64, "b": 64}, budget=256).rounded
    False
    """

    chunk_steps: int
    shares: Mapping[str, float]
    rollouts: Mapping[str, int] = field(default_factory=dict)
    budget: int = 0
    done: int = 0

    def _rollout(self, name: str) -> int:
        return max(1, int(self.rollouts.get(name, 1)))

    @property
    def asked(self) -> int:
        """The round asked: ``chunk_steps x players``."""
        return int(self.chunk_steps) * len(self.shares)

    @property
    def unit(self) -> int | None:
        """The shortest round in which every player's share is a whole number of its rollouts
        (``None`` when it is too long; 1 when no player has a rollout to finish)."""
        unit = 1
        for name, share in self.shares.items():
            rollout = self._rollout(name)
            if rollout == 1:
                continue
            fraction = Fraction(share).limit_denominator(10_000)
            whole = fraction.denominator * rollout
            unit = math.lcm(unit, whole // math.gcd(whole, fraction.numerator))
        longest = _LONGEST_ROUND * max(self.asked, sum(map(self._rollout, self.shares)))
        return unit if unit <= longest else None

    @property
    def round_steps(self) -> int:
        """A whole round's learner steps, all players together."""
        unit = self.unit
        if unit is None:
            return self.asked
        return max(1, math.floor(self.asked / unit + 0.5)) * unit

    @property
    def chunks(self) -> dict[str, int]:
        """Each player's steps in a whole round (round by round when :attr:`unit` is ``None``)."""
        return {
            name: _nearest_multiple(share * self.round_steps, self._rollout(name))
            for name, share in self.shares.items()
        }

    @property
    def target(self) -> int:
        """The league's learner steps at the end of the run: ``budget`` rounded up to whole
        units (``budget`` itself when :attr:`unit` is ``None``)."""
        unit = self.unit
        if unit is None or self.budget <= self.done:
            return max(int(self.budget), int(self.done))
        return int(self.done) + -(-(int(self.budget) - int(self.done)) // unit) * unit

    @property
    def rounded(self) -> bool:
        """Whether the chunks or the budget differ from what was asked."""
        if self.unit is None:
            return any(
                self.chunks[name] != share * self.asked for name, share in self.shares.items()
            )
        return self.round_steps != self.asked or self.target != self.budget

    def plan(self, steps: Mapping[str, int]) -> dict[str, int]:
        """Each player's learner steps for the next round, from every player's ``steps`` now:
        its share of the league's total after the round (:func:`chunk_steps_by_share`) in whole
        rollouts; the last round is cut to reach :attr:`target`.

        >>> fit = ChunkFit(64, {"a": 0.5, "b": 0.5}, {"a": 64, "b": 64}, budget=200)
        >>> fit.plan({"a": 0, "b": 0}), fit.plan({"a": 64, "b": 64})
        ({'a': 64, 'b': 64}, {'a': 64, 'b': 64})
        """
        done = sum(int(s) for s in steps.values())
        unit = self.unit
        left = max(0, self.target - done) if unit is not None else max(0, self.budget - done)
        wanted = chunk_steps_by_share(self.shares, steps, min(self.round_steps, left))
        plans = {name: _nearest_multiple(s, self._rollout(name)) for name, s in wanted.items()}
        if left > 0 and not any(plans.values()):  # every chunk rounded to 0: the most behind
            name = max(wanted, key=lambda n: wanted[n])
            plans[name] = self._rollout(name)
        return plans

    def _rollouts_text(self) -> str:
        sizes = {name: self._rollout(name) for name in self.shares if self._rollout(name) > 1}
        if len(set(sizes.values())) == 1 and len(sizes) == len(self.shares):
            return f"whole rollouts of {next(iter(sizes.values())):,d} steps (n_steps x n_envs)"
        listed = ", ".join(f"{name} {size:,d}" for name, size in sizes.items())
        return f"whole rollouts (n_steps x n_envs: {listed})"

    def line(
        self, chunk_option: str = "chunk_steps=", budget_option: str = "total_timesteps="
    ) -> str:
        """What was rounded, in one line (empty when nothing was), naming the settings as
        ``chunk_option`` and ``budget_option`` (``"--chunk-steps "`` on the command line)."""
        if not self.rounded:
            return ""
        asked = f"{chunk_option}{self.chunk_steps}"
        if self.unit is None:
            shares = ", ".join(f"{name} {share:.0%}" for name, share in self.shares.items())
            return (
                f"{asked}: the compute shares ({shares}) are {self._rollouts_text()} only in "
                "rounds far longer than that, so each round's chunks are rounded to whole "
                "rollouts (a player may sit a round out) and the steps follow the shares over "
                "the run, not in every round."
            )
        parts = []
        if self.round_steps != self.asked:
            chunks = ", ".join(f"{name} {steps:,d}" for name, steps in self.chunks.items())
            parts.append(
                f"{asked} rounded to {self._rollouts_text()} in the compute shares: "
                f"{self.round_steps:,d} steps a round ({chunks})"
            )
        if self.target != self.budget:
            budget = f"{budget_option}{self.budget} runs to {self.target:,d}"
            if not parts:
                budget += (
                    f": the league learns {self._rollouts_text()} in the compute shares, "
                    f"{self.unit:,d} steps at a time"
                )
            parts.append(budget)
        return "; ".join(parts) + "."

    def __str__(self) -> str:
        return self.line()


OnChunks = Callable[[ChunkFit], None]
"""What hears that a league rounded its chunks or budget (``League(on_chunks=...)``)."""


def warn_chunks(fit: ChunkFit) -> None:
    """The default :data:`OnChunks`: a :class:`LeagueChunksWarning`."""
    warnings.warn(str(fit), LeagueChunksWarning, stacklevel=3)
