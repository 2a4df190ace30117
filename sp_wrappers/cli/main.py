"""The ``sp-wrappers`` command line: train, league, ratings, tournaments, plots, play, watch
and report.

This module holds :func:`main` (the console entry point), :class:`CommandParser`,
:func:`build_parser` and :data:`COMMANDS` (the commands that open a run's archive and take
``--trust-module``). The commands themselves live in their own modules
(:mod:`~sp_wrappers.cli.train`, :mod:`~sp_wrappers.cli.league`, :mod:`~sp_wrappers.cli.inspect`
for ratings, tournament and plot, :mod:`~sp_wrappers.cli.play`, :mod:`~sp_wrappers.cli.watch`,
:mod:`~sp_wrappers.cli.report`, :mod:`~sp_wrappers.cli.exploitability`); what they share is in
:mod:`~sp_wrappers.cli.common`.

Commands::

    sp-wrappers ratings RUN_DIR                 # table: rating, 95% interval, games, vs baselines
    sp-wrappers ratings RUN_DIR --config '{"komi": 7.5}'   # only games under that configuration
    sp-wrappers ratings RUN_DIR --by-config     # the learner's record per game configuration
    sp-wrappers tournament RUN_DIR --games-per-pair 20 --backend process --baseline random
    sp-wrappers plot RUN_DIR --out plots/       # ratings.png, payoff.png
    sp-wrappers train GAME --timesteps 100000  # a run directory with archive/, report.html
    sp-wrappers league GAME --main-agents 1 --main-exploiters 1 --league-exploiters 1
    sp-wrappers psro GAME --iterations 10       # PSRO: best responses and their meta-mixture
    sp-wrappers play RUN_DIR --snapshot best --seat 0 --record   # play a snapshot yourself
    sp-wrappers watch RUN_DIR --a latest --b minimax --out match.gif  # a replay (or as text)
    sp-wrappers report RUN_DIR                  # RUN_DIR/report.html, one self-contained page
    sp-wrappers exploitability RUN_DIR          # exact NashConv per snapshot and mixture

``RUN_DIR`` is a run directory holding ``archive/`` and ``config.json`` (a run's, or only
``{"game": NAME, "game_kwargs": {...}}``), a team's ``archives/<team>``, or an archive directory
itself (see :class:`~sp_wrappers.runs.rundir.RunArchive`). ``NAME`` is a registered game
(``tictactoe_v3``, ``connect_four_v3``, ``texas_holdem_v4``, ``pong_v3`` with RAM observations)
or an import path ``module:function``; ``--game`` overrides the config.

Every user error (not an archive, no games yet, unknown backend or game, a missing optional extra)
ends with exit status 2 and a one-line message on stderr, without a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ..games.registry import GAMES
from .common import BASELINES, PROG, CLIError, add_trust_option, error_line, user_errors
from .exploit import add_exploit_parser
from .exploitability import add_exploitability_parser
from .inspect import add_rating_options, cmd_plot, cmd_ratings, cmd_tournament
from .play import add_play_parser
from .report import add_report_parser
from .watch import add_watch_parser

__all__ = ["main", "build_parser", "CommandParser"]

#: The commands that never need ``train`` or ``league`` (``main`` builds the parser without
#: them, so these commands do not import the training stack).
COMMANDS = ("ratings", "tournament", "plot", "play", "watch", "report", "exploitability", "exploit")


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and a short usage hint, not the full usage.

    A mistyped option or command gets the closest ones offered (``did you mean --timesteps?``),
    from the options of the command it was given to. Every subcommand's parser is one too
    (``add_subparsers`` builds them from the parent's class).

    >>> parser = CommandParser(prog="demo")
    >>> _ = parser.add_argument("--timesteps", type=int)
    >>> parser.suggest(["--timestpes", "64"])
    'did you mean --timesteps?'
    """

    def option_names(self) -> list[str]:
        """Every option string this parser takes (``--timesteps``, ``-h``, ...)."""
        return [name for action in self._actions for name in action.option_strings]

    def suggest(self, words: Sequence[str]) -> str:
        """``"did you mean --x?"`` for the options among ``words`` close to one of ours."""
        offers: list[str] = []
        for word in words:
            if not word.startswith("-"):
                continue
            typed = word.split("=", 1)[0]
            for match in difflib.get_close_matches(typed, self.option_names(), n=1, cutoff=0.6):
                if match not in offers:
                    offers.append(match)
        return f"did you mean {' or '.join(offers)}?" if offers else ""

    def short_usage(self) -> str:
        """``usage: sp-wrappers train [GAME] [options]`` and where the full list is."""
        positionals = [
            action.metavar or action.dest
            for action in self._actions
            if not action.option_strings and not isinstance(action, argparse._SubParsersAction)
        ]
        subcommands = any(isinstance(a, argparse._SubParsersAction) for a in self._actions)
        words = [self.prog, *(str(p) for p in positionals)]
        if subcommands:
            words.append("COMMAND")
        return f"usage: {' '.join(words)} [options]  ({self.prog} --help lists them)"

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        """Print ``PROG: error: MESSAGE`` (with a suggestion) and a short usage hint; exit 2."""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            options = re.findall(r"'([^']*)'", choice.group(2))
            close = difflib.get_close_matches(choice.group(1), options, n=1, cutoff=0.6)
            if close:
                message = f"{message}; did you mean {close[0]}?"
        self.exit(2, f"{error_line(self.prog, message)}\n{self.short_usage()}\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse's, but an unrecognized option is reported by the subcommand it was
        given to, with the closest of that subcommand's options."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self._subcommand(parsed) or self
            hint = parser.suggest(extras)
            message = f"unrecognized arguments: {' '.join(extras)}"
            parser.error(f"{message}; {hint}" if hint else message)
        return parsed

    def _subcommand(self, parsed: argparse.Namespace) -> CommandParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest or "", None) or "")
                if isinstance(chosen, CommandParser):
                    return chosen
        return None


