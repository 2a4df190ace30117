"""The ratings layer: how strong each player is, from the games it played.

Online Elo, the Bradley-Terry fit and its result tables, ratings for more than two seats
(openskill), who gets credit for a game, and the ratings of an archive's snapshots.

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from ..core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".elo": ["EloRatings", "ELO_PER_LOGIT", "elo_update", "expected_score"],
        ".bradley_terry": ["fit_bradley_terry"],
        ".results": ["BradleyTerryResult", "RatingResult", "RatingRow", "TeamRatingResult"],
        ".team_ratings": ["OpenSkillRatings", "fit_team_ratings"],
        ".archive_ratings": [
            "archive_ratings",
            "store_archive_ratings",
            "ArchiveRatings",
            "SnapshotRating",
        ],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
