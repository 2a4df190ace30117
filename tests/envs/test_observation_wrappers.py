"""Observation wrappers and snapshot opponents: ``VecFrameStack`` and ``VecNormalize`` of
observations above a self-play env are refused before the first step (the opponents would be
given observations their networks never saw), reward normalisation alone works, and frame stacking
inside the game (``StackedObservations``) gives every seat its own stack, snapshots included."""

from __future__ import annotations

import functools

import gymnasium
import numpy as np
import pytest
import torch
from pettingzoo.classic import connect_four_v3, tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecFrameStack, VecNormalize

from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayEnv, SelfPlayVecEnv
from sp_wrappers.core.policies import CallablePolicy
from sp_wrappers.envs.observation_wrappers import ObservationWrapperError
from sp_wrappers.games.frame_stack import StackedObservations


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def selfplay_venv(tmp_path, env_fn=tictactoe_v3.env, n_envs=2):
    sampler = OpponentSampler(tmp_path / "archive", latest_ratio=0.5, seed=0)
    return SelfPlayVecEnv(env_fn, n_envs=n_envs, opponent=sampler), sampler


def ppo(venv, cls=PPO):
    return cls("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1,
               policy_kwargs={"net_arch": [16]}, seed=0, device="cpu")  # fmt: skip


def test_vec_frame_stack_is_refused_before_the_first_step_naming_game_level_stacking(tmp_path):
    venv, _ = selfplay_venv(tmp_path)
    model = ppo(VecFrameStack(venv, 4))
    callback = SelfPlayCallback(tmp_path / "archive", save_every=32)
    with pytest.raises(ObservationWrapperError) as error:
        model.learn(256, callback=callback)
    message = str(error.value)
    assert "VecFrameStack" in message and "StackedObservations" in message
    assert "archive" not in message.split(".")[0]  # it names the wrapper, not the archive
    assert model.num_timesteps == 0 and callback.archive.snapshots() == []


def test_vec_normalize_of_observations_is_refused_naming_reward_only_normalisation(tmp_path):
    venv, _ = selfplay_venv(tmp_path)
    model = ppo(VecNormalize(venv))
    with pytest.raises(ObservationWrapperError, match=r"norm_obs=False"):
        model.learn(256, callback=SelfPlayCallback(tmp_path / "archive", save_every=32))
    assert model.num_timesteps == 0


def test_vec_normalize_of_rewards_only_trains_against_snapshots(tmp_path):
    venv, _ = selfplay_venv(tmp_path)
    model = ppo(VecNormalize(venv, norm_obs=False, norm_reward=True))
    callback = SelfPlayCallback(tmp_path / "archive", save_every=64)
    model.learn(256, callback=callback)
    assert len(callback.archive.snapshots()) >= 3


def test_gymnasium_observation_wrapper_around_selfplay_env_is_refused(tmp_path):
    sampler = OpponentSampler(tmp_path / "archive", seed=0)

    def make():
        env = SelfPlayEnv(tictactoe_v3.env, opponent=sampler)
        return gymnasium.wrappers.FrameStackObservation(env, 2)

    model = ppo(DummyVecEnv([make]))
    with pytest.raises(ObservationWrapperError, match="FrameStackObservation"):
        model.learn(64, callback=SelfPlayCallback(tmp_path / "archive", save_every=32))


def test_team_selfplay_refuses_vec_normalize_on_a_teams_env(tmp_path):
    pytest.importorskip("mpe2")
    from mpe2 import simple_tag_v3

    from sp_wrappers.training.team_selfplay import TeamSelfPlay
    from sp_wrappers.training.team_setup import make_team_vec_env

    game = functools.partial(simple_tag_v3.env, max_cycles=8)
    models = {}
    for team in ("adversary", "agent"):
        env = make_team_vec_env(game, "prefix", team, n_envs=1, seed=0)
        models[team] = ppo(VecNormalize(env) if team == "agent" else env)
    with pytest.raises(ObservationWrapperError, match="VecNormalize"):
        TeamSelfPlay(game, "prefix", models, archives={t: tmp_path / t for t in models},
                     team_change=96, save_every=96, seed=0)  # fmt: skip


# -- frame stacking inside the game ------------------------------------------------------------


