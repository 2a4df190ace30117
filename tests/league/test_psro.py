"""PSRO: a tiny real run on Kuhn poker, checked exactly, and a run killed with SIGKILL that
resumes from its last complete iteration."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli import main
from sp_wrappers.evaluation.exploitability import exploitability
from sp_wrappers.games.openspiel_games import kuhn_poker
from sp_wrappers.league.psro import PSRO_STATE, read_psro
from sp_wrappers.runs.players import choose_player
from sp_wrappers.runs.psro import resolve_psro, run_psro
from sp_wrappers.runs.recipes import KUHN_POKER

TINY = {
    "steps_per_iteration": 1024,
    "n_envs": 2,
    "hp": {"n_steps": 128, "batch_size": 64, "n_epochs": 2},
}
TINY_ARGS = ["--steps", "1024", "--n-envs", "2", "--hp", "n_steps=128", "--hp", "batch_size=64"]
TINY_ARGS += ["--hp", "n_epochs=2"]


def test_tiny_kuhn_run_measures_its_meta_mixture_exactly(tmp_path: Path) -> None:
    config = resolve_psro(KUHN_POKER, {**TINY, "iterations": 3, "meta_solver": "nash"})
    lines: list[str] = []
    result = run_psro(config, tmp_path, report=lines.append)
    assert result.iterations == 3 and len(result.members) == 4 and len(lines) == 4
    assert sum(result.weights.values()) == pytest.approx(1.0)
    for record in result.history:
        assert sum(record["weights"].values()) == pytest.approx(1.0)
        assert record["exploitability"] == pytest.approx(record["nash_conv"] / 2)
    # the reported number is the exact exploitability of the mixture the archive holds, each
    # member played greedily, recomputed here independently of the run
    with SnapshotArchive(tmp_path / "archive", create=False) as archive:
        stored = archive.stored_mixture()
        assert stored is not None and stored["mixture"] == pytest.approx(result.weights)
        mixture = [
            (archive.load_policy(sid, deterministic=True), w)
            for sid, w in result.weights.items()
            if w > 0
        ]
        again = exploitability(mixture, kuhn_poker())
    assert again.exploitability == pytest.approx(result.exploitability, abs=1e-9)
    # --snapshot nash (play, watch, tournament, exploitability) plays this same mixture
    with SnapshotArchive(tmp_path / "archive", create=False) as archive:
        choice = choose_player(archive, "nash")
    assert choice.mixture
    assert choice.weights == {k: v for k, v in result.weights.items() if v > 0}
    assert result.history[0]["exploitability"] > result.best["exploitability"]
    state = read_psro(tmp_path / PSRO_STATE)
    payoff = np.asarray(state["payoff"])
    np.testing.assert_allclose(payoff, -payoff.T, atol=1e-12)
    page = (tmp_path / "report.html").read_text()
    assert "<h2>PSRO</h2>" in page
    assert "psro/exploitability" in (tmp_path / "progress.csv").read_text().splitlines()[0]


def test_warm_start_and_stochastic_members_run_and_resume(tmp_path: Path) -> None:
    overrides = {**TINY, "iterations": 2, "warm_start": True, "greedy": False}
    overrides["meta_solver"] = "prd"
    result = run_psro(resolve_psro(KUHN_POKER, overrides), tmp_path)
    assert result.iterations == 2
    assert sorted(p.name for p in tmp_path.glob("oracle-*.zip")) == ["oracle-2.zip"]
    more = run_psro(None, tmp_path, iterations=3)
    assert more.iterations == 3 and more.members[:3] == result.members
    state = read_psro(tmp_path / PSRO_STATE)
    assert state["settings"]["warm_start"] and not state["settings"]["greedy"]


def _iterations(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["iterations"])
    except (OSError, ValueError, KeyError):
        return 0


def test_psro_killed_with_sigkill_resumes_from_its_last_iteration(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [sys.executable, "-m", "sp_wrappers.cli", "psro", KUHN_POKER, "--out", str(run)]
    command += [*TINY_ARGS, "--iterations", "200"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state = run / PSRO_STATE
    try:
        deadline = time.monotonic() + 600
        while _iterations(state) < 3:  # the start and two iterations written
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "PSRO wrote no iterations in 10 minutes"
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    before = read_psro(state)
    done = len(before["iterations"])
    status = main(["psro", "--resume", str(run), "--iterations", str(done)])
    assert status == 0
    after = read_psro(state)
    assert [r["iteration"] for r in after["iterations"]] == list(range(done + 1))
    assert after["members"][:done] == before["members"]
    with SnapshotArchive(run / "archive", create=False) as archive:
        assert [s.id for s in archive.snapshots()] == after["members"]  # no orphan kept


def test_psro_command_refuses_a_resume_with_new_settings(tmp_path: Path, capsys) -> None:
    assert main(["psro", "--resume", str(tmp_path), "--steps", "5", "--iterations", "2"]) == 2
    assert "keeps its game and settings" in capsys.readouterr().err
    assert main(["psro", "--resume", str(tmp_path), "--iterations", "2"]) == 2
    assert "holds no PSRO run" in capsys.readouterr().err


def test_benchmark_psro_arm_writes_a_line_per_iteration(tmp_path: Path) -> None:
    import importlib.util

    path = Path(__file__).parents[2] / "benchmarks" / "exploitability.py"
    spec = importlib.util.spec_from_file_location("exploitability_benchmark_psro", path)
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    # one iteration by count, never by the clock: a fast machine fitted two into 0.5 s
    argv = ["--games", "kuhn", "--strategies", "psro", "--seeds", "1", "--seconds", "600",
            "--out", str(tmp_path), "--psro", "iterations=1",
            "--psro", "steps_per_iteration=512", "--psro", "n_envs=2",
            "--psro", 'hp={"n_steps": 128, "batch_size": 64, "n_epochs": 2}']  # fmt: skip
    assert benchmark.main(argv) == 0
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [0, 512]
    assert all(line["strategy"] == "psro" and line["nash_nash_conv"] >= 0 for line in lines)
    assert lines[0]["nash_exploitability"] == pytest.approx(lines[0]["learner_exploitability"])


def test_sampled_payoffs_keep_their_intervals_and_the_mixture_is_still_measured(tmp_path):
    from pettingzoo.classic import tictactoe_v3

    overrides = {"iterations": 1, "steps_per_iteration": 256, "n_envs": 2}
    overrides.update(payoffs="sampled", games_per_pair=4, hp={"n_steps": 128, "batch_size": 64})
    result = run_psro(resolve_psro("tictactoe_v3", overrides), tmp_path)
    state = read_psro(tmp_path / PSRO_STATE)
    assert np.asarray(state["half_width"]).shape == (2, 2)
    assert list(result.weights) == result.members and result.exploitability is not None
    with SnapshotArchive(tmp_path / "archive", create=False) as archive:
        mixture = [
            (archive.load_policy(sid, deterministic=True), w)
            for sid, w in result.weights.items()
            if w > 0
        ]
        exact = exploitability(mixture, tictactoe_v3.env())
    assert exact.exploitability == pytest.approx(result.exploitability)
