"""Specification of the opponent policies: RandomPolicy, CallablePolicy and SB3Policy."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sp_wrappers.core.policies import (
    CallablePolicy,
    Policy,
    RandomPolicy,
    SB3Policy,
    check_opponent_action,
    is_policy,
    stack_observations,
)

OBS_SPACE = spaces.Box(-1.0, 1.0, (3,), np.float32)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@st.composite
def masks_with_a_legal_action(draw: Any) -> np.ndarray:
    n = draw(st.integers(1, 8))
    k = draw(st.integers(1, 10))
    masks = draw(hnp.arrays(bool, (n, k)))
    rows = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    masks[np.arange(n), rows] = True  # every row keeps at least one legal action
    return masks


def actor_critic_policy(n_actions: int, preferred: int | None = None) -> Any:
    """A tiny SB3 actor-critic policy; with ``preferred``, that action's logit dominates."""
    from stable_baselines3.common.policies import ActorCriticPolicy

    policy = ActorCriticPolicy(OBS_SPACE, spaces.Discrete(n_actions), lambda _: 1e-3)
    with torch.no_grad():
        policy.action_net.weight.zero_()
        policy.action_net.bias.zero_()
        if preferred is not None:
            policy.action_net.bias[preferred] = 20.0
    return policy


def observations(n: int) -> np.ndarray:
    return np.zeros((n, 3), dtype=np.float32)


# ------------------------------------------------------------------------------------------------
# RandomPolicy
# ------------------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(masks=masks_with_a_legal_action(), seed=st.integers(0, 2**32 - 1))
def test_random_policy_only_picks_legal_actions(masks, seed):
    actions = RandomPolicy().act(np.zeros((len(masks), 2)), masks, rng(seed))
    assert actions.shape == (len(masks),)
    assert masks[np.arange(len(masks)), actions].all()


def test_random_policy_is_uniform_over_legal_actions():
    masks = np.tile([True, True, False, True], (3000, 1))
    counts = np.bincount(RandomPolicy().act(np.zeros((3000, 1)), masks, rng()), minlength=4)
    assert counts[2] == 0
    assert np.all(np.abs(counts[[0, 1, 3]] / 3000 - 1 / 3) < 0.04)


def test_random_policy_is_reproducible_with_the_same_generator_seed():
    masks = np.ones((20, 5), dtype=bool)
    first = RandomPolicy().act(np.zeros((20, 1)), masks, rng(7))
    assert first.tolist() == RandomPolicy().act(np.zeros((20, 1)), masks, rng(7)).tolist()
    assert first.tolist() != RandomPolicy().act(np.zeros((20, 1)), masks, rng(8)).tolist()


def test_random_policy_masked_actions_respect_a_discrete_start():
    policy = RandomPolicy(spaces.Discrete(3, start=5))
    masks = np.array([[False, True, False]] * 4)
    actions = policy.act(np.zeros((4, 1)), masks, rng())
    assert actions.tolist() == [6] * 4
    assert check_opponent_action(policy, actions[0], policy.action_space, masks[0], "s") == 6


@pytest.mark.parametrize(
    "space",
    [
        spaces.Discrete(4),
        spaces.Discrete(3, start=-1),
        spaces.MultiDiscrete([2, 3, 4]),
        spaces.MultiBinary(5),
        spaces.Box(-2.0, 2.0, (2, 3), np.float32),
        spaces.Box(-np.inf, np.inf, (2,), np.float32),
    ],
)
def test_random_policy_without_masks_samples_its_action_space(space):
    actions = RandomPolicy(space).act(np.zeros((6, 1)), None, rng())
    assert len(actions) == 6
    assert all(
        space.contains(np.asarray(a, dtype=space.dtype).reshape(space.shape)) for a in actions
    )


def test_random_policy_without_mask_or_space_errors():
    with pytest.raises(ValueError, match=r"no action mask and has no action_space"):
        RandomPolicy().act(np.zeros((1, 1)), None, rng())


def test_random_policy_in_space_plays_in_that_space_and_reuses_one_copy_per_space():
    unbound = RandomPolicy(policy_id="rnd")
    in_six = unbound.in_space(spaces.Discrete(6))
    assert in_six.policy_id == "rnd" and in_six.action_space == spaces.Discrete(6)
    assert unbound.in_space(spaces.Discrete(6)) is in_six
    assert unbound.in_space(spaces.Discrete(3)) is not in_six
    assert set(in_six.act(np.zeros((200, 1)), None, rng()).tolist()) == set(range(6))
    assert unbound.action_space is None  # the policy the user holds is unchanged
    own = RandomPolicy(spaces.Discrete(2))
    assert own.in_space(spaces.Discrete(6)) is own  # a given space is kept


def _play_one_episode(env: Any) -> dict[str, Any]:
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            return info["selfplay"]


