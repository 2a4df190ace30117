"""A policy's weights as numpy arrays, as the callbacks send the learner's latest weights.

Self-play sends the learner's weights to its opponents' samplers after every rollout (every
learner step for SAC). ``policy.state_dict()`` walks the modules with torch's hooks each time;
:func:`state_arrays` finds the tensors once per module and reads them where they are.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import numpy as np

__all__ = ["state_arrays"]

# module -> its _Tensor entries, or None where the module's state_dict must be asked each time
_TENSORS: weakref.WeakKeyDictionary[Any, list[_Tensor] | None] = weakref.WeakKeyDictionary()
_UNSEEN: Any = object()


class _Tensor(NamedTuple):
    """One tensor of a module's ``state_dict`` and where the module holds it."""

    key: str
    tensor: Any
    #: the module's ``_parameters`` or ``_buffers``, and the tensor's name there
    owner: dict[str, Any]
    name: str
    #: the numpy view of a CPU tensor (``None``: converted at each call) and its data pointer
    view: np.ndarray | None
    pointer: int


def state_arrays(module: Any) -> dict[str, np.ndarray]:
    """``{key: tensor.detach().cpu().numpy()}`` over ``module.state_dict()``: the same keys, in
    the same order, and arrays holding the same numbers (views of weights on the CPU, which
    follow in-place updates such as optimiser steps, and copies of others).

    The walk that finds the tensors, and the numpy views of those on the CPU, are made once per
    module, and again once a module holds another tensor under one of those names or a tensor
    was given other memory (a parameter replaced, weights assigned, the module moved); a module
    tree where some module saves in a way of its own (state-dict hooks, an overridden
    ``_save_to_state_dict`` or ``state_dict``, extra state) is asked for its ``state_dict`` each
    time, as before.

    :param module: a torch module, e.g. an SB3 model's ``policy``.

    >>> import torch
    >>> layer = torch.nn.Linear(2, 1)
    >>> arrays = state_arrays(layer)
    >>> list(arrays), arrays["weight"].shape
    (['weight', 'bias'], (1, 2))
    >>> with torch.no_grad():
    ...     _ = layer.bias.fill_(3.0)
    >>> state_arrays(layer)["bias"].tolist()
    [3.0]
    """
    try:
        tensors = _TENSORS.get(module, _UNSEEN)
    except TypeError:  # not weak-referenceable
        return _asked(module)
    if tensors is None:
        return _asked(module)
    if tensors is _UNSEEN or not all(
        entry.owner.get(entry.name) is entry.tensor
        and (entry.view is None or entry.tensor.data_ptr() == entry.pointer)
        for entry in tensors
    ):
        tensors = _TENSORS[module] = _find_tensors(module)
        if tensors is None:
            return _asked(module)
    # a new view object each call (as before), so a caller that reshapes one changes no other
    return {
        entry.key: entry.tensor.detach().cpu().numpy() if entry.view is None else entry.view.view()
        for entry in tensors
    }


def _asked(module: Any) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}


def _find_tensors(module: Any) -> list[_Tensor] | None:
    """The tensors of ``module.state_dict(keep_vars=True)`` with where each module holds them,
    in its order; ``None`` where some module saves in a way of its own."""
    import torch

    base = torch.nn.Module
    owners: dict[str, tuple[dict[str, Any], str]] = {}
    stack = [("", module)]
    while stack:
        prefix, current = stack.pop()
        kind = type(current)
        if (
            kind.state_dict is not base.state_dict
            or kind._save_to_state_dict is not base._save_to_state_dict
            or kind.get_extra_state is not base.get_extra_state
            or current._state_dict_hooks
            or current._state_dict_pre_hooks
        ):
            return None
        for name, param in current._parameters.items():
            if param is not None:
                owners.setdefault(prefix + name, (current._parameters, name))
        for name, buffer in current._buffers.items():
            if buffer is not None and name not in current._non_persistent_buffers_set:
                owners.setdefault(prefix + name, (current._buffers, name))
        for name, child in current._modules.items():
            if child is not None:
                stack.append((f"{prefix}{name}.", child))
    state = module.state_dict(keep_vars=True)
    if state.keys() != owners.keys():
        return None
    found = []
    for key, tensor in state.items():
        owner, name = owners[key]
        if owner.get(name) is not tensor:
            return None
        view = None
        if tensor.is_cpu and tensor.layout is torch.strided:
            try:
                view = tensor.detach().numpy()
            except (TypeError, RuntimeError):  # a dtype numpy lacks: converted (and refused)
                view = None
        found.append(_Tensor(key, tensor, owner, name, view, tensor.data_ptr()))
    return found
