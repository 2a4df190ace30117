"""Names a package loads on first use: the one lazy-loading mechanism of sp_wrappers.

``import sp_wrappers`` passes through its layers to register the Gymnasium ids, so it must stay
light: no torch, no Stable-Baselines3, no PettingZoo. A package therefore declares every public
name in ``__all__`` but imports only the light ones; :func:`lazy_exports` makes the package's
module ``__getattr__`` and ``__dir__`` that import the others the first time they are used, and
keep them on the package. Where the names come from is one of two tables:

- ``homes``, ``{name: module}``: the few heavy names of a layer (``DrawReward`` is an SB3 VecEnv
  wrapper, so ``sp_wrappers.envs`` names it ``{"DrawReward": ".shaping"}``), or ``modules``,
  ``{module: names}``, for a layer whose names nearly all load on first use (``runs``);
- ``faces``, layers whose ``__all__`` the package re-exports (the top package's public names are
  its layers' ``__all__``, looked up in order, so a name never imports a later layer).

>>> import sys
>>> from sp_wrappers.core.lazy import lazy_exports
>>> getattr_, dir_ = lazy_exports("sp_wrappers.envs", {"DrawReward": ".shaping"})
>>> getattr_("DrawReward").__module__
'sp_wrappers.envs.shaping'
>>> "DrawReward" in dir_()
True
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    homes: Mapping[str, str] | None = None,
    *,
    modules: Mapping[str, Sequence[str]] | None = None,
    faces: Sequence[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, loading its names on first use.

    :param package: the package's dotted name (``__name__`` in its ``__init__.py``).
    :param homes: ``{name: module}``, each module relative to ``package`` (``".networks"``).
    :param modules: ``{module: names}``, the same table by module.
    :param faces: subpackages (relative names, ``"envs.vector"``) whose ``__all__`` names the
        package also serves, looked up in this order; with faces, ``package.__all__`` is theirs.
    """
    homes = dict(homes or {})
    homes.update({name: module for module, names in (modules or {}).items() for name in names})

    def face(name: str) -> Any:
        return importlib.import_module(f".{name}", package)

    def public_names() -> list[str]:
        names = set(getattr(sys.modules[package], "__all__", ()) if not faces else ())
        for name in faces:
            names.update(getattr(face(name), "__all__", ()))
        return sorted(names | ({"__version__"} if faces else set()))

    def load(name: str) -> Any:
        if name in homes:
            return getattr(importlib.import_module(homes[name], package), name)
        if name == "__all__" and faces:
            return public_names()
        for each in faces:  # a name that two faces declare is one object (a test checks it)
            module = face(each)
            if name in getattr(module, "__all__", ()):
                return getattr(module, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __getattr__(name: str) -> Any:
        value = load(name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(homes) | set(public_names()))

    return __getattr__, __dir__
