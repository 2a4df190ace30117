"""Specification of the vector env's numpy fast path for off-policy opponents (issue #33).

DQN's Q-networks (Connect Four's ``Box`` board flattened as SB3's ``FlattenExtractor`` does, with
action masks) and SAC's or TQC's squashed-Gaussian actors (``Box`` actions rescaled from
``[-1, 1]``) are answered in numpy. The answers must be ``SB3Policy.act``'s: the same greedy legal
moves; the same ``Box`` actions to float rounding, a sampled action's noise drawn row by row from
each env copy's own generator; each kind of network checked once against ``SB3Policy.act``, and a
wrong numpy answer caught by that check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import make_connect_four
from gymnasium import spaces
from pettingzoo import ParallelEnv
from stable_baselines3 import DQN, SAC

from sp_wrappers.core.policies import SB3Policy
from sp_wrappers.envs.vector import fast_path
from sp_wrappers.envs.vector.fast_path import FastSB3, NumpyPlan, RowGenerators
from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv

sb3_contrib = pytest.importorskip("sb3_contrib")

LOW = np.array([-2.0, 0.0], np.float32)
HIGH = np.array([3.0, 5.0], np.float32)


class PointGame(ParallelEnv):
    """Both players see a (2, 3) board of cues and answer with a point in a Box that is not
    ``[-1, 1]``, so the actor's actions are rescaled; 4 rounds a game, each rewarding the
    difference between the players' coordinate sums (the reward shows the opponent's action)."""

    metadata = {"name": "point_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode
        self.possible_agents = ["p0", "p1"]
        self.agents: list[str] = []
        self._obs = spaces.Box(-1.0, 1.0, (2, 3), np.float32)
        self._act = spaces.Box(LOW, HIGH, dtype=np.float32)
        self._rng = np.random.default_rng()
        self._round = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs

    def action_space(self, agent: str) -> spaces.Space:
        return self._act

    def _observe(self) -> dict[str, np.ndarray]:
        cue = self._rng.uniform(-1, 1, (2, 3)).astype(np.float32)
        return {a: cue.copy() for a in self.agents}

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self._round = 0
        return self._observe(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple:
        first = float(np.asarray(actions["p0"]).sum() - np.asarray(actions["p1"]).sum())
        self._round += 1
        done = self._round >= 4
        obs = self._observe()
        flags = {a: done for a in self.agents}
        truncated = {a: False for a in self.agents}
        infos = {a: {} for a in self.agents}
        if done:
            self.agents = []
        return obs, {"p0": first, "p1": -first}, flags, truncated, infos


def actor_model(cls: Any = SAC) -> Any:
    env = SelfPlayVecEnv(PointGame, 1)
    model = cls("MlpPolicy", env, seed=0, policy_kwargs={"net_arch": [32, 16]})
    with torch.no_grad():  # a wide spread of means and stds, inside the clamp and beyond it
        model.policy.actor.log_std.bias.copy_(torch.tensor([1.0, -25.0]))
    return model


def point_obs(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, 2, 3)).astype(np.float32)


def assert_close_actions(fast: np.ndarray, expected: np.ndarray) -> None:
    """Equal to float rounding: numpy's and torch's float32 matrix products may differ in the
    last bit; a wrong formula (no tanh, no rescale, another clamp) is off by far more."""
    assert fast.shape == expected.shape and fast.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(fast, expected, rtol=0, atol=1e-5)


# -- DQN on Connect Four ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dqn_model() -> DQN:
    env = SelfPlayVecEnv(make_connect_four, 1)
    return DQN("MlpPolicy", env, learning_starts=16, buffer_size=1000, seed=0)


def connect_four_rows(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    obs = rng.integers(0, 2, (n, 6, 7, 2)).astype(np.int8)
    masks = rng.random((n, 7)) < 0.6
    masks[:, 3] = True
    return obs, masks


@pytest.mark.parametrize("deterministic", [True, False])
def test_dqn_connect_four_opponents_are_answered_in_numpy_as_their_own_act(
    dqn_model, deterministic
):
    opponent = SB3Policy(dqn_model, deterministic=deterministic)
    obs, masks = connect_four_rows(64)
    fast = FastSB3()
    plan = fast.route(opponent, obs, masks)
    assert isinstance(plan, NumpyPlan)
    assert (plan.scoring, plan.n_outputs, plan.head) == ("q", 7, None)
    expected = opponent.act(obs, masks, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    np.testing.assert_array_equal(fast.act(opponent, obs, masks, rng), expected)
    assert masks[np.arange(64), expected].all()
    generators = [np.random.default_rng(i) for i in range(64)]
    parts = [(plan, obs, masks, deterministic, generators, list(range(64)))]
    np.testing.assert_array_equal(fast.sample_merged(parts, plan.scoring), expected)


def test_routes_follow_weights_given_new_storage_and_go_with_their_network(dqn_model):
    """A network's route is kept between steps; weights moved to new storage (``.to``) get a
    new numpy plan, and the kept route goes when the network does."""
    import gc

    opponent = SB3Policy(dqn_model, deterministic=True)
    obs, masks = connect_four_rows(32, seed=2)
    fast = FastSB3()
    first = fast.route(opponent, obs, masks)
    assert fast.route(opponent, obs, masks) is first
    with torch.no_grad():
        for p in opponent.policy.parameters():
            p.data = p.data + 0.5 * torch.randn_like(p)  # new storage, as a move would give
    second = fast.route(opponent, obs, masks)
    assert isinstance(second, NumpyPlan) and second is not first
    np.testing.assert_array_equal(
        fast.act(opponent, obs, masks, None), opponent.act(obs, masks, None)
    )
    assert len(fast._routes) == 1
    del opponent, first, second
    gc.collect()
    assert fast._routes == {}


def count_acts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count ``SB3Policy.act`` calls from here on: the batch size of each call."""
    calls: list[int] = []
    act = SB3Policy.act

    def counted(self: SB3Policy, obs: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(obs))
        return act(self, obs, *args, **kwargs)

    monkeypatch.setattr(SB3Policy, "act", counted)
    return calls


