"""Episodes played in symmetric views (``symmetries=`` on SelfPlayEnv and SelfPlayVecEnv): the
learner's view is mapped, the game is not."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3

from sp_wrappers import CallablePolicy, RandomOpenings, SelfPlayEnv, SelfPlayVecEnv
from sp_wrappers.envs.symmetric_view import resolve_symmetries
from sp_wrappers.games.symmetries import Symmetry, board_symmetries, symmetries_for


def _first_legal(obs, mask):
    return int(np.flatnonzero(mask)[0])


def _opponent():  # deterministic, so the game depends only on the learner's real moves
    return CallablePolicy(_first_legal, "first-legal")


def _only(game, name):
    return [s for s in symmetries_for(game) if s.name == name]


def _play_pair(mapped_env, real_env, symmetry, seed, pick):
    """Play one episode in ``mapped_env`` (whose view is ``symmetry``) and the same real moves in
    ``real_env``; check every observation and mask on the way; return both final steps."""
    obs_v, _ = mapped_env.reset(seed=seed)
    obs_r, _ = real_env.reset(seed=seed)
    while True:
        mask_v, mask_r = mapped_env.action_masks(), real_env.action_masks()
        assert np.array_equal(obs_v, symmetry.observation(obs_r))
        assert np.array_equal(mask_v, symmetry.mask(mask_r))
        viewed = pick(mask_v)
        assert mask_r[symmetry.action_to_game(viewed)]  # a legal move in the view is legal
        step_v = mapped_env.step(viewed)
        step_r = real_env.step(symmetry.action_to_game(viewed))
        obs_v, obs_r = step_v[0], step_r[0]
        assert np.array_equal(obs_v, symmetry.observation(obs_r))
        if step_v[2] or step_v[3] or step_r[2] or step_r[3]:
            return step_v, step_r


@pytest.mark.parametrize(
    "game, env_fn, name, learner",
    [
        ("connect_four_v3", connect_four_v3.env, "flip_lr", "player_0"),
        ("connect_four_v3", connect_four_v3.env, "flip_lr", "player_1"),
        ("tictactoe_v3", tictactoe_v3.env, "rot90", "player_2"),
        ("tictactoe_v3", tictactoe_v3.env, "antitranspose", "player_1"),
    ],
)
def test_selfplay_env_episode_in_a_view_is_the_real_game_with_mapped_moves(
    game, env_fn, name, learner
):
    symmetry = _only(game, name)[0]
    rng = np.random.default_rng(1)
    outcomes = set()
    for seed in range(6):
        mapped = SelfPlayEnv(env_fn, learner=learner, opponent=_opponent(), symmetries=[symmetry])
        real = SelfPlayEnv(env_fn, learner=learner, opponent=_opponent())
        step_v, step_r = _play_pair(
            mapped, real, symmetry, seed, lambda m: int(rng.choice(np.flatnonzero(m)))
        )
        assert step_v[1:4] == step_r[1:4]  # reward, terminated, truncated
        summary_v, summary_r = step_v[4]["selfplay"], step_r[4]["selfplay"]
        assert summary_v.pop("symmetry") == name
        assert summary_v == summary_r  # outcome, returns, length, seat, opponent
        outcomes.add((summary_r["outcome"], summary_r["length"]))
    assert len(outcomes) > 1  # the learner's moves mattered: not one fixed game


def _with_openings():
    return RandomOpenings(tictactoe_v3.env(), plies=(0, 3))


@pytest.mark.parametrize("learner", ["player_1", "player_2"])
def test_selfplay_env_combines_symmetries_with_random_openings(learner):
    """Refused before ("Symmetry 'rot90' disagrees"); now the episode starts from the seeded
    random opening, seen in the view, and plays as the real game with mapped moves."""
    rot90 = _only("tictactoe_v3", "rot90")[0]
    rng = np.random.default_rng(4)
    stones_at_start = set()
    for seed in range(8):
        game = _with_openings()
        mapped = SelfPlayEnv(game, learner=learner, opponent=_opponent(), symmetries=[rot90])
        assert game.probability == 1.0  # the check played on copies: the env's game keeps them
        real = SelfPlayEnv(_with_openings(), learner=learner, opponent=_opponent())
        stones_at_start.add(int(real.reset(seed=seed)[0].sum()))
        step_v, step_r = _play_pair(
            mapped, real, rot90, seed, lambda m: int(rng.choice(np.flatnonzero(m)))
        )
        assert step_v[1:4] == step_r[1:4]
    assert len(stones_at_start) > 1  # the openings were played: not always the empty board
    auto = SelfPlayEnv(_with_openings, symmetries="auto")
    assert len(auto.view.symmetries) == 8


def test_vec_env_combines_symmetries_with_random_openings():
    vec = SelfPlayVecEnv(_with_openings, n_envs=3, learner="player_1", symmetries="auto")
    try:
        vec.seed(0)
        obs = vec.reset()
        assert len(vec.symmetries) == 8
        finished = 0
        while finished < 9:
            actions = np.array([np.flatnonzero(m)[0] for m in vec.action_masks()])
            obs, _, dones, infos = vec.step(actions)
            finished += int(dones.sum())
        assert {info["selfplay"]["symmetry"] for info in infos if "selfplay" in info} <= set(
            s.name for s in symmetries_for("tictactoe_v3")
        )
    finally:
        vec.close()


def test_resolving_auto_symmetries_builds_the_game_three_times_not_a_hundred():
    built = []

    def counting_env():
        built.append(1)
        return _with_openings()

    assert len(resolve_symmetries("auto", counting_env)) == 8
    assert len(built) == 3  # one to name the game, the real and the mapped copy of the check


def test_selfplay_env_auto_draws_every_view_and_is_reproducible():
    def names(seed):
        env = SelfPlayEnv(tictactoe_v3.env, learner="player_1", symmetries="auto")
        env.reset(seed=seed)
        drawn = []
        for _ in range(40):
            done = False
            while not done:
                *_, terminated, truncated, info = env.step(
                    int(np.flatnonzero(env.action_masks())[0])
                )
                done = terminated or truncated
            drawn.append(info["selfplay"]["symmetry"])
            env.reset()
        return drawn

    drawn = names(3)
    assert set(drawn) == set(s.name for s in symmetries_for("tictactoe_v3"))
    assert drawn == names(3)


def test_selfplay_env_refuses_a_wrong_symmetry_naming_it():
    flip_ud = board_symmetries(6, 7, actions="columns", names=["flip_ud"])[0]
    with pytest.raises(ValueError, match="Symmetry 'flip_ud' disagrees with connect_four_v3"):
        SelfPlayEnv(connect_four_v3.env, symmetries=[*symmetries_for("connect_four_v3"), flip_ud])
    # the right observation but the actions left unmapped
    lying = Symmetry("lying_mirror", functools.partial(np.flip, axis=-2), np.arange(7))
    with pytest.raises(ValueError, match="lying_mirror"):
        SelfPlayEnv(connect_four_v3.env(), symmetries=[lying])
    with pytest.raises(ValueError, match="No built-in symmetries for 'chess_v6'"):
        SelfPlayEnv(connect_four_v3.env, symmetries="chess_v6")


def test_symmetries_with_teams_are_refused():
    with pytest.raises(ValueError, match="symmetries= does not work with teams="):
        SelfPlayEnv(
            tictactoe_v3.env, teams={"x": ["player_1"], "o": ["player_2"]}, symmetries="auto"
        )


def test_env_checkers_pass_with_symmetries():
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    for env_fn in (connect_four_v3.env, tictactoe_v3.env):
        for keep_dict_obs in (False, True):
            env = SelfPlayEnv(env_fn, symmetries="auto", keep_dict_obs=keep_dict_obs)
            gymnasium_check_env(env, skip_render_check=True)
            sb3_check_env(env, warn=False)


def _vec_pair(env_fn, symmetries, num_workers, learner="player_1", n_envs=3):
    kwargs = dict(n_envs=n_envs, learner=learner, opponent=_opponent())
    mapped = SelfPlayVecEnv(env_fn, symmetries=symmetries, num_workers=num_workers, **kwargs)
    real = SelfPlayVecEnv(env_fn, **kwargs)
    return mapped, real


@pytest.mark.parametrize("num_workers", [0, 1])
def test_vec_env_episodes_in_views_are_the_real_games_with_mapped_moves(num_workers):
    """ "auto" draws a view per copy and episode; each copy's view is read off its first
    observation (the opponent moved first in column 0), then every step is checked against the
    unmapped env given the real moves, the terminal observation in the ending episode's view."""
    flip = _only("connect_four_v3", "flip_lr")[0]
    mapped, real = _vec_pair(connect_four_v3.env, "auto", num_workers)
    rng = np.random.default_rng(0)
    try:
        mapped.seed(5)
        real.seed(5)
        obs_v, obs_r = mapped.reset(), real.reset()
        views = [None] * 3
        seen, finished = set(), 0
        while finished < 12:
            for i in range(3):
                if views[i] is None:
                    flipped = not np.array_equal(obs_v[i], obs_r[i])
                    views[i] = flip if flipped else _only("connect_four_v3", "identity")[0]
                    seen.add(views[i].name)
                assert np.array_equal(obs_v[i], views[i].observation(obs_r[i]))
            masks_v, masks_r = mapped.action_masks(), real.action_masks()
            for i in range(3):
                assert np.array_equal(masks_v[i], views[i].mask(masks_r[i]))
            viewed = np.array([rng.choice(np.flatnonzero(m)) for m in masks_v])
            game = np.array([views[i].action_to_game(int(a)) for i, a in enumerate(viewed)])
            obs_v, rew_v, done_v, infos_v = mapped.step(viewed)
            obs_r, rew_r, done_r, infos_r = real.step(game)
            assert np.array_equal(rew_v, rew_r) and np.array_equal(done_v, done_r)
            for i in np.flatnonzero(done_v):
                summary = dict(infos_v[i]["selfplay"])
                assert summary.pop("symmetry") == views[i].name
                assert summary == infos_r[i]["selfplay"]
                terminal_v = infos_v[i]["terminal_observation"]
                assert np.array_equal(
                    terminal_v, views[i].observation(infos_r[i]["terminal_observation"])
                )
                views[i] = None
                finished += 1
        assert seen == {"identity", "flip_lr"}
    finally:
        mapped.close()
        real.close()


