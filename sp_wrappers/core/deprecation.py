"""The module paths that moved, served from one table with a warning naming their new home.

The module paths of 0.1 that moved into layers in 0.2 (``sp_wrappers.env``,
``sp_wrappers.vec_env``, ...) have no files: the top package names them in one table
``{old: new}`` and calls :func:`serve_moved_modules`, which puts first on ``sys.meta_path`` one
finder that answers for exactly those module names and nothing else (first, so that a stale file
left at an old path by an older install is never imported instead). Importing an old path
(``import sp_wrappers.vec_env``, ``from sp_wrappers.vec_env import SelfPlayVecEnv``, or the
attribute ``sp_wrappers.vec_env`` through the package's ``__getattr__``) warns once
(``DeprecationWarning``, pointing at the importing code) and gives the new module itself. The
paths go away in 0.3 (``CHANGELOG.md``). This is PettingZoo's ``deprecated_module`` with one
addition: a module-level ``__getattr__`` alone does not serve ``import package.old``.

>>> import importlib, warnings
>>> import sp_wrappers
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old = importlib.import_module("sp_wrappers.sampler")
>>> old is importlib.import_module("sp_wrappers.opponents.sampler")
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Collection, Mapping
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["warn_moved", "serve_moved_modules", "MovedModules"]


def warn_moved(old: str, new: str) -> None:
    """Warn (``DeprecationWarning``) that the module path ``old`` moved to ``new``.

    The warning points at the code that imported ``old``, past the import machinery and this
    package's lazy loading.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_moved("sp_wrappers.env", "sp_wrappers.envs.selfplay_env")
    >>> caught[0].category.__name__, "sp_wrappers.envs.selfplay_env" in str(caught[0].message)
    ('DeprecationWarning', True)
    """
    warnings.warn(
        f"{old} moved to {new} and the old path goes away in sp_wrappers 0.3: import "
        f"from {new} (or the public names from sp_wrappers) instead.",
        DeprecationWarning,
        stacklevel=_importer_level(),
    )


def _importer_level() -> int:
    """The ``stacklevel`` that makes :func:`warn_moved`'s warning name the importing code."""
    machinery = {importlib.__file__, __file__, sys.modules[__package__ + ".lazy"].__file__}
    frame, level = sys._getframe(1), 1  # warn_moved: level 1
    while frame.f_back is not None:
        frame = frame.f_back
        filename = frame.f_code.co_filename
        if "importlib" in filename and "_bootstrap" in filename:
            continue  # ``warnings`` skips the import bootstrap's frames by itself
        level += 1
        if filename not in machinery:
            break
    return level


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The finder and loader of the moved module paths of one package.

    :param package: the package's dotted name (``"sp_wrappers"``).
    :param moved: ``{old: new}``, module names relative to ``package``.
    :param quiet: the old names served without a warning (paths that installed files store,
        such as a console script's ``module:function``).
    """

    def __init__(self, package: str, moved: Mapping[str, str], quiet: Collection[str] = ()) -> None:
        self.package = package
        self.moved = dict(moved)
        self.quiet = frozenset(quiet)

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> ModuleSpec | None:
        """A spec for ``package.old`` with ``old`` in the table; ``None`` for any other name."""
        parent, _, name = fullname.rpartition(".")
        if parent != self.package or name not in self.moved:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> None:
        """The default module (replaced by the new home in :meth:`exec_module`)."""
        return None

    def exec_module(self, module: ModuleType) -> None:
        """Warn, then make the old name the new module itself (in ``sys.modules``)."""
        old = module.__name__
        name = old.rpartition(".")[2]
        new = f"{self.package}.{self.moved[name]}"
        if name not in self.quiet:
            warn_moved(old, new)
        sys.modules[old] = importlib.import_module(new)


def serve_moved_modules(
    package: str, moved: Mapping[str, str], quiet: Collection[str] = ()
) -> MovedModules:
    """Serve ``package``'s moved module paths (once per process; a second call updates it).

    :param package: the package's dotted name.
    :param moved: ``{old: new}``, module names relative to ``package``.
    :param quiet: the old names served without a warning (see :class:`MovedModules`).
    """
    for finder in sys.meta_path:
        if type(finder).__name__ == "MovedModules" and getattr(finder, "package", "") == package:
            finder.moved, finder.quiet = dict(moved), frozenset(quiet)  # type: ignore[attr-defined]
            return finder  # type: ignore[return-value]
    finder = MovedModules(package, moved, quiet)
    sys.meta_path.insert(0, finder)
    return finder
