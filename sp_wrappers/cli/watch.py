"""``sp-wrappers watch RUN_DIR``: one match between two players, as a GIF, an MP4 or text.

The match is played and written by :mod:`sp_wrappers.evaluation.replay`.

::

    sp-wrappers watch runs/tictactoe_v3 --a latest --b minimax            # move by move, as text
    sp-wrappers watch runs/connect_four_v3 --a snapshot-0012 --b alphabeta-d2 --out match.gif
    sp-wrappers watch runs/tictactoe_v3 --a best --b latest --opening 5,1 --out match.mp4
    sp-wrappers watch runs/pong_v3 --a latest --b random --max-moves 600 --out pong.gif

A player is a snapshot id of the run's archive, ``latest``, ``best`` (the least exploitable
where measured, else the highest stored rating), ``nash`` (the archive's Nash mixture, one
snapshot drawn per game) or a reference player: ``random``, ``minimax`` (perfect tic-tac-toe),
``alphabeta-d1``, ``alphabeta-d2``, ``alphabeta-d4`` (Connect Four; the older ``alphabeta1`` ...
are accepted). Moves, in ``--opening`` and in the printed match, are in the game's notation, the
one ``sp-wrappers play`` reads: tic-tac-toe cells 1-9 row by row from the top left, Connect Four
columns 1-7 from the left. Without ``--out`` a turn-based game is printed move by move; games played
simultaneously (Atari, MPE) need ``--out``.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..games.baselines import bot_name
from ..games.registry import BOTS, make_bot
from .common import CLIError, add_command, add_trust_option, open_archive, resolve_run_dir, run_game

__all__ = ["add_watch_parser", "cmd_watch", "resolve_player"]


def resolve_player(name: str, archive: Any, game: str, deterministic: bool = False) -> Any:
    """``name`` as a player of :func:`~sp_wrappers.evaluation.replay.play_replay`: a snapshot id
    (for ``latest``, ``best``, the archive's ids and numbers, as
    :func:`~sp_wrappers.runs.players.choose_player` reads them), the archive's Nash mixture
    (``nash``: a :class:`~sp_wrappers.MixturePolicy`, one snapshot drawn per game) or a
    reference policy.

    :param name: what ``--a`` / ``--b`` gave.
    :param archive: the run's archive.
    :param game: the game's name (checks that a reference player plays it).
    :param deterministic: the Nash mixture's snapshots take their most likely move.
    """
    from ..runs.players import NAMED_PLAYERS, choose_player

    known_snapshot = name in archive or (name.isdigit() and f"snapshot-{int(name):04d}" in archive)
    if name in NAMED_PLAYERS or known_snapshot:
        choice = choose_player(archive, name)
        return choice.load(archive, deterministic) if choice.mixture else choice.snapshot
    key = bot_name(name)  # alphabeta2, the older spelling, is alphabeta-d2
    if key in BOTS:
        return make_bot(key, game)
    snapshots = archive.snapshots()
    known = f"{snapshots[0].id} ... {snapshots[-1].id}" if snapshots else "none yet"
    raise CLIError(
        f"Unknown player {name!r}: not a snapshot of {archive.path} ({known}), 'latest', 'best', "
        f"'nash' or a reference player ({', '.join(BOTS)})."
    )


def cmd_watch(args: argparse.Namespace) -> int:
    """Play the match; write ``--out`` or print it move by move. Returns 0."""
    from ..evaluation.replay import parse_opening, play_replay
    from ..evaluation.replay_video import VIDEO_SUFFIXES, write_replay
    from ..games.registry import game_factory

    run = resolve_run_dir(args.run_dir)
    archive = open_archive(run, getattr(args, "trust_module", None))
    name, _ = run_game(run, args.game)  # a CLIError naming the registered games when unknown
    _, stored_kwargs = run.game(args.game)  # the run's game_kwargs, when it is the run's game
    # snapshots sample as in training, but where the run plays them greedily (PSRO's members)
    greedy = args.deterministic or bool(run.greedy)
    if args.web:
        return _watch_web(args, run, archive, name)
    out = args.out
    if out is not None and not str(out).lower().endswith(VIDEO_SUFFIXES):
        raise CLIError(f"--out {out}: name the video *.gif or *.mp4.")
    if args.size < 64:
        raise CLIError(
            f"--size is the picture's longer side in pixels, at least 64; got {args.size}."
        )
    if args.max_moves is not None and args.max_moves < 1:
        raise CLIError(f"--max-moves must be at least 1, got {args.max_moves}.")
    kwargs = dict(stored_kwargs)
    if out is not None:
        kwargs["render_mode"] = "rgb_array"
    try:
        env_fn = game_factory(name, kwargs)
        opening = parse_opening(args.opening, game_factory(name, stored_kwargs))
        replay = play_replay(
            env_fn,
            resolve_player(args.a, archive, name, greedy),
            resolve_player(args.b, archive, name, greedy),
            archive=archive,
            seat=args.seat.split(",") if args.seat and "," in args.seat else args.seat,
            opening=opening,
            seed=args.seed,
            max_moves=args.max_moves,
            deterministic=greedy,
            record_frames=out is not None,
        )
    except TypeError as error:
        if "render_mode" in str(error):
            raise CLIError(
                f"The game {name} does not take render_mode='rgb_array', so it cannot be recorded "
                "as a video; drop --out to print it as text."
            ) from None
        raise
    except (ValueError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        raise CLIError(str(message)) from None
    if out is None:
        try:
            print(replay.text())
        except ValueError as error:
            raise CLIError(f"{error}") from None
        return 0
    try:
        path = write_replay(replay, out, size=args.size)
    except ImportError as error:
        raise CLIError(str(error)) from None
    print(f"{path}: {replay.title}, {len(replay.moves)} moves; {replay.result}")
    return 0


def _watch_web(args: argparse.Namespace, run: Any, archive: Any, name: str) -> int:
    """``watch --web``: the match in a page to step through, with each player's probabilities."""
    from ..evaluation.replay import parse_opening, play_replay, resolve_snapshot
    from ..evaluation.web_play import WebReplay, WebServer
    from ..games.registry import game_factory
    from .play import rgb_frames

    if args.out is not None:
        raise CLIError("--web shows the match in a page; drop --out (or drop --web for a video).")
    kwargs = dict(run.game(name)[1])
    env_fn = rgb_frames(name, kwargs, game_factory(name, kwargs))
    players = []
    greedy = args.deterministic or bool(run.greedy)
    for which in (args.a, args.b):
        player = resolve_player(which, archive, name, greedy)
        if isinstance(player, str):
            try:
                player = archive.load_policy(
                    resolve_snapshot(archive, player), deterministic=greedy
                )
            except (ValueError, KeyError) as error:
                message = error.args[0] if isinstance(error, KeyError) and error.args else error
                raise CLIError(str(message)) from None
        players.append(player)
    try:
        replay = play_replay(
            env_fn,
            players[0],
            players[1],
            seat=args.seat.split(",") if args.seat and "," in args.seat else args.seat,
            opening=parse_opening(args.opening, game_factory(name, kwargs)),
            seed=args.seed,
            max_moves=args.max_moves,
            record_frames=False,
        )
        policies = {s: players[0] if s in replay.seats_a else players[1] for s in replay.players}
        app = WebReplay(env_fn, replay, policies)
        server = WebServer(app, host=args.host, port=args.port)
    except OSError as error:
        raise CLIError(
            f"Cannot serve on {args.host}:{args.port} ({error.strerror}); pass another --port "
            "(0 picks a free one)."
        ) from None
    except (ValueError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        raise CLIError(str(message)) from None
    archive.close()
    print(f"{replay.title}: step through it at {server.url}  (Ctrl-C stops the server)", flush=True)
    try:
        server.serve_forever()  # until Ctrl-C, which goes on to the command's status 130
    finally:
        print("Stopped.")
    return 0


_WATCH_HELP = "play one match between two players and write it as a GIF/MP4 (or print it)"
_WATCH_DESCRIPTION = (
    "Play one match between two snapshots, or a snapshot and a reference "
    "player, and write it as an animated GIF or MP4 from the game's rgb_array frames (one "
    "frame per move, then a closing frame with the names and the result). Without --out, "
    "turn-based games are printed move by move. Videos need imageio: "
    'pip install "sp-wrappers[video]" (MP4: "sp-wrappers[video-mp4]").'
)


def add_watch_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``watch`` command to ``sp-wrappers``'s subparsers."""
    parser = add_command(subparsers, "watch", cmd_watch, _WATCH_HELP, _WATCH_DESCRIPTION)
    players = f"a snapshot id, latest, best, nash (the Nash mixture), or {', '.join(BOTS)}"
    parser.add_argument("--a", default="latest", metavar="ID", help=f"{players} (default: latest)")
    parser.add_argument("--b", default="random", metavar="ID", help=f"{players} (default: random)")
    parser.add_argument(
        "--seat",
        default=None,
        help="the seat of --a, or its seats joined by commas in a team game (default: the "
        "first seat, which moves first)",
    )
    parser.add_argument(
        "--opening",
        default=None,
        metavar="MOVES",
        help="forced first moves, both players', in the game's notation as play reads them: "
        "5,1 (tic-tac-toe cells 1-9 row by row, Connect Four columns 1-7; turn-based games)",
    )
    parser.add_argument(
        "--out", default=None, metavar="FILE", help="match.gif or match.mp4 (default: print text)"
    )
    parser.add_argument("--seed", type=int, default=0, help="the game's seed (default: 0)")
    parser.add_argument(
        "--max-moves",
        type=int,
        default=None,
        metavar="N",
        help="stop after N moves (marked unfinished); bounds long real-time games like Pong",
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="snapshots take their most likely action instead of sampling as in training (a "
        "PSRO run's greedy members always do, as in the run)",
    )
    parser.add_argument(
        "--size", type=int, default=400, metavar="PX", help="picture size, longer side (400)"
    )
    parser.add_argument("--game", default=None, help="the game (overrides config.json)")
    parser.add_argument(
        "--web",
        action="store_true",
        help="step through the match in a web page served on this machine, with each player's "
        "move probabilities (turn-based games)",
    )
    parser.add_argument("--port", type=int, default=8000, help="--web: the port (0: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="--web: the address (this machine)")
    add_trust_option(parser)
    return parser
