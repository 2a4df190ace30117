"""``sp-wrappers play``: a person plays a snapshot of an archive in the terminal.

:func:`play_run` is the command's work (a run or archive directory, a snapshot, one game, the
match recorded on request; :func:`play_web` the same in a web page); the game is played by
:func:`sp_wrappers.evaluation.human_play.play_session`.

The snapshot plays as in evaluation: the observation of its seat as training gave it, its
actions masked to the legal ones. By default it takes its most likely move in board games and
samples its moves in games whose good play is random (hidden information such as poker,
simultaneous moves: :func:`~sp_wrappers.games.information.mixed_equilibria`); ``--deterministic``
and ``--sample`` choose.
Moves are read and written in the game's notation (:mod:`sp_wrappers.games.notation`). A move that
cannot be read or is not legal asks again, naming the legal moves; Ctrl-C, the end of input or
``quit`` stop the game and nothing is written to the archive. With ``--record`` a finished game
becomes one match row (``player_a="human"``, ``source="play"``), so ``sp-wrappers ratings`` rates
the person on the snapshots' scale.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO, Any

from ..evaluation.human_play import (
    HUMAN,
    PlayOutcome,
    check_turn_based,
    default_deterministic,
    play_session,
)
from .common import (
    PROG,
    CLIError,
    add_command,
    add_trust_option,
    game_factory,
    open_archive,
    resolve_run_dir,
    run_game,
)

__all__ = ["play_run", "play_web", "rgb_frames", "choose_snapshot", "add_play_parser", "cmd_play"]


def choose_snapshot(archive: Any, which: str = "latest") -> Any:
    """The player ``which`` names: the :class:`~sp_wrappers.SnapshotInfo` of ``"latest"``,
    ``"best"`` or a snapshot id or number, or, for ``"nash"``, the
    :class:`~sp_wrappers.runs.players.PlayerChoice` of the archive's Nash mixture (see
    :func:`~sp_wrappers.runs.players.choose_player`, the one home of these names).

    :raises TrainError: no such snapshot, or no stored ratings for ``"best"``.
    """
    from ..runs.players import choose_player

    choice = choose_player(archive, which)
    return choice if choice.mixture else archive.get(choice.snapshot)


def play_run(
    path: str,
    snapshot: str = "latest",
    seat: str | int = "random",
    game: str | None = None,
    game_kwargs: dict[str, Any] | None = None,
    deterministic: bool | None = None,
    record: bool = False,
    seed: int | None = None,
    input_stream: IO[str] | None = None,
    output_stream: IO[str] | None = None,
    trust_modules: Sequence[str] | None = None,
) -> PlayOutcome:
    """Play a snapshot of a run (or archive) directory, as ``sp-wrappers play`` does.

    The archive is only read while the game runs; a finished game is written (one match row,
    in one transaction) only when ``record`` is true, and nothing else ever is.

    :param path: a run directory (``archive/`` and ``config.json``) or an archive directory.
    :param snapshot: ``"latest"``, ``"best"``, ``"nash"`` or an id (see :func:`choose_snapshot`).
    :param seat: the person's seat (see :func:`play_session`).
    :param game: the game, overriding the run's ``config.json``.
    :param game_kwargs: keyword arguments over the config's ``game_kwargs``; the game is
        recorded with its configuration when they are given.
    :param deterministic: the snapshot takes its most likely move (``True``) or samples
        (``False``); ``None``: as the run plays its snapshots (a PSRO run's members, see
        :attr:`~sp_wrappers.runs.rundir.RunArchive.greedy`), else samples in games with mixed
        equilibria (see :func:`default_deterministic`), else its most likely move.
    :param record: store a finished game in the archive's match history.
    :param trust_modules: modules trusted on top of those the run's ``config.json`` names
        (``--trust-module``).
    """
    run, env_fn, kwargs = _game_of(path, game, game_kwargs)
    out = output_stream or sys.stdout
    archive = open_archive(run, trust_modules)
    try:
        from ..runs.players import choose_player

        choice = choose_player(archive, snapshot)
        if deterministic is None:  # as the run plays its snapshots (PSRO), else the game's way
            deterministic = default_deterministic(env_fn) if run.greedy is None else run.greedy
        policy = choice.load(archive, deterministic=deterministic)
        outcome = play_session(env_fn, policy, seat, None, input_stream, out, seed=seed)
        if record and outcome.finished:
            archive.record_match(**outcome.match_record(kwargs if game_kwargs else None))
            out.write(
                f"Recorded the game in {archive.path} as {HUMAN!r} against {choice.label}; "
                f"`{PROG} ratings {path}` rates you on the snapshots' scale.\n"
            )
        elif not outcome.finished:
            out.write(f"Nothing was written to {archive.path}.\n")
        return outcome
    finally:
        archive.close()


SNAPSHOT_HELP = (
    "the opponent: latest (default), best (the least exploitable where measured, else the highest "
    "stored rating), nash (the archive's Nash mixture, one snapshot drawn per game) or a "
    "snapshot id"
)


def _game_of(
    path: str, game: str | None, game_kwargs: dict[str, Any] | None, frames: bool = False
) -> Any:
    """The run, the game's factory and its keyword arguments, as ``play`` plays it; with
    ``frames`` a game the page cannot draw renders its own ``rgb_array`` frames, if it can."""
    run = resolve_run_dir(path)
    name, kwargs = run.game(game)  # the config's game_kwargs belong to the config's game only
    check_turn_based(name)  # before the Atari or MPE package loads
    name, env_fn = run_game(run, game)
    if game_kwargs:
        kwargs.update(game_kwargs)
        env_fn = game_factory(name, kwargs)
    if frames:
        env_fn = rgb_frames(name, kwargs, env_fn)
    return run, env_fn, kwargs


def rgb_frames(name: str, kwargs: dict[str, Any], env_fn: Any) -> Any:
    """``env_fn`` rendering ``rgb_array`` frames for the web page, for a game whose board the
    page does not draw itself; ``env_fn`` unchanged when the game takes no ``render_mode``."""
    if name in ("tictactoe_v3", "connect_four_v3", "go_v5", "chess_v6"):
        return env_fn
    try:
        framed = game_factory(name, {**kwargs, "render_mode": "rgb_array"})
        framed().close()
    except TypeError:
        return env_fn
    return framed


def play_web(
    path: str,
    snapshot: str = "latest",
    seat: str | int = "random",
    game: str | None = None,
    game_kwargs: dict[str, Any] | None = None,
    deterministic: bool | None = None,
    record: bool = False,
    seed: int | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    trust_modules: Sequence[str] | None = None,
) -> None:
    """Serve the game in a web page (``sp-wrappers play --web``) until Ctrl-C (the
    ``KeyboardInterrupt`` goes on to the caller); the same choices as :func:`play_run`, made
    again in the page for each new game."""
    from ..evaluation.web_play import WebPlay, WebServer

    run, env_fn, kwargs = _game_of(path, game, game_kwargs, frames=True)
    app = WebPlay(
        lambda: open_archive(run, trust_modules),
        env_fn,
        snapshot=snapshot,
        seat=seat,
        deterministic=deterministic,
        record=record,
        record_config=kwargs if game_kwargs else None,
        seed=seed,
        choose=choose_snapshot,
    )
    try:
        server = WebServer(app, host=host, port=port)
    except OSError as error:
        raise CLIError(
            f"Cannot serve on {host}:{port} ({error.strerror}); pass another --port "
            "(0 picks a free one)."
        ) from None
    print(f"Play in your browser: {server.url}  (Ctrl-C stops the server)", flush=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"Note: --host {host} lets other machines on the network play and record.")
    try:
        server.serve_forever()  # until Ctrl-C, which goes on to the command's status 130
    finally:
        print("Stopped." + ("" if record else f" Nothing was written to {run.archive_path}."))


SEAT_HELP = "your seat: an index in the game's agents, an agent name, the side's name (white, X)"
SEAT_HELP += " or random (default)"
GAME_KWARG_HELP = "a keyword argument of the game constructor (JSON value), repeatable"
RECORD_HELP = f"store a finished game as a match of {HUMAN!r} against the snapshot"


_PLAY_HELP = "play a snapshot yourself in the terminal (turn-based games)"
_PLAY_DESCRIPTION = (
    "Play one game against a snapshot: the board is drawn as text after every "
    "move and moves are typed in the game's notation (tic-tac-toe cells 1-9, Connect Four "
    "columns 1-7, chess UCI such as e2e4, Go coordinates such as C3 or pass, hold'em "
    "fold/call/raise/check; other games by action index). Ctrl-C or the end of input stops "
    "the game without writing anything."
)


def add_play_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``play`` on the ``sp-wrappers`` subparsers (``cmd_play`` runs it)."""
    play = add_command(subparsers, "play", cmd_play, _PLAY_HELP, _PLAY_DESCRIPTION)
    add = play.add_argument
    add("--snapshot", default="latest", metavar="latest|best|nash|ID", help=SNAPSHOT_HELP)
    add("--seat", default="random", metavar="N|NAME|random", help=SEAT_HELP)
    add("--game", default=None, help="the game (overrides config.json): a name or module:function")
    add("--game-kwarg", action="append", metavar="KEY=VALUE", help=GAME_KWARG_HELP)
    mode = play.add_mutually_exclusive_group()
    mode.add_argument(
        "--deterministic",
        action="store_true",
        default=None,
        help="its most likely moves (the default in games of perfect information: board games)",
    )
    mode.add_argument(
        "--sample",
        dest="deterministic",
        action="store_false",
        help="moves sampled as in training (the default in games with hidden information, such "
        "as poker, or simultaneous moves)",
    )
    add("--record", action="store_true", help=RECORD_HELP)
    add("--seed", type=int, default=None, help="seeds the game, your seat and the sampling")
    add("--web", action="store_true", help="play in a web page served on this machine instead")
    add("--port", type=int, default=8000, help="--web: the port (default 8000; 0 picks a free one)")
    add("--host", default="127.0.0.1", help="--web: the address (default 127.0.0.1, this machine)")
    add_trust_option(play)
    return play


def cmd_play(args: argparse.Namespace) -> int:
    """Run ``sp-wrappers play``: 0 when the game finished or the person quit, 1 at the end of
    input before the end of the game, 130 on Ctrl-C."""
    from .run_options import parse_pairs

    choices = {
        "snapshot": args.snapshot,
        "seat": args.seat,
        "game": args.game,
        "game_kwargs": parse_pairs(args.game_kwarg, "--game-kwarg"),
        "deterministic": args.deterministic,
        "record": args.record,
        "seed": args.seed,
        "trust_modules": args.trust_module,
    }
    if args.web:
        play_web(args.run_dir, host=args.host, port=args.port, **choices)
        return 0  # not reached: the server stops on Ctrl-C, which ends the command with 130
    outcome = play_run(args.run_dir, **choices)
    return {"interrupted": 130, "end of input": 1}.get(outcome.stopped or "", 0)