def _add_train_command(subparsers: Any) -> None:
    """Register ``train`` when ``sp_wrappers.cli.train`` defines
    ``add_train_parser(subparsers)``."""
    try:
        module = importlib.import_module(f"{__package__ or 'sp_wrappers.cli'}.train")
    except ModuleNotFoundError as error:
        if error.name and error.name.endswith("sp_wrappers.cli.train"):
            return
        message = f"The train command is unavailable: {error}."
    except Exception as error:  # a broken train module must not take the other commands down
        message = f"The train command is unavailable: {type(error).__name__}: {error}."
    else:
        add = getattr(module, "add_train_parser", None)
        if callable(add):
            add(subparsers)
        return

    def unavailable(args: argparse.Namespace) -> int:
        raise CLIError(message)

    parser = subparsers.add_parser("train", help="train a learner (unavailable)", add_help=False)
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    parser.set_defaults(func=unavailable)


def _add_league_command(subparsers: Any) -> None:
    """Register ``league`` (from ``sp_wrappers.cli.league``); a module that cannot be
    imported leaves a stub that says why, and the other commands keep working."""
    try:
        from .league import add_league_parser
    except Exception as error:  # noqa: BLE001 - e.g. a broken train module, which league uses
        message = f"The league command is unavailable: {type(error).__name__}: {error}."

        def unavailable(args: argparse.Namespace) -> int:
            raise CLIError(message)

        parser = subparsers.add_parser(
            "league", help="train a league (unavailable)", add_help=False
        )
        parser.add_argument("rest", nargs=argparse.REMAINDER)
        parser.set_defaults(func=unavailable)
        return
    add_league_parser(subparsers)


