"""Ratings for self-play: online Elo, batch Bradley-Terry with error bars, and team ratings.

This module holds:

* :func:`expected_score` and :func:`elo_update` — the Elo arithmetic.
* :class:`EloRatings` — online Elo over named players (what ML-Agents' ghost trainer logs).
* :func:`fit_bradley_terry` — a maximum-likelihood Bradley-Terry fit on the Elo scale over a whole
  match history, with standard errors and confidence intervals, returning
  :class:`BradleyTerryResult`.
* :class:`OpenSkillRatings` and :func:`fit_team_ratings` — ratings for games with more than two
  seats or teams, computed by the ``openskill`` library (the ``multiplayer`` extra), returned as a
  :class:`TeamRatingResult` with the same shape.

All ratings are on the Elo scale: a difference of ``d`` points means the higher-rated player is
expected to score ``1 / (1 + 10 ** (-d / 400))`` against the other (400 points ≈ 10:1 odds).

Online Elo depends on the order of the games and has no error bars; for comparing snapshots after
(or during) training, prefer :func:`fit_bradley_terry` over the archive's match history.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "BradleyTerryResult",
    "EloRatings",
    "OpenSkillRatings",
    "RatingResult",
    "RatingRow",
    "TeamRatingResult",
    "elo_update",
    "expected_score",
    "fit_bradley_terry",
    "fit_team_ratings",
]

#: Elo points per natural-log unit of odds: ``400 / ln(10)``.
ELO_PER_LOGIT = 400.0 / math.log(10.0)


def _check_score(score: float, what: str = "score_a") -> float:
    score = float(score)
    if not (0.0 <= score <= 1.0):  # also rejects NaN
        raise ValueError(f"{what} must be in [0, 1] (1 = win, 0.5 = draw, 0 = loss), got {score!r}")
    return score


def _z_value(confidence: float) -> float:
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
    score_a = _check_score(score_a)
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


# --------------------------------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------------------------------


def _game_tuple(game: Any) -> tuple[str, str, float]:
    if hasattr(game, "player_a"):
        return game.player_a, game.player_b, game.score_a
    try:
        a, b, score = game
    except (TypeError, ValueError):
        raise ValueError(
            f"each game must be (player_a, player_b, score_a) or a record with those "
            f"attributes, got {game!r}"
        ) from None
    return a, b, score


def _strongly_connected(beats: np.ndarray) -> bool:
    """Whether every player can be reached from every other along "scored against" edges."""
    n = len(beats)

    def reach(adjacency: np.ndarray) -> int:
        seen = np.zeros(n, dtype=bool)
        seen[0] = True
        frontier = seen.copy()
        while frontier.any():
            frontier = adjacency[frontier].any(axis=0) & ~seen
            seen |= frontier
        return int(seen.sum())

    return reach(beats) == n and reach(beats.T) == n


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def fit_bradley_terry(
    games: Iterable[Any],
    *,
    anchor: str | None = None,
    anchor_rating: float | None = None,
    center: float = 1500.0,
    prior_games: float = 1.0,
    confidence: float = 0.95,
    max_iter: int = 100,
    tol: float = 1e-9,
) -> BradleyTerryResult:
    """Fit Bradley-Terry ratings on the Elo scale to a whole match history.

    The model: a rating difference ``d`` gives ``P(a beats b) = 1 / (1 + 10 ** (-d / 400))``, the
    same curve as Elo. Unlike online Elo, the fit uses every game at once, so the result does not
    depend on the order of the games, and it comes with standard errors.

    A draw counts as half a win for each side; any score in [0, 1] is allowed and enters the
    likelihood as that fraction of a win. Games are aggregated per pair, and the maximum of the
    (concave) log-likelihood is found with Newton's method, so hundreds of players and hundreds of
    thousands of games fit in milliseconds to a second.

    Every player also gets ``prior_games`` virtual draws against a virtual average player. This
    weak prior (about a Gaussian with standard deviation ``2 / sqrt(prior_games)`` logits ≈
    ``350 / sqrt(prior_games)`` Elo) keeps ratings finite for players that won or lost every game
    and for histories whose players are not all connected by games; ``0`` gives the plain
    maximum-likelihood fit.

    The scale's origin is a choice (only differences are identified). Without ``anchor`` the
    ratings average to ``center``; with ``anchor`` that player is fixed at ``anchor_rating``
    (``center`` by default). Standard errors come from the inverse Fisher information (the
    negative Hessian of the penalised log-likelihood) and measure uncertainty *relative to that
    origin*: the anchor has standard error 0, and without an anchor each is the uncertainty of a
    player's distance from the mean. Intervals are ``rating ± z * std_error`` with ``z`` the normal
    quantile for ``confidence`` (1.96 for 0.95).

    :param games: ``(player_a, player_b, score_a)`` tuples, or records with ``player_a``,
        ``player_b`` and ``score_a`` attributes (like :class:`~sp_wrappers.MatchRecord`);
        ``score_a`` is 1 for a win of ``a``, 0.5 for a draw, 0 for a loss.
    :param anchor: a player whose rating is held at ``anchor_rating`` (e.g. a random policy or the
        first snapshot), or ``None`` to centre the ratings' mean at ``center``.
    :param anchor_rating: the anchor's rating (Elo points); defaults to ``center``.
    :param center: the players' mean rating when there is no anchor (Elo points).
    :param prior_games: virtual draws per player against the average, the strength of the prior
        (0 disables it).
    :param confidence: the coverage of the ``intervals``, in (0, 1).
    :param max_iter: the most Newton iterations.
    :param tol: stop when the largest rating change in an iteration is below this (logits).
    :return: a :class:`BradleyTerryResult`.
    :raises ValueError: for no games, a score outside [0, 1], a player playing itself, an
        unknown ``anchor`` or a negative ``prior_games``.

    >>> games = [("strong", "weak", 1.0)] * 3 + [("strong", "weak", 0.0)]
    >>> result = fit_bradley_terry(games, anchor="weak", anchor_rating=1000, prior_games=0)
    >>> round(result.ratings["strong"] - 1000)  # 3:1 odds
    191
    >>> result.std_errors["weak"], result.games_played["strong"]
    (0.0, 4)
    >>> round(result.win_probability("strong", "weak"), 3)
    0.75
    """
    if prior_games < 0 or not math.isfinite(prior_games):
        raise ValueError(f"prior_games must be >= 0 (0 disables the prior), got {prior_games!r}")
    z = _z_value(confidence)

    index: dict[str, int] = {}
    # (a, b) -> [games, a's points], summed as the games stream in: memory grows with the
    # number of pairs, not of games, so a fit over a long match history stays small.
    pairs: dict[tuple[int, int], list[float]] = {}
    for game in games:
        a, b, score = _game_tuple(game)
        if a == b:
            raise ValueError(f"a player cannot play itself: {a!r} (drop such games first)")
        score = _check_score(score, what=f"score_a of game {a!r} vs {b!r}")
        key = (index.setdefault(a, len(index)), index.setdefault(b, len(index)))
        total = pairs.get(key)
        if total is None:
            pairs[key] = [1.0, score]
        else:
            total[0] += 1.0
            total[1] += score
    if not pairs:
        raise ValueError("fit_bradley_terry needs at least one game; got none")
    players = list(index)
    if anchor is not None and anchor not in index:
        raise ValueError(
            f"anchor {anchor!r} played no games; players with games: {sorted(players)}"
        )

    n = len(players)
    ia = np.array([a for a, _ in pairs], dtype=np.intp)
    ib = np.array([b for _, b in pairs], dtype=np.intp)
    played, s = np.array(list(pairs.values())).T
    # Aggregate: counts[i, j] games between i and j (symmetric), wins[i, j] points i took from j.
    counts = np.zeros((n, n))
    wins = np.zeros((n, n))
    np.add.at(counts, (ia, ib), played)
    np.add.at(wins, (ia, ib), s)
    np.add.at(wins, (ib, ia), played - s)
    counts = counts + counts.T
    games_played = counts.sum(axis=1)
    points = wins.sum(axis=1) + 0.5 * prior_games

    if not prior_games and not _strongly_connected(wins > 0):
        raise ValueError(
            "maximum-likelihood ratings do not exist for these games: some players won (or lost) "
            "every game against the rest, so their ratings would be infinite; use prior_games > 0"
        )

    def loglik(theta: np.ndarray) -> float:
        diff = theta[:, None] - theta[None, :]
        value = float(np.sum(wins * -np.logaddexp(0.0, -diff)))
        if prior_games:
            value += (
                0.5
                * prior_games
                * float(np.sum(-np.logaddexp(0.0, -theta) - np.logaddexp(0.0, theta)))
            )
        return value

    def curvature(theta: np.ndarray) -> np.ndarray:
        p = _sigmoid(theta[:, None] - theta[None, :])
        weights = counts * p * (1.0 - p)  # Fisher information of each pair
        info = np.diag(weights.sum(axis=1)) - weights
        if prior_games:
            q = _sigmoid(theta)
            info[np.diag_indices(n)] += prior_games * q * (1.0 - q)
        return info

    theta = np.zeros(n)
    current = loglik(theta)
    converged = False
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        p = _sigmoid(theta[:, None] - theta[None, :])
        gradient = points - (counts * p).sum(axis=1)
        if prior_games:
            gradient -= prior_games * _sigmoid(theta)
        info = curvature(theta)
        if prior_games:
            step = np.linalg.solve(info, gradient)
        else:  # singular along "everyone +c"; the least-squares step leaves the mean alone
            step = np.linalg.lstsq(info, gradient, rcond=None)[0]
        # Newton with step halving: the log-likelihood is concave, so this always makes progress.
        scale = 1.0
        while True:
            candidate = theta + scale * step
            value = loglik(candidate)
            if value >= current - 1e-12 * abs(current) or scale < 1e-6:
                break
            scale *= 0.5
        theta, current = candidate, value
        if not prior_games:
            theta -= theta.mean()  # the plain likelihood only sees differences
        if float(np.max(np.abs(scale * step))) < tol:
            converged = True
            break

    # Covariance of the ratings relative to the chosen origin.
    info = curvature(theta)
    cov = np.linalg.pinv(info, hermitian=True) if not prior_games else np.linalg.inv(info)
    if anchor is None:
        origin = center
        contrast = np.eye(n) - 1.0 / n
        shift = theta.mean()
    else:
        origin = center if anchor_rating is None else float(anchor_rating)
        k = index[anchor]
        contrast = np.eye(n)
        contrast[:, k] -= 1.0
        shift = theta[k]
    variances = np.einsum("ij,jk,ik->i", contrast, cov, contrast)
    std = ELO_PER_LOGIT * np.sqrt(np.clip(variances, 0.0, None))
    elo = origin + ELO_PER_LOGIT * (theta - shift)
    if anchor is not None:
        elo[index[anchor]], std[index[anchor]] = origin, 0.0

    return BradleyTerryResult(
        ratings={p: float(elo[i]) for i, p in enumerate(players)},
        std_errors={p: float(std[i]) for i, p in enumerate(players)},
        intervals={
            p: (float(elo[i] - z * std[i]), float(elo[i] + z * std[i]))
            for i, p in enumerate(players)
        },
        games_played={p: int(round(games_played[i])) for i, p in enumerate(players)},
        anchor=anchor,
        confidence=float(confidence),
        iterations=iterations,
        converged=converged,
    )


# --------------------------------------------------------------------------------------------------
# Teams and more than two seats (optional: openskill)
# --------------------------------------------------------------------------------------------------

_OPENSKILL_HINT = 'team ratings need the openskill library: pip install "sp-wrappers[multiplayer]"'


def _openskill_model(model: str | Any) -> Any:
    if not isinstance(model, str):
        return model
    try:
        from openskill import models
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(_OPENSKILL_HINT) from error
    names = [name for name in getattr(models, "__all__", dir(models)) if name[:1].isupper()]
    if not hasattr(models, model):
        raise ValueError(f"unknown openskill model {model!r}; choose one of {sorted(names)}")
    return getattr(models, model)()


class OpenSkillRatings:
    """Online ratings for games with any number of seats or teams, computed by ``openskill``.

    Each game is a list of teams (a team is a list of player names; one-player teams for
    free-for-all games) and their finishing ranks (lower is better; equal ranks are a tie). The
    Bayesian ``openskill`` update tracks a mean ``mu`` and an uncertainty ``sigma`` per player;
    :meth:`result` puts them on the Elo scale of :func:`fit_bradley_terry`, so a two-player game
    rated either way gives comparable numbers: ``rating = center + (mu - mu0) * scale`` with
    ``scale = 400 / (ln 10 * beta * sqrt 2)`` (about 29.5 Elo points per ``mu`` unit with the
    default model), which makes a rating difference predict wins like Elo once ``sigma`` is small.

    Needs the ``multiplayer`` extra: ``pip install "sp-wrappers[multiplayer]"``.

    :param model: an ``openskill.models`` class name (``"PlackettLuce"``, ``"BradleyTerryFull"``,
        ``"ThurstoneMostellerFull"``, ...) or a model instance.
    :param center: the mean display rating when :meth:`result` has no anchor (Elo points).

    >>> ratings = OpenSkillRatings()
    >>> ratings.update([["alice"], ["bob", "carol"]], ranks=[1, 2])
    >>> result = ratings.result()
    >>> result.ratings["alice"] > result.ratings["bob"]
    True
    """

    def __init__(self, model: str | Any = "PlackettLuce", center: float = 1500.0) -> None:
        self.model = _openskill_model(model)
        self.center = float(center)
        self.scale = ELO_PER_LOGIT / (float(self.model.beta) * math.sqrt(2.0))
        self._ratings: dict[str, Any] = {}
        self.games: dict[str, int] = {}

    def _rating(self, player: str) -> Any:
        if player not in self._ratings:
            self._ratings[player] = self.model.rating(name=player)
        return self._ratings[player]

    def update(self, teams: Sequence[Sequence[str]], ranks: Sequence[float] | None = None) -> None:
        """Record one game.

        :param teams: the teams, each a sequence of player names (at least two teams).
        :param ranks: each team's finishing place, lower is better, equal for a tie; defaults
            to the order of ``teams`` (first team won).
        """
        teams = [[str(p) for p in team] for team in teams]
        if len(teams) < 2 or any(not team for team in teams):
            raise ValueError(f"a game needs at least two non-empty teams, got {teams!r}")
        names = [p for team in teams for p in team]
        if len(set(names)) != len(names):
            raise ValueError(f"a player appears twice in one game: {teams!r}")
        if ranks is None:
            ranks = list(range(1, len(teams) + 1))
        ranks = [float(r) for r in ranks]
        if len(ranks) != len(teams) or not all(math.isfinite(r) for r in ranks):
            raise ValueError(f"need one finite rank per team ({len(teams)}), got {ranks!r}")
        new = self.model.rate([[self._rating(p) for p in team] for team in teams], ranks=ranks)
        for team, rated in zip(teams, new, strict=True):
            for player, rating in zip(team, rated, strict=True):
                self._ratings[player] = rating
                self.games[player] = self.games.get(player, 0) + 1

    def result(
        self,
        *,
        anchor: str | None = None,
        anchor_rating: float | None = None,
        confidence: float = 0.95,
    ) -> TeamRatingResult:
        """The current ratings on the Elo display scale.

        Without ``anchor`` the ratings are shifted so their mean is ``center`` and each standard
        error is the player's own ``sigma`` on the display scale. With ``anchor`` that player sits
        at ``anchor_rating`` (``center`` by default) with standard error 0, and the others' standard
        errors combine their ``sigma`` with the anchor's (``openskill`` treats players as
        independent).

        :param anchor: a player to hold fixed, or ``None``.
        :param anchor_rating: the anchor's display rating (Elo points).
        :param confidence: the coverage of the ``intervals``, in (0, 1).
        """
        if not self._ratings:
            raise ValueError("no games recorded yet; call update() first")
        z = _z_value(confidence)
        players = list(self._ratings)
        mu = {p: float(self._ratings[p].mu) for p in players}
        sigma = {p: float(self._ratings[p].sigma) for p in players}
        raw = {p: (mu[p] - float(self.model.mu)) * self.scale for p in players}
        if anchor is None:
            origin, shift = self.center, float(np.mean(list(raw.values())))
            std = {p: sigma[p] * self.scale for p in players}
        else:
            if anchor not in raw:
                raise ValueError(
                    f"anchor {anchor!r} played no games; players with games: {sorted(players)}"
                )
            origin = self.center if anchor_rating is None else float(anchor_rating)
            shift = raw[anchor]
            std = {
                p: 0.0 if p == anchor else math.hypot(sigma[p], sigma[anchor]) * self.scale
                for p in players
            }
        ratings = {p: origin + raw[p] - shift for p in players}
        return TeamRatingResult(
            ratings=ratings,
            std_errors=std,
            intervals={p: (ratings[p] - z * std[p], ratings[p] + z * std[p]) for p in players},
            games_played=dict(self.games),
            anchor=anchor,
            confidence=float(confidence),
            mu=mu,
            sigma=sigma,
        )


def fit_team_ratings(
    games: Iterable[Sequence[Sequence[str]] | tuple[Sequence[Sequence[str]], Sequence[float]]],
    *,
    model: str | Any = "PlackettLuce",
    center: float = 1500.0,
    anchor: str | None = None,
    anchor_rating: float | None = None,
    confidence: float = 0.95,
) -> TeamRatingResult:
    """Rate players of games with more than two seats or teams (``openskill``, in game order).

    :param games: each game as ``(teams, ranks)`` (ranks lower is better, equal for ties) or as
        just the list of teams in finishing order (first team won, no ties).
    :param model: see :class:`OpenSkillRatings`.
    :param center: see :class:`OpenSkillRatings`.
    :param anchor: see :meth:`OpenSkillRatings.result`.
    :param anchor_rating: see :meth:`OpenSkillRatings.result`.
    :param confidence: see :meth:`OpenSkillRatings.result`.
    :return: a :class:`TeamRatingResult`.

    >>> result = fit_team_ratings([([["a"], ["b"], ["c"]], [1, 2, 3])] * 5)
    >>> [row.player for row in result.table()]
    ['a', 'b', 'c']
    """
    rater = OpenSkillRatings(model=model, center=center)
    count = 0
    for game in games:
        if (
            isinstance(game, tuple)
            and len(game) == 2
            and not isinstance(game[1], (str, bytes))
            and all(isinstance(r, (int, float, np.number)) for r in game[1])
        ):
            rater.update(game[0], game[1])
        else:
            rater.update(game)
        count += 1
    if not count:
        raise ValueError("fit_team_ratings needs at least one game; got none")
    return rater.result(anchor=anchor, anchor_rating=anchor_rating, confidence=confidence)
