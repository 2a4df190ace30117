"""``runs.start``: one entry for every kind of run, looked up by the configuration's type.

Each kind is started from Python (no argparse): a single learner, teams and a league write their
run directory and its ``config.json`` names the kind; a run directory of 0.2 resumes; a new kind
is one small :class:`~sp_wrappers.runs.run.Run` subclass; and a single learner's run never
imports or enters team or league code. Budgets are tiny: these check the plumbing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import team_or_league_module

from sp_wrappers import runs
from sp_wrappers.runs.config import JsonConfig, LeagueConfig, TeamRunConfig, TrainError
from sp_wrappers.runs.kinds import RUN_KINDS, register_run_kind
from sp_wrappers.runs.run import Run, RunOptions, RunResult
from sp_wrappers.runs.rundir import RunArchive, RunDir

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "timesteps": 256,
    "n_envs": 2,
    "hyperparams": {"n_steps": 64, "batch_size": 64},
    "save_every": 128,
    "eval_games": 2,
}
QUIET = RunOptions(progress=False, plots=False, html_report=False)
TAG_TINY = {
    "timesteps": 192,
    "team_change": 96,  # a whole rollout of the predators: 32 steps x 3 agents
    "n_envs": 1,
    "hyperparams": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
    "save_every": 64,
    "eval_games": 1,
    "game_kwargs": {"max_cycles": 10},
}
#: A single learner's config.json as 0.2 wrote it (no "kind"; tests/runs/test_train_runs.py
#: resumes a run directory holding 0.2's file byte for byte).
CONFIG_0_2 = {
    "format_version": 1,
    "game": "tictactoe_v3",
    "game_kwargs": {},
    "algo": "maskable_ppo",
    "recipe": "tuned+overrides",
    "hyperparams": {"n_steps": 64, "batch_size": 64},
    "sampler": {
        "window": 10,
        "latest_ratio": 0.5,
        "swap_every": 1,
        "swap_unit": "episodes",
        "strategy": "uniform",
        "random_ratio": 0.0,
        "reference_ratio": 0.0,
        "deterministic": False,
    },
    "learner": "random",
    "n_envs": 2,
    "save_every": 128,
    "seed": 0,
    "timesteps": 256,
    "eval_games": 2,
    "draw_reward": 0.0,
    "max_snapshots": None,
    "fit_every": 0,
    "opponent_draw": "per_env",
    "illegal_action": "loss",
    "env_generator": None,
    "symmetries": None,
    "strength_every": 0,
    "exploitability_every": 0,
}
#: Modules of team and league runs, which a single learner's run never needs.
TEAM_AND_LEAGUE_MODULES = (
    "sp_wrappers.runs.team_train",
    "sp_wrappers.runs.team_results",
    "sp_wrappers.runs.league",
    "sp_wrappers.runs.league_summary",
    "sp_wrappers.cli.league",
    "sp_wrappers.training.team_selfplay",
    "sp_wrappers.training.team_setup",
    "sp_wrappers.training.team_parts",
    "sp_wrappers.league",
)


@pytest.fixture(scope="module")
def single_run(tmp_path_factory) -> runs.RunResult:
    config = runs.resolve("tictactoe_v3", {**TINY, "strength_every": 0})
    return runs.start(config, tmp_path_factory.mktemp("single") / "run", QUIET)


def test_start_runs_a_single_learner_and_config_json_names_its_kind(single_run):
    assert type(single_run).__name__ == "TrainResult" and single_run.total_steps >= 256
    run = RunDir(single_run.run_dir)
    stored = json.loads(run.config_path.read_text())
    assert stored["kind"] == "single" and list(stored)[:2] == ["format_version", "kind"]
    assert run.kind() == "single" and run.config() == single_run.config
    assert run.model_path.is_file() and RunArchive.locate(run.path).exists()
    assert "Trained maskable_ppo on tictactoe_v3" in single_run.summary()


def test_start_resumes_a_run_and_refuses_a_finished_one(single_run, tmp_path):
    import shutil

    path = shutil.copytree(single_run.run_dir, tmp_path / "run")
    config = runs.resolve(resume=path)
    with pytest.raises(TrainError, match="already has"):
        runs.start(config, path, RunOptions(resume=True, progress=False, html_report=False))
    result = runs.start(
        config, path, RunOptions(resume=True, timesteps=64, progress=False, html_report=False)
    )
    assert result.total_steps >= single_run.total_steps + 64
    assert [entry["resumed"] for entry in result.config.history] == [False, True]


def test_start_looks_the_run_up_by_the_configuration_s_type():
    with pytest.raises(TrainError, match="is no run configuration"):
        runs.start(object())  # neither a configuration nor config.json's object
    assert RUN_KINDS["teams"][1].endswith(":TeamRun") and RUN_KINDS["league"][1].endswith(
        ":LeagueRun"
    )
    assert RunDir.default_for(runs.resolve("tictactoe_v3", TINY)).path == Path("runs/tictactoe_v3")


def test_start_runs_a_team_run_and_resumes_it(tmp_path):
    config = runs.resolve("simple_tag_v3", TAG_TINY)
    assert type(config) is TeamRunConfig
    result = runs.start(config, tmp_path / "tag", QUIET)
    run = RunDir(tmp_path / "tag")
    assert run.kind() == "teams" and set(result.total_steps) == {"adversary", "agent"}
    assert run.team_model_path("adversary").is_file() and run.team_archive_path("agent").is_dir()
    resumed = runs.start(
        runs.resolve(resume=run.path),
        run,
        RunOptions(resume=True, timesteps=96, progress=False, html_report=False),
    )
    assert min(resumed.total_steps.values()) >= 288


def test_start_runs_a_league_and_refuses_it_as_a_train_run(tmp_path):
    overrides = {
        "timesteps": 128,
        "chunk_steps": 64,
        "main_exploiters": 0,
        "league_exploiters": 0,
        "n_envs": 2,
        "hyperparams": {"n_steps": 32, "batch_size": 32},
        "eval_games": 1,
    }
    config = runs.resolve("tictactoe_v3", overrides, kind="league")
    assert type(config) is LeagueConfig
    result = runs.start(config, tmp_path / "league", RunOptions(backend="serial", plots=False))
    stored = json.loads((tmp_path / "league" / "config.json").read_text())
    assert stored["kind"] == "league" and "command" not in stored
    assert "league.json" in result.written
    with pytest.raises(TrainError, match="holds a league"):
        runs.resolve(resume=tmp_path / "league", kind="single")
    (tmp_path / "single").mkdir()
    (tmp_path / "single" / "config.json").write_text(json.dumps(CONFIG_0_2))
    with pytest.raises(TrainError, match="holds a train run, not a league"):
        runs.resolve(resume=tmp_path / "single", kind="league")


# ------------------------------------------------------------------------------------------------
# A new kind of run is one small subclass
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CountConfig(JsonConfig):
    """A toy kind: it 'learns' by counting to ``timesteps``."""

    kind: str = "count"
    game: str = "tictactoe_v3"
    timesteps: int
    history: tuple = ()
    extra: dict = field(default_factory=dict)


@dataclass
class CountResult(RunResult):
    run_dir: Path
    config: CountConfig
    seconds: float
    written: list
    notes: list
    counted: int

    def summary(self) -> str:
        return f"counted to {self.counted}"


class CountRun(Run):
    kind = "count"

    def setup(self) -> None:
        self.counted = 0

    def learn(self) -> None:
        self.counted = int(self.config.timesteps)

    def result(self, written: list[str]) -> CountResult:
        return CountResult(
            self.run_dir.path, self.config, self.seconds, written, self.notes, self.counted
        )


def test_a_new_kind_is_a_run_subclass_and_one_line_in_the_table(tmp_path, monkeypatch):
    monkeypatch.setitem(RUN_KINDS, "count", RUN_KINDS.get("count", ("", "")))
    register_run_kind("count", f"{__name__}:CountConfig", f"{__name__}:CountRun")
    result = runs.start(CountConfig(timesteps=5), tmp_path / "count", QUIET)
    assert result.summary() == "counted to 5"
    stored = json.loads((tmp_path / "count" / "config.json").read_text())
    assert stored["kind"] == "count" and len(stored["history"]) == 1
    assert "seconds" in stored["history"][0]
    assert RunDir(tmp_path / "count").config() == result.config


# ------------------------------------------------------------------------------------------------
# A single learner's run never enters team or league code
# ------------------------------------------------------------------------------------------------


def test_a_single_learner_run_never_imports_team_or_league_code(tmp_path):
    code = f"""
