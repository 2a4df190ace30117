"""The end of a run: the final learner against the reference bots, ratings and ``ratings.json``.

What a single-learner run (and a league, for each main agent) does after training: the final
learner, deterministic, against ``RandomPolicy`` and the game's reference bots from the game's
forced openings, seats alternating, recorded as evaluation games with the number of distinct
games played; Bradley-Terry ratings over the archive; the ``ratings.json`` it writes
(:data:`RATINGS_FORMAT_VERSION`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..games.registry import GAMES, reference_opponents

__all__ = [
    "RATINGS_FORMAT_VERSION",
    "duration",
    "evaluate_final",
    "rate_archive",
    "ratings_json",
]

RATINGS_FORMAT_VERSION = 1


def duration(seconds: float) -> str:
    """``seconds`` as ``"3m07s"`` or ``"1h02m03s"``."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def evaluate_final(
    model: Any,
    snapshot_id: str,
    env_fn: Callable[[], Any],
    archive: Any,
    *,
    game: str,
    n_games: int,
    seed: int,
) -> dict[str, Any]:
    """The final learner (deterministic) against ``RandomPolicy`` and the game's reference bots,
    spread over the game's forced openings (:attr:`GameSpec.opening_plies
    <sp_wrappers.games.registry.GameSpec.opening_plies>`), seats alternating; the games go to the
    archive's match history as evaluation games."""
    from ..core.policies import SB3Policy
    from ..evaluation.match import EVALUATION_SOURCE
    from ..evaluation.openings import spread_match

    if n_games == 0:
        return {}
    learner = SB3Policy(model, deterministic=True, policy_id=snapshot_id)
    spec = GAMES.get(game)
    plies = spec.opening_plies if spec is not None else 0
    results = {}
    for index, baseline in enumerate(reference_opponents(game)):
        result = spread_match(
            env_fn,
            learner,
            baseline,
            n_games,
            plies,
            seed=int(seed) + 10_000 * (index + 1),
        )
        archive.record_matches(result.records(source=EVALUATION_SOURCE))
        results[baseline.policy_id] = result
    return results


def rate_archive(archive: Any) -> Any:
    """Bradley-Terry ratings over the archive's whole history, anchored on ``random`` (``None``
    without rateable games)."""
    from ..ratings.archive_ratings import archive_ratings

    try:
        return archive_ratings(archive, anchor="random")
    except ValueError:  # no rateable games (e.g. a tiny run without evaluation games)
        return None


def ratings_json(ratings: Any, final_id: str, evaluation: Mapping[str, Any]) -> dict[str, Any]:
    """The content of ``ratings.json``."""
    final = next((r for r in ratings.rows() if r["id"] == final_id), None)
    return {
        "format_version": RATINGS_FORMAT_VERSION,
        "method": "bradley-terry over the archive's whole match history, Elo scale",
        "anchor": ratings.anchor,
        "anchor_rating": ratings.anchor_rating,
        "final_snapshot": final_id,
        "final": final,
        "evaluation": {
            name: {
                "games": r.n_games,
                "wins": r.wins,
                "draws": r.draws,
                "losses": r.losses,
                "by_seat": {seat: list(wdl) for seat, wdl in r.by_seat().items()},
                "distinct_games": r.distinct_games,
                "openings": r.openings,
                "opening_plies": r.opening_plies,
                "learner": "deterministic",
            }
            for name, r in evaluation.items()
        },
        "players": ratings.rows(),
    }
