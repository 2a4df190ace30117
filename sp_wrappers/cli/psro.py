"""``sp-wrappers psro GAME``: PSRO, a population of best responses and its meta-mixture.

The command turns the options given into overrides, resolves the run once
(:func:`~sp_wrappers.runs.resolve` with ``kind="psro"``: the game's PSRO recipe, or the stored
run), starts it (:func:`~sp_wrappers.runs.start`, which runs
:class:`~sp_wrappers.runs.psro.PSRORun`) and prints one line per iteration::

    sp-wrappers psro kuhn_poker --out runs/psro-kuhn
    sp-wrappers psro leduc_poker --seconds 3600
    sp-wrappers psro --resume runs/psro-kuhn --iterations 14     # continue to 14 iterations

The run directory holds ``archive/`` (the members, the meta-weights), ``psro.json`` (every
iteration: payoffs, weights, exact exploitability where the game can be walked),
``progress.csv``, ``config.json`` and ``report.html``.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..games.registry import GAMES
from ..league.errors import LeagueSetupError
from ..opponents.meta_solvers import META_SOLVERS
from ..runs.rundir import RunDir
from .common import say_trust
from .run_options import add_run_arguments, command_line, resume_dir, run_settings

__all__ = ["add_psro_parser", "cmd_psro"]

_KINDS = ("psro",)
#: PSRO's own options (its settings' names on the command line).
_NAMES = {"steps": "steps_per_iteration", "doublings": "max_doublings"}
_OWN = ("steps", "meta_solver", "payoffs", "games_per_pair", "min_gain", "doublings")


def _overrides(args: argparse.Namespace, overrides: dict[str, Any]) -> dict[str, Any]:
    given = dict(overrides)
    for key in (*_OWN, "iterations", "seconds"):
        if getattr(args, key) is not None:
            given[_NAMES.get(key, key)] = getattr(args, key)
    if args.form is not None:
        given["greedy"] = args.form == "greedy"
    if args.start is not None:
        given["warm_start"] = args.start == "warm"
    if args.budget is not None:
        given["keep_budget"] = args.budget == "keep"
    return given


def _say(line: str) -> None:
    print(line, flush=True)


def cmd_psro(args: argparse.Namespace) -> int:
    """Run or resume PSRO; returns 0."""
    from ..runs.resolve import resolve  # torch and SB3: imported once a run starts
    from ..runs.run import RunOptions, start

    resume = resume_dir(args)
    overrides, chosen = run_settings(args, _KINDS)
    if resume is not None:
        if args.game:
            raise LeagueSetupError(
                "A resumed PSRO run keeps its game and settings: pass only --resume RUN_DIR "
                "with --iterations N or --seconds S."
            )
        if args.iterations is None and args.seconds is None:
            raise LeagueSetupError("--resume needs --iterations N or --seconds S to continue to.")
        run = RunDir(resume)
        config = resolve(overrides=_overrides(args, overrides), resume=run.path, kind="psro")
    else:
        if not args.game:
            raise LeagueSetupError("Name the game (sp-wrappers psro GAME) or --resume RUN_DIR.")
        config = resolve(args.game, _overrides(args, overrides), kind="psro")
        run = RunDir.new(args.out or RunDir.default_for(config).path, "pass --out")
        print(f"PSRO on {config.game} ({config.algo}) into {run.path}", flush=True)
    options = RunOptions(
        resume=resume is not None, report=_say, command=command_line("psro", None), **chosen
    )
    if resume is not None:
        say_trust(config, options.trusted_modules, run.config_path)
    result = start(config, run, options).psro
    if result.best is not None:
        print(
            f"least exploitable: iteration {result.best['iteration']}, exploitability "
            f"{result.best['exploitability']:.4f} (NashConv {result.best['nash_conv']:.4f})"
        )
    print(run.report_path)
    return 0


def add_psro_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``psro`` command to ``sp-wrappers``'s subparsers."""
    parser = subparsers.add_parser(
        "psro",
        help="PSRO: grow a population of best responses and play its meta-mixture",
        description="Policy-Space Response Oracles: each iteration trains a best response "
        "against the population's meta-mixture, adds it, fills in its payoffs (exact where the "
        "game can be walked) and solves for the new meta-mixture.",
    )
    add_run_arguments(
        parser,
        _KINDS,
        game_help=f"{', '.join(GAMES)}, a PettingZoo or OpenSpiel game by its name (kuhn_poker, "
        "leduc_poker, liars_dice) or module:function",
        resume_help="continue the PSRO run in RUN_DIR (or --out)",
    )
    parser.add_argument("--iterations", type=int, default=None, help="iterations to reach")
    parser.add_argument(
        "--seconds", type=float, default=None, help="stop once the best responses trained this long"
    )
    parser.add_argument(
        "--steps", type=int, default=None, metavar="N", help="learner steps per best response"
    )
    parser.add_argument("--meta-solver", choices=META_SOLVERS, default=None)
    parser.add_argument(
        "--form",
        choices=("greedy", "stochastic"),
        default=None,
        help="members play their most likely move (greedy, the default) or their probabilities",
    )
    parser.add_argument(
        "--start",
        choices=("fresh", "warm"),
        default=None,
        help="each best response starts fresh (default) or from the previous one's weights",
    )
    parser.add_argument(
        "--doublings",
        type=int,
        default=None,
        metavar="N",
        help="a response that does not improve on the mixture trains on, its steps doubled up "
        "to N times, before it joins (0: never; the PSRO recipes: 3)",
    )
    parser.add_argument(
        "--min-gain",
        type=float,
        default=None,
        metavar="F",
        help="the fraction of the mixture's exploitability a response must win against it to "
        "join without training on (default 0: any gain)",
    )
    parser.add_argument(
        "--budget",
        choices=("reset", "keep"),
        default=None,
        help="each response starts at --steps (reset) or at the steps the last one needed (keep)",
    )
    parser.add_argument("--payoffs", choices=("auto", "exact", "sampled"), default=None)
    parser.add_argument("--games-per-pair", type=int, default=None, metavar="N")
    parser.set_defaults(func=cmd_psro)
    return parser
