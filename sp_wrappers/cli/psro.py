"""``sp-wrappers psro GAME``: PSRO, a population of best responses and its meta-mixture.

The command turns the options given into overrides, resolves the run once
(:func:`~sp_wrappers.runs.resolve` with ``kind="psro"``: the game's PSRO recipe, or the stored
run), starts it (:func:`~sp_wrappers.runs.start`, which runs
:class:`~sp_wrappers.runs.psro.PSRORun`) and prints one line per iteration::

    sp-wrappers psro sp_wrappers.games.openspiel_games:kuhn_poker --out runs/psro-kuhn
    sp-wrappers psro sp_wrappers.games.openspiel_games:leduc_poker --seconds 3600
    sp-wrappers psro --resume runs/psro-kuhn --iterations 14     # continue to 14 iterations

The run directory holds ``archive/`` (the members, the meta-weights), ``psro.json`` (every
iteration: payoffs, weights, exact exploitability where the game can be walked),
``progress.csv``, ``config.json`` and ``report.html``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from ..games.registry import GAMES
from ..league.errors import LeagueSetupError
from ..opponents.meta_solvers import META_SOLVERS
from ..runs.rundir import RunDir
from .run_options import parse_pairs

__all__ = ["add_psro_parser", "cmd_psro"]

_SETTINGS = ("steps", "meta_solver", "n_envs", "seed", "payoffs", "games_per_pair", "min_gain")
_SETTINGS += ("doublings", "random_ratio", "reference_ratio", "magnet")


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    given: dict[str, Any] = {}
    names = {"steps": "steps_per_iteration", "doublings": "max_doublings"}
    for key in _SETTINGS:
        value = getattr(args, key)
        if value is not None:
            given[names.get(key, key)] = value
    for key in ("iterations", "seconds", "algo"):
        if getattr(args, key) is not None:
            given[key] = getattr(args, key)
    if args.form is not None:
        given["greedy"] = args.form == "greedy"
    if args.start is not None:
        given["warm_start"] = args.start == "warm"
    if args.budget is not None:
        given["keep_budget"] = args.budget == "keep"
    if args.hp:
        given["hp"] = parse_pairs(args.hp, "--hp")
    if args.game_kwarg:
        given["game_kwargs"] = parse_pairs(args.game_kwarg, "--game-kwarg")
    return given


def _say(line: str) -> None:
    print(line, flush=True)


def cmd_psro(args: argparse.Namespace) -> int:
    """Run or resume PSRO; returns 0."""
    from ..runs.resolve import resolve  # torch and SB3: imported once a run starts
    from ..runs.run import RunOptions, start

    if args.resume:
        if args.game:
            raise LeagueSetupError(
                "A resumed PSRO run keeps its game and settings: pass only --resume RUN_DIR "
                "with --iterations N or --seconds S."
            )
        if args.iterations is None and args.seconds is None:
            raise LeagueSetupError("--resume needs --iterations N or --seconds S to continue to.")
        run = RunDir(args.resume)
        config = resolve(overrides=_overrides(args), resume=run.path, kind="psro")
    else:
        if not args.game:
            raise LeagueSetupError("Name the game (sp-wrappers psro GAME) or --resume RUN_DIR.")
        config = resolve(args.game, _overrides(args), kind="psro")
        run = RunDir.new(args.out or RunDir.default_for(config).path, "pass --out")
        print(f"PSRO on {config.game} ({config.algo}) into {run.path}", flush=True)
    options = RunOptions(
        resume=bool(args.resume), report=_say, command=shlex.join(["sp-wrappers", *sys.argv[1:]])
    )
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
    parser.add_argument(
        "game", nargs="?", metavar="GAME", help=f"{', '.join(GAMES)} or module:function"
    )
    parser.add_argument("--out", default=None, metavar="DIR", help="the run directory")
    parser.add_argument("--resume", default=None, metavar="RUN_DIR", help="continue a PSRO run")
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
    parser.add_argument(
        "--random-ratio",
        type=float,
        default=None,
        metavar="F",
        help="share of the oracle's episodes against a uniformly random player (default 0)",
    )
    parser.add_argument(
        "--reference-ratio",
        type=float,
        default=None,
        metavar="F",
        help="share of the oracle's episodes against the game's reference players, such as "
        "tic-tac-toe's minimax (default 0); the meta-mixture gets the rest",
    )
    parser.add_argument(
        "--magnet",
        default=None,
        metavar="kl=ETA,refresh=N",
        help="each best response trains with a magnet regulariser (see sp-wrappers train "
        "--magnet), a fresh magnet per response (default: none)",
    )
    parser.add_argument("--n-envs", type=int, default=None, metavar="N")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--algo", default=None, help="the oracle's learner (default: the recipe's)")
    parser.add_argument("--payoffs", choices=("auto", "exact", "sampled"), default=None)
    parser.add_argument("--games-per-pair", type=int, default=None, metavar="N")
    parser.add_argument("--hp", action="append", metavar="KEY=VALUE", help="learner setting")
    parser.add_argument("--game-kwarg", action="append", metavar="KEY=VALUE")
    parser.set_defaults(func=cmd_psro)
    return parser
