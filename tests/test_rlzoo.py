"""RL Baselines3 Zoo end to end on tiny budgets: the example yaml trains Connect Four by self-play
into the archive it names (in process, through RL Zoo's Python entry point), and a two-trial
Optuna search run by ``python -m rl_zoo3.train -optimize --n-jobs 2`` scores each trial by its
record against a reference bot, each trial training against its own snapshots only."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("rl_zoo3", reason="the zoo extra: pip install -e '.[zoo]'")

from sp_wrappers import SnapshotArchive  # noqa: E402

ENV_ID = "sp_wrappers/ConnectFour-v0"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rlzoo_connect_four.yml"


def example_hyperparams() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())[ENV_ID]


def tiny_config(tmp_path: Path) -> tuple[Path, Path]:
    """The example yaml with tiny budgets; returns (yaml path, the first run's archive)."""
    hp = example_hyperparams()
    hp.update(n_timesteps=256, n_envs=2, n_steps=64, batch_size=64, n_epochs=1)
    hp["policy_kwargs"] = "dict(net_arch=[32])"
    hp["callback"][0]["sp_wrappers.SelfPlayCallback"].update(save_every=128, fit_every=256)
    path = tmp_path / "tiny.yml"
    path.write_text(yaml.safe_dump({ENV_ID: hp}))
    return path, tmp_path / hp["env_kwargs"]["archive"].replace("{run}", "0000")


def run_zoo(monkeypatch, tmp_path: Path, config: Path, *args: str) -> None:
    from rl_zoo3.train import train

    monkeypatch.chdir(tmp_path)
    argv = ["train", "--algo", "ppo", "--env", ENV_ID, "--gym-packages", "sp_wrappers"]
    argv += ["-conf", str(config), "-f", "logs", "--verbose", "0", *args]
    monkeypatch.setattr(sys, "argv", argv)
    train()


def test_the_example_points_the_envs_and_the_callback_at_one_archive():
    hp = example_hyperparams()
    callback = hp["callback"][0]["sp_wrappers.SelfPlayCallback"]
    assert hp["env_kwargs"]["archive"] == callback["archive"]


def test_rl_zoo_trains_by_self_play_into_the_archive_named_in_the_yaml(monkeypatch, tmp_path):
    config, archive_path = tiny_config(tmp_path)
    run_zoo(
        monkeypatch,
        tmp_path,
        config,
        "--seed", "0",
        "--eval-freq", "128",
        "--eval-episodes", "2",
        "--eval-env-kwargs", "opponent:'alphabeta-d1'",
    )  # fmt: skip

    archive = SnapshotArchive(archive_path, create=False)
    assert [s.step for s in archive.snapshots()] == [0, 128, 256]
    assert all("elo" in s.ratings for s in archive.snapshots())
    matches = archive.matches()
    assert len(matches) > 5 and {m.player_a for m in matches} == {"learner"}
    assert {m.player_b for m in matches} & {"snapshot-0000", "snapshot-0001", "latest", "random"}
    # RL Zoo's own outputs, and its evaluation: the record against the bot, in [-1, 1]
    run = tmp_path / "logs" / "ppo" / "sp_wrappers-ConnectFour-v0_1"
    assert (run / "sp_wrappers-ConnectFour-v0.zip").exists()
    results = np.load(run / "evaluations.npz")["results"]
    assert results.shape == (2, 2) and set(results.ravel()) <= {-1.0, 0.0, 1.0}


def test_an_optuna_search_with_two_jobs_trains_each_trial_against_its_own_snapshots(tmp_path):
    config, first_archive = tiny_config(tmp_path)
    # RL Zoo's random sampler with seed 244; --n-jobs 2 runs both trials at once, in two threads
    # of one process (which trial draws what then depends on timing).
    command = [
        sys.executable, "-m", "rl_zoo3.train", "--algo", "ppo", "--env", ENV_ID,
        "--gym-packages", "sp_wrappers", "-conf", str(config), "-f", "logs", "--verbose", "0",
        "--seed", "244", "-optimize", "--n-trials", "2", "--n-jobs", "2",
        "--n-evaluations", "1", "--sampler", "random", "--pruner", "none",
        "--eval-episodes", "4", "--eval-env-kwargs", "opponent:'alphabeta-d1'",
        "--no-optim-plots", "--num-threads", "1",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env={**os.environ}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Error" not in done.stderr, done.stderr[-3000:]

    (report,) = (tmp_path / "logs" / "ppo").glob("report_sp_wrappers-ConnectFour-v0_2-trials*.csv")
    with open(report) as handle:
        trials = list(csv.DictReader(handle))
    assert [t["state"] for t in trials] == ["COMPLETE", "COMPLETE"]
    for trial in trials:  # the mean of 4 games scored 1, 0 or -1
        value = float(trial["value"])
        assert -1.0 <= value <= 1.0 and (value * 4).is_integer()
    # One archive per trial, each holding that trial's three snapshots only (one network), and
    # each trial's learner met only its own snapshots.
    # (RL Zoo builds one env and callback before the search, to read the spaces: with --n-jobs
    # 2 the trials run in other threads, so that run's archive stays empty.)
    archives = [SnapshotArchive(p, create=False) for p in first_archive.parent.glob("archive-*")]
    archives = [archive for archive in archives if len(archive)]
    assert len(archives) == 2
    for archive in archives:
        snapshots = archive.snapshots()
        weights = [archive.load_state_dict(s.id) for s in snapshots]
        shapes = {k: tuple(v.shape) for k, v in weights[0].items()}
        assert all({k: tuple(v.shape) for k, v in w.items()} == shapes for w in weights)
        opponents = {m.player_b for m in archive.matches()}
        assert opponents and opponents <= {s.id for s in snapshots} | {"latest", "random"}
    # A trial learns whole rollouts (n_steps x 2 envs) until it has its 256 steps (one rollout
    # when the rollout is longer): each archive's snapshots, every 128 steps from 0, end there.
    rollouts = sorted(
        -(-256 // (int(t["user_attrs_n_steps"]) * 2)) * int(t["user_attrs_n_steps"]) * 2
        for t in trials
    )
    assert sorted(a.snapshots()[-1].step for a in archives) == rollouts
    for archive in archives:
        steps = [s.step for s in archive.snapshots()]
        assert steps == list(range(0, steps[-1] + 1, 128))
