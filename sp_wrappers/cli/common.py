"""What every ``sp-wrappers`` command shares: the program's name; the one line a user error
becomes (:func:`user_errors`, :func:`error_line`, with the library's configuration keys as
options, :func:`flag_names`), which :func:`sp_wrappers.cli.app.main` prints before it exits with
status 2; the library's lines on stderr (:func:`say_line`, :func:`say_trust`); games by name
(:func:`make_game`, :func:`game_factory`); a run's archive and game found from a path
(:func:`resolve_run_dir`, a :class:`~sp_wrappers.runs.rundir.RunArchive` with the run's typed
configuration; :func:`open_archive`, :func:`run_game`); and what every command's parser is built
from (:func:`add_command`, :func:`add_trust_option`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..core.errors import SpWrappersError
from ..core.settings import declared
from ..games import registry as games
from ..games.registry import GAMES
from ..runs.config import SETTING_SOURCES
from ..runs.options import RunOptions
from ..runs.rundir import CONFIG_NAME, RunArchive, trust_line

__all__ = [
    "PROG",
    "CLIError",
    "user_errors",
    "error_line",
    "flag_names",
    "FLAG_NAMES",
    "say_line",
    "make_game",
    "game_factory",
    "open_archive",
    "run_game",
    "resolve_run_dir",
    "add_command",
    "RUN_DIR_HELP",
    "add_trust_option",
    "say_trust",
]


PROG = "sp-wrappers"


def user_errors() -> tuple[type[BaseException], ...]:
    """The errors a user can fix, whose message names the fix: :func:`~sp_wrappers.cli.app.main`
    prints them on one line (:func:`error_line`) and exits with status 2. The library raises its
    own (a bad run config, an unknown game, an unreadable archive, a league that cannot start),
    all under one root, :class:`~sp_wrappers.core.errors.SpWrappersError`; only the command line
    turns them into exit codes. Any other exception is a bug and keeps its traceback."""
    return (SpWrappersError,)


def error_line(prog: str, error: BaseException) -> str:
    """``error`` as the one line a command prints: ``"sp-wrappers train: error: ..."``, the
    configuration keys it names as this command line's options (:func:`flag_names`)."""
    return f"{prog}: error: {' '.join(flag_names(str(error)).split())}"


#: Configuration keys (and run options) whose command-line option is not ``--`` and the key
#: with dashes: the settings' declared names (``hyperparams`` -> ``--hp``), and the two that
#: name a call's files.
FLAG_NAMES = {
    **{
        key: f"--{what.option(key)}"
        for key, (what, _) in declared(*SETTING_SOURCES).items()
        if what.option(key) not in (None, key.replace("_", "-"))
    },
    "config_file": "--config",
    "run_dir": "--out",
}
_KEY = re.compile(r"(?<!`)`([a-z][a-z0-9_]*)`(?!`)")  # a key, not RST's ``literal``


def flag_names(text: str) -> str:
    """``text`` (a message of the library, which names configuration keys as ```key```) with
    each key as the command line's option: the one place the two vocabularies meet.

    >>> flag_names("`save_every` must be at least 1; `hyperparams` too; `run_dir` exists")
    '--save-every must be at least 1; --hp too; --out exists'
    """
    return _KEY.sub(lambda m: FLAG_NAMES.get(m[1], "--" + m[1].replace("_", "-")), text)


class CLIError(SpWrappersError):
    """A user error: ``main`` prints its message on one line and returns 2."""


def make_game(name: str, **kwargs: Any) -> Any:
    """Build a game by registered name or ``module:function`` import path (see
    :mod:`sp_wrappers.games.registry`); an unknown name is a :class:`CLIError`.

    :param name: a key of :data:`GAMES` or ``"package.module:function"``.
    :param kwargs: the game's keyword arguments (``game_kwargs`` in ``config.json``).

    >>> make_game("tictactoe_v3").possible_agents
    ['player_1', 'player_2']
    """
    try:
        return games.make_game(name, **kwargs)
    except games.UnknownGameError as error:
        raise CLIError(str(error)) from None


