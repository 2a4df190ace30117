"""Gymnasium ids: ``import sp_wrappers`` registers one per game, cheaply; each id passes
Gymnasium's and SB3's env checkers, and works with ``gymnasium.make``, SB3's ``make_vec_env``
and ``make_selfplay_vec_env``."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.env_util import make_vec_env

import sp_wrappers
from sp_wrappers import (
    ENV_IDS,
    OpponentSampler,
    SelfPlayCallback,
    SelfPlayEnv,
    SelfPlayVecEnv,
    SnapshotArchive,
    make_selfplay_vec_env,
)
from sp_wrappers.envs.registration import SamplerSettingError, register_envs
from sp_wrappers.games.registry import GAMES

# Pong's episodes are long; its own max_cycles keyword keeps them short.
QUICK = {env_id: dict(GAMES[game].quick_kwargs) for game, env_id in ENV_IDS.items()}


def play_episode(env: gym.Env, seed: int = 0) -> dict:
    obs, info = env.reset(seed=seed)
    while True:
        mask = env.unwrapped.action_masks()
        action = int(mask.nonzero()[0][0])
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["selfplay"]


def test_every_registered_game_has_an_id_in_the_sp_wrappers_namespace():
    assert sorted(ENV_IDS) == sorted(GAMES)
    assert ENV_IDS["tictactoe_v3"] == "sp_wrappers/TicTacToe-v0"
    assert ENV_IDS["connect_four_v3"] == "sp_wrappers/ConnectFour-v0"
    assert ENV_IDS["pong_v3"] == "sp_wrappers/Pong-v0"
    assert ENV_IDS["texas_holdem_v4"] == "sp_wrappers/TexasHoldem-v0"
    assert ENV_IDS["simple_tag_v3"] == "sp_wrappers/SimpleTag-v0"
    assert ENV_IDS["quadrapong_v4"] == "sp_wrappers/Quadrapong-v0"
    assert set(ENV_IDS.values()) <= set(gym.registry)


def test_importing_sp_wrappers_registers_the_ids_without_importing_torch_sb3_or_the_games():
    code = (
        "import sys, gymnasium, sp_wrappers\n"
        "ids = sorted(k for k in gymnasium.registry if k.startswith('sp_wrappers/'))\n"
        "heavy = [m for m in ('torch', 'stable_baselines3', 'pettingzoo') if m in sys.modules]\n"
        "print(len(ids), heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == f"{len(GAMES)} []"


def test_registering_again_keeps_the_ids_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert register_envs() == []


@pytest.mark.parametrize("env_id", sorted(ENV_IDS.values()))
@pytest.mark.parametrize("with_archive", [False, True], ids=["bot", "archive"])
def test_each_id_passes_gymnasium_and_sb3_env_checkers(env_id, with_archive, tmp_path):
    kwargs = dict(QUICK[env_id])
    if with_archive:
        kwargs.update(archive=str(tmp_path / "archive"), latest_ratio=0.3, window=5)
    env = gym.make(env_id, **kwargs)
    assert isinstance(env.unwrapped, SelfPlayEnv)
    gymnasium_check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env.unwrapped, warn=False)
    env.close()


def test_an_archive_path_gives_a_sampler_with_the_knobs_and_the_fixed_bots(tmp_path):
    env = gym.make(
        "sp_wrappers/ConnectFour-v0",
        archive=str(tmp_path / "archive"),
        window=3,
        latest_ratio=0.25,
        swap_every=4,
        swap_unit="steps",
        strategy="pfsp",
        fixed_opponents={"random": 0.1, "alphabeta-d2": 0.2},
    )
    sampler = env.unwrapped.opponent_source
    assert isinstance(sampler, OpponentSampler)
    assert sampler.archive.path == tmp_path / "archive"
    assert (sampler.window, sampler.latest_ratio, sampler.swap_every) == (3, 0.25, 4)
    assert (sampler.swap_unit, sampler.strategy) == ("steps", "pfsp")
    fixed = [(policy.policy_id, p) for policy, p in sampler.fixed_opponents]
    assert fixed == [("random", 0.1), ("alphabeta-d2", 0.2)]


@pytest.mark.parametrize(
    ("env_id", "name"),
    [
        ("sp_wrappers/TicTacToe-v0", "minimax"),
        ("sp_wrappers/ConnectFour-v0", "alphabeta-d1"),
        ("sp_wrappers/ConnectFour-v0", "alphabeta-d3"),
        ("sp_wrappers/TicTacToe-v0", "random"),
    ],
)
def test_an_opponent_named_by_a_reference_bot_plays_every_episode(env_id, name):
    env = gym.make(env_id, opponent=name)
    assert {play_episode(env, seed)["opponent"] for seed in range(3)} == {name}


def test_an_unknown_bot_name_fails_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"Unknown opponent 'alphabeta-d2'.*'minimax'"):
        gym.make("sp_wrappers/TicTacToe-v0", opponent="alphabeta-d2")


def test_sampler_knobs_without_an_archive_fail_instead_of_being_ignored():
    with pytest.raises(ValueError, match=r"latest_ratio=0.1, window=3 apply only .* archive="):
        gym.make("sp_wrappers/TicTacToe-v0", window=3, latest_ratio=0.1)


@pytest.mark.parametrize(
    "setting",
    [
        {"window": 10},
        {"latest_ratio": 0.5},
        {"strategy": "uniform"},
        {"swap_every": 1},
        {"swap_unit": "steps"},
        {"pfsp_weighting": "variance"},
        {"pfsp_decay": 0.5},
        {"deterministic": False},
        {"fixed_opponents": {"random": 0.1}},
    ],
)
def test_every_sampler_setting_without_an_archive_is_refused_even_at_its_default(setting):
    (name,) = setting
    with pytest.raises(SamplerSettingError) as error:
        gym.make("sp_wrappers/ConnectFour-v0", **setting)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{name}=")
    assert "applies only to opponents drawn from an archive" in message
    assert "archive='runs/NAME/archive'" in message
    with pytest.raises(SamplerSettingError):
        make_selfplay_vec_env("sp_wrappers/ConnectFour-v0", n_envs=1, **setting)


def test_without_sampler_settings_an_id_without_archive_still_plays_random():
    env = gym.make("sp_wrappers/ConnectFour-v0", fixed_opponents=None)
    env.reset(seed=0)
    env.close()


def test_an_archive_and_a_fixed_opponent_together_fail(tmp_path):
    with pytest.raises(ValueError, match="either archive= .* or opponent="):
        gym.make("sp_wrappers/TicTacToe-v0", archive=str(tmp_path), opponent="minimax")


def test_an_archive_of_the_wrong_type_fails_when_the_env_is_made():
    with pytest.raises(TypeError, match="takes a SnapshotArchive or the path of its directory"):
        gym.make("sp_wrappers/TicTacToe-v0", archive=3)


def test_the_game_keyword_arguments_reach_the_game():
    env = gym.make("sp_wrappers/Pong-v0", max_cycles=25)
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps, done = steps + 1, terminated or truncated
    assert steps <= 25
    with pytest.raises(TypeError, match="no_such_option"):
        gym.make("sp_wrappers/TicTacToe-v0", no_such_option=1)


def test_the_learner_seat_keyword_fixes_the_seat():
    env = gym.make("sp_wrappers/ConnectFour-v0", learner="player_1")
    assert {play_episode(env, seed)["seat"] for seed in range(4)} == {"player_1"}


def test_sb3_make_vec_env_trains_by_self_play_into_the_archive_named_in_env_kwargs(tmp_path):
    path = str(tmp_path / "archive")
    venv = make_vec_env("sp_wrappers/TicTacToe-v0", n_envs=2, seed=0, env_kwargs={"archive": path})
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(256, callback=SelfPlayCallback(path, save_every=128))
    archive = SnapshotArchive(path, create=False)
    assert [s.step for s in archive.snapshots()] == [0, 128, 256]
    opponents = {m.player_b for m in archive.matches()}
    assert "snapshot-0000" in opponents or "latest" in opponents


def test_make_selfplay_vec_env_from_an_id_builds_the_batched_env(tmp_path):
    path = str(tmp_path / "archive")
    venv = make_selfplay_vec_env(
        "sp_wrappers/ConnectFour-v0", n_envs=4, seed=0, archive=path, latest_ratio=0.0
    )
    inner = venv.venv
    assert isinstance(inner, SelfPlayVecEnv) and inner.num_envs == 4
    assert venv.observation_space.shape == (6, 7, 2)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(256, callback=SelfPlayCallback(path, save_every=128))
    assert len(SnapshotArchive(path, create=False)) == 3
    venv.close()


def test_make_selfplay_vec_env_rejects_an_id_that_is_not_ours():
    with pytest.raises(ValueError, match="not a self-play id of sp_wrappers"):
        make_selfplay_vec_env("CartPole-v1", n_envs=2)
    with pytest.raises(ValueError, match="not a registered Gymnasium id"):
        make_selfplay_vec_env("sp_wrappers/Chess-v0", n_envs=2)


def test_make_env_points_batched_only_arguments_to_the_vec_env():
    with pytest.raises(TypeError, match="make_selfplay_vec_env"):
        gym.make("sp_wrappers/TicTacToe-v0", num_workers=2)


def test_the_module_exports_the_registration_names():
    assert sp_wrappers.register_envs is register_envs
    assert "ENV_IDS" in sp_wrappers.__all__


def test_subproc_workers_reach_the_ids_through_gymnasiums_module_prefix(tmp_path):
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = make_vec_env(
        "sp_wrappers:sp_wrappers/TicTacToe-v0",
        n_envs=2,
        vec_env_cls=SubprocVecEnv,
        env_kwargs={"archive": str(tmp_path / "archive")},
    )
    try:
        assert venv.reset().shape == (2, 3, 3, 2)
        samplers = venv.get_attr("opponent_source")
        assert [s.archive.path for s in samplers] == [tmp_path / "archive"] * 2
    finally:
        venv.close()
