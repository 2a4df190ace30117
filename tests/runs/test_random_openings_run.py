"""``random_openings``: a learner's games start after random moves it does not learn from, while
its evaluations play the plain game (real short runs of MaskablePPO on tic-tac-toe)."""

from __future__ import annotations

import csv
import json

import pytest

from sp_wrappers import runs
from sp_wrappers.cli.app import run_command
from sp_wrappers.runs.config import TrainError, random_openings_range

TINY = {"timesteps": 256, "n_envs": 2, "eval_games": 2, "hyperparams": {"n_steps": 64,
        "batch_size": 64, "n_epochs": 1, "policy_kwargs": {"net_arch": [16]}}}  # fmt: skip


def learner_moves_per_game(run) -> list[float]:
    with open(run / "progress.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [float(r["rollout/ep_len_mean"]) for r in rows if r.get("rollout/ep_len_mean")]


@pytest.mark.learning
def test_learner_games_start_after_random_moves_and_evaluations_play_the_plain_game(tmp_path):
    # after 6 random moves of tic-tac-toe the learner has at most 2 moves (X) or 1 (O) left;
    # from the empty board it has at least 3 (X) or 2 (O)
    opened = runs.resolve("tictactoe_v3", {**TINY, "random_openings": "6-6", "strength_every": 128})
    runs.start(opened, tmp_path / "opened", runs.RunOptions(progress=False, plots=False))
    plain = runs.resolve("tictactoe_v3", TINY)
    runs.start(plain, tmp_path / "plain", runs.RunOptions(progress=False, plots=False))

    assert learner_moves_per_game(tmp_path / "opened")
    assert max(learner_moves_per_game(tmp_path / "opened")) <= 2.0
    assert min(learner_moves_per_game(tmp_path / "plain")) > 2.0
    config = json.loads((tmp_path / "opened" / "config.json").read_text())
    assert config["random_openings"] == "6-6"
    assert "random_openings" not in json.loads((tmp_path / "plain" / "config.json").read_text())
    # the strength curve plays every forced first move from the empty board: a game opened at
    # random would refuse the forced moves it finds taken
    history = json.loads((tmp_path / "opened" / "strength.json").read_text())
    assert [e["step"] for e in history["evaluations"]] == [0, 128, 256]
    assert all(sum(e["wdl"]["minimax"]) == 18 for e in history["evaluations"])
    # a resumed run keeps the setting, which may change like the other training settings
    resumed = runs.resolve(resume=tmp_path / "opened", overrides={"random_openings": "0-4"})
    assert resumed.random_openings == "0-4"
    assert runs.resolve(resume=tmp_path / "opened", overrides={}).random_openings == "6-6"


@pytest.mark.parametrize("value", ["16-3", "x", "0-0", "3", "-1-4"])
def test_a_bad_range_is_one_line_naming_the_option(value, capsys, tmp_path):
    with pytest.raises(TrainError, match="`random_openings` must be LO-HI"):
        random_openings_range(value)
    assert (
        run_command("train", ["tictactoe_v3", f"--random-openings={value}", "--out", str(tmp_path)])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--random-openings must be LO-HI" in err
    assert not (tmp_path / "config.json").exists()


def test_the_range_reads_from_text_and_from_a_list():
    assert random_openings_range("0-16") == (0, 16)
    assert random_openings_range([2, 4]) == (2, 4)
    assert random_openings_range(None) is None
