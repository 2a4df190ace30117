"""``sp-wrappers play``: a person plays a snapshot through text streams, and the archive is only
ever written by a finished game with ``--record``."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.store import IncompatibleSnapshotError, SnapshotArchive
from sp_wrappers.cli.common import make_game, resolve_run_dir
from sp_wrappers.cli.play import add_play_parser, choose_snapshot, play_run
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.evaluation.human_play import (
    HUMAN,
    UnplayableGameError,
    check_turn_based,
    play_session,
)
from sp_wrappers.evaluation.match import play_match
from sp_wrappers.evaluation.round_robin import RoundRobinResult
from sp_wrappers.ratings.archive_ratings import archive_ratings, store_archive_ratings

REPO = Path(__file__).resolve().parents[2]
CHESS = "pettingzoo.classic.chess_v6:env"


def make_run(root: Path, game: str, steps: int, rated: bool = True) -> Path:
    """A run directory: ``config.json`` naming ``game`` and an archive of two tiny MaskablePPO
    snapshots (untrained, then after ``steps`` steps), with a few evaluation games."""
    torch.set_num_threads(1)
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"game": game, "game_kwargs": {}}))
    archive = SnapshotArchive(root / "archive")
    env = SelfPlayEnv(make_game(game))
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=32,
        n_epochs=1,
        seed=0,
        policy_kwargs={"net_arch": [16]},
    )
    archive.save(model, step=0)
    model.learn(steps)
    archive.save(model, step=steps)
    if rated:
        play_match(lambda: make_game(game), "snapshot-0000", "snapshot-0001", 2, archive=archive)
        play_match(lambda: make_game(game), "snapshot-0001", RandomPolicy(), 2, archive=archive)
        store_archive_ratings(archive)
    archive.close()
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    return {
        "tictactoe": make_run(root / "ttt", "tictactoe_v3", 256),
        "connect_four": make_run(root / "c4", "connect_four_v3", 128),
        "chess": make_run(root / "chess", CHESS, 64, rated=False),
    }


@pytest.fixture
def ttt(runs, tmp_path) -> Path:
    return shutil.copytree(runs["tictactoe"], tmp_path / "ttt")


def archive_files(run: Path) -> dict[str, str]:
    """Every file of the run's archive directory and its sha256."""
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((run / "archive").rglob("*"))
        if p.is_file()
    }


def n_matches(run: Path) -> int:
    with SnapshotArchive(run / "archive", create=False) as archive:
        return archive.n_matches()


def cycle(moves: str, times: int = 10) -> io.StringIO:
    """Input trying ``moves`` (one per line) in order, again and again: illegal ones ask again."""
    return io.StringIO("".join(f"{m}\n" for m in moves.split()) * times)


class ScriptedPerson:
    """An input stream that answers each prompt with a legal move it reads from the output
    (the listed legal moves, asking with ``?`` when they are not listed), after some
    ``openers`` typed first."""

    def __init__(self, output: io.StringIO, openers: tuple[str, ...] = (), seed: int = 0):
        self.output, self.openers, self.read_at = output, list(openers), 0
        self.rng = np.random.default_rng(seed)

    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        if self.openers:
            return self.openers.pop(0) + "\n"
        text = self.output.getvalue()
        new, self.read_at = text[self.read_at :], len(text)
        if "Legal moves: " not in new:
            return "?\n"
        listing = new.rsplit("Legal moves: ", 1)[1].split("Your move:")[0]
        moves = listing.replace("Try again.", "").strip().rstrip(".").split(",")
        return str(self.rng.choice([m.strip() for m in moves])) + "\n"


class InterruptAfter(io.StringIO):
    """Input that gives its lines, then raises KeyboardInterrupt as Ctrl-C does."""

    def readline(self, *args) -> str:
        line = super().readline(*args)
        if not line:
            raise KeyboardInterrupt
        return line


# -- whole games ---------------------------------------------------------------------------------


