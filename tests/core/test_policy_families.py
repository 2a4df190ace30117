"""Specification: every SB3 / sb3-contrib policy family plays as an opponent, masked.

Actor-critic (PPO, A2C, TRPO, MaskablePPO), Q-networks (DQN, QRDQN), recurrent (RecurrentPPO),
ARS (linear and MLP), Box actors (SAC, TD3, DDPG, TQC, CrossQ) and a user's own ``BasePolicy``
subclass (the slow ``predict`` path). Real learners on real games; the learner matrix (train,
snapshot, reload in a fresh process, play) is in ``test_learner_matrix.py``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import stable_baselines3 as sb3
import torch
from gymnasium import spaces
from pettingzoo.classic import tictactoe_v3
from stable_baselines3.common.policies import BasePolicy

sb3_contrib = pytest.importorskip("sb3_contrib")

from sp_wrappers import (  # noqa: E402
    OpponentSampler,
    RandomPolicy,
    SB3Policy,
    SelfPlayCallback,
    SelfPlayEnv,
    SelfPlayVecEnv,
    SnapshotArchive,
    play_match,
)
from sp_wrappers.core.policies import PolicyPlayer  # noqa: E402
from sp_wrappers.envs.vector.fast_path import FastSB3  # noqa: E402

torch.set_num_threads(1)

# name -> (learner class, policy, constructor arguments) for the Discrete-action families
DISCRETE = {
    "PPO": (sb3.PPO, "MlpPolicy", {"n_steps": 32, "batch_size": 32}),
    "A2C": (sb3.A2C, "MlpPolicy", {"n_steps": 8}),
    "TRPO": (sb3_contrib.TRPO, "MlpPolicy", {"n_steps": 32, "batch_size": 32}),
    "MaskablePPO": (sb3_contrib.MaskablePPO, "MlpPolicy", {"n_steps": 32, "batch_size": 32}),
    "DQN": (sb3.DQN, "MlpPolicy", {"learning_starts": 16, "buffer_size": 1000}),
    "QRDQN": (sb3_contrib.QRDQN, "MlpPolicy", {"learning_starts": 16, "buffer_size": 1000}),
    "ARS": (sb3_contrib.ARS, "MlpPolicy", {"n_delta": 2}),
    "ARSLinear": (sb3_contrib.ARS, "LinearPolicy", {"n_delta": 2}),
    "RecurrentPPO": (
        sb3_contrib.RecurrentPPO,
        "MlpLstmPolicy",
        {"n_steps": 32, "batch_size": 32, "policy_kwargs": {"lstm_hidden_size": 16}},
    ),
}
FAMILY = {
    "PPO": "actor_critic",
    "A2C": "actor_critic",
    "TRPO": "actor_critic",
    "MaskablePPO": "actor_critic",
    "DQN": "q_network",
    "QRDQN": "q_network",
    "ARS": "ars",
    "ARSLinear": "ars",
    "RecurrentPPO": "recurrent",
}


def discrete_model(name: str, env: Any = None, seed: int = 0) -> Any:
    cls, policy, kwargs = DISCRETE[name]
    env = env if env is not None else SelfPlayEnv(tictactoe_v3.env())
    return cls(policy, env, seed=seed, **kwargs)


def prefer_action(policy: Any, action: int) -> None:
    """Make ``action`` the policy's clear favourite on all-ones observations: the last layer of
    its head (logits, Q-values, quantiles or ARS outputs) favours it by a wide margin."""
    for name in ("quantile_net", "q_net", "action_net"):
        head = getattr(policy, name, None)
        if head is not None:
            break
    layer = [m for m in head.modules() if isinstance(m, torch.nn.Linear)][-1]
    n_out = layer.weight.shape[0]
    favoured = [i for i in range(n_out) if i % 9 == action]  # QRDQN: (quantile, action) rows
    with torch.no_grad():
        layer.weight.zero_()
        if layer.bias is None:  # ARS's linear policy: the all-ones input drives it
            layer.weight[favoured] = 5.0
        else:
            layer.bias.zero_()
            layer.bias[favoured] = 20.0


@pytest.mark.parametrize("name", sorted(DISCRETE))
@pytest.mark.parametrize("deterministic", [True, False])
def test_every_discrete_family_plays_only_legal_moves_even_when_it_prefers_an_illegal_one(
    name, deterministic
):
    model = discrete_model(name)
    prefer_action(model.policy, 4)
    opponent = SB3Policy(model, deterministic=deterministic, policy_id=name)
    assert opponent.family == FAMILY[name]
    obs = np.ones((64, *model.observation_space.shape), dtype=np.float32)
    player = PolicyPlayer(SB3Policy(model, deterministic=True))  # a recurrent one needs it
    free = player.act(obs[:1], None, np.random.default_rng(0))
    assert free.tolist() == [4]  # it does prefer the centre
    rng = np.random.default_rng(1)
    masks = rng.random((64, 9)) < 0.5
    masks[:, 4] = False  # ... which is never legal here
    masks[np.arange(64), rng.integers(0, 9, 64) % 4] = True
    actions = PolicyPlayer(opponent).act(obs, masks, np.random.default_rng(2))
    assert actions.shape == (64,)
    assert masks[np.arange(64), actions].all()


def test_q_network_opponents_take_the_greedy_legal_action():
    model = discrete_model("QRDQN")
    prefer_action(model.policy, 4)
    with torch.no_grad():
        model.policy.quantile_net.quantile_net[-1].bias.view(-1, 9)[:, 7] = 10.0
    masks = np.ones((3, 9), dtype=bool)
    masks[:, 4] = False
    obs = np.zeros((3, *model.observation_space.shape), dtype=np.float32)
    sampled = SB3Policy(model, deterministic=False).act(obs, masks, np.random.default_rng(0))
    assert sampled.tolist() == [7, 7, 7]  # greedy: the second-best Q-value, every time


def test_recurrent_opponent_keeps_its_lstm_state_per_key_and_starts_fresh_for_a_new_one():
    model = discrete_model("RecurrentPPO")
    opponent = SB3Policy(model, deterministic=True)
    rng = np.random.default_rng(0)
    steps = [rng.normal(size=(32, *model.observation_space.shape)).astype(np.float32) * 3]
    steps += [rng.normal(size=steps[0].shape).astype(np.float32) * 3 for _ in range(4)]
    keys = [("game", i) for i in range(32)]
    state, starts = None, np.ones(32, dtype=bool)
    stateless_differs = False
    for obs in steps:
        ours = opponent.act(obs, None, None, state_keys=keys)
        expected, state = model.predict(obs, state, starts, deterministic=True)
        fresh, _ = model.predict(obs, None, np.ones(32, dtype=bool), deterministic=True)
        stateless_differs |= not np.array_equal(fresh, expected)
        starts = np.zeros(32, dtype=bool)
        assert np.array_equal(ours, expected)
    assert stateless_differs  # the state mattered, so the comparison above means something
    new_keys = [("next game", i) for i in range(32)]
    fresh, _ = model.predict(steps[0], None, np.ones(32, dtype=bool), deterministic=True)
    assert np.array_equal(opponent.act(steps[0], None, None, state_keys=new_keys), fresh)


def test_recurrent_snapshot_plays_a_vector_env_and_a_match():
    model = discrete_model("RecurrentPPO")
    opponent = SB3Policy(model, policy_id="lstm")
    env = SelfPlayVecEnv(tictactoe_v3.env, n_envs=3, opponent=opponent)
    env.reset()
    for _ in range(30):
        masks = np.stack(env.env_method("action_masks"))
        env.step(masks.argmax(axis=1))
    seats = {key[2] for key in opponent._states}
    assert seats == {"player_1", "player_2"}
    result = play_match(tictactoe_v3.env, opponent, RandomPolicy(), 6, seed=0)
    assert result.n_games == 6


# -- continuous actors ---------------------------------------------------------------------------
BOX = {
    "SAC": (sb3.SAC, {}),
    "TD3": (sb3.TD3, {}),
    "DDPG": (sb3.DDPG, {}),
    "TQC": (sb3_contrib.TQC, {}),
    "CrossQ": (sb3_contrib.CrossQ, {}),
}


@pytest.mark.parametrize("name", sorted(BOX))
def test_box_actor_acts_in_its_seat_range_reproducibly_and_refuses_a_masked_game(name):
    cls, kwargs = BOX[name]
    env = gym.make("Pendulum-v1")  # Box(-2, 2) actions: SB3 squashes to [-1, 1] and unscales
    model = cls("MlpPolicy", env, learning_starts=0, buffer_size=100, seed=0, **kwargs)
    opponent = SB3Policy(model, policy_id=name)
    assert opponent.family == "actor"
    obs = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)
    a = opponent.act(obs, None, np.random.default_rng(5))
    b = opponent.act(obs, None, np.random.default_rng(5))
    assert a.shape == (50, 1) and np.array_equal(a, b)
    assert (np.abs(a) <= 2.0).all()
    deterministic = SB3Policy(model, deterministic=True).act(obs, None, None)
    expected, _ = model.predict(obs, deterministic=True)
    np.testing.assert_allclose(deterministic, expected, rtol=1e-5, atol=1e-5)
    if name in ("SAC", "TQC", "CrossQ"):  # sampled: spread out like SB3's own samples
        assert np.abs(a - deterministic).max() > 1e-3
    with pytest.raises(ValueError, match=r"'actor' family \(SAC, TD3, DDPG, TQC, CrossQ\).*DQN"):
        env = SelfPlayEnv(tictactoe_v3.env(), opponent=opponent)
        env.reset(seed=0)


# -- a family of the user's own ------------------------------------------------------------------
class AlwaysZero(BasePolicy):
    """A user's own SB3 policy class, of no family sp_wrappers knows: always plays move 0."""

    def __init__(self, observation_space: Any, action_space: Any, lr_schedule: Any = None) -> None:
        super().__init__(observation_space, action_space)
        self.layer = torch.nn.Linear(1, 1)

    def _predict(self, observation: Any, deterministic: bool = False) -> Any:
        return torch.zeros(len(observation), dtype=torch.long)


