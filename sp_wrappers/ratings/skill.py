"""Skill ratings with their uncertainty, for any number of seats or teams.

Computed by the ``openskill`` library (Weng-Lin models) and returned on the Elo scale: kept
online by :class:`~sp_wrappers.training.callbacks.SelfPlayCallback` in every run, and fitted in
game order for team and free-for-all games (:func:`fit_team_ratings`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..core.extras import require
from .elo import ELO_PER_LOGIT, z_value
from .results import TeamRatingResult

__all__ = ["OpenSkillRatings", "fit_team_ratings"]


def _openskill_model(model: str | Any) -> Any:
    if not isinstance(model, str):
        return model
    models = require("openskill.models", "multiplayer", "Team ratings")
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

    def update_pair(self, a: str, b: str, score_a: float) -> None:
        """Record one game between two players from ``a``'s score (1 win, 0.5 draw, 0 loss):
        a row of the match history (one opposing seat or team of a game with more)."""
        score = float(score_a)
        ranks = [1.0, 1.0] if score == 0.5 else [1.0, 2.0] if score > 0.5 else [2.0, 1.0]
        self.update([[a], [b]], ranks=ranks)

    def display(self, player: str) -> tuple[float, float]:
        """``player``'s rating and its standard deviation on the fixed Elo display scale
        (``center + (mu - mu0) * scale``, ``sigma * scale``): unlike :meth:`result`'s, these do
        not move when other players' do, so they can be logged and stored as they change.

        >>> ratings = OpenSkillRatings(center=1200.0)
        >>> rating, sigma = ratings.display("new")
        >>> round(rating), round(sigma)
        (1200, 246)
        """
        rated = self._rating(player)
        mu0 = float(self.model.mu)
        return self.center + (float(rated.mu) - mu0) * self.scale, float(rated.sigma) * self.scale

    def set_display(self, player: str, rating: float, sigma: float) -> None:
        """Give ``player`` a rating and standard deviation on the display scale (see
        :meth:`display`): a stored one read back, or another player's (a snapshot starts at the
        learner's)."""
        mu = float(self.model.mu) + (float(rating) - self.center) / self.scale
        self._ratings[player] = self.model.rating(
            mu=mu, sigma=max(float(sigma) / self.scale, 1e-9), name=player
        )

    def __contains__(self, player: object) -> bool:
        return player in self._ratings

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
        z = z_value(confidence)
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
