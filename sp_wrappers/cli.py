"""The ``sp-wrappers`` command line: ratings, tournaments and plots of a self-play run.

This module holds :func:`main` (the console entry point), :func:`build_parser`, CLI-error
versions of the game registry's :func:`make_game` and :func:`game_factory` (the registry itself,
:data:`GAMES`, lives in :mod:`sp_wrappers.games`), the baseline registry
(:data:`BASELINES`, :func:`make_baseline`) and :func:`resolve_run_dir`.

Commands::

    sp-wrappers ratings RUN_DIR                 # table: rating, 95% interval, games, vs baselines
    sp-wrappers ratings RUN_DIR --config '{"komi": 7.5}'   # only games under that configuration
    sp-wrappers ratings RUN_DIR --by-config     # the learner's record per game configuration
    sp-wrappers tournament RUN_DIR --games-per-pair 20 --backend process --baseline random
    sp-wrappers plot RUN_DIR --out plots/       # ratings.png, payoff.png
    sp-wrappers train ...                       # when sp_wrappers.train_command provides it
    sp-wrappers league GAME --main-agents 1 --main-exploiters 1 --league-exploiters 1

``RUN_DIR`` is a run directory holding ``archive/`` and ``config.json`` (``{"game": NAME,
"game_kwargs": {...}}``), or an archive directory itself. ``NAME`` is a registered game
(``tictactoe_v3``, ``connect_four_v3``, ``texas_holdem_v4``, ``pong_v3`` with RAM observations)
or an import path ``module:function``; ``--game`` overrides the config.

Every user error (not an archive, no games yet, unknown backend or game, a missing optional extra)
ends with exit status 2 and a one-line message on stderr, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import games
from .games import GAMES

__all__ = [
    "main",
    "build_parser",
    "CLIError",
    "GAMES",
    "make_game",
    "game_factory",
    "BASELINES",
    "make_baseline",
    "resolve_run_dir",
    "RunDir",
]

PROG = "sp-wrappers"
CONFIG_NAME = "config.json"
ARCHIVE_DIR = "archive"
COMMANDS = ("ratings", "tournament", "plot")


class CLIError(Exception):
    """A user error: ``main`` prints its message on one line and returns 2."""


# ------------------------------------------------------------------------------------------------
# Games
# ------------------------------------------------------------------------------------------------


def make_game(name: str, **kwargs: Any) -> Any:
    """Build a game by registered name or ``module:function`` import path (see
    :mod:`sp_wrappers.games`); an unknown name is a :class:`CLIError`.

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


# ------------------------------------------------------------------------------------------------
# Baselines
# ------------------------------------------------------------------------------------------------

#: Baseline name -> (factory, the registered game it plays or None for any game).
BASELINES: dict[str, tuple[Callable[[], Any], str | None]] = {}


def _register_baselines() -> None:
    def random() -> Any:
        from .policies import RandomPolicy

        return RandomPolicy()

    def minimax() -> Any:
        from .baselines import PerfectTicTacToePolicy

        return PerfectTicTacToePolicy()

    def alphabeta(depth: int) -> Callable[[], Any]:
        def make() -> Any:
            from .baselines import AlphaBetaConnectFourPolicy

            return AlphaBetaConnectFourPolicy(depth=depth)

        return make

    BASELINES["random"] = (random, None)
    BASELINES["minimax"] = (minimax, "tictactoe_v3")
    for depth in (1, 2, 4):
        BASELINES[f"alphabeta{depth}"] = (alphabeta(depth), "connect_four_v3")


_register_baselines()


def make_baseline(name: str, game: str | None = None) -> Any:
    """The baseline policy called ``name``; checks it plays ``game`` when that is registered.

    >>> make_baseline("alphabeta2").policy_id
    'alphabeta-d2'
    """
    entry = BASELINES.get(name)
    if entry is None:
        raise CLIError(f"Unknown baseline {name!r}; choose from {', '.join(BASELINES)}.")
    factory, plays = entry
    if plays is not None and game in GAMES and game != plays:
        raise CLIError(f"Baseline {name!r} plays {plays} only, but the game is {game}.")
    return factory()


# ------------------------------------------------------------------------------------------------
# Run directories
# ------------------------------------------------------------------------------------------------


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

    def open_archive(self) -> Any:
        """The archive, opened read-write but never created (a clear error when absent)."""
        from .archive import SnapshotArchive

        return SnapshotArchive(self.archive_path, create=False)

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


# ------------------------------------------------------------------------------------------------
# Commands
# ------------------------------------------------------------------------------------------------


