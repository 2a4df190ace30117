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


#: The public 0.1 module paths and their homes since 0.2: each imports as its new home, with a
#: warning (``sp_wrappers.registration`` stays a real module, without a warning).
MOVED = {
    "policies": "core.policies",
    "teams": "core.teams",
    "baselines": "games.baselines",
    "game_wrappers": "games.wrappers",
    "adapters": "games.adapters",
    "sampler": "opponents.sampler",
    "env": "envs.selfplay_env",
    "shaping": "envs.shaping",
    "vec_env": "envs.vector.vec_env",
    "snapshot_ratings": "ratings.archive_ratings",
    "openings": "evaluation.openings",
    "plots": "evaluation.plots",
    "callbacks": "training.callbacks",
    "k_opponents": "training.k_opponents",
    "env_generator": "training.env_generator",
    "team_selfplay": "training.team_selfplay",
    "run_config": "runs.config",
    "team_train": "runs.team_train",
    "rundir": "runs.rundir",
    "summary": "runs.summary",
    "recipes": "runs.recipes",
    "train_command": "cli.train",
    "team_train_command": "cli.team_train",
}

#: The private 0.1 paths (and the league command's), dropped: CHANGELOG.md names their homes.
DROPPED = [
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


def test_the_package_name_train_stays_the_function_after_every_module_is_imported():
    # 0.1's module path sp_wrappers.train is gone: a module there would replace the function
    # `from sp_wrappers import train` once anything imported it (as a doctest run does).
    import importlib
    import pkgutil

    import sp_wrappers

    for info in pkgutil.walk_packages(sp_wrappers.__path__, "sp_wrappers."):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(info.name)
    from sp_wrappers import train

    assert callable(train) and train.__module__ == "sp_wrappers.runs.single"
    with pytest.raises(ImportError):
        importlib.import_module("sp_wrappers.train")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_paths_still_import_with_a_deprecation_warning(old, monkeypatch):
    import importlib

    new = importlib.import_module(f"sp_wrappers.{MOVED[old]}")
    monkeypatch.delitem(sys.modules, f"sp_wrappers.{old}", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(f"sp_wrappers.{old}")

    assert [w.category for w in caught] == [DeprecationWarning]
    assert f"sp_wrappers.{MOVED[old]}" in str(caught[0].message)
    assert caught[0].filename == __file__  # the warning points at the importing code
    assert module.__all__ == new.__all__
    assert all(getattr(module, name) is getattr(new, name) for name in new.__all__)


@pytest.mark.parametrize("old", DROPPED)
def test_private_old_module_paths_are_gone(old):
    with pytest.raises(ImportError):
        __import__(f"sp_wrappers.{old}")


def test_the_old_paths_are_one_table_and_no_files():
    import sp_wrappers

    assert sp_wrappers.MOVED == MOVED
    assert not [old for old in MOVED if (PACKAGE / f"{old}.py").exists()]


def test_the_old_paths_finder_answers_for_the_table_names_only():
    code = (
        "import sys\n"
        "hooks = list(sys.meta_path)\n"
        "import sp_wrappers\n"
        "added = [f for f in sys.meta_path if f not in hooks]\n"
        "import importlib; importlib.reload(sp_wrappers)\n"
        "again = [f for f in sys.meta_path if f not in hooks]\n"
        "names = ['json', 'sp_wrappers.nope', 'sp_wrappers.envs.vec_env', 'vec_env',\n"
        "         'sp_wrappers.registration', 'sp_wrappers.vec_env']\n"
        "print(len(added), len(again), [bool(added[0].find_spec(n)) for n in names])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == ["1", "1", *"[False, False, False, False, False, True]".split()]


@pytest.mark.parametrize("form", ["attribute", "from"])
def test_old_paths_warn_from_the_attribute_and_the_from_import_too(form, monkeypatch):
    import sp_wrappers
    from sp_wrappers.envs.vector import vec_env

    monkeypatch.delitem(sys.modules, "sp_wrappers.vec_env", raising=False)
    monkeypatch.delattr(sp_wrappers, "vec_env", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if form == "attribute":
            module = sp_wrappers.vec_env
            assert module is vec_env
        else:
            from sp_wrappers.vec_env import SelfPlayVecEnv

            assert SelfPlayVecEnv is vec_env.SelfPlayVecEnv
    assert [w.category for w in caught] == [DeprecationWarning]
    assert caught[0].filename == __file__
    assert "vec_env" not in sp_wrappers.__all__


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
