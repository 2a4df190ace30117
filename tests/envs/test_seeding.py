"""Seeding through adapters: ``reset(seed=s)`` fixes the game's chance events (deals, dice) for
that episode and every later one, in PettingZoo's own card games and in OpenSpiel's through
Shimmy, so Gymnasium's determinism checks pass."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.classic import texas_holdem_v4

from sp_wrappers import SelfPlayEnv, SelfPlayVecEnv

pytest.importorskip("shimmy")
from sp_wrappers.games.adapters import openspiel_env  # noqa: E402


def kuhn():
    return openspiel_env("kuhn_poker")


CHANCE_GAMES = {"kuhn_poker (OpenSpiel)": (kuhn, "player_0"), "texas_holdem_v4": (
    texas_holdem_v4.env, "player_0")}  # fmt: skip


def deals(make, seat, seed, episodes=6):
    """The learner's first observation of ``episodes`` games after one seeded reset."""
    env = SelfPlayEnv(make(), learner=seat)
    rng = np.random.default_rng(0)
    seen = []
    obs, _ = env.reset(seed=seed)
    while len(seen) < episodes:
        seen.append(np.asarray(obs).copy())
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        obs, _ = env.reset()
    return np.stack(seen)


@pytest.mark.parametrize("name", sorted(CHANCE_GAMES))
def test_seeded_reset_reproduces_the_deal_and_every_later_one(name):
    make, seat = CHANCE_GAMES[name]
    first = deals(make, seat, seed=3)
    np.testing.assert_array_equal(first, deals(make, seat, seed=3))
    # the deals do change, between episodes and between seeds
    assert len({row.tobytes() for row in first}) > 1
    assert not np.array_equal(first, deals(make, seat, seed=4))


def test_kuhn_poker_passes_gymnasiums_determinism_checks():
    check_env(SelfPlayEnv(kuhn()), skip_render_check=True)


def test_openspiel_env_does_not_truncate_games_with_chance_events():
    """Shimmy 2.0 counts the deal against Kuhn poker's three moves and truncates after one."""
    env = SelfPlayEnv(kuhn(), learner="player_0")
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _ in range(200):
        mask = env.action_masks()
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not truncated
        if terminated:
            assert info["selfplay"]["outcome"] in (0.0, 1.0)  # poker has a winner
            env.reset()


def test_vector_env_copy_replays_the_selfplay_env_seeded_the_same_way():
    venv = SelfPlayVecEnv(kuhn, n_envs=2, learner="player_0")
    venv.seed(10)
    obs = venv.reset()
    env = SelfPlayEnv(kuhn(), learner="player_0")
    single, _ = env.reset(seed=11)
    for _ in range(30):  # several episodes: auto-resets draw their game seeds the same way
        np.testing.assert_array_equal(obs[1], single)
        obs, _, dones, infos = venv.step(np.array([0, 0]))
        single, _, terminated, truncated, _ = env.step(0)
        assert dones[1] == (terminated or truncated)
        if dones[1]:
            single, _ = env.reset()
    venv.close()


def test_raw_shimmy_adapter_on_a_chance_game_warns_and_names_the_fix():
    from shimmy import OpenSpielCompatibilityV0

    with pytest.warns(
        UserWarning, match=r"applied openspiel_env's fix.*openspiel_env\('kuhn_poker'\)"
    ):
        SelfPlayEnv(OpenSpielCompatibilityV0(game_name="kuhn_poker"))


def raw_kuhn():
    from shimmy import OpenSpielCompatibilityV0

    return OpenSpielCompatibilityV0(game_name="kuhn_poker")


@pytest.mark.filterwarnings("ignore:Shimmy's OpenSpielCompatibilityV0 truncates")
def test_raw_shimmy_adapter_on_a_chance_game_plays_whole_games_not_truncated_ones():
    env = SelfPlayEnv(raw_kuhn(), learner="player_0")
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    ends = 0
    for _ in range(200):
        mask = env.action_masks()
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not truncated  # Shimmy's adapter alone truncates every game after one move
        if terminated:
            assert info["selfplay"]["outcome"] in (0.0, 1.0)  # poker has a winner
            ends += 1
            env.reset()
    assert ends > 20


@pytest.mark.filterwarnings("ignore:Shimmy's OpenSpielCompatibilityV0 truncates")
@pytest.mark.parametrize("num_workers", [0, 1])
def test_the_vector_env_fixes_a_raw_shimmy_chance_game_too(num_workers):
    venv = SelfPlayVecEnv(raw_kuhn, n_envs=2, learner="player_0", num_workers=num_workers)
    venv.reset()
    for _ in range(100):
        _, _, dones, infos = venv.step(np.array([0, 0]))
        for done, info in zip(dones, infos, strict=True):
            if done:
                assert info["TimeLimit.truncated"] is False
                assert info["selfplay"]["outcome"] in (0.0, 1.0)
    venv.close()
