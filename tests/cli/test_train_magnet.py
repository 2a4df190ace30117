"""``sp-wrappers train --magnet``: the settings parsed into ``config.json``, the magnet's state
written beside each checkpoint and restored by ``--resume``, bad input in one line."""

from __future__ import annotations

import csv
import json

import pytest

pytest.importorskip("pyspiel")

from sp_wrappers.cli.app import run_command
from sp_wrappers.runs.config import TrainError
from sp_wrappers.runs.recipes import KUHN_POKER
from sp_wrappers.runs.resolve import resolve_run
from sp_wrappers.training.magnet import MAGNET_STATE, read_magnet_state

TINY = ("--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=64", "--save-every", "128")


def train(capsys, *argv: object) -> tuple[int, str, str]:
    status = run_command(
        "train", [str(a) for a in argv] + ["--no-progress", "--no-plots", "--no-report"]
    )
    out, err = capsys.readouterr()
    return status, out, err


def test_magnet_flag_trains_logs_and_resumes_with_the_saved_magnet(tmp_path, capsys):
    run = tmp_path / "kuhn"
    status, out, err = train(
        capsys, KUHN_POKER, *TINY, "--timesteps", "256", "--eval-games", "2",
        "--exploitability-every", "0", "--magnet", "kl=0.1,refresh=3", "--out", run,
    )  # fmt: skip
    assert status == 0, err
    config = json.loads((run / "config.json").read_text())
    assert config["magnet"] == {"kl": 0.1, "refresh": 3, "unit": "updates", "average": 1}
    assert MAGNET_STATE in out  # the summary lists the file
    with open(run / "progress.csv", newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["time/iterations"]]
    assert [float(r["magnet/refreshes"]) for r in rows] == [0, 0, 1, 1]  # one per update
    assert all(r["magnet/kl"] for r in rows)
    states = read_magnet_state(run / MAGNET_STATE)["states"]
    # the checkpoint at 128 is written during the 2nd rollout, before its update: one update
    assert [(s["step"], s["updates"], s["refreshes"]) for s in states] == [(128, 1, 0), (256, 4, 1)]

    status, out, err = train(capsys, "--resume", run, "--timesteps", "128", "--eval-games", "0")
    assert status == 0, err
    states = read_magnet_state(run / MAGNET_STATE)["states"]
    # it went on from the saved counters (4 updates, 1 since the refresh): the 6th refreshes
    assert [(s["step"], s["updates"], s["refreshes"], s["since"]) for s in states] == [
        (256, 4, 1, 1),
        (384, 6, 2, 0),
    ]


@pytest.mark.parametrize(
    "value, message",
    [
        ("kl=0.1", "--magnet needs refresh="),
        ("kl=0.1,refresh=2,unit=hours", "--magnet unit must be one of updates, steps"),
        ("0.1", "--magnet takes kl=ETA,refresh=N"),
    ],
)
def test_bad_magnet_input_is_one_line_naming_the_flag(tmp_path, capsys, value, message):
    status, out, err = train(capsys, KUHN_POKER, "--magnet", value, "--out", tmp_path / "r")
    assert status == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()  # nothing was written


def test_magnet_with_an_off_policy_learner_names_both_flags(tmp_path, capsys):
    status, out, err = train(
        capsys, KUHN_POKER, "--algo", "dqn", "--magnet", "kl=1,refresh=1", "--out", tmp_path / "r"
    )
    assert status == 2 and "--magnet" in err and "--algo" in err and "dqn" in err


def test_magnet_is_a_single_learner_setting_and_none_turns_it_off():
    config = resolve_run(KUHN_POKER, {"magnet": "kl=0.2,refresh=5,average=2"})
    assert config.magnet == {"kl": 0.2, "refresh": 5, "unit": "updates", "average": 2}
    assert resolve_run(KUHN_POKER, {"magnet": "none"}).magnet is None
    assert "magnet" not in resolve_run(KUHN_POKER, {"magnet": None}).to_json()
    with pytest.raises(TrainError, match="`magnet` applies to single-learner runs"):
        resolve_run("tictactoe_v3", {"teams": "prefix", "magnet": "kl=0.1,refresh=1"})


def test_league_takes_the_magnet_and_refuses_it_for_an_off_policy_learner(tmp_path, capsys):
    tiny = ["--timesteps", "256", "--chunk-steps", "128", "--selfplay", "--n-envs", "2",
            "--hp", "n_steps=32", "--hp", "batch_size=32", "--eval-games", "0",
            "--backend", "serial", "--no-progress", "--no-plots"]  # fmt: skip
    status = run_command(
        "league", [KUHN_POKER, *tiny, "--magnet", "kl=0.1,refresh=2", "--out", str(tmp_path / "l")]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    config = json.loads((tmp_path / "l" / "config.json").read_text())
    assert config["magnet"] == {"kl": 0.1, "refresh": 2, "unit": "updates", "average": 1}
    status = run_command(
        "league",
        [KUHN_POKER, "--algo", "dqn", "--magnet", "kl=0.1,refresh=2", "--out", str(tmp_path / "d")],
    )
    out, err = capsys.readouterr()
    assert status == 2 and "--magnet" in err and "dqn" in err


def test_benchmark_magnet_arm_measures_the_learner_with_the_recipes_magnet(tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "exploitability.py"
    spec = importlib.util.spec_from_file_location("exploitability_benchmark_magnet", path)
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    recipe = resolve_run(KUHN_POKER, benchmark.overrides("kuhn", "magnet", 0))
    assert recipe.magnet is not None and recipe.sampler["latest_ratio"] == 1.0
    plain = resolve_run(KUHN_POKER, benchmark.overrides("kuhn", "nash", 0))
    assert plain.magnet is None and plain.sampler["latest_ratio"] == 0.3  # as measured before
    argv = ["--games", "kuhn", "--strategies", "magnet", "--seeds", "1", "--seconds", "1",
            "--every", "256", "--magnet", "kl=0.3,refresh=2", "--out", str(tmp_path)]  # fmt: skip
    assert benchmark.main(argv) == 0
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert {line["strategy"] for line in lines} == {"magnet"}
    assert all(line["magnet"]["kl"] == 0.3 for line in lines)
    assert all(line["learner_nash_conv"] >= 0 for line in lines)
    capsys.readouterr()
    assert benchmark.main(["--table", str(tmp_path)]) == 0
    assert "| magnet | 0 |" in capsys.readouterr().out
