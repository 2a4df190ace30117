"""Writing one snapshot's weights file: shared tensors stored once, an atomic write, no litter.

A snapshot's weights are the safetensors bytes of its policy's ``state_dict`` and their sha256:
tensors that share storage are stored once, the others listed as aliases in the header. The file
is written to a temporary file, flushed and renamed into place; the temporaries of processes
killed mid-save are deleted on the next save.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .checks import ArchiveWriteError, write_atomically

__all__ = ["snapshot_payload", "write_snapshot_file", "FILE_FORMAT_VERSION"]

#: The weights file's own format (unchanged when the index format moved to 2).
FILE_FORMAT_VERSION = 1


def _remove_dead_temporaries(directory: Path) -> None:
    """Delete ``.snapshot-*.PID.tmp`` files whose writing process is gone (killed mid-save);
    nothing lists them, so without this they would stay on disk forever."""
    for path in directory.glob(".snapshot-*.tmp"):
        try:
            os.kill(int(path.name.rsplit(".", 2)[1]), 0)
        except ProcessLookupError:
            path.unlink(missing_ok=True)
        except (ValueError, OSError):  # not our name pattern, or the process lives
            pass


def _dedupe_state(state: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Tensors to store (shared storage kept once) and the aliases that point at them."""
    import torch

    tensors: dict[str, torch.Tensor] = {}
    aliases: dict[str, str] = {}
    seen: dict[tuple[int, tuple[int, ...], tuple[int, ...]], str] = {}
    for name, value in state.items():
        tensor = torch.as_tensor(np.asarray(value)) if not torch.is_tensor(value) else value
        tensor = tensor.detach().cpu()
        key = (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()))
        if tensor.numel() and key in seen:
            aliases[name] = seen[key]
            continue
        seen[key] = name
        tensors[name] = tensor.contiguous().clone()
    return tensors, aliases


def snapshot_payload(state: Mapping[str, Any], snapshot_id: str) -> tuple[bytes, str]:
    """The safetensors bytes of ``state`` (header: format version, id, aliases) and their sha256."""
    from safetensors.torch import save as save_safetensors

    tensors, aliases = _dedupe_state(state)
    metadata = {
        "format_version": str(FILE_FORMAT_VERSION),
        "id": snapshot_id,
        "aliases": json.dumps(aliases),
    }
    payload = save_safetensors(tensors, metadata=metadata)
    return payload, hashlib.sha256(payload).hexdigest()


def write_snapshot_file(final: Path, payload: bytes) -> None:
    """Write ``payload`` to ``final`` atomically.

    :raises ArchiveWriteError: the disk is full or read-only; nothing written before is touched.
    """
    temporary = final.with_name(f".{final.stem}.{os.getpid()}.tmp")
    try:
        write_atomically(final, temporary, payload)
        _remove_dead_temporaries(final.parent)  # after the link check write_atomically made
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise ArchiveWriteError(
            f"Could not write snapshot {final}: {error}. Free disk space or fix permissions; "
            "the snapshots and matches saved before are intact."
        ) from error