def test_stacked_observations_give_every_seat_its_own_stack():
    """Each agent's stack holds its observations at its own past turns, then its current one."""
    seen: dict[str, list[np.ndarray]] = {"player_0": [], "player_1": []}
    game = StackedObservations(connect_four_v3.env(), 3)
    game.reset(seed=0)
    for column in (3, 3, 2, 4, 2, 4):
        agent = game.agent_selection
        seen[agent].append(game.observe(agent)["observation"])
        game.step(column)
    for stacks in seen.values():
        assert stacks[0].shape == (6, 7, 6)
        assert not stacks[0][..., :4].any()  # zeros before the first turn
        for before, after in zip(stacks, stacks[1:], strict=False):
            # the frame an agent acted on is the newest past frame at its next turn
            np.testing.assert_array_equal(after[..., 2:4], before[..., 4:6])
            np.testing.assert_array_equal(after[..., 0:2], before[..., 2:4])
    game.reset(seed=1)
    assert not game.observe(game.agent_selection)["observation"][..., :4].any()


def test_game_level_stacking_trains_against_snapshots_that_see_stacks_too(tmp_path):
    game = functools.partial(lambda: StackedObservations(connect_four_v3.env(), 2))
    opponent_shapes: list[tuple[int, ...]] = []

    def recording(obs, mask):
        opponent_shapes.append(np.asarray(obs).shape)
        return int(np.flatnonzero(mask)[0])

    venv = SelfPlayVecEnv(game, n_envs=2, opponent=CallablePolicy(recording, "recording"))
    assert venv.observation_space.shape == (6, 7, 4)
    venv.reset()
    venv.step(np.array([0, 0]))
    assert opponent_shapes and set(opponent_shapes) == {(6, 7, 4)}
    venv.close()

    venv, _ = selfplay_venv(tmp_path, game)
    model = ppo(venv, MaskablePPO)
    callback = SelfPlayCallback(tmp_path / "archive", save_every=64)
    model.learn(256, callback=callback)
    snapshots = callback.archive.snapshots()
    assert len(snapshots) >= 3
    # the snapshots played as opponents, on stacked observations (a single frame would not fit
    # their networks and would stop the run)
    opponents = {m.player_b for m in callback.archive.matches()} | {
        m.player_a for m in callback.archive.matches()
    }
    assert opponents & {s.id for s in snapshots}, opponents


def test_frame_stack_game_kwarg_trains_from_the_command_line_with_snapshots_and_bots(
    tmp_path, capsys
):
    import json

    from sp_wrappers import SnapshotArchive
    from sp_wrappers.cli.app import run_command

    status = run_command("train", [
                         "connect_four_v3", "--game-kwarg", "frame_stack=3", "--timesteps", "512",
                         "--n-envs", "2", "--save-every", "128", "--eval-games", "2", "--hp",
                         "n_steps=64", "--hp", "batch_size=64", "--reference-ratio", "0.3",
                         "--out", str(tmp_path / "r"), "--no-progress", "--no-plots"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    assert json.loads((tmp_path / "r" / "config.json").read_text())["game_kwargs"] == {
        "frame_stack": 3
    }
    archive = SnapshotArchive(tmp_path / "r" / "archive")
    assert archive.load_policy(archive.latest().id).observation_space.shape == (6, 7, 6)
    assert "vs alphabeta-d2" in out  # the reference bots played the stacked game too


def test_reference_bots_play_the_newest_frame_of_a_stack():
    from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy

    bot = AlphaBetaConnectFourPolicy(depth=2, tie_break="first")
    game = StackedObservations(connect_four_v3.env(), 3)
    game.reset(seed=0)
    for column in (3, 3, 2):
        game.step(column)
    obs = game.observe(game.agent_selection)
    stacked, mask = obs["observation"][None], obs["action_mask"][None].astype(bool)
    newest = stacked[..., -2:]
    rng = np.random.default_rng(0)
    assert bot.act(stacked, mask, rng).tolist() == bot.act(newest, mask, rng).tolist()


def test_a_bad_frame_stack_names_the_option():
    from sp_wrappers.games.registry import make_game

    with pytest.raises(ValueError, match=r"frame_stack=4"):
        make_game("tictactoe_v3", frame_stack=0)
