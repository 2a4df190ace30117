"""What can go wrong while a league's players run, and how the league is told.

A player's worker process or Ray actor may die in a round (the league retries that player from
its last complete round), a Ray cluster may be unable to hold every player at once (stop before
training), and a round may make no progress for a while (the league reports which players are
waiting and why).

No module here imports Ray: the backends turn Ray's errors and resources into these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import LeagueSetupError, PlayersLostError

__all__ = [
    "DEFAULT_STALL_SECONDS",
    "LeagueStalledWarning",
    "OnStall",
    "PlayersDoNotFitError",
    "PlayersLostError",
    "StallReport",
    "describe_resources",
    "fit_per_player",
]

DEFAULT_STALL_SECONDS = 120.0
# Ray keeps resource quantities to four decimals; a share rounded down always fits.
_RESOURCE_QUANTUM = 1e-4


class PlayersDoNotFitError(LeagueSetupError):
    """The cluster cannot run every player at once, so a round would never end.

    :param resource: ``"CPU"`` or ``"GPU"``.
    :param per_player: what each player's actor asks for.
    :param players: how many players the league has.
    :param cluster_total: the cluster's total of that resource.
    :param largest_node: the most of that resource one node has.
    :param flag: how the user sets the per-player amount (``num_cpus=`` in Python,
        ``--num-cpus`` on the command line); :meth:`for_flag` rewrites the message.

    >>> error = PlayersDoNotFitError("CPU", 1, players=3, cluster_total=2, largest_node=2)
    >>> "Pass num_cpus=0.6666 or less" in str(error)
    True
    >>> "(--num-cpus 1 each)" in str(error.for_flag("--num-cpus "))
    True
    """

    def __init__(
        self,
        resource: str,
        per_player: float,
        players: int,
        cluster_total: float,
        largest_node: float,
        flag: str | None = None,
    ) -> None:
        self.resource = resource
        self.per_player = float(per_player)
        self.players = int(players)
        self.cluster_total = float(cluster_total)
        self.largest_node = float(largest_node)
        self.flag = flag or ("num_cpus=" if resource == "CPU" else "num_gpus=")
        super().__init__(self._message())

    def _message(self) -> str:
        wanted = self.per_player * self.players
        share = fit_per_player(self.cluster_total, self.players)
        if self.per_player > self.largest_node:
            problem = (
                f"each of the league's {self.players} players asks for {self.per_player:g} "
                f"{self.resource} ({self.flag}{self.per_player:g}) but the largest node of the Ray "
                f"cluster has {self.largest_node:g}"
            )
        else:
            problem = (
                f"the league's {self.players} players ask for {wanted:g} {self.resource} "
                f"({self.flag}{self.per_player:g} each) but the Ray cluster has "
                f"{self.cluster_total:g} {self.resource} in all"
            )
        fix = (
            f"Pass {self.flag}{share:g} or less (fractions are fine), or add nodes"
            if share > 0
            else f"Add nodes with {self.resource}s or pass {self.flag}0"
        )
        return (
            f"Cannot run the league: {problem}, so the players that do not fit would wait "
            f"forever and no round would end. {fix}."
        )

    def for_flag(self, flag: str) -> PlayersDoNotFitError:
        """The same error naming ``flag`` (e.g. ``"--num-cpus "``) as the setting to change."""
        return PlayersDoNotFitError(
            self.resource,
            self.per_player,
            self.players,
            self.cluster_total,
            self.largest_node,
            flag,
        )


class LeagueStalledWarning(RuntimeWarning):
    """A round made no progress for a while (the message is a :class:`StallReport`)."""


@dataclass
class StallReport:
    """A round that has made no progress for ``seconds``: who is waiting and why.

    :param round: the round being played (the number it will have once complete).
    :param seconds: seconds since the last player finished (or since the round started).
    :param waiting: ``{player name: why it has not finished}``.
    :param done: the players that finished this round.

    >>> print(StallReport(3, 120.0, {"main_agent_0": "not placed"}, ["main_exploiter_0"]))
    league round 3: no progress for 120 s; 1 finished, waiting for main_agent_0 (not placed)
    """

    round: int
    seconds: float
    waiting: dict[str, str]
    done: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        waiting = ", ".join(f"{name} ({why})" for name, why in self.waiting.items())
        return (
            f"league round {self.round}: no progress for {self.seconds:.0f} s; "
            f"{len(self.done)} finished, waiting for {waiting}"
        )


OnStall = Callable[[StallReport], None]
"""What receives a :class:`StallReport` (``League(on_stall=...)``)."""


def fit_per_player(total: float, players: int, most: float = 1.0) -> float:
    """The largest share of ``total`` (rounded down to Ray's precision, at most ``most``) that
    each of ``players`` can hold at once.

    >>> fit_per_player(2, 3)
    0.6666
    >>> fit_per_player(16, 3)
    1.0
    """
    if players < 1 or total <= 0:
        return 0.0
    share = min(float(most), float(total) / players)
    return round(math.floor(share / _RESOURCE_QUANTUM + 1e-9) * _RESOURCE_QUANTUM, 4)


def describe_resources(resources: Mapping[str, Any]) -> str:
    """``{"CPU": 1.0, "memory": ...}`` as ``"1 CPU"`` (CPU, GPU and custom resources only)."""
    shown = {
        k: v
        for k, v in resources.items()
        if k in ("CPU", "GPU") or not (k.startswith("node:") or k in ("memory",) or "store" in k)
    }
    return ", ".join(f"{float(v):g} {k}" for k, v in sorted(shown.items())) or "nothing"