def test_random_policy_without_a_space_plays_pong_in_selfplay_env():
    from conftest import make_pong_parallel

    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    env = SelfPlayEnv(make_pong_parallel(), learner="first_0", opponent=RandomPolicy())
    env.action_space.seed(0)
    summary = _play_one_episode(env)
    assert summary["opponents"] == {"second_0": "random"}
    env.close()


def test_random_policy_without_a_space_plays_pong_in_selfplay_vec_env_as_one_policy_per_seat():
    from conftest import make_pong_parallel

    from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv

    venv = SelfPlayVecEnv(make_pong_parallel, n_envs=3, learner="random", opponent=RandomPolicy())
    venv.seed(0)
    venv.reset()
    dones = np.zeros(3, dtype=bool)
    while not dones.all():
        actions = np.random.default_rng(0).integers(0, 6, size=3)
        _, _, done, infos = venv.step(actions)
        for i in np.flatnonzero(done):
            assert infos[i]["selfplay"]["opponent"] == "random"
        dones |= done
    # every copy's seat is played by the same bound policy, so one act call answers them all
    by_seat: dict[str, set[int]] = {}
    for seat_policies in venv.get_attr("seat_policies"):
        for seat, policy in seat_policies.items():
            assert policy.action_space == venv.game_spec.action_space(seat)
            by_seat.setdefault(seat, set()).add(id(policy))
    assert all(len(ids) == 1 for ids in by_seat.values())
    venv.close()


def test_play_match_plays_pong_with_random_policies_built_without_a_space():
    from conftest import make_pong_parallel

    from sp_wrappers.evaluation.match import play_match

    result = play_match(make_pong_parallel, RandomPolicy(), RandomPolicy(policy_id="r2"), 2)
    assert result.n_games == 2 and sorted(result.by_seat()) == ["first_0", "second_0"]


def test_random_policy_accepts_dict_observations():
    obs = {"observation": np.zeros((3, 2)), "action_mask": np.ones((3, 4))}
    assert RandomPolicy(spaces.Discrete(4)).act(obs, None, rng()).shape == (3,)


def test_policies_follow_the_protocol():
    for policy in (
        RandomPolicy(),
        CallablePolicy(lambda o, m: 0),
        SB3Policy(actor_critic_policy(2)),
    ):
        assert is_policy(policy) and isinstance(policy, Policy)
    assert not is_policy(lambda obs: 0)


# ------------------------------------------------------------------------------------------------
# CallablePolicy
# ------------------------------------------------------------------------------------------------


def test_callable_policy_calls_the_function_once_per_unbatched_observation():
    calls: list[tuple[Any, Any]] = []

    def last_legal(obs: np.ndarray, mask: np.ndarray | None) -> int:
        calls.append((obs, mask))
        return int(np.flatnonzero(mask)[-1])

    policy = CallablePolicy(last_legal)
    batch = np.arange(6, dtype=np.float32).reshape(3, 2)
    masks = np.array([[True, True, False], [True, False, False], [False, True, True]])
    assert policy.act(batch, masks, rng()).tolist() == [1, 0, 2]
    assert policy.policy_id == "last_legal"
    assert len(calls) == 3
    np.testing.assert_array_equal(calls[1][0], batch[1])
    np.testing.assert_array_equal(calls[1][1], masks[1])


def test_callable_policy_passes_none_masks_for_games_without_masks():
    policy = CallablePolicy(lambda obs, mask: 0 if mask is None else 1, "m")
    assert policy.act(np.zeros((2, 1)), None, rng()).tolist() == [0, 0]


