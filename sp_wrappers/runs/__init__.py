"""The runs layer: whole training runs as a library, with no argparse and no printing.

A run is one typed, frozen configuration (:class:`RunConfig`, :class:`TeamRunConfig`,
:class:`LeagueConfig`) resolved once from a game, the user's overrides and an optional run to
resume or config file (:func:`resolve_run`, :func:`resolve_league`), then started by its one
entry point (:func:`train`, :func:`train_teams`, :func:`run_league`)::

    from sp_wrappers import runs

    config = runs.resolve_run("tictactoe_v3", {"timesteps": 50_000})
    result = runs.train(config, "runs/ttt")
    print(result.summary())

Names load on first use, so importing the package stays cheap (no torch) and a single-learner
run never imports team or league code. The single-learner run lives in
:mod:`sp_wrappers.runs.single` (0.2's ``sp_wrappers.runs.train`` module: the name ``runs.train``
is the function now).
This layer may import every layer below it: ``league``, ``training``, ``evaluation``, ``envs``,
``ratings``, ``opponents``, ``archive``, ``games`` and ``core``.
"""

from __future__ import annotations

from ..core.lazy import lazy_exports

__all__ = [
    "RunConfig",
    "TeamRunConfig",
    "LeagueConfig",
    "TrainError",
    "LeagueError",
    "resolve_run",
    "resolve_league",
    "train",
    "train_teams",
    "run_league",
    "TrainResult",
    "TeamTrainResult",
    "write_report",
    "choose_player",
    "resolve_player",
    "PlayerChoice",
    "exploit_run",
    "ExploitResult",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RunConfig": ".config",
        "TeamRunConfig": ".config",
        "TrainError": ".config",
        "LeagueConfig": ".league",
        "LeagueError": ".league",
        "resolve_run": ".resolve",
        "resolve_league": ".league",
        "train_teams": ".team_train",
        "TeamTrainResult": ".team_train",
        "run_league": ".league",
        "train": ".single",
        "TrainResult": ".single",
        "write_report": ".report",
        "choose_player": ".players",
        "resolve_player": ".players",
        "PlayerChoice": ".players",
        "exploit_run": ".exploit",
        "ExploitResult": ".exploit",
    },
)
