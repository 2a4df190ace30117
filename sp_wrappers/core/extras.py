"""Optional dependencies: :func:`require` imports one or raises
:class:`~sp_wrappers.core.errors.DependencyNotInstalled` naming the extra that installs it, the one
place a "pip install" hint is written (:func:`install_hint`).

>>> require("json", None).__name__
'json'
>>> install_hint("plots")
'pip install "sp-wrappers[plots]"'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import DependencyNotInstalled

__all__ = ["require", "install_hint"]


def install_hint(extra: str | None, module: str = "") -> str:
    """The command that installs ``extra`` (``None``: the top package of ``module`` itself)."""
    if extra is None:
        return f"pip install {module.split('.')[0]}"
    return f'pip install "sp-wrappers[{extra}]"'


def require(
    module: str, extra: str | None, what: str | None = None, instead: str = ""
) -> ModuleType:
    """Import ``module``, or raise :class:`DependencyNotInstalled` saying that ``what`` needs it
    and how to install it.

    :param module: the dotted module to import (``"matplotlib.figure"``).
    :param extra: the sp-wrappers extra that installs it (``None``: a package of its own name).
    :param what: what needs it, the message's subject (default: ``module``).
    :param instead: a way around it, added to the message (``'or use backend="process"'``).
    :return: the module.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        package = module.split(".")[0]
        missing = error.name
        ours = missing is None or module == missing or module.startswith(f"{missing}.")
        cause = "" if ours else f" ({error})"
        around = f" ({instead})" if instead else ""
        raise DependencyNotInstalled(
            f"{what or module} needs {package}, which is not installed{cause}: "
            f"{install_hint(extra, module)}{around}."
        ) from error
