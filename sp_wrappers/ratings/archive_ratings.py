"""Ratings of an archive's snapshots from its whole match history.

A Bradley-Terry fit over the archive's whole match history (training and evaluation games) on
the Elo scale, anchored to a baseline, with per-snapshot games and results against the baselines;
it can be written back into the archive's snapshot ratings. Beside it, the ``openskill`` skill
rating and its uncertainty (Weng-Lin, PlackettLuce) from the same games played in order, as the
training callback keeps it online. A person who played snapshots
(``sp-wrappers play --record``, player :data:`~sp_wrappers.archive.matches.HUMAN`) is rated with
the players, not as a baseline.

Training games recorded under the learner's name are credited to the snapshot the learner
descended from at the time (:func:`attributed_games`), which :mod:`sp_wrappers.evaluation.match`'s
payoff tables use too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..archive.matches import HUMAN
from ..archive.store import as_archive
from .attribution import attributed_games

__all__ = ["archive_ratings", "store_archive_ratings", "ArchiveRatings", "SnapshotRating"]


@dataclass
class SnapshotRating:
    """One snapshot's line in :class:`ArchiveRatings`.

    :param baseline_results: ``baseline -> (wins, draws, losses)`` of the snapshot.
    """

    id: str
    step: int
    rating: float
    low: float
    high: float
    std_error: float
    games: int
    baseline_results: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    #: the ``openskill`` rating over the same games in order, on the same scale and anchor
    skill: float = math.nan
    #: its standard deviation (Elo points)
    skill_sigma: float = math.nan

    @property
    def baseline_games(self) -> int:
        return sum(sum(r) for r in self.baseline_results.values())

    @property
    def win_rate_vs_baselines(self) -> float:
        """Wins over games against every baseline (draws count as no win); ``nan`` if none."""
        n = self.baseline_games
        return sum(r[0] for r in self.baseline_results.values()) / n if n else math.nan


@dataclass
class ArchiveRatings:
    """Bradley-Terry ratings of an archive's snapshots and baselines on the Elo scale.

    :param fit: the :func:`~sp_wrappers.fit_bradley_terry` result over every player.
    :param snapshots: one :class:`SnapshotRating` per listed snapshot, oldest first (unrated
        snapshots have ``nan`` ratings and 0 games).
    :param baselines: the reference players (every player that is neither a snapshot nor a
        person) and their ratings.
    :param anchor: the player pinned at ``anchor_rating`` (``None`` when absent from the games).
    :param humans: the people who played snapshots (``"human"``) and their ratings: players,
        listed after the snapshots, never counted as baselines.
    :param skill: the ``openskill`` ratings over the same games in order
        (:class:`~sp_wrappers.ratings.results.TeamRatingResult`: ``ratings``, ``std_errors``),
        anchored as the fit; ``None`` when not computed.
    """

    fit: Any
    snapshots: list[SnapshotRating]
    baselines: dict[str, float]
    anchor: str | None
    anchor_rating: float
    humans: dict[str, float] = field(default_factory=dict)
    skill: Any = None

    def skill_text(self, player: str) -> str:
        """``player``'s skill and its standard deviation as text (``"1234 ± 56"``; ``"-"``)."""
        if self.skill is None or player not in self.skill.ratings:
            return "-"
        return f"{self.skill.ratings[player]:.0f} ± {self.skill.std_errors[player]:.0f}"

    def table(self) -> str:
        """A text table: snapshot, step, rating, 95% interval, games, results vs baselines; the
        people who played follow the snapshots, then the baselines."""
        names = sorted(self.baselines)
        header = ["snapshot", "step", "rating", "95% CI", "skill ± σ", "games"]
        header += ["win% vs baselines"]
        header += [f"vs {b} (W-D-L)" for b in names]
        rows = [header]
        for s in self.snapshots:
            rated = not math.isnan(s.rating)
            rate = s.win_rate_vs_baselines
            row = [
                s.id,
                str(s.step),
                f"{s.rating:.0f}" if rated else "-",
                self._interval_text(s.id, s.low, s.high) if rated else "-",
                self.skill_text(s.id),
                str(s.games),
                "-" if math.isnan(rate) else f"{100 * rate:.0f}%",
            ]
            row += [
                "{}-{}-{}".format(*s.baseline_results[b]) if b in s.baseline_results else "-"
                for b in names
            ]
            rows.append(row)
        others = [(n, self.humans[n]) for n in sorted(self.humans)]
        for name, rating in others + [(n, self.baselines[n]) for n in names]:
            low, high = _interval(self.fit, name)
            games = int(self.fit.games_played.get(name, 0))
            ci = self._interval_text(name, low, high)
            skill = self.skill_text(name)
            row = [name, "-", f"{rating:.0f}", ci, skill, str(games), "-"]
            rows.append(row + ["-"] * len(names))
        widths = [max(len(row[k]) for row in rows) for k in range(len(header))]
        lines = [
            "  ".join(
                c.ljust(w) if k == 0 else c.rjust(w)
                for k, (c, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        note = "Bradley-Terry ratings on the Elo scale over the whole match history, " + (
            f"{self.anchor} fixed at {self.anchor_rating:.0f}."
            if self.anchor
            else "mean-centred (no anchor among the players)."
        )
        note += (
            " Skill: openskill's Weng-Lin (PlackettLuce) rating over the same games in order, on "
            "the same scale, with its standard deviation."
        )
        return "\n".join(lines + ["", note])

    def _interval_text(self, player: str, low: float, high: float) -> str:
        if player == self.anchor:
            return "anchor"
        return f"[{low:.0f}, {high:.0f}]" if math.isfinite(low) else "-"

    def rows(self) -> list[dict[str, Any]]:
        """Every snapshot and baseline as a plain dict (what ``sp-wrappers ratings --json`` prints).

        Keys: ``id``, ``kind`` (``"snapshot"``, ``"human"`` or ``"baseline"``), ``step``,
        ``rating``, ``low``,
        ``high``, ``std_error``, ``skill``, ``skill_sigma`` (``openskill``'s rating and its
        standard deviation), ``games``, ``baseline_results`` (``{baseline: [w, d, l]}``).
        """
        out: list[dict[str, Any]] = [
            dict(
                id=s.id,
                kind="snapshot",
                step=s.step,
                rating=None if math.isnan(s.rating) else s.rating,
                low=s.low if math.isfinite(s.low) else None,
                high=s.high if math.isfinite(s.high) else None,
                std_error=s.std_error if math.isfinite(s.std_error) else None,
                **self._skill_json(s.id),
                games=s.games,
                baseline_results={b: list(r) for b, r in s.baseline_results.items()},
            )
            for s in self.snapshots
        ]
        others = [(n, r, "human") for n, r in sorted(self.humans.items())]
        others += [(n, r, "baseline") for n, r in sorted(self.baselines.items())]
        for name, rating, kind in others:
            low, high = _interval(self.fit, name)
            out.append(
                dict(
                    id=name,
                    kind=kind,
                    step=None,
                    rating=rating,
                    low=low,
                    high=high,
                    std_error=float(self.fit.std_errors.get(name, math.nan)),
                    **self._skill_json(name),
                    games=int(self.fit.games_played.get(name, 0)),
                    baseline_results={},
                )
            )
        return out

    def _skill_json(self, player: str) -> dict[str, float | None]:
        if self.skill is None or player not in self.skill.ratings:
            return {"skill": None, "skill_sigma": None}
        return {
            "skill": float(self.skill.ratings[player]),
            "skill_sigma": float(self.skill.std_errors[player]),
        }

    def __str__(self) -> str:
        return self.table()


def _interval(fit: Any, player: str) -> tuple[float, float]:
    interval = fit.intervals.get(player)
    if interval is None:
        return math.nan, math.nan
    return float(interval[0]), float(interval[1])


def archive_ratings(
    archive: Any,
    anchor: str | None = "random",
    anchor_rating: float = 1000.0,
    config: Mapping[str, Any] | None = None,
) -> ArchiveRatings:
    """Fit Bradley-Terry ratings over an archive's whole match history.

    Training games recorded by :class:`~sp_wrappers.SelfPlayCallback` under the learner's name are
    credited to the snapshot the learner descended from at the time; evaluation games count as
    they are. Ratings are on the Elo scale with 95% intervals.

    :param archive: a :class:`~sp_wrappers.SnapshotArchive` or the path of one.
    :param anchor: the player pinned at ``anchor_rating`` when it has games (e.g. ``"random"``);
        otherwise the fit's own default anchoring applies.
    :param anchor_rating: the anchor's rating.
    :param config: rate only the games whose game configuration has these keys and values
        (games recorded without one count as ``{}``; see :mod:`sp_wrappers.training.env_generator`).
    :raises ValueError: the archive has no rateable games yet.

    >>> import tempfile
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import PerfectTicTacToePolicy, RandomPolicy, SnapshotArchive, play_match
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> _ = play_match(tictactoe_v3.env, PerfectTicTacToePolicy(), RandomPolicy(), 6,
    ...                archive=archive)
    >>> ratings = archive_ratings(archive)
    >>> ratings.baselines["random"], ratings.baselines["minimax"] > 1000
    (1000.0, True)
    """
    from .bradley_terry import fit_bradley_terry

    archive = as_archive(archive, create=False, owner="archive_ratings(archive=...)")
    games = attributed_games(archive, config=config)
    if not games:
        if config is not None:
            raise ValueError(
                f"The archive {archive.path} has no rateable games under the configuration "
                f"{dict(config)}; `sp-wrappers ratings RUN --by-config` lists the ones it has."
            )
        raise ValueError(
            f"The archive {archive.path} has no games to rate yet; train with SelfPlayCallback or "
            "run a tournament (`sp-wrappers tournament`) first."
        )
    seen = {p for g in games for p in g[:2]}
    used_anchor = anchor if anchor is not None and anchor in seen else None
    if used_anchor is None:
        fit = fit_bradley_terry(games)
    else:
        fit = fit_bradley_terry(games, anchor=used_anchor, anchor_rating=anchor_rating)
    skill = _skill_ratings(games, used_anchor, anchor_rating)
    every = archive.snapshots(include_pruned=True)
    listing = [info for info in every if not info.pruned]
    listed = {info.id for info in listing}
    human_ids = {HUMAN} & seen
    baseline_ids = seen - {info.id for info in every} - human_ids
    results: dict[str, dict[str, list[int]]] = {}
    for a, b, score in games:
        for me, other, mine in ((a, b, score), (b, a, 1.0 - score)):
            if me in listed and other in baseline_ids:
                row = results.setdefault(me, {}).setdefault(other, [0, 0, 0])
                row[0 if mine == 1.0 else 2 if mine == 0.0 else 1] += 1
    snapshots = []
    for info in listing:
        rating = float(fit.ratings.get(info.id, math.nan))
        low, high = _interval(fit, info.id)
        snapshots.append(
            SnapshotRating(
                id=info.id,
                step=info.step,
                rating=rating,
                low=low,
                high=high,
                std_error=float(fit.std_errors.get(info.id, math.nan)),
                games=int(fit.games_played.get(info.id, 0)),
                baseline_results={
                    b: (w, d, lo) for b, (w, d, lo) in sorted(results.get(info.id, {}).items())
                },
                skill=float(skill.ratings.get(info.id, math.nan)),
                skill_sigma=float(skill.std_errors.get(info.id, math.nan)),
            )
        )
    baselines = {b: float(fit.ratings[b]) for b in sorted(baseline_ids) if b in fit.ratings}
    humans = {h: float(fit.ratings[h]) for h in sorted(human_ids) if h in fit.ratings}
    return ArchiveRatings(
        fit, snapshots, baselines, used_anchor, float(anchor_rating), humans, skill
    )


def _skill_ratings(games: list[Any], anchor: str | None, anchor_rating: float) -> Any:
    """``openskill`` ratings over ``games`` (``(a, b, score_a)``, in order), anchored as the
    Bradley-Terry fit: on the Elo scale, ``anchor`` at ``anchor_rating``."""
    from .skill import OpenSkillRatings

    rater = OpenSkillRatings(center=anchor_rating)
    for a, b, score in games:
        if a != b:
            rater.update_pair(a, b, score)
    return rater.result(anchor=anchor, anchor_rating=anchor_rating)


def store_archive_ratings(archive: Any) -> ArchiveRatings:
    """Refit the archive's ratings and store each listed snapshot's as ``info.ratings["bt"]``.

    The fit is the one :class:`~sp_wrappers.SelfPlayCallback` stores under ``"bt"`` while
    training (Bradley-Terry over the whole match history, no anchor), so games played later, for
    example by a tournament, reach the stored ratings too. Other keys (``"elo"``) are kept, also
    when another process (a training run) changes them while the fit runs.

    :raises ValueError: the archive has no rateable games yet.

    >>> import tempfile
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sb3_contrib import MaskablePPO
    >>> from sp_wrappers import RandomPolicy, SelfPlayEnv, SnapshotArchive, play_match
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> info = archive.save(MaskablePPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env())), step=0)
    >>> _ = play_match(tictactoe_v3.env, info.id, RandomPolicy(), 4, archive=archive)
    >>> stored = store_archive_ratings(archive)
    >>> archive.get(info.id).ratings["bt"] == stored.snapshots[0].rating
    True
    """
    archive = as_archive(archive, create=False, owner="store_archive_ratings(archive=...)")
    ratings = archive_ratings(archive, anchor=None)
    # Only "bt", merged into each snapshot's stored ratings inside one write transaction: a
    # training run writing its Elo meanwhile keeps it (a read-modify-write of the whole ratings
    # here put back the Elo read before the fit).
    archive.update_ratings(
        {line.id: {"bt": line.rating} for line in ratings.snapshots if math.isfinite(line.rating)}
    )
    return ratings
