"""``sp-wrappers ratings``, ``tournament`` and ``plot``: looking at an archive."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..core.extras import require
from ..games.registry import BOTS, GAMES, make_bot
from ..runs.rundir import RunArchive, RunDir
from .common import (
    PROG,
    CLIError,
    add_command,
    add_trust_option,
    open_archive,
    resolve_run_dir,
    run_game,
)

__all__ = [
    "add_inspect_parser",
    "add_rating_options",
    "cmd_plot",
    "cmd_ratings",
    "cmd_tournament",
]


def _archive_with_games(args: argparse.Namespace) -> tuple[RunArchive, Any]:
    run = resolve_run_dir(args.run_dir)
    archive = open_archive(run, args.trust_module)
    if archive.n_matches() == 0:
        raise CLIError(
            f"The archive {run.archive_path} has no matches yet; train with SelfPlayCallback or "
            f"run `{PROG} tournament {args.run_dir}` first."
        )
    return run, archive


def _ratings(archive: Any, args: argparse.Namespace, config: dict[str, Any] | None) -> Any:
    from ..ratings.archive_ratings import archive_ratings

    try:
        return archive_ratings(
            archive, anchor=args.anchor, anchor_rating=args.anchor_rating, config=config
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
    from ..training.env_generator import win_rates_by_config

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
    config = _config_filter(getattr(args, "config", None))
    if getattr(args, "by_config", False):
        if args.json:
            from ..training.env_generator import win_rates_by_config

            print(json.dumps(list(win_rates_by_config(archive).values()), indent=2))
        else:
            print(_by_config_table(archive))
        return 0
    ratings = _ratings(archive, args, config)
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


def _participant(archive: Any, name: str, deterministic: bool) -> Any:
    """A tournament participant from ``--snapshots``: an id (``latest``, ``best`` and numbers
    resolved), or the Nash mixture's policy for ``nash`` (it plays like a baseline)."""
    from ..runs.players import NAMED_PLAYERS, choose_player

    if name not in NAMED_PLAYERS and not name.isdigit():
        return name
    choice = choose_player(archive, name)
    return choice.load(archive, deterministic) if choice.mixture else choice.snapshot


def cmd_tournament(args: argparse.Namespace) -> int:
    from ..archive.store import IncompatibleSnapshotError
    from ..evaluation.backends import BACKENDS
    from ..evaluation.round_robin import round_robin
    from ..ratings.archive_ratings import store_archive_ratings

    if args.backend not in BACKENDS:
        raise CLIError(f"Unknown backend {args.backend!r}; choose one of {', '.join(BACKENDS)}.")
    if args.games_per_pair < 1:
        raise CLIError(f"--games-per-pair must be at least 1, got {args.games_per_pair}.")
    run = resolve_run_dir(args.run_dir)
    archive = open_archive(run, args.trust_module)
    snapshots: list[Any] = args.snapshots or [info.id for info in archive.snapshots()]
    if not snapshots:
        raise CLIError(f"The archive {run.archive_path} has no snapshots yet; train first.")
    greedy = args.deterministic or bool(run.greedy)  # as the run plays them (PSRO's members)
    snapshots = [_participant(archive, name, greedy) for name in snapshots]
    unknown = [s for s in snapshots if isinstance(s, str) and s not in archive]
    if unknown:
        raise CLIError(f"No snapshot {', '.join(unknown)} in {run.archive_path}.")
    game_name, env_fn = run_game(run, args.game)
    names = list(dict.fromkeys(args.baseline or ["random"]))
    baselines = [make_bot(name, game_name) for name in names]
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
            deterministic=greedy,
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
    print(_ratings(archive, args, None).table())
    if played:
        stored = store_archive_ratings(archive)
        print(f'\nStored the refitted ratings of {len(stored.snapshots)} snapshots ("bt").')
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from ..evaluation.plots import plot_payoff, plot_ratings
    from ..evaluation.round_robin import RoundRobinResult

    run, archive = _archive_with_games(args)
    require("matplotlib", "plots", "The plot command")
    ratings = _ratings(archive, args, None)
    out = Path(args.out) if args.out else RunDir(args.run_dir).plots_path
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
        from ..league.plots import plot_league_payoff  # a league's archive: group by role

        written.append(plot_league_payoff(archive, out / "league_payoff.png"))
    for path in written:
        print(path)
    return 0


def add_rating_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--anchor",
        default="random",
        help="the player pinned at --anchor-rating when it has games (default: random)",
    )
    parser.add_argument(
        "--anchor-rating", type=float, default=1000.0, help="the anchor's rating (default: 1000)"
    )


_RATINGS_HELP = "rate every snapshot from the archive's match history"
_RATINGS_DESCRIPTION = (
    "Fit Bradley-Terry ratings over the whole match history (training and "
    "evaluation games) and print a table: rating, 95% interval, games, results against "
    "the baselines."
)

_TOURNAMENT_HELP = "play the missing round-robin games between snapshots and baselines"
_TOURNAMENT_DESCRIPTION = (
    "Play every pair of snapshots and baselines up to --games-per-pair "
    "evaluation games (games already in the archive count), record them, print the table."
)

_PLOT_HELP = "write ratings.png and payoff.png"
_PLOT_DESCRIPTION = (
    "Plot rating against training step (with 95% intervals) and the payoff "
    "matrix as a heatmap. Needs matplotlib (the 'plots' extra)."
)


def add_inspect_parser(subparsers: Any) -> None:
    """Register ``ratings``, ``tournament`` and ``plot`` on the ``sp-wrappers`` parser."""
    ratings = add_command(subparsers, "ratings", cmd_ratings, _RATINGS_HELP, _RATINGS_DESCRIPTION)
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

    tournament = add_command(
        subparsers, "tournament", cmd_tournament, _TOURNAMENT_HELP, _TOURNAMENT_DESCRIPTION
    )
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
        help=f"a baseline joining the tournament, repeatable ({', '.join(BOTS)}; default: random)",
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

    plot = add_command(subparsers, "plot", cmd_plot, _PLOT_HELP, _PLOT_DESCRIPTION)
    plot.add_argument(
        "--out", default=None, metavar="DIR", help="output directory (default: RUN_DIR/plots)"
    )
    add_rating_options(plot)

    for parser in (ratings, tournament, plot):  # each opens an archive: --trust-module MOD
        add_trust_option(parser)
