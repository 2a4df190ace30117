"""The root of every error a user can fix.

Every error that sp_wrappers raises for something the user can change (a bad argument, an unknown
game, an unreadable archive, a run that cannot resume) derives from :class:`SpWrappersError`, and
its message names the problem and the fix. The command line catches this one class and prints it
on one line with exit status 2; anything else is a bug and keeps its traceback. Each layer keeps
its own errors in its ``errors`` module; they keep the built-in bases they had (``ValueError``,
``KeyError``, ``OSError``), so existing ``except`` clauses still work.

>>> from sp_wrappers.core.errors import SpWrappersError
>>> class GameNotFound(SpWrappersError, KeyError):
...     pass
>>> isinstance(GameNotFound("x"), KeyError)
True
"""

from __future__ import annotations

__all__ = ["SpWrappersError", "IllegalActionError", "DependencyNotInstalled"]


class SpWrappersError(Exception):
    """Base class of every user error sp_wrappers raises; the message names the fix."""


class IllegalActionError(SpWrappersError, ValueError):
    """The learner chose an action its seat's action mask forbids (with ``illegal_action="raise"``).

    >>> import numpy as np
    >>> from sp_wrappers.core.seats import check_learner_action
    >>> try:
    ...     check_learner_action(3, np.array([True, False, True, False]), "player_1")
    ... except IllegalActionError as error:
    ...     print(str(error).split(". ")[0])
    The learner in seat 'player_1' chose illegal action 3; legal actions were [0, 2]
    """


class DependencyNotInstalled(SpWrappersError, ImportError):
    """An optional dependency that is not installed: the message names what needs it and the
    ``pip install`` that adds it. :func:`~sp_wrappers.core.extras.require` raises it; the command
    line prints it on one line, as every user error.

    >>> from sp_wrappers.core.extras import require
    >>> try:
    ...     require("no_such_module_here", "plots", "Plotting")
    ... except DependencyNotInstalled as error:
    ...     print(error)
    Plotting needs no_such_module_here, which is not installed: pip install "sp-wrappers[plots]".
    """