def test_vec_env_copy_plays_as_selfplay_env_with_the_same_seed_and_symmetries():
    """Copy i reset with seed s + i draws its views as a SelfPlayEnv reset with that seed."""
    vec = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, learner="player_1", symmetries="auto")
    single = SelfPlayEnv(tictactoe_v3.env, learner="player_1", symmetries="auto")
    try:
        vec.seed(10)
        vec.reset()
        single.reset(seed=11)
        names_vec, names_single = [], []
        while len(names_vec) < 8:
            actions = np.array([np.flatnonzero(m)[0] for m in vec.action_masks()])
            _, _, dones, infos = vec.step(actions)
            if dones[1]:
                names_vec.append(infos[1]["selfplay"]["symmetry"])
        while len(names_single) < 8:
            *_, terminated, truncated, info = single.step(
                int(np.flatnonzero(single.action_masks())[0])
            )
            if terminated or truncated:
                names_single.append(info["selfplay"]["symmetry"])
                single.reset()
        assert names_vec == names_single
    finally:
        vec.close()


def test_vec_env_refuses_a_wrong_symmetry_naming_it():
    flip_ud = board_symmetries(6, 7, actions="columns", names=["flip_ud"])[0]
    with pytest.raises(ValueError, match="Symmetry 'flip_ud' disagrees"):
        SelfPlayVecEnv(connect_four_v3.env, n_envs=2, symmetries=[flip_ud], num_workers=1)
    rot90, rot270 = _only("tictactoe_v3", "rot90")[0], _only("tictactoe_v3", "rot270")[0]
    twisted = Symmetry("twisted", rot90.observation_fn, rot270.permutation)  # turns disagree
    with pytest.raises(ValueError, match="Symmetry 'twisted' disagrees with tictactoe_v3"):
        SelfPlayVecEnv(tictactoe_v3.env, n_envs=1, symmetries=[rot90, twisted])


def test_maskable_ppo_learns_on_a_vec_env_with_symmetries():
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = SelfPlayVecEnv(connect_four_v3.env, n_envs=2, symmetries="auto")
    try:
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0)
        model.learn(128)
        assert model.num_timesteps >= 128
    finally:
        env.close()
