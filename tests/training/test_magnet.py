"""``MagnetCallback``: R-NaD's reward transform for on-policy SB3 learners, with real learners.

The penalty it subtracts is the KL it logs, the advantages it corrects are those GAE computes from
the penalised rewards, a refresh copies the learner's weights, masked moves get no probability
under the magnet, and its state file restores the magnet exactly.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch as th

pytest.importorskip("pyspiel")

from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger

from sp_wrappers import SelfPlayVecEnv
from sp_wrappers.games.openspiel_games import kuhn_poker
from sp_wrappers.training.errors import MagnetError
from sp_wrappers.training.magnet import MagnetCallback, MagnetSettings, read_magnet_state


class Capture(KVWriter):
    """Every value the logger writes, in order."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def write(self, key_values, key_excluded, step=0) -> None:
        self.rows.append(dict(key_values))


class BeforeMagnet(BaseCallback):
    """Copies the rollout buffer at the rollout's end, before the magnet changes it."""

    def __init__(self) -> None:
        super().__init__()
        self.buffers: list = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.buffers.append(copy.deepcopy(self.model.rollout_buffer))


class AfterMagnet(BaseCallback):
    """At the rollout's end, after the magnet: the buffer, the policy's weights, the last values."""

    def __init__(self, magnet: MagnetCallback) -> None:
        super().__init__()
        self.magnet = magnet
        self.seen: list[dict] = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        buffer = self.model.rollout_buffer
        self.seen.append(
            {
                "buffer": copy.deepcopy(buffer),
                "policy": {k: v.clone() for k, v in self.model.policy.state_dict().items()},
                "last_values": self.locals["values"].clone(),
                "dones": np.array(self.locals["dones"]),
                "refreshes": self.magnet.refreshes,
            }
        )


def kuhn_env(n_envs: int = 2) -> SelfPlayVecEnv:
    env = SelfPlayVecEnv(kuhn_poker, n_envs=n_envs, learner="random")
    env.seed(0)
    return env


def log_probs(policy, buffer) -> np.ndarray:
    """``log policy(a|s)`` of the buffer's actions, computed here, apart from the callback."""
    obs = th.as_tensor(buffer.observations.reshape(-1, *buffer.observations.shape[2:]))
    actions = th.as_tensor(buffer.actions.reshape(-1)).long()
    with th.no_grad():
        return policy.get_distribution(obs).log_prob(actions).numpy().reshape(buffer.rewards.shape)


