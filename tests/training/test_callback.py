"""SelfPlayCallback end to end: real SB3 learners on real PettingZoo games, tiny budgets."""

from __future__ import annotations

import csv
import subprocess
import sys
import textwrap

import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from sp_wrappers.archive.store import IncompatibleSnapshotError, SnapshotArchive
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.opponents.sampler import LATEST_ID, OpponentSampler
from sp_wrappers.training.callbacks import SelfPlayCallback

LOGGED_KEYS = {
    "selfplay/elo",
    "selfplay/win_rate",
    "selfplay/draw_rate",
    "selfplay/opponent_elo_mean",
    "selfplay/archive_size",
    "selfplay/snapshots",
}


def make_ttt_env(archive_path: str, seed: int = 0, latest_ratio: float = 0.5) -> SelfPlayEnv:
    """Module level, so SubprocVecEnv can pickle it."""
    sampler = OpponentSampler(SnapshotArchive(archive_path), latest_ratio=latest_ratio, seed=seed)
    return SelfPlayEnv(tictactoe_v3.env(), learner="random", opponent=sampler)


def logged_rows(folder) -> list[dict[str, str]]:
    with open(folder / "progress.csv") as handle:
        return list(csv.DictReader(handle))


def test_ppo_self_play_produces_snapshots_matches_and_logged_keys(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    venv = DummyVecEnv([lambda i=i: make_ttt_env(str(archive.path), i) for i in range(2)])
    model = PPO("MlpPolicy", venv, n_steps=256, batch_size=128, n_epochs=2, seed=0)
    model.set_logger(configure(str(tmp_path / "log"), ["csv"]))
    callback = SelfPlayCallback(archive, save_every=1024, fit_every=2048)
    model.learn(4096, callback=callback)

    snapshots = archive.snapshots()
    assert [s.id for s in snapshots][:2] == ["snapshot-0000", "snapshot-0001"]
    assert snapshots[0].step == 0 and len(snapshots) == 5  # step 0 and every 1024 steps
    matches = archive.matches()
    assert len(matches) > 100
    assert {m.player_a for m in matches} == {"learner"}
    assert {m.player_b for m in matches} >= {"snapshot-0000", LATEST_ID}
    assert all(m.score_a in (0.0, 0.5, 1.0) and m.step is not None for m in matches)
    rows = logged_rows(tmp_path / "log")
    assert LOGGED_KEYS <= set(rows[-1])
    assert "selfplay/bt_rating" in rows[-1]
    assert float(rows[-1]["selfplay/archive_size"]) == len(snapshots)
    assert all("elo" in s.ratings for s in archive.snapshots())


def test_elo_moves_with_results_and_both_sides_are_updated(tmp_path):
    archive = SnapshotArchive(tmp_path)
    env = make_ttt_env(str(tmp_path), latest_ratio=0.0)
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=0)
    callback = SelfPlayCallback(archive, save_every=10**9, elo_k=32)
    model.learn(1024, callback=callback)
    stored = archive.get("snapshot-0000").ratings["elo"]
    learner = callback.elo.rating("learner")
    # Zero-sum updates between the learner and its only opponent, both starting at 1200.
    assert learner != 1200.0
    assert learner + stored == pytest.approx(2400.0)


def test_new_snapshots_and_latest_weights_reach_subprocess_workers(tmp_path):
    path = str(tmp_path / "archive")
    archive = SnapshotArchive(path)
    venv = SubprocVecEnv([lambda i=i: make_ttt_env(path, i) for i in range(2)], "spawn")
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=128, n_epochs=1, seed=0)
        model.learn(2048, callback=SelfPlayCallback(archive, save_every=512))
    finally:
        venv.close()
    faced = {m.player_b for m in archive.matches()}
    assert LATEST_ID in faced  # the workers received the learner's weights
    assert faced & {"snapshot-0002", "snapshot-0003"}  # and saw snapshots saved mid-run


def test_runs_alongside_sb3_callbacks_in_a_callback_list(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    env = make_ttt_env(str(archive.path))
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=0)
    checkpoints = CheckpointCallback(save_freq=256, save_path=str(tmp_path / "ckpt"))
    model.learn(
        512, callback=CallbackList([checkpoints, SelfPlayCallback(archive, save_every=256)])
    )
    assert len(list((tmp_path / "ckpt").glob("*.zip"))) == 2
    assert len(archive) == 3


