"""Replay videos: a :class:`~sp_wrappers.evaluation.replay.Replay` as an animated GIF or an MP4.

Encoded with imageio; the install hints name the extra to add when it is missing.

A video holds exactly ``len(replay.moves) + 2`` frames: the position before the first move (the
empty board), one per move (the game after that move, the move in a caption band below it),
then a closing frame (the final position, dimmed; in tic-tac-toe and Connect Four the winning
line drawn over it, found on the final board by :func:`~sp_wrappers.games.lines.winning_lines`)
whose caption carries the players' names and the result. The caption numbers the moves, so no two
consecutive frames are identical: a GIF encoder would merge identical frames (Pillow adds their
durations together), and Atari games repeat pictures while nothing moves.

imageio is the optional extra ``video`` (``pip install "sp-wrappers[video]"``; Pillow, which
draws the captions, comes with it and with matplotlib). MP4 also needs imageio's ffmpeg plugin
(``pip install "sp-wrappers[video-mp4]"``), imported only when an MP4 is written.

>>> from pettingzoo.classic import tictactoe_v3
>>> from sp_wrappers.core.policies import RandomPolicy
>>> from sp_wrappers.evaluation.replay import play_replay
>>> replay = play_replay(lambda: tictactoe_v3.env(render_mode="rgb_array"), RandomPolicy(),
...                      RandomPolicy(policy_id="random-2"), seed=0)
>>> frames = replay_frames(replay, size=200)
>>> len(frames) == len(replay.moves) + 2, frames[0].shape == frames[-1].shape
(True, True)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core.extras import install_hint, require
from ..core.save_util import replacing
from ..games.lines import winning_lines
from .replay import Replay

__all__ = [
    "write_replay",
    "replay_frames",
    "replay_captions",
    "VIDEO_HINT",
    "MP4_HINT",
    "VIDEO_SUFFIXES",
]

VIDEO_HINT = install_hint("video")
MP4_HINT = install_hint("video-mp4")
#: The file suffixes :func:`write_replay` writes.
VIDEO_SUFFIXES = (".gif", ".mp4")


def _pillow() -> Any:
    what = "Drawing replay frames"
    return tuple(
        require(f"PIL.{name}", "video", what) for name in ("Image", "ImageDraw", "ImageFont")
    )


def _font(image_font: Any, size: int) -> Any:
    try:
        return image_font.load_default(size=size)
    except TypeError:  # Pillow < 10.1: one bitmap size
        return image_font.load_default()


def _fit(draw: Any, text: str, font: Any, width: int) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def _compose(frame: np.ndarray, size: int, lines: Sequence[str], closing: bool) -> np.ndarray:
    """``frame`` scaled so its longer side is ``size``, above a caption band of two lines (the
    closing frame's last in :data:`_HIGHLIGHT`); width and height are multiples of 16 (what MP4
    encoders want)."""
    image_mod, draw_mod, font_mod = _pillow()
    image = image_mod.fromarray(frame)
    scale = size / max(image.size)
    width, height = max(1, round(image.width * scale)), max(1, round(image.height * scale))
    upscaling = scale >= 1
    image = image.resize((width, height), image_mod.NEAREST if upscaling else image_mod.LANCZOS)
    font_size = max(11, min(20, size // 28))
    band = 2 * font_size + 18
    canvas_w = -(-max(width, 400) // 16) * 16  # room for the caption under a narrow picture
    canvas_h = -(-(height + band) // 16) * 16
    canvas = image_mod.new("RGB", (canvas_w, canvas_h), (24, 24, 28))
    canvas.paste(image, ((canvas_w - width) // 2, 0))
    draw = draw_mod.Draw(canvas)
    font = _font(font_mod, font_size)
    y = height + 6
    for k, line in enumerate(lines):
        colour = _HIGHLIGHT if closing and k == len(lines) - 1 else (235, 235, 235)
        draw.text((8, y), _fit(draw, line, font, canvas_w - 16), font=font, fill=colour)
        y += font_size + 4
    return np.asarray(canvas)


def replay_frames(replay: Replay, size: int = 400) -> list[np.ndarray]:
    """The frames a video of ``replay`` shows: the start position (``replay.start_frame``, the
    empty board), one per move (the game after that move, with the move in the caption), then
    the closing frame with the players' names and the result (the final position dimmed, with
    tic-tac-toe's or Connect Four's winning line drawn over it); ``len(replay.moves) + 2`` frames
    of one size (``+ 1`` for a replay recorded without its start frame).

    :param replay: a replay recorded with frames.
    :param size: the longer side of the game's picture, in pixels.
    """
    base = replay.frames[-1] if replay.frames else replay.start_frame
    if base is None or len(replay.frames) != len(replay.moves):
        raise ValueError(
            "This replay has no frames (its game was not built with render_mode='rgb_array'); "
            "play it again with a game that renders rgb_array frames, or print replay.text()."
        )
    captions = replay_captions(replay)
    pictures = ([] if replay.start_frame is None else [replay.start_frame]) + list(replay.frames)
    pictures.append(_closing_picture(replay, base))
    return [
        _compose(picture, size, [replay.title, caption], closing=k == len(captions) - 1)
        for k, (picture, caption) in enumerate(zip(pictures, captions, strict=True))
    ]


#: The closing frame's colour: its result line and the winning line drawn over its picture.
_HIGHLIGHT = (255, 214, 64)


def _closing_picture(replay: Replay, picture: np.ndarray) -> np.ndarray:
    """``picture`` (the final position) dimmed, with the winning line of a won tic-tac-toe or
    Connect Four game drawn over it: the line found on ``replay.final_board``, drawn where
    PettingZoo's renderer puts those cells."""
    image_mod, draw_mod, _ = _pillow()
    image = image_mod.fromarray(picture)
    image = image_mod.blend(image, image_mod.new("RGB", image.size, (0, 0, 0)), 0.45)
    lines = winning_lines(replay.game, replay.final_board) if replay.finished else []
    if lines:
        centre, radius = _CELL_GEOMETRY[replay.game](image.width, image.height)
        draw = draw_mod.Draw(image)
        width = max(3, round(radius / 4))
        for line in lines:
            for cell in line if replay.game == "connect_four_v3" else ():
                x, y = centre(cell)
                draw.ellipse(
                    [x - radius, y - radius, x + radius, y + radius],
                    outline=_HIGHLIGHT,
                    width=width,
                )
            draw.line([centre(line[0]), centre(line[-1])], fill=_HIGHLIGHT, width=width)
    return np.asarray(image)


