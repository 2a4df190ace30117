"""``sp-wrappers report RUN_DIR``: the page of a run written by the command, and a folder
without an archive as one error line (the page itself: tests/runs/test_report.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import start_tiny_run


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    return start_tiny_run(tmp_path_factory.mktemp("report") / "run")


def test_report_command_writes_report_html_into_the_run(trained_run, sp_wrappers, tmp_path):
    out = tmp_path / "elsewhere.html"
    status, stdout, err = sp_wrappers("report", trained_run, "--out", out, "--no-replay")
    assert status == 0, err
    assert stdout.strip() == str(out) and out.is_file()
    assert "Replay:" not in out.read_text()


def test_a_folder_without_an_archive_is_a_one_line_error(sp_wrappers, tmp_path):
    status, _, err = sp_wrappers("report", tmp_path)
    assert status == 2 and "holds no archive" in err and len(err.strip().splitlines()) == 1
