"""What every ``sp-wrappers`` command shares: the program's name, the one place that turns the
library's errors into one-line messages and exit status 2, games by name, the ``--trust-module``
option, and run directories found from a path.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..core.errors import SpWrappersError
from ..games import registry as games
from ..games.registry import GAMES
from ..runs.rundir import ARCHIVE_DIR, CONFIG_NAME, run_trusted_modules, trust_line

__all__ = [
    "PROG",
    "CONFIG_NAME",
    "ARCHIVE_DIR",
    "CLIError",
    "user_errors",
    "error_line",
    "make_game",
    "game_factory",
    "RunDir",
    "resolve_run_dir",
    "add_trust_option",
    "say_trust",
]


PROG = "sp-wrappers"


def user_errors() -> tuple[type[BaseException], ...]:
    """The errors a user can fix, whose message names the fix: every command prints them on one
    line (:func:`error_line`) and exits with status 2. The library raises its own (a bad run
    config, an unknown game, an unreadable archive, a league that cannot start), all under one
    root, :class:`~sp_wrappers.core.errors.SpWrappersError`; only the command line turns them
    into exit codes. Any other exception is a bug and keeps its traceback."""
    return (SpWrappersError,)


def error_line(prog: str, error: BaseException) -> str:
    """``error`` as the one line a command prints: ``"sp-wrappers train: error: ..."``."""
    return f"{prog}: error: {' '.join(str(error).split())}"


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


class RunDir:
    """Where a run's archive and config are.

    :param archive_path: the archive directory.
    :param config: the run's ``config.json`` (empty when there is none).
    :param config_path: the file it came from, if any.
    """

    def __init__(self, archive_path: Path, config: dict[str, Any], config_path: Path | None):
        self.archive_path = archive_path
        self.config = config
        self.config_path = config_path

    def open_archive(self, trust: Iterable[str] | None = ()) -> Any:
        """The archive, opened read-write but never created (a clear error when absent).

        It trusts the modules of the classes the run's ``config.json`` names and those in
        ``trust`` (``--trust-module``), exactly those (see
        :func:`~sp_wrappers.runs.rundir.run_trusted_modules`), and says so on stderr.
        """
        from ..archive.store import SnapshotArchive

        trust = list(trust or ())
        say_trust(self.config, trust, self.config_path)
        return SnapshotArchive(
            self.archive_path,
            create=False,
            trusted_modules=run_trusted_modules(self.config, trust),
        )

    def game(self, override: str | None = None) -> tuple[str, Callable[[], Any]]:
        """The game's name and a picklable factory: ``override`` or the config's ``game``."""
        name = override or self.config.get("game")
        if not name:
            where = f"{self.config_path} has no 'game'" if self.config_path else "no config.json"
            raise CLIError(
                f"Cannot tell which game {self.archive_path} was trained on ({where}); pass "
                f"--game with one of {', '.join(GAMES)} or 'module:function'."
            )
        # The config's game_kwargs belong to the config's game, not to another one from --game.
        same_game = name == self.config.get("game")
        kwargs = (self.config.get("game_kwargs") or {}) if same_game else {}
        if not isinstance(kwargs, dict):
            raise CLIError(
                f"'game_kwargs' in {self.config_path} must be an object, got {kwargs!r}."
            )
        return str(name), game_factory(str(name), kwargs)


def add_trust_option(parser: argparse.ArgumentParser) -> None:
    """``--trust-module MOD`` (repeatable) on a command that opens an archive."""
    parser.add_argument(
        "--trust-module",
        action="append",
        default=None,
        metavar="MOD",
        help="rebuild snapshots whose policy names classes from module MOD (a custom features "
        "extractor; importing MOD runs its code). A run's own config.json already trusts the "
        "modules it names; repeatable",
    )


def say_trust(config: Any, trust: Iterable[str] = (), where: Any = None) -> None:
    """Print on stderr the one line saying which modules a command trusts (nothing when none)."""
    line = trust_line(config, trust, str(where or CONFIG_NAME))
    if line is not None:
        print(f"{PROG}: {line}", file=sys.stderr, flush=True)


def resolve_run_dir(path: str | Path) -> RunDir:
    """Find the archive and config of ``path`` (a run directory or an archive directory).

    ``path/archive`` is the archive when it exists, else ``path`` itself. The config is
    ``path/config.json``, or the parent's when ``path`` is a run's ``archive/`` folder.
    """
    root = Path(path)
    if not root.is_dir():
        raise CLIError(f"{root} is not a directory; pass a run directory or an archive directory.")
    archive_path = root / ARCHIVE_DIR if (root / ARCHIVE_DIR).is_dir() else root
    teams = root / "archives"  # a team run (sp-wrappers train on a team game): one per team
    if archive_path == root and teams.is_dir() and not (root / "index.sqlite").exists():
        found = sorted(str(p) for p in teams.iterdir() if p.is_dir())
        raise CLIError(
            f"{root} is a team run with one archive per team; pass one of them: "
            f"{', '.join(found) or str(teams / '<team>')}."
        )
    config_path = None
    for candidate in (root / CONFIG_NAME, archive_path.parent / CONFIG_NAME):
        if candidate.is_file() and (candidate.parent == root or root.name == ARCHIVE_DIR):
            config_path = candidate
            break
    config: dict[str, Any] = {}
    if config_path is not None:
        try:
            config = json.loads(config_path.read_text())
        except (OSError, ValueError) as error:
            raise CLIError(f"Cannot read {config_path}: {error}.") from None
        if not isinstance(config, dict):
            raise CLIError(f"{config_path} must hold a JSON object.")
    return RunDir(archive_path, config, config_path)
