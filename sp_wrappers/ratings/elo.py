"""Online Elo for self-play.

The Elo arithmetic, and online Elo over named players (what ML-Agents' ghost trainer logs).

All ratings are on the Elo scale: a difference of ``d`` points means the higher-rated player is
expected to score ``1 / (1 + 10 ** (-d / 400))`` against the other (400 points ≈ 10:1 odds).

Online Elo depends on the order of the games and has no error bars; for comparing snapshots after
(or during) training, prefer :func:`~sp_wrappers.ratings.bradley_terry.fit_bradley_terry` over the
archive's match history.
"""

from __future__ import annotations

import math

__all__ = [
    "EloRatings",
    "elo_update",
    "expected_score",
    "ELO_PER_LOGIT",
    "check_score",
    "z_value",
]

#: Elo points per natural-log unit of odds: ``400 / ln(10)``.
ELO_PER_LOGIT = 400.0 / math.log(10.0)


def check_score(score: float, what: str = "score_a") -> float:
    """``score`` as a float, checked to be a game's result in [0, 1] (``what`` names it)."""
    score = float(score)
    if not (0.0 <= score <= 1.0):  # also rejects NaN
        raise ValueError(f"{what} must be in [0, 1] (1 = win, 0.5 = draw, 0 = loss), got {score!r}")
    return score


def z_value(confidence: float) -> float:
    """Two-sided normal quantile for ``confidence`` (e.g. 0.95 -> 1.95996), numpy/math only."""
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    target = 0.5 + confidence / 2.0
    low, high = 0.0, 40.0
    for _ in range(200):  # bisection on the normal CDF; exact to double precision
        mid = (low + high) / 2.0
        if 0.5 * (1.0 + math.erf(mid / math.sqrt(2.0))) < target:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


# --------------------------------------------------------------------------------------------------
# Elo
# --------------------------------------------------------------------------------------------------


def expected_score(r_a: float, r_b: float) -> float:
    """Expected score of a player rated ``r_a`` against one rated ``r_b`` (Elo formula).

    :param r_a: rating of the first player (Elo points).
    :param r_b: rating of the second player (Elo points).
    :return: the probability of a win for ``a``, counting draws as half a win.

    >>> expected_score(1200, 1200)
    0.5
    >>> round(expected_score(1400, 1200), 4)
    0.7597
    """
    return 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))


def elo_update(r_a: float, r_b: float, score_a: float, k: float = 16.0) -> tuple[float, float]:
    """One Elo update of both players after a game; the points ``a`` gains, ``b`` loses.

    :param r_a: rating of player ``a`` before the game.
    :param r_b: rating of player ``b`` before the game.
    :param score_a: ``a``'s result: 1 win, 0.5 draw, 0 loss (fractions allowed).
    :param k: the K factor, the most points one game can move a rating.
    :return: the new ratings ``(r_a, r_b)``.

    >>> elo_update(1200, 1200, 1.0)
    (1208.0, 1192.0)
    """
    score_a = check_score(score_a)
    if not k > 0:
        raise ValueError(f"k must be positive, got {k!r}")
    delta = k * (score_a - expected_score(r_a, r_b))
    return float(r_a + delta), float(r_b - delta)


class EloRatings:
    """Online Elo ratings of named players, updated one game at a time.

    Unknown players start at ``initial_rating``. ``ratings`` is a plain dict and may be edited
    (e.g. to seed a new snapshot with its parent's rating).

    :param k: the K factor, the most points one game can move a rating.
    :param initial_rating: the rating of a player before its first game.

    >>> elo = EloRatings(k=16, initial_rating=1200)
    >>> elo.update("snapshot-0001", "snapshot-0000", 1.0)
    (1208.0, 1192.0)
    >>> elo.rating("never-played")
    1200.0
    >>> elo.games
    {'snapshot-0001': 1, 'snapshot-0000': 1}
    """

    def __init__(self, k: float = 16.0, initial_rating: float = 1200.0) -> None:
        if not k > 0:
            raise ValueError(f"k must be positive, got {k!r}")
        self.k = float(k)
        self.initial_rating = float(initial_rating)
        self.ratings: dict[str, float] = {}
        self.games: dict[str, int] = {}

    def rating(self, player: str) -> float:
        """The current rating of ``player`` (``initial_rating`` if it has none yet).

        :param player: the player's name.
        """
        return float(self.ratings.get(player, self.initial_rating))

    def expected_score(self, a: str, b: str) -> float:
        """Expected score of ``a`` against ``b`` under the current ratings.

        :param a: the first player's name.
        :param b: the second player's name.
        """
        return expected_score(self.rating(a), self.rating(b))

    def update(self, a: str, b: str, score_a: float) -> tuple[float, float]:
        """Record one game between ``a`` and ``b`` and update both ratings.

        :param a: the first player's name.
        :param b: the second player's name.
        :param score_a: ``a``'s result: 1 win, 0.5 draw, 0 loss (fractions allowed).
        :return: the new ratings ``(rating(a), rating(b))``.
        """
        if a == b:
            raise ValueError(f"a player cannot play itself: {a!r}")
        new_a, new_b = elo_update(self.rating(a), self.rating(b), score_a, self.k)
        self.ratings[a], self.ratings[b] = new_a, new_b
        self.games[a] = self.games.get(a, 0) + 1
        self.games[b] = self.games.get(b, 0) + 1
        return new_a, new_b

    def __repr__(self) -> str:
        players = len(self.ratings)
        return f"EloRatings(k={self.k}, initial_rating={self.initial_rating}, players={players})"


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------
# Teams and more than two seats (optional: openskill)
# --------------------------------------------------------------------------------------------------