def test_callable_policy_batched_gets_the_whole_batch():
    def batched(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        assert obs.shape == (4, 2) and masks.shape == (4, 3)
        return masks.argmax(axis=1)

    policy = CallablePolicy(batched, "batched", batched=True)
    masks = np.eye(3, dtype=bool)[[2, 0, 1, 2]]
    assert policy.act(np.zeros((4, 2)), masks, rng()).tolist() == [2, 0, 1, 2]


def test_callable_policy_splits_dict_observations_per_item():
    seen: list[dict] = []

    def fn(obs: dict, mask: Any) -> int:
        seen.append(obs)
        return int(obs["x"][0])

    obs = {"x": np.array([[3], [5]]), "y": np.zeros((2, 4))}
    assert CallablePolicy(fn).act(obs, None, rng()).tolist() == [3, 5]
    assert seen[0]["y"].shape == (4,)


def test_callable_policy_with_needs_rng_gets_the_generator():
    policy = CallablePolicy(lambda obs, mask, g: int(g.integers(100)), "r", needs_rng=True)
    assert (
        policy.act(np.zeros((3, 1)), None, rng(1)).tolist() == rng(1).integers(100, size=3).tolist()
    )


def test_callable_policy_needs_a_callable():
    with pytest.raises(TypeError, match="needs a callable"):
        CallablePolicy(3)


# ------------------------------------------------------------------------------------------------
# SB3Policy
# ------------------------------------------------------------------------------------------------


def test_sb3_policy_never_picks_masked_actions_even_when_the_unmasked_argmax_is_illegal():
    frozen = SB3Policy(actor_critic_policy(4, preferred=3), deterministic=True)
    assert frozen.act(observations(2), None, rng()).tolist() == [3, 3]
    masks = np.array([[True, True, True, False], [False, True, False, False]])
    for sampled in (False, True):
        frozen.deterministic = not sampled
        for seed in range(20):
            actions = frozen.act(observations(2), masks, rng(seed))
            assert masks[np.arange(2), actions].all()
    assert frozen.act(observations(2), masks, None)[1] == 1


def test_sb3_policy_deterministic_takes_the_most_likely_action_sampled_varies():
    policy = actor_critic_policy(4)
    with torch.no_grad():
        policy.action_net.bias.copy_(torch.tensor([0.0, 0.1, 0.0, 0.0]))
    deterministic = SB3Policy(policy, deterministic=True)
    assert set(deterministic.act(observations(50), None, rng()).tolist()) == {1}
    sampled = SB3Policy(policy, deterministic=False)
    assert set(sampled.act(observations(200), None, rng()).tolist()) == {0, 1, 2, 3}


def test_sb3_policy_sampling_is_reproducible_with_the_generator():
    sampled = SB3Policy(actor_critic_policy(5), deterministic=False)
    first = sampled.act(observations(30), None, rng(3)).tolist()
    assert first == sampled.act(observations(30), None, rng(3)).tolist()
    assert first != sampled.act(observations(30), None, rng(4)).tolist()


def test_sb3_policy_copies_weights_so_later_training_does_not_change_it():
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=32, batch_size=32, n_epochs=1, seed=0)
    frozen = SB3Policy(model, deterministic=True)
    shared = SB3Policy(model, deterministic=True, copy_weights=False)
    before = frozen.state_dict()
    model.learn(64)
    after = frozen.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    live = {k: v.cpu().numpy() for k, v in model.policy.state_dict().items()}
    assert any(not np.array_equal(before[k], live[k]) for k in before)
    assert all(np.array_equal(shared.state_dict()[k], live[k]) for k in live)


def test_sb3_policy_can_freeze_a_model_that_has_already_trained():
    # A trained actor-critic caches its last action distribution (non-leaf tensors): copying
    # must not rely on deepcopy of the whole module.
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    frozen = SB3Policy(model, deterministic=True)
    live = {k: v.cpu().numpy() for k, v in model.policy.state_dict().items()}
    assert all(np.array_equal(frozen.state_dict()[k], live[k]) for k in live)
    obs = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    expected, _ = model.predict(obs, deterministic=True)
    assert frozen.act(obs, None, rng()).tolist() == expected.tolist()


def test_sb3_policy_state_dict_round_trip():
    source = SB3Policy(actor_critic_policy(4, preferred=2), deterministic=True)
    state = source.state_dict()
    assert all(isinstance(v, np.ndarray) for v in state.values())
    target = SB3Policy(actor_critic_policy(4, preferred=0), deterministic=True)
    assert target.act(observations(1), None, rng()).tolist() == [0]
    target.load_state_dict(state)
    assert target.act(observations(1), None, rng()).tolist() == [2]
    assert all(np.array_equal(target.state_dict()[k], v) for k, v in state.items())
    target.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})  # tensors work too


def test_sb3_policy_load_state_dict_rejects_mismatched_weights():
    target = SB3Policy(actor_critic_policy(4))
    with pytest.raises(RuntimeError):
        target.load_state_dict(SB3Policy(actor_critic_policy(5)).state_dict())


def test_sb3_policy_load_state_dict_copies_in_place_without_torchs_module_walk(monkeypatch):
    """The sampler loads its latest weights after every rollout (every step for SAC): the copy
    goes straight into the parameters, which keep their storage (numpy views follow)."""
    source = SB3Policy(actor_critic_policy(4, preferred=2), deterministic=True)
    target = SB3Policy(actor_critic_policy(4, preferred=0), deterministic=True)
    pointers = {k: v.data_ptr() for k, v in target.policy.state_dict().items()}

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("torch's load_state_dict was called")

    monkeypatch.setattr(type(target.policy), "load_state_dict", refused)
    target.load_state_dict(source.state_dict())
    assert target.act(observations(1), None, rng()).tolist() == [2]
    assert all(np.array_equal(target.state_dict()[k], v) for k, v in source.state_dict().items())
    assert {k: v.data_ptr() for k, v in target.policy.state_dict().items()} == pointers


