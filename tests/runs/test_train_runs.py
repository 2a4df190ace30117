"""A run as one typed object: ``config.json`` read into a :class:`RunConfig` and written back
unchanged (but for the ``kind`` it now names), a 0.2 run directory that resumes, runs started
from Python with no argparse, and a single-learner run that never loads team code.

Budgets are the smallest that train at all (128 learner steps on tic-tac-toe): these tests check
the plumbing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sp_wrappers import runs
from sp_wrappers.cli.common import CLIError
from sp_wrappers.core.errors import SpWrappersError
from sp_wrappers.runs.config import RunConfig, TeamRunConfig, TrainError
from sp_wrappers.runs.league import LeagueConfig, LeagueError, resolve_league
from sp_wrappers.runs.resolve import resolve_run

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "timesteps": 128,
    "n_envs": 2,
    "hyperparams": {"n_steps": 32, "batch_size": 64},
    "save_every": 64,
    "eval_games": 0,
}
QUIET = runs.RunOptions(progress=False, plots=False, html_report=False)

#: The config.json that sp_wrappers 0.2 (main at 2494d34) wrote for ``sp-wrappers train
#: tictactoe_v3 <TINY_ARGS> --strength-plies 1``, byte for byte but its (shortened) command line.
CONFIG_0_2 = """{
  "format_version": 1,
  "game": "tictactoe_v3",
  "game_kwargs": {},
  "algo": "maskable_ppo",
  "recipe": "tuned+overrides",
  "hyperparams": {
    "n_steps": 32,
    "batch_size": 64,
    "n_epochs": 10,
    "learning_rate": "lin_1e-3",
    "ent_coef": 0.005,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "policy_kwargs": {
      "net_arch": [
        128,
        128
      ]
    }
  },
  "sampler": {
    "window": null,
    "latest_ratio": 0.5,
    "swap_every": 1,
    "swap_unit": "episodes",
    "strategy": "uniform",
    "random_ratio": 0.2,
    "reference_ratio": 0.1,
    "deterministic": false
  },
  "learner": "random",
  "n_envs": 2,
  "save_every": 64,
  "seed": 0,
  "timesteps": 128,
  "eval_games": 0,
  "draw_reward": 0.0,
  "max_snapshots": null,
  "fit_every": 0,
  "opponent_draw": "per_env",
  "illegal_action": "loss",
  "env_generator": null,
  "symmetries": null,
  "strength_every": null,
  "strength_plies": 1,
  "history": [
    {
      "started": "2026-11-26T14:06:22+0000",
      "resumed": false,
      "from_step": 0,
      "steps": 128,
      "command": "sp-wrappers train tictactoe_v3 --timesteps 128 --n-envs 2 --save-every 64",
      "seconds": 0.6,
      "final_snapshot": "snapshot-0002"
    }
  ],
  "sp_wrappers_version": "0.2.0"
}"""

#: Modules of team runs, which a single-learner run never needs. (envs/vector/factory.py, the
#: one place that picks the vector env, imports both vector envs' classes.)
TEAM_MODULES = (
    "sp_wrappers.runs.team_train",
    "sp_wrappers.training.team_selfplay",
    "sp_wrappers.training.team_setup",
    "sp_wrappers.training.team_parts",
)


# ------------------------------------------------------------------------------------------------
# config.json as a RunConfig
# ------------------------------------------------------------------------------------------------


def with_kind(stored: dict) -> dict:
    """A 0.2 file as this version writes it back: the same keys in the same order, and the
    ``kind`` every file now names after ``format_version``."""
    first, *rest = stored.items()
    return dict([first, ("kind", "single"), *rest])


def test_a_config_json_written_by_0_2_round_trips_unchanged_key_order_included():
    stored = json.loads(CONFIG_0_2)
    config = RunConfig.from_json(stored)
    assert config.algo == "maskable_ppo" and config.save_every == 64 and config.strength_plies == 1
    assert config.kind == "single"
    assert json.dumps(config.to_json(), indent=2) == json.dumps(with_kind(stored), indent=2)


def test_keys_this_version_does_not_know_are_kept_and_written_back():
    stored = {**json.loads(CONFIG_0_2), "written_by_a_plugin": {"x": 1}}
    assert RunConfig.from_json(stored).to_json() == with_kind(stored)


def test_a_run_directory_with_a_0_2_config_json_resumes(tmp_path):
    run = tmp_path / "run"
    runs.start(resolve_run("tictactoe_v3", TINY), run, QUIET)
    (run / "config.json").write_text(CONFIG_0_2)
    config = runs.resolve(resume=run)
    assert config.kind == "single" and config.history[0]["command"].startswith("sp-wrappers train")
    runs.start(config, run, runs.RunOptions(resume=True, timesteps=64, progress=False))
    after = json.loads((run / "config.json").read_text())
    before = with_kind(json.loads(CONFIG_0_2))
    assert list(after) == list(before)
    changed = {"timesteps", "history", "sp_wrappers_version"}
    assert {k: v for k, v in after.items() if k not in changed} == {
        k: v for k, v in before.items() if k not in changed
    }
    assert after["history"][0] == before["history"][0] and after["history"][1]["resumed"]


def test_the_resolver_decides_the_kind_of_run_once():
    assert type(resolve_run("tictactoe_v3", TINY)) is RunConfig
    assert type(resolve_run("simple_tag_v3", {"timesteps": 256})) is TeamRunConfig
    assert type(resolve_run("tictactoe_v3", {"teams": "prefix"})) is TeamRunConfig
    with pytest.raises(TrainError, match="`team_change` applies to team runs"):
        resolve_run("tictactoe_v3", {"team_change": 100})
    with pytest.raises(TrainError, match="Unknown settings colour"):
        resolve_run("tictactoe_v3", {"colour": "red"})


def test_every_run_error_derives_from_the_one_root_and_keeps_its_bases():
    assert issubclass(TrainError, SpWrappersError)
    assert issubclass(LeagueError, TrainError)
    assert issubclass(CLIError, SpWrappersError)


def test_a_league_config_round_trips_and_a_train_run_is_not_a_league(tmp_path):
    config = resolve_league("tictactoe_v3", {"timesteps": 256, "main_exploiters": 0})
    assert LeagueConfig.from_json(config.to_json()) == config
    (tmp_path / "config.json").write_text(CONFIG_0_2)
    with pytest.raises(LeagueError, match="holds a train run, not a league"):
        resolve_league(resume=tmp_path)


# ------------------------------------------------------------------------------------------------
# Runs from Python
# ------------------------------------------------------------------------------------------------


def test_runs_start_starts_a_run_from_python_without_argparse(tmp_path):
    config = runs.resolve_run("tictactoe_v3", TINY)
    options = runs.RunOptions(progress=False, plots=False, html_report=False)
    result = runs.start(config, tmp_path / "run", options)
    assert result.total_steps >= 128 and result.config.timesteps == result.total_steps
    stored = json.loads((tmp_path / "run" / "config.json").read_text())
    assert stored == result.config.to_json() and stored["history"][0]["command"] is None
    assert config.history == ()  # the configuration handed in never changes


def test_a_single_learner_run_never_imports_team_code(tmp_path):
    code = f"""
import sys
from sp_wrappers import runs
config = runs.resolve_run("tictactoe_v3", {TINY!r})
options = runs.RunOptions(progress=False, plots=False, html_report=False)
runs.start(config, {str(tmp_path / "run")!r}, options)
print([m for m in {TEAM_MODULES!r} if m in sys.modules])
print([m for m in sys.modules if m.startswith("sp_wrappers.cli")])
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.splitlines()
    assert out[-2:] == ["[]", "[]"]


def test_the_progress_bar_is_sb3s_with_the_selfplay_statistics(tmp_path):
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import ProgressBarCallback

    from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayVecEnv, SnapshotArchive
    from sp_wrappers.runs.single import ProgressBar

    archive = SnapshotArchive(tmp_path / "archive")
    env = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, opponent=OpponentSampler(archive))
    selfplay = SelfPlayCallback(archive, save_every=64)
    bar = ProgressBar(selfplay)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, seed=0)
    model.learn(128, callback=[selfplay, bar])
    assert isinstance(bar, ProgressBarCallback) and bar.pbar.n == 128
    assert bar.stats.startswith("win=") and f"snapshots={len(archive)}" in bar.stats
    env.close()
    archive.close()
