"""Specification of the package's layout: imports run one way, from higher layers to lower ones.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``); ``lint-imports`` checks them
against the code's real imports, including those inside functions.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_from(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` in ``path`` reads from."""
    if not node.level:
        return node.module or ""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private_imports() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _imported_from(path, node)
            if source.split(".")[0] != "sp_wrappers" or source == _module_name(path):
                continue
            for alias in node.names:
                dunder = alias.name.startswith("__") and alias.name.endswith("__")
                if alias.name.startswith("_") and not dunder:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {source}.{alias.name}")
    return found


def test_no_module_imports_another_modules_private_names():
    # Promote the name (drop the underscore, add it to __all__) or move the code.
    assert _private_imports() == []


def _cycles() -> list[list[str]]:
    """The import cycles between sp_wrappers' modules, type-only imports included (Tarjan's
    strongly connected components of the import graph, larger than one module)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("sp_wrappers", exclude_type_checking_imports=False, cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in edges.get(module, ()):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(cycles)


def test_no_import_cycles_counting_type_only_imports():
    # Two modules that need each other are one concept cut in two, or a collaborator that
    # reaches back into its owner: join them, or hand the collaborator what it needs.
    assert _cycles() == []


#: The 0.1 module paths, served with a warning by 0.2 and gone in 0.3 (CHANGELOG.md names
#: their homes), and the private 0.1 paths (and the league command's), dropped earlier.
DROPPED = [
    "policies",
    "teams",
    "baselines",
    "game_wrappers",
    "adapters",
    "sampler",
    "env",
    "shaping",
    "vec_env",
    "snapshot_ratings",
    "openings",
    "plots",
    "callbacks",
    "k_opponents",
    "env_generator",
    "team_selfplay",
    "run_config",
    "team_train",
    "rundir",
    "summary",
    "recipes",
    "train_command",
    "team_train_command",
    "cli.team_train",
    "core.deprecation",
    "_seats",
    "_archive_checks",
    "_archive_matches",
    "_snapshot_files",
    "_policy_spec",
    "_opponents",
    "_game_config",
    "_vec_copy",
    "_game_workers",
    "_team_seats",
    "_team_vec_env",
    "_fast_path",
    "_team_parts",
    "league.command",
]

#: 0.2's entry points, gone in 0.3: ``runs.start`` (or ``sp_wrappers.cli.app.run_command`` for
#: one command line) is the one way in.
GONE_NAMES = [
    ("sp_wrappers", "MOVED"),
    ("sp_wrappers", "train"),
    ("sp_wrappers.runs", "train"),
    ("sp_wrappers.runs", "train_teams"),
    ("sp_wrappers.runs", "run_league"),
    ("sp_wrappers.runs", "run_psro"),
    ("sp_wrappers.runs.run", "options_from"),
    ("sp_wrappers.cli.train", "main_train"),
    ("sp_wrappers.cli.train", "build_train_parser"),
    ("sp_wrappers.cli.league", "main_league"),
]


@pytest.mark.parametrize("old", DROPPED)
def test_old_module_paths_are_gone(old):
    with pytest.raises(ImportError):
        __import__(f"sp_wrappers.{old}")


@pytest.mark.parametrize(("module", "name"), GONE_NAMES)
def test_the_0_2_entry_points_are_gone(module, name):
    import importlib

    assert not hasattr(importlib.import_module(module), name)


def test_no_old_path_is_served_and_no_finder_is_added():
    code = (
        "import sys\n"
        "hooks = list(sys.meta_path)\n"
        "import sp_wrappers, sp_wrappers.cli\n"
        "print(len([f for f in sys.meta_path if f not in hooks]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == ["0"], result.stderr


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
