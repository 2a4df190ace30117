"""``DrawReward``: contempt for draws, on real games and real SB3 vector envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3
from stable_baselines3.common.vec_env import DummyVecEnv

from sp_wrappers import DrawReward, SelfPlayEnv, make_selfplay_vec_env


def play(venv, steps: int, seed: int) -> tuple[list[float], list[dict]]:
    """Random legal learner moves; the rewards and infos of every step, flattened over envs."""
    rng = np.random.default_rng(seed)
    venv.reset()
    rewards, infos = [], []
    for _ in range(steps):
        masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, reward, _, info = venv.step(actions)
        rewards.extend(reward.tolist())
        infos.extend(info)
    return rewards, infos


def test_only_the_last_step_of_a_drawn_game_changes():
    draw_reward = -0.5
    plain = make_selfplay_vec_env(tictactoe_v3.env, n_envs=4, seed=3)
    shaped = DrawReward(make_selfplay_vec_env(tictactoe_v3.env, n_envs=4, seed=3), draw_reward)
    base, infos = play(plain, 150, seed=0)
    changed, shaped_infos = play(shaped, 150, seed=0)
    drawn = [i for i, info in enumerate(infos) if info.get("selfplay", {}).get("outcome") == 0.5]
    assert len(drawn) >= 10, "random tic-tac-toe should draw now and then"
    assert shaped.draws == len(drawn)
    expected = np.array(base)
    expected[drawn] += draw_reward
    np.testing.assert_allclose(changed, expected, rtol=0, atol=1e-6)
    # VecMonitor sits inside: the logged episode returns stay the game's own.
    episodes = [info["episode"]["r"] for info in shaped_infos if "episode" in info]
    assert episodes == [info["episode"]["r"] for info in infos if "episode" in info]


def test_works_on_a_single_selfplay_env_in_a_dummy_vec_env():
    shaped = DrawReward(DummyVecEnv([lambda: SelfPlayEnv(tictactoe_v3.env())]), -1.0)
    rewards, infos = play(shaped, 300, seed=1)
    draws = [i for i, info in enumerate(infos) if info.get("selfplay", {}).get("outcome") == 0.5]
    assert draws and shaped.draws == len(draws)
    assert all(rewards[i] == -1.0 for i in draws)


@pytest.mark.parametrize("bad", [-1.5, 2.0, float("nan")])
def test_a_draw_reward_outside_minus_one_to_one_is_refused(bad):
    venv = make_selfplay_vec_env(tictactoe_v3.env, n_envs=1)
    with pytest.raises(ValueError, match="draw_reward must be between -1 and 1"):
        DrawReward(venv, bad)


def test_an_env_without_selfplay_outcomes_is_named():
    venv = DrawReward(DummyVecEnv([lambda: gym.make("CartPole-v1")]), -0.5)
    venv.reset()
    with pytest.raises(ValueError, match="info\\['selfplay'\\]\\['outcome'\\].*SelfPlayEnv"):
        for _ in range(600):
            venv.step(np.array([0]))
