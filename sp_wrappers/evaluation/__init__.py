"""The evaluation layer: play players against each other and count the results.

It holds :func:`play_match` (``match``), round robins over an archive (``round_robin``) with
their serial, process and Ray backends (``backends``), forced openings (``openings``) and the
plots of ratings and payoffs (``plots``).

It may import ``sp_wrappers.envs``, ``ratings``, ``opponents``, ``archive``, ``games`` and
``core``.
"""

from ..ratings.archive_ratings import (
    ArchiveRatings,
    SnapshotRating,
    archive_ratings,
    store_archive_ratings,
)
from .backends import BACKENDS
from .match import EVALUATION_SOURCE, MatchResult, as_policy, play_match
from .round_robin import RoundRobinResult, pair_seed, round_robin

__all__ = [
    "play_match",
    "MatchResult",
    "as_policy",
    "round_robin",
    "RoundRobinResult",
    "archive_ratings",
    "store_archive_ratings",
    "ArchiveRatings",
    "SnapshotRating",
    "BACKENDS",
    "EVALUATION_SOURCE",
    "pair_seed",
]
