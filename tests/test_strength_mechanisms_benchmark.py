"""``benchmarks/strength_mechanisms.py`` at a smoke budget: every arm trains, is evaluated and
reported (the full benchmark runs for hours; these are its plumbing, not its figures)."""

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

BENCHMARK = Path(__file__).parent.parent / "benchmarks" / "strength_mechanisms.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("strength_mechanisms", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SMOKE = ["--timesteps", "128", "--depths", "1", "--plies", "1", "--n-envs", "2",
         "--hp", "n_steps=32", "--hp", "batch_size=64", "--chunk-steps", "64",
         "--quiet-steps", "64"]  # fmt: skip


def test_every_arm_trains_the_same_budget_and_is_reported(tmp_path, capsys):
    benchmark = load_benchmark()
    assert benchmark.main(["--out", str(tmp_path), *SMOKE, "--eval-every", "0"]) == 0
    out = capsys.readouterr().out
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results["arms"]) == {"mlp", "board", "board_sym", "mlp_sym", "pfsp", "league"}
    for arm, info in results["arms"].items():
        assert info["steps"] >= 128, arm  # whole rollouts: at least the budget
        assert sum(info["against"]["alphabeta-d1"]["wdl"]) == 14  # 7 openings x both seats
        low, high = info["rating_interval"]
        assert low <= info["rating"] <= high
        assert info["steps_per_second"] > 0
        if arm != "league":  # its quiet speed measured first, the same command alone
            quiet = json.loads((tmp_path / f"{arm}-quiet.json").read_text())
            assert quiet["steps"] == 64 and quiet["steps_per_second"] > 0
            assert info["speed_ratio"] == info["steps_per_second"] / quiet["steps_per_second"]
            assert not (tmp_path / f"{arm}-quiet").exists()
    league = results["arms"]["league"]
    assert league["shares"]["main_agent_0"] == 0.5 and league["features"] == "board_sym"
    assert sum(league["steps_per_player"].values()) == league["steps"]
    assert len(results["head_to_head"]) == 15
    assert all(sum(wdl) == 14 for wdl in results["head_to_head"].values())
    assert "| league |" in out and "Head to head" in out
    configs = {
        a: json.loads((tmp_path / a / "config.json").read_text())
        for a in ("mlp", "board", "mlp_sym", "pfsp")
    }
    assert configs["mlp_sym"]["hyperparams"]["policy_kwargs"] == {"net_arch": [256, 256]}
    assert configs["mlp_sym"]["symmetries"] and not configs["mlp"].get("symmetries")
    assert configs["pfsp"]["sampler"]["strategy"] == "pfsp"
    assert configs["board"]["sampler"]["strategy"] == "uniform"
    assert configs["mlp"]["hyperparams"]["policy_kwargs"] == {"net_arch": [256, 256]}
    assert "features_extractor_class" in configs["board"]["hyperparams"]["policy_kwargs"]
    assert configs["mlp"]["sampler"]["reference_ratio"] == 0


def test_a_strength_curve_is_measured_during_training_and_arms_are_not_retrained(tmp_path, capsys):
    benchmark = load_benchmark()
    argv = ["--out", str(tmp_path), *SMOKE, "--eval-every", "64", "--arms", "board_sym", "league",
            "--exploit-steps", "64"]  # fmt: skip
    assert benchmark.main(argv) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    for arm in ("board_sym", "league"):  # a learned best response against each final learner
        exploit = results["arms"][arm]["exploit"]
        assert exploit["steps"] >= 64 and exploit["final"]["games"] == 14
        assert exploit["curve"][0]["step"] == 0 and "lower bound" in exploit["bound"]
        assert (tmp_path / f"exploit-{arm}-64.json").exists()
    curve = results["arms"]["board_sym"]["curve"]
    assert [point["step"] for point in curve][:2] == [0, 64] and curve[-1]["step"] >= 128
    assert set(curve[0]["scores"]) == {"alphabeta-d1", "alphabeta-d2", "alphabeta-d4"}
    assert results["arms"]["league"]["curve"]  # the main agent, at the league's steps
    first = (tmp_path / "board_sym" / "done.json").read_text()
    again = ["--out", str(tmp_path), *SMOKE, "--eval-every", "64", "--arms", "board_sym"]
    assert benchmark.main(again) == 0
    assert (tmp_path / "board_sym" / "done.json").read_text() == first
    out = capsys.readouterr().out
    assert "curve" in out and "Learned best response (a lower bound on exploitability" in out


