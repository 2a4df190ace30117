"""The archive layer: snapshots of policies on disk, and their match history.

It holds :class:`SnapshotArchive` (``store``: the SQLite index in WAL mode and the snapshot
files), the policy specs that rebuild a network without pickle (``policy_spec``), the checks of
every row and file read back (``checks``), the snapshot files themselves (``files``) and the match
rows (``matches``). The formats are versioned in ``docs/formats.md``.

It may import ``sp_wrappers.core`` only.
"""

from .index import FORMAT_VERSION
from .policy_spec import ArchiveError, PolicySpecError
from .records import MatchRecord, SnapshotInfo
from .store import (
    ArchiveFormatError,
    ArchiveWriteError,
    CorruptSnapshotError,
    IncompatibleSnapshotError,
    SnapshotArchive,
    SnapshotPrunedError,
    UnsafeArchiveError,
    as_archive,
    config_key,
)

__all__ = [
    "SnapshotArchive",
    "SnapshotInfo",
    "MatchRecord",
    "as_archive",
    "config_key",
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