def test_a_whole_tictactoe_game_draws_the_board_after_every_move_and_writes_nothing(ttt):
    before = archive_files(ttt)
    out = io.StringIO()
    outcome = play_run(
        str(ttt), seat="0", input_stream=cycle("1 2 3 4 5 6 7 8 9"), output_stream=out
    )
    text = out.getvalue()
    assert outcome.finished and outcome.score in (0.0, 0.5, 1.0)
    assert outcome.human_seat == "player_1" and outcome.opponent == "snapshot-0001"
    assert text.count("---+---+---") == 2 * (len(outcome.moves) + 1)  # initial board + each move
    snapshot_moves = [move for seat, move in outcome.moves if seat == "player_2"]
    assert re.findall(r"snapshot-0001 \(player_2\) plays (\d)", text) == snapshot_moves
    assert "Game over." in text and re.search(r"(You win|Draw|snapshot-0001 wins)\.", text)
    assert archive_files(ttt) == before  # nothing recorded without --record


def test_unreadable_and_illegal_moves_ask_again_naming_the_legal_moves(ttt):
    out = io.StringIO()
    script = io.StringIO("hello\n0\n5\n5\n" + "1\n2\n3\n4\n6\n7\n8\n9\n" * 3)
    outcome = play_run(str(ttt), seat="player_1", input_stream=script, output_stream=out)
    text = out.getvalue()
    assert outcome.finished and outcome.moves[0] == ("player_1", "5")
    assert "'hello' is not a move; write one like '5'. Legal moves: 1, 2, 3, 4, 5, 6" in text
    assert "'0' is not a move" in text
    assert re.search(
        r"'5' is not legal now\. Legal moves: [0-9, ]+\. Try again\.\nYour move:", text
    )


def test_a_whole_connect_four_game_in_column_numbers(runs, tmp_path):
    run = shutil.copytree(runs["connect_four"], tmp_path / "c4")
    out = io.StringIO()
    script = cycle("0 8 x 1 2 3 4 5 6 7", 20)
    outcome = play_run(str(run), seat="1", input_stream=script, output_stream=out)
    text = out.getvalue()
    assert outcome.finished and outcome.human_seat == "player_1"
    assert "'0' is not a move; write one like '4'. Legal moves: 1, 2, 3, 4, 5, 6, 7." in text
    assert "'8' is not a move" in text and "'x' is not a move" in text
    assert text.count("1 2 3 4 5 6 7\n") == len(outcome.moves) + 1


def test_a_full_connect_four_column_asks_again():
    from sp_wrappers.core.policies import CallablePolicy

    def column_four(obs, mask):  # column 4 while it has room
        return 3 if mask[3] else int(np.flatnonzero(mask)[0])

    out = io.StringIO()
    bot = CallablePolicy(column_four, "column-four")
    moves = io.StringIO("4\n" * 4 + cycle("1 2 3 5 6 7", 10).getvalue())
    outcome = play_session("connect_four_v3", bot, 0, None, moves, out)
    assert outcome.finished
    assert [m for _, m in outcome.moves[:6]] == ["4"] * 6
    assert "'4' is not legal now. Legal moves: 1, 2, 3, 5, 6, 7. Try again." in out.getvalue()


def test_a_whole_chess_game_in_uci_with_bad_input_on_the_way(runs):
    out = io.StringIO()
    person = ScriptedPerson(out, openers=("e2e5", "castle", "e2e4", "Ke2"))
    outcome = play_run(
        str(runs["chess"]), seat="white", input_stream=person, output_stream=out, seed=0
    )
    text = out.getvalue()
    assert outcome.finished, text[-2000:]
    assert "'e2e5' is not legal now. Legal moves: a2a3, a2a4, b1a3, b1c3" in text
    assert "'castle' is not a move; write one like 'e2e4'" in text
    assert outcome.moves[0] == ("player_0", "e2e4") and outcome.moves[2] == ("player_0", "e1e2")
    assert "Last move: e2e4 (white)" in text and "   a b c d e f g h" in text
    assert re.search(r"snapshot-0001 \(player_1\) plays [a-h][1-8][a-h][1-8]", text)


# -- stopping early leaves the archive as it was -------------------------------------------------