def build_parser(include_train: bool = True) -> argparse.ArgumentParser:
    """The ``sp-wrappers`` argument parser.

    :param include_train: also register ``train`` from ``sp_wrappers.cli.train`` (when it
        exists).
    """
    from .._version import __version__

    parser = CommandParser(
        prog=PROG,
        description="Self-play runs: train, league, ratings, tournaments, plots, play against "
        "a snapshot, watch a match and a run report.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")

    ratings = subparsers.add_parser(
        "ratings",
        help="rate every snapshot from the archive's match history",
        description="Fit Bradley-Terry ratings over the whole match history (training and "
        "evaluation games) and print a table: rating, 95% interval, games, results against "
        "the baselines.",
    )
    ratings.add_argument("run_dir", metavar="RUN_DIR", help="a run directory or an archive")
    add_rating_options(ratings)
    ratings.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ratings.add_argument(
        "--config",
        default=None,
        metavar="JSON",
        help="rate only the games whose game configuration has these keys and values, e.g. "
        "'{\"komi\": 7.5}' (games without one count as {}); see --env-generator",
    )
    ratings.add_argument(
        "--by-config",
        action="store_true",
        help="print the learner's games, W-D-L and score per game configuration instead",
    )
    ratings.set_defaults(func=cmd_ratings)

    tournament = subparsers.add_parser(
        "tournament",
        help="play the missing round-robin games between snapshots and baselines",
        description="Play every pair of snapshots and baselines up to --games-per-pair "
        "evaluation games (games already in the archive count), record them, print the table.",
    )
    tournament.add_argument("run_dir", metavar="RUN_DIR", help="a run directory or an archive")
    tournament.add_argument(
        "--games-per-pair",
        type=int,
        default=20,
        metavar="N",
        help="evaluation games per pair (default: 20)",
    )
    tournament.add_argument(
        "--backend",
        default="process",
        metavar="{process,ray,serial}",
        help="where games run (default: process)",
    )
    tournament.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="parallel workers (default: one per CPU)",
    )
    tournament.add_argument(
        "--baseline",
        action="append",
        metavar="NAME",
        help=f"a baseline joining the tournament, repeatable "
        f"({', '.join(BASELINES)}; default: random)",
    )
    tournament.add_argument(
        "--game",
        default=None,
        help=f"the game (overrides config.json): {', '.join(GAMES)} or module:function",
    )
    tournament.add_argument(
        "--snapshots",
        nargs="+",
        metavar="ID",
        help="only these snapshots (default: all); latest, best and nash (the Nash mixture, one "
        "snapshot drawn per game) are players too",
    )
    tournament.add_argument("--seed", type=int, default=0, help="tournament seed (default: 0)")
    tournament.add_argument(
        "--deterministic",
        action="store_true",
        help="snapshots take their most likely action instead of sampling",
    )
    tournament.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_rating_options(tournament)
    tournament.set_defaults(func=cmd_tournament)

    plot = subparsers.add_parser(
        "plot",
        help="write ratings.png and payoff.png",
        description="Plot rating against training step (with 95% intervals) and the payoff "
        "matrix as a heatmap. Needs matplotlib (the 'plots' extra).",
    )
    plot.add_argument("run_dir", metavar="RUN_DIR", help="a run directory or an archive")
    plot.add_argument(
        "--out", default=None, metavar="DIR", help="output directory (default: RUN_DIR/plots)"
    )
    add_rating_options(plot)
    plot.set_defaults(func=cmd_plot)

    add_play_parser(subparsers)
    add_watch_parser(subparsers)
    add_report_parser(subparsers)
    add_exploitability_parser(subparsers)
    add_exploit_parser(subparsers)
    for command in COMMANDS:  # each opens an archive: --trust-module MOD
        add_trust_option(subparsers.choices[command])

    if include_train:
        _add_train_command(subparsers)
        _add_league_command(subparsers)
        from .psro import add_psro_parser

        add_psro_parser(subparsers)
    return parser


def _fail(message: str) -> int:
    print(error_line(PROG, message), file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sp-wrappers`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    >>> main(["ratings", "/no/such/run"])  # prints a one-line error on stderr
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    # Only build the (possibly heavy) train command when it may be the one asked for.
    include_train = not (argv and argv[0] in COMMANDS)
    parser = build_parser(include_train=include_train)
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status = args.func(args)
    except user_errors() as error:
        return _fail(str(error))
    except ImportError as error:
        if "pip install" in str(error):  # a missing optional extra, named in the message
            return _fail(str(error))
        raise
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return int(status or 0)
