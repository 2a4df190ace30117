"""The checks that keep an untrusted snapshot archive inside its directory.

An archive may come from someone else, so :class:`~sp_wrappers.archive.store.SnapshotArchive`
checks what it reads before it trusts it: no symlinks where the archive keeps its files, the
index's schema and match rows when it opens, each snapshots row before its id names a file, file
access that never follows a link, and a safetensors header against the tensors the rebuilt policy
has before the weights are parsed. The errors these checks raise live here too (re-exported by
:mod:`sp_wrappers.archive.store`).
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ..core.save_util import atomic_write
from .errors import (
    ArchiveFormatError,
    ArchiveWriteError,
    CorruptSnapshotError,
    IncompatibleSnapshotError,
    SnapshotPrunedError,
    UnsafeArchiveError,
)

__all__ = [
    "ArchiveFormatError",
    "ArchiveWriteError",
    "CorruptSnapshotError",
    "IncompatibleSnapshotError",
    "SnapshotPrunedError",
    "UnsafeArchiveError",
    "check_not_linked",
    "check_schema",
    "check_matches",
    "check_row",
    "read_snapshot_file",
    "unlink_all",
    "move_all",
    "check_header",
    "expected_tensors",
    "size_limits",
    "write_atomically",
    "MAX_STEP",
    "SNAPSHOT_DIR",
]

SNAPSHOT_DIR = "snapshots"
_ID_PATTERN = re.compile(r"snapshot-[0-9]{4,9}")  # snapshot-%04d of seq, seq < 10**9
_MAX_SEQ = 10**9 - 1
#: The largest learner step a row may hold.
MAX_STEP = 2**62
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SIDECARS = ("-wal", "-shm", "-journal")
_COLUMNS = {
    "meta": ["key", "value"],
    "snapshots": [
        "seq",
        "id",
        "step",
        "wall_time",
        "tags",
        "sha256",
        "file",
        "policy_spec",
        "ratings",
        "games",
        "pruned",
    ],
    "matches": [
        "id",
        "wall_time",
        "step",
        "player_a",
        "player_b",
        "score_a",
        "seat_a",
        "seat_b",
        "source",
        "team_a",
        "team_b",
        "config",
    ],
    "payoff": ["decay", "player", "opponent", "games", "score", "weight"],
}
# safetensors dtype names of the torch dtypes a policy holds, and their sizes in bytes
_ST_DTYPES = {
    "float64": ("F64", 8),
    "float32": ("F32", 4),
    "float16": ("F16", 2),
    "bfloat16": ("BF16", 2),
    "int64": ("I64", 8),
    "int32": ("I32", 4),
    "int16": ("I16", 2),
    "int8": ("I8", 1),
    "uint8": ("U8", 1),
    "bool": ("BOOL", 1),
}
_ST_SIZES = dict(_ST_DTYPES.values())
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_INDEX_FIX = (
    "The index was edited or written by something other than sp_wrappers: restore index.sqlite "
    "from a backup, or start a new archive directory."
)


def check_not_linked(path: Path, directory: bool = False, sidecars: bool = False) -> None:
    """Refuse a symlink (or a non-regular file) where the archive keeps its own files."""
    for candidate in [path] + [Path(f"{path}{s}") for s in _SIDECARS if sidecars]:
        try:
            mode = os.lstat(candidate).st_mode
        except FileNotFoundError:
            continue
        except OSError as error:
            raise ArchiveFormatError(f"Cannot inspect {candidate}: {error}.") from error
        expected = stat.S_ISDIR(mode) if directory else stat.S_ISREG(mode)
        if stat.S_ISLNK(mode) or not expected:
            kind = "a symlink" if stat.S_ISLNK(mode) else "not a regular file or directory"
            raise UnsafeArchiveError(
                f"{candidate} is {kind}; an archive keeps its index and snapshots as plain "
                "files inside its directory, so nothing outside it is read, written or "
                "deleted. Replace the link with the real file (copy the archive with "
                "`cp -rL`), or start a new archive directory."
            )


def check_schema(conn: sqlite3.Connection, index: Path) -> None:
    extra = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')"
    ).fetchall()
    if extra:
        raise UnsafeArchiveError(
            f"{index} holds SQL {[f'{t} {n}' for t, n in extra]}, which sp_wrappers never "
            f"writes; they could rewrite rows behind its back. {_INDEX_FIX}"
        )
    for table, columns in _COLUMNS.items():
        found = [row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()]
        if found != columns:
            raise ArchiveFormatError(
                f"{index}: table {table} has the columns {found}, expected {columns}. {_INDEX_FIX}"
            )


def check_matches(conn: sqlite3.Connection, index: Path) -> None:
    """Refuse match rows of the wrong types or ranges (one scan when the archive opens)."""
    bad = conn.execute(
        "SELECT id FROM matches WHERE typeof(id) != 'integer' "
        "OR typeof(wall_time) NOT IN ('real', 'integer') "
        "OR typeof(score_a) NOT IN ('real', 'integer') OR NOT score_a BETWEEN 0 AND 1 "
        "OR typeof(player_a) != 'text' OR typeof(player_b) != 'text' "
        "OR typeof(source) != 'text' "
        "OR (step IS NOT NULL AND (typeof(step) != 'integer' OR step < 0)) "
        "OR typeof(seat_a) NOT IN ('text', 'null') OR typeof(seat_b) NOT IN ('text', 'null') "
        "OR typeof(team_a) NOT IN ('text', 'null') OR typeof(team_b) NOT IN ('text', 'null') "
        "OR typeof(config) NOT IN ('text', 'null') "
        "LIMIT 1"
    ).fetchone()
    if bad is not None:
        raise ArchiveFormatError(
            f"{index}: match row {bad[0]!r} has a value of the wrong type or out of range "
            f"(score_a must be a number in [0, 1], step a non-negative integer or null, "
            f"players and source text, seats, teams and config text or null). {_INDEX_FIX}"
        )


def json_column(text: Any, column: str, refuse: Any) -> Any:
    """A JSON column's value; ``refuse`` (raising) when it is not text or not JSON."""
    if not isinstance(text, str):
        refuse(f"has a {column} of SQL type {type(text).__name__}, not JSON text")
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError) as error:
        refuse(f"has a {column} that is not valid JSON ({str(error)[:80]})")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("a key appears twice in one object")
    return result


