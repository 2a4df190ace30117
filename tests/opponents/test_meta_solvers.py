"""PSRO's meta-solvers on matrices whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from sp_wrappers.opponents.meta_solvers import (
    META_SOLVERS,
    meta_strategy,
    projected_replicator_dynamics,
)

ROCK_PAPER_SCISSORS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
# member 2 loses to both others and member 0 beats member 1: member 0 is the equilibrium
DOMINATED = np.array([[0, 0.5, 0.2], [-0.5, 0, 0.3], [-0.2, -0.3, 0]])


@pytest.mark.parametrize("solver", ["nash", "prd", "uniform"])
def test_rock_paper_scissors_meta_strategy_is_uniform(solver: str) -> None:
    weights = meta_strategy(ROCK_PAPER_SCISSORS, solver)
    np.testing.assert_allclose(weights, [1 / 3] * 3, atol=1e-3)


def test_nash_gives_a_dominated_member_no_weight() -> None:
    weights = meta_strategy(DOMINATED, "nash")
    assert weights[2] == 0.0
    np.testing.assert_allclose(weights, [1.0, 0.0, 0.0], atol=1e-9)


def test_prd_keeps_a_dominated_member_at_its_exploration_floor() -> None:
    weights = projected_replicator_dynamics(DOMINATED, exploration=0.03)
    assert weights[0] > 0.95
    np.testing.assert_allclose(weights[1:], [0.01, 0.01], atol=1e-3)


def test_nash_of_a_biased_rock_paper_scissors_is_its_known_equilibrium() -> None:
    # rock beats scissors by 2: the equilibrium is (1/4, 1/2, 1/4) (rock, paper, scissors)
    biased = np.array([[0, -1, 2], [1, 0, -1], [-2, 1, 0]], dtype=float)
    np.testing.assert_allclose(meta_strategy(biased, "nash"), [0.25, 0.5, 0.25], atol=1e-6)
    np.testing.assert_allclose(meta_strategy(biased, "prd"), [0.25, 0.5, 0.25], atol=0.03)


@pytest.mark.parametrize("solver", META_SOLVERS)
def test_every_meta_strategy_is_a_distribution(solver: str) -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6))
    weights = meta_strategy(a - a.T, solver)
    assert weights.shape == (6,) and np.all(weights >= 0)
    assert weights.sum() == pytest.approx(1.0)


def test_unknown_solver_and_bad_matrices_are_refused() -> None:
    with pytest.raises(ValueError, match="meta_solver must be one of"):
        meta_strategy(ROCK_PAPER_SCISSORS, "alpharank")
    with pytest.raises(ValueError, match="square matrix"):
        meta_strategy(np.zeros((2, 3)), "nash")
