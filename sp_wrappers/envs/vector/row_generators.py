"""``RowGenerators``: one batched random draw whose rows come from each env copy's own generator.

The vector env's opponents answer several env copies in one call; their random draws (sampled
logits, a sampled actor's Gaussian noise) must still come row by row from each copy's generator,
as if each copy's opponent had been called alone. :mod:`sp_wrappers.envs.vector.fast_path` and
:class:`~sp_wrappers.envs.vector.batching.OpponentBatches` hand these to the policies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["RowGenerators"]


class RowGenerators:
    """A stand-in for ``np.random.Generator`` whose row ``i`` of a batched draw comes from
    generator ``i``, exactly as if that env's policy had been called alone with ``n = 1``.

    Draws whose ``size`` has the batch as its first dimension (``random``, ``integers``,
    ``uniform``, ``normal``, ... as every policy here uses them) are split by row; any other draw
    comes from the first row's generator.
    """

    _SIZE_POSITION = {
        "random": 0,
        "standard_normal": 0,
        "standard_exponential": 0,
        "standard_gamma": 1,
        "exponential": 1,
        "choice": 1,
        "integers": 2,
        "uniform": 2,
        "normal": 2,
        "gumbel": 2,
        "logistic": 2,
        "beta": 2,
        "binomial": 2,
    }

    def __init__(self, generators: Sequence[np.random.Generator]) -> None:
        self._generators = list(generators)

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """The common case (every policy here draws this way), without the generic dispatch."""
        shape = (size,) if isinstance(size, int | np.integer) else size
        if out is not None or not shape or shape[0] != len(self._generators):
            return self._generators[0].random(size, dtype, out)
        rows = np.empty(shape, dtype)  # each row filled in place by its own generator
        if len(shape) == 1:
            for i, generator in enumerate(self._generators):
                rows[i] = generator.random(dtype=dtype)
        else:
            for generator, row in zip(self._generators, rows, strict=True):
                generator.random(dtype=dtype, out=row)
        return rows

    def __getattr__(self, name: str) -> Any:
        first = getattr(self._generators[0], name)
        position = self._SIZE_POSITION.get(name)
        if position is None or not callable(first):
            return first
        n = len(self._generators)

        def draw(*args: Any, **kwargs: Any) -> Any:
            in_kwargs = "size" in kwargs
            if in_kwargs:
                size = kwargs["size"]
            else:
                size = args[position] if len(args) > position else None
            shape = (size,) if isinstance(size, int | np.integer) else size
            if shape is None or len(shape) == 0 or shape[0] != n:
                return first(*args, **kwargs)
            row = (1, *tuple(shape)[1:])
            rows = []
            for generator in self._generators:
                method = getattr(generator, name)
                if in_kwargs:
                    rows.append(method(*args, **{**kwargs, "size": row}))
                else:
                    rows.append(method(*args[:position], row, *args[position + 1 :], **kwargs))
            return np.concatenate(rows, axis=0)

        return draw
