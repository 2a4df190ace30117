"""Import a ``module:object`` path the way ``python -m`` finds modules: from the current folder too.

``sp-wrappers`` is a console script, so Python puts the script's own folder first on ``sys.path``,
not the current directory: ``--env-generator examples.env_generator:komi_curriculum`` would fail
from the folder that holds ``examples/`` unless ``PYTHONPATH=.`` were set on every command.
:func:`import_module` tries the normal import first and, when the module itself (or its package)
is missing, tries again with the current directory on ``sys.path``, as ``python -m`` would have
put it. Every place that reads a ``module:object`` path a person typed calls
:func:`import_object`.

>>> from sp_wrappers.core.imports import import_object
>>> import_object("os.path:join").__name__
'join'
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any

__all__ = ["import_module", "import_object", "split_import_path"]


def import_module(name: str) -> ModuleType:
    """Import ``name``; when it (or a package above it) is missing, retry from the current folder.

    The current directory is added at the end of ``sys.path`` (and stays there, so worker
    processes and later imports find the same module); installed modules keep precedence.

    :raises ImportError: the module cannot be imported from ``sys.path`` nor from the current
        directory.
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        here = os.getcwd()
        on_path = {os.path.abspath(p or os.curdir) for p in sys.path}
        if not (missing == name or name.startswith(missing + ".")) or here in on_path:
            raise
        sys.path.append(here)
        importlib.invalidate_caches()
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as retry:
            if retry.name == missing:
                sys.path.remove(here)
            raise


def split_import_path(path: str) -> tuple[str, str]:
    """``"pkg.mod:obj.attr"`` -> ``("pkg.mod", "obj.attr")``.

    :raises ValueError: the path is not ``module:object``.

    >>> split_import_path("examples.env_generator:komi_curriculum")
    ('examples.env_generator', 'komi_curriculum')
    """
    module_name, sep, qualname = path.partition(":")
    if not sep or not module_name or not qualname:
        raise ValueError(f"expected an import path module:object, got {path!r}")
    return module_name, qualname


def import_object(path: str) -> Any:
    """The object an import path ``module:object`` (``object`` may be dotted) names.

    :raises ValueError: ``path`` is not ``module:object``.
    :raises ImportError: the module cannot be imported (see :func:`import_module`).
    :raises AttributeError: the module has no such object.
    """
    module_name, qualname = split_import_path(path)
    target: Any = import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target