def test_dqn_opponents_in_the_vector_env_take_the_fast_path_after_one_check(dqn_model, monkeypatch):
    calls = count_acts(monkeypatch)
    env = SelfPlayVecEnv(make_connect_four, 4, opponent=SB3Policy(dqn_model, policy_id="dqn"))
    env.seed(0)
    env.reset()
    for _ in range(30):
        env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
    verified = env._batches.fast._verified
    assert [(kind[-1], numpy) for kind, numpy in verified] == [("q", True)]
    assert list(verified.values()) == [True]
    assert len(calls) == 1  # the one check; every answer after it came from numpy


# -- SAC and TQC: squashed-Gaussian actors ---------------------------------------------------------
@pytest.fixture(scope="module", params=["SAC", "TQC"])
def actor(request) -> Any:
    return actor_model(SAC if request.param == "SAC" else sb3_contrib.TQC)


def test_deterministic_actor_answers_are_the_tanh_of_the_mean_rescaled_as_act_gives_them(actor):
    opponent = SB3Policy(actor, deterministic=True)
    obs = point_obs(40)
    fast = FastSB3()
    plan = fast.route(opponent, obs, None)
    assert isinstance(plan, NumpyPlan)
    assert plan.scoring == "gaussian" and plan.n_outputs == 2 and plan.head is not None
    expected = opponent.act(obs, None, None)
    fast_actions = fast.act(opponent, obs, None, None)
    assert_close_actions(fast_actions, expected)
    with torch.no_grad():  # the formula itself: tanh(mu(latent)), rescaled to [LOW, HIGH]
        mean = opponent.policy.actor(torch.as_tensor(obs), deterministic=True).numpy()
    np.testing.assert_allclose(fast_actions, LOW + (mean + 1) / 2 * (HIGH - LOW), atol=1e-5)
    assert ((fast_actions >= LOW) & (fast_actions <= HIGH)).all()


