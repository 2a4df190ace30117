"""The archive's errors: what goes wrong reading or writing snapshots, and what to do about it.

Every archive error derives from :class:`ArchiveError` (itself a
:class:`~sp_wrappers.core.errors.SpWrappersError`), and its message names the file or row and the
fix. They keep the built-in bases they always had (``ValueError``, ``KeyError``, ``OSError``), so
``except KeyError`` around a snapshot load still catches a pruned snapshot.

>>> from sp_wrappers.archive.errors import SnapshotPrunedError
>>> isinstance(SnapshotPrunedError("snapshot 3 was pruned"), KeyError)
True
"""

from __future__ import annotations

from ..core.errors import SpWrappersError

__all__ = [
    "ArchiveError",
    "PolicySpecError",
    "ArchiveFormatError",
    "ArchiveWriteError",
    "CorruptSnapshotError",
    "SnapshotPrunedError",
    "IncompatibleSnapshotError",
    "UnsafeArchiveError",
    "FIX",
]


#: What to do about a policy spec that sp_wrappers did not write (ends each such error).
FIX = (
    "sp_wrappers never writes such a spec: the archive was edited or comes from elsewhere. Load "
    "snapshots only from archives you trust, or save this policy again."
)


class ArchiveError(SpWrappersError):
    """Base class of the archive's errors (policy specs, formats, files, unsafe contents)."""


class PolicySpecError(ArchiveError, ValueError):
    """A policy spec cannot be written or rebuilt, or names something it must not (a class outside
    its slot or outside the trusted modules, an unknown argument, an absurd size)."""


class ArchiveFormatError(ArchiveError):
    """The directory is not an archive, or was written by an incompatible version."""


class ArchiveWriteError(ArchiveError, OSError):
    """A save or record failed (read-only or full disk); nothing saved before is lost."""


class CorruptSnapshotError(ArchiveError):
    """A snapshot's file is missing, does not match its recorded hash, or does not hold the
    tensors its policy spec describes (names, shapes, dtypes)."""


class SnapshotPrunedError(ArchiveError, KeyError):
    """A snapshot was pruned (its weights deleted; its row, ratings and matches remain), perhaps
    by another process between the listing and the load: pick another one of the listing."""

    def __str__(self) -> str:  # the message itself, not KeyError's repr of it
        return str(self.args[0]) if self.args else ""


class IncompatibleSnapshotError(ArchiveError, ValueError):
    """A snapshot's policy does not fit the spaces of the env or model it is used with."""


class UnsafeArchiveError(ArchiveFormatError):
    """The archive points outside itself: a snapshot id or ``file`` that escapes ``snapshots/``, a
    symlinked index, snapshot directory or snapshot file, or SQL triggers and views in the index.
    Nothing outside the archive is read or deleted."""
