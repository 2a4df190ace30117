"""Small JSON files written safely.

A JSON file is written atomically (:mod:`sp_wrappers.core.save_util`: a reader never sees half
a file); numpy scalars are written as numbers and non-finite floats as ``null``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .save_util import atomic_write

__all__ = ["write_json", "json_default", "read_versioned"]


def write_json(path: Path, data: Any, indent: int | None = 2, **dumps: Any) -> None:
    """Write ``data`` to ``path`` as JSON, atomically (:func:`~sp_wrappers.core.save_util.
    atomic_write`).

    :param path: the file.
    :param data: a JSON-able value (numpy scalars allowed, see :func:`json_default`).
    :param indent: ``json.dumps``' indent (``None``: one line).
    :param dumps: other ``json.dumps`` arguments (``sort_keys=True``).
    """
    dumps.setdefault("default", json_default)
    atomic_write(path, json.dumps(data, indent=indent, **dumps) + "\n")


def json_default(value: Any) -> Any:
    """``json.dumps``' ``default``: numpy scalars as Python numbers, NaN and infinities as null."""
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def read_versioned(
    path: Path,
    version: int,
    what: str,
    fix: str = "move it away to start a new one",
    error: type[Exception] = ValueError,
) -> dict[str, Any]:
    """The JSON object in ``path``, a file of a versioned format, checked to have
    ``format_version`` ``version``; when it cannot be read or has another version, ``error``
    names the file and ``fix``.

    :param path: the file.
    :param version: the ``format_version`` this sp_wrappers reads.
    :param what: the file's name in messages (``"strength history"``).
    :param fix: what to do about a file that cannot be read.
    :param error: the exception raised.
    """
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as cause:
        raise error(f"Cannot read the {what} {path} ({cause}); {fix}.") from None
    found = data.get("format_version") if isinstance(data, dict) else None
    if found != version:
        raise error(
            f"{path} has format_version {found!r}; this sp_wrappers reads {version}; {fix}."
        )
    return data  # type: ignore[no-any-return]
