"""SelfPlayCallback measures the Nash sampler's missing payoffs, logs the mixture and stores it."""

from __future__ import annotations

import csv

import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import configure

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv
from sp_wrappers.opponents.sampler import OpponentSampler
from sp_wrappers.training.callbacks import SelfPlayCallback
from sp_wrappers.training.nash_games import mixture_statistics


def train(tmp_path, strategy: str = "nash", steps: int = 2048, **callback_kwargs):
    archive = SnapshotArchive(tmp_path / "archive")
    sampler = OpponentSampler(archive, window=4, latest_ratio=0.0, strategy=strategy, seed=0)
    env = SelfPlayEnv(tictactoe_v3.env, opponent=sampler)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=256, batch_size=64, seed=0, policy_kwargs={"net_arch": [16]}
    )
    model.set_logger(configure(str(tmp_path / "log"), ["csv"]))
    callback = SelfPlayCallback(archive, save_every=400, **callback_kwargs)
    model.learn(steps, callback=callback)
    with open(tmp_path / "log" / "progress.csv") as handle:
        rows = list(csv.DictReader(handle))
    return archive, sampler, callback, rows


def test_a_nash_run_plays_the_missing_pairs_and_logs_and_stores_its_mixture(tmp_path):
    archive, sampler, callback, rows = train(tmp_path)
    assert len(archive) >= 5
    # Every pair of the window met in evaluation games: the mixture rests on measured results.
    assert sampler.missing_pairs() == []
    evaluation = archive.matches(source="evaluation")
    snapshots = {info.id for info in archive.snapshots()}
    assert evaluation and all({m.player_a, m.player_b} <= snapshots for m in evaluation)
    assert callback.nash.games_played == len(evaluation)
    # Stored with the run: the mixture of the last save, over the window's snapshots.
    stored = archive.stored_mixture()
    assert stored["mixture"] == pytest.approx(sampler.nash_mixture, abs=1e-9)
    assert set(stored["mixture"]) == set(sampler.eligible_ids())
    assert sum(stored["mixture"].values()) == pytest.approx(1.0)
    assert stored["missing_pairs"] == 0 and stored["step"] == archive.latest().step
    # Logged through SB3's logger.
    logged = [r for r in rows if r.get("selfplay/nash_support")]
    assert logged
    last = logged[-1]
    assert 1 <= int(float(last["selfplay/nash_support"])) <= 4
    assert float(last["selfplay/nash_entropy"]) >= 0.0
    assert last["selfplay/nash_top"].startswith("snapshot-")


def test_a_nash_run_on_the_vector_env_plays_its_missing_pairs_too(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    sampler = OpponentSampler(archive, window=3, latest_ratio=0.0, strategy="nash", seed=0)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, opponent=sampler)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, seed=0)
    model.learn(1024, callback=SelfPlayCallback(archive, save_every=300))
    assert len(archive) >= 3 and sampler.missing_pairs() == []
    assert archive.matches(source="evaluation") and archive.stored_mixture() is not None


def test_the_games_per_save_are_bounded(tmp_path):
    archive, sampler, callback, _ = train(tmp_path, nash_games=2, nash_games_per_pair=2)
    saves = len(archive.snapshots(include_pruned=True))
    assert 0 < len(archive.matches(source="evaluation")) <= 2 * saves
    assert callback.nash.games_played <= 2 * saves


def test_a_run_that_does_not_draw_by_nash_plays_no_evaluation_games(tmp_path):
    archive, _, callback, rows = train(tmp_path, strategy="pfsp", steps=1024)
    assert archive.matches(source="evaluation") == []
    assert archive.stored_mixture() is None
    assert not any(r.get("selfplay/nash_support") for r in rows)


def test_mixture_statistics_name_the_support_entropy_and_heaviest_snapshots():
    stats = mixture_statistics({"a": 0.5, "b": 0.5, "c": 0.0})
    assert stats["support"] == 2 and stats["top_weight"] == 0.5
    assert stats["entropy"] == pytest.approx(0.6931, abs=1e-4)
    assert stats["top"] == "a=0.500 b=0.500 c=0.000"