# Strict JSON: no NaN/Infinity; headers also refuse duplicate keys (parsers disagree on them).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)
_HEADER_DECODER = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=_unique_keys)


def unlink_all(directory: Path, names: Sequence[str]) -> None:
    """Delete files of ``directory`` by name, never following a symlinked directory."""
    if not names:
        return
    if os.unlink in os.supports_dir_fd and _O_NOFOLLOW:
        try:
            dir_fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW)
        except OSError:
            return  # gone or replaced by a link since the check: delete nothing
        try:
            for name in names:
                try:
                    os.unlink(name, dir_fd=dir_fd)
                except FileNotFoundError:
                    pass
        finally:
            os.close(dir_fd)
        return
    for name in names:
        (directory / name).unlink(missing_ok=True)


def move_all(directory: Path, names: Sequence[str], target: Path) -> None:
    """Move files of ``directory`` by name into the folder ``target`` (created), never following
    a symlinked directory on either side: what was discarded is set aside, not deleted."""
    if not names:
        return
    target.mkdir(exist_ok=True)
    check_not_linked(target, directory=True)
    if os.rename in os.supports_dir_fd and _O_NOFOLLOW:
        try:
            dir_fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW)
            target_fd = os.open(target, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW)
        except OSError:
            return  # gone or replaced by a link since the check: move nothing
        try:
            for name in names:
                try:
                    os.rename(name, name, src_dir_fd=dir_fd, dst_dir_fd=target_fd)
                except FileNotFoundError:
                    pass
        finally:
            os.close(dir_fd)
            os.close(target_fd)
        return
    for name in names:
        if (directory / name).exists():
            os.replace(directory / name, target / name)


