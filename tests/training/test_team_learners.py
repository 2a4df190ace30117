"""``TeamSelfPlay`` with off-policy learners (SAC, TD3, DDPG) on continuous ``simple_tag_v3``:
every team learns in turns (``learn(..., reset_num_timesteps=False)``), keeps its replay buffer
and warm-up across turns, and plays the other team's snapshots as opponents."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mpe2")

import torch  # noqa: E402
from mpe2 import simple_tag_v3  # noqa: E402
from stable_baselines3 import DDPG, SAC, TD3  # noqa: E402

from sp_wrappers import SnapshotArchive  # noqa: E402
from sp_wrappers.training.team_selfplay import TeamSelfPlay  # noqa: E402
from sp_wrappers.training.team_setup import make_team_vec_env  # noqa: E402

TEAMS = ("adversary", "agent")
GAME = functools.partial(simple_tag_v3.env, max_cycles=10, continuous_actions=True)


@pytest.fixture(autouse=True)
def _one_thread() -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def off_policy(cls: type, team: str) -> Any:
    env = make_team_vec_env(GAME, "prefix", team, n_envs=1, seed=0)
    return cls(
        "MlpPolicy",
        env,
        buffer_size=2_000,
        learning_starts=40,
        batch_size=16,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )


@pytest.mark.parametrize("cls", [SAC, TD3, DDPG], ids=lambda c: c.__name__)
def test_off_policy_teams_learn_in_turns_against_each_others_snapshots(cls, tmp_path):
    models = {team: off_policy(cls, team) for team in TEAMS}
    archives = {team: str(tmp_path / team) for team in TEAMS}
    run = TeamSelfPlay(
        GAME, "prefix", models, archives=archives, team_change=60, save_every=30, seed=0
    ).learn(360)
    assert run.team_changes >= 3
    assert [turn["team"] for turn in run.turns][:4] == ["adversary", "agent"] * 2
    for team, model in models.items():
        # the replay buffer survives the turns: it holds every step this team took (one row per
        # step of all the team's agents)
        rows = model.replay_buffer.size()
        assert rows * model.get_env().num_envs == model.num_timesteps
        assert model.num_timesteps >= 120
        # the warm-up counts the team's own steps over all its turns, and learning followed it
        assert model._n_updates > 0
        snapshots = SnapshotArchive(archives[team]).snapshots()
        assert len(snapshots) >= 2
    # each team met the other's snapshots (not only its random fallback) and they acted in the
    # game's Box action space
    prey_archive = SnapshotArchive(archives["agent"])
    opponents = {m.player_b for m in prey_archive.matches()} | {
        m.player_a for m in prey_archive.matches()
    }
    assert any("snapshot-" in str(o) for o in opponents), opponents
    policy = SnapshotArchive(archives["adversary"]).load_policy(
        SnapshotArchive(archives["adversary"]).latest().id
    )
    obs = np.zeros((3, *policy.observation_space.shape), dtype=np.float32)
    actions = policy.act(obs, None, np.random.default_rng(0))
    assert actions.shape == (3, 5) and np.all((actions >= 0) & (actions <= 1))