import sys
import sp_wrappers.runs as runs
config = runs.resolve("tictactoe_v3", {TINY!r})
runs.start(config, {str(tmp_path / "run")!r}, runs.RunOptions(progress=False, plots=False))
print([m for m in sys.modules if m.startswith({TEAM_AND_LEAGUE_MODULES!r})])
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.splitlines()
    assert out[-1] == "[]"


def test_the_report_looks_for_a_psro_state_by_the_name_psro_writes():
    """The report checks for ``psro.json`` by the run directory's name for it, so that a run
    without one never imports the league; PSRO writes the same file."""
    from sp_wrappers.league.psro import PSRO_STATE
    from sp_wrappers.runs.rundir import PSRO_NAME

    assert PSRO_NAME == PSRO_STATE


def test_a_single_learner_run_never_runs_a_function_of_a_team_or_league_module(tmp_path):
    entered: set[str] = set()
    seen: set[str] = set()  # every sp_wrappers module a function ran in: the trace sees them

    def profile(frame, event, arg):
        if event == "call" and "sp_wrappers" in frame.f_code.co_filename:
            seen.add(Path(frame.f_code.co_filename).name)
            if team_or_league_module(frame.f_code.co_filename):
                entered.add(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    config = runs.resolve("tictactoe_v3", {**TINY, "timesteps": 128, "eval_games": 1})
    assert not team_or_league_module(runs.run.__file__) and team_or_league_module(
        str(ROOT / "sp_wrappers" / "training" / "team_setup.py")
    )
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        runs.start(config, tmp_path / "run", QUIET)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert {"run.py", "single.py", "callbacks.py", "vec_env.py"} <= seen
    assert sorted(entered) == []
