"""Specification of the package's layout: imports run one way, from higher layers to lower ones.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``); ``lint-imports`` checks them
against the code's real imports, including those inside functions.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sp_wrappers"


def test_every_import_contract_is_kept():
    lint = shutil.which("lint-imports")
    if lint is None:
        pytest.skip('lint-imports is not installed: pip install -e ".[test]"')
    result = subprocess.run(
        [lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


def _prints(node: ast.AST, verbose: bool = False):
    """``print`` calls under ``node`` that no ``if ... verbose`` guards (SB3 callbacks' style)."""
    if isinstance(node, ast.If) and "verbose" in ast.unparse(node.test):
        verbose = True
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print" and not verbose:
        yield node.lineno
    for child in ast.iter_child_nodes(node):
        yield from _prints(child, verbose)


def test_no_module_below_the_command_line_prints_unless_asked_to_be_verbose():
    printing = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] != "cli"
        for line in _prints(ast.parse(path.read_text()))
    ]
    assert not printing, f"print() outside sp_wrappers/cli: {printing}"


def test_no_module_passes_the_size_guide():
    sizes = {p.relative_to(ROOT): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert not {p: n for p, n in sizes.items() if n > 600}


def test_old_module_paths_still_import_with_a_deprecation_warning(monkeypatch):
    from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv

    monkeypatch.delitem(sys.modules, "sp_wrappers.vec_env", raising=False)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from sp_wrappers.vec_env import SelfPlayVecEnv as old

    assert old is SelfPlayVecEnv
    assert [w.category for w in caught] == [DeprecationWarning]
    assert "sp_wrappers.envs.vector.vec_env" in str(caught[0].message)


def test_the_registration_entry_point_keeps_its_old_path_without_a_warning():
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "import sp_wrappers\n"
        "from sp_wrappers.registration import make_env\n"
        "print(make_env.__module__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sp_wrappers.envs.registration"
