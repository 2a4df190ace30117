"""``benchmarks/league.py`` at a smoke budget: an arm's process killed mid-run resumes from its
last complete round and ends where an uninterrupted arm does; the measurements and their table
(the full benchmark runs for hours; this is its plumbing, not its figures)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).parent.parent / "benchmarks" / "league.py"
TINY = ["--timesteps", "1536", "--chunk-steps", "64", "--n-envs", "2", "--hp", "n_steps=32",
        "--hp", "batch_size=64", "--backend", "serial", "--save-every", "256",
        "--snapshot-max-steps", "512", "--heartbeat", "0.2"]  # fmt: skip


def load_benchmark():
    spec = importlib.util.spec_from_file_location("league_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its game tasks travel to worker processes by name
    spec.loader.exec_module(module)
    return module


def test_a_league_arm_killed_mid_run_resumes_and_ends_as_an_uninterrupted_one(tmp_path, capsys):
    benchmark = load_benchmark()
    out, plain = tmp_path / "killed", tmp_path / "uninterrupted"
    argv = ["--out", str(out), *TINY, "--arms", "league"]
    env = {**os.environ, "PYTHONPATH": str(BENCHMARK.parent.parent)}
    process = subprocess.Popen(
        [sys.executable, str(BENCHMARK), *argv], env=env, stdout=subprocess.DEVNULL
    )
    state = out / "league" / "league.json"
    deadline = time.monotonic() + 180
    while process.poll() is None and time.monotonic() < deadline:
        if state.exists() and json.loads(state.read_text() or "{}").get("round", 0) >= 1:
            break  # the first complete round: a checkpoint
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert state.exists() and not (out / "league" / "done.json").exists()
    with pytest.raises(SystemExit, match="--resume"):  # a half-trained arm is not overwritten
        benchmark.main(argv)
    benchmark.main([*argv, "--resume"])
    benchmark.main(["--out", str(plain), *TINY, "--arms", "league"])
    killed = json.loads((out / "league" / "done.json").read_text())
    uninterrupted = json.loads((plain / "league" / "done.json").read_text())
    assert killed["steps_per_player"] == uninterrupted["steps_per_player"]
    assert killed["rounds"] == uninterrupted["rounds"] and killed["steps"] >= 1536
    assert killed["sessions"] == 2 and uninterrupted["sessions"] == 1
    assert killed["load_max"] >= 0 and killed["steps_per_second"] > 0

    measure = ["--out", str(out), *TINY, "--arms", "selfplay", "--depths", "1", "--workers",
               "1", "--exploit-steps", "64"]  # fmt: skip
    benchmark.main(measure)
    result = json.loads((out / "league.json").read_text())
    assert sum(result["records"]["league-main vs selfplay"]) == 98
    assert (out / "exploit-selfplay-64.json").exists()
    benchmark.main(["--out", str(out), "--report"])
    table = capsys.readouterr().out.split("| from 49 openings")[-1]
    assert "head to head" in table and "load average" in table
