"""Gymnasium spaces as JSON, read back with bounds.

A space read back from an untrusted archive is type-, range- and size-checked value by value, so
it cannot allocate without bound; the policy specs share the same checked readers of JSON numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from .errors import FIX as SPEC_FIX
from .errors import PolicySpecError

__all__ = [
    "MAX_SPACE_SIZE",
    "MAX_DEPTH",
    "MAX_INT",
    "SPEC_FIX",
    "space_to_json",
    "space_from_json",
    "spaces_match",
    "is_int",
    "checked_int",
    "brief",
]


_DTYPES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
}


# -- spaces ----------------------------------------------------------------------------------------
def _array_to_json(values: np.ndarray) -> Any:
    flat = np.asarray(values).ravel()
    if flat.size and np.all(flat == flat[0]):
        return {"fill": _scalar(flat[0])}
    return {"values": [_scalar(v) for v in flat]}


def _array_from_json(data: Any, shape: tuple[int, ...], dtype: np.dtype, where: str) -> np.ndarray:
    size = math.prod(shape)
    if isinstance(data, dict) and set(data) == {"fill"}:
        fill = _number(data["fill"], f"{where}.fill")
        return np.full(shape, float(fill) if dtype.kind == "f" else fill, dtype)
    if isinstance(data, dict) and set(data) == {"values"} and isinstance(data["values"], list):
        if len(data["values"]) != size:
            raise PolicySpecError(
                f"{where} lists {len(data['values'])} values for a shape of {size}. {SPEC_FIX}"
            )
        values = [_number(v, where) for v in data["values"]]
        return np.asarray(values, dtype=dtype).reshape(shape)
    raise PolicySpecError(f'{where} must be {{"fill": x}} or {{"values": [...]}}. {SPEC_FIX}')


def space_to_json(space: spaces.Space) -> dict[str, Any]:
    """A JSON description of a Gymnasium space (Box, Discrete, MultiDiscrete, MultiBinary,
    Dict, Tuple).

    >>> space_to_json(spaces.Discrete(9))
    {'type': 'Discrete', 'n': 9, 'start': 0}
    >>> space_from_json(space_to_json(spaces.Box(0, 1, (3, 3, 2), np.int8)))
    Box(0, 1, (3, 3, 2), int8)
    """
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": str(space.dtype),
            "low": _array_to_json(space.low),
            "high": _array_to_json(space.high),
        }
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {
            "type": "MultiDiscrete",
            "nvec": np.asarray(space.nvec).tolist(),
            "start": np.asarray(space.start).tolist(),
        }
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": np.asarray(space.n).tolist()}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {k: space_to_json(s) for k, s in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [space_to_json(s) for s in space.spaces]}
    raise PolicySpecError(
        f"Cannot store a policy for the space {space}: supported spaces are Box, Discrete, "
        "MultiDiscrete, MultiBinary, Dict and Tuple. Wrap the game so its spaces are one of these."
    )


def _int_array(data: Any, where: str, low: int, high: int) -> np.ndarray:
    """A (possibly nested) JSON list of bounded integers, as an int64 array."""
    array = np.asarray(data, dtype=object)
    if array.ndim == 0 or array.size == 0 or array.ndim > 8:
        raise PolicySpecError(
            f"{where} must be a non-empty rectangular list of integers. {SPEC_FIX}"
        )
    if array.size > MAX_SPACE_SIZE:
        raise PolicySpecError(f"{where} has {array.size} entries (at most {MAX_SPACE_SIZE}).")
    for value in array.flat:
        checked_int(value, where, low, high)
    return array.astype(np.int64)


def space_from_json(data: Any, where: str = "space") -> spaces.Space:
    """Rebuild a space written by :func:`space_to_json`, refusing malformed or absurd ones.

    :param where: how error messages name this space (e.g. ``"observation_space"``).
    :raises PolicySpecError: the JSON is not a supported space, or describes more than
        ``MAX_SPACE_SIZE`` elements, or has negative or non-integer sizes.
    """
    return _space_from_json(data, where, 0)


def _space_from_json(data: Any, where: str, depth: int) -> spaces.Space:
    if depth > MAX_DEPTH:
        raise PolicySpecError(f"{where} nests spaces deeper than {MAX_DEPTH} levels. {SPEC_FIX}")
    kind = data.get("type") if isinstance(data, dict) else None
    try:
        if kind == "Box":
            shape_data = data.get("shape")
            if not isinstance(shape_data, list) or len(shape_data) > 8:
                raise PolicySpecError(
                    f"{where}.shape must be a list of at most 8 sizes. {SPEC_FIX}"
                )
            shape = tuple(checked_int(s, f"{where}.shape", 0, MAX_SPACE_SIZE) for s in shape_data)
            if math.prod(shape) > MAX_SPACE_SIZE:
                raise PolicySpecError(
                    f"{where} is a Box of shape {shape}: more than {MAX_SPACE_SIZE} elements. "
                    f"{SPEC_FIX}"
                )
            if data.get("dtype") not in _DTYPES:
                raise PolicySpecError(
                    f"{where}.dtype {brief(data.get('dtype'))} is not one of {sorted(_DTYPES)}."
                )
            dtype = np.dtype(data["dtype"])
            low = _array_from_json(data.get("low"), shape, dtype, f"{where}.low")
            high = _array_from_json(data.get("high"), shape, dtype, f"{where}.high")
            return spaces.Box(low=low, high=high, shape=shape, dtype=dtype)
        if kind == "Discrete":
            n = checked_int(data.get("n"), f"{where}.n", 1, MAX_SPACE_SIZE)
            start = checked_int(data.get("start", 0), f"{where}.start", -MAX_INT, MAX_INT)
            return spaces.Discrete(n, start=start)
        if kind == "MultiDiscrete":
            nvec = _int_array(data.get("nvec"), f"{where}.nvec", 1, MAX_SPACE_SIZE)
            start = data.get("start")
            if start is not None:
                start = _int_array(start, f"{where}.start", -MAX_INT, MAX_INT)
                if start.shape != nvec.shape:
                    raise PolicySpecError(f"{where}.start must have the shape of nvec. {SPEC_FIX}")
            return spaces.MultiDiscrete(nvec, start=start)
        if kind == "MultiBinary":
            n = data.get("n")
            if is_int(n):
                return spaces.MultiBinary(checked_int(n, f"{where}.n", 1, MAX_SPACE_SIZE))
            sizes = _int_array(n, f"{where}.n", 1, MAX_SPACE_SIZE)
            if sizes.ndim != 1 or math.prod(sizes.tolist()) > MAX_SPACE_SIZE:
                raise PolicySpecError(f"{where}.n describes more than {MAX_SPACE_SIZE} elements.")
            return spaces.MultiBinary(sizes.tolist())
        if kind == "Dict":
            children = data.get("spaces")
            if not isinstance(children, dict) or not 0 < len(children) <= 1024:
                raise PolicySpecError(f"{where}.spaces must be an object of 1 to 1024 spaces.")
            return spaces.Dict(
                {
                    str(k): _space_from_json(v, f"{where}.{k}", depth + 1)
                    for k, v in children.items()
                }
            )
        if kind == "Tuple":
            children = data.get("spaces")
            if not isinstance(children, list) or not 0 < len(children) <= 1024:
                raise PolicySpecError(f"{where}.spaces must be a list of 1 to 1024 spaces.")
            return spaces.Tuple(
                [_space_from_json(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(children)]
            )
    except (ValueError, TypeError, OverflowError, AssertionError) as error:
        if isinstance(error, PolicySpecError):
            raise
        raise PolicySpecError(
            f"{where} is not a valid {kind} space ({error}). {SPEC_FIX}"
        ) from error
    raise PolicySpecError(
        f"Unknown space type {brief(kind)} at {where} in a policy spec. {SPEC_FIX}"
    )


def spaces_match(a: spaces.Space, b: spaces.Space) -> bool:
    """Whether two spaces describe the same inputs (compared through their JSON form).

    >>> spaces_match(spaces.Discrete(3), spaces.Discrete(3))
    True
    >>> spaces_match(spaces.Discrete(3), spaces.Discrete(4))
    False
    """
    return space_to_json(a) == space_to_json(b)


#: The most elements one space (a Box, the entries of a MultiDiscrete) may describe, and the
#: largest ``Discrete.n``.
MAX_SPACE_SIZE = 1 << 24


#: The deepest nesting of JSON values and of Dict/Tuple spaces in a policy spec.
MAX_DEPTH = 16


#: The largest magnitude of an integer argument in a policy spec.
MAX_INT = 1 << 31


def is_int(value: Any) -> bool:
    """Whether a JSON value is an integer (``True`` and ``False`` are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def checked_int(value: Any, where: str, low: int, high: int) -> int:
    """``value`` as an ``int`` in ``[low, high]``, or :class:`PolicySpecError` naming ``where``."""
    if not is_int(value) or not low <= value <= high:
        raise PolicySpecError(
            f"{where} must be an integer between {low} and {high}, got {brief(value)}. {SPEC_FIX}"
        )
    return int(value)


def brief(value: Any) -> str:
    """``repr(value)``, cut to 80 characters (untrusted values in messages)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _scalar(value: Any) -> Any:
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and not np.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return value


def _number(value: Any, where: str) -> float | int:
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, (bool, int, float)):
        return value
    raise PolicySpecError(f"{where} must be a number, got {brief(value)}. {SPEC_FIX}")