def test_sampled_actor_answers_draw_each_rows_noise_from_its_own_generator(actor):
    """Row ``i`` of a batched answer is what copy ``i``'s policy would play alone with copy
    ``i``'s generator, and leaves that generator exactly where ``SB3Policy.act`` leaves it."""
    opponent = SB3Policy(actor, deterministic=False)
    obs = point_obs(12, seed=3)
    fast = FastSB3()
    plan = fast.route(opponent, obs, None)
    assert isinstance(plan, NumpyPlan) and plan.scoring == "gaussian"
    mine = [np.random.default_rng(100 + i) for i in range(12)]
    theirs = [np.random.default_rng(100 + i) for i in range(12)]
    batched = fast.act_with_plan(opponent, obs, None, RowGenerators(mine), plan)
    alone = np.concatenate([opponent.act(obs[i : i + 1], None, g) for i, g in enumerate(theirs)])
    assert_close_actions(batched, alone)
    assert [g.bit_generator.state for g in mine] == [g.bit_generator.state for g in theirs]
    again = fast.act_with_plan(opponent, obs, None, np.random.default_rng(5), plan)
    assert_close_actions(again, opponent.act(obs, None, np.random.default_rng(5)))
    assert len(np.unique(batched[:, 0])) == 12  # sampled: the noise is there


def test_actor_groups_of_one_step_answered_at_once_give_each_row_its_own_act():
    """Several actors (the sampler's snapshots: sampled and deterministic ones) in one step are
    squashed and rescaled in one pass; each row still gets what its policy would play alone with
    its copy's generator, in its place, and each generator ends where that call leaves it."""
    from sp_wrappers.envs.vector.batching import OpponentBatches, OpponentRow

    batches = OpponentBatches(PointGame(), keep_dict_obs=False)
    first, second = actor_model(), actor_model()
    with torch.no_grad():
        for p in second.policy.actor.parameters():
            p.add_(0.3 * torch.randn_like(p))
    policies = [
        SB3Policy(first, policy_id="a"),
        SB3Policy(second, policy_id="b"),
        SB3Policy(second, deterministic=True, policy_id="b-det"),
    ]
    obs = point_obs(9, seed=7)
    order = [0, 1, 2, 1, 0, 2, 2, 0, 1]  # groups interleaved across the rows
    rows = [
        OpponentRow(policies[k], "p1", obs[i], None, np.random.default_rng(50 + i), (i, 0, "p1"))
        for i, k in enumerate(order)
    ]
    batches.answer(rows[:1])  # the check of the network kind, out of the way
    rows = [row._replace(rng=np.random.default_rng(50 + i)) for i, row in enumerate(rows)]
    theirs = [np.random.default_rng(50 + i) for i in range(9)]
    answers = batches.answer(rows)
    for i, k in enumerate(order):
        alone = policies[k].act(obs[i : i + 1], None, theirs[i])[0]
        assert_close_actions(np.asarray(answers[i]), alone)
        assert rows[i].rng.bit_generator.state == theirs[i].bit_generator.state
    assert len(batches.fast._verified) == 1 and list(batches.fast._verified.values()) == [True]


def test_actor_answers_follow_weights_loaded_in_place(actor):
    opponent = SB3Policy(actor, deterministic=True)
    other = SB3Policy(actor_model(type(actor)), deterministic=True)
    with torch.no_grad():
        for p in other.policy.actor.parameters():
            p.add_(0.5 * torch.randn_like(p))
    obs = point_obs(16)
    fast = FastSB3()
    before = fast.act(opponent, obs, None, None)
    opponent.load_state_dict(other.state_dict())  # as the sampler's latest weights
    after = fast.act(opponent, obs, None, None)
    assert_close_actions(after, opponent.act(obs, None, None))
    assert not np.allclose(before, after)