class Broken(AlwaysZero):
    def _predict(self, observation: Any, deterministic: bool = False) -> Any:
        return self.layer(observation)  # wrong width: torch raises deep inside


def test_unknown_policy_family_plays_legal_moves_through_predict_with_a_one_time_note():
    game_space = SelfPlayEnv(tictactoe_v3.env()).observation_space
    policy = AlwaysZero(game_space, spaces.Discrete(9))
    opponent = SB3Policy(policy, policy_id="mine")
    assert opponent.family == "unknown"
    masks = np.ones((4, 9), dtype=bool)
    masks[2:, 0] = False
    obs = np.zeros((4, *game_space.shape), dtype=np.float32)
    with pytest.warns(RuntimeWarning, match="slow path"):
        actions = opponent.act(obs, masks, np.random.default_rng(0))
    assert actions[:2].tolist() == [0, 0] and masks[np.arange(4), actions].all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the note comes once
        opponent.act(obs, masks, np.random.default_rng(0))
    env = SelfPlayEnv(tictactoe_v3.env(), opponent=opponent)
    env.reset(seed=0)
    for _ in range(5):
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[-1]))
        if done:
            env.reset()


def test_unknown_policy_that_fails_names_itself_and_the_fix_not_torch():
    game_space = SelfPlayEnv(tictactoe_v3.env()).observation_space
    opponent = SB3Policy(Broken(game_space, spaces.Discrete(9)), policy_id="broken")
    with pytest.raises(TypeError, match=r"'broken'.*Broken.predict\(\) failed.*subclass"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opponent.act(np.zeros((2, *game_space.shape), np.float32), None, None)


# -- the fast path -------------------------------------------------------------------------------
def test_fast_path_checks_each_class_per_action_space_not_per_class_alone():
    """Issue 23: one network class acting in a Discrete seat and in a Box one. The check made
    for the Discrete one must not send the Box one down the logits path."""
    from stable_baselines3.common.policies import ActorCriticPolicy

    obs_space = spaces.Box(-1.0, 1.0, (3,), np.float32)
    discrete = ActorCriticPolicy(obs_space, spaces.Discrete(4), lambda _: 1e-3)
    box = ActorCriticPolicy(obs_space, spaces.Box(-1.0, 1.0, (4,), np.float32), lambda _: 1e-3)
    fast = FastSB3()
    obs = np.zeros((5, 3), dtype=np.float32)
    assert fast.route(SB3Policy(discrete), obs, None) is not None
    box_opponent = SB3Policy(box, deterministic=True)
    assert fast.act(box_opponent, obs, None, np.random.default_rng(0)) is None
    assert box_opponent.act(obs, None, None).shape == (5, 4)


@pytest.mark.parametrize("deterministic", [True, False])
def test_dqn_fast_path_takes_the_same_greedy_legal_actions_as_the_opponent(deterministic):
    model = discrete_model("DQN")
    opponent = SB3Policy(model, deterministic=deterministic)
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 2, (40, *model.observation_space.shape)).astype(np.float32)
    masks = rng.random((40, 9)) < 0.5
    masks[:, 0] = True
    fast = FastSB3()
    assert isinstance(fast.route(opponent, obs, masks), list)  # the numpy plan
    expected = opponent.act(obs, masks, np.random.default_rng(1))
    assert np.array_equal(fast.act(opponent, obs, masks, np.random.default_rng(1)), expected)
    plan = fast.route(opponent, obs, masks)
    parts = [(plan, obs, masks, deterministic, [np.random.default_rng(i) for i in range(40)], [])]
    assert np.array_equal(fast.sample_merged(parts, "q"), expected)


