"""Reading a snapshot's weights when other processes may prune or rewrite the archive.

A snapshot's file is read in full only after its size, hash and safetensors header were checked
against its row and policy. A read that fails is checked again before the snapshot is called bad:
the row is read again (a snapshot pruned meanwhile by another process raises
:class:`~sp_wrappers.archive.checks.SnapshotPrunedError`; the sampler draws another), else the
file is read once more a moment later. A snapshot whose file failed both reads is marked bad (a
warning names the file) and left out of the archive's listing until its file changes (restored).
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from pathlib import Path
from typing import Any, NoReturn

from .checks import (
    SNAPSHOT_DIR,
    CorruptSnapshotError,
    SnapshotPrunedError,
    check_header,
    expected_tensors,
    read_snapshot_file,
    size_limits,
)
from .index import ArchiveIndex
from .policy_spec import PolicySpecError
from .records import SnapshotInfo

__all__ = ["SnapshotReader", "pruned_error"]

_READ_ATTEMPTS = 2  # a snapshot file is declared bad only when it fails this many reads
_REREAD_DELAY = 0.05  # seconds between them


def pruned_error(archive_path: Path, snapshot_id: str) -> SnapshotPrunedError:
    """The error for a snapshot of the archive at ``archive_path`` that was pruned.

    >>> error = pruned_error(Path("run/archive"), "snapshot-0003")
    >>> isinstance(error, KeyError), str(error)[:50]
    (True, "Snapshot 'snapshot-0003' in run/archive was pruned")
    """
    return SnapshotPrunedError(
        f"Snapshot {snapshot_id!r} in {archive_path} was pruned (its weights are deleted; its "
        "ratings and matches remain): pick one of archive.snapshots()."
    )


class SnapshotReader:
    """Reads and checks snapshots' weights files, and remembers the ones that failed.

    :class:`~sp_wrappers.archive.store.SnapshotArchive` holds one and leaves out of its listing
    the snapshots it marked bad.

    :param index: the archive's index (its directory holds ``snapshots/``; its rows are read
        again when a read fails).

    >>> import tempfile
    >>> reader = SnapshotReader(ArchiveIndex(tempfile.mkdtemp()))
    >>> reader.is_bad("snapshot-0000"), reader.bad_ids()
    (False, set())
    """

    def __init__(self, index: ArchiveIndex) -> None:
        self.index = index
        # snapshots whose file failed its checks twice -> the file's (inode, size, mtime) then
        self._bad: dict[str, tuple[int, int, int] | None] = {}

    def _file_signature(self, snapshot_id: str) -> tuple[int, int, int] | None:
        try:
            found = os.lstat(self.index.path / SNAPSHOT_DIR / f"{snapshot_id}.safetensors")
        except OSError:
            return None
        return found.st_ino, found.st_size, found.st_mtime_ns

    def _forget_replaced_files(self) -> None:
        """Give snapshots marked bad another chance once their file changed (restored)."""
        for sid, signature in list(self._bad.items()):
            if self._file_signature(sid) != signature:
                del self._bad[sid]

    def bad_ids(self) -> set[str]:
        """The snapshots marked bad whose files have not changed since."""
        if self._bad:
            self._forget_replaced_files()
        return set(self._bad)

    def is_bad(self, snapshot_id: str) -> bool:
        """Whether the snapshot is marked bad and its file has not changed since."""
        return snapshot_id in self._bad and snapshot_id in self.bad_ids()

    def load_weights(self, info: SnapshotInfo, policy: Any) -> dict[str, Any]:
        """The snapshot's checked weights for ``policy`` (rebuilt from its spec).

        :raises CorruptSnapshotError: the file failed its checks on two reads a moment apart (a
            warning names it; the snapshot is marked bad).
        :raises SnapshotPrunedError: the snapshot was pruned (or its row replaced) meanwhile.
        :raises PolicySpecError: the policy holds a tensor dtype the archive does not store.
        """
        expected = expected_tensors(policy)
        try:
            limit, max_header = size_limits(expected)
        except KeyError as error:
            raise PolicySpecError(
                f"Snapshot {info.id}'s policy holds a tensor of dtype {error}, which the archive "
                "does not store."
            ) from None
        for attempt in range(_READ_ATTEMPTS):
            problem, state = self._read_weights(info, expected, limit, max_header)
            if problem is None:
                return state
            # Re-check before calling the file bad: another process may have pruned the snapshot
            # (deleting its file) since this process read the listing, or the read may have
            # failed for a moment.
            row = (
                self.index.connect()
                .execute("SELECT pruned, sha256 FROM snapshots WHERE id = ?", (info.id,))
                .fetchone()
            )
            if row is None or row[0] != 0 or row[1] != info.sha256:
                raise pruned_error(self.index.path, info.id)
            if attempt + 1 < _READ_ATTEMPTS:
                time.sleep(_REREAD_DELAY)
        self._mark_bad(info, problem)

    def _read_weights(
        self,
        info: SnapshotInfo,
        expected: dict[str, tuple[tuple[int, ...], str]],
        limit: int,
        max_header: int,
    ) -> tuple[str | None, dict[str, Any]]:
        """``(problem, weights)``: the checked weights of the snapshot's file, or what is wrong."""
        from safetensors.torch import load as load_safetensors

        try:
            directory = self.index.path / SNAPSHOT_DIR
            payload = read_snapshot_file(directory, f"{info.id}.safetensors", limit)
        except OSError as error:
            return f"cannot be read ({error})", {}
        if len(payload) > limit:
            return f"is longer than the {limit} bytes its policy's tensors can take", {}
        if hashlib.sha256(payload).hexdigest() != info.sha256:
            return "does not match its recorded sha256", {}
        problem, aliases = check_header(payload, info.id, expected, max_header)
        if problem:
            return f"does not hold the tensors its policy spec describes: {problem}", {}
        state = load_safetensors(payload)
        for alias, target in aliases.items():
            state[alias] = state[target]
        return None, state

    def _mark_bad(self, info: SnapshotInfo, problem: str) -> NoReturn:
        self._bad[info.id] = self._file_signature(info.id)
        message = (
            f"Skipping snapshot {info.id}: its file {info.file} {problem} (read twice). The "
            "archive goes on without it; restore the file (it is checked again once it changes) "
            "or delete the snapshot from the archive."
        )
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        raise CorruptSnapshotError(message)
