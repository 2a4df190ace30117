"""The runs layer: whole training runs as a library, with no argparse and no printing.

A run is one typed, frozen configuration (:class:`RunConfig`, :class:`TeamRunConfig`,
:class:`LeagueConfig`, :class:`PSROConfig`) resolved once from a game, the user's overrides and
an optional run to resume or config file (:func:`resolve`), then started by the one entry point
of every kind, :func:`start`, in a run directory (:class:`RunDir`, which owns its layout)::

    from sp_wrappers import runs

    config = runs.resolve("tictactoe_v3", {"timesteps": 50_000})
    result = runs.start(config, "runs/ttt", runs.RunOptions(progress=False))
    print(result.summary())

:func:`start` looks the :class:`Run` subclass up by the configuration's type (single learner,
teams, league, PSRO: :mod:`sp_wrappers.runs.kinds`); it is the one way a run starts.
Names load on first use (but :func:`resolve`, which the module of its name would hide), so
importing the package stays cheap (no torch) and a single-learner run never imports team or
league code. The single-learner run lives in :mod:`sp_wrappers.runs.single`.
This layer may import every layer below it: ``league``, ``training``, ``evaluation``, ``envs``,
``ratings``, ``opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from ..core.lazy import lazy_exports

# Loaded with the package: once imported, the module runs/resolve.py would hide a lazy name.
from .resolve import resolve

__all__ = [
    "start",
    "resolve",
    "Run",
    "RunOptions",
    "RunResult",
    "RunDir",
    "RunConfig",
    "TeamRunConfig",
    "LeagueConfig",
    "TrainError",
    "LeagueError",
    "resolve_run",
    "resolve_league",
    "TrainResult",
    "TeamTrainResult",
    "write_report",
    "PSROConfig",
    "PSRORun",
    "resolve_psro",
    "choose_player",
    "resolve_player",
    "PlayerChoice",
    "exploit_run",
    "ExploitResult",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    modules={
        ".run": ("start", "Run", "RunOptions", "RunResult"),
        ".rundir": ("RunDir",),
        ".config": ("RunConfig", "TeamRunConfig", "TrainError", "LeagueConfig", "LeagueError"),
        ".resolve": ("resolve_run", "resolve_league"),
        ".team_train": ("TeamTrainResult",),
        ".single": ("TrainResult",),
        ".report": ("write_report",),
        ".psro": ("PSROConfig", "PSRORun", "resolve_psro"),
        ".players": ("choose_player", "resolve_player", "PlayerChoice"),
        ".exploit": ("exploit_run", "ExploitResult"),
    },
)
