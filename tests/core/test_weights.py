"""``state_arrays``: a policy's weights as numpy arrays, the module walk kept between calls."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import DQN, SAC

from sp_wrappers.core.weights import state_arrays


def as_state_dict_gives_them(module) -> dict[str, np.ndarray]:
    """What the callbacks sent before, copied (those arrays are views of the weights too)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("algo", [DQN, SAC], ids=["dqn", "sac"])
def test_state_arrays_are_the_state_dict_s_keys_in_order_and_follow_training(algo):
    env = gym.make("CartPole-v1") if algo is DQN else gym.make("Pendulum-v1")
    model = algo("MlpPolicy", env, learning_starts=0, batch_size=8, buffer_size=256, seed=0)
    expected = as_state_dict_gives_them(model.policy)
    arrays = state_arrays(model.policy)
    assert list(arrays) == list(expected)
    for key, array in arrays.items():
        assert array.dtype == expected[key].dtype and np.array_equal(array, expected[key])
    model.learn(64)  # optimiser steps change the weights in place
    trained = as_state_dict_gives_them(model.policy)
    assert any(not np.array_equal(trained[k], expected[k]) for k in trained)
    again = state_arrays(model.policy)
    assert all(np.array_equal(again[k], trained[k]) for k in trained)


def test_a_replaced_parameter_and_a_moved_module_are_read_where_they_are_now():
    layer = torch.nn.Linear(3, 2)
    state_arrays(layer)
    layer.weight = torch.nn.Parameter(torch.ones(2, 3))  # the module holds another tensor
    assert state_arrays(layer)["weight"].tolist() == [[1.0] * 3] * 2
    layer.to(torch.float64)  # same parameters, new memory
    arrays = state_arrays(layer)
    assert arrays["weight"].dtype == np.float64 and arrays["bias"].dtype == np.float64
    with torch.no_grad():
        layer.bias.fill_(5.0)
    assert state_arrays(layer)["bias"].tolist() == [5.0, 5.0]


def test_a_module_with_a_state_dict_hook_is_asked_for_its_state_dict_each_time():
    layer = torch.nn.Linear(2, 2)
    calls = []

    def hook(module, state, prefix, local_metadata):
        calls.append(1)
        state[prefix + "scale"] = torch.tensor([float(len(calls))])

    layer.register_state_dict_post_hook(hook)
    assert state_arrays(layer)["scale"].tolist() == [1.0]
    assert state_arrays(layer)["scale"].tolist() == [2.0]
    assert list(state_arrays(layer)) == ["weight", "bias", "scale"]
