"""The opponent sampler's settings as one frozen object: :class:`SamplerSettings`, declared once
(help, range, choices, the kinds of run that take each, see :mod:`sp_wrappers.core.settings`).

A run's ``config.json`` stores them as its ``"sampler"`` object (``RunConfig.sampler``, a team
run's the team keys), the command line's "opponent sampler" options are generated from them, and
:meth:`SamplerSettings.sampler_kwargs` are :class:`~sp_wrappers.OpponentSampler`'s own keyword
arguments among them.

>>> settings = SamplerSettings(window=5, latest_ratio=0.25)
>>> settings.window, settings.swap_unit, settings.sampler_kwargs()["latest_ratio"]
(5, 'episodes', 0.25)
>>> SamplerSettings(window=0)
Traceback (most recent call last):
...
ValueError: `window` must be at least 1 (0 in a run's overrides: all snapshots), got 0.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..core.settings import check_settings, count, setting, share
from .sampler import STRATEGIES
from .slots import SWAP_UNITS

__all__ = ["SamplerSettings", "SAMPLER_GROUP"]

#: The help's group of these options.
SAMPLER_GROUP = "opponent sampler (defaults: the game's recipe)"
_SINGLE = ("single",)
_SINGLE_AND_PSRO = ("single", "psro")  # PSRO's oracle plays the same anchors


@dataclass(frozen=True)
class SamplerSettings:
    """How a learner's opponents are drawn (see :class:`~sp_wrappers.OpponentSampler`).

    :param window: draw from the newest ``window`` snapshots (``None``: all).
    :param latest_ratio: share of the games left after the fixed opponents played against the
        learner's latest weights.
    :param swap_every: keep an opponent for this many ``swap_unit``.
    :param swap_unit: ``"episodes"`` or ``"steps"``.
    :param strategy: ``"uniform"`` over the window, or prioritized fictitious self-play.
    :param random_ratio: probability of a random opponent, of all games (single learner).
    :param reference_ratio: probability of one of the game's reference bots (single learner).
    :param deterministic: snapshot opponents take their most likely action (single learner).
    """

    window: int | None = count(
        10,
        help="draw from the newest N snapshots (0: all)",
        low=1,
        note="0 in a run's overrides: all snapshots",
        group=SAMPLER_GROUP,
    )
    latest_ratio: float = share(
        0.5,
        help="share of the games left after --random-ratio and --reference-ratio (the fixed "
        "opponents, drawn first) played against the learner's latest weights, the rest against "
        "snapshots: --random-ratio 0.2 --latest-ratio 0.5 plays the latest weights in 40%% of "
        "games (ML-Agents' play_against_latest_model_ratio, which has no fixed opponents)",
        group=SAMPLER_GROUP,
    )
    swap_every: int | None = count(
        1,
        help="keep an opponent for N swap units",
        low=1,
        group=SAMPLER_GROUP,
    )
    swap_unit: str = setting(
        "episodes", help="what --swap-every counts", choices=SWAP_UNITS, group=SAMPLER_GROUP
    )
    strategy: str = setting(
        "uniform",
        help="uniform over the window, or prioritized fictitious self-play",
        choices=STRATEGIES,
        group=SAMPLER_GROUP,
    )
    random_ratio: float = share(
        0.1,
        help="probability of a RandomPolicy opponent, of all games",
        kinds=_SINGLE_AND_PSRO,
        group=SAMPLER_GROUP,
    )
    reference_ratio: float = share(
        0.0,
        help="probability of one of the game's reference bots (minimax; alpha-beta depths 1 and "
        "2, split evenly) as the opponent; the run is then no longer pure self-play",
        kinds=_SINGLE_AND_PSRO,
        group=SAMPLER_GROUP,
    )
    deterministic: bool = setting(
        False,
        help="snapshot opponents take their most likely action",
        flag="deterministic-opponents",
        type=bool,
        kinds=_SINGLE,
        group=SAMPLER_GROUP,
    )

    def __post_init__(self) -> None:
        check_settings(self, ValueError)

    @classmethod
    def keys(cls, kind: str | None = None) -> tuple[str, ...]:
        """The settings' keys (``kind``: those a kind of run takes, ``"single"`` or
        ``"teams"``)."""
        return tuple(
            f.name
            for f in dataclasses.fields(cls)
            if kind is None or kind in f.metadata["setting"].kinds
        )

    def to_json(self, kind: str | None = None) -> dict[str, Any]:
        """The settings as ``config.json``'s ``"sampler"`` object (a kind's keys only)."""
        return {key: getattr(self, key) for key in self.keys(kind)}

    def sampler_kwargs(self) -> dict[str, Any]:
        """:class:`~sp_wrappers.OpponentSampler`'s keyword arguments among the settings (the
        ratios of fixed opponents become its ``fixed_opponents``, which need the game)."""
        drop = ("random_ratio", "reference_ratio")
        return {key: value for key, value in self.to_json().items() if key not in drop}
