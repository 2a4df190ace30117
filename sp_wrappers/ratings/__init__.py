"""The ratings layer: how strong each player is, from the games it played.

Online Elo, the Bradley-Terry fit and its result tables, ratings for more than two seats
(openskill), who gets credit for a game, and the ratings of an archive's snapshots.

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from .archive_ratings import ArchiveRatings, SnapshotRating, archive_ratings, store_archive_ratings
from .bradley_terry import fit_bradley_terry
from .elo import ELO_PER_LOGIT, EloRatings, elo_update, expected_score
from .results import BradleyTerryResult, RatingResult, RatingRow, TeamRatingResult
from .skill import OpenSkillRatings, fit_team_ratings

__all__ = [
    "EloRatings",
    "ELO_PER_LOGIT",
    "elo_update",
    "expected_score",
    "fit_bradley_terry",
    "BradleyTerryResult",
    "RatingResult",
    "RatingRow",
    "TeamRatingResult",
    "OpenSkillRatings",
    "fit_team_ratings",
    "archive_ratings",
    "store_archive_ratings",
    "ArchiveRatings",
    "SnapshotRating",
]