def test_the_penalty_it_subtracts_is_the_kl_it_logs_and_gae_agrees():
    model = PPO("MlpPolicy", kuhn_env(), n_steps=64, batch_size=64, n_epochs=2, seed=0)
    capture = Capture()
    model.set_logger(Logger(folder=None, output_formats=[capture]))
    magnet = MagnetCallback(kl=0.5, refresh=100)  # no refresh: the magnet is the first policy
    before, after = BeforeMagnet(), AfterMagnet(magnet)
    model.learn(64 * 2 * 3, callback=[before, magnet, after])
    logged = [row["magnet/kl"] for row in capture.rows if "magnet/kl" in row]
    assert len(logged) == 3 and logged[-1] == magnet.last_kl
    assert logged[0] == pytest.approx(0.0, abs=1e-6)  # the magnet is the policy that collected
    assert abs(logged[-1]) > 1e-4  # two updates later they differ
    for raw, seen, kl in zip(before.buffers, after.seen, logged, strict=True):
        penalised = seen["buffer"]
        penalty = raw.rewards - penalised.rewards
        # the penalty is kl * (log pi - log magnet), both computed here, and its mean is the KL
        collector = copy.deepcopy(magnet.members[0])  # the policy that collected this rollout
        collector.load_state_dict(seen["policy"])
        gap = log_probs(collector, raw) - log_probs(magnet.members[0], raw)
        np.testing.assert_allclose(penalty, 0.5 * gap, rtol=1e-4, atol=1e-6)
        assert float(penalty.mean()) / 0.5 == pytest.approx(kl, rel=1e-5, abs=1e-7)
        # the corrected advantages and returns are GAE's own from the penalised rewards
        fresh = copy.deepcopy(raw)
        fresh.rewards = penalised.rewards.copy()
        fresh.compute_returns_and_advantage(seen["last_values"], seen["dones"])
        np.testing.assert_allclose(penalised.advantages, fresh.advantages, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(penalised.returns, fresh.returns, rtol=1e-5, atol=1e-5)


def test_refreshing_copies_the_learners_weights_and_keeps_the_newest():
    model = MaskablePPO("MlpPolicy", kuhn_env(), n_steps=64, batch_size=64, seed=0)
    magnet = MagnetCallback(kl=0.1, refresh=1, average=2)
    after = AfterMagnet(magnet)
    model.learn(64 * 2 * 3, callback=[magnet, after])
    assert magnet.refreshes == 3 and [s["refreshes"] for s in after.seen] == [1, 2, 3]
    assert len(magnet.members) == 2
    for member, seen in zip(magnet.members, after.seen[-2:], strict=True):
        weights = member.state_dict()
        assert all(th.equal(weights[k], v) for k, v in seen["policy"].items())
    current = model.policy.state_dict()  # trained after the last refresh: the copy did not move
    newest = magnet.members[-1].state_dict()
    assert any(not th.equal(newest[k], v) for k, v in current.items())
    assert all(not p.requires_grad for p in magnet.members[-1].parameters())


def test_refresh_in_steps_counts_learner_steps():
    model = PPO("MlpPolicy", kuhn_env(), n_steps=64, batch_size=64, seed=0)
    magnet = MagnetCallback(kl=0.1, refresh=256, unit="steps")  # a rollout is 128 steps
    model.learn(128 * 5, callback=magnet)
    assert magnet.updates == 5 and magnet.refreshes == 2 and magnet.since == 1 * 128


class MaskCheck(BaseCallback):
    """At each rollout's end: the magnet's probabilities of every buffered state, masked."""

    def __init__(self, magnet: MagnetCallback) -> None:
        super().__init__()
        self.magnet = magnet
        self.illegal_mass: list[float] = []
        self.legal_mass: list[float] = []
        self.log_probs: list[np.ndarray] = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        buffer = self.model.rollout_buffer
        obs = th.as_tensor(buffer.observations.reshape(-1, *buffer.observations.shape[2:]))
        masks = buffer.action_masks.reshape(obs.shape[0], -1).astype(bool)
        assert (~masks).any()  # tic-tac-toe: most moves are illegal most of the time
        taken = buffer.actions.reshape(-1).astype(int)
        mixture = np.zeros(len(taken))
        for member in self.magnet.members:
            with th.no_grad():
                dist = member.get_distribution(obs, action_masks=masks).distribution
            probs = dist.probs.numpy()
            self.illegal_mass.append(float(probs[~masks].max()))
            self.legal_mass.append(float(np.abs(probs.sum(axis=1) - 1).max()))
            mixture += probs[np.arange(len(taken)), taken] / len(self.magnet.members)
        computed = self.magnet.magnet_log_prob(
            buffer.observations, buffer.actions, buffer.action_masks
        )
        # the magnet the callback uses is the masked mixture (unmasked, legal moves get less)
        np.testing.assert_allclose(computed.reshape(-1), np.log(mixture), rtol=1e-5, atol=1e-6)
        self.log_probs.append(computed)


def test_a_masked_move_never_gets_probability_under_the_magnet():
    env = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, illegal_action="raise")
    env.seed(0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0)
    magnet = MagnetCallback(kl=1.0, refresh=1, average=2)  # a mixture of two policies
    check = MaskCheck(magnet)
    model.learn(64 * 2 * 4, callback=[magnet, check])  # "raise": no illegal move was played
    assert len(magnet.members) == 2 and check.illegal_mass
    assert max(check.illegal_mass) == 0.0 and max(check.legal_mass) < 1e-5
    assert all(np.isfinite(lp).all() and (lp <= 0).all() for lp in check.log_probs)
    assert np.isfinite(magnet.last_penalty).all()


def test_the_state_file_restores_the_magnet_exactly(tmp_path):
    path = tmp_path / "magnet.safetensors"
    model = MaskablePPO("MlpPolicy", kuhn_env(), n_steps=64, batch_size=64, seed=0)
    magnet = MagnetCallback(kl=0.1, refresh=2, average=2, state_path=path)
    model.learn(128 * 3, callback=magnet)
    magnet.save()  # at step 384, before the model: the pair a checkpoint writes
    first = [copy.deepcopy(m.state_dict()) for m in magnet.members]
    counters = (magnet.refreshes, magnet.updates, magnet.since)
    model.save(tmp_path / "model.zip")
    model.learn(128 * 2, callback=magnet, reset_num_timesteps=False)
    magnet.save()  # at step 640: the file keeps 384 too (a run cut off before model.zip)
    assert [s["step"] for s in read_magnet_state(path)["states"]] == [384, 640]

    resumed = MaskablePPO.load(tmp_path / "model.zip", env=kuhn_env())
    again = MagnetCallback(kl=0.1, refresh=2, average=2, state_path=path)
    again.init_callback(resumed)
    assert (again.refreshes, again.updates, again.since) == counters == (1, 3, 1)
    assert len(again.members) == len(first) == 2
    for member, weights in zip(again.members, first, strict=True):
        assert all(th.equal(member.state_dict()[k], v) for k, v in weights.items())
    resumed.learn(128, callback=again, reset_num_timesteps=False)  # its 4th update: a refresh
    assert again.refreshes == 2 and again.since == 0

    elsewhere = MaskablePPO("MlpPolicy", kuhn_env(), n_steps=64, batch_size=64, seed=1)
    elsewhere.num_timesteps = 128
    with pytest.raises(MagnetError, match=r"not at the model's step 128.*delete the file"):
        MagnetCallback(kl=0.1, refresh=2, state_path=path).init_callback(elsewhere)