def test_a_second_run_resumes_numbering_ratings_and_match_history(tmp_path):
    path = str(tmp_path)
    model = MaskablePPO("MlpPolicy", make_ttt_env(path), n_steps=128, batch_size=64, seed=0)
    model.learn(512, callback=SelfPlayCallback(SnapshotArchive(path), save_every=256))
    first = SnapshotArchive(path)
    history = first.matches()
    assert [s.id for s in first.snapshots()] == [f"snapshot-000{i}" for i in range(3)]
    first.set_player_ratings({"learner": {"elo": 1500.0}})

    again = MaskablePPO("MlpPolicy", make_ttt_env(path), n_steps=128, batch_size=64, seed=1)
    callback = SelfPlayCallback(SnapshotArchive(path), save_every=256, elo_k=1)
    again.learn(256, callback=callback)
    resumed = SnapshotArchive(path)
    assert [s.id for s in resumed.snapshots()][-1] == "snapshot-0003"  # no second snapshot 0
    # The learner starts from its own stored rating; with K=1 it cannot drift far.
    assert resumed.get("snapshot-0003").ratings["elo"] > 1450
    assert resumed.matches()[: len(history)] == history
    new_matches = resumed.matches()[len(history) :]
    assert new_matches and min(m.step for m in new_matches) >= 512  # steps continue
    assert resumed.get("snapshot-0003").step == 512 + 256


def test_win_rate_gate_holds_saves_until_the_learner_wins_enough(tmp_path):
    archive = SnapshotArchive(tmp_path)
    model = MaskablePPO("MlpPolicy", make_ttt_env(str(tmp_path)), n_steps=128, batch_size=64)
    model.learn(768, callback=SelfPlayCallback(archive, save_every=128, win_rate_threshold=1.0))
    assert len(archive) == 1  # only the snapshot saved at the start
    model.learn(
        768,
        callback=SelfPlayCallback(archive, save_every=128, win_rate_threshold=0.0),
        reset_num_timesteps=False,
    )
    assert len(archive) > 3


def test_an_archive_for_another_game_is_refused_before_training(tmp_path):
    archive = SnapshotArchive(tmp_path)
    c4 = MaskablePPO("MlpPolicy", SelfPlayEnv(connect_four_v3.env()), n_steps=64)
    archive.save(c4, step=0)
    env = SelfPlayEnv(tictactoe_v3.env())  # opponents: random, so only the callback checks
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64)
    with pytest.raises(IncompatibleSnapshotError, match="new archive directory"):
        model.learn(64, callback=SelfPlayCallback(archive))


def test_an_opponent_snapshot_for_another_game_is_named_when_drawn(tmp_path):
    archive = SnapshotArchive(tmp_path)
    c4 = MaskablePPO("MlpPolicy", SelfPlayEnv(connect_four_v3.env()), n_steps=64)
    archive.save(c4, step=0)
    with pytest.raises(ValueError, match="snapshot-0000.*seat.*new archive directory"):
        make_ttt_env(str(tmp_path)).reset(seed=0)


FULL_DISK_DURING_TRAINING = """
import resource, signal, sys
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.training.callbacks import SelfPlayCallback
sys.path.insert(0, {tests!r})
from test_callback import make_ttt_env

class FillTheDisk(BaseCallback):
    def _on_step(self):
        if self.num_timesteps == 200:
            size = archive.latest().file.stat().st_size
            resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, size // 2))
        return True

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
archive = SnapshotArchive({path!r})
model = MaskablePPO("MlpPolicy", make_ttt_env({path!r}), n_steps=128, batch_size=64)
selfplay = SelfPlayCallback(archive, save_every=256)
model.learn(4096, callback=CallbackList([FillTheDisk(), selfplay]))
print("stopped at", model.num_timesteps, "|", selfplay.stop_reason)
"""


def test_a_full_disk_stops_training_with_a_message_and_keeps_saved_snapshots(tmp_path):
    tests = str(__import__("pathlib").Path(__file__).parent)
    code = FULL_DISK_DURING_TRAINING.format(tests=tests, path=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    line = result.stdout.strip().splitlines()[-1]
    assert "Stopping training" in line and "intact" in line
    assert int(line.split()[2]) < 4096
    archive = SnapshotArchive(tmp_path)
    assert [s.id for s in archive.snapshots()] == ["snapshot-0000"]
    archive.load_policy("snapshot-0000")