def game_factory(name: str, kwargs: dict[str, Any] | None = None) -> Callable[[], Any]:
    """A picklable zero-argument function building the game (for worker processes).

    >>> import pickle
    >>> pickle.loads(pickle.dumps(game_factory("tictactoe_v3")))().metadata["name"]
    'tictactoe_v3'
    """
    try:
        return games.game_factory(name, kwargs)
    except games.UnknownGameError as error:
        raise CLIError(str(error)) from None


def open_archive(run: RunArchive, trust: Iterable[str] | None = ()) -> Any:
    """``run``'s archive, opened read-write but never created (a clear error when absent).

    It trusts the modules of the classes the run's ``config.json`` names and those in ``trust``
    (``--trust-module``), exactly those (see
    :func:`~sp_wrappers.runs.rundir.run_trusted_modules`), and says so on stderr.
    """
    trust = list(trust or ())
    say_line(run.trust_line(trust))
    return run.open(trust)


def run_game(run: RunArchive, override: str | None = None) -> tuple[str, Callable[[], Any]]:
    """The game's name and a picklable factory: ``override`` (``--game``) or the run's game,
    with the run's ``game_kwargs`` when it is the run's game."""
    name, kwargs = run.game(override)
    if not name:
        where = "no config.json" if run.config_path is None else f"{run.config_path} has no game"
        raise CLIError(
            f"Cannot tell which game {run.archive_path} was trained on ({where}); pass "
            f"--game with one of {', '.join(GAMES)} or 'module:function'."
        )
    return name, game_factory(name, kwargs)


#: The help of a command's ``RUN_DIR`` argument (what :meth:`RunArchive.locate` takes).
RUN_DIR_HELP = "a run directory or an archive"


def add_command(
    subparsers: Any,
    name: str,
    func: Callable[[argparse.Namespace], int],
    help: str,
    description: str,
    run_dir: str | None = RUN_DIR_HELP,
) -> argparse.ArgumentParser:
    """Add the command ``name`` to ``sp-wrappers``'s subparsers, run by ``func`` (``args.func``),
    with its ``RUN_DIR`` argument first (``run_dir``: its help; ``None``: a command that takes
    none).

    :param help: the line ``sp-wrappers --help`` shows for it.
    :param description: the paragraph its own ``--help`` starts with.
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help, description=description
    )
    parser.set_defaults(func=func)
    if run_dir is not None:
        parser.add_argument("run_dir", metavar="RUN_DIR", help=run_dir)
    return parser


def add_trust_option(parser: argparse.ArgumentParser) -> None:
    """``--trust-module MOD`` (repeatable) on a command that opens an archive: the run option
    ``trusted_modules`` as declared (:class:`~sp_wrappers.runs.options.RunOptions`), its values
    in ``args.trust_module``."""
    what, _ = declared(RunOptions)["trusted_modules"]
    parser.add_argument(
        f"--{what.option('trusted_modules')}",
        action="append",
        default=None,
        metavar=what.metavar,
        help=what.text(),
    )


def say_trust(config: Any, trust: Iterable[str] = (), where: Any = None) -> None:
    """Print on stderr the one line saying which modules a command trusts (nothing when none)."""
    say_line(trust_line(config, trust, str(where or CONFIG_NAME)))


def say_line(line: str | None) -> None:
    """``line`` of the library (``None``: nothing) on stderr, after the program's name, with
    :func:`flag_names`."""
    if line is not None:
        print(f"{PROG}: {flag_names(line)}", file=sys.stderr, flush=True)


def resolve_run_dir(path: str | Path) -> RunArchive:
    """The archive and typed configuration of ``path`` (a run directory or an archive directory;
    see :meth:`~sp_wrappers.runs.rundir.RunArchive.locate`)."""
    return RunArchive.locate(path)