def test_dqn_and_qrdqn_opponents_in_a_vector_env_are_answered_without_error():
    """`sp-wrappers train connect_four_v3 --algo dqn` failed in the fast path."""
    for name in ("DQN", "QRDQN"):
        opponent = SB3Policy(discrete_model(name), policy_id=name)
        env = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4, opponent=opponent)
        env.reset()
        for _ in range(20):
            env.step(np.stack(env.env_method("action_masks")).argmax(axis=1))


# -- custom classes: trust -----------------------------------------------------------------------
EXTRACTOR = """
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

class BoardNet(BaseFeaturesExtractor):
    def __init__(self, observation_space, features_dim=16):
        super().__init__(observation_space, features_dim)
        n = 1
        for size in observation_space.shape:
            n *= size
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(n, features_dim))

    def forward(self, observations):
        return torch.relu(self.net(observations))
"""


def test_custom_extractor_trains_with_its_snapshots_and_a_fresh_process_is_shown_the_call(
    tmp_path, monkeypatch
):
    (tmp_path / "myboardnet.py").write_text(EXTRACTOR)
    monkeypatch.syspath_prepend(str(tmp_path))
    import myboardnet

    archive = SnapshotArchive(tmp_path / "archive")
    sampler = OpponentSampler(archive, latest_ratio=0.0, seed=0)
    model = sb3.PPO(
        "MlpPolicy",
        SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, opponent=sampler),
        n_steps=32,
        batch_size=32,
        policy_kwargs={"features_extractor_class": myboardnet.BoardNet},
        seed=0,
    )
    model.learn(192, callback=SelfPlayCallback(archive, save_every=32))  # draws its snapshots
    assert len(archive) >= 3
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from sp_wrappers import SnapshotArchive
        from sp_wrappers.archive.store import PolicySpecError
        try:
            SnapshotArchive({str(tmp_path / "archive")!r}).load_policy("snapshot-0000")
        except PolicySpecError as error:
            print("REFUSED", error)
        archive = SnapshotArchive({str(tmp_path / "archive")!r}, trusted_modules=["myboardnet."])
        print("LOADED", [archive.load_policy(i).policy_id for i in archive][:2])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    call = f"SnapshotArchive({str(tmp_path / 'archive')!r}, trusted_modules=['myboardnet.'])"
    assert "REFUSED" in out.stdout and call in out.stdout
    assert "LOADED ['snapshot-0000', 'snapshot-0001']" in out.stdout


def test_trusted_modules_add_to_the_defaults(tmp_path):
    from sp_wrappers.archive.policy_spec import TRUSTED_MODULES

    archive = SnapshotArchive(tmp_path / "a", trusted_modules=["myboardnet."])
    assert archive.trusted_modules == (*TRUSTED_MODULES, "myboardnet.")
    model = discrete_model("PPO")
    archive.save(model, step=0)
    assert archive.load_policy("snapshot-0000").family == "actor_critic"  # SB3 still trusted


def test_an_ars_linear_snapshot_spec_written_before_the_fix_still_builds():
    from sp_wrappers.archive.policy_spec import build_policy, policy_spec

    model = discrete_model("ARSLinear")
    old = policy_spec(model.policy)
    old["kwargs"] = {
        "net_arch": [],
        "activation_fn": {"__class__": "torch.nn.modules.activation:ReLU"},
    }  # what 0.2 stored for ARS's LinearPolicy
    rebuilt = build_policy(old)
    rebuilt.load_state_dict(model.policy.state_dict(), strict=True)
    assert type(rebuilt).__name__ == "ARSLinearPolicy"
