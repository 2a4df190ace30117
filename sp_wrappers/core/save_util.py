"""Every file sp_wrappers writes, written atomically: the one place that renames into place.

A reader (another process, a resumed run, a person's editor) finds the old file or the new one,
never a part, and a run killed mid-write leaves the old file intact. :func:`replacing` is the
mechanism: it hands out a temporary file beside the target (hidden, named for this process, so
two writers never share one; created anew, never through a link), flushes it to disk, renames it
into place and flushes the folder; on an error it removes the temporary and the target is
untouched. :func:`atomic_write` writes bytes or text through it, :func:`save_model` an SB3
model's ``.zip``, and :func:`sp_wrappers.core.jsonio.write_json` JSON files (the model of SB3's
``common/save_util.py``: one module for saving).

>>> import tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "note.txt"
>>> atomic_write(path, "hello\\n")
>>> path.read_text(), sorted(p.name for p in path.parent.iterdir())
('hello\\n', ['note.txt'])
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["replacing", "atomic_write", "save_model", "temporary_path"]

_NEW_FILE = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def temporary_path(path: Path) -> Path:
    """The temporary file :func:`replacing` writes ``path`` through: ``.NAME.PID.tmp`` beside it.

    >>> temporary_path(Path("runs/ttt/model.zip")).name == f".model.zip.{os.getpid()}.tmp"
    True
    """
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _fsync(path: Path, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # a folder that cannot be opened (Windows): the rename is what counts
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], temporary: Path | None = None) -> Iterator[Path]:
    """Write ``path`` atomically: the body writes the yielded temporary file, which then replaces
    ``path`` (flushed to disk first); on an error the temporary is removed and ``path`` is as it
    was.

    :param path: the file to write (its folder is created).
    :param temporary: the temporary file (default: :func:`temporary_path`); a stale one, left by
        a crash, is removed first (a link is removed, never followed).
    """
    path = Path(path)
    temporary = temporary_path(path) if temporary is None else temporary
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary.unlink(missing_ok=True)
    try:
        yield temporary
        _fsync(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync(path.parent, directory=True)


def atomic_write(
    path: str | os.PathLike[str], data: bytes | str, temporary: Path | None = None
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (see :func:`replacing`).

    :param path: the file to write.
    :param data: its whole content.
    :param temporary: the temporary file, as :func:`replacing` takes it.
    :raises OSError: the disk is full or read-only; ``path`` is untouched.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, temporary) as written:
        with open(os.open(written, _NEW_FILE, 0o644), "wb") as handle:
            handle.write(payload)


def save_model(model: Any, path: str | os.PathLike[str]) -> None:
    """``model.save(path)`` (a Stable-Baselines3 model's ``.zip``), atomically.

    :param model: anything with SB3's ``save(path)``.
    :param path: the ``.zip`` file to write.
    """
    with replacing(path) as written:
        model.save(written)
