"""``sp_wrappers.testing``: a user checks their own game with self-play in one call, and a game
that breaks what self-play needs is refused with a message naming the fix."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3

from sp_wrappers.testing import SelfPlayCheckError, check_selfplay
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