def test_sb3_policy_load_state_dict_follows_replaced_modules_and_parameters():
    """A copy whose module is swapped (the sampler's latest: ``copy.copy`` of a snapshot, then a
    new module) loads into its own module, never into the one it was copied from; a parameter
    replaced on the module is loaded too."""
    import copy

    template = SB3Policy(actor_critic_policy(4, preferred=0), deterministic=True)
    template.load_state_dict(template.state_dict())  # its in-place targets cached
    latest = copy.copy(template)
    latest.policy = actor_critic_policy(4, preferred=0)
    latest.load_state_dict(SB3Policy(actor_critic_policy(4, preferred=3)).state_dict())
    assert latest.act(observations(1), None, rng()).tolist() == [3]
    assert template.act(observations(1), None, rng()).tolist() == [0]
    net = template.policy.action_net
    net.bias = torch.nn.Parameter(torch.zeros(4))
    template.load_state_dict(SB3Policy(actor_critic_policy(4, preferred=1)).state_dict())
    assert template.act(observations(1), None, rng()).tolist() == [1]


def test_sb3_policy_load_state_dict_refuses_missing_extra_and_reshaped_weights():
    target = SB3Policy(actor_critic_policy(4))
    state = SB3Policy(actor_critic_policy(4)).state_dict()
    missing = {k: v for k, v in state.items() if k != "action_net.bias"}
    with pytest.raises(RuntimeError, match="Missing key"):
        target.load_state_dict(missing)
    with pytest.raises(RuntimeError, match="Unexpected key"):
        target.load_state_dict({**state, "extra.weight": np.zeros(2, np.float32)})
    reshaped = {**state, "action_net.bias": np.zeros(5, np.float32)}
    with pytest.raises(RuntimeError, match="size mismatch"):
        target.load_state_dict(reshaped)


def test_sb3_policy_masks_dqn_q_values():
    from stable_baselines3.dqn.policies import DQNPolicy

    policy = DQNPolicy(OBS_SPACE, spaces.Discrete(4), lambda _: 1e-3)
    last = policy.q_net.q_net[-1]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(torch.tensor([5.0, 1.0, 3.0, 2.0]))
    frozen = SB3Policy(policy, deterministic=True, policy_id="dqn")
    assert frozen.act(observations(1), None, rng()).tolist() == [0]
    masks = np.array([[False, True, True, True], [False, True, False, True]])
    assert frozen.act(observations(2), masks, rng()).tolist() == [2, 3]
    frozen.deterministic = False
    for seed in range(10):
        assert masks[np.arange(2), frozen.act(observations(2), masks, rng(seed))].all()


def test_sb3_policy_wraps_a_maskable_ppo_model(tictactoe):
    from sb3_contrib import MaskablePPO

    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    env = SelfPlayEnv(tictactoe, learner="player_1")
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(32)
    frozen = SB3Policy(model, deterministic=True)
    obs, _ = env.reset(seed=0)
    masks = np.zeros((1, 9), dtype=bool)
    masks[0, 7] = True
    assert frozen.act(obs[None], masks, rng()).tolist() == [7]


def test_sb3_policy_continuous_actions_are_clipped_to_the_space():
    from stable_baselines3.common.policies import ActorCriticPolicy

    action_space = spaces.Box(-0.5, 0.5, (2,), np.float32)
    policy = ActorCriticPolicy(OBS_SPACE, action_space, lambda _: 1e-3, log_std_init=2.0)
    actions = SB3Policy(policy).act(observations(20), None, rng())
    assert actions.shape == (20, 2)
    assert np.all(actions >= -0.5) and np.all(actions <= 0.5)


def test_sb3_policy_rejects_non_sb3_objects():
    with pytest.raises(TypeError, match="needs a Stable-Baselines3 model or policy"):
        SB3Policy(RandomPolicy())


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------


def test_stack_observations_stacks_arrays_and_dicts():
    assert stack_observations([np.zeros(2), np.ones(2)]).shape == (2, 2)
    stacked = stack_observations([{"a": np.zeros(3)}, {"a": np.ones(3)}])
    assert stacked["a"].shape == (2, 3)


def test_check_opponent_action_returns_plain_ints_and_arrays():
    policy = RandomPolicy(policy_id="p")
    assert check_opponent_action(policy, np.int64(2), spaces.Discrete(3), None, "s") == 2
    box = spaces.Box(0.0, 1.0, (2,), np.float32)
    out = check_opponent_action(policy, [0.5, 0.25], box, None, "s")
    assert out.dtype == np.float32 and out.shape == (2,)
    with pytest.raises(ValueError, match=r"Opponent 'p' in seat 's' returned action"):
        check_opponent_action(policy, [2.0, 0.0], box, None, "s")
