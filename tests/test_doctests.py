"""Every ``>>>`` example in ``sp_wrappers`` runs and shows what it claims.

Modules are discovered when the tests are collected, so new modules are covered without editing
this file. A module that cannot be imported because an optional dependency is missing (Ray,
matplotlib, openskill) is skipped with the reason; any other import error fails.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import sp_wrappers

OPTIONAL_DEPENDENCIES = {"ray", "matplotlib", "openskill"}
OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = [sp_wrappers.__name__]
    for info in pkgutil.walk_packages(sp_wrappers.__path__, prefix=f"{sp_wrappers.__name__}."):
        names.append(info.name)
    return sorted(names)


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing = (getattr(error, "name", None) or "").split(".")[0]
        if missing in OPTIONAL_DEPENDENCIES:
            pytest.skip(f"{name} needs the optional dependency {missing!r}: {error}")
        raise


@pytest.mark.parametrize("module_name", _module_names())
def test_doctests_pass(module_name):
    module = _import(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    tests = [t for t in finder.find(module, module_name) if t.examples]
    if not tests:
        pytest.skip(f"{module_name} has no doctests")
    report: list[str] = []
    for test in sorted(tests, key=lambda t: t.name):
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)


def test_a_missing_optional_dependency_skips_but_other_import_errors_fail(monkeypatch):
    def import_module(name: str):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(importlib, "import_module", import_module)
    with pytest.raises(pytest.skip.Exception, match="optional dependency 'ray'"):
        _import("ray")
    with pytest.raises(ModuleNotFoundError):
        _import("safetensors")
