"""The documentation site builds strictly (a broken reference or link fails), documents every
public name, and renders our reStructuredText-flavoured docstrings as Markdown."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sp_wrappers

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def load_extension():
    spec = importlib.util.spec_from_file_location("_griffe_doctest", DOCS / "_griffe_doctest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_name_is_in_the_api_reference():
    reference = "\n".join(p.read_text() for p in (DOCS / "reference").glob("*.md"))
    documented = set(re.findall(r"::: sp_wrappers\.[\w.]*\.(\w+)", reference))
    documented |= set(re.findall(r"^\s+- (\w+)$", reference, flags=re.MULTILINE))
    public = set(sp_wrappers.__all__) - {"__version__"}
    assert sorted(public - documented) == []


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists():
    config = (ROOT / "mkdocs.yml").read_text()
    nav = set(re.findall(r":\s+([\w/.-]+\.md)$", config, flags=re.MULTILINE))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert nav <= pages
    assert sorted(pages - nav) == []


def test_doctest_blocks_after_the_fields_become_a_fenced_example_before_them():
    text = (
        "Summary with :class:`~sp_wrappers.archive.store.SnapshotArchive`.\n\n"
        ":param x: the x,\n    over two lines.\n\n"
        ">>> f(1)\n2\n"
    )
    assert load_extension().markdown_docstring(text) == (
        "Summary with `SnapshotArchive`.\n\n"
        "```pycon\n>>> f(1)\n2\n```\n\n"
        ":param x: the x,\n    over two lines."
    )


def test_a_literal_block_marker_becomes_a_colon_and_full_role_targets_stay_whole():
    text = "Use it like this::\n\n    code()\n\nSee :func:`sp_wrappers.games.registry.make_game`."
    assert load_extension().markdown_docstring(text) == (
        "Use it like this:\n\n    code()\n\nSee `sp_wrappers.games.registry.make_game`."
    )


def test_the_site_builds_in_strict_mode(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "reference" / "envs" / "index.html").exists()
    assert (
        "SelfPlayCallback" in (tmp_path / "reference" / "selfplay-loop" / "index.html").read_text()
    )
