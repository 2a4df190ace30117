"""A ``module:object`` path a person types resolves from the current directory, as ``python -m``
does, even from a console script (whose own folder, not the current one, is on ``sys.path``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sp_wrappers.core.imports import import_object, split_import_path

ROOT = Path(__file__).resolve().parents[2]


def run_from(folder: Path, tool_dir: Path, source: str) -> subprocess.CompletedProcess[str]:
    """Run ``source`` as a script kept in ``tool_dir`` (like a console script) from ``folder``."""
    script = tool_dir / "tool.py"
    script.write_text(textwrap.dedent(source))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "mygens").mkdir(parents=True)
    (folder / "mygens" / "__init__.py").write_text("")
    (folder / "mygens" / "env_generator.py").write_text(
        "def komi_curriculum(step, index, history):\n    return {'komi': 7.5}\n"
    )
    (tmp_path / "bin").mkdir()
    return folder


def test_env_generator_resolves_from_the_current_directory_without_pythonpath(project):
    result = run_from(
        project,
        project.parent / "bin",
        """
        from sp_wrappers.training.env_generator import load_generator
        generator = load_generator("mygens.env_generator:komi_curriculum")
        print(generator(0, 0, None))
        """,
    )
    assert result.returncode == 0, result.stderr
    assert "{'komi': 7.5}" in result.stdout


def test_a_missing_module_still_names_the_module(project):
    result = run_from(
        project,
        project.parent / "bin",
        """
        from sp_wrappers.training.env_generator import load_generator
        try:
            load_generator("mygens.nowhere:f")
        except ValueError as error:
            print(error)
        """,
    )
    assert result.returncode == 0, result.stderr
    assert "Cannot import 'mygens.nowhere'" in result.stdout


def test_import_object_reads_dotted_objects_and_refuses_a_path_without_colon():
    assert import_object("os:path.join") is os.path.join
    with pytest.raises(ValueError, match="module:object"):
        split_import_path("os.path.join")
