"""Each slot of a learner team ends as its own agent did (termination vs. truncation).

SB3 bootstraps a slot whose ``info["TimeLimit.truncated"]`` is true from the value of its
``terminal_observation``: an agent that died earlier must not be bootstrapped (least of all from an
all-zero observation), and teammates cut by the time limit must be, whatever another agent did in
the same round.
"""

from __future__ import annotations

import numpy as np
import pytest
from death_game import DeathGame

from sp_wrappers.envs.vector.factory import make_selfplay_vec_env


def play_one_episode(deaths: dict[str, int], max_cycles: int = 4, num_workers: int = 0) -> list:
    venv = make_selfplay_vec_env(
        lambda: DeathGame(deaths, max_cycles=max_cycles),
        n_envs=1,
        learner="a",
        teams="prefix",
        num_workers=num_workers,
    )
    try:
        venv.reset()
        for _ in range(max_cycles):
            _, _, dones, infos = venv.step(np.zeros(venv.num_envs, dtype=np.int64))
            if dones.all():
                return infos
        raise AssertionError("the team's episode did not end")
    finally:
        venv.close()


@pytest.mark.parametrize("num_workers", [0, 1])
def test_an_agent_that_died_early_ends_terminated_with_its_own_last_observation(num_workers):
    infos = play_one_episode({"a_0": 2}, max_cycles=4, num_workers=num_workers)
    died, survived = infos
    assert died["seat"] == "a_0" and survived["seat"] == "a_1"
    assert died["TimeLimit.truncated"] is False  # no bootstrap for an agent that terminated
    np.testing.assert_array_equal(died["terminal_observation"], [1.0, 2.0, 0.0])
    assert survived["TimeLimit.truncated"] is True  # cut by the time limit: bootstrapped
    np.testing.assert_array_equal(survived["terminal_observation"], [1.0, 4.0, 1.0])


def test_teammates_cut_by_the_time_limit_keep_their_bootstrap_when_one_dies_in_the_last_round():
    died, survived = play_one_episode({"a_0": 4}, max_cycles=4)
    assert died["TimeLimit.truncated"] is False
    assert survived["TimeLimit.truncated"] is True
    np.testing.assert_array_equal(survived["terminal_observation"], [1.0, 4.0, 1.0])


def test_a_team_that_all_terminated_is_not_bootstrapped():
    infos = play_one_episode({"a_0": 1, "a_1": 3}, max_cycles=4)
    assert [info["TimeLimit.truncated"] for info in infos] == [False, False]
    np.testing.assert_array_equal(infos[0]["terminal_observation"], [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(infos[1]["terminal_observation"], [1.0, 3.0, 1.0])
