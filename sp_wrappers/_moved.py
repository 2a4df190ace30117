"""Old module paths, kept importable after the move into layers (0.2).

This module holds :data:`MOVED_MODULES` (old dotted path -> new one) and
:class:`MovedModuleFinder`, an import hook that answers an old path with a module forwarding to
the new one, and warns once (``DeprecationWarning``) that the old path goes away in 0.3.
``sp_wrappers.registration`` is the one old path that stays without a warning: its
``make_env`` is the entry point stored in users' Gymnasium registries and RL Zoo yaml files.
Paths that became packages (``sp_wrappers.archive``, ``games``, ``ratings``, ``evaluation``,
``cli``) need no alias: each package re-exports the names its old module had.

>>> import sys, warnings
>>> _ = sys.modules.pop("sp_wrappers.shaping", None)  # (a first import warns)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from sp_wrappers.shaping import DrawReward
>>> DrawReward.__module__, caught[0].category.__name__
('sp_wrappers.envs.shaping', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED_MODULES", "MovedModuleFinder"]

#: Old module path -> its home since 0.2 (see CHANGELOG.md).
MOVED_MODULES: dict[str, str] = {
    f"sp_wrappers.{old}": f"sp_wrappers.{new}"
    for old, new in {
        "policies": "core.policies",
        "_seats": "core.seats",
        "teams": "core.teams",
        "_archive_checks": "archive.checks",
        "_archive_matches": "archive.matches",
        "_snapshot_files": "archive.files",
        "_policy_spec": "archive.policy_spec",
        "baselines": "games.baselines",
        "game_wrappers": "games.wrappers",
        "adapters": "games.adapters",
        "_opponents": "opponents.slots",
        "sampler": "opponents.sampler",
        "env": "envs.selfplay_env",
        "_game_config": "envs.game_config",
        "registration": "envs.registration",
        "shaping": "envs.shaping",
        "vec_env": "envs.vector.vec_env",
        "_vec_copy": "envs.vector.env_copy",
        "_game_workers": "envs.vector.game_workers",
        "_team_seats": "envs.vector.team_driver",
        "_team_vec_env": "envs.vector.team_vec_env",
        "_fast_path": "envs.vector.fast_path",
        "snapshot_ratings": "ratings.archive_ratings",
        "openings": "evaluation.openings",
        "plots": "evaluation.plots",
        "callbacks": "training.callbacks",
        "k_opponents": "training.k_opponents",
        "env_generator": "training.env_generator",
        "team_selfplay": "training.team_selfplay",
        "_team_parts": "training.team_parts",
        "league.command": "cli.league",
        "run_config": "runs.config",
        "train": "runs.train",
        "team_train": "runs.team_train",
        "rundir": "runs.rundir",
        "summary": "runs.summary",
        "recipes": "runs.recipes",
        "train_command": "cli.train",
        "team_train_command": "cli.team_train",
    }.items()
}
#: Old paths that stay without a warning (entry points stored outside this package).
STABLE_ALIASES = frozenset({"sp_wrappers.registration"})

_IMPORT_MACHINERY = ("<frozen importlib", __file__)


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        if old not in STABLE_ALIASES:
            level, frame = 1, sys._getframe(0)
            while frame is not None and frame.f_code.co_filename.startswith(_IMPORT_MACHINERY):
                frame, level = frame.f_back, level + 1
            warnings.warn(
                f"{old} moved to {self.new} in sp_wrappers 0.2 and the old path goes away in 0.3: "
                f"import from {self.new} (or the public names from sp_wrappers) instead.",
                DeprecationWarning,
                stacklevel=level,
            )
        target = importlib.import_module(self.new)
        skip = {"__name__", "__spec__", "__loader__", "__package__", "__path__", "__file__"}
        module.__dict__.update({k: v for k, v in vars(target).items() if k not in skip})
        module.__getattr__ = lambda name: getattr(target, name)  # type: ignore[method-assign]


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old module paths of :data:`MOVED_MODULES`; every other name passes by."""

    def find_spec(self, name: str, path: object = None, target: object = None):  # noqa: ANN201
        new = MOVED_MODULES.get(name)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(name, _Alias(new))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
