"""League training: AlphaStar's roles and PFSP matchmaking for ordinary SB3 learners.

A league trains several SB3 learners chunk by chunk; a builder decides whom each plays and when
it is snapshotted or reset, a payoff table keeps the decayed win rates PFSP matches by, and the
players run in this process, one process each, or as Ray actors (Ray is imported by the backends
only). A league directory resumes from its last complete round.

The league layer may import ``sp_wrappers.training``, ``evaluation`` and every layer below them.

>>> from sp_wrappers.league import AlphaStarLeague
>>> [p.name for p in AlphaStarLeague().players()]
['main_agent_0', 'main_exploiter_0', 'league_exploiter_0']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from ..ratings.attribution import league_games
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
    from .compute import ChunkFit, LeagueChunksWarning
    from .errors import LeagueSetupError, PlayersLostError
    from .faults import LeagueStalledWarning, PlayersDoNotFitError, StallReport
    from .payoff import PayoffTable
    from .psro import PSRO, PSROResult, PSROSettings
    from .runner import League, LeagueResult

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
    "PSRO",
    "PSROSettings",
    "PSROResult",
    "StallReport",
    "LeagueStalledWarning",
    "ChunkFit",
    "LeagueChunksWarning",
    "PlayersDoNotFitError",
    "LeagueSetupError",
    "PlayersLostError",
    "league_games",
]

# The league's modules import torch and Stable-Baselines3: its names load on first use, so that
# the command line can build its parsers (and read league constants) without them.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "League": ".runner",
        "LeagueResult": ".runner",
        "LeagueBuilder": ".builders",
        "AlphaStarLeague": ".builders",
        "SelfPlayLeague": ".builders",
        "ALPHASTAR_DEFAULTS": ".builders",
        "PlayerSpec": ".builders",
        "LearnerState": ".builders",
        "FrozenPlayer": ".builders",
        "LeagueView": ".builders",
        "PayoffTable": ".payoff",
        "PSRO": ".psro",
        "PSROSettings": ".psro",
        "PSROResult": ".psro",
        "StallReport": ".faults",
        "LeagueStalledWarning": ".faults",
        "ChunkFit": ".compute",
        "LeagueChunksWarning": ".compute",
        "PlayersDoNotFitError": ".faults",
        "LeagueSetupError": ".errors",
        "PlayersLostError": ".errors",
        "league_games": "..ratings.attribution",
    },
)
