"""A Nash meta-solver over snapshots: PSRO's choice of whom to train against.

A two-player zero-sum matrix game (the row player's payoffs) is solved by linear programming
(:func:`solve_zero_sum`, SciPy's HiGHS solver): each side's maximin mixture and the game's value.
Between snapshots of one learner the game is symmetric: :func:`archive_payoffs` reads the archive's
match history into the score of each snapshot against each other one (1 win, 0.5 draw, 0 loss), and
:func:`symmetric_nash` solves ``score - 0.5``, whose equilibrium mixture is the meta-strategy PSRO
(Lanctot et al. 2017) trains its next best response against. :class:`OpponentSampler
<sp_wrappers.opponents.sampler.OpponentSampler>` draws from it with ``strategy="nash"``.

Pairs that never met have no measured score: they count as even (0.5) and are listed, so a caller
can schedule the games that measure them (:attr:`SnapshotPayoffs.missing_pairs`).

>>> rock_paper_scissors = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
>>> row, column, value = solve_zero_sum(rock_paper_scissors)
>>> row.round(3).tolist(), round(value, 6)
([0.333, 0.333, 0.333], 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.extras import require

__all__ = ["solve_zero_sum", "symmetric_nash", "SnapshotPayoffs", "archive_payoffs"]


def _linprog() -> Any:
    return require("scipy.optimize", None, "The Nash meta-solver").linprog


def _solve(linprog: Any, **problem: Any) -> np.ndarray:
    result = linprog(method="highs", **problem)
    if result.status != 0:  # pragma: no cover - bounded feasible programs by construction
        raise RuntimeError(f"The Nash linear program failed: {result.message}")
    return np.asarray(result.x, dtype=np.float64)


def _maximin(payoff: np.ndarray) -> tuple[np.ndarray, float]:
    """The row player's maximin mixture of ``payoff`` (rows: its strategies) and its value.

    Among the maximin mixtures (many when strategies tie), the one returned spreads its weight
    as evenly as it can over the strategies some maximin mixture plays: a strategy as good as
    another is not dropped because the solver stopped at a vertex.
    """
    linprog = _linprog()
    m, n = payoff.shape
    # Shift to positive payoffs: maximise v <=> minimise sum(u) with A^T u >= 1, u >= 0, x = u v.
    shift = 1.0 - float(payoff.min())
    u = np.clip(
        _solve(linprog, c=np.ones(m), A_ub=-(payoff + shift).T, b_ub=-np.ones(n)), 0.0, None
    )
    value = 1.0 / float(u.sum()) - shift
    if m == 1:
        return np.ones(1), value
    # The maximin mixtures: x >= 0, sum(x) = 1, A^T x >= value (less a rounding margin).
    margin = 1e-9 * max(1.0, float(np.abs(payoff).max()))
    optimal = dict(
        A_ub=-payoff.T, b_ub=-(value - margin) * np.ones(n), A_eq=np.ones((1, m)), b_eq=[1.0]
    )
    # Which strategies some maximin mixture plays (the most weight each can get) ...
    played = [
        i
        for i in range(m)
        if _solve(linprog, c=-np.eye(m)[i], bounds=[(0, None)] * m, **optimal)[i] > 1e-6
    ]
    # ... then the maximin mixture whose smallest weight on those is largest: variables (x, t).
    floor = np.zeros((len(played), m + 1))
    for row, i in enumerate(played):
        floor[row, i], floor[row, m] = -1.0, 1.0  # t - x_i <= 0
    solution = _solve(
        linprog,
        c=-np.eye(m + 1)[m],
        A_ub=np.vstack([np.hstack([optimal["A_ub"], np.zeros((n, 1))]), floor]),
        b_ub=np.concatenate([optimal["b_ub"], np.zeros(len(played))]),
        A_eq=np.hstack([optimal["A_eq"], np.zeros((1, 1))]),
        b_eq=optimal["b_eq"],
        bounds=[(0, None) if i in played else (0, 0) for i in range(m)] + [(0, None)],
    )
    mixture = np.clip(solution[:m], 0.0, None)
    return mixture / mixture.sum(), value


def solve_zero_sum(payoff: Any) -> tuple[np.ndarray, np.ndarray, float]:
    """A Nash equilibrium of the zero-sum matrix game ``payoff`` (the row player's payoffs; the
    column player gets their negative): ``(row mixture, column mixture, value)``.

    Each mixture is a maximin strategy found by linear programming, so a strictly dominated
    strategy gets weight 0 and the value is what the row player secures. Where several maximin
    mixtures exist, each side's spreads its weight most evenly over the strategies that some
    maximin mixture plays (all-even scores give the uniform mixture, not one strategy).

    :param payoff: an ``(m, n)`` array-like of finite numbers.

    >>> row, column, value = solve_zero_sum([[3, 1], [2, 0]])   # row 1 is dominated
    >>> row.tolist(), column.tolist(), value
    ([1.0, 0.0], [0.0, 1.0], 1.0)
    """
    matrix = np.asarray(payoff, dtype=np.float64)
    if matrix.ndim != 2 or 0 in matrix.shape or not np.all(np.isfinite(matrix)):
        raise ValueError(
            f"solve_zero_sum needs a non-empty 2-D matrix of finite payoffs, got shape "
            f"{matrix.shape}."
        )
    row, value = _maximin(matrix)
    column, _ = _maximin(-matrix.T)
    return row, column, float(value)


def symmetric_nash(scores: Any) -> np.ndarray:
    """The equilibrium mixture of a symmetric game between players, given their pairwise scores
    (``scores[i, j]``: ``i``'s score against ``j`` in [0, 1], ``scores[i, j] + scores[j, i] ==
    1``): the row mixture of the zero-sum game ``scores - 0.5``.

    >>> symmetric_nash([[0.5, 0.9], [0.1, 0.5]]).tolist()   # the first one beats the second
    [1.0, 0.0]
    """
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or not np.all(np.isfinite(matrix)):
        raise ValueError(
            f"symmetric_nash needs a square matrix of finite scores, got shape {matrix.shape}."
        )
    if matrix.shape == (1, 1):
        return np.ones(1)
    # The game is symmetric: the row player's maximin mixture is the equilibrium (the column
    # player's is the same), so only one side is solved.
    row, _ = _maximin(matrix - 0.5)
    return row


@dataclass(frozen=True)
class SnapshotPayoffs:
    """The measured scores between snapshots: ``scores[i, j]`` is ``ids[i]``'s mean score against
    ``ids[j]`` (0.5 where they never met or ``i == j``), ``games[i, j]`` how many games it rests on.
    """

    ids: tuple[str, ...]
    scores: np.ndarray
    games: np.ndarray = field(repr=False)

    @property
    def missing_pairs(self) -> list[tuple[str, str]]:
        """The pairs ``(a, b)`` (``a`` older in ``ids``) with no recorded game between them."""
        return [
            (a, b)
            for i, a in enumerate(self.ids)
            for j, b in enumerate(self.ids)
            if i < j and self.games[i, j] == 0
        ]

    def nash(self) -> dict[str, float]:
        """The symmetric game's equilibrium mixture, ``{snapshot id: probability}``."""
        if not self.ids:
            return {}
        mixture = symmetric_nash(self.scores)
        return {sid: float(p) for sid, p in zip(self.ids, mixture, strict=True)}


def archive_payoffs(archive: Any, ids: Sequence[str]) -> SnapshotPayoffs:
    """The scores between the snapshots ``ids`` from ``archive``'s match history (every recorded
    game between two of them, whatever its source, through :meth:`SnapshotArchive.scores_against
    <sp_wrappers.SnapshotArchive.scores_against>`: one read of the archive's payoff table per
    snapshot, whatever the length of the history).

    :param archive: a :class:`~sp_wrappers.SnapshotArchive`.
    :param ids: the snapshot ids, in the order of the matrix's rows.
    """
    ids = tuple(ids)
    index = {sid: i for i, sid in enumerate(ids)}
    scores = np.full((len(ids), len(ids)), 0.5)
    games = np.zeros((len(ids), len(ids)), dtype=np.int64)
    for i, sid in enumerate(ids):
        for opponent, (score, n) in archive.scores_against(sid).items():
            j = index.get(opponent)
            if j is None or j == i or n <= 0:
                continue
            scores[i, j] = score
            games[i, j] = n
    return SnapshotPayoffs(ids, scores, games)