def _tictactoe_cells(width: int, height: int) -> tuple[Any, float]:
    """Where PettingZoo's tic-tac-toe renderer draws cell ``i`` (column ``i // 3``, row
    ``i % 3``): its centre, and half a mark's size."""
    side = height
    tile = int(side / 4)

    def centre(i: int) -> tuple[float, float]:
        column, row = divmod(i, 3)
        return (
            side / 3.1 * column + side / 17 + tile / 2,
            side / 3.145 * row + side / 19 + tile / 2,
        )

    return centre, tile / 2


def _connect_four_cells(width: int, height: int) -> tuple[Any, float]:
    """Where PettingZoo's Connect Four renderer draws cell ``i`` (row ``i // 7`` from the top,
    column ``i % 7``): the centre of its disc, and a little more than the disc's radius."""
    tile = width * (91 / 99) / 7
    chip = int(tile * 9 / 13)
    offset = tile * 6 / 13 + chip / 2

    def centre(i: int) -> tuple[float, float]:
        row, column = divmod(i, 7)
        return (column * tile + offset, row * tile + offset)

    return centre, chip / 2 + tile / 16


_CELL_GEOMETRY = {"tictactoe_v3": _tictactoe_cells, "connect_four_v3": _connect_four_cells}


def replay_captions(replay: Replay) -> list[str]:
    """The second caption line of each frame of :func:`replay_frames` (the first is the title):
    the start (when the replay has its start frame), each move, then the result. In an Atari
    game whose rewards go down as well as up (Pong: +1 to the side that scores, -1 to the one
    that misses) every caption counts the points the screen shows, the result's too, not the
    net returns.

    >>> from sp_wrappers.evaluation.replay import Move
    >>> replay = Replay("pong_v3", "a", "b", {"first_0": "a", "second_0": "b"}, ("first_0",),
    ...                 turn_based=False, returns={"first_0": 0.0, "second_0": 0.0})
    >>> replay.moves = [Move(1, {}, "score 1 : -1", {"first_0": 1.0, "second_0": -1.0}),
    ...                 Move(2, {}, "score 0 : 0", {"first_0": 0.0, "second_0": 0.0})]
    >>> replay_captions(replay)
    ['move 1/2: points 1 : 0', 'move 2/2: points 1 : 1', 'result: draw 1 : 1']
    """
    n = len(replay.moves)
    texts = [move.text for move in replay.moves]
    points = replay.points()
    if points is not None:  # Atari: the points the screen shows, not the net returns
        texts = [f"points {' : '.join(f'{p:g}' for p in row.values())}" for row in points]
    start = [] if replay.start_frame is None else [f"move 0/{n}: the start position"]
    moves = [f"move {move.ply}/{n}: {text}" for move, text in zip(replay.moves, texts, strict=True)]
    return [*start, *moves, f"result: {replay.result}"]


