"""What a team run ends with: each team's final learner against random teams, and the teams'
ratings as ``ratings.json`` stores them (see :class:`~sp_wrappers.runs.team_train.TeamRun`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .config import TEAM_CONFIG_KIND, TeamRunConfig

__all__ = ["evaluate_teams", "team_ratings", "team_ratings_json", "TEAM_RATINGS_FORMAT_VERSION"]

TEAM_RATINGS_FORMAT_VERSION = 1


def evaluate_teams(
    selfplay: Any,
    env_fn: Callable[[], Any],
    config: TeamRunConfig,
    teams: Sequence[str],
    progress: bool = False,
) -> dict[str, dict[str, Any]]:
    """Each team's final model (sampling its actions, as it trained) against random teams, and
    random play in its place against the same random teams (the baseline of its team return);
    with ``progress``, a tqdm bar over the games (long episodes take minutes).

    :param teams: the game's teams, in order.
    """
    from tqdm.auto import tqdm

    n_games = int(config.eval_games)
    if n_games == 0:
        return {}
    results = {}
    bar = tqdm(
        total=2 * n_games * len(teams),
        desc="final games against random teams",
        unit="game",
        disable=not progress,
        leave=False,
    )
    for index, team in enumerate(teams):
        model = selfplay.models.get(team, selfplay.models.get("shared"))
        seed = int(config.seed) + 10_000 * (index + 1)
        bar.set_postfix_str(team)
        trained = _play_against_random(model, env_fn, config.teams, team, n_games, seed, bar.update)
        baseline = _play_against_random(None, env_fn, config.teams, team, n_games, seed, bar.update)
        results[team] = {
            "games": trained["games"],
            "wins": trained["wins"],
            "draws": trained["draws"],
            "losses": trained["losses"],
            "mean_team_return": trained["mean_team_return"],
            "random_team_return": baseline["mean_team_return"],
            "learner": "sampled actions",
            "opponents": "random",
        }
    bar.close()
    return results


def _play_against_random(
    model: Any,
    env_fn: Callable[[], Any],
    teams: Any,
    team: str,
    n_games: int,
    seed: int,
    on_game: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """``n_games`` episodes of ``team`` (``model``, or uniform random actions when ``None``)
    against random teams: wins, draws, losses (team against team) and the mean team return;
    ``on_game()`` after each."""
    import numpy as np

    from ..training.team_setup import make_team_vec_env

    n_envs = max(1, min(4, n_games))
    venv = make_team_vec_env(env_fn, teams, team, n_envs, seed=seed, monitor=False)
    team_size = venv.num_envs // n_envs
    space = venv.action_space
    space.seed(seed)
    outcomes: list[float] = []
    returns: list[float] = []
    state, starts = None, np.ones(venv.num_envs, dtype=bool)  # a recurrent model's memory
    try:
        obs = venv.reset()
        while len(outcomes) < n_games:
            if model is None:
                actions = np.stack([space.sample() for _ in range(venv.num_envs)])
            else:
                actions, state = model.predict(obs, state, starts, deterministic=False)
            obs, _, dones, infos = venv.step(actions)
            starts = dones
            for slot, (done, info) in enumerate(zip(dones, infos, strict=True)):
                summary = info.get("selfplay") if done else None
                if summary is None or slot % team_size != 0 or len(outcomes) >= n_games:
                    continue  # one record per game copy: its team's first slot
                outcomes.append(float(summary["outcome"]))
                returns.append(float(summary.get("team_return", summary.get("return", 0.0))))
                if on_game is not None:
                    on_game()
    finally:
        venv.close()
    return {
        "games": len(outcomes),
        "wins": sum(o == 1.0 for o in outcomes),
        "draws": sum(o == 0.5 for o in outcomes),
        "losses": sum(o == 0.0 for o in outcomes),
        "mean_team_return": float(np.mean(returns)) if returns else math.nan,
    }


def team_ratings(selfplay: Any) -> dict[str, dict[str, Any]]:
    """``TeamSelfPlay.ratings()`` with each team's newest snapshot's Bradley-Terry rating."""
    ratings = selfplay.ratings()
    for team, entry in ratings.items():
        newest = selfplay.archives[team].latest()
        row = entry["snapshots"].get(newest.id, {}) if newest is not None else {}
        entry["latest_snapshot"] = (
            {
                "id": newest.id,
                "step": newest.step,
                "rating": row.get("bt"),
                "low": row.get("bt_low"),
                "high": row.get("bt_high"),
                "openskill": row.get("openskill"),
                "openskill_low": row.get("openskill_low"),
                "openskill_high": row.get("openskill_high"),
            }
            if newest is not None
            else None
        )
    return ratings


def team_ratings_json(
    ratings: Mapping[str, Any], evaluation: Mapping[str, Any], config: TeamRunConfig
) -> dict[str, Any]:
    return {
        "format_version": TEAM_RATINGS_FORMAT_VERSION,
        "kind": TEAM_CONFIG_KIND,
        "method": "elo: each team's online Elo against the other teams' snapshots; bt: "
        "Bradley-Terry over every team's archive on one scale (Elo scale), 95% intervals; "
        "openskill: OpenSkill (Plackett-Luce) over the same games, Elo scale, 95% intervals",
        "models": dict(config.models or {}),
        "teams": {
            team: {
                "elo": entry["elo"],
                "latest_snapshot": entry["latest_snapshot"],
                "snapshots": entry["snapshots"],
            }
            for team, entry in ratings.items()
        },
        "evaluation": dict(evaluation),
    }
