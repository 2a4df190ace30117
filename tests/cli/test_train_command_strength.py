"""``sp-wrappers train`` with the strength mechanisms: the strength callback's logs and plot,
the board extractor of the Connect Four and Go recipes, and ``--symmetries``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap

import pytest

from sp_wrappers.cli.app import run_command
from sp_wrappers.core.networks import BoardExtractor
from sp_wrappers.runs.recipes import BOARD_EXTRACTOR, GO, recipe_for

TINY = ("--n-envs", "2", "--hp", "n_steps=64", "--hp", "batch_size=64", "--save-every", "128")


def train(capsys, *argv: object) -> tuple[int, str, str]:
    status = run_command("train", [str(a) for a in argv] + ["--no-progress"])
    out, err = capsys.readouterr()
    return status, out, err


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_train_logs_strength_against_the_ladder_and_resumes_its_curve(tmp_path, capsys):
    run = tmp_path / "ttt"
    status, out, err = train(
        capsys, "tictactoe_v3", *TINY, "--timesteps", "512", "--strength-every", "256",
        "--eval-games", "2", "--out", run,
    )  # fmt: skip
    assert status == 0, err
    history = json.loads((run / "strength.json").read_text())
    assert history["ladder"] == ["random", "minimax"]
    steps = [e["step"] for e in history["evaluations"]]
    assert steps[0] == 0 and steps[-1] >= 512 and any(256 <= s < 512 for s in steps)
    assert all(sum(e["wdl"]["minimax"]) == 18 for e in history["evaluations"])  # 9 openings x 2
    rows = [r for r in csv_rows(run / "progress.csv") if r.get("eval/rating")]
    assert len(rows) == len(steps)
    assert {"eval/random/score", "eval/minimax/score", "eval/rating_std_error"} <= set(rows[0])
    assert "Strength at step" in out and "minimax" in out
    pytest.importorskip("matplotlib")
    assert (run / "plots" / "strength.png").stat().st_size > 0

    status, out, err = train(capsys, "--resume", run, "--timesteps", "256")
    assert status == 0, err
    resumed = json.loads((run / "strength.json").read_text())["evaluations"]
    assert [e["step"] for e in resumed[: len(steps)]] == steps  # the curve goes on
    assert resumed[-1]["step"] >= steps[-1] + 256
    from_step = json.loads((run / "config.json").read_text())["history"][-1]["from_step"]
    assert csv_rows(run / f"progress-{from_step}.csv")
    assert len(csv_rows(run / "progress.csv")) >= len(steps)  # the first call's rows are kept


def test_strength_evaluations_can_be_turned_off_and_short_runs_skip_them(tmp_path, capsys):
    status, out, err = train(
        capsys, "tictactoe_v3", *TINY, "--timesteps", "256", "--strength-every", "0",
        "--eval-games", "0", "--out", tmp_path / "off",
    )  # fmt: skip
    assert status == 0, err
    assert not (tmp_path / "off" / "strength.json").exists()
    assert json.loads((tmp_path / "off" / "config.json").read_text())["strength_every"] == 0
    status, out, err = train(
        capsys, "tictactoe_v3", *TINY, "--timesteps", "256", "--eval-games", "0",
        "--out", tmp_path / "short",
    )  # fmt: skip
    assert status == 0, err
    assert not (tmp_path / "short" / "strength.json").exists()
    assert "--strength-every N" in out


def test_bad_strength_interval_fails_in_one_line(tmp_path, capsys):
    status, _, err = train(capsys, "tictactoe_v3", "--strength-every", "-5", "--out", tmp_path)
    assert status == 2 and "--strength-every must be" in err and "Traceback" not in err


def test_connect_four_recipe_trains_with_the_board_extractor_and_its_snapshot_loads_elsewhere(
    tmp_path, capsys
):
    hp = recipe_for("connect_four_v3").hyperparams["policy_kwargs"]
    assert hp["features_extractor_class"] == BOARD_EXTRACTOR
    run = tmp_path / "c4"
    status, _, err = train(
        capsys, "connect_four_v3", *TINY, "--timesteps", "256", "--eval-games", "2",
        "--strength-every", "0", "--out", run,
    )  # fmt: skip
    assert status == 0, err
    config = json.loads((run / "config.json").read_text())
    assert config["hyperparams"]["policy_kwargs"]["features_extractor_class"] == BOARD_EXTRACTOR
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(run / "model.zip")
    assert isinstance(model.policy.features_extractor, BoardExtractor)
    script = textwrap.dedent(
        f"""
        from pettingzoo.classic import connect_four_v3
        from sp_wrappers import RandomPolicy, SnapshotArchive, play_match
        archive = SnapshotArchive({str(run / "archive")!r})
        snapshot = archive.latest()
        policy = archive.load_policy(snapshot.id)
        print(type(policy.policy.features_extractor).__name__)
        print(play_match(connect_four_v3.env, policy, RandomPolicy(), n_games=4, seed=0).n_games)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["BoardExtractor", "4"]


def test_go_recipe_chooses_the_board_extractor_and_the_symmetries_of_the_square(tmp_path, capsys):
    recipe = recipe_for(GO)
    assert recipe.hyperparams["policy_kwargs"]["features_extractor_class"] == BOARD_EXTRACTOR
    assert recipe.symmetries == "auto"
    run = tmp_path / "go"
    status, _, err = train(
        capsys, GO, *TINY, "--timesteps", "128", "--eval-games", "0", "--game-kwarg",
        "board_size=5", "--out", run,
    )  # fmt: skip
    assert status == 0, err
    config = json.loads((run / "config.json").read_text())
    assert config["symmetries"] == "auto" and config["game_kwargs"]["board_size"] == 5


def test_symmetries_option_is_recorded_and_a_wrong_one_fails_in_one_line(tmp_path, capsys):
    status, _, err = train(
        capsys, "connect_four_v3", *TINY, "--timesteps", "128", "--eval-games", "0",
        "--symmetries", "auto", "--out", tmp_path / "sym",
    )  # fmt: skip
    assert status == 0, err
    assert json.loads((tmp_path / "sym" / "config.json").read_text())["symmetries"] == "auto"
    status, _, err = train(
        capsys, "connect_four_v3", "--symmetries", "tictactoe_v3", "--out", tmp_path / "bad"
    )
    assert status == 2 and "Traceback" not in err
    assert "--symmetries tictactoe_v3" in err and "--symmetries none" in err
