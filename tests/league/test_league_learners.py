"""League players with an off-policy learner (DQN): they learn in chunks with their replay buffer
kept between chunks and emptied by a reset, and their snapshots play the other players masked."""

from __future__ import annotations

import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3 import DQN

from sp_wrappers.league import League
from sp_wrappers.league.builders import AlphaStarLeague
from sp_wrappers.league.worker import ChunkPlan, PlayerWorker

CHUNK = 64


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def dqn_model(env):
    return DQN("MlpPolicy", env, buffer_size=1_000, learning_starts=32, batch_size=16,
               train_freq=4, target_update_interval=64, policy_kwargs={"net_arch": [16]},
               seed=0)  # fmt: skip


def ppo_model(env):
    return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1,
                       policy_kwargs={"net_arch": [16]}, seed=0)  # fmt: skip


def test_dqn_player_keeps_its_replay_buffer_across_chunks_and_a_reset_empties_it():
    worker = PlayerWorker("main_exploiter_0", tictactoe_v3.env, dqn_model, n_envs=2, seed=0)
    opponent = {"main_agent_0": ("v0", worker.describe()["spec"], worker.initial_weights)}
    plan = ChunkPlan(CHUNK, {"main_agent_0": 1.0}, weights=opponent, seed=0)
    worker.train_chunk(plan)
    worker.train_chunk(ChunkPlan(CHUNK, {"main_agent_0": 1.0}, seed=1))
    buffer = worker.model.replay_buffer
    assert buffer.size() * 2 == 2 * CHUNK  # both chunks' steps (two env copies per row)
    assert worker.model._n_updates > 0  # the warm-up counted over the chunks and learning began
    worker.train_chunk(ChunkPlan(CHUNK, {"main_agent_0": 1.0}, reset=True, seed=2))
    assert buffer.size() * 2 == CHUNK  # only the games since the reset
    worker.close()


def test_league_with_a_dqn_exploiter_plays_its_snapshots_masked(tmp_path):
    builder = AlphaStarLeague(main_agents=1, main_exploiters=1, league_exploiters=0,
                              snapshot_min_steps=CHUNK, snapshot_max_steps=CHUNK)  # fmt: skip
    league = League(tictactoe_v3.env, builder,
                    {"main_agent": ppo_model, "main_exploiter": dqn_model}, tmp_path,
                    chunk_steps=CHUNK, n_envs=2, seed=0)  # fmt: skip
    result = league.run(6 * CHUNK, backend="serial")
    players = {p.name: p for p in result.learners}
    exploiter = players["main_exploiter_0"]
    assert exploiter.steps >= 2 * CHUNK and exploiter.snapshots
    # the main agent met the DQN player (its latest weights or its snapshots) as an opponent;
    # an unmasked DQN opponent would have stopped the run with an illegal move
    met = {m.player_b for m in league.archive.matches() if m.player_a == "main_agent_0"}
    assert met & {"main_exploiter_0", *exploiter.snapshots}, met
    snapshot = league.archive.load_policy(exploiter.snapshots[-1])
    assert type(snapshot.policy).__name__ == "DQNPolicy"


def test_league_command_takes_dqn_with_replay_settings_fitted_to_the_budget(tmp_path, capsys):
    import json

    from sp_wrappers.cli.app import run_command

    status = run_command("league", [
                          "tictactoe_v3", "--algo", "dqn", "--timesteps", "512", "--chunk-steps",
                          "128", "--n-envs", "2", "--eval-games", "2", "--backend", "serial",
                          "--out", str(tmp_path / "r")])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["algo"] == "dqn" and config["hyperparams"]["learning_starts"] == 51
    assert "main_agent_0" in out
