"""The public API resolves, and the example scripts run end to end on tiny budgets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import sp_wrappers

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(sp_wrappers._EXPORTS))
def test_every_public_name_is_importable_from_the_package(name):
    assert getattr(sp_wrappers, name) is not None
    assert name in dir(sp_wrappers)


def test_an_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'SelfPlayEnvv'"):
        sp_wrappers.SelfPlayEnvv  # noqa: B018


def test_importing_the_package_does_not_import_torch():
    code = "import sys, sp_wrappers; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize(
    "script, expected",
    [
        (
            "tictactoe_selfplay.py",
            ["snapshot-0000", "exact walk", "value-losing positions", "NashConv", "vs minimax"],
        ),
        ("connect_four_selfplay.py", ["snapshot-0000", "vs random", "vs alphabeta-d2"]),
    ],
)
def test_example_runs_end_to_end_on_a_tiny_budget(script, expected, tmp_path):
    args = ["--timesteps", "2048", "--n-envs", "2", "--save-every", "1024", "--eval-games", "4"]
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for text in expected:
        assert text in result.stdout
    if script == "tictactoe_selfplay.py":  # the last line says plainly whether it is unbeatable
        last = result.stdout.strip().splitlines()[-1]
        assert last.startswith(("UNBEATABLE", "NOT UNBEATABLE:")), last
    assert (tmp_path / "model.zip").exists()
    assert (tmp_path / "archive" / "index.sqlite").exists()