def check_header(
    payload: bytes,
    snapshot_id: str,
    expected: Mapping[str, tuple[tuple[int, ...], str]],
    max_header: int,
) -> tuple[str | None, dict[str, str]]:
    """Check a safetensors payload against the tensors a policy expects, before parsing it.

    Returns ``(problem, aliases)``: ``problem`` is ``None`` when the header is well formed, its
    tensors tile the data exactly, and names, shapes and dtypes (through the aliases) are the
    expected ones.
    """
    if len(payload) < 8:
        return f"it is {len(payload)} bytes long, shorter than a safetensors header", {}
    size = int.from_bytes(payload[:8], "little")
    if not 2 <= size <= min(max_header, len(payload) - 8):
        return f"its header claims {size} bytes (the file has {len(payload)})", {}
    try:
        header = _HEADER_DECODER.decode(payload[8 : 8 + size].decode("utf-8"))
    except (ValueError, RecursionError) as error:
        return f"its header is not JSON ({str(error)[:80]})", {}
    if not isinstance(header, dict):
        return "its header is not a JSON object", {}
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        return "its __metadata__ is not an object of strings", {}
    if metadata.get("id") != snapshot_id:
        return f"its metadata names the snapshot {str(metadata.get('id'))[:40]!r}", {}
    try:
        aliases = _DECODER.decode(metadata.get("aliases", "{}"))
    except (ValueError, RecursionError):
        return "its aliases metadata is not JSON", {}
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        return "its aliases metadata is not an object of tensor names", {}
    names = set(header) | set(aliases)
    if set(header) & set(aliases) or not set(aliases.values()) <= set(header):
        return "its aliases name tensors that are stored under their own name or not at all", {}
    if names != set(expected):
        missing, extra = sorted(set(expected) - names), sorted(names - set(expected))
        return f"tensors missing: {missing[:5]}, unexpected: {[e[:60] for e in extra[:5]]}", {}
    spans = []
    for name, entry in header.items():
        if not (isinstance(entry, dict) and set(entry) == {"dtype", "shape", "data_offsets"}):
            return f"the header entry of {name!r} is malformed", {}
        shape, dtype, offsets = entry["shape"], entry["dtype"], entry["data_offsets"]
        if not (isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)):
            return f"{name!r} has the shape {str(shape)[:40]}", {}
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(type(o) is int for o in offsets)
            and 0 <= offsets[0] <= offsets[1]
        ):
            return f"{name!r} has the data offsets {str(offsets)[:40]}", {}
        if dtype not in _ST_SIZES:
            return f"{name!r} has the dtype {str(dtype)[:20]!r}", {}
        if offsets[1] - offsets[0] != math.prod(shape) * _ST_SIZES[dtype]:
            return f"{name!r} has data offsets that do not fit its shape", {}
        spans.append((offsets[0], offsets[1]))
    position = 0
    for begin, end in sorted(spans):
        if begin != position:
            return "its tensors overlap or leave gaps in the data", {}
        position = end
    if position != len(payload) - 8 - size:
        return f"its tensors cover {position} bytes of {len(payload) - 8 - size}", {}
    for name, (shape, dtype) in expected.items():
        entry = header[aliases.get(name, name)]
        if tuple(entry["shape"]) != shape or entry["dtype"] != _ST_DTYPES[dtype][0]:
            return (
                f"{name!r} is {entry['dtype']} {entry['shape']} where the policy has "
                f"{_ST_DTYPES[dtype][0]} {list(shape)}"
            ), {}
    return None, aliases


