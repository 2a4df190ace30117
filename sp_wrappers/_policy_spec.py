"""What the archive stores to rebuild an SB3 policy without unpickling anything.

This module holds :func:`policy_spec`, :func:`build_policy`, :func:`space_to_json`,
:func:`space_from_json` and :data:`TRUSTED_MODULES`.

A policy spec is plain JSON: the policy class and the classes in its constructor arguments as
``"module:QualName"`` strings, the observation and action spaces as JSON, and the remaining
constructor arguments as JSON values. :func:`build_policy` imports only classes from trusted
module prefixes (SB3, sb3-contrib, torch, and any the caller adds), so loading a snapshot never
runs code that came from the archive.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = [
    "policy_spec",
    "build_policy",
    "space_to_json",
    "space_from_json",
    "spaces_match",
    "TRUSTED_MODULES",
    "PolicySpecError",
]

TRUSTED_MODULES = ("stable_baselines3.", "sb3_contrib.", "torch.", "sp_wrappers.")
_SKIPPED_PARAMS = ("observation_space", "action_space", "lr_schedule")


class PolicySpecError(ValueError):
    """A stored policy spec cannot be written or rebuilt (names the part and the fix)."""


def _array_to_json(values: np.ndarray) -> Any:
    flat = np.asarray(values).ravel()
    if flat.size and np.all(flat == flat[0]):
        return {"fill": _scalar(flat[0])}
    return {"values": [_scalar(v) for v in flat]}


def _scalar(value: Any) -> Any:
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and not np.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return value


def _array_from_json(data: dict[str, Any], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if "fill" in data:
        return np.full(shape, float(data["fill"]) if dtype.kind == "f" else data["fill"], dtype)
    values = [float(v) if isinstance(v, str) else v for v in data["values"]]
    return np.asarray(values, dtype=dtype).reshape(shape)


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


def space_from_json(data: dict[str, Any]) -> spaces.Space:
    """Rebuild a space written by :func:`space_to_json`."""
    kind = data.get("type")
    if kind == "Box":
        dtype = np.dtype(data["dtype"])
        shape = tuple(data["shape"])
        low = _array_from_json(data["low"], shape, dtype)
        high = _array_from_json(data["high"], shape, dtype)
        return spaces.Box(low=low, high=high, shape=shape, dtype=dtype)
    if kind == "Discrete":
        return spaces.Discrete(data["n"], start=data.get("start", 0))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(data["nvec"], start=data.get("start"))
    if kind == "MultiBinary":
        return spaces.MultiBinary(data["n"])
    if kind == "Dict":
        return spaces.Dict({k: space_from_json(v) for k, v in data["spaces"].items()})
    if kind == "Tuple":
        return spaces.Tuple([space_from_json(v) for v in data["spaces"]])
    raise PolicySpecError(f"Unknown space type {kind!r} in a stored policy spec.")


def spaces_match(a: spaces.Space, b: spaces.Space) -> bool:
    """Whether two spaces describe the same inputs (compared through their JSON form).

    >>> spaces_match(spaces.Discrete(3), spaces.Discrete(3))
    True
    >>> spaces_match(spaces.Discrete(3), spaces.Discrete(4))
    False
    """
    return space_to_json(a) == space_to_json(b)


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _encode(value: Any, where: str) -> Any:
    if isinstance(value, type):
        return {"__class__": _class_name(value)}
    if isinstance(value, dict):
        return {str(k): _encode(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v, where) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise PolicySpecError(
        f"The policy argument {where}={value!r} cannot be stored as JSON. Pass classes, numbers, "
        "strings, lists or dicts in policy_kwargs so snapshots can be rebuilt without pickle."
    )


def _import_class(name: str, trusted: Iterable[str]) -> type:
    module_name, _, qualname = name.partition(":")
    if not any(module_name.startswith(prefix) or module_name + "." == prefix for prefix in trusted):
        raise PolicySpecError(
            f"The snapshot's policy names the class {name!r}, whose module is not trusted "
            f"(trusted prefixes: {list(trusted)}). If you wrote that class, pass "
            f"trusted_modules=[{module_name.split('.')[0] + '.'!r}] to SnapshotArchive."
        )
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as error:
        raise PolicySpecError(
            f"Cannot import {name!r} to rebuild a snapshot's policy ({error}); install the "
            "package that defines it (e.g. sb3-contrib for MaskablePPO)."
        ) from error
    if not isinstance(obj, type):
        raise PolicySpecError(f"{name!r} in a snapshot's policy spec is not a class.")
    return obj


def _decode(value: Any, trusted: Iterable[str]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__class__"}:
            return _import_class(value["__class__"], trusted)
        return {k: _decode(v, trusted) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, trusted) for v in value]
    return value


def policy_spec(policy: Any) -> dict[str, Any]:
    """The JSON spec that rebuilds ``policy`` (an SB3 ``BasePolicy``) with :func:`build_policy`.

    >>> import gymnasium as gym
    >>> from stable_baselines3 import PPO
    >>> spec = policy_spec(PPO("MlpPolicy", gym.make("CartPole-v1")).policy)
    >>> spec["policy_class"]
    'stable_baselines3.common.policies:ActorCriticPolicy'
    >>> spec["action_space"]
    {'type': 'Discrete', 'n': 2, 'start': 0}
    """
    params = dict(policy._get_constructor_parameters())
    if hasattr(policy, "share_features_extractor"):
        params["share_features_extractor"] = bool(policy.share_features_extractor)
    kwargs = {
        k: _encode(v, k)
        for k, v in params.items()
        if k not in _SKIPPED_PARAMS and (isinstance(v, type) or not callable(v))
    }
    return {
        "policy_class": _class_name(type(policy)),
        "observation_space": space_to_json(policy.observation_space),
        "action_space": space_to_json(policy.action_space),
        "kwargs": kwargs,
    }


def _constant_schedule(_: float) -> float:
    return 0.0


def build_policy(
    spec: dict[str, Any], trusted_modules: Iterable[str] = TRUSTED_MODULES, device: str = "cpu"
) -> Any:
    """A fresh SB3 policy (random weights) built from a spec written by :func:`policy_spec`.

    >>> import gymnasium as gym
    >>> from stable_baselines3 import PPO
    >>> policy = PPO("MlpPolicy", gym.make("CartPole-v1"), policy_kwargs={"net_arch": [8]}).policy
    >>> rebuilt = build_policy(policy_spec(policy))
    >>> type(rebuilt).__name__, rebuilt.action_space
    ('ActorCriticPolicy', Discrete(2))
    """
    trusted = tuple(trusted_modules)
    cls = _import_class(spec["policy_class"], trusted)
    kwargs = _decode(spec.get("kwargs", {}), trusted)
    policy = cls(
        observation_space=space_from_json(spec["observation_space"]),
        action_space=space_from_json(spec["action_space"]),
        lr_schedule=_constant_schedule,
        **kwargs,
    )
    return policy.to(device)
