"""A league's rounds are units: a league killed at any phase of a round resumes with the archive
as of its last complete round, and a player whose worker process is killed mid-round plays its
chunk again, nothing recorded twice (real processes, real SIGKILLs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from pettingzoo.classic import tictactoe_v3

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.league import AlphaStarLeague, League

ROOT = Path(__file__).resolve().parents[2]
CHUNK = 64
ROLES = ["--main-agents", "1", "--main-exploiters", "1", "--league-exploiters", "0"]
TINY = [
    "--chunk-steps", str(CHUNK), "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=32",
    "--hp", "n_epochs=1", "--snapshot-min-steps", str(CHUNK), "--snapshot-max-steps", str(CHUNK),
    "--eval-games", "0", "--backend", "serial", "--no-plots", "--no-progress",
]  # fmt: skip


def assert_recorded_once(root: Path) -> dict:
    """Everything the archive lists is what league.json knows, each round's games once."""
    state = json.loads((root / "league.json").read_text())
    archive = SnapshotArchive(root / "archive")
    steps = {p["name"]: p["steps"] for p in state["learners"]}
    known = {s for p in state["learners"] for s in p["snapshots"]}
    known |= set(state["final_snapshots"].values())
    previous: dict[tuple[str, str], str] = {}
    for info in archive.snapshots():
        parents = [t for t in info.tags if t.startswith("parent:")]
        assert not parents or info.id in known, f"{info.id} {info.tags} is not in league.json"
        for tag in info.tags:
            if tag.startswith("previous:") and "final" not in info.tags:
                key = (parents[0], tag)
                assert key not in previous, f"{info.id} and {previous[key]} both follow {tag}"
                previous[key] = info.id
    last: dict[str, int] = {}
    for match in archive.matches(source="league"):
        assert match.step <= steps[match.player_a], f"game past {match.player_a}'s steps"
        # a round recorded twice would go back to smaller steps
        assert match.step >= last.get(match.player_a, 0), f"{match.player_a} went back in steps"
        last[match.player_a] = match.step
    archive.close()
    return state


# ------------------------------------------------------------------------------------------------
# Kills aimed at each phase of a round (the league command, SIGKILL, --resume)
# ------------------------------------------------------------------------------------------------


def league(*argv: str) -> subprocess.Popen:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "sp_wrappers.cli", "league", *argv],
        env={**os.environ, "PYTHONPATH": path},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def rounds_done(run: Path) -> int:
    try:
        return int(json.loads((run / "league.json").read_text())["round"])
    except (OSError, ValueError, KeyError):
        return -1


def snapshot_files(run: Path) -> int:
    return len(list((run / "archive" / "snapshots").glob("*.safetensors")))


def kill_in(proc: subprocess.Popen, run: Path, phase: str) -> bool:
    """SIGKILL ``proc`` the moment ``phase`` of a round shows on disk; False if it ended first."""
    seen_round, seen_files = rounds_done(run), snapshot_files(run)
    started = None
    while proc.poll() is None:
        now_round = rounds_done(run)
        if now_round != seen_round:
            seen_round, seen_files, started = now_round, snapshot_files(run), time.monotonic()
            continue
        if now_round < 1:  # the first round is where players start: wait for it to complete
            time.sleep(0.01)
            continue
        hit = {
            # the round's snapshots are being written, league.json not yet
            "snapshots": snapshot_files(run) > seen_files,
            # the round's model files are being written, league.json not yet
            "models": any(run.glob(f"players/*/model-{now_round + 1:05d}.zip")),
            # in the middle of learning
            "learning": started is not None and time.monotonic() - started > 0.5,
        }[phase]
        if hit:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.002)
    return False


def test_a_league_killed_in_each_phase_of_a_round_resumes_as_of_its_last_complete_round(tmp_path):
    run = tmp_path / "run"
    total = str(2 * CHUNK * 8)  # 8 rounds of two players
    first = ["tictactoe_v3", *ROLES, "--timesteps", total, *TINY, "--out", str(run)]
    again = ["--resume", str(run), "--timesteps", total, *TINY]
    kills, beyond = 0, 0
    proc = league(*first)
    for phase in ("snapshots", "models", "learning", "snapshots", "models"):
        if not kill_in(proc, run, phase):
            break
        kills += 1
        state = json.loads((run / "league.json").read_text())
        archive = SnapshotArchive(run / "archive")
        listed = {i.id for i in archive.snapshots()}
        known = {s for p in state["learners"] for s in p["snapshots"]}
        beyond += bool(listed - known)
        archive.close()
        proc = league(*again)
    _, err = proc.communicate(timeout=600)
    # a kill that landed after the league's end (its ratings.json written) leaves nothing to
    # resume: the resume is then refused in one line, as `train --resume` does (#33)
    ended_before = proc.returncode == 2 and "already has" in err and "Traceback" not in err
    assert proc.returncode == 0 or ended_before, err[-2000:]
    assert kills >= 3, "the run ended before the kills: give it more rounds"
    assert beyond >= 1, "no kill left a round's snapshots ahead of league.json"
    state = assert_recorded_once(run)
    assert state["round"] == 8


# ------------------------------------------------------------------------------------------------
# A worker process killed mid-round (process backend)
# ------------------------------------------------------------------------------------------------


def tiny_model(env):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1)


def worker_pids() -> list[int]:
    """This process's spawned children (the players' processes)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"spawn_main" in cmdline:  # not the resource tracker
            pids.append(int(entry.name))
    return pids


def test_a_players_process_killed_mid_round_is_replaced_and_the_league_finishes(tmp_path):
    killed: list[int] = []

    def kill_soon(league_: League, results: dict) -> None:
        if league_.round == 1:  # the second round starts when this returns: kill in it

            def kill() -> None:
                time.sleep(0.05)  # while the round's chunks are being learned
                pid = worker_pids()[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

            threading.Thread(target=kill, daemon=True).start()

    builder = AlphaStarLeague(1, 1, 0, snapshot_min_steps=4 * CHUNK, snapshot_max_steps=4 * CHUNK)
    league_ = League(
        tictactoe_v3.env, builder, tiny_model, tmp_path, 4 * CHUNK, 2, on_round=kill_soon
    )
    result = league_.run(2 * 2 * 4 * CHUNK, backend="process")
    assert killed and len(result.lost_workers) == 1, result.lost_workers
    assert "died" in result.lost_workers[0]
    assert result.rounds == 2
    state = assert_recorded_once(tmp_path)
    assert all(p["steps"] == 2 * 4 * CHUNK for p in state["learners"])
