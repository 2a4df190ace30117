"""The league layer's errors: a league that cannot start as configured, or players it lost.

Each derives from :class:`~sp_wrappers.core.errors.SpWrappersError` and keeps its built-in base.
:class:`~sp_wrappers.league.faults.PlayersDoNotFitError`, a :class:`LeagueSetupError`, stays with
the resource arithmetic that writes its message (:mod:`sp_wrappers.league.faults`).

>>> from sp_wrappers.league.errors import LeagueSetupError
>>> isinstance(LeagueSetupError("no players"), ValueError)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import SpWrappersError

__all__ = ["LeagueSetupError", "PlayersLostError"]


class LeagueSetupError(SpWrappersError, ValueError):
    """The league cannot start as configured (the message says what to change)."""


class PlayersLostError(SpWrappersError, RuntimeError):
    """Some players' workers died during a round (a killed process, a lost Ray node).

    :param lost: ``{player name: what happened}`` for every player whose worker is gone.
    :param results: the chunks the other players finished in that round (kept, not re-run):
        ``{player name: ChunkResult}``.

    >>> error = PlayersLostError({"main_agent_0": "its process died with exit code -9"}, {})
    >>> sorted(error.lost), "restarts them from their last complete round" in str(error)
    (['main_agent_0'], True)
    """

    def __init__(self, lost: Mapping[str, str], results: Mapping[str, Any]) -> None:
        self.lost = dict(lost)
        self.results = dict(results)
        described = "; ".join(f"{name}: {why}" for name, why in self.lost.items())
        super().__init__(
            f"League players lost their workers in a round ({described}). The league restarts "
            "them from their last complete round; if this repeats, look for out-of-memory kills "
            "or nodes leaving the cluster."
        )
