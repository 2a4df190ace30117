"""Public names that a package loads on first use, for the few that import heavy libraries.

A layer's ``__init__.py`` imports its public names, so type checkers and the documentation see
them; the few whose modules import torch, Stable-Baselines3 or PettingZoo are loaded by the
package's ``__getattr__`` the first time they are used instead, because ``import sp_wrappers``
passes through those packages to register its Gymnasium ids and must stay light.

>>> from sp_wrappers.core.lazy import on_first_use
>>> getattr_ = on_first_use("sp_wrappers.core", {"TeamLayout": ".teams"})
>>> getattr_("TeamLayout").__module__
'sp_wrappers.core.teams'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["on_first_use"]


def on_first_use(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``homes`` from its
    module the first time it is asked for.

    :param package: the package's dotted name (``__name__`` in its ``__init__.py``).
    :param homes: ``{name: module}``, the module relative to ``package`` (``".networks"``).
    """

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__
