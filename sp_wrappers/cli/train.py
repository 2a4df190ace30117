"""``sp-wrappers train GAME``: the command line of single-learner and team runs.

The command parses its arguments, turns the options given into overrides, resolves the run once
(:func:`~sp_wrappers.runs.resolve.resolve`: a single learner or teams), starts it with
:func:`sp_wrappers.runs.start` and prints its summary. The arguments are never changed after
parsing.

Run ``sp-wrappers train tictactoe_v3``; ``sp-wrappers train --resume runs/tictactoe_v3
--timesteps 200000`` adds 200k steps to that run with the same archive.

>>> import contextlib, io, os, tempfile
>>> from sp_wrappers.cli.app import run_command
>>> out = tempfile.mkdtemp()
>>> with contextlib.redirect_stdout(io.StringIO()):
...     status = run_command("train", ["tictactoe_v3", "--timesteps", "256", "--n-envs", "2",
...         "--hp", "n_steps=64", "--hp", "batch_size=64", "--save-every", "128",
...         "--eval-games", "2", "--out", out, "--no-progress", "--no-plots"])
>>> written = set(os.listdir(out))  # and tb/ when tensorboard is installed
>>> status, sorted(written & {"archive", "config.json", "model.zip", "ratings.json"})
(0, ['archive', 'config.json', 'model.zip', 'ratings.json'])
>>> run_command("train", ["chess"])  # one line on stderr naming the registered games
2
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.settings import TRAIN_KINDS
from ..games.registry import GAMES
from ..runs.config import TeamRunConfig
from ..runs.resolve import resolve
from ..runs.rundir import CONFIG_NAME, RunDir
from .common import flag_names, say_trust
from .run_options import add_run_arguments, command_line, resume_dir, run_settings

__all__ = ["add_train_parser", "run_train_command", "team_run_banner"]

# ------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------


def _configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    add_run_arguments(
        parser,
        TRAIN_KINDS,
        game_help=f"a registered game ({', '.join(GAMES)}), a PettingZoo or OpenSpiel game by its "
        "name (chess_v6, kuhn_poker; `sp-wrappers games` lists them) or an import path "
        "module:function to a PettingZoo env constructor; optional with --resume or --config",
        resume_help="continue the run in RUN_DIR (or --out) from its config.json, model.zip and "
        "archive",
    )
    parser.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="start a new run from a run's config.json (options override it)",
    )
    parser.set_defaults(func=run_train_command, on_interrupt="continue with --resume")
    return parser


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``train`` command to an ``argparse`` subparsers object (``sp-wrappers``'s).

    Its ``func`` takes the parsed arguments and returns the exit status; user errors raise
    the library's user errors, which ``sp-wrappers`` prints on one line, status 2.
    """
    parser = subparsers.add_parser(
        "train",
        help="train a learner by self-play on a PettingZoo game",
        description="Train a self-play learner with the game's tuned recipe, then rate it and "
        "write the run directory: model.zip, archive/, config.json, ratings.json, plots/, tb/, "
        "report.html.",
    )
    return _configure_parser(parser)


def team_run_banner(config: TeamRunConfig, run: Path, resume: bool) -> str:
    """The line printed before a team run starts."""
    source = CONFIG_NAME if resume else config.recipe
    return (
        f"{'Resuming' if resume else 'Training'} {config.algo} teams on {config.game} "
        f"({source}) into {run}"
    )


def run_train_command(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    """The ``train`` command: resolve the run once, start it, print the summary; returns 0.

    :param args: the parsed arguments (never changed).
    :param argv: the command's arguments, recorded in ``config.json``'s history (default:
        ``sys.argv``).
    """
    from ..runs.run import RunOptions, start  # torch and SB3: imported once a run starts

    resume_path = resume_dir(args)
    overrides, chosen = run_settings(args, TRAIN_KINDS)
    config = resolve(args.game, overrides, resume=resume_path, config_file=args.config)
    resume = resume_path is not None
    if resume:
        run = RunDir(resume_path)
    else:
        run = RunDir.new(args.out or RunDir.default_for(config).path)
    if isinstance(config, TeamRunConfig):
        print(team_run_banner(config, run.path, resume), flush=True)
    else:
        source = CONFIG_NAME if resume else config.recipe
        print(
            f"{'Resuming' if resume else 'Training'} {config.algo} on {config.game} ({source}) "
            f"into {run.path}",
            flush=True,
        )
    options = RunOptions(
        resume=resume,
        timesteps=overrides.get("timesteps") if resume else None,  # on --resume: N more steps
        command=command_line("train", argv),
        report=print,
        **chosen,
    )
    if resume:  # a new run's snapshots are its own learner's, trusted as they are saved
        say_trust(config, options.trusted_modules, run.config_path)
    print(flag_names(start(config, run, options).summary()), flush=True)
    return 0
