"""What the archive stores to rebuild an SB3 policy without unpickling anything.

A policy spec is plain JSON: the policy class and the classes in its constructor arguments as
``"module:QualName"`` strings, the observation and action spaces as JSON, and the remaining
constructor arguments as JSON values. A spec read from an archive is untrusted input, so
:func:`build_policy` checks it before it constructs anything:

- classes are imported only from trusted module prefixes (SB3, sb3-contrib, torch, sp_wrappers
  and any the caller adds), only under the name they are defined with, and only in four typed
  slots: the policy class (a subclass of SB3's ``BasePolicy``), ``features_extractor_class``
  (``BaseFeaturesExtractor``), ``activation_fn`` (``torch.nn.Module``) and ``optimizer_class``
  (``torch.optim.Optimizer``). A class anywhere else is refused;
- keyword arguments must be parameters of the constructor they are passed to (the policy's, the
  features extractor's, the optimizer's);
- spaces, layer widths and nesting are bounded, and the policy is constructed under an allocation
  budget, so an absurd spec fails with :class:`PolicySpecError` instead of exhausting memory.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect
import json
import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core.policy_families import constructor_keywords
from .errors import ArchiveError, PolicySpecError
from .spaces import (
    MAX_DEPTH,
    MAX_INT,
    SPEC_FIX,
    brief,
    checked_int,
    is_int,
    space_from_json,
    space_to_json,
    spaces_match,
)

__all__ = [
    "policy_spec",
    "build_policy",
    "spec_classes",
    "space_to_json",
    "space_from_json",
    "spaces_match",
    "TRUSTED_MODULES",
    "MAX_PARAMETERS",
    "ArchiveError",
    "PolicySpecError",
    "MAX_LAYER_WIDTH",
    "PATH_PLACEHOLDER",
]

TRUSTED_MODULES = ("stable_baselines3.", "sb3_contrib.", "torch.", "sp_wrappers.")
#: The most parameters (weights and buffers) a rebuilt policy may have unless the caller allows
#: more: 50 million float32 values are 200 MB, far above any policy these games need.
MAX_PARAMETERS = 50_000_000
#: The widest hidden layer ``net_arch`` may ask for.
MAX_LAYER_WIDTH = 1 << 16
_MAX_ITEMS = 10_000  # entries of one JSON list or object in kwargs
_SKIPPED_PARAMS = ("observation_space", "action_space", "lr_schedule")
_SPEC_KEYS = {"policy_class", "observation_space", "action_space", "kwargs"}
# slot -> (module, class) that the named class must subclass
_CLASS_SLOTS = {
    "features_extractor_class": ("stable_baselines3.common.torch_layers", "BaseFeaturesExtractor"),
    "activation_fn": ("torch.nn", "Module"),
    "optimizer_class": ("torch.optim", "Optimizer"),
}
# kwargs slot -> (the class slot whose constructor takes them, its arguments SB3 passes itself)
_KWARGS_SLOTS = {
    "features_extractor_kwargs": ("features_extractor_class", ("observation_space",)),
    "optimizer_kwargs": ("optimizer_class", ("params", "lr")),
}
_ARS_LINEAR = "sb3_contrib.ars.policies:ARSLinearPolicy"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Stands for the archive's path in :class:`PolicySpecError` messages; the archive puts its own.
PATH_PLACEHOLDER = "<archive path>"
# "module:QualName" of classes trusted for the build in progress (see build_policy's
# trusted_classes): a context variable, so concurrent builds in threads do not share them
_TRUSTED_CLASSES: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "trusted_classes", default=frozenset()
)


# -- classes ---------------------------------------------------------------------------------------
def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _encode(value: Any, where: str) -> Any:
    if isinstance(value, type):
        if where not in _CLASS_SLOTS:
            raise PolicySpecError(
                f"The policy argument {where} holds the class {_class_name(value)}; a snapshot "
                f"may name classes only in {sorted(_CLASS_SLOTS)} (and the policy class), so "
                "loading an archive never constructs anything else. Pass that argument as "
                "numbers or strings."
            )
        return {"__class__": _class_name(value)}
    if isinstance(value, dict):
        return {str(k): _encode(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise PolicySpecError(
        f"The policy argument {where}={value!r} cannot be stored as JSON. Pass classes, numbers, "
        "strings, lists or dicts in policy_kwargs so snapshots can be rebuilt without pickle."
    )


def _import_class(name: Any, trusted: tuple[str, ...], where: str, base: type | None) -> type:
    """Import ``"module:QualName"`` from a trusted module and check it subclasses ``base``."""
    if not isinstance(name, str) or name.count(":") != 1:
        raise PolicySpecError(f'{where} must be a "module:QualName" string, got {brief(name)}.')
    module_name, qualname = name.split(":")
    parts = module_name.split(".") + qualname.split(".")
    if not all(_IDENTIFIER.fullmatch(p) and not p.startswith("__") for p in parts):
        raise PolicySpecError(f"{where} names {brief(name)}, which is not an importable class.")
    known = name in _TRUSTED_CLASSES.get()
    if not known and not any(
        module_name.startswith(prefix) or module_name + "." == prefix for prefix in trusted
    ):
        prefix = module_name.split(".")[0] + "."
        raise PolicySpecError(
            f"{where} names the class {name!r}, whose module is not trusted (trusted prefixes: "
            f"{list(trusted)}); nothing was imported. If you wrote that class and trust this "
            f"archive, open it with SnapshotArchive({PATH_PLACEHOLDER}, trusted_modules="
            f"[{prefix!r}]) (the prefixes you pass are added to the defaults; on the command "
            f"line, pass --trust-module {prefix[:-1]}: a run's own config.json already trusts "
            "the modules of the classes it names)."
        )
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as error:
        raise PolicySpecError(
            f"Cannot import {name!r} named by {where} ({error}); install the package that "
            "defines it (e.g. sb3-contrib for MaskablePPO)."
        ) from error
    # Only the name a class is defined under: no reaching untrusted classes through a trusted
    # module's imports (``trusted.module:os.SomeClass``).
    if not isinstance(obj, type) or _class_name(obj) != name:
        raise PolicySpecError(
            f"{where} names {name!r}, which is not a class defined under that name. {SPEC_FIX}"
        )
    if base is not None and not issubclass(obj, base):
        raise PolicySpecError(
            f"{where} names {name!r}, which is not a subclass of {_class_name(base)}; nothing "
            f"was constructed. {SPEC_FIX}"
        )
    return obj


def _base(slot: str) -> type:
    module_name, class_name = _CLASS_SLOTS[slot]
    return getattr(importlib.import_module(module_name), class_name)


@functools.lru_cache(maxsize=256)
def _accepted(cls: type, skipped: tuple[str, ...]) -> frozenset[str] | None:
    """The keyword arguments ``cls(...)`` takes (``None``: any, it takes ``**kwargs``)."""
    names = constructor_keywords(cls)
    return None if names is None else frozenset(names - set(skipped))


@functools.lru_cache(maxsize=256)
def _default(cls: type, name: str) -> Any:
    """The default of constructor parameter ``name`` in the first class of the MRO naming it."""
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        try:
            parameter = inspect.signature(init).parameters.get(name) if init else None
        except (TypeError, ValueError):
            return None
        if parameter is not None:
            return parameter.default
    return None


def _check_keys(
    value: dict[str, Any], accepted: frozenset[str] | None, where: str, owner: str
) -> None:
    if accepted is None:
        return
    unknown = sorted(set(value) - accepted)
    if unknown:
        raise PolicySpecError(
            f"{where} passes {unknown} to {owner}, which takes no such arguments (it takes "
            f"{sorted(accepted)}); nothing was constructed. {SPEC_FIX}"
        )


def _plain(value: Any, where: str, depth: int = 0) -> Any:
    """A JSON value with no classes in it, bounded in depth, size and magnitude."""
    if depth > MAX_DEPTH:
        raise PolicySpecError(f"{where} nests deeper than {MAX_DEPTH} levels. {SPEC_FIX}")
    if isinstance(value, dict):
        if "__class__" in value:
            raise PolicySpecError(
                f"{where} names a class ({brief(value['__class__'])}); classes are allowed only "
                f"in {sorted(_CLASS_SLOTS)} and the policy class. Nothing was imported. {SPEC_FIX}"
            )
        if len(value) > _MAX_ITEMS:
            raise PolicySpecError(f"{where} has more than {_MAX_ITEMS} entries. {SPEC_FIX}")
        return {k: _plain(v, f"{where}.{k}", depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > _MAX_ITEMS:
            raise PolicySpecError(f"{where} has more than {_MAX_ITEMS} entries. {SPEC_FIX}")
        return [_plain(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if is_int(value):
        return checked_int(value, where, -MAX_INT, MAX_INT)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PolicySpecError(f"{where} is {value}; arguments must be finite. {SPEC_FIX}")
        return value
    if value is None or isinstance(value, (bool, str)):
        return value
    raise PolicySpecError(f"{where} holds {brief(value)}, which is not a JSON value. {SPEC_FIX}")


def _net_arch(value: Any, where: str) -> Any:
    def layers(sizes: Any, at: str) -> list[int]:
        if not isinstance(sizes, list) or len(sizes) > 64:
            raise PolicySpecError(f"{at} must be a list of at most 64 layer widths. {SPEC_FIX}")
        return [checked_int(s, f"{at}[{i}]", 1, MAX_LAYER_WIDTH) for i, s in enumerate(sizes)]

    if value is None:
        return None
    if isinstance(value, dict):
        if not set(value) <= {"pi", "vf", "qf"}:
            raise PolicySpecError(f"{where} may only have the keys pi, vf and qf. {SPEC_FIX}")
        return {k: layers(v, f"{where}.{k}") for k, v in value.items()}
    return layers(value, where)


def _decode_kwargs(cls: type, kwargs: Any, trusted: tuple[str, ...]) -> dict[str, Any]:
    """The policy's constructor arguments, each checked against the slot it fills."""
    if not isinstance(kwargs, dict):
        raise PolicySpecError(f"The policy spec's kwargs must be an object. {SPEC_FIX}")
    if _class_name(cls) == _ARS_LINEAR and kwargs.get("net_arch") == []:
        # written before 0.3: SB3's parameters of ARS's linear policy name two arguments its
        # constructor does not take; they carry nothing (no hidden layers), so drop them
        kwargs = {k: v for k, v in kwargs.items() if k not in ("net_arch", "activation_fn")}
    _check_keys(kwargs, _accepted(cls, _SKIPPED_PARAMS), "kwargs", _class_name(cls))
    clashing = sorted(set(kwargs) & set(_SKIPPED_PARAMS))
    if clashing:
        raise PolicySpecError(f"kwargs must not set {clashing}; the spec stores them. {SPEC_FIX}")
    decoded: dict[str, Any] = {}
    for key, value in kwargs.items():
        where = f"kwargs.{key}"
        if key in _CLASS_SLOTS:
            if value is None:
                decoded[key] = None
                continue
            if not isinstance(value, dict) or set(value) != {"__class__"}:
                raise PolicySpecError(f'{where} must be {{"__class__": "module:Name"}}. {SPEC_FIX}')
            decoded[key] = _import_class(value["__class__"], trusted, where, _base(key))
        elif key == "net_arch":
            decoded[key] = _net_arch(value, where)
        else:
            decoded[key] = _plain(value, where)
    for key, (slot, skipped) in _KWARGS_SLOTS.items():
        value, owner = decoded.get(key), decoded.get(slot)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise PolicySpecError(f"kwargs.{key} must be an object. {SPEC_FIX}")
        if owner is None:  # the policy's default class takes them: find it in the signatures
            owner = _default(cls, slot)
        if isinstance(owner, type):
            _check_keys(value, _accepted(owner, skipped), f"kwargs.{key}", _class_name(owner))
    return decoded


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
    from ..core.policy_families import constructor_parameters

    params = constructor_parameters(policy)
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