def _archive_with_games(args: argparse.Namespace) -> tuple[RunDir, Any]:
    run = resolve_run_dir(args.run_dir)
    archive = run.open_archive()
    if archive.n_matches() == 0:
        raise CLIError(
            f"The archive {run.archive_path} has no matches yet; train with SelfPlayCallback or "
            f"run `{PROG} tournament {args.run_dir}` first."
        )
    return run, archive


def _ratings(archive: Any, args: argparse.Namespace) -> Any:
    from .snapshot_ratings import archive_ratings

    try:
        return archive_ratings(
            archive,
            anchor=args.anchor,
            anchor_rating=args.anchor_rating,
            config=getattr(args, "config_filter", None),
        )
    except ValueError as error:
        raise CLIError(str(error)) from None


def _config_filter(text: str | None) -> dict[str, Any] | None:
    """``--config``'s JSON object (``None`` when not given)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise CLIError(
            f"--config takes a JSON object such as '{{\"komi\": 7.5}}': {error}."
        ) from None
    if not isinstance(value, dict):
        raise CLIError(f"--config takes a JSON object such as '{{\"komi\": 7.5}}', got {text!r}.")
    return value


def _by_config_table(archive: Any) -> str:
    from .env_generator import win_rates_by_config

    rows = sorted(win_rates_by_config(archive).values(), key=lambda r: -r["games"])
    if not rows:
        raise CLIError(
            f"The archive {archive.path} has no learner games to split by configuration."
        )
    lines = [f"{'configuration':<40} {'games':>6} {'W-D-L':>15} {'score':>6}"]
    for row in rows:
        record = f"{row['wins']}-{row['draws']}-{row['losses']}"
        name = json.dumps(row["config"], sort_keys=True) if row["config"] else "{} (default)"
        lines.append(f"{name:<40} {row['games']:>6} {record:>15} {row['score']:>6.3f}")
    return "\n".join(lines)


def cmd_ratings(args: argparse.Namespace) -> int:
    run, archive = _archive_with_games(args)
    args.config_filter = _config_filter(getattr(args, "config", None))
    if getattr(args, "by_config", False):
        if args.json:
            from .env_generator import win_rates_by_config

            print(json.dumps(list(win_rates_by_config(archive).values()), indent=2))
        else:
            print(_by_config_table(archive))
        return 0
    ratings = _ratings(archive, args)
    if args.json:
        print(
            json.dumps(
                {
                    "archive": str(run.archive_path),
                    "anchor": ratings.anchor,
                    "players": ratings.rows(),
                },
                indent=2,
            )
        )
    else:
        print(ratings.table())
    return 0


def cmd_tournament(args: argparse.Namespace) -> int:
    from .archive import IncompatibleSnapshotError
    from .evaluation import BACKENDS, round_robin
    from .snapshot_ratings import store_archive_ratings

    if args.backend not in BACKENDS:
        raise CLIError(f"Unknown backend {args.backend!r}; choose one of {', '.join(BACKENDS)}.")
    if args.games_per_pair < 1:
        raise CLIError(f"--games-per-pair must be at least 1, got {args.games_per_pair}.")
    run = resolve_run_dir(args.run_dir)
    archive = run.open_archive()
    snapshots = args.snapshots or [info.id for info in archive.snapshots()]
    if not snapshots:
        raise CLIError(f"The archive {run.archive_path} has no snapshots yet; train first.")
    unknown = [s for s in snapshots if s not in archive]
    if unknown:
        raise CLIError(f"No snapshot {', '.join(unknown)} in {run.archive_path}.")
    game_name, env_fn = run.game(args.game)
    names = list(dict.fromkeys(args.baseline or ["random"]))
    baselines = [make_baseline(name, game_name) for name in names]
    try:
        result = round_robin(
            archive,
            participants=snapshots,
            games_per_pair=args.games_per_pair,
            baselines=baselines,
            env_fn=env_fn,
            seed=args.seed,
            backend=args.backend,
            n_workers=args.workers,
            skip_played=True,
            deterministic=args.deterministic,
            progress=not args.no_progress,
        )
    except IncompatibleSnapshotError as error:
        raise CLIError(f"{error} (game: {game_name})") from None
    played = sum(m.n_games for m in result.matches)
    print(f"Played {played} games in {len(result.matches)} pairs ({args.backend} backend).")
    if len(result.players) <= 12:
        print("\nPayoff matrix (row player's mean score):")
        print(result.table())
    print()
    print(_ratings(archive, args).table())
    if played:
        stored = store_archive_ratings(archive)
        print(f'\nStored the refitted ratings of {len(stored.snapshots)} snapshots ("bt").')
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from .evaluation import RoundRobinResult
    from .plots import plot_payoff, plot_ratings

    run, archive = _archive_with_games(args)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError(
            'The plot command needs matplotlib: pip install "sp-wrappers[plots]".'
        ) from None
    ratings = _ratings(archive, args)
    out = Path(args.out) if args.out else Path(args.run_dir) / "plots"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CLIError(f"Cannot create the output directory {out}: {error}.") from None
    has_evaluation = bool(archive.matches(source="evaluation"))
    payoff = RoundRobinResult.from_archive(archive, source="evaluation" if has_evaluation else None)
    kind = "evaluation games" if has_evaluation else "all games (no tournament yet)"
    written = [
        plot_ratings(ratings, out / "ratings.png"),
        plot_payoff(payoff, out / "payoff.png", title=f"Payoff matrix, {kind}"),
    ]
    if any(tag.startswith("role:") for info in archive.snapshots() for tag in info.tags):
        from .league.plots import plot_league_payoff  # a league's archive: group by role

        written.append(plot_league_payoff(archive, out / "league_payoff.png"))
    for path in written:
        print(path)
    return 0


# ------------------------------------------------------------------------------------------------
# Parser and entry point
# ------------------------------------------------------------------------------------------------


def _add_rating_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--anchor",
        default="random",
        help="the player pinned at --anchor-rating when it has games (default: random)",
    )
    parser.add_argument(
        "--anchor-rating", type=float, default=1000.0, help="the anchor's rating (default: 1000)"
    )


def _add_train_command(subparsers: Any) -> None:
    """Register ``train`` when ``sp_wrappers.train_command`` defines
    ``add_train_parser(subparsers)``."""
    try:
        module = importlib.import_module(f"{__package__ or 'sp_wrappers'}.train_command")
    except ModuleNotFoundError as error:
        if error.name and error.name.endswith("sp_wrappers.train_command"):
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
    """Register ``league`` (from ``sp_wrappers.league.command``); a module that cannot be
    imported leaves a stub that says why, and the other commands keep working."""
    try:
        from .league.command import add_league_parser
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

    :param include_train: also register ``train`` from ``sp_wrappers.train_command`` (when it
        exists).
    """
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=PROG, description="Self-play runs: ratings, tournaments and plots of an archive."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")

    ratings = subparsers.add_parser(
        "ratings",
        help="rate every snapshot from the archive's match history",
        description="Fit Bradley-Terry ratings over the whole match history (training and "
        "evaluation games) and print a table: rating, 95%% interval, games, results against "
        "the baselines.",
    )
    ratings.add_argument("run_dir", metavar="RUN_DIR", help="a run directory or an archive")
    _add_rating_options(ratings)
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
        "--snapshots", nargs="+", metavar="ID", help="only these snapshots (default: all)"
    )
    tournament.add_argument("--seed", type=int, default=0, help="tournament seed (default: 0)")
    tournament.add_argument(
        "--deterministic",
        action="store_true",
        help="snapshots take their most likely action instead of sampling",
    )
    tournament.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_rating_options(tournament)
    tournament.set_defaults(func=cmd_tournament)

    plot = subparsers.add_parser(
        "plot",
        help="write ratings.png and payoff.png",
        description="Plot rating against training step (with 95%% intervals) and the payoff "
        "matrix as a heatmap. Needs matplotlib (the 'plots' extra).",
    )
    plot.add_argument("run_dir", metavar="RUN_DIR", help="a run directory or an archive")
    plot.add_argument(
        "--out", default=None, metavar="DIR", help="output directory (default: RUN_DIR/plots)"
    )
    _add_rating_options(plot)
    plot.set_defaults(func=cmd_plot)

    if include_train:
        _add_train_command(subparsers)
        _add_league_command(subparsers)
    return parser


def _fail(message: str) -> int:
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sp-wrappers`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    >>> main(["ratings", "/no/such/run"])  # prints a one-line error on stderr
    2
    """
    from .archive import ArchiveError

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
    except (CLIError, ArchiveError) as error:
        return _fail(str(error))
    except ImportError as error:
        if "pip install" in str(error):  # a missing optional extra, named in the message
            return _fail(str(error))
        raise
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    # `python -m sp_wrappers.cli`: run the imported module's main, not this __main__ copy, whose
    # `except CLIError` would miss the CLIError class that train.py imports from sp_wrappers.cli.
    from sp_wrappers.cli import main as _main

    sys.exit(_main())
