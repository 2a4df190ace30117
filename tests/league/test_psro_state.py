"""A hostile ``psro.json``: refused in one line naming the file, the field and the fix, and
nothing in the run deleted; a resume moves aside only what the archive itself says an unfinished
iteration left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli import main
from sp_wrappers.league.psro import PSRO_STATE, read_psro

pytestmark = pytest.mark.xdist_group("kuhn_psro_run")  # one worker builds the shared run


@pytest.fixture
def copy(psro_run, tmp_path) -> Path:
    return shutil.copytree(psro_run, tmp_path / "run")


def _files(run: Path) -> list[str]:
    return sorted(p.relative_to(run).as_posix() for p in (run / "archive").rglob("*.safetensors"))


def _resume_fails(run: Path, capsys) -> str:
    before = _files(run)
    assert main(["psro", "--resume", str(run), "--iterations", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert _files(run) == before  # nothing deleted, nothing moved
    return err


def test_an_edited_member_id_deletes_no_snapshot_and_ends_in_one_line(copy, capsys):
    state = json.loads((copy / PSRO_STATE).read_text())
    evil = "../../../../tmp/evil"
    old = state["members"][1]
    state["members"][1] = evil
    state["iterations"][-1]["weights"][evil] = state["iterations"][-1]["weights"].pop(old)
    (copy / PSRO_STATE).write_text(json.dumps(state))
    err = _resume_fails(copy, capsys)
    assert "psro.json" in err and "members[1]" in err and evil in err


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda s: s["iterations"][-1]["weights"].update({s["members"][0]: "NaN-ish"}), "weights"),
        (lambda s: s["iterations"][-1]["weights"].update({s["members"][1]: -5}), "weights"),
        (
            lambda s: s.update(members=[s["members"][0], "snapshot-0042", s["members"][2]]),
            "members[1]",
        ),
        (lambda s: s.update(steps="many"), "steps"),
        (lambda s: s.update(oracle="../../../etc/passwd"), "oracle"),
        (lambda s: s["settings"].update(n_envs=-3), "settings"),
        (lambda s: s.update(payoff=[[0.0]]), "payoff"),
        (lambda s: s.update(members=list(reversed(s["members"]))), "members"),
    ],
)
def test_a_hostile_psro_state_is_refused_in_one_line(copy, capsys, edit, field):
    state = json.loads((copy / PSRO_STATE).read_text())
    edit(state)
    (copy / PSRO_STATE).write_text(json.dumps(state))
    err = _resume_fails(copy, capsys)
    assert "psro.json" in err and field in err, err


def test_only_what_the_archive_says_an_unfinished_iteration_saved_is_moved_aside(copy, capsys):
    # psro.json as a run killed after saving its third member but before recording it
    state = json.loads((copy / PSRO_STATE).read_text())
    last = state["members"].pop()
    state["iterations"].pop()
    state["steps"] = state["iterations"][-1]["steps"]
    state["payoff"] = [row[:-1] for row in state["payoff"][:-1]]
    (copy / PSRO_STATE).write_text(json.dumps(state))
    assert main(["psro", "--resume", str(copy), "--iterations", "1"]) == 0
    assert (copy / "archive" / "orphaned" / f"{last}.safetensors").is_file()  # set aside
    assert not (copy / "archive" / "snapshots" / f"{last}.safetensors").exists()
    with SnapshotArchive(copy / "archive", create=False) as archive:
        assert [s.id for s in archive.snapshots()] == state["members"]


def test_a_psro_state_of_0_2_with_its_format_key_resumes(copy):
    state = json.loads((copy / PSRO_STATE).read_text())
    del state["format_version"]
    state = {"format": 1, **state}  # as 0.2 wrote it
    (copy / PSRO_STATE).write_text(json.dumps(state))
    assert read_psro(copy / PSRO_STATE)["members"] == state["members"]
    assert main(["psro", "--resume", str(copy), "--iterations", "2"]) == 0
