"""Small JSON files written safely.

A JSON file is written atomically (:mod:`sp_wrappers.core.save_util`: a reader never sees half
a file); numpy scalars are written as numbers and non-finite floats as ``null``. A state file a
run reads back is written and read through its :class:`~sp_wrappers.core.state_file.StateFormat`
(its version, schema and one error), which writes through here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .save_util import atomic_write

__all__ = ["write_json", "json_default"]


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
