"""The archive layer: snapshots of policies on disk, and their match history.

A :class:`SnapshotArchive` keeps each snapshot's weights in a file, its metadata and the games
played against it in an SQLite index, and checks everything it reads back; policies are rebuilt
from their specs without pickle. The formats are versioned in ``docs/formats.md``.

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
