"""The one rule for illegal learner actions, whatever framework the game comes from.

Wherever the learner seat's legal actions are known (a mask in the observation dict, as in
PettingZoo's classic games, or in ``info["action_mask"]``, as in OpenSpiel games through Shimmy),
an illegal learner action never reaches the game: by default the learner's episode ends as a
loss (reward -1, outcome 0, ``info["selfplay"]["illegal_action"]``); ``illegal_action="raise"``
raises an error naming the action and the legal ones. Illegal opponent actions stay errors.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3
from stable_baselines3 import PPO

from sp_wrappers import (
    CallablePolicy,
    IllegalActionError,
    SelfPlayEnv,
    SelfPlayVecEnv,
    play_match,
)

pytest.importorskip("shimmy")
from sp_wrappers.games.adapters import openspiel_env  # noqa: E402


def first_legal(obs, mask):
    return int(np.flatnonzero(mask)[0])


def openspiel_tictactoe():
    return openspiel_env("tic_tac_toe")


# The first mover's seat in each framework's tic-tac-toe, and the same game built both ways.
GAMES = {
    "pettingzoo": (tictactoe_v3.env, "player_1"),
    "openspiel": (openspiel_tictactoe, "player_0"),
}


def replay_taken_square(env):
    """The learner (first mover) takes square 4, the opponent answers, the learner takes 4
    again: the same learner, the same illegal move, in any framework."""
    env.reset(seed=0)
    env.step(4)
    assert not env.action_masks()[4]
    return env.step(4)


@pytest.mark.parametrize("framework", sorted(GAMES))
def test_illegal_learner_action_ends_the_episode_as_a_loss(framework):
    make, first = GAMES[framework]
    env = SelfPlayEnv(make(), learner=first, opponent=CallablePolicy(first_legal))
    _, reward, terminated, truncated, info = replay_taken_square(env)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    summary = info["selfplay"]
    assert summary["outcome"] == 0.0
    assert summary["illegal_action"] == 4
    assert summary["return"] == -1.0
    assert summary["length"] == 2


def test_classic_and_openspiel_games_end_an_illegal_move_the_same_way():
    endings = []
    for make, first in GAMES.values():
        env = SelfPlayEnv(make(), learner=first, opponent=CallablePolicy(first_legal))
        _, reward, terminated, truncated, info = replay_taken_square(env)
        s = info["selfplay"]
        endings.append((reward, terminated, truncated, s["outcome"], s["illegal_action"]))
    assert endings[0] == endings[1]


@pytest.mark.parametrize("framework", sorted(GAMES))
def test_vector_env_applies_the_same_rule(framework):
    make, first = GAMES[framework]
    venv = SelfPlayVecEnv(make, n_envs=2, learner=first, opponent=CallablePolicy(first_legal))
    venv.seed(0)
    venv.reset()
    venv.step(np.array([4, 4]))
    _, rewards, dones, infos = venv.step(np.array([4, 8]))  # copy 0 repeats its move
    assert dones.tolist() == [True, False]
    assert rewards[0] == -1.0
    assert infos[0]["selfplay"]["outcome"] == 0.0
    assert infos[0]["selfplay"]["illegal_action"] == 4
    assert "illegal_action" not in infos[1].get("selfplay", {})
    venv.close()


@pytest.mark.parametrize("framework", sorted(GAMES))
def test_raise_names_the_action_and_the_legal_ones(framework):
    make, first = GAMES[framework]
    env = SelfPlayEnv(
        make(), learner=first, opponent=CallablePolicy(first_legal), illegal_action="raise"
    )
    env.reset(seed=0)
    env.step(4)
    legal = np.flatnonzero(env.action_masks()).tolist()
    expected = re.escape(f"illegal action 4; legal actions were {legal}")
    with pytest.raises(IllegalActionError, match=expected):
        env.step(4)
    # the game never saw the action: the learner can still play a legal one
    _, _, terminated, _, _ = env.step(legal[-1])
    assert not terminated


def test_vector_env_raise_names_the_action():
    venv = SelfPlayVecEnv(
        tictactoe_v3.env, n_envs=1, learner="player_1", opponent=CallablePolicy(first_legal),
        illegal_action="raise",
    )  # fmt: skip
    venv.seed(0)
    venv.reset()
    venv.step(np.array([4]))
    with pytest.raises(IllegalActionError, match="illegal action 4"):
        venv.step(np.array([4]))
    venv.close()


def test_unknown_rule_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="'loss'.*'raise'"):
        SelfPlayEnv(tictactoe_v3.env(), illegal_action="ignore")


def test_illegal_opponent_actions_stay_errors():
    always_4 = CallablePolicy(lambda obs, mask: 4, "always-4")
    env = SelfPlayEnv(tictactoe_v3.env(), learner="player_1", opponent=always_4)
    env.reset(seed=0)
    env.step(0)  # the opponent takes 4
    with pytest.raises(ValueError, match="Opponent 'always-4'.*illegal action 4"):
        env.step(1)


def test_play_match_scores_an_illegal_move_as_a_loss_for_the_evaluated_policy():
    always_4 = CallablePolicy(lambda obs, mask: 4, "always-4")
    result = play_match(tictactoe_v3.env, always_4, CallablePolicy(first_legal, "first"), 4)
    assert (result.wins, result.draws, result.losses) == (0, 0, 4)


def test_plain_ppo_without_masks_trains_on_an_openspiel_game():
    env = SelfPlayEnv(openspiel_env("tic_tac_toe"))
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    assert model.num_timesteps >= 128
