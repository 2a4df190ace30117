"""The ratings layer: how strong each player is, from the games it played.

It holds online Elo (``elo``), the Bradley-Terry fit (``bradley_terry``) and its result tables
(``results``), ratings for more than two seats (``team_ratings``, openskill), who gets credit
for a game (``attribution``) and the ratings of an archive's snapshots (``archive_ratings``).

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""

from .bradley_terry import fit_bradley_terry
from .elo import ELO_PER_LOGIT, EloRatings, elo_update, expected_score
from .results import BradleyTerryResult, RatingResult, RatingRow, TeamRatingResult
from .team_ratings import OpenSkillRatings, fit_team_ratings

__all__ = [
    "BradleyTerryResult",
    "EloRatings",
    "ELO_PER_LOGIT",
    "OpenSkillRatings",
    "RatingResult",
    "RatingRow",
    "TeamRatingResult",
    "elo_update",
    "expected_score",
    "fit_bradley_terry",
    "fit_team_ratings",
]
