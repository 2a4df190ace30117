"""The archive layer: snapshots of policies on disk, and their match history.

A :class:`SnapshotArchive` is one directory: an SQLite index in WAL mode (snapshot rows, the
match history, stored ratings) and one safetensors file per snapshot, written safely by any number
of processes and read back as untrusted input. Policies are rebuilt from a JSON spec, never
unpickled. The formats are versioned in ``docs/formats.md``.

It may import ``sp_wrappers.core`` only.
"""

from __future__ import annotations

from .errors import (
    ArchiveError,
    ArchiveFormatError,
    ArchiveWriteError,
    CorruptSnapshotError,
    IncompatibleSnapshotError,
    PolicySpecError,
    SnapshotPrunedError,
    UnsafeArchiveError,
)
from .index import FORMAT_VERSION
from .records import MatchRecord, SnapshotInfo
from .store import SnapshotArchive, as_archive, config_key

__all__ = [
    "SnapshotArchive",
    "as_archive",
    "config_key",
    "SnapshotInfo",
    "MatchRecord",
    "FORMAT_VERSION",
    "ArchiveError",
    "ArchiveFormatError",
    "ArchiveWriteError",
    "CorruptSnapshotError",
    "IncompatibleSnapshotError",
    "PolicySpecError",
    "SnapshotPrunedError",
    "UnsafeArchiveError",
]
