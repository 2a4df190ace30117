"""Reading a snapshot's weights when other processes may prune or rewrite the archive.

This module holds :class:`SnapshotReads`, the base of
:class:`~sp_wrappers.archive.store.SnapshotArchive` that reads a snapshot's weights file and
checks it against its row: a read that fails is re-checked (the row read again: a snapshot pruned
meanwhile raises ``SnapshotPrunedError``; else the file read once more) before the snapshot is
marked bad, and a bad mark is forgotten once its file changes (restored).
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from typing import Any, NoReturn

from .checks import (
    SNAPSHOT_DIR,
    CorruptSnapshotError,
    check_header,
    expected_tensors,
    read_snapshot_file,
    size_limits,
)
from .policy_spec import (
    PolicySpecError,
)
from .records import SnapshotInfo

__all__ = ["SnapshotReads"]

_READ_ATTEMPTS = 2  # a snapshot file is declared bad only when it fails this many reads
_REREAD_DELAY = 0.05  # seconds between them


class SnapshotReads:
    """The part of :class:`SnapshotArchive` described in the module docstring."""

    def _file_signature(self, snapshot_id: str) -> tuple[int, int, int] | None:
        try:
            found = os.lstat(self.path / SNAPSHOT_DIR / f"{snapshot_id}.safetensors")
        except OSError:
            return None
        return found.st_ino, found.st_size, found.st_mtime_ns

    def _forget_replaced_files(self) -> None:
        """Give snapshots marked bad another chance once their file changed (restored)."""
        for sid, signature in list(self._bad.items()):
            if self._file_signature(sid) != signature:
                del self._bad[sid]

    def _load_weights(self, info: SnapshotInfo, policy: Any) -> dict[str, Any]:
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
                self._connect()
                .execute("SELECT pruned, sha256 FROM snapshots WHERE id = ?", (info.id,))
                .fetchone()
            )
            if row is None or row[0] != 0 or row[1] != info.sha256:
                self._listing = None
                raise self._pruned(info.id)
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
            payload = read_snapshot_file(self.path / SNAPSHOT_DIR, f"{info.id}.safetensors", limit)
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
