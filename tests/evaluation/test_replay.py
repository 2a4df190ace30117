"""Replays: ``sp-wrappers watch`` writes one GIF frame per move plus a closing frame, prints
turn-based games move by move, and names the extra to install when imageio is missing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.evaluation.replay import play_replay
from sp_wrappers.evaluation.replay_video import (
    MP4_HINT,
    VIDEO_HINT,
    replay_captions,
    replay_frames,
    write_replay,
)
from sp_wrappers.games.baselines import PerfectTicTacToePolicy
from sp_wrappers.games.lines import winning_lines
from sp_wrappers.games.registry import game_factory, make_game

#: Pong is cut after this many moves (one move = one frame of both players); a whole game to 21
#: points runs to thousands of frames. ``--max-moves`` is the option that bounds it.
PONG_MOVES = 30


def _make_run(root: Path, game: str, algo: type, game_kwargs: dict) -> Path:
    """A run directory holding config.json and an archive with one untrained snapshot."""
    root.mkdir()
    (root / "config.json").write_text(json.dumps({"game": game, "game_kwargs": game_kwargs}))
    archive = SnapshotArchive(root / "archive")
    env = SelfPlayEnv(make_game(game, **game_kwargs))
    model = algo("MlpPolicy", env, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [16]})
    archive.save(model, step=0)
    archive.close()
    env.close()
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("watch")
    return {
        "tictactoe_v3": _make_run(base / "ttt", "tictactoe_v3", MaskablePPO, {}),
        "connect_four_v3": _make_run(base / "c4", "connect_four_v3", MaskablePPO, {}),
        "pong_v3": _make_run(base / "pong", "pong_v3", PPO, {"max_cycles": 200}),
    }


def _moves_in_summary(out: str) -> int:
    match = re.search(r", (\d+) moves; ", out)
    assert match, out
    return int(match.group(1))


def _gif_frames(path: Path) -> list[np.ndarray]:
    with Image.open(path) as image:
        frames = []
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")))
    return frames


@pytest.mark.parametrize(
    ("game", "reference", "extra"),
    [
        ("tictactoe_v3", "minimax", ()),
        ("connect_four_v3", "alphabeta-d2", ()),
        ("pong_v3", "random", ("--max-moves", PONG_MOVES)),
    ],
)
def test_watch_writes_the_start_one_gif_frame_per_move_and_the_closing_frame(
    runs, sp_wrappers, tmp_path, game, reference, extra
):
    out = tmp_path / "match.gif"
    argv = ("watch", runs[game], "--a", "snapshot-0000", "--b", reference, *extra, "--seed", 3)
    status, stdout, err = sp_wrappers(*argv, "--out", out)
    assert status == 0, err
    moves = _moves_in_summary(stdout)
    frames = _gif_frames(out)
    assert len(frames) == moves + 2  # the GIF starts from the empty board, before move 1
    assert len({f.shape for f in frames}) == 1
    assert not np.array_equal(frames[0], frames[1])
    # the closing frame differs from the last move's frame: names and result in its caption
    assert not np.array_equal(frames[-1], frames[-2])
    assert "snapshot-0000" in stdout and reference in stdout
    if game == "pong_v3":
        assert moves == PONG_MOVES and "stopped after 30 moves" in stdout
    else:  # the same seed without --out plays the same game, printed move by move
        status, text, err = sp_wrappers(*argv)
        assert status == 0, err
        assert len(re.findall(r"^\s+\d+\. player_", text, flags=re.MULTILINE)) == moves


def test_the_gif_keeps_frames_whose_pictures_repeat(tmp_path):
    # Pong's first frames repeat (nothing moves yet); the move number in the caption keeps
    # every frame, which a GIF encoder would otherwise merge into the previous one.
    replay = play_replay(
        game_factory("pong_v3", {"render_mode": "rgb_array"}),
        RandomPolicy(),
        RandomPolicy(policy_id="random-2"),
        max_moves=12,
    )
    assert len(replay.frames) == 12 and not replay.finished
    assert any(np.array_equal(a, b) for a, b in pairwise(replay.frames))
    frames = replay_frames(replay, size=160)
    assert len(frames) == 14  # the start, 12 moves, the closing frame
    assert all(not np.array_equal(a, b) for a, b in pairwise(frames))
    assert len(_gif_frames(write_replay(replay, tmp_path / "pong.gif", size=160))) == 14


def test_text_replay_prints_every_move_the_board_and_the_result(runs, sp_wrappers):
    status, out, err = sp_wrappers(
        "watch", runs["tictactoe_v3"], "--a", "minimax", "--b", "snapshot-0000", "--opening", "5"
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "tictactoe_v3: minimax (as player_1) vs snapshot-0000 (as player_2)"
    assert lines[1] == "forced opening: 5"  # the centre, in play's notation (cells 1-9)
    assert lines[2] == "  1. player_1 minimax: 5  (opening)"
    assert lines[3:8] == [
        "      1 | 2 | 3",
        "     ---+---+---",
        "      4 | X | 6",
        "     ---+---+---",
        "      7 | 8 | 9",
    ]
    assert lines[-1] in ("result: draw", "result: minimax (as player_1) wins")  # never loses


def test_play_replay_records_frames_moves_and_the_forced_opening():
    replay = play_replay(
        lambda: make_game("tictactoe_v3", render_mode="rgb_array"),
        PerfectTicTacToePolicy(),
        RandomPolicy(),
        seat="player_2",
        opening=(0, 4),
        seed=1,
    )
    assert [m.actions for m in replay.moves[:2]] == [{"player_1": 0}, {"player_2": 4}]
    assert [m.forced for m in replay.moves[:3]] == [True, True, False]
    assert len(replay.frames) == len(replay.moves) and replay.start_frame is not None
    assert replay.seats_a == ("player_2",) and replay.players["player_1"] == "random"
    assert replay.outcome_a in (0.5, 1.0)  # perfect play never loses


def test_a_simultaneous_game_has_no_text_replay(runs, sp_wrappers):
    status, _, err = sp_wrappers("watch", runs["pong_v3"], "--max-moves", 3)
    assert status == 2
    assert "played simultaneously" in err and "--out" in err


def test_unknown_players_and_bad_outputs_are_one_line_errors(runs, sp_wrappers):
    status, _, err = sp_wrappers("watch", runs["tictactoe_v3"], "--b", "stockfish")
    assert status == 2 and "Unknown player 'stockfish'" in err and "minimax" in err
    status, _, err = sp_wrappers("watch", runs["tictactoe_v3"], "--b", "alphabeta-d2")
    assert status == 2 and "plays connect_four_v3 only" in err
    status, _, err = sp_wrappers("watch", runs["tictactoe_v3"], "--out", "match.avi")
    assert status == 2 and "*.gif or *.mp4" in err
    status, _, err = sp_wrappers("watch", runs["tictactoe_v3"], "--opening", "5,5")
    assert status == 2 and "Move 2 of '5,5': '5' is not legal now" in err
    assert "Legal moves: 1, 2, 3, 4, 6, 7, 8, 9." in err


def test_missing_imageio_names_the_video_extra(runs, sp_wrappers, monkeypatch, tmp_path):
    replay = play_replay(
        lambda: make_game("tictactoe_v3", render_mode="rgb_array"), RandomPolicy(), RandomPolicy()
    )
    for name in ("imageio", "imageio.v2", "imageio.v3"):
        monkeypatch.setitem(sys.modules, name, None)  # `import imageio` now fails
    with pytest.raises(ImportError, match=re.escape(VIDEO_HINT)):
        write_replay(replay, tmp_path / "match.gif")
    status, _, err = sp_wrappers("watch", runs["tictactoe_v3"], "--out", tmp_path / "m.gif")
    assert status == 2 and VIDEO_HINT in err and "Traceback" not in err
    assert not (tmp_path / "m.gif").exists()


def test_missing_ffmpeg_plugin_names_the_mp4_extra(monkeypatch, tmp_path):
    replay = play_replay(
        lambda: make_game("tictactoe_v3", render_mode="rgb_array"), RandomPolicy(), RandomPolicy()
    )
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    with pytest.raises(ImportError, match=re.escape(MP4_HINT)):
        write_replay(replay, tmp_path / "match.mp4")


def test_watch_writes_an_mp4_with_the_ffmpeg_plugin(runs, sp_wrappers, tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    out = tmp_path / "match.mp4"
    status, stdout, err = sp_wrappers("watch", runs["tictactoe_v3"], "--b", "minimax", "--out", out)
    assert status == 0, err
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(out))
    # the start and each move show 0.8 s and the closing frame 3 s, at 1.25 frames per second
    assert frames == _moves_in_summary(stdout) + 5 and seconds > 3


def test_watch_play_and_report_do_not_load_the_training_commands(runs):
    # the train and league commands import the training stack only when they run: it would
    # only slow a command that never trains
    script = (
        "import sys, contextlib, io\n"
        "from sp_wrappers.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    status = main(sys.argv[1:])\n"
        "heavy = ('sp_wrappers.runs.single', 'sp_wrappers.runs.league',\n"
        "         'sp_wrappers.league.runner')\n"
        "print(status, [name for name in heavy if name in sys.modules])\n"
    )
    run = str(runs["tictactoe_v3"])
    for argv in (["watch", run, "--b", "minimax"], ["report", run, "--no-replay"], ["play", run]):
        result = subprocess.run(
            [sys.executable, "-c", script, *argv],
            input="quit\n",
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])),
        )
        assert result.stdout.strip().splitlines()[-1] == "0 []", result.stdout + result.stderr


def test_a_tictactoe_gif_starts_from_the_empty_board():
    from pettingzoo.classic import tictactoe_v3

    replay = play_replay(
        lambda: tictactoe_v3.env(render_mode="rgb_array"),
        RandomPolicy(),
        RandomPolicy(policy_id="random-2"),
        seed=0,
    )
    frames = replay_frames(replay, size=200)
    assert len(frames) == len(replay.moves) + 2
    board = slice(0, 200)  # the picture above the caption band
    assert not np.array_equal(frames[0][board], frames[1][board])  # move 1 marks the board
    assert np.array_equal(frames[0][board], replay_frames(replay, size=200)[0][board])


def _highlight(frame: np.ndarray, height: int) -> np.ndarray:
    """Where the closing frame's gold (the winning line's colour) is, in the picture above the
    caption band."""
    picture = frame[:height].astype(int)
    red, green, blue = picture[..., 0], picture[..., 1], picture[..., 2]
    return (red > 230) & (green > 180) & (green < 240) & (blue < 110)


def test_a_won_tictactoe_gif_draws_the_winning_line_on_its_closing_frame():
    from pettingzoo.classic import tictactoe_v3

    def replay(opponent):
        return play_replay(
            lambda: tictactoe_v3.env(render_mode="rgb_array"),
            PerfectTicTacToePolicy(),
            opponent,
            seed=0,
        )

    won = replay(RandomPolicy())
    assert won.outcome_a == 1.0  # perfect play beats random play here
    assert won.final_board == (0, 1, 0, 0, 1, 0, 2, 1, 2)  # X across the middle row
    assert winning_lines("tictactoe_v3", won.final_board) == [(1, 4, 7)]
    # the dimmed closing frame: gold only where the line is drawn (the board's own yellow is dim)
    assert _highlight(replay_frames(won, size=200)[-1], 200).sum() > 300
    drawn = replay(PerfectTicTacToePolicy())
    assert drawn.outcome_a == 0.5
    assert _highlight(replay_frames(drawn, size=200)[-1], 200).sum() == 0  # no line to draw


def test_a_connect_four_gif_starts_empty_and_marks_the_line_found_on_the_final_board():
    from pettingzoo.classic import connect_four_v3

    make = lambda: connect_four_v3.env(render_mode="rgb_array")  # noqa: E731
    replay = play_replay(make, RandomPolicy(), RandomPolicy(policy_id="random-2"), seed=0)
    assert replay.outcome_a == 1.0 and replay.finished
    # the winner's line comes from the game's own board, not from the picture
    assert replay.final_board[28:33] == (1, 1, 1, 1, 1)  # five in the fifth row from the top
    assert winning_lines("connect_four_v3", replay.final_board) == [
        (28, 29, 30, 31),
        (29, 30, 31, 32),
    ]
    frames = replay_frames(replay, size=400)
    height = 348  # the picture above the caption band: 891 x 774 scaled to a width of 400
    assert len(frames) == len(replay.moves) + 2

    # move 0: the empty board, as a fresh game renders it
    empty = play_replay(make, RandomPolicy(), RandomPolicy(), seed=1, max_moves=1)
    assert np.array_equal(frames[0][:height], replay_frames(empty, size=400)[0][:height])
    assert not np.array_equal(frames[0][:height], frames[1][:height])

    # the closing frame rings the five discs of row 5 (cells 28 to 32) in gold and nothing else
    gold = _highlight(frames[-1], height)
    assert _highlight(frames[-2], height).sum() == 0 and gold.sum() > 1000
    rows, columns = np.nonzero(gold)
    tile = 400 * 91 / 99 / 7  # PettingZoo's tile, scaled
    assert abs(np.median(rows) / tile - 4.8) < 0.5  # row 4 (from 0), its disc's centre
    assert columns.min() / tile > 0.2 and columns.max() / tile < 5.5  # columns 0 to 4


def test_pongs_captions_count_the_points_on_the_screen():
    # Pong rewards +1 to the side that scores and -1 to the one that misses: after the first
    # point (move 133 of this seed) the net returns read "1 : -1", the screen "1 : 0"
    replay = play_replay(
        game_factory("pong_v3", {}),
        RandomPolicy(),
        RandomPolicy(policy_id="random-2"),
        max_moves=140,
        record_frames=False,
    )
    assert replay.returns == {"first_0": 1.0, "second_0": -1.0}
    captions = replay_captions(replay)
    assert captions[131:134] == [
        "move 132/140: points 0 : 0",
        "move 133/140: points 1 : 0",
        "move 134/140: points 1 : 0",
    ]
    assert captions[-1] == "result: random (as first_0) leads 1 : 0 (stopped after 140 moves)"
    assert not any("-1" in caption for caption in captions)


def test_a_gif_interrupted_while_written_leaves_the_older_video_and_nothing_partial(
    monkeypatch, tmp_path
):
    import imageio.v3 as iio

    replay = play_replay(
        lambda: make_game("tictactoe_v3", render_mode="rgb_array"), RandomPolicy(), RandomPolicy()
    )
    path = write_replay(replay, tmp_path / "match.gif")
    older = path.read_bytes()
    real = iio.imwrite

    def interrupted(target, *args, **kwargs):  # Ctrl-C half way through the encoder's write
        Path(target).write_bytes(real("<bytes>", *args, **kwargs)[:100])
        raise KeyboardInterrupt

    monkeypatch.setattr(iio, "imwrite", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_replay(replay, path)
    assert path.read_bytes() == older
    assert sorted(p.name for p in tmp_path.iterdir()) == ["match.gif"]
