"""``sp-wrappers report RUN_DIR``: write the run's report, one self-contained HTML page.

The page is written by :func:`sp_wrappers.runs.report.write_report`.

::

    sp-wrappers report runs/tictactoe_v3                 # runs/tictactoe_v3/report.html
    sp-wrappers report runs/pong_v3 --replay-moves 600   # a longer replay of the Atari game
    sp-wrappers report runs/tictactoe_v3 --no-replay --out /tmp/report.html
"""

from __future__ import annotations

import argparse
from typing import Any

from ..runs.rundir import RunDirError
from .common import CLIError, add_command, add_trust_option, resolve_run_dir, say_line

__all__ = ["add_report_parser", "cmd_report"]


def cmd_report(args: argparse.Namespace) -> int:
    """Write the report and print its path. Returns 0."""
    from ..runs.report import write_report

    if args.replay_moves < 1:
        raise CLIError(f"--replay-moves must be at least 1, got {args.replay_moves}.")
    trust = list(getattr(args, "trust_module", None) or ())
    if not args.no_replay:  # only the replay rebuilds snapshots
        try:
            say_line(resolve_run_dir(args.run_dir).trust_line(trust))
        except RunDirError:  # not a run directory: write_report says so
            pass
    try:
        path = write_report(
            args.run_dir,
            out=args.out,
            replay=not args.no_replay,
            replay_max_moves=args.replay_moves,
            anchor=args.anchor,
            trusted_modules=trust,
        )
    except (FileNotFoundError, ValueError) as error:
        raise CLIError(str(error)) from None
    except OSError as error:
        raise CLIError(f"Cannot write the report: {error}.") from None
    print(path)
    return 0


_REPORT_HELP = "write report.html: one self-contained page on how the run went"
_REPORT_DESCRIPTION = (
    "Write one self-contained HTML page (images embedded, no network when "
    "opened): the run's config, Elo over learner steps, Bradley-Terry ratings with "
    "intervals, the payoff matrix, the strength against reference players, the archive's "
    "size and a replay of the latest snapshot against the best earlier one. Plots need "
    'matplotlib ("sp-wrappers[plots]"), the replay imageio ("sp-wrappers[video]"); '
    "without them the page says so in their place."
)


def add_report_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` command to ``sp-wrappers``'s subparsers."""
    parser = add_command(subparsers, "report", cmd_report, _REPORT_HELP, _REPORT_DESCRIPTION)
    parser.add_argument(
        "--out", default=None, metavar="FILE", help="the page (default: RUN_DIR/report.html)"
    )
    parser.add_argument(
        "--no-replay", action="store_true", help="leave out the replay (no game is played)"
    )
    parser.add_argument(
        "--replay-moves",
        type=int,
        default=300,
        metavar="N",
        help="stop the replay after N moves (default: 300; bounds Atari games)",
    )
    parser.add_argument(
        "--anchor",
        default="random",
        help="the player pinned at 1000 in the ratings when it has games (default: random)",
    )
    add_trust_option(parser)
    return parser
