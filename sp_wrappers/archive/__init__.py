"""The archive layer: snapshots of policies on disk, and their match history.

A :class:`SnapshotArchive` keeps each snapshot's weights in a file, its metadata and the games
played against it in an SQLite index, and checks everything it reads back; policies are rebuilt
from their specs without pickle. The formats are versioned in ``docs/formats.md``.

It may import ``sp_wrappers.core`` only.
"""

from __future__ import annotations

from ..core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".store": ["SnapshotArchive", "as_archive", "config_key"],
        ".records": ["SnapshotInfo", "MatchRecord"],
        ".index": ["FORMAT_VERSION"],
        ".errors": [
            "ArchiveError",
            "ArchiveFormatError",
            "ArchiveWriteError",
            "CorruptSnapshotError",
            "IncompatibleSnapshotError",
            "PolicySpecError",
            "SnapshotPrunedError",
            "UnsafeArchiveError",
        ],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
