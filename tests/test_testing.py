"""``sp_wrappers.testing``: a user checks their own game with self-play in one call, and a game
that breaks what self-play needs is refused with a message naming the fix."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3

from sp_wrappers.testing import SelfPlayCheckError, check_gymnasium_env, check_selfplay
from sp_wrappers.testing.games import AsymmetricGuessGame, EarlyExitGame, GuessGame, RaceGame


@pytest.mark.parametrize(
    "env_fn",
    [GuessGame, AsymmetricGuessGame, EarlyExitGame, lambda: RaceGame(mask_in="info")],
    ids=["parallel", "asymmetric", "early-exit", "masks-in-info"],
)
def test_the_test_games_pass_the_check_with_random_moves(env_fn):
    report = check_selfplay(env_fn, learner_steps=0)
    assert report.episodes == 4 * len(report.seats) and report.snapshots == 0


def test_a_real_game_passes_with_a_learner_whose_snapshot_plays_back():
    report = check_selfplay(tictactoe_v3.env, learner_steps=64, episodes=2)
    assert report.game == "tictactoe_v3" and report.snapshots >= 1 and report.matches >= 2


class _OutOfSpace(RaceGame):
    def observe(self, agent):
        out = super().observe(agent)
        out["observation"] = out["observation"] * 5.0  # above the Box's high of 1
        return out


class _Endless(RaceGame):
    def _legal(self):
        return np.ones(3, dtype=np.int8)

    def step(self, action):
        self.counter = 0  # never reaches the target
        super().step(action)


@pytest.mark.parametrize(
    ("env_fn", "fragment"),
    [
        (_OutOfSpace, "outside the learner's observation space"),
        (lambda: _Endless(n_players=2), "did not end in 50 learner moves"),
    ],
)
def test_a_game_that_breaks_self_play_is_refused_naming_the_fix(env_fn, fragment):
    with pytest.raises(SelfPlayCheckError, match=fragment):
        check_selfplay(env_fn, learner_steps=0, max_moves=50, api=False)


class _Unseeded(RaceGame):
    resets = 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed, options=options)
        _Unseeded.resets += 1
        self.counter = _Unseeded.resets % 3  # the same seed, another game


def test_a_game_that_ignores_its_seed_is_refused_by_the_libraries_checkers():
    with pytest.raises(SelfPlayCheckError, match="seed_test(.|\\n)*reset\\(seed=\\.\\.\\.\\)"):
        check_selfplay(lambda: _Unseeded(n_players=2), learner_steps=0)
    # Gymnasium's checker, run on the self-play env, replays a reset and a step and sees them differ
    with pytest.raises(SelfPlayCheckError, match="Gymnasium's env checker"):
        check_gymnasium_env(lambda: _Unseeded(n_players=2), "player_0")


def test_each_step_is_a_public_check_that_calls_the_libraries_checkers(monkeypatch):
    import gymnasium.utils.env_checker
    import stable_baselines3.common.env_checker

    from sp_wrappers import testing

    seen = []
    for module, name in (
        (gymnasium.utils.env_checker, "gym"),
        (stable_baselines3.common.env_checker, "sb3"),
    ):
        real = module.check_env
        monkeypatch.setattr(
            module,
            "check_env",
            lambda env, *a, _r=real, _n=name, **k: (
                seen.append((_n, type(env).__name__)) or _r(env, *a, **k)
            ),
        )
    testing.check_gymnasium_env(tictactoe_v3.env, "player_1")
    assert seen == [("gym", "SelfPlayEnv"), ("sb3", "SelfPlayEnv")]
    assert {
        "check_pettingzoo_api",
        "check_seeding",
        "check_seats",
        "check_vec_env",
        "check_learner",
    } <= set(testing.__all__)
