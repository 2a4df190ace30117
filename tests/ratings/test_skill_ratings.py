"""Skill ratings with their uncertainty (openskill's Weng-Lin model) for team and free-for-all
games: kept online by SelfPlayCallback beside Elo (logged, stored per snapshot), and shown by
``sp-wrappers ratings`` / ``tournament`` and the report beside the Bradley-Terry fit."""

from __future__ import annotations

import csv
import math
import os
from typing import Any

import pytest
import torch
from pettingzoo.classic import texas_holdem_v4
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import configure

from sp_wrappers import OpponentSampler, SelfPlayCallback, SnapshotArchive
from sp_wrappers.envs.vector.factory import make_selfplay_vec_env
from sp_wrappers.ratings.archive_ratings import archive_ratings
from sp_wrappers.ratings.skill import OpenSkillRatings


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def four_player_holdem() -> Any:
    return texas_holdem_v4.env(num_players=4)


def train(
    env: Any, archive: SnapshotArchive, log_dir, steps: int = 384, algo: Any = MaskablePPO
) -> SelfPlayCallback:
    model = algo("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})  # fmt: skip
    model.set_logger(configure(str(log_dir), ["csv"]))
    callback = SelfPlayCallback(archive, save_every=128)
    model.learn(steps, callback=callback)
    env.close()
    return callback


def logged(log_dir) -> list[dict[str, str]]:
    with open(log_dir / "progress.csv") as file:
        return list(csv.DictReader(file))


def check_skill_online(callback: SelfPlayCallback, archive: SnapshotArchive, log_dir) -> None:
    rows = [r for r in logged(log_dir) if r.get("selfplay/skill")]
    assert rows and all(float(r["selfplay/skill_sigma"]) > 0 for r in rows)
    assert [r["selfplay/elo"] for r in rows]  # beside Elo, on the same rows
    initial = OpenSkillRatings(center=1200.0).display("new")[1]
    # the learner's uncertainty shrinks as it plays
    assert float(rows[-1]["selfplay/skill_sigma"]) < initial
    played = archive.scores_against("learner")
    snapshots = archive.snapshots()
    for info in snapshots:
        assert info.ratings["skill_sigma"] > 0 and math.isfinite(info.ratings["skill"])
        skill, sigma = callback.skill.display(info.id)
        assert (info.ratings["skill"], info.ratings["skill_sigma"]) == pytest.approx((skill, sigma))
    assert any(info.id in played for info in snapshots)
    stored = archive.player_ratings()["learner"]
    assert stored["skill"] == pytest.approx(callback.skill.display("learner")[0])


def test_a_four_player_game_rates_each_opposing_seat_with_its_uncertainty(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    env = make_selfplay_vec_env(four_player_holdem, n_envs=2, seed=0,
                                opponent=OpponentSampler(archive, seed=0))  # fmt: skip
    callback = train(env, archive, tmp_path / "log")
    check_skill_online(callback, archive, tmp_path / "log")
    # three opposing seats a game: three rows, each a skill update
    assert max(m.seat_b is not None for m in archive.matches())
    ratings = archive_ratings(archive)
    table = ratings.table()
    assert "skill ± σ" in table.splitlines()[0]
    rated = [s for s in ratings.snapshots if math.isfinite(s.skill)]
    assert rated and all(s.skill_sigma > 0 for s in rated)
    row = next(r for r in ratings.rows() if r["id"] == rated[0].id)
    assert row["skill"] == pytest.approx(rated[0].skill) and row["skill_sigma"] > 0


def test_a_team_game_rates_the_opposing_teams_snapshots(tmp_path):
    # quadrapong: two teams of two paddles, the opposing team played by the archive's snapshots
    import ale_py
    from pettingzoo.atari import quadrapong_v4
    from stable_baselines3 import PPO

    roms = os.path.join(os.path.dirname(ale_py.__file__), "roms")

    def make_quadrapong() -> Any:
        return quadrapong_v4.env(obs_type="ram", auto_rom_install_path=roms, max_cycles=20)

    archive = SnapshotArchive(tmp_path / "archive")
    teams = {"odd": ["first_0", "third_0"], "even": ["second_0", "fourth_0"]}
    env = make_selfplay_vec_env(make_quadrapong, n_envs=1, learner="odd", teams=teams, seed=0,
                                opponent=OpponentSampler(archive, seed=0))  # fmt: skip
    callback = train(env, archive, tmp_path / "log", steps=384, algo=PPO)
    check_skill_online(callback, archive, tmp_path / "log")
    assert {(m.team_a, m.team_b) for m in archive.matches()} == {("odd", "even")}


def test_a_resumed_callback_goes_on_from_the_stored_skill(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    env = make_selfplay_vec_env(four_player_holdem, n_envs=2, seed=0,
                                opponent=OpponentSampler(archive, seed=0))  # fmt: skip
    first = train(env, archive, tmp_path / "log")
    before = first.skill.display("learner")
    env = make_selfplay_vec_env(four_player_holdem, n_envs=2, seed=1,
                                opponent=OpponentSampler(archive, seed=1))  # fmt: skip
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})  # fmt: skip
    model.set_parameters(first.model.get_parameters())
    model.set_logger(configure(str(tmp_path / "log2"), ["csv"]))
    second = SelfPlayCallback(archive, save_every=10_000)
    model.learn(1, callback=second)
    start = logged(tmp_path / "log2")[0]
    assert float(start["selfplay/skill"]) == pytest.approx(before[0])
    assert float(start["selfplay/skill_sigma"]) == pytest.approx(before[1])