def test_an_arm_killed_mid_run_resumes_from_its_checkpoint(tmp_path):
    """A real benchmark process SIGKILLed after its first checkpoint: `--resume` continues the
    arm, which ends on an uninterrupted run's steps with one curve point per step."""
    benchmark = load_benchmark()
    argv = ["--out", str(tmp_path), "--timesteps", "1024", "--depths", "1", "--plies", "1",
            "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=64", "--arms", "board",
            "--eval-every", "512", "--save-every", "128", "--heartbeat", "0.2",
            "--quiet-steps", "64"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(BENCHMARK.parent.parent)}
    process = subprocess.Popen(
        [sys.executable, str(BENCHMARK), *argv], env=env, stdout=subprocess.DEVNULL
    )
    checkpoint = tmp_path / "board" / "model.zip"
    deadline = time.monotonic() + 180
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert checkpoint.exists() and not (tmp_path / "board" / "done.json").exists()
    with pytest.raises(SystemExit, match="--resume"):  # a half-trained arm is not overwritten
        benchmark.main(argv)
    assert benchmark.main([*argv, "--resume"]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    arm = results["arms"]["board"]
    assert arm["steps"] == 1024  # whole rollouts of 64, as uninterrupted
    history = json.loads((tmp_path / "board" / "config.json").read_text())["history"]
    assert [h["resumed"] for h in history] == [False, True]
    assert history[1]["from_step"] >= 128 and history[1]["from_step"] % 64 == 0
    steps = [point["step"] for point in arm["curve"]]
    assert steps == sorted(set(steps))  # no point twice; the resumed session measures its start
    assert set(steps) - {history[1]["from_step"]} == {0, 512, 1024}
    assert arm["sessions"] == 2 and arm["wall_seconds"] > 0 and arm["load_max"] >= 0
    assert arm["steps_per_second"] > 0 and arm["quiet_steps_per_second"] > 0  # measured once
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert {x["event"] for x in lines} >= {"start", "heartbeat", "trained", "evaluated"}
    assert benchmark.main(["--out", str(tmp_path), "--report"]) == 0
    assert "| board | " in (tmp_path / "report.md").read_text()


def test_an_arm_whose_last_session_was_killed_takes_its_speed_from_its_heartbeats(tmp_path):
    # a training session killed after 4M steps leaves no timing in config.json; a later session
    # that only finished the arm (nothing to learn) moved no step and says nothing of the speed
    benchmark = load_benchmark()
    lines = [
        {"event": "start", "arm": "a", "session": "1", "time": 100.0, "step": 0},
        {"event": "heartbeat", "arm": "a", "session": "1", "time": 160.0, "step": 120_000},
        {"event": "heartbeat", "arm": "b", "session": "1", "time": 170.0, "step": 999_999},
        {"event": "heartbeat", "arm": "a", "session": "1", "time": 300.0, "step": 400_000},
        {"event": "start", "arm": "a", "session": "2", "time": 900.0, "step": 400_000},
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert benchmark.heartbeat_rate(tmp_path, "a") == 2000.0
    assert benchmark.heartbeat_rate(tmp_path, "c") is None


def test_a_screening_arm_on_two_seeds_reports_its_tactics_mean_and_spread(tmp_path, capsys):
    benchmark = load_benchmark()
    argv = ["--out", str(tmp_path), *SMOKE, "--eval-every", "0", "--arms", "gamma90",
            "openings16", "--seeds", "0", "1"]  # fmt: skip
    assert benchmark.main(argv) == 0
    out = capsys.readouterr().out
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results["arms"]) == {"gamma90", "gamma90-s1", "openings16", "openings16-s1"}
    for key, info in results["arms"].items():
        assert (info["arm"], info["seed"]) == (key.split("-s")[0], 1 if "-s1" in key else 0)
        config = json.loads((tmp_path / key / "config.json").read_text())
        assert config["seed"] == info["seed"] and config["symmetries"] == "auto"
        tactics = info["tactics"]  # the final learner's, in its 14 games against depth 1
        assert tactics["opponent"] == "alphabeta-d1" and tactics["positions"] > 0
        assert tactics["safe_chances"] >= tactics["wins_handed"]
    configs = {k: json.loads((tmp_path / k / "config.json").read_text()) for k in results["arms"]}
    assert configs["gamma90"]["hyperparams"]["gamma"] == 0.9
    assert configs["openings16"]["random_openings"] == "0-16"
    assert "random_openings" not in configs["gamma90"]
    assert "| gamma90-s1 |" in out and "Over seeds: mean ± standard deviation" in out
    assert "| gamma90 | 0,1 |" in out and " of " in out  # tactics counts in the table


def test_an_arm_trained_by_an_older_version_is_evaluated_with_tactics_not_retrained(tmp_path):
    benchmark = load_benchmark()
    argv = ["--out", str(tmp_path / "trained"), *SMOKE, "--eval-every", "0", "--arms", "board",
            "--depths", "2"]  # fmt: skip
    assert benchmark.main(argv) == 0
    # the arms trained elsewhere and copied here: done.json names the model where it was trained
    (tmp_path / "trained").rename(tmp_path / "here")
    tmp_path = tmp_path / "here"
    argv[1] = str(tmp_path)
    done = tmp_path / "board" / "done.json"
    old = json.loads(done.read_text())
    for key in ("arm", "seed"):  # what a done.json of before #47 lacks
        old.pop(key)
    done.write_text(json.dumps(old))
    results = json.loads((tmp_path / "results.json").read_text())
    results["arms"]["board"].pop("tactics")
    (tmp_path / "results.json").write_text(json.dumps(results))
    assert benchmark.main(["--out", str(tmp_path), "--report"]) == 0  # read as it is
    model = (tmp_path / "board" / "model.zip").stat().st_mtime_ns
    assert benchmark.main(argv) == 0
    assert (tmp_path / "board" / "model.zip").stat().st_mtime_ns == model
    tactics = json.loads((tmp_path / "results.json").read_text())["arms"]["board"]["tactics"]
    # depth 1 is not among --depths 2: its games are played for the tactics alone
    assert tactics["opponent"] == "alphabeta-d1" and tactics["positions"] > 0
