"""Opponents set from outside the env: ``set_attr("opponent_source", x)`` and
``env_method("set_opponent", x)`` do the same thing, and shared draws stay shared."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3
from stable_baselines3.common.vec_env import DummyVecEnv

from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv


def opponents_faced(venv, episodes: int = 6, seed: int = 0) -> list[str]:
    """The opponent ids of the first ``episodes`` finished episodes (random legal moves)."""
    rng = np.random.default_rng(seed)
    venv.reset()
    seen: list[str] = []
    while len(seen) < episodes:
        masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, _, dones, infos = venv.step(actions)
        seen += [
            info["selfplay"]["opponent"] for done, info in zip(dones, infos, strict=True) if done
        ]
    return seen


def counter_source():
    """A callable opponent: a new RandomPolicy with a new id at every draw."""
    counter = itertools.count()
    return lambda: RandomPolicy(policy_id=f"draw-{next(counter)}")


@pytest.mark.parametrize("how", ["set_attr", "env_method"])
@pytest.mark.parametrize("vectorised", [True, False])
def test_an_opponent_set_from_outside_replaces_the_default_random_opponent(how, vectorised):
    if vectorised:
        venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2)
    else:
        venv = DummyVecEnv([lambda: SelfPlayEnv(tictactoe_v3.env()) for _ in range(2)])
    mine = RandomPolicy(policy_id="mine")
    if how == "set_attr":
        venv.set_attr("opponent_source", mine)
    else:
        venv.env_method("set_opponent", mine)
    assert set(opponents_faced(venv)) == {"mine"}
    venv.close()


@pytest.mark.parametrize("how", ["set_attr", "env_method"])
def test_set_opponent_keeps_shared_draws_shared(how):
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4, opponent_draw="shared")
    source = counter_source()
    if how == "set_attr":
        venv.set_attr("opponent_source", source)
    else:
        venv.env_method("set_opponent", source)
    venv.reset()
    lineups = venv.get_attr("seat_policies")
    ids = {policy.policy_id for lineup in lineups for policy in lineup.values()}
    assert ids == {"draw-0"}  # one draw for the four copies, as at construction
    venv.close()


def test_per_env_draws_stay_per_env_after_set_opponent():
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4)
    venv.env_method("set_opponent", counter_source())
    venv.reset()
    lineups = venv.get_attr("seat_policies")
    assert len({p.policy_id for lineup in lineups for p in lineup.values()}) == 4
    venv.close()


def test_a_team_env_with_shared_draws_gives_each_block_of_copies_its_own_opponent():
    """What KOpponentRollouts does: one opponent per block of game copies, shared draws kept."""
    from death_game import DeathGame

    from sp_wrappers.envs.vector.factory import make_selfplay_vec_env

    venv = make_selfplay_vec_env(
        lambda: DeathGame(max_cycles=3),
        n_envs=4,
        learner="a",
        teams="prefix",
        opponent_draw="shared",
    )
    first, second = RandomPolicy(policy_id="first"), RandomPolicy(policy_id="second")
    venv.env_method("set_opponent", first, indices=[0, 1, 2, 3])  # game copies 0 and 1
    venv.env_method("set_opponent", second, indices=[4, 5, 6, 7])  # game copies 2 and 3
    venv.reset()
    for _ in range(3):
        _, _, dones, infos = venv.step(np.zeros(venv.num_envs, dtype=np.int64))
    assert dones.all()
    faced = [infos[2 * g]["selfplay"]["opponent_teams"]["b"] for g in range(4)]
    assert faced == ["first", "first", "second", "second"]
    venv.close()