def check_row(row: Sequence[Any], index: Path) -> dict[str, Any]:
    """The fields of one ``snapshots`` row (``seq, id, step, wall_time, tags, sha256, file,
    policy_spec, ratings, games, pruned``), type- and range-checked, JSON decoded.

    :raises UnsafeArchiveError: the id is not ``snapshot-%04d`` of ``seq`` or ``file`` is not
        ``snapshots/<id>.safetensors`` (so no id or path from the index reaches outside).
    :raises ArchiveFormatError: any other value has the wrong type or range.
    """
    seq, sid, step, wall_time, tags, sha, file, spec, ratings, games, pruned = row

    def refuse(problem: str, error: type[ArchiveFormatError] = ArchiveFormatError) -> NoReturn:
        raise error(f"{index}: the snapshots row {str(sid)[:80]!r} {problem}. {_INDEX_FIX}")

    if not (type(seq) is int and 0 <= seq <= _MAX_SEQ):
        refuse(f"has seq {seq!r:.40}, not an integer in [0, {_MAX_SEQ}]")
    if not (isinstance(sid, str) and _ID_PATTERN.fullmatch(sid) and sid == f"snapshot-{seq:04d}"):
        refuse(
            f"has an id that is not snapshot-{seq:04d}; ids name the weights file inside "
            f"{SNAPSHOT_DIR}/, so nothing else is accepted",
            UnsafeArchiveError,
        )
    relative = f"{SNAPSHOT_DIR}/{sid}.safetensors"
    if file != relative:
        refuse(
            f"names the file {str(file)[:120]!r} instead of {relative!r}; the archive never "
            "reads or deletes a path other than its own snapshots",
            UnsafeArchiveError,
        )
    if not (type(step) is int and 0 <= step <= MAX_STEP):
        refuse(f"has step {step!r:.40}, not an integer in [0, 2**62]")
    if not (type(wall_time) in (int, float) and math.isfinite(wall_time)):
        refuse(f"has wall_time {wall_time!r:.40}, not a finite number")
    if not (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        refuse("has a sha256 that is not 64 lowercase hex digits")
    if not (type(games) is int and 0 <= games <= MAX_STEP):
        refuse(f"has games {games!r:.40}, not a non-negative integer")
    if type(pruned) is not int or pruned not in (0, 1):
        refuse(f"has pruned {pruned!r:.40}, not 0 or 1")
    tags = json_column(tags, "tags", refuse)
    if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        refuse("has tags that are not a JSON list of strings")
    ratings = json_column(ratings, "ratings", refuse)
    if not (
        isinstance(ratings, dict)
        and all(type(v) in (int, float) and math.isfinite(v) for v in ratings.values())
    ):
        refuse("has ratings that are not a JSON object of finite numbers")
    spec = json_column(spec, "policy_spec", refuse)
    if not isinstance(spec, dict):
        refuse("has a policy_spec that is not a JSON object")
    return dict(
        id=sid,
        step=step,
        wall_time=float(wall_time),
        tags=tuple(tags),
        sha256=sha,
        ratings={k: float(v) for k, v in ratings.items()},
        games=games,
        policy_spec=spec,
        seq=seq,
        pruned=bool(pruned),
    )


def read_snapshot_file(directory: Path, name: str, limit: int) -> bytes:
    """The first ``limit + 1`` bytes of ``directory/name``, opened without following a link in
    either (a longer result means the file is longer than ``limit``).

    :raises UnsafeArchiveError: ``directory`` or the file is a symlink or not a plain file.
    :raises OSError: the file cannot be read (missing, permissions).
    """
    flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC  # NONBLOCK: a FIFO never hangs
    try:
        if os.open in os.supports_dir_fd and _O_NOFOLLOW:
            dir_fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW)
            try:
                fd = os.open(name, flags, dir_fd=dir_fd)
            finally:
                os.close(dir_fd)
        else:  # no O_NOFOLLOW / dir_fd (Windows): check, then open
            check_not_linked(directory, directory=True)
            check_not_linked(directory / name)
            fd = os.open(directory / name, flags)
    except OSError:
        check_not_linked(directory, directory=True)  # ELOOP/ENOTDIR: say which link it was
        check_not_linked(directory / name)
        raise
    with open(fd, "rb", closefd=True) as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            check_not_linked(directory / name)
        return handle.read(limit + 1)


def expected_tensors(policy: Any) -> dict[str, tuple[tuple[int, ...], str]]:
    """``{name: (shape, dtype)}`` of a policy's ``state_dict()`` (dtype as ``"float32"``)."""
    return {
        name: (tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."))
        for name, tensor in policy.state_dict().items()
    }


def size_limits(expected: Mapping[str, tuple[tuple[int, ...], str]]) -> tuple[int, int]:
    """``(file, header)``: the most bytes a snapshot of these tensors and its header can take.

    :raises KeyError: a dtype the archive does not store.
    """
    data = sum(math.prod(shape) * _ST_DTYPES[dtype][1] for shape, dtype in expected.values())
    header = 65536 + 1024 * len(expected)
    return 8 + header + data, header


def write_atomically(final: Path, temporary: Path, payload: bytes) -> None:
    """Write ``payload`` to ``final`` through ``temporary`` (:func:`~sp_wrappers.core.save_util.
    atomic_write`: created anew, never through a link, flushed, renamed, the directory flushed),
    after checking that the folder is no link: a crash leaves ``final`` complete or absent.

    :raises UnsafeArchiveError: the directory is a symlink.
    :raises OSError: the disk is full or read-only (``temporary`` is removed).
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    check_not_linked(final.parent, directory=True)
    atomic_write(final, payload, temporary)
