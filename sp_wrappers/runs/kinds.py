"""The kinds of run, one table: ``config.json``'s ``kind`` -> its configuration class and its
:class:`~sp_wrappers.runs.run.Run` class.

Both are import paths (``"module:Class"``), so that opening or starting one kind of run imports
no other kind's code: a single learner's run never loads team or league modules. A new kind
is one line here, or one :func:`register_run_kind` call from the module that defines it. A kind
with a resolver of its own (PSRO's recipe and overrides) names it in :data:`KIND_RESOLVERS`;
:func:`sp_wrappers.runs.resolve` calls it for that kind.

>>> kind_of_json({"game": "tictactoe_v3"}), kind_of_json({"command": "league"})
('single', 'league')
>>> config_class("teams").__name__
'TeamRunConfig'
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from .config import TrainError

__all__ = [
    "RUN_KINDS",
    "KIND_RESOLVERS",
    "register_run_kind",
    "kind_resolver",
    "kind_of_json",
    "kind_of",
    "config_class",
    "run_class",
]

#: ``kind`` -> (configuration class, run class), as ``"module:Class"`` import paths.
RUN_KINDS: dict[str, tuple[str, str]] = {
    "single": ("sp_wrappers.runs.config:RunConfig", "sp_wrappers.runs.single:SingleRun"),
    "teams": ("sp_wrappers.runs.config:TeamRunConfig", "sp_wrappers.runs.team_train:TeamRun"),
    "league": ("sp_wrappers.runs.config:LeagueConfig", "sp_wrappers.runs.league:LeagueRun"),
    "psro": ("sp_wrappers.runs.psro:PSROConfig", "sp_wrappers.runs.psro:PSRORun"),
}


#: ``kind`` -> its resolver, ``"module:function"`` called as ``resolver(game, overrides,
#: resume)``, for the kinds that :func:`~sp_wrappers.runs.resolve.resolve` does not resolve itself.
KIND_RESOLVERS: dict[str, str] = {"psro": "sp_wrappers.runs.psro:resolve_psro"}


def register_run_kind(kind: str, config: str, run: str, resolver: str | None = None) -> None:
    """Add a kind of run (or replace one): ``config`` and ``run`` are ``"module:Class"`` paths
    to its configuration class (whose ``kind`` field defaults to ``kind``) and its
    :class:`~sp_wrappers.runs.run.Run` subclass; ``resolver`` (``"module:function"``, optional)
    resolves its configurations (see :data:`KIND_RESOLVERS`)."""
    RUN_KINDS[kind] = (config, run)
    if resolver is not None:
        KIND_RESOLVERS[kind] = resolver


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def kind_of_json(data: Mapping[str, Any]) -> str:
    """The kind of run a ``config.json`` object holds: its ``kind``; files written before every
    file named one say it other ways (a league's ``"command": "league"``; no key at all: a
    single learner's run)."""
    kind = data.get("kind")
    if isinstance(kind, str):
        return kind
    return "league" if data.get("command") == "league" else "single"


def config_class(kind: str) -> type:
    """The configuration class of ``kind`` (imported on demand)."""
    try:
        return _load(RUN_KINDS[kind][0])
    except KeyError:
        raise TrainError(
            f"Unknown kind of run {kind!r}; this sp_wrappers runs {', '.join(RUN_KINDS)}. "
            "Install the version that wrote the run."
        ) from None


def kind_resolver(kind: str | None) -> Any:
    """The resolver of ``kind`` (imported on demand), or ``None`` for a kind without one.

    >>> kind_resolver("single") is None, kind_resolver("psro").__name__
    (True, 'resolve_psro')
    """
    path = KIND_RESOLVERS.get(kind or "")
    return None if path is None else _load(path)


def run_class(config: Any) -> type:
    """The :class:`~sp_wrappers.runs.run.Run` class that runs ``config``, looked up by its type."""
    return _load(RUN_KINDS[kind_of(config)][1])


def kind_of(config: Any) -> str:
    """The kind whose configuration class is ``type(config)``."""
    name = f"{type(config).__module__}:{type(config).__qualname__}"
    for kind, (config_path, _) in RUN_KINDS.items():
        if config_path == name:
            return kind
    raise TrainError(
        f"{type(config).__name__} is no run configuration; pass one of "
        f"{', '.join(path.split(':')[1] for path, _ in RUN_KINDS.values())}."
    )
