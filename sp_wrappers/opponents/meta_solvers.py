"""PSRO's meta-solvers: the mixture over a population that the next best response trains against.

Each takes the population's symmetric zero-sum payoff matrix (``payoff[i, j]``: what member ``i``
wins per game against member ``j``; ``payoff[j, i] == -payoff[i, j]``) and returns one probability
per member (Lanctot et al. 2017, "A Unified Game-Theoretic Approach to Multiagent Reinforcement
Learning"):

- ``"nash"``: the equilibrium of the matrix game, by linear programming
  (:func:`~sp_wrappers.opponents.nash.solve_zero_sum`; the most even of the equilibria);
- ``"uniform"``: every member alike (fictitious play over the population);
- ``"prd"``: projected replicator dynamics, the replicator equation with every weight kept at
  least ``exploration / n`` (the paper's γ), averaged over the second half of its steps.

>>> rock_paper_scissors = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
>>> meta_strategy(rock_paper_scissors, "nash").round(3).tolist()
[0.333, 0.333, 0.333]
>>> meta_strategy([[0, 1], [-1, 0]], "nash").tolist()    # the second member is dominated
[1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .nash import solve_zero_sum

__all__ = ["META_SOLVERS", "meta_strategy", "projected_replicator_dynamics"]

META_SOLVERS = ("nash", "uniform", "prd")


def _checked(payoff: Any) -> np.ndarray:
    matrix = np.asarray(payoff, dtype=np.float64)
    if (
        matrix.ndim != 2
        or matrix.shape[0] != matrix.shape[1]
        or matrix.shape[0] == 0
        or not np.all(np.isfinite(matrix))
    ):
        raise ValueError(
            f"A meta-solver needs a non-empty square matrix of finite payoffs, got shape "
            f"{matrix.shape}."
        )
    return matrix


def projected_replicator_dynamics(
    payoff: Any,
    iterations: int = 20_000,
    step: float = 1e-2,
    exploration: float = 1e-3,
) -> np.ndarray:
    """Projected replicator dynamics on a symmetric game: ``x += step * x * (payoff @ x - x @
    payoff @ x)``, then projected onto the simplex with every weight at least
    ``exploration / n``; the mean of the second half of the trajectory.

    :param payoff: the symmetric game's square payoff matrix.
    :param iterations: replicator steps.
    :param step: the step size (payoffs per unit of probability).
    :param exploration: the total weight kept spread over all members (γ).

    >>> projected_replicator_dynamics([[0, -1, 1], [1, 0, -1], [-1, 1, 0]]).round(2).tolist()
    [0.33, 0.33, 0.33]
    """
    matrix = _checked(payoff)
    n = len(matrix)
    floor = float(exploration) / n
    x = np.full(n, 1.0 / n)
    total = np.zeros(n)
    kept = 0
    for t in range(int(iterations)):
        fitness = matrix @ x
        x = x + step * x * (fitness - x @ fitness)
        x = _project(x, floor)
        if t >= iterations // 2:
            total += x
            kept += 1
    mean = total / max(kept, 1)
    return mean / mean.sum()


def _project(x: np.ndarray, floor: float) -> np.ndarray:
    """The Euclidean projection of ``x`` onto ``{y : sum(y) = 1, y >= floor}``."""
    n = len(x)
    shifted = x - floor
    budget = 1.0 - n * floor
    # the projection onto the simplex of mass ``budget`` (Duchi et al. 2008)
    u = np.sort(shifted)[::-1]
    cumulative = np.cumsum(u) - budget
    k = np.nonzero(u - cumulative / np.arange(1, n + 1) > 0)[0][-1]
    theta = cumulative[k] / (k + 1)
    return np.maximum(shifted - theta, 0.0) + floor


def meta_strategy(payoff: Any, solver: str = "nash", **options: Any) -> np.ndarray:
    """The meta-strategy ``solver`` finds for the symmetric game ``payoff``: one probability per
    member, summing to 1.

    :param payoff: the square payoff matrix (``payoff[i, j]``: member ``i``'s winnings against
        ``j``).
    :param solver: ``"nash"``, ``"uniform"`` or ``"prd"``.
    :param options: the solver's own settings (``prd``: ``iterations``, ``step``,
        ``exploration``).
    """
    if solver not in META_SOLVERS:
        raise ValueError(f"meta_solver must be one of {META_SOLVERS}, got {solver!r}.")
    matrix = _checked(payoff)
    n = len(matrix)
    if solver == "uniform" or n == 1:
        return np.full(n, 1.0 / n)
    if solver == "prd":
        return projected_replicator_dynamics(matrix, **options)
    # symmetric zero-sum: the row player's maximin mixture is an equilibrium for both sides
    row, _, _ = solve_zero_sum((matrix - matrix.T) / 2.0)
    return row
