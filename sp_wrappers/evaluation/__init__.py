"""The evaluation layer: play players against each other and count the results.

Single matches, round robins over an archive (serial, in processes, or on Ray), forced
openings, one-move tactics (:func:`tactics_check`), exact exploitability (:func:`exploitability`
and its :class:`ExploitabilityReport`), games between a person and a policy (in the terminal
or a web page), replays, and plots of ratings and payoffs. The ratings of an archive's
snapshots are also here, where 0.1 had them.

It may import ``sp_wrappers.envs``, ``ratings``, ``opponents``, ``archive``, ``games`` and
``core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from ..ratings.archive_ratings import (
        ArchiveRatings,
        SnapshotRating,
        archive_ratings,
        store_archive_ratings,
    )
    from .backends import BACKENDS
    from .errors import LookAheadError, PlayError, UnplayableGameError
    from .exploitability import ExploitabilityReport, GameNotWalkableError, exploitability
    from .human_play import PlayOutcome, play_session
    from .match import EVALUATION_SOURCE, MatchResult, as_policy, play_match
    from .openings import OpeningsResult, legal_openings, play_openings
    from .replay import Replay, play_replay
    from .replay_video import write_replay
    from .round_robin import RoundRobinResult, pair_seed, round_robin
    from .tactics import TacticsReport, game_tactics, tactics_check
    from .web_play import WebPlay, WebReplay, WebServer

__all__ = [
    "play_match",
    "MatchResult",
    "as_policy",
    "EVALUATION_SOURCE",
    "round_robin",
    "RoundRobinResult",
    "pair_seed",
    "BACKENDS",
    "legal_openings",
    "play_openings",
    "OpeningsResult",
    "play_session",
    "PlayOutcome",
    "play_replay",
    "Replay",
    "write_replay",
    "WebPlay",
    "WebReplay",
    "WebServer",
    "PlayError",
    "UnplayableGameError",
    "LookAheadError",
    "tactics_check",
    "game_tactics",
    "TacticsReport",
    "exploitability",
    "ExploitabilityReport",
    "GameNotWalkableError",
    "archive_ratings",
    "store_archive_ratings",
    "ArchiveRatings",
    "SnapshotRating",
]

# Two functions share their module's name: importing the module sets the package's attribute to
# the module, so they are bound here, at once, to stay the functions whatever was imported first.
from .exploitability import exploitability  # noqa: E402
from .round_robin import round_robin  # noqa: E402

# The other names load on first use: the command line imports one module of this layer (the
# terminal play, the round robin's backends) without the others (web pages, ratings).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ArchiveRatings": "..ratings.archive_ratings",
        "SnapshotRating": "..ratings.archive_ratings",
        "archive_ratings": "..ratings.archive_ratings",
        "store_archive_ratings": "..ratings.archive_ratings",
        "BACKENDS": ".backends",
        "LookAheadError": ".errors",
        "PlayError": ".errors",
        "UnplayableGameError": ".errors",
        "ExploitabilityReport": ".exploitability",
        "GameNotWalkableError": ".exploitability",
        "PlayOutcome": ".human_play",
        "play_session": ".human_play",
        "EVALUATION_SOURCE": ".match",
        "MatchResult": ".match",
        "as_policy": ".match",
        "play_match": ".match",
        "OpeningsResult": ".openings",
        "legal_openings": ".openings",
        "play_openings": ".openings",
        "Replay": ".replay",
        "play_replay": ".replay",
        "write_replay": ".replay_video",
        "RoundRobinResult": ".round_robin",
        "pair_seed": ".round_robin",
        "TacticsReport": ".tactics",
        "game_tactics": ".tactics",
        "tactics_check": ".tactics",
        "WebPlay": ".web_play",
        "WebReplay": ".web_play",
        "WebServer": ".web_play",
    },
)