def _import_imageio() -> Any:
    what = "Writing a replay as a GIF or MP4"
    return require("imageio.v3", "video", what), require("imageio.v2", "video", what)


def write_replay(
    replay: Replay,
    path: str | os.PathLike[str],
    size: int = 400,
    move_seconds: float | None = None,
    closing_seconds: float = 3.0,
) -> Path:
    """Write ``replay`` as an animated GIF or an MP4, chosen by the suffix of ``path``.

    The video shows :func:`replay_frames`: one frame per move and the closing frame.

    :param replay: a replay recorded with frames (:func:`play_replay`).
    :param path: ``*.gif`` or ``*.mp4``.
    :param size: the longer side of the game's picture, in pixels.
    :param move_seconds: how long each move shows (default: 0.8 s in turn-based games, 0.04 s in
        simultaneous ones such as Atari).
    :param closing_seconds: how long the closing frame shows.
    :return: the path written.
    :raises ImportError: imageio (or for MP4 its ffmpeg plugin) is missing; the message names the
        extra to install.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise ValueError(f"Cannot tell the video format of {path}; name it *.gif or *.mp4.")
    iio, imageio_v2 = _import_imageio()
    if suffix == ".mp4":
        require("imageio_ffmpeg", "video-mp4", "Writing an MP4", instead="or write a .gif")
    frames = replay_frames(replay, size)
    step = move_seconds if move_seconds is not None else (0.8 if replay.turn_based else 0.04)
    seconds = [step] * (len(frames) - 1) + [closing_seconds]
    path.parent.mkdir(parents=True, exist_ok=True)
    # written beside its final name and renamed when whole: an interrupted write (Ctrl-C) leaves
    # no partial video, and an older video of that name stays until the new one is complete
    partial = path.with_name(f".{path.stem}.{os.getpid()}.partial{suffix}")
    with replacing(path, partial) as written:
        _write_video(iio, imageio_v2, written, suffix, frames, seconds, step)
    return path


def _write_video(
    iio: Any,
    imageio_v2: Any,
    path: Path,
    suffix: str,
    frames: list[np.ndarray],
    seconds: list[float],
    step: float,
) -> None:
    if suffix == ".gif":
        durations = [max(20, int(round(1000 * s))) for s in seconds]  # ms; browsers slow < 20 ms
        iio.imwrite(path, np.stack(frames), extension=".gif", duration=durations, loop=0)
        return
    fps = max(1.0, min(30.0, 1.0 / step))
    writer = imageio_v2.get_writer(
        path,
        format="FFMPEG",
        mode="I",
        fps=fps,
        codec="libx264",
        pixelformat="yuv420p",
        macro_block_size=16,
    )
    try:
        for frame, shown in zip(frames, seconds, strict=True):
            for _ in range(max(1, int(round(shown * fps)))):
                writer.append_data(frame)
    finally:
        writer.close()
