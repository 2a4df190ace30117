"""A package's exported function keeps its name whatever was imported before it, also where the
function shares its module's name (``exploitability``, ``round_robin``): importing such a module
sets the package's attribute to the module, which made ``from sp_wrappers.evaluation import
exploitability`` a module once any test had imported ``sp_wrappers.evaluation.exploitability``."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import sp_wrappers


def test_every_exported_name_that_is_also_a_module_stays_the_export_after_the_module_loads():
    script = """
import importlib, inspect, pkgutil, sp_wrappers
bad = []
for info in pkgutil.iter_modules(sp_wrappers.__path__):
    if not info.ispkg:
        continue
    package = importlib.import_module(f"sp_wrappers.{info.name}")
    modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    for name in sorted(set(getattr(package, "__all__", ())) & modules):
        importlib.import_module(f"{package.__name__}.{name}")  # the module first
        value = getattr(importlib.import_module(package.__name__), name)
        if inspect.ismodule(value):
            bad.append(f"{package.__name__}.{name}")
print(bad)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_shared_names_are_there_to_check():
    evaluation = importlib.import_module("sp_wrappers.evaluation")
    modules = {m.name for m in pkgutil.iter_modules(evaluation.__path__)}
    assert {"exploitability", "round_robin"} <= modules & set(evaluation.__all__)
    assert callable(sp_wrappers.exploitability)
