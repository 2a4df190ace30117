"""Specification of RandomOpenings: games that start from random legal first moves."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.classic import connect_four_v3, tictactoe_v3
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from sp_wrappers import SelfPlayEnv, SelfPlayVecEnv
from sp_wrappers.games.wrappers import RandomOpenings


def board(game) -> np.ndarray:
    return np.asarray(game.observe(game.possible_agents[0])["observation"])


def test_a_seeded_reset_replays_the_same_random_opening():
    games = [RandomOpenings(connect_four_v3.env(), plies=2) for _ in range(2)]
    for game in games:
        game.reset(seed=7)
    assert np.array_equal(board(games[0]), board(games[1]))
    assert int(board(games[0]).sum()) == 2
    assert games[0].agent_selection == "player_0"  # two moves played: player 0 moves again


def test_every_first_move_comes_up_and_probability_zero_changes_nothing():
    game = RandomOpenings(tictactoe_v3.env(), plies=1)
    first_moves = set()
    for seed in range(200):
        game.reset(seed=seed)
        first_moves.add(int(np.flatnonzero(board(game).sum(axis=2).T.ravel())[0]))
    assert first_moves == set(range(9))
    untouched = RandomOpenings(tictactoe_v3.env(), plies=1, probability=0.0)
    untouched.reset(seed=0)
    assert board(untouched).sum() == 0 and untouched.agent_selection == "player_1"


def test_about_the_asked_share_of_games_start_from_random_moves():
    game = RandomOpenings(tictactoe_v3.env(), plies=1, probability=0.3)
    game.reset(seed=0)
    opened = 0
    for _ in range(1000):
        game.reset()
        opened += int(board(game).sum() > 0)
    assert 240 <= opened <= 360


def test_both_envs_play_from_random_openings_and_pass_the_env_checkers():
    env = SelfPlayEnv(RandomOpenings(tictactoe_v3.env(), plies=1, probability=0.5))
    check_env(env, skip_render_check=True)
    sb3_check_env(env, warn=False)
    venv = SelfPlayVecEnv(lambda: RandomOpenings(connect_four_v3.env(), plies=2), n_envs=3)
    venv.seed(0)
    obs = venv.reset()
    # Two random moves were played before the learner's first look (three when the learner is
    # the second player, whose opponent then moved).
    assert set(obs.reshape(3, -1).sum(axis=1).tolist()) <= {2, 3}
    dones = np.zeros(3, dtype=bool)
    while not dones.all():
        actions = np.array([np.flatnonzero(m)[0] for m in venv.action_masks()])
        _, _, done, infos = venv.step(actions)
        dones |= done
    assert all("selfplay" in info for info, d in zip(infos, done, strict=True) if d)
    venv.close()


@pytest.mark.parametrize(
    "kwargs, message", [({"plies": 0}, "plies"), ({"probability": 1.5}, "probability")]
)
def test_bad_settings_are_refused_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RandomOpenings(tictactoe_v3.env(), **kwargs)


def opening_length(game) -> int:
    return int(board(game).sum())


def test_a_range_of_plies_draws_every_count_in_it_about_equally():
    game = RandomOpenings(tictactoe_v3.env(), plies=(0, 3))
    game.reset(seed=0)
    counts = np.zeros(5, dtype=int)
    for _ in range(800):
        game.reset()
        counts[opening_length(game)] += 1
    assert counts[4] == 0 and all(150 <= c <= 250 for c in counts[:4]), counts


def test_a_probability_per_count_is_followed_and_a_seed_replays_it():
    game = RandomOpenings(tictactoe_v3.env(), plies={0: 0.25, 2: 0.75})
    game.reset(seed=1)
    lengths = []
    for _ in range(800):
        game.reset()
        lengths.append(opening_length(game))
    assert set(lengths) == {0, 2}
    assert 520 <= lengths.count(2) <= 680
    again = RandomOpenings(tictactoe_v3.env(), plies={0: 0.25, 2: 0.75})
    firsts = []
    for copy in (game, again):
        copy.reset(seed=5)
        firsts.append(board(copy).copy())
    assert np.array_equal(*firsts)


def test_a_fixed_count_plays_the_same_openings_as_before_ranges_existed():
    for seed in range(5):
        fixed = RandomOpenings(tictactoe_v3.env(), plies=2)
        fixed.reset(seed=seed)
        # What a fixed count always did: one draw for the probability, then one per move.
        plain = tictactoe_v3.env()
        plain.reset(seed=seed)
        rng = np.random.default_rng(seed)
        rng.random()
        for _ in range(2):
            mask = plain.observe(plain.agent_selection)["action_mask"]
            plain.step(int(rng.choice(np.flatnonzero(mask))))
        assert np.array_equal(board(fixed), board(plain))


@pytest.mark.parametrize("plies", [(2, 1), (-1, 2), {0: 0.5}, {-1: 1.0}, "3", (0, 1, 2), True])
def test_bad_ranges_and_distributions_are_refused(plies):
    with pytest.raises(ValueError, match="plies"):
        RandomOpenings(tictactoe_v3.env(), plies=plies)
