"""A hostile ``team_selfplay.json``: refused in one line naming the file, the field and the fix,
nothing of the run deleted; 0.2's file (with its ``"format"`` tag) still resumes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mpe2")

from mpe2 import simple_tag_v3  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402

from sp_wrappers.core.state_file import StateFileError  # noqa: E402
from sp_wrappers.training.team_selfplay import STATE_NAME, TeamSelfPlay  # noqa: E402
from sp_wrappers.training.team_setup import make_team_vec_env  # noqa: E402

TEAMS = ("adversary", "agent")


def tag_game() -> Any:
    return simple_tag_v3.env(max_cycles=8)


def _models() -> dict[str, PPO]:
    return {
        team: PPO(
            "MlpPolicy",
            make_team_vec_env(tag_game, "prefix", team, n_envs=1, seed=0),
            n_steps=32,
            batch_size=32,
            n_epochs=1,
            policy_kwargs={"net_arch": [8]},
            device="cpu",
        )
        for team in TEAMS
    }


def _run(run_dir: Path, resume: bool) -> TeamSelfPlay:
    return TeamSelfPlay(
        tag_game,
        "prefix",
        _models(),
        run_dir=run_dir,
        team_change=96,
        save_every=32,
        resume=resume,
    )


@pytest.fixture(scope="module")
def team_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("teams") / "run"
    _run(root, resume=False).learn(192)
    return root


@pytest.fixture
def copy(team_dir, tmp_path) -> Path:
    run = shutil.copytree(team_dir, tmp_path / "run")
    state = json.loads((run / STATE_NAME).read_text())  # the run's archives, in the copy
    state["archives"] = {team: str(run / "archives" / team) for team in TEAMS}
    (run / STATE_NAME).write_text(json.dumps(state))
    return run


def _files(root: Path) -> list[str]:
    """The run's files (SQLite's -wal and -shm, which come and go with connections, left out)."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    )


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda s: s.update(learning_team="../../../../tmp/evil"), "learning_team"),
        (lambda s: s.update(team_changes="NaN-ish"), "team_changes"),
        (lambda s: s["elo"].update(agent="NaN-ish"), "elo.agent"),
        (lambda s: s["steps"].update(agent=-5), "steps.agent"),
        (lambda s: s["models"].update(agent="../../../etc/passwd"), "models.agent"),
        (lambda s: s["swap_draws"].update(intruder=3), "swap_draws"),
        (lambda s: s.update(turns=[{"team": "agent", "start_step": 9, "end_step": 1}]), "turns[0]"),
        (lambda s: s.update(format_version=7), "format_version 7"),
    ],
)
def test_a_hostile_team_state_is_refused_in_one_line_and_nothing_is_deleted(copy, edit, field):
    state = json.loads((copy / STATE_NAME).read_text())
    edit(state)
    (copy / STATE_NAME).write_text(json.dumps(state))
    before = _files(copy)
    with pytest.raises(StateFileError) as error:
        _run(copy, resume=True)
    message = str(error.value)
    assert "\n" not in message and STATE_NAME in message and field in message, message
    assert _files(copy) == before


def test_a_team_state_written_by_0_2_resumes(copy):
    state = json.loads((copy / STATE_NAME).read_text())
    state = {"format": "sp_wrappers.training.team_selfplay", **state}  # 0.2's two keys
    (copy / STATE_NAME).write_text(json.dumps(state))
    run = _run(copy, resume=True)
    assert run.team_changes == state["team_changes"] and run.learning_team == state["learning_team"]
    run.write_state()
    written = json.loads((copy / STATE_NAME).read_text())
    assert written["format_version"] == 1 and "format" not in written
