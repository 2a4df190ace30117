"""The package's import structure in four numbers: files, lines, largest module, import cycles.

Run:  python benchmarks/import_graph.py [CHECKOUT]     (default: this checkout)

Reads every ``sp_wrappers`` module's imports (at any depth, those under ``TYPE_CHECKING`` left
out), and counts the strongly connected groups of the module graph: a group of more than one
module is an import cycle. Package faces (``__init__.py``) are left out of the cycles, as
import-linter's ``acyclic_siblings`` contract does. Works on any checkout, so a layout can be
compared with an older one: ``git worktree add /tmp/old 78df1b4 && python
benchmarks/import_graph.py /tmp/old``.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = "sp_wrappers"


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in (root / PACKAGE).rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    type_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    targets = set()
    for node in ast.walk(tree):
        if id(node) in type_only or not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if target.startswith(PACKAGE):
            for alias in node.names:
                full = f"{target}.{alias.name}"
                targets.add(full if full in known else target)
    return targets


def cycles(edges: dict[str, set[str]], nodes: list[str]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in nodes:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in nodes:
        if v not in index:
            visit(v)
    return groups


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    known = modules(root)
    edges = defaultdict(set, {name: imports(name, path, known) for name, path in known.items()})
    nodes = [name for name, path in known.items() if path.name != "__init__.py"]
    sizes = sorted(
        (len(p.read_text().splitlines()), str(p.relative_to(root))) for p in known.values()
    )
    found = cycles(edges, nodes)
    print(f"files: {len(known)}  lines: {sum(n for n, _ in sizes)}")
    print(f"largest module: {sizes[-1][1]} ({sizes[-1][0]} lines)")
    print(f"import cycles: {len(found)}")
    for group in found:
        print("  " + " <-> ".join(m.removeprefix(PACKAGE + ".") for m in group))


if __name__ == "__main__":
    main()
