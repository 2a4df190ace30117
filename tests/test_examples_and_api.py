"""The public API resolves, and the example scripts run end to end on tiny budgets."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import sp_wrappers

ROOT = Path(__file__).resolve().parents[1]


#: The public names of 0.2: each keeps working as ``from sp_wrappers import X``.
NAMES_0_2 = [
    "AlphaBetaConnectFourPolicy", "AlphaStarLeague", "BoardExtractor", "BradleyTerryResult",
    "BudgetSchedules", "CallablePolicy", "ConfigResult", "DrawReward", "ENV_IDS", "EloRatings",
    "EnvGenerator", "EnvHistory", "EpisodeResult", "GameConfig", "IllegalActionError",
    "KOpponentRecord", "KOpponentRollouts", "League", "LeagueBuilder", "MatchRecord",
    "MatchResult", "MoveError", "Notation", "OpeningsResult", "OpponentSampler", "PayoffTable",
    "PerfectTicTacToePolicy", "PlayOutcome", "Policy", "RandomOpenings", "RandomPolicy", "Replay",
    "RoundRobinResult", "SB3Policy", "SelfPlayCallback", "SelfPlayEnv", "SelfPlayLeague",
    "SelfPlayVecEnv", "SnapshotArchive", "SnapshotInfo", "StrengthCallback", "Symmetry",
    "TeamLayout", "TeamSelfPlay", "archive_ratings", "expected_score", "fit_bradley_terry",
    "legal_openings", "make_selfplay_vec_env", "make_team_vec_env", "notation_for",
    "novelty_reward", "openspiel_env", "play_match", "play_openings", "play_replay",
    "play_session", "register_envs", "round_robin", "store_archive_ratings", "swap_steps",
    "symmetries_for", "team_outcome", "win_rates_by_config", "write_replay", "write_report",
]  # fmt: skip


@pytest.mark.parametrize("name", NAMES_0_2)
def test_every_public_name_of_0_2_is_importable_from_the_package(name):
    assert getattr(sp_wrappers, name) is not None
    assert name in dir(sp_wrappers) and name in sp_wrappers.__all__


def _faces() -> dict[str, object]:
    return {face: importlib.import_module(f"sp_wrappers.{face}") for face in sp_wrappers.FACES}


def test_every_layer_has_a_public_face_and_the_package_exports_exactly_their_names():
    packages = {
        ".".join(p.parent.relative_to(ROOT / "sp_wrappers").parts)
        for p in (ROOT / "sp_wrappers").rglob("__init__.py")
    } - {"", "cli", "testing"}  # the command line is the shell on top, not a library face;
    # sp_wrappers.testing is imported by its own name, as pettingzoo.test is
    assert set(sp_wrappers.FACES) == packages
    declared: dict[str, object] = {}
    for face, module in _faces().items():
        assert isinstance(module.__all__, list) and module.__all__, face
        for name in module.__all__:
            value = getattr(module, name)
            # a name that two faces declare is one object (a re-export), never two things
            assert declared.setdefault(name, value) is value, (face, name)
    assert sorted(sp_wrappers.__all__) == sorted([*declared, "__version__"])
    for name, value in declared.items():
        assert getattr(sp_wrappers, name) is value, name


def test_type_checkers_see_the_same_faces():
    tree = ast.parse((ROOT / "sp_wrappers" / "__init__.py").read_text())
    starred = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["*"]
    }
    assert starred == set(sp_wrappers.FACES)


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
