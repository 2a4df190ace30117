"""Specification: a run directory's file names are spelled in one module.

``sp_wrappers/core/run_layout.py`` names every file and folder of a run directory; ``RunDir``
and the layers below ``runs`` that write inside a run directory import the names from there. A
module that spells one again (``run_dir / "archives"``, ``"config.json"``, ``f"plots/{name}"``)
is a second home for the layout, and this test names it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from sp_wrappers.core import run_layout
from sp_wrappers.runs.rundir import RunDir

PACKAGE = Path(__file__).resolve().parents[2] / "sp_wrappers"
HOME = PACKAGE / "core" / "run_layout.py"
NAMES = {getattr(run_layout, name) for name in run_layout.__all__}
FILES = {name for name in NAMES if "." in name}  # config.json: never anything else
FOLDERS = NAMES - FILES  # archive, plots: also words (an ``archive=`` keyword, a JSON key)


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _spelled(source: str) -> list[tuple[int, str]]:
    """Where ``source`` spells a run directory's file name in code (docstrings and messages
    that only mention one are prose, not a layout)."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if id(node) not in docstrings and (
                text in FILES or any(text.startswith(f"{folder}/") for folder in FOLDERS)
            ):
                found.append((node.lineno, text))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # path / "archives"
            right = node.right
            if isinstance(right, ast.Constant) and right.value in FOLDERS:
                found.append((node.lineno, right.value))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if node.value.value in FOLDERS and any(n.isupper() for n in names):
                found.append((node.lineno, node.value.value))  # ARCHIVE_DIR = "archive"
    return sorted(found)


def test_no_module_but_the_layout_spells_a_run_directory_file_name():
    spelled = [
        f"{path.relative_to(PACKAGE.parent)}:{line} {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME
        for line, text in _spelled(path.read_text())
    ]
    assert not spelled, f"import the name from sp_wrappers.core.run_layout instead: {spelled}"


def test_the_check_finds_each_way_of_spelling_a_name():
    source = (
        "ARCHIVE_DIR = 'archive'\n"
        "a = run_dir / 'archives' / team\n"
        "b = 'config.json'\n"
        "c = f'models/{team}.zip'\n"
        "d = {'archive': path, 'archives': paths}\n"  # keys and keywords are words
    )
    assert [line for line, _ in _spelled(source)] == [1, 2, 3, 4]


def test_run_dir_paths_are_the_layouts_names():
    run = RunDir("r")
    assert run.config_path.name == run_layout.CONFIG_NAME
    assert run.archive_path.name == run_layout.ARCHIVE_DIR
    assert run.team_archive_path("red").parent.name == run_layout.ARCHIVES_DIR
    assert run.team_model_path("red").parent.name == run_layout.MODELS_DIR
    assert run.plots_path.name == run_layout.PLOTS_DIR
    assert run.psro_state_path.name == run_layout.PSRO_NAME
