"""The warning of the module paths that moved in 0.2.

The module paths of 0.1 that moved into layers in 0.2 (``sp_wrappers.env``,
``sp_wrappers.vec_env``, ...) are small modules that re-export their new home's public names and
call :func:`warn_moved` as they are imported; they go away in 0.3 (``CHANGELOG.md``).

>>> import warnings
>>> from sp_wrappers.core.deprecation import warn_moved
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn_moved("sp_wrappers.env", "sp_wrappers.envs.selfplay_env")
>>> caught[0].category.__name__, "sp_wrappers.envs.selfplay_env" in str(caught[0].message)
('DeprecationWarning', True)
"""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["warn_moved"]


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