def test_sac_opponents_in_the_vector_env_take_the_fast_path_after_one_check(monkeypatch):
    model = actor_model()
    calls = count_acts(monkeypatch)
    opponent = SB3Policy(model, policy_id="sac")
    env = SelfPlayVecEnv(PointGame, 4, opponent=opponent)
    env.seed(0)
    env.reset()
    for _ in range(12):
        env.step(np.tile((LOW + HIGH) / 2, (4, 1)))
    verified = env._batches.fast._verified
    assert [(kind[-1], numpy) for kind, numpy in verified] == [("gaussian", True)]
    assert list(verified.values()) == [True]
    assert len(calls) == 1  # the one check; every answer after it came from numpy


def test_sac_copies_in_the_vector_env_play_as_their_own_act_would(monkeypatch):
    """The env's opponents, answered in numpy, take the actions SB3Policy.act gives for each
    copy's observation and generator (the vector env seeded alike both times)."""
    model = actor_model()

    def play(fast: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if not fast:
            monkeypatch.setattr(FastSB3, "route", lambda *args: None)
        env = SelfPlayVecEnv(PointGame, 3, opponent=SB3Policy(model, policy_id="sac"))
        env.seed(4)
        observations, rewards = [env.reset()], []
        for _ in range(10):
            obs, reward, _, _ = env.step(np.tile(HIGH, (3, 1)))
            observations.append(obs)
            rewards.append(reward)  # HIGH's sum minus the opponent's action's sum
        return observations, rewards

    fast_obs, fast_rewards = play(True)
    act_obs, act_rewards = play(False)
    for a, b in zip(fast_obs, act_obs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.array(fast_rewards), np.array(act_rewards), rtol=0, atol=1e-5)
    assert len(np.unique(np.round(fast_rewards, 3))) > 10  # the opponents' actions vary


def test_a_wrong_numpy_actor_answer_is_caught_by_the_check(monkeypatch):
    model = actor_model()
    opponent = SB3Policy(model, deterministic=True)
    original = fast_path._squashed_gaussian_actions

    def off(*args: Any) -> np.ndarray:
        return original(*args) + np.float32(1e-3)  # e.g. a missed clamp: slightly off

    monkeypatch.setattr(fast_path, "_squashed_gaussian_actions", off)
    fast = FastSB3()
    obs = point_obs(4)
    assert fast.route(opponent, obs, None) is None  # SB3Policy.act answers instead
    assert fast.act(opponent, obs, None, None) is None
    assert list(fast._verified.values()) == [False]


def test_gsde_and_td3_actors_stay_on_their_own_act():
    from stable_baselines3 import TD3

    env = SelfPlayVecEnv(PointGame, 1)
    obs = point_obs(3)
    for model in (
        SAC("MlpPolicy", env, seed=0, use_sde=True, policy_kwargs={"net_arch": [8]}),
        TD3("MlpPolicy", env, seed=0, policy_kwargs={"net_arch": [8]}),
    ):
        assert FastSB3().route(SB3Policy(model, deterministic=True), obs, None) is None


def test_wide_layers_take_a_few_rows_one_by_one_with_the_same_answers():
    # SB3's default actor ([256, 256]): its middle layer is wide enough for the row-by-row
    # product; each row's answer is still its own act's, whatever the number of rows.
    model = SAC("MlpPolicy", SelfPlayVecEnv(PointGame, 1), seed=0)
    layers = [m for m in model.policy.actor.latent_pi if isinstance(m, torch.nn.Linear)]
    assert max(m.weight.numel() for m in layers) >= fast_path._ROW_BY_ROW_WEIGHTS
    opponent = SB3Policy(model, deterministic=True)
    fast = FastSB3()
    for rows in (1, 2, 3, 8, fast_path._ROW_BY_ROW_ROWS + 1):
        obs = point_obs(rows, seed=rows)
        assert_close_actions(fast.act(opponent, obs, None, None), opponent.act(obs, None, None))
    x = np.random.default_rng(0).standard_normal((3, 256)).astype(np.float32)
    weight_t = layers[1].weight.detach().numpy().T
    by_row = fast_path._linear(x, weight_t)
    assert by_row.dtype == np.float32 and by_row.shape == (3, 256)
    np.testing.assert_allclose(by_row, x @ weight_t, rtol=1e-5, atol=1e-5)