def test_ctrl_c_mid_game_leaves_the_archive_byte_identical_even_with_record(ttt):
    before = archive_files(ttt)
    out = io.StringIO()
    outcome = play_run(
        str(ttt), seat="0", record=True, input_stream=InterruptAfter("5\n"), output_stream=out
    )
    assert outcome.stopped == "interrupted" and not outcome.finished
    assert "Interrupted" in out.getvalue() and "Nothing was written" in out.getvalue()
    assert archive_files(ttt) == before


def test_end_of_input_and_quit_leave_the_archive_byte_identical(ttt):
    before = archive_files(ttt)
    eof = play_run(
        str(ttt),
        seat="0",
        record=True,
        input_stream=io.StringIO("5\n"),
        output_stream=io.StringIO(),
    )
    quit_ = play_run(
        str(ttt),
        seat="0",
        record=True,
        input_stream=io.StringIO("5\nquit\n"),
        output_stream=io.StringIO(),
    )
    assert (eof.stopped, quit_.stopped) == ("end of input", "quit")
    assert archive_files(ttt) == before


def _read_until(process: subprocess.Popen, marker: bytes, seen: bytearray, count: int) -> None:
    deadline = time.monotonic() + 60
    while seen.count(marker) < count:
        assert time.monotonic() < deadline, seen.decode()
        ready, _, _ = select.select([process.stdout], [], [], 1.0)
        if ready:
            chunk = os.read(process.stdout.fileno(), 65536)
            assert chunk, f"the command ended early: {seen.decode()}"
            seen.extend(chunk)


