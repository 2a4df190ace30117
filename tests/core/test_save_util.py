"""Every file is written atomically through one mechanism (``core/save_util.py``): the old file or
the new one, never a part, and no temporary left behind."""

from __future__ import annotations

import json
import os

import pytest

from sp_wrappers.core.jsonio import write_json
from sp_wrappers.core.save_util import atomic_write, replacing, save_model, temporary_path


def test_a_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "sub" / "state.json"
    write_json(path, {"a": 1})
    write_json(path, {"a": 2}, sort_keys=True)
    assert json.loads(path.read_text()) == {"a": 2}
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.json"]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "report.html"
    atomic_write(path, "old")
    with pytest.raises(RuntimeError), replacing(path) as written:
        written.write_text("half a")
        raise RuntimeError("disk full")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["report.html"]


def test_a_stale_temporary_that_is_a_link_is_replaced_not_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    path = tmp_path / "model.json"
    temporary_path(path).symlink_to(target)
    atomic_write(path, b"new")
    assert target.read_text() == "keep me" and path.read_bytes() == b"new"


def test_an_sb3_model_is_saved_whole_at_its_path(tmp_path):
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=32, device="cpu")
    path = tmp_path / "model.zip"
    save_model(model, path)
    save_model(model, path)
    assert os.listdir(tmp_path) == ["model.zip"]
    assert PPO.load(path, device="cpu").n_steps == 64


def test_models_and_figures_are_written_to_disk_only_through_save_util():
    """A model or figure saved straight to its final path would leave half a file when the
    process is stopped mid-write: every such write goes through ``replacing`` (an in-memory
    buffer is no file)."""
    import re
    from pathlib import Path

    import sp_wrappers

    direct = re.compile(r"\b(?:model|figure)\.save(?:fig)?\((?!buffer|written)")
    package = Path(sp_wrappers.__file__).parent
    found = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if direct.search(line) and not line.lstrip().startswith(('"""', "#", "``"))
    ]
    assert found == []
