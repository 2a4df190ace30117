"""The learner's Elo survives a resume: the archive keeps the learner's own rating and the fixed
opponents' (``random``), a resumed run logs first the Elo it logged last, in process and for a
``sp-wrappers train`` killed with SIGKILL and resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger

from sp_wrappers import (
    OpponentSampler,
    RandomPolicy,
    SelfPlayCallback,
    SelfPlayVecEnv,
    SnapshotArchive,
)
from sp_wrappers.archive.checks import ArchiveFormatError
from sp_wrappers.archive.history import PLAYER_RATING_KEY

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _one_thread() -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class EloLog(KVWriter):
    """Every ``selfplay/elo`` the logger writes, at full precision."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def write(self, key_values: dict[str, Any], key_excluded: Any, step: int = 0) -> None:
        if "selfplay/elo" in key_values:
            self.values.append(float(key_values["selfplay/elo"]))

    def close(self) -> None:
        pass


class SeenAtStart(BaseCallback):
    """What the self-play callback before it in the list rates each player when learn starts."""

    def __init__(self, selfplay: SelfPlayCallback) -> None:
        super().__init__()
        self.selfplay = selfplay
        self.ratings: dict[str, float] = {}

    def _on_training_start(self) -> None:
        self.ratings = dict(self.selfplay.elo.ratings)

    def _on_step(self) -> bool:
        return True


def learn(archive: SnapshotArchive, model: Any, steps: int) -> tuple[list[float], dict]:
    log = EloLog()
    model.set_logger(Logger(folder=None, output_formats=[log]))
    selfplay = SelfPlayCallback(archive, save_every=192)
    seen = SeenAtStart(selfplay)
    model.learn(steps, callback=[selfplay, seen], reset_num_timesteps=False)
    return log.values, seen.ratings


def test_a_resumed_callback_goes_on_from_the_learners_own_elo_and_fixed_opponents_keep_theirs(
    tmp_path,
):
    archive = SnapshotArchive(tmp_path / "archive")
    sampler = OpponentSampler(archive, fixed_opponents=[(RandomPolicy(), 0.4)], seed=0)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, opponent=sampler)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    # snapshots at 192 and 384, then 128 more steps: the learner's Elo moves on from the newest
    # snapshot's, and that snapshot's own Elo moves as it plays
    logged, _ = learn(archive, model, 512)
    stored = archive.player_ratings()
    assert stored["learner"]["elo"] == pytest.approx(logged[-1])
    assert stored["random"]["elo"] != 1200.0  # it played and lost points or gained them
    assert archive.latest().ratings["elo"] != pytest.approx(logged[-1])
    model.save(tmp_path / "model.zip")

    # the resume: a fresh model from its checkpoint and a fresh callback on the same archive
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, opponent=sampler)
    resumed = PPO.load(tmp_path / "model.zip", env=venv, device="cpu")
    logged_after, at_start = learn(archive, resumed, 128)
    assert logged_after[0] == pytest.approx(logged[-1])
    assert at_start["learner"] == pytest.approx(logged[-1])
    assert at_start["random"] == pytest.approx(stored["random"]["elo"])


def test_player_ratings_are_kept_apart_from_snapshot_ratings_and_checked(tmp_path):
    archive = SnapshotArchive(tmp_path)
    model = PPO("MlpPolicy", SelfPlayVecEnv(tictactoe_v3.env, n_envs=1), n_steps=32, device="cpu")
    info = archive.save(model, step=0)
    archive.set_player_ratings({"learner": {"elo": 1314.5}, "random": {"elo": 1020.0}})
    archive.set_player_ratings({"learner": {"elo": 1320.0}})  # replaces the learner's only
    assert archive.player_ratings() == {
        "learner": {"elo": 1320.0},
        "random": {"elo": 1020.0},
    }
    with pytest.raises(ValueError, match="set_ratings"):
        archive.set_player_ratings({info.id: {"elo": 1250.0}})
    with pytest.raises(ValueError, match="finite"):
        archive.set_player_ratings({"random": {"elo": float("nan")}})
    archive.close()
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    conn.execute(
        'UPDATE meta SET value = \'{"elo": "high"}\' WHERE key = ?',
        (PLAYER_RATING_KEY + "random",),
    )
    conn.commit()
    conn.close()
    with pytest.raises(ArchiveFormatError, match="delete the meta row"):
        SnapshotArchive(tmp_path).player_ratings()


# -- a real `sp-wrappers train`, killed with SIGKILL and resumed ----------------------------------
TINY = [
    "--n-envs", "2", "--hp", "n_steps=64", "--hp", "batch_size=64", "--hp", "n_epochs=1",
    "--save-every", "256", "--random-ratio", "0.3", "--eval-games", "2", "--no-plots",
]  # fmt: skip
SHOWN_ELO = re.compile(rb"elo=(\d+)")


def train(*argv: str) -> subprocess.Popen:
    """The CLI with its progress bar (tqdm on stderr: the Elo it shows is what we read)."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "sp_wrappers.cli", "train", *argv],
        env={**os.environ, "PYTHONPATH": path},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def steps_in(run: Path) -> int:
    """The learner steps in the run's model.zip checkpoint (-1 before the first one)."""
    try:
        with zipfile.ZipFile(run / "model.zip") as model:
            return int(json.loads(model.read("data"))["num_timesteps"])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return -1


def stored_ratings(run: Path) -> dict[str, float]:
    """The player ratings in the run's archive, read straight from its index."""
    conn = sqlite3.connect(run / "archive" / "index.sqlite", timeout=30)
    try:
        rows = conn.execute("SELECT key, value FROM meta WHERE key LIKE 'player_rating:%'")
        return {k[len(PLAYER_RATING_KEY) :]: json.loads(v)["elo"] for k, v in rows}
    finally:
        conn.close()


def stop_when(proc: subprocess.Popen, ready: Any, timeout: float = 300.0) -> bytes:
    """Read the run's stderr until ``ready(output)`` holds, then SIGSTOP it; its output."""
    output = b""
    deadline = time.monotonic() + timeout
    fd = proc.stderr.fileno()
    os.set_blocking(fd, False)
    while not ready(output):
        assert time.monotonic() < deadline, output[-2000:]
        assert proc.poll() is None, output[-2000:]
        try:
            output += os.read(fd, 65536) or b""
        except BlockingIOError:
            time.sleep(0.002)
    os.killpg(proc.pid, signal.SIGSTOP)
    return output


def sigkill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_train_killed_and_resumed_shows_first_the_elo_it_had_at_the_kill(tmp_path):
    run = tmp_path / "run"
    proc = train("tictactoe_v3", *TINY, "--timesteps", "100000", "--out", str(run))
    # past two snapshots, with games against them and against random
    stop_when(proc, lambda _: steps_in(run) >= 768)
    at_kill = stored_ratings(run)
    sigkill(proc)
    assert "random" in at_kill and at_kill["random"] != 1200.0

    proc = train("--resume", str(run))
    shown = stop_when(proc, lambda output: SHOWN_ELO.search(output) is not None)
    resumed = stored_ratings(run)
    sigkill(proc)
    first_shown = int(SHOWN_ELO.search(shown).group(1))
    assert first_shown == round(at_kill["learner"])  # not the newest snapshot's, nor 1200
    assert resumed["random"] == at_kill["random"]  # random keeps its rating in the archive
