"""``sp-wrappers league GAME``: an AlphaStar league (or plain self-play) from one command.

The command parses its arguments, turns the options given into overrides, resolves the league's
configuration once (:func:`~sp_wrappers.runs.resolve.resolve` with ``kind="league"``), starts it
(:func:`sp_wrappers.runs.start`) and prints its progress and summary. The run directory it
writes is described in :mod:`sp_wrappers.runs.league`.

``sp-wrappers league tictactoe_v3 --timesteps 60000`` runs one main agent, one main exploiter
and one league exploiter; ``--resume RUN_DIR --timesteps T`` continues a league to ``T`` total
learner steps (all players together).

>>> import contextlib, io, tempfile
>>> out = tempfile.mkdtemp()
>>> with contextlib.redirect_stdout(io.StringIO()):
...     status = main_league(["tictactoe_v3", "--timesteps", "256", "--chunk-steps", "64",
...                           "--main-exploiters", "1", "--league-exploiters", "0",
...                           "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=32",
...                           "--eval-games", "2", "--backend", "serial", "--out", out,
...                           "--no-progress", "--no-plots"])
>>> status, sorted(p.name for p in Path(out).iterdir() if p.name != "tb")
(0, ['archive', 'config.json', 'league.json', 'players', 'ratings.json', 'report.html'])
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..games.registry import GAMES
from ..league.backends import BACKENDS
from ..league.builders import ALPHASTAR_DEFAULTS
from ..league.faults import DEFAULT_STALL_SECONDS
from ..runs.recipes import installed_algos
from ..runs.rundir import RunDir
from .common import PROG, add_trust_option, flag_names, say_trust
from .run_options import command_line, given_settings

__all__ = ["add_league_parser", "run_league_command", "main_league"]


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "game", nargs="?", metavar="GAME", help=f"{', '.join(GAMES)} or module:function"
    )
    roles = parser.add_argument_group("league")
    roles.add_argument(
        "--main-agents",
        type=int,
        default=None,
        metavar="N",
        help="players trained against the whole league by PFSP and against themselves; the "
        "run's result (default: 1)",
    )
    roles.add_argument(
        "--main-exploiters",
        type=int,
        default=None,
        metavar="N",
        help="players trained against the main agents only, to find their weaknesses (default: 1)",
    )
    roles.add_argument(
        "--league-exploiters",
        type=int,
        default=None,
        metavar="N",
        help="players trained against the whole league by PFSP, to find the league's blind "
        "spots (default: 1)",
    )
    roles.add_argument(
        "--selfplay",
        action="store_true",
        help="plain self-play instead: one learner and its snapshot pool",
    )
    roles.add_argument(
        "--snapshot-min-steps",
        type=int,
        default=None,
        metavar="N",
        help="learner steps since a player's last snapshot before it may be snapshotted "
        "into the frozen pool "
        f"(default: {ALPHASTAR_DEFAULTS['snapshot_min_steps']:,d})",
    )
    roles.add_argument(
        "--snapshot-max-steps",
        type=int,
        default=None,
        metavar="N",
        help="learner steps since a player's last snapshot after which it is snapshotted "
        f"whatever its win rate (default: {ALPHASTAR_DEFAULTS['snapshot_max_steps']:,d})",
    )
    roles.add_argument(
        "--snapshot-win-rate",
        type=float,
        default=None,
        metavar="P",
        help="between the two: a player is snapshotted once its lowest win rate against the "
        "players it is meant to beat exceeds P "
        f"(default: {ALPHASTAR_DEFAULTS['snapshot_win_rate']})",
    )
    roles.add_argument(
        "--main-agents-compute",
        type=float,
        default=None,
        metavar="P",
        help="the main agents' share of the league's learner steps, at least (default: "
        f"{ALPHASTAR_DEFAULTS['main_agents_compute']}; the other players split the rest)",
    )
    roles.add_argument(
        "--save-every", type=int, default=None, metavar="N", help="--selfplay snapshot interval"
    )
    roles.add_argument(
        "--max-frozen",
        type=int,
        default=None,
        metavar="N",
        help="cap on frozen players in matchmaking (default: no cap)",
    )
    training = parser.add_argument_group("training")
    training.add_argument(
        "--timesteps",
        type=int,
        default=None,
        metavar="T",
        help="learner steps of all players together (default: the recipe's)",
    )
    training.add_argument(
        "--chunk-steps",
        type=int,
        default=None,
        metavar="N",
        help="steps each player learns between league updates, on average; rounded to whole "
        "rollouts (n_steps x n_envs) in the compute shares, said in one line (default: 4096)",
    )
    training.add_argument(
        "--algo",
        choices=installed_algos(),
        default=None,
        help="every player's learner, any installed one (see sp-wrappers train --help)",
    )
    training.add_argument(
        "--hp",
        action="append",
        metavar="KEY=VALUE",
        help="a hyperparameter of the learner, over the recipe's (repeatable; VALUE as JSON)",
    )
    training.add_argument(
        "--game-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="a keyword argument of the game's constructor (repeatable; VALUE as JSON)",
    )
    training.add_argument(
        "--n-envs", type=int, default=None, metavar="N", help="game copies per player"
    )
    training.add_argument("--seed", type=int, default=None, help="the run's seed (default: 0)")
    training.add_argument(
        "--eval-games",
        type=int,
        default=None,
        metavar="N",
        help="end-of-run games of each main agent against each reference player (default: "
        "the recipe's; on --resume, this call's)",
    )
    training.add_argument(
        "--symmetries",
        default=None,
        metavar="auto|none|GAME",
        help="play each player's learner episodes in a random symmetric view of the board, as "
        "sp-wrappers train does (auto: the game's built-ins, checked against the game first; "
        "none: the real view; default: the recipe's)",
    )
    training.add_argument(
        "--magnet",
        default=None,
        metavar="kl=ETA,refresh=N",
        help="every learning player learns with a magnet regulariser, as sp-wrappers train "
        "--magnet (on-policy learners; a resumed league starts the magnets afresh)",
    )
    training.add_argument("--device", default="cpu", help="torch device of the players")
    training.add_argument(
        "--threads", type=int, default=1, metavar="N", help="torch threads per player"
    )
    running = parser.add_argument_group("running")
    running.add_argument(
        "--backend",
        choices=BACKENDS,
        default="process",
        help="where the players learn: serial (this process, one after the other), process "
        "(one process each, the default) or ray (one Ray actor each)",
    )
    running.add_argument("--address", default=None, help="Ray cluster address (--backend ray)")
    running.add_argument(
        "--num-cpus",
        type=float,
        default=None,
        help="Ray CPUs per player (default: 1, or an equal share when the cluster has fewer)",
    )
    running.add_argument("--num-gpus", type=float, default=0, help="Ray GPUs per player")
    running.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="the run directory to write (default: runs/league-GAME)",
    )
    running.add_argument("--resume", default=None, metavar="RUN_DIR", help="continue a league")
    running.add_argument(
        "--stall-seconds",
        type=float,
        default=DEFAULT_STALL_SECONDS,
        metavar="S",
        help="report on stderr a round in which no player finishes for S seconds "
        f"(default: {DEFAULT_STALL_SECONDS:g})",
    )
    running.add_argument(
        "--no-progress", action="store_true", help="print no line per round, only the summary"
    )
    running.add_argument(
        "--no-plots", action="store_true", help="do not draw plots/league_payoff.png"
    )
    running.add_argument(
        "--no-report", action="store_true", help="do not write report.html at the end"
    )
    add_trust_option(parser)
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


def _league_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The league settings among ``args`` that the user gave."""
    from ..runs.resolve import LEAGUE_OVERRIDES

    return given_settings(args, LEAGUE_OVERRIDES, unset=(None, False))


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

    resume = Path(args.resume) if args.resume else None
    config = resolve(args.game, _league_overrides(args), resume=resume, kind="league")
    if resume is None:
        run = RunDir.new(args.out or RunDir.default_for(config).path, "pass --out")
    else:
        run = RunDir(resume)
    ray_only = {"--address": args.address, "--num-cpus": args.num_cpus, "--num-gpus": args.num_gpus}
    given = [flag for flag, value in ray_only.items() if value]
    if given and args.backend != "ray":
        raise LeagueError(f"{', '.join(given)} only apply to --backend ray; drop them or add it.")
    if not args.no_progress:
        print(f"League on {config.game} ({config.algo}) into {run.path}", flush=True)
    trust = tuple(args.trust_module or ())
    say_trust(config, trust, run.config_path)
    options = RunOptions(
        backend=args.backend,
        address=args.address,
        num_cpus=args.num_cpus,
        num_gpus=args.num_gpus,
        plots=not args.no_plots,
        html_report=not args.no_report,
        torch_threads=args.threads,
        device=args.device,
        command=command_line("league", argv),
        stall_seconds=args.stall_seconds,
        report=None if args.no_progress else _say,
        warn=_warn,
        trusted_modules=trust,
    )
    print(flag_names(start(config, run, options).summary()), flush=True)
    return 0


def main_league(argv: Sequence[str] | None = None) -> int:
    """``sp-wrappers league ARGV`` (kept from 0.2): :func:`sp_wrappers.cli.main` runs it; the
    exit status is returned (2 on a user error), ``--help`` and usage errors included."""
    from .app import run_command

    return run_command("league", argv)