def test_sigint_to_the_command_mid_game_exits_130_and_writes_nothing(ttt, popen_interruptible):
    before = archive_files(ttt)
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "sp_wrappers.cli", "play", str(ttt), "--seat", "0", "--record"]
    process = popen_interruptible(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    seen = bytearray()
    try:
        _read_until(process, b"Your move: ", seen, 1)
        process.stdin.write(b"5\n")
        process.stdin.flush()
        _read_until(process, b"Your move: ", seen, 2)  # the snapshot has answered
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, (seen + out).decode() + err.decode()
    assert b"Nothing was written" in out
    assert archive_files(ttt) == before


# -- recording -----------------------------------------------------------------------------------


def test_record_adds_one_match_that_rates_the_human_on_the_snapshots_scale(ttt, capsys):
    from sp_wrappers.cli import main

    matches = n_matches(ttt)
    out = io.StringIO()
    outcome = play_run(
        str(ttt),
        snapshot="best",
        seat="random",
        record=True,
        seed=3,
        input_stream=cycle("5 1 3 7 9 2 4 6 8"),
        output_stream=out,
    )
    assert outcome.finished and "Recorded the game" in out.getvalue()
    assert n_matches(ttt) == matches + 1
    with SnapshotArchive(ttt / "archive", create=False) as archive:
        last = archive.matches()[-1]
        ratings = archive_ratings(archive)
    assert (last.player_a, last.player_b, last.source) == (HUMAN, outcome.opponent, "play")
    assert (last.score_a, last.seat_a) == (outcome.score, outcome.human_seat)
    assert ratings.fit.games_played[HUMAN] == 1
    # a person is a player on the snapshots' scale, not a reference player
    assert HUMAN in ratings.humans and HUMAN not in ratings.baselines
    rated = {line.id: line for line in ratings.snapshots}
    assert HUMAN not in rated[outcome.opponent].baseline_results
    assert main(["ratings", str(ttt)]) == 0
    table = capsys.readouterr().out
    assert re.search(r"^human\s+-\s+\d+", table, re.MULTILINE)
    assert "vs human" not in table
    lines = table.splitlines()
    names = [line.split()[0] for line in lines[2:] if line.strip()]
    assert names.index(HUMAN) < names.index("random")  # listed with the players, first
    assert main(["ratings", str(ttt), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["players"]
    kinds = {row["id"]: row["kind"] for row in rows}
    assert kinds[HUMAN] == "human" and kinds["random"] == "baseline"
    # the payoff matrix is the snapshots' and baselines': a person's one game stays out of it
    payoff = RoundRobinResult.from_archive(ttt / "archive")
    assert HUMAN not in payoff.players and outcome.opponent in payoff.players
    assert HUMAN in RoundRobinResult.from_archive(ttt / "archive", source="play").players


# -- choosing the snapshot, the seat and the game --------------------------------------------------


def test_snapshot_choice_latest_best_id_and_number(runs, ttt):
    with resolve_run_dir(ttt).open() as archive:
        assert choose_snapshot(archive, "latest").id == "snapshot-0001"
        archive.set_ratings(
            {"snapshot-0000": {"bt": 1600.0, "elo": 900.0}, "snapshot-0001": {"bt": 1400.0}}
        )
        assert choose_snapshot(archive, "best").id == "snapshot-0000"  # Bradley-Terry first
        archive.set_ratings({"snapshot-0000": {"elo": 900.0}, "snapshot-0001": {"elo": 950.0}})
        assert choose_snapshot(archive, "best").id == "snapshot-0001"  # else Elo
        assert choose_snapshot(archive, "snapshot-0000").id == choose_snapshot(archive, "0").id
        with pytest.raises(Exception, match="No snapshot 'snapshot-0042'.*snapshot-0000, snapshot"):
            choose_snapshot(archive, "snapshot-0042")
    with resolve_run_dir(runs["chess"]).open() as archive:
        with pytest.raises(
            Exception, match="has a stored rating yet; rate them with `sp-wrappers tournament"
        ):
            choose_snapshot(archive, "best")


def test_flags_seat_errors_and_a_snapshot_from_another_game(runs):
    import argparse

    parser = argparse.ArgumentParser()
    add_play_parser(parser.add_subparsers())
    assert parser.parse_args(["play", "RUN"]).deterministic is None  # the game's default
    assert parser.parse_args(["play", "RUN", "--deterministic"]).deterministic is True
    assert parser.parse_args(["play", "RUN", "--sample"]).deterministic is False
    with pytest.raises(Exception, match="No seat '5' in this game; choose random or one of 0 "):
        play_run(
            str(runs["tictactoe"]),
            seat="5",
            input_stream=io.StringIO(),
            output_stream=io.StringIO(),
        )
    with pytest.raises(IncompatibleSnapshotError, match="trained on the game it was|seat player_"):
        play_run(
            str(runs["tictactoe"]),
            game="connect_four_v3",
            input_stream=io.StringIO(),
            output_stream=io.StringIO(),
        )


def test_sampling_plays_the_snapshot_with_its_seeded_generator(runs):
    with resolve_run_dir(runs["tictactoe"]).open() as archive:
        policy = archive.load_policy("snapshot-0000")
    games = [
        play_session(
            "tictactoe_v3",
            policy,
            "player_2",
            False,
            cycle("5 1 2 3 4 6 7 8 9"),
            io.StringIO(),
            seed=7,
        ).moves
        for _ in range(2)
    ]
    assert games[0] == games[1]


# -- games that are not for play ----------------------------------------------------------------


@pytest.mark.parametrize("game", ["pong_v3", "simple_tag_v3", "pettingzoo.atari.pong_v3:env"])
def test_real_time_games_are_refused_pointing_to_watch(tmp_path, game):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"game": game}))
    with pytest.raises(UnplayableGameError, match="is for turn-based games") as error:
        play_run(str(run), input_stream=io.StringIO(), output_stream=io.StringIO())
    assert "real time" in str(error.value) and "`sp-wrappers watch RUN_DIR`" in str(error.value)
    assert not (run / "archive").exists()


def test_built_games_without_masks_or_turns_are_refused_and_the_command_says_so(tmp_path):
    from pettingzoo.classic import rps_v2

    with pytest.raises(UnplayableGameError, match="parallel game"):
        check_turn_based(None, rps_v2.parallel_env())
    with pytest.raises(UnplayableGameError, match="gives seat 'player_0' no action mask"):
        check_turn_based("rps_v2", rps_v2.env())
    (tmp_path / "config.json").write_text(json.dumps({"game": "pong_v3"}))
    result = subprocess.run(
        [sys.executable, "-m", "sp_wrappers.cli", "play", str(tmp_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("sp-wrappers: error: `sp-wrappers play` is for turn-based")
    assert len(result.stderr.strip().splitlines()) == 1
