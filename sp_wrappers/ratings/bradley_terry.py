"""The Bradley-Terry fit of a whole match history.

Maximum-likelihood ratings on the Elo scale, with standard errors and confidence intervals.
Unlike online Elo it does not depend on the order of the games."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .elo import ELO_PER_LOGIT, check_score, z_value
from .results import BradleyTerryResult

__all__ = ["fit_bradley_terry"]


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
    z = z_value(confidence)

    index: dict[str, int] = {}
    # (a, b) -> [games, a's points], summed as the games stream in: memory grows with the
    # number of pairs, not of games, so a fit over a long match history stays small.
    pairs: dict[tuple[int, int], list[float]] = {}
    for game in games:
        a, b, score = _game_tuple(game)
        if a == b:
            raise ValueError(f"a player cannot play itself: {a!r} (drop such games first)")
        score = check_score(score, what=f"score_a of game {a!r} vs {b!r}")
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
