"""The tables every rating fit returns.

One player's line, the table (with ``rating``, ``interval`` and ``as_table``), and the tables of
the Bradley-Terry and team fits, all on the Elo scale."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .elo import expected_score

__all__ = ["RatingRow", "RatingResult", "BradleyTerryResult", "TeamRatingResult"]


class RatingRow(NamedTuple):
    """One row of :meth:`RatingResult.table`."""

    player: str
    rating: float
    std_error: float
    low: float
    high: float
    games: int


@dataclass(frozen=True)
class RatingResult:
    """Ratings of a set of players with standard errors and confidence intervals (Elo scale).

    :param ratings: each player's rating.
    :param std_errors: each player's standard error, relative to the anchor (0 for the anchor
        itself) or, without an anchor, to the players' mean.
    :param intervals: each player's ``(low, high)`` interval at ``confidence``.
    :param games_played: how many games each player took part in.
    :param anchor: the player held fixed, or ``None`` if ratings are mean-centred.
    :param confidence: the coverage the intervals were built for.
    """

    ratings: dict[str, float]
    std_errors: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    games_played: dict[str, int]
    anchor: str | None
    confidence: float

    def win_probability(self, a: str, b: str) -> float:
        """Predicted expected score of ``a`` against ``b`` (draws count half).

        :param a: the first player's name.
        :param b: the second player's name.
        """
        for player in (a, b):
            if player not in self.ratings:
                raise KeyError(f"unknown player {player!r}; rated players: {sorted(self.ratings)}")
        return expected_score(self.ratings[a], self.ratings[b])

    def table(self) -> list[RatingRow]:
        """Rows ``(player, rating, std_error, low, high, games)`` sorted by rating, best first."""
        rows = [
            RatingRow(p, r, self.std_errors[p], *self.intervals[p], self.games_played.get(p, 0))
            for p, r in self.ratings.items()
        ]
        return sorted(rows, key=lambda row: (-row.rating, row.player))

    def format_table(self) -> str:
        """The :meth:`table` as aligned text, ready to print."""
        width = max([6] + [len(p) for p in self.ratings])
        pct = f"{self.confidence:.0%} interval"
        lines = [f"{'player':<{width}}  {'rating':>8}  {'± se':>6}  {pct:>19}  {'games':>6}"]
        for row in self.table():
            lines.append(
                f"{row.player:<{width}}  {row.rating:8.1f}  {row.std_error:6.1f}  "
                f"[{row.low:7.1f}, {row.high:7.1f}]  {row.games:6d}"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class BradleyTerryResult(RatingResult):
    """The result of :func:`fit_bradley_terry` (see :class:`RatingResult` for the fields).

    :param iterations: Newton iterations used.
    :param converged: whether the fit met its tolerance (``False`` means ratings may be unreliable,
        e.g. an unbeaten player with ``prior_games=0``).

    >>> from sp_wrappers.ratings import fit_bradley_terry
    >>> result = fit_bradley_terry([("a", "b", 1.0), ("a", "b", 0.5), ("b", "a", 0.0)])
    >>> result.ratings["a"] > result.ratings["b"], result.converged
    (True, True)
    >>> [row.player for row in result.table()]
    ['a', 'b']
    """

    iterations: int = 0
    converged: bool = True


@dataclass(frozen=True)
class TeamRatingResult(RatingResult):
    """The result of :meth:`OpenSkillRatings.result` (see :class:`RatingResult` for the fields).

    :param mu: each player's OpenSkill mean, on the library's own scale.
    :param sigma: each player's OpenSkill uncertainty, on the library's own scale.

    >>> sorted(f for f in TeamRatingResult.__dataclass_fields__ if f not in ("mu", "sigma"))
    ['anchor', 'confidence', 'games_played', 'intervals', 'ratings', 'std_errors']
    """

    mu: dict[str, float] = field(default_factory=dict)
    sigma: dict[str, float] = field(default_factory=dict)
