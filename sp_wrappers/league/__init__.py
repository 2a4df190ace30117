"""League training: AlphaStar's roles and PFSP matchmaking for ordinary SB3 learners.

A league of learning players (main agents, main exploiters, league exploiters) and frozen
snapshots, matched by prioritized fictitious self-play from a payoff table, each player learning
in its own worker (in this process, in processes, or on Ray) one round at a time, and surviving
lost workers and stalled rounds.

The league layer may import ``sp_wrappers.training``, ``evaluation`` and every layer below them.

>>> from sp_wrappers.league import AlphaStarLeague
>>> [p.name for p in AlphaStarLeague().players()]
['main_agent_0', 'main_exploiter_0', 'league_exploiter_0']
"""

from __future__ import annotations

from ..core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".runner": ["League", "LeagueResult"],
        ".builders": [
            "LeagueBuilder",
            "AlphaStarLeague",
            "SelfPlayLeague",
            "ALPHASTAR_DEFAULTS",
            "PlayerSpec",
            "LearnerState",
            "FrozenPlayer",
            "LeagueView",
        ],
        ".payoff": ["PayoffTable"],
        ".faults": ["StallReport", "LeagueStalledWarning", "PlayersDoNotFitError"],
        ".errors": ["LeagueSetupError", "PlayersLostError"],
        "..ratings.attribution": ["league_games"],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
