"""League training: AlphaStar's roles and PFSP matchmaking for ordinary SB3 learners.

This package holds :class:`League` (the runner, :mod:`.runner`), the builders
(:class:`LeagueBuilder`, :class:`AlphaStarLeague`, :class:`SelfPlayLeague`, :mod:`.builders`),
the payoff table (:class:`PayoffTable`, :mod:`.payoff`), the players (:mod:`.worker`) and where
they run (:mod:`.backends`: ``serial``, ``process``, ``ray``; Ray is imported there only), what
goes wrong there (:mod:`.faults`: :class:`StallReport`, :class:`PlayersDoNotFitError`,
:class:`PlayersLostError`) and a round as a unit (:mod:`.rounds`).

The league layer may import ``sp_wrappers.training``, ``evaluation`` and every layer below them.

>>> from sp_wrappers.league import AlphaStarLeague
>>> [p.name for p in AlphaStarLeague().players()]
['main_agent_0', 'main_exploiter_0', 'league_exploiter_0']
"""

from __future__ import annotations

from ..ratings.attribution import league_games
from .backends import BACKENDS
from .builders import (
    ALPHASTAR_DEFAULTS,
    AlphaStarLeague,
    FrozenPlayer,
    LeagueBuilder,
    LeagueView,
    LearnerState,
    PlayerSpec,
    SelfPlayLeague,
)
from .faults import LeagueStalledWarning, PlayersDoNotFitError, PlayersLostError, StallReport
from .payoff import PayoffTable
from .runner import League, LeagueResult
from .worker import LeagueSetupError

__all__ = [
    "League",
    "LeagueResult",
    "LeagueBuilder",
    "AlphaStarLeague",
    "SelfPlayLeague",
    "ALPHASTAR_DEFAULTS",
    "PlayerSpec",
    "LearnerState",
    "FrozenPlayer",
    "LeagueView",
    "PayoffTable",
    "LeagueSetupError",
    "league_games",
    "BACKENDS",
    "StallReport",
    "LeagueStalledWarning",
    "PlayersDoNotFitError",
    "PlayersLostError",
]