def test_a_learner_it_cannot_regularise_is_refused_in_one_line():
    with pytest.raises(MagnetError, match="DQN is not one"):
        MagnetCallback(kl=0.1, refresh=2).init_callback(DQN("MlpPolicy", kuhn_env()))
    model = A2C("MlpPolicy", kuhn_env(), n_steps=8, seed=0)  # A2C's buffer is PPO's: it works
    magnet = MagnetCallback(kl=0.1, refresh=1)
    model.learn(64, callback=magnet)
    assert magnet.refreshes == 4 and math.isfinite(magnet.last_kl)


@pytest.mark.parametrize(
    "text, message",
    [
        ("kl=0.1", "needs refresh="),
        ("refresh=3", "needs kl="),
        ("kl=-1,refresh=3", "kl must be a number >= 0"),
        ("kl=0.1,refresh=0", "refresh must be a whole number >= 1"),
        ("kl=0.1,refresh=2.5", "refresh must be a whole number >= 1"),
        ("kl=0.1,refresh=3,unit=epochs", "unit must be one of updates, steps"),
        ("kl=0.1,refresh=3,average=0", "average must be a whole number >= 1"),
        ("kl=x,refresh=3", "kl must be a number"),
        ("kl=0.1,refresh=3,beta=2", "takes kl=ETA,refresh=N"),
        ("kl 0.1", "takes kl=ETA,refresh=N"),
    ],
)
def test_bad_settings_say_what_was_wrong(text, message):
    with pytest.raises(MagnetError, match=message):
        MagnetSettings.parse(text)


def test_settings_round_trip_through_json():
    settings = MagnetSettings.parse("kl=0.05,refresh=40,unit=updates,average=2")
    assert MagnetSettings.from_json(settings.to_json()) == settings
    assert MagnetSettings.from_json("kl=1,refresh=1").kl == 1.0


def test_psro_trains_each_best_response_with_the_magnet(tmp_path):
    from sp_wrappers.league.psro import PSRO, PSRO_STATE, PSROSettings, read_psro

    def responses(folder, magnet):
        models = []

        def make_model(venv, seed):
            models.append(MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, seed=seed))
            return models[-1]

        settings = PSROSettings(steps_per_iteration=256, n_envs=2, payoffs="exact", magnet=magnet)
        PSRO(kuhn_poker, make_model, folder, settings=settings).run(iterations=2)
        return models

    def penalised(model) -> bool:  # Kuhn pays whole chips: any fraction is the magnet's
        rewards = model.rollout_buffer.rewards
        return bool(np.abs(rewards - np.round(rewards)).max() > 1e-6)

    with_magnet = responses(tmp_path / "on", "kl=0.1,refresh=1")[1:]  # the first: untrained
    assert len(with_magnet) == 2 and all(penalised(m) for m in with_magnet)
    settings = read_psro(tmp_path / "on" / PSRO_STATE)["settings"]
    assert settings["magnet"] == {"kl": 0.1, "refresh": 1, "unit": "updates", "average": 1}
    assert not any(penalised(m) for m in responses(tmp_path / "off", None))


def test_a_league_player_keeps_its_magnet_across_chunks_and_starts_afresh_at_a_reset():
    from sp_wrappers.league.worker import ChunkPlan, PlayerWorker

    worker = PlayerWorker(
        "main",
        kuhn_poker,
        lambda env: MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0),
        n_envs=2,
        seed=0,
        magnet={"kl": 0.1, "refresh": 1},
    )
    described = worker.describe()
    start = {"first": ("v0", described["spec"], described["initial_weights"])}
    worker.train_chunk(ChunkPlan(steps=256, opponents={"first": 1.0}, weights=start, seed=0))
    magnet = worker.magnet
    assert magnet.updates == 2 and magnet.refreshes == 2
    worker.train_chunk(ChunkPlan(steps=128, opponents={"first": 1.0}, seed=1))
    assert worker.magnet is magnet and magnet.updates == 3
    worker.train_chunk(ChunkPlan(steps=128, opponents={"first": 1.0}, reset=True, seed=2))
    assert worker.magnet is not magnet and worker.magnet.updates == 1
    worker.close()
