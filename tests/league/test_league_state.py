"""A hostile ``league.json``: refused in one line naming the file, the field and the fix, with
nothing of the league deleted; what a resume sets aside is moved, never deleted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.core.state_file import StateFileError
from sp_wrappers.league import League, SelfPlayLeague
from sp_wrappers.league.runner import STATE_NAME

CHUNK = 64


def tiny_model(env):
    return MaskablePPO(
        "MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, policy_kwargs={"net_arch": [16]}
    )


def _league(root: Path) -> League:
    return League(tictactoe_v3.env, SelfPlayLeague(), tiny_model, root, chunk_steps=CHUNK, n_envs=2)


@pytest.fixture(scope="module")
def league_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("league") / "run"
    _league(root).run(2 * CHUNK, backend="serial")
    return root


@pytest.fixture
def copy(league_dir, tmp_path) -> Path:
    return shutil.copytree(league_dir, tmp_path / "run")


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
        (lambda s: s["learners"][0]["snapshots"].append("../../../../tmp/evil"), "snapshots[1]"),
        (lambda s: s["learners"][0]["snapshots"].append("snapshot-0042"), "snapshot-0042"),
        (lambda s: s["learners"][0].update(steps="NaN-ish"), "learners[0].steps"),
        (lambda s: s["learners"][0].update(resets=-5), "learners[0].resets"),
        (lambda s: s.update(round=-1), "round"),
        (lambda s: s.update(round=0), "round"),  # the archive took its snapshots later
        (lambda s: s["model_files"].update(main_agent_0="../../../etc/passwd"), "model_files"),
        (lambda s: s.update(compute_shares={"main_agent_0": -5}), "compute_shares"),
        (lambda s: s.update(rng={"bit_generator": "evil"}), "rng"),
        (lambda s: s.update(pending_resets=["someone"]), "pending_resets"),
    ],
)
def test_a_hostile_league_state_is_refused_in_one_line_and_nothing_is_deleted(copy, edit, field):
    state = json.loads((copy / STATE_NAME).read_text())
    edit(state)
    (copy / STATE_NAME).write_text(json.dumps(state))
    before = _files(copy)
    with pytest.raises(StateFileError) as error:
        _league(copy)
    message = str(error.value)
    assert "\n" not in message and "league.json" in message and field in message, message
    assert "start a new league directory (--out)" in message
    assert _files(copy) == before


def test_a_model_file_the_state_does_not_name_is_moved_aside(copy):
    state = json.loads((copy / STATE_NAME).read_text())
    [(name, relative)] = state["model_files"].items()
    stray = copy / Path(relative).with_name("model-00099.zip")
    shutil.copy(copy / relative, stray)
    league = _league(copy)
    assert league.resumed and (copy / relative).is_file()
    assert not stray.exists()
    assert (copy / "orphaned" / stray.relative_to(copy)).is_file()
