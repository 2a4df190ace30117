"""The ``sp-wrappers`` command line: one entry point, one parser, one place that ends errors.

This module holds :func:`main` (the console entry point, ``sp_wrappers.cli:main``),
:func:`run_command` (one command, its status returned), :func:`build_parser`,
:class:`CommandParser` and :data:`COMMANDS`, the table of the command modules. Each command
family lives in one module of ``sp_wrappers.cli`` that adds its parsers
(``add_<module>_parser(subparsers)``, each command with
:func:`~sp_wrappers.cli.common.add_command`) and holds the function each command runs
(``args.func``); what they share is in :mod:`~sp_wrappers.cli.common`.

Commands::

    sp-wrappers train GAME --timesteps 100000  # a run directory with archive/, report.html
    sp-wrappers league GAME --main-agents 1 --main-exploiters 1 --league-exploiters 1
    sp-wrappers psro GAME --iterations 10       # PSRO: best responses and their meta-mixture
    sp-wrappers ratings RUN_DIR                 # table: rating, 95% interval, games, vs baselines
    sp-wrappers ratings RUN_DIR --config '{"komi": 7.5}'   # only games under that configuration
    sp-wrappers ratings RUN_DIR --by-config     # the learner's record per game configuration
    sp-wrappers tournament RUN_DIR --games-per-pair 20 --backend process --baseline random
    sp-wrappers plot RUN_DIR --out plots/       # ratings.png, payoff.png
    sp-wrappers play RUN_DIR --snapshot best --seat 0 --record   # play a snapshot yourself
    sp-wrappers watch RUN_DIR --a latest --b minimax --out match.gif  # a replay (or as text)
    sp-wrappers report RUN_DIR                  # RUN_DIR/report.html, one self-contained page
    sp-wrappers exploitability RUN_DIR          # exact NashConv per snapshot and mixture
    sp-wrappers exploit RUN_DIR --snapshot best # a learned best response: a lower bound

``RUN_DIR`` is a run directory holding ``archive/`` and ``config.json`` (a run's, or only
``{"game": NAME, "game_kwargs": {...}}``), a team's ``archives/<team>``, or an archive directory
itself (see :class:`~sp_wrappers.runs.rundir.RunArchive`). ``NAME`` is a registered game
(``tictactoe_v3``, ``connect_four_v3``, ``texas_holdem_v4``, ``pong_v3`` with RAM observations)
or an import path ``module:function``; ``--game`` overrides the config.

Building the parser imports no torch, Stable-Baselines3 or game: the command modules import
the library's heavy parts inside the functions that run a command, so ``--help``, a mistyped
option and every refusal that needs no model answer at once (``benchmarks/cli_startup.py``
measures it). Every user error (not an archive, no games yet, unknown backend or game, a missing
optional extra) ends with exit status 2 and a one-line message on stderr, without a traceback;
Ctrl-C ends a command with status 130.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .common import PROG, CLIError, error_line, user_errors

__all__ = ["main", "build_parser", "run_command", "CommandParser", "COMMANDS"]

#: The command modules of ``sp_wrappers.cli`` and the commands each adds to the parser (with
#: its ``add_<module>_parser(subparsers)``), in the order ``--help`` lists them.
COMMANDS: dict[str, tuple[str, ...]] = {
    "train": ("train",),
    "league": ("league",),
    "psro": ("psro",),
    "inspect": ("ratings", "tournament", "plot"),
    "play": ("play",),
    "watch": ("watch",),
    "report": ("report",),
    "exploitability": ("exploitability",),
    "exploit": ("exploit",),
    "games": ("games",),
}


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

    def command_parser(self, command: str) -> CommandParser:
        """The parser of the subcommand ``command`` (``"train"``).

        :raises KeyError: no such command.
        """
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices[command]  # type: ignore[no-any-return]
        raise KeyError(command)

    def _subcommand(self, parsed: argparse.Namespace) -> CommandParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest or "", None) or "")
                if isinstance(chosen, CommandParser):
                    return chosen
        return None


def _add_commands(subparsers: Any, module_name: str, commands: Sequence[str]) -> None:
    """Add the parsers of one command module; a module that cannot be imported (a dependency
    missing or broken) leaves commands that say why, and the other commands keep working."""
    try:
        module = importlib.import_module(f"{__package__}.{module_name}")
        add = getattr(module, f"add_{module_name}_parser")
    except Exception as error:  # noqa: BLE001 - reported when the command is asked for
        message = f"The {' / '.join(commands)} command is unavailable: {error}."

        def unavailable(args: argparse.Namespace) -> int:
            raise CLIError(message)

        for command in commands:
            stub = subparsers.add_parser(command, help="(unavailable)", add_help=False)
            stub.add_argument("rest", nargs=argparse.REMAINDER)
            stub.set_defaults(func=unavailable)
        return
    add(subparsers)


def build_parser() -> CommandParser:
    """The ``sp-wrappers`` argument parser, every command included (no heavy import)."""
    from .._version import __version__

    parser = CommandParser(
        prog=PROG,
        description="Self-play runs: train, league, ratings, tournaments, plots, play against "
        "a snapshot, watch a match and a run report.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name, commands in COMMANDS.items():
        _add_commands(subparsers, module_name, commands)
    return parser


def _fail(message: str) -> int:
    print(error_line(PROG, message), file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sp-wrappers`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    Argument errors and ``--help`` end as argparse ends them (``SystemExit``, status 2 or 0).

    >>> main(["ratings", "/no/such/run"])  # prints a one-line error on stderr
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status = args.func(args)
    except user_errors() as error:  # a missing optional extra too: DependencyNotInstalled
        return _fail(str(error))
    except KeyboardInterrupt:
        hint = getattr(args, "on_interrupt", "")
        print(f"{PROG} {args.command}: interrupted{'; ' + hint if hint else ''}", file=sys.stderr)
        return 130
    return int(status or 0)


def run_command(command: str, argv: Sequence[str] | None = None) -> int:
    """``sp-wrappers COMMAND ARGV`` as :func:`main` runs it, ``--help`` and argument errors
    included (their status returned, not raised), as tests and scripts call one command.

    :param command: a command name (``"train"``).
    :param argv: its arguments (default: ``sys.argv[1:]``).
    """
    try:
        return main([command, *(sys.argv[1:] if argv is None else argv)])
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2), already printed
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
