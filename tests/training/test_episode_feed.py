"""Finished games reach the archive from the env's buffer, with every learner and each game once.

ARS's ``learn`` hands its callbacks no ``infos``: before the envs kept a buffer of finished
episodes, an ARS run recorded no training games (no Elo, PFSP blind at 0.5 for every snapshot, an
empty league payoff table). The callbacks now drain the envs' buffers, so on-policy learners must
not count a game twice either.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import (
    DummyVecEnv,
    VecEnvWrapper,
    VecMonitor,
    VecNormalize,
)

from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayEnv, SnapshotArchive
from sp_wrappers.cli import main
from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class CountEpisodes(VecEnvWrapper):
    """Counts the episodes that end (one per ``done``), passing everything through."""

    def __init__(self, venv: Any) -> None:
        super().__init__(venv)
        self.episodes = 0

    def reset(self) -> Any:
        return self.venv.reset()

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        self.episodes += int(np.sum(dones))
        return obs, rewards, dones, infos


def training_rows(archive: SnapshotArchive) -> list[Any]:
    return [m for m in archive.matches() if m.source == "training"]


def test_ars_run_records_its_training_games_so_elo_and_pfsp_see_them(tmp_path, capsys):
    out = tmp_path / "r"
    status = main(["train", "tictactoe_v3", "--algo", "ars", "--strategy", "pfsp",
                   "--timesteps", "600", "--n-envs", "2", "--save-every", "200",
                   "--eval-games", "2", "--no-progress", "--no-plots",
                   "--out", str(out)])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    archive = SnapshotArchive(out / "archive")
    assert len(training_rows(archive)) > 0
    # PFSP weighs snapshots by the learner's win rate against them: it has games to go on now
    scores = archive.scores_against("learner")
    played = [info.id for info in archive.snapshots() if info.id in scores]
    assert played and all(scores[i][1] > 0 for i in played)
    sampler = OpponentSampler(archive, strategy="pfsp")
    win_rates = [scores[i][0] for i in played]
    assert any(rate != 0.5 for rate in win_rates), (win_rates, sampler.snapshot_probabilities())
    # and Elo: the snapshots carry a rating from the training games
    assert any("elo" in (info.ratings or {}) for info in archive.snapshots())


@pytest.mark.parametrize("kind", ["vec_env", "dummy_vec_env"])
def test_ppo_records_each_game_once_through_sb3_wrappers(kind, tmp_path):
    archive = SnapshotArchive(tmp_path / "a")
    sampler = OpponentSampler(archive)
    if kind == "vec_env":
        venv: Any = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, opponent=sampler)
    else:
        venv = DummyVecEnv([lambda: SelfPlayEnv(tictactoe_v3.env(), opponent=sampler)] * 2)
    counted = CountEpisodes(venv)
    env = VecNormalize(VecMonitor(counted), norm_obs=False, norm_reward=True)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})  # fmt: skip
    model.learn(256, callback=SelfPlayCallback(archive, save_every=128))
    assert counted.episodes > 0
    assert len(training_rows(archive)) == counted.episodes


def test_a_learner_team_drains_each_game_once_not_once_per_team_agent():
    pytest.importorskip("mpe2")
    from mpe2 import simple_tag_v3

    from sp_wrappers.envs.vector.factory import make_selfplay_vec_env

    def make_tag() -> Any:
        return simple_tag_v3.env(max_cycles=5, continuous_actions=False)

    env = make_selfplay_vec_env(make_tag, n_envs=2, learner="adversary", teams="prefix", seed=0)
    assert env.num_envs == 6  # three predators in each of two games
    rng = np.random.default_rng(0)
    from_infos: list[dict[str, Any]] = []
    env.reset()
    while len(from_infos) < 4:
        _, _, _, infos = env.step(rng.integers(env.action_space.n, size=env.num_envs))
        from_infos += [info["selfplay"] for info in infos if "selfplay" in info]
    drained = [s for batch in env.env_method("drain_episodes") for s in batch]
    assert drained == from_infos
    assert env.env_method("drain_episodes") == [[]] * 6
    env.close()


def test_games_played_before_learn_are_not_recorded_as_training_games(tmp_path):
    archive = SnapshotArchive(tmp_path / "a")
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, opponent=OpponentSampler(archive))
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):  # a few games by hand, before learning
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()]))
    counted = CountEpisodes(venv)
    model = MaskablePPO("MlpPolicy", counted, n_steps=32, batch_size=32, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})  # fmt: skip
    model.learn(64, callback=SelfPlayCallback(archive, save_every=1_000))
    assert len(training_rows(archive)) == counted.episodes


def test_league_of_ars_players_fills_its_payoff_table(tmp_path, capsys):
    out = tmp_path / "league"
    status = main(["league", "tictactoe_v3", "--algo", "ars", "--league-exploiters", "0",
                   "--timesteps", "512", "--chunk-steps", "128", "--n-envs", "2",
                   "--eval-games", "2", "--backend", "serial", "--no-progress", "--no-plots",
                   "--out", str(out)])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    pairs = json.loads((out / "league.json").read_text())["payoff"]["pairs"]
    assert pairs and all(games > 0 for *_, games in pairs)
    league_rows = [m for m in SnapshotArchive(out / "archive").matches() if m.source == "league"]
    assert league_rows
