"""Specification of the registered Pong: RAM observations scaled to [0, 1] float32."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.games.registry import make_game
from sp_wrappers.games.wrappers import ScaledObservations

pytest.importorskip("ale_py")


def test_registered_pong_observes_ram_bytes_divided_by_255():
    scaled = make_game("pong_v3", max_cycles=30)
    raw = make_game("pong_v3", max_cycles=30, scale_observations=False)
    assert scaled.observation_space("first_0") == spaces.Box(0.0, 1.0, (128,), np.float32)
    assert raw.observation_space("first_0").dtype == np.uint8
    scaled.reset(seed=1)
    raw.reset(seed=1)
    for _ in range(20):  # both games step in lockstep with the same actions
        for game in (scaled, raw):
            game.step(1)
    for agent in ("first_0", "second_0"):
        obs = scaled.observe(agent)
        assert obs.dtype == np.float32 and obs.min() >= 0.0 and obs.max() <= 1.0
        np.testing.assert_allclose(obs, raw.observe(agent) / 255.0, rtol=1e-6)


def test_selfplay_env_on_registered_pong_hands_the_learner_scaled_observations():
    env = SelfPlayEnv(make_game("pong_v3", max_cycles=30), learner="first_0")
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs) and obs.max() <= 1.0


def test_scaling_refuses_observations_without_finite_bounds():
    from pettingzoo.classic import tictactoe_v3

    with pytest.raises(TypeError, match="Box observations with low 0"):
        ScaledObservations(tictactoe_v3.env())


def test_frame_skip_holds_each_action_for_k_frames():
    for frame_skip, steps in ((1, 40), (4, 10)):
        env = SelfPlayEnv(make_game("pong_v3", max_cycles=40, frame_skip=frame_skip), "first_0")
        env.reset(seed=0)
        done, length = False, 0
        while not done:
            _, _, terminated, truncated, _ = env.step(1)
            done, length = terminated or truncated, length + 1
        assert length == steps


def test_frame_skip_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="frame_skip must be an integer >= 1"):
        make_game("pong_v3", frame_skip=0)
