"""The end of a league run: the main agents' evaluation, ratings, ``ratings.json`` and the
summary (steps and compute share per player, the main agents' record against the game's
reference players from forced openings).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..league.runner import League
from ..ratings.attribution import league_games
from .summary import duration, evaluate_final

__all__ = ["evaluate_mains", "league_ratings", "league_ratings_json", "summary"]


def evaluate_mains(
    league: League, env_fn: Any, game: str, n_games: int, seed: int
) -> dict[str, dict[str, Any]]:
    """Each main agent's final snapshot against the reference bots, as ``train`` evaluates its
    final learner (deterministic; the games go to the archive as evaluation games)."""
    results: dict[str, dict[str, Any]] = {}
    for learner in league.learners.values():
        snapshot = league.final_snapshots.get(learner.name)
        if learner.role not in ("main_agent", "learner") or snapshot is None:
            continue
        policy = league.archive.load_policy(snapshot, deterministic=True)
        evaluation = evaluate_final(
            policy, snapshot, env_fn, league.archive, game=game, n_games=n_games, seed=seed
        )
        if evaluation:
            results[learner.name] = evaluation
    return results


def league_ratings(league: League) -> Any:
    """Bradley-Terry over every game of the league's archive (``None`` without games)."""
    from ..ratings.bradley_terry import fit_bradley_terry

    games = league_games(league.archive)
    if not games:
        return None
    names = {p for a, b, _ in games for p in (a, b)}
    anchor = "random" if "random" in names else None
    return fit_bradley_terry(games, anchor=anchor, anchor_rating=1000.0 if anchor else None)


def summary(
    league: League, result: Any, ratings: Any, evaluation: Mapping[str, Any], written: list[str]
) -> str:
    """The lines printed at the end: per player steps and speed, each main agent's rating and
    its record against the reference bots."""
    lines = [
        f"League of {len(league.learners)} players on {league.root}: {result.rounds} rounds, "
        f"{league.total_steps():,d} learner steps in total, {len(league.frozen)} frozen players, "
        f"{duration(result.seconds)}.",
        f"Run directory: {league.root}  ({', '.join(written)})",
    ]
    total = max(1, league.total_steps())
    for learner in league.learners.values():
        rate = result.steps_per_second.get(learner.name, float("nan"))
        rate_text = f"{rate:6.0f} steps/s" if rate == rate else "  (no step this call)"
        line = (
            f"  {learner.name:<20} {learner.role:<16} {learner.steps:>10,d} steps "
            f"({learner.steps / total:.0%} of the league's; its compute share "
            f"{league.shares[learner.name]:.0%})  "
            f"{len(learner.snapshots):3d} snapshots  {learner.resets:2d} resets  "
            f"{rate_text}"
        )
        final = league.final_snapshots.get(learner.name)
        if ratings is not None and final in ratings.ratings:
            low, high = ratings.intervals[final]
            line += f"  rating {ratings.ratings[final]:.0f} [{low:.0f}, {high:.0f}] ({final})"
        lines.append(line)
    apart = [
        learner.name
        for learner in league.learners.values()
        if abs(learner.steps / total - league.shares[learner.name]) > 0.05
    ]
    if apart:
        lines.append(
            f"Steps apart from the compute shares ({', '.join(apart)}): the players learn whole "
            "rollouts (n_steps x n_envs) or episodes, more than their shares of so short a run; "
            "the rounds of a longer run bring them to their shares."
        )
    if ratings is not None:
        scale = f"{ratings.anchor} = 1000" if ratings.anchor else "mean = 1500"
        lines.append(f"Ratings: Bradley-Terry over every game in the archive, Elo scale, {scale}.")
    for name, by_bot in evaluation.items():
        lines.append(f"{name} (final, deterministic) against the reference bots:")
        for bot, match in by_bot.items():
            distinct = (
                "" if match.distinct_games is None else f"  ({match.distinct_games} distinct)"
            )
            lines.append(
                f"  vs {bot:<14} {match.wins:4d} W {match.draws:4d} D {match.losses:4d} L{distinct}"
            )
    return "\n".join(lines)


def league_ratings_json(
    ratings: Any, league: League, evaluation: Mapping[str, Any]
) -> dict[str, Any]:
    """The content of a league's ``ratings.json``."""
    return {
        "format_version": 1,
        "method": "bradley-terry over the archive's whole match history (league games credited "
        "to the snapshot each player grew into), Elo scale",
        "anchor": ratings.anchor,
        "players": [row._asdict() for row in ratings.table()],
        "final_snapshots": dict(league.final_snapshots),
        "evaluation": {
            name: {
                bot: {
                    "games": m.n_games,
                    "wins": m.wins,
                    "draws": m.draws,
                    "losses": m.losses,
                    "distinct_games": m.distinct_games,
                    "openings": m.openings,
                }
                for bot, m in by_bot.items()
            }
            for name, by_bot in evaluation.items()
        },
    }
