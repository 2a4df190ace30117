"""A package's public face, with names that load on first use.

Each subpackage of sp_wrappers declares its public names once, grouped by the module that defines
them, with :class:`LazyExports`; the package's ``__all__``, ``__getattr__`` and ``__dir__`` come
from it. Importing a package then costs nothing more than its ``__init__`` (``import sp_wrappers``
never imports torch), and a name's module is imported the first time the name is used, as with
``from sp_wrappers.envs import SelfPlayEnv``. The top-level package exports the union of its
subpackages' ``__all__``. The module paths of 0.1 that moved in 0.2 are small modules that
re-export their new home's public names and call :func:`warn_moved`.

>>> from sp_wrappers.core.exports import LazyExports
>>> face = LazyExports("sp_wrappers.core", {".teams": ["TeamLayout", "team_outcome"]})
>>> face.names, face.home("team_outcome")
(['TeamLayout', 'team_outcome'], 'sp_wrappers.core.teams')
>>> face.load("TeamLayout").__name__
'TeamLayout'
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LazyExports", "warn_moved"]


class LazyExports:
    """The public names of ``package``, each loaded from its module on first use.

    :param package: the package's dotted name (``__name__`` in its ``__init__``).
    :param homes: ``{module: [names]}``: the module that defines each public name, relative to
        the package (``".selfplay_env"``, ``"..ratings.elo"``) or absolute.

    A face assigns ``__all__ = face.names``, ``__getattr__ = face.load`` and
    ``__dir__ = face.dir``; a loaded name is kept in the package's namespace, so it is looked up
    once.
    """

    def __init__(self, package: str, homes: Mapping[str, Sequence[str]]) -> None:
        self.package = package
        self._homes: dict[str, str] = {}
        for module, names in homes.items():
            absolute = importlib.util.resolve_name(module, package)
            for name in names:
                if name in self._homes:
                    raise ValueError(f"{package} declares {name!r} twice.")
                self._homes[name] = absolute
        self.names: list[str] = list(self._homes)
        for name, home in self._homes.items():
            if home == f"{package}.{name}":
                # A name that is also its module's name (``round_robin``): importing the module
                # binds the module to the package under that name, which no ``__getattr__``
                # would then replace, so the name is bound now, once its module is imported.
                self.load(name)

    def home(self, name: str) -> str:
        """The module that defines ``name`` (an ``AttributeError`` for a name not public here)."""
        try:
            return self._homes[name]
        except KeyError:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}") from None

    def load(self, name: str) -> Any:
        """``name``'s value, imported from its module and kept in the package's namespace."""
        value = getattr(importlib.import_module(self.home(name)), name)
        sys.modules[self.package].__dict__[name] = value
        return value

    def dir(self) -> list[str]:
        """The package's attributes, loaded or not (for ``dir()`` and completion)."""
        return sorted(set(vars(sys.modules[self.package])) | set(self.names))


def warn_moved(old: str, new: str) -> None:
    """Warn (``DeprecationWarning``) that the module path ``old`` moved to ``new`` in 0.2.

    Called by the old module's body when it is imported; the warning points at the code that
    imported it, past the import machinery.
    """
    # ``warnings`` skips the frames of importlib's bootstrap by itself; ``importlib.import_module``
    # is one more frame between the old module and its importer.
    level, frame = 3, sys._getframe(2)
    while frame is not None and "importlib" in frame.f_code.co_filename:
        if frame.f_code.co_filename == importlib.__file__:
            level += 1
        frame = frame.f_back
    warnings.warn(
        f"{old} moved to {new} in sp_wrappers 0.2 and the old path goes away in 0.3: import "
        f"from {new} (or the public names from sp_wrappers) instead.",
        DeprecationWarning,
        stacklevel=level,
    )

