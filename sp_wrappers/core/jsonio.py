"""Small JSON files written safely.

A JSON file is written atomically (a temporary file, then a rename, so a reader never sees half a
file); numpy scalars are written as numbers and non-finite floats as ``null``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["write_json", "json_default"]


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` to ``path`` as indented JSON, atomically."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=json_default) + "\n")
    os.replace(tmp, path)


def json_default(value: Any) -> Any:
    """``json.dumps``' ``default``: numpy scalars as Python numbers, NaN and infinities as null."""
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