# -- rebuilding ------------------------------------------------------------------------------------
def _constant_schedule(_: float) -> float:
    return 0.0


class _AllocationBudgetExceeded(Exception):
    pass


def _allocation_guard(budget: int) -> Any:
    """A torch dispatch mode that refuses allocations past ``budget`` elements in total, checked
    before each allocation happens (so a layer of 10**12 weights is never allocated)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class AllocationGuard(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.used = 0

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            schema = func._schema
            if not any(r.alias_info for r in schema.returns):  # views allocate nothing
                for i, argument in enumerate(schema.arguments):
                    if argument.name == "size":
                        size = args[i] if i < len(args) else kwargs.get("size")
                        if size is not None:
                            self.used += math.prod(int(s) for s in size)
                            if self.used > budget:
                                raise _AllocationBudgetExceeded(self.used)
                        break
            return func(*args, **kwargs)

    return AllocationGuard()


def _n_values(policy: Any) -> int:
    return sum(t.numel() for t in policy.state_dict().values())


# Specs already built under the allocation guard -> the values their policy holds. Every snapshot
# of a run shares one spec, so the guard (which slows construction) runs once per spec.
_GUARDED: dict[str, int] = {}


def spec_classes(spec: dict[str, Any]) -> set[str]:
    """Every class (``"module:QualName"``) a policy spec names: its policy class and the classes
    in its constructor arguments, what :func:`build_policy`'s ``trusted_classes`` takes.

    >>> import gymnasium as gym
    >>> from stable_baselines3 import PPO
    >>> policy = PPO("MlpPolicy", gym.make("CartPole-v1"), policy_kwargs={"net_arch": [8]}).policy
    >>> sorted(spec_classes(policy_spec(policy)))  # doctest: +NORMALIZE_WHITESPACE
    ['stable_baselines3.common.policies:ActorCriticPolicy',
     'stable_baselines3.common.torch_layers:FlattenExtractor',
     'torch.nn.modules.activation:Tanh', 'torch.optim.adam:Adam']
    """
    names = {spec["policy_class"]}

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            if set(value) == {"__class__"} and isinstance(value["__class__"], str):
                names.add(value["__class__"])
            for item in value.values():
                visit(item)
        elif isinstance(value, list):
            for item in value:
                visit(item)

    visit(spec.get("kwargs", {}))
    return names


def build_policy(
    spec: Any,
    trusted_modules: Iterable[str] = TRUSTED_MODULES,
    device: str = "cpu",
    max_parameters: int = MAX_PARAMETERS,
    trusted_classes: Iterable[str] = (),
) -> Any:
    """A fresh SB3 policy (random weights) built from a spec written by :func:`policy_spec`.

    The spec is checked before anything is constructed (see the module docstring), and the
    policy is built under an allocation budget.

    :param trusted_modules: module prefixes whose classes the spec may name.
    :param max_parameters: refuse policies with more weights and buffers than this (values).
    :param trusted_classes: classes (``"module:QualName"``) trusted whatever their module: the
        archive passes those a learner in this process saved into it.
    :raises PolicySpecError: naming the part of the spec that was refused and why.

    >>> import gymnasium as gym
    >>> from stable_baselines3 import PPO
    >>> policy = PPO("MlpPolicy", gym.make("CartPole-v1"), policy_kwargs={"net_arch": [8]}).policy
    >>> rebuilt = build_policy(policy_spec(policy))
    >>> type(rebuilt).__name__, rebuilt.action_space
    ('ActorCriticPolicy', Discrete(2))
    """
    token = _TRUSTED_CLASSES.set(frozenset(trusted_classes))
    try:
        return _build_policy(spec, tuple(trusted_modules), device, max_parameters)
    finally:
        _TRUSTED_CLASSES.reset(token)


def _build_policy(spec: Any, trusted: tuple[str, ...], device: str, max_parameters: int) -> Any:
    from stable_baselines3.common.policies import BasePolicy

    if not isinstance(spec, dict) or not _SPEC_KEYS - {"kwargs"} <= set(spec):
        raise PolicySpecError(
            f"A policy spec must be an object with {sorted(_SPEC_KEYS)}. {SPEC_FIX}"
        )
    extra = sorted(set(spec) - _SPEC_KEYS)
    if extra:
        raise PolicySpecError(f"The policy spec has unknown keys {extra}. {SPEC_FIX}")
    cls = _import_class(spec["policy_class"], trusted, "policy_class", BasePolicy)
    observation_space = space_from_json(spec["observation_space"], "observation_space")
    action_space = space_from_json(spec["action_space"], "action_space")
    kwargs = _decode_kwargs(cls, spec.get("kwargs", {}), trusted)
    key = json.dumps(spec, sort_keys=True)
    known = _GUARDED.get(key)
    # Temporaries of weight initialisation (orthogonal init) count too: allow a few times more.
    guard = _allocation_guard(4 * max_parameters + 1_000_000)
    try:
        with guard if known is None or known > max_parameters else contextlib.nullcontext():
            if "lr_schedule" in (_accepted(cls, ()) or {"lr_schedule"}):
                kwargs["lr_schedule"] = _constant_schedule  # not taken by ARS's policies
            policy = cls(observation_space=observation_space, action_space=action_space, **kwargs)
    except _AllocationBudgetExceeded as error:
        raise PolicySpecError(
            f"The policy spec ({spec['policy_class']}) asks for more than {max_parameters} "
            f"parameters (its tensors would hold at least {error.args[0]} values; construction "
            "stopped before allocating them). If you trust this archive, raise max_parameters."
        ) from None
    except Exception as error:  # the trusted class refused its (untrusted) arguments
        raise PolicySpecError(
            f"The policy spec ({spec['policy_class']}) could not be built from its arguments "
            f"({type(error).__name__}: {error}). {SPEC_FIX}"
        ) from error
    n_values = _n_values(policy) if known is None else known
    if known is None:
        if len(_GUARDED) >= 256:
            _GUARDED.pop(next(iter(_GUARDED)))
        _GUARDED[key] = n_values
    if n_values > max_parameters:
        raise PolicySpecError(
            f"The policy spec ({spec['policy_class']}) builds a policy of {n_values} values, "
            f"more than max_parameters={max_parameters}. If you trust this archive, raise "
            "max_parameters."
        )
    return policy.to(device)
