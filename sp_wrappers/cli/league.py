"""``sp-wrappers league GAME``: an AlphaStar league (or plain self-play) from one command.

The command parses its arguments, turns the options given into overrides, resolves the league's
configuration once (:func:`~sp_wrappers.runs.resolve.resolve` with ``kind="league"``), starts it
(:func:`sp_wrappers.runs.start`) and prints its progress and summary. The run directory it
writes is described in :mod:`sp_wrappers.runs.league`.

``sp-wrappers league tictactoe_v3 --timesteps 60000`` runs one main agent, one main exploiter
and one league exploiter; ``--resume RUN_DIR --timesteps T`` continues a league to ``T`` total
learner steps (all players together).

>>> import contextlib, io, tempfile
>>> from pathlib import Path
>>> from sp_wrappers.cli.app import run_command
>>> out = tempfile.mkdtemp()
>>> with contextlib.redirect_stdout(io.StringIO()):
...     status = run_command("league", ["tictactoe_v3", "--timesteps", "256", "--chunk-steps", "64",
...                           "--main-exploiters", "1", "--league-exploiters", "0",
...                           "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=32",
...                           "--eval-games", "2", "--backend", "serial", "--out", out,
...                           "--no-progress", "--no-plots"])
>>> status, sorted(p.name for p in Path(out).iterdir() if p.name != "tb")
(0, ['archive', 'config.json', 'league.json', 'players', 'ratings.json', 'report.html'])
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import Any

from ..games.registry import GAMES
from ..runs.rundir import RunDir
from .common import PROG, flag_names, say_trust
from .run_options import add_run_arguments, command_line, resume_dir, run_settings

_KINDS = ("league",)

__all__ = ["add_league_parser", "run_league_command"]


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    add_run_arguments(
        parser,
        _KINDS,
        game_help=f"{', '.join(GAMES)}, a PettingZoo or OpenSpiel game by its name (chess_v6) "
        "or module:function",
        resume_help="continue the league in RUN_DIR (or --out)",
    )
    parser.set_defaults(func=run_league_command, on_interrupt="continue with --resume RUN_DIR")
    return parser


def add_league_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``league`` on the ``sp-wrappers`` parser."""
    parser = subparsers.add_parser(
        "league",
        help="train a league (AlphaStar roles, PFSP) of SB3 learners",
        description="Train main agents, main exploiters and league exploiters matched by PFSP, "
        "in parallel processes or on a Ray cluster; write a run directory like train's.",
    )
    return _configure(parser)


def _warn(line: str) -> None:
    print(f"{PROG} league: {flag_names(line)}", file=sys.stderr, flush=True)


def _say(line: str) -> None:
    print(line, flush=True)


def run_league_command(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    """The ``league`` command; returns 0.

    :param args: the parsed arguments (never changed).
    :param argv: the command's arguments, recorded in ``config.json``'s history.
    """
    from ..runs.config import LeagueError
    from ..runs.resolve import resolve
    from ..runs.run import RunOptions, start  # torch and SB3

    resume = resume_dir(args)
    overrides, chosen = run_settings(args, _KINDS)
    config = resolve(args.game, overrides, resume=resume, kind="league")
    if resume is None:
        run = RunDir.new(args.out or RunDir.default_for(config).path, "pass --out")
    else:
        run = RunDir(resume)
    options = RunOptions(command=command_line("league", argv), warn=_warn, report=_say, **chosen)
    ray_only = [f"`{key}`" for key in ("address", "num_cpus", "num_gpus") if chosen.get(key)]
    if ray_only and options.backend != "ray":
        raise LeagueError(
            f"{', '.join(ray_only)} only apply to `backend` ray; drop them or add it."
        )
    if options.progress:
        print(f"League on {config.game} ({config.algo}) into {run.path}", flush=True)
    else:
        options = dataclasses.replace(options, report=None)
    say_trust(config, options.trusted_modules, run.config_path)
    print(flag_names(start(config, run, options).summary()), flush=True)
    return 0
