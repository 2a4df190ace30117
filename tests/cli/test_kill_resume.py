"""``sp-wrappers train`` killed with SIGKILL and resumed with ``--resume`` loses nothing it had
recorded: snapshots, match rows, the step count; ratings are refitted after the resume.

(The long version, 10 kills aimed at saves, rating fits and rollouts: benchmarks/kill_resume.py.)
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from sp_wrappers.archive.store import SnapshotArchive

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--n-envs", "2", "--hp", "n_steps=64", "--hp", "batch_size=64", "--hp", "n_epochs=1",
    "--save-every", "128", "--fit-every", "192", "--max-snapshots", "4", "--eval-games", "2",
]  # fmt: skip


def train(*argv: str) -> subprocess.Popen:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "sp_wrappers.cli", "train", *argv, "--no-progress", "--no-plots"],
        env={**os.environ, "PYTHONPATH": path},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def checkpoint(run: Path) -> int:
    """The learner steps in the run's model.zip (-1 before the first checkpoint)."""
    try:
        with zipfile.ZipFile(run / "model.zip") as model:
            return int(json.loads(model.read("data"))["num_timesteps"])
    except (OSError, KeyError, zipfile.BadZipFile):
        return -1


def records(run: Path) -> tuple[dict[str, bool], set[int], dict[str, float]]:
    """(snapshot id -> listed, match ids, stored 'bt' ratings), read straight from the index."""
    conn = sqlite3.connect(run / "archive" / "index.sqlite", timeout=30)
    try:
        rows = conn.execute("SELECT id, pruned, ratings FROM snapshots").fetchall()
        matches = {row[0] for row in conn.execute("SELECT id FROM matches")}
    finally:
        conn.close()
    bt = {sid: json.loads(r)["bt"] for sid, _, r in rows if "bt" in json.loads(r)}
    return {sid: not pruned for sid, pruned, _ in rows}, matches, bt


def kill_when(proc: subprocess.Popen, ready, timeout: float = 120.0) -> None:
    """SIGSTOP the run once ``ready()`` holds (or at the timeout), then SIGKILL it."""
    deadline = time.monotonic() + timeout
    while not ready() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.002)
    os.killpg(proc.pid, signal.SIGSTOP)


def sigkill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def assert_all_kept(run: Path, before: tuple) -> None:
    snapshots, matches, _ = records(run)
    listed_before = {sid for sid, listed in before[0].items() if listed}
    assert set(before[0]) <= set(snapshots), "a snapshot row recorded before the kill is gone"
    assert before[1] <= matches, f"{len(before[1] - matches)} match rows recorded before are gone"
    archive = SnapshotArchive(run / "archive", create=False)
    for sid in listed_before & {sid for sid, listed in snapshots.items() if listed}:
        assert archive.load_policy(sid).policy_id == sid  # complete on disk, hash checked
    archive.close()


def test_train_killed_during_a_save_and_at_random_resumes_without_losing_a_record(tmp_path):
    run = tmp_path / "run"

    # Kill 1: while the model.zip checkpoint is being written (its temporary file exists), the
    # moment where the snapshot of the same step and the checkpoint may disagree.
    proc = train("tictactoe_v3", *TINY, "--timesteps", "100000", "--out", str(run))
    kill_when(proc, lambda: checkpoint(run) >= 256 and any(run.glob(".model.zip.*.tmp")))
    before, at_kill = records(run), checkpoint(run)
    sigkill(proc)
    assert_all_kept(run, before)

    # Kill 2: at a moment well into the resumed run.
    proc = train("--resume", str(run))
    kill_when(proc, lambda: checkpoint(run) >= at_kill + 384)
    history = json.loads((run / "config.json").read_text())["history"]
    assert history[-1]["from_step"] == at_kill, "the resume did not start from the checkpoint"
    first_kill, before, at_kill = before, records(run), checkpoint(run)
    sigkill(proc)
    assert_all_kept(run, first_kill)
    assert_all_kept(run, before)

    # The last resume runs 256 more steps to the end: evaluation, ratings.json, refitted 'bt'.
    proc = train("--resume", str(run), "--timesteps", "256")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    history = json.loads((run / "config.json").read_text())["history"]
    assert history[-1]["from_step"] == at_kill
    assert checkpoint(run) == at_kill + 256
    assert_all_kept(run, first_kill)
    assert_all_kept(run, before)
    _, _, bt = records(run)
    assert any(bt.get(sid) != rating for sid, rating in before[2].items()) or set(bt) - set(
        before[2]
    ), "no 'bt' rating was refitted after the resume"
    archive = SnapshotArchive(run / "archive", create=False)
    assert archive.latest().step == checkpoint(run), "archive steps drifted from the learner's"
    assert len(archive) <= 4 < len(archive.snapshots(include_pruned=True))  # --max-snapshots 4
    assert (run / "ratings.json").is_file()


def test_a_save_removes_the_temporary_file_of_a_save_that_was_killed(tmp_path):
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers import SelfPlayEnv

    archive = SnapshotArchive(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left_over = tmp_path / "snapshots" / f".snapshot-0000.{dead.pid}.tmp"
    left_over.write_bytes(b"half a snapshot")
    alive = tmp_path / "snapshots" / f".snapshot-0007.{os.getpid()}.tmp"
    alive.write_bytes(b"a save in progress")
    model = MaskablePPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env()), n_steps=64, batch_size=64)
    archive.save(model, step=0)
    assert not left_over.exists()
    assert alive.exists()  # its process is alive: a save in progress is never touched


def test_max_snapshots_below_two_and_a_negative_fit_every_are_refused_in_one_line(tmp_path, capsys):
    from sp_wrappers.cli.app import run_command

    for option, value, message in (
        ("--max-snapshots", "1", "--max-snapshots must be at least 2"),
        ("--fit-every", "-1", "--fit-every must be at least 0"),
    ):
        status = run_command("train", ["tictactoe_v3", option, value, "--out", str(tmp_path / "r")])
        assert status == 2
        assert message in capsys.readouterr().err
