"""The envs layer's errors: a self-play env put together in a way that cannot work.

Each derives from :class:`~sp_wrappers.core.errors.SpWrappersError` and keeps its built-in base.

>>> from sp_wrappers.core.errors import SpWrappersError
>>> from sp_wrappers.envs.errors import ObservationWrapperError
>>> issubclass(ObservationWrapperError, SpWrappersError)
True
"""

from __future__ import annotations

from ..core.errors import SpWrappersError

__all__ = ["ObservationWrapperError"]


class ObservationWrapperError(SpWrappersError, ValueError):
    """A wrapper above a self-play env changes the learner's observations but not the
    opponents' (the message names the wrapper and what to use instead)."""
