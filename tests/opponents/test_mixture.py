"""MixturePolicy: one member per game, in the envs and in exact evaluation."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3

from sp_wrappers import CallablePolicy, MixturePolicy, SelfPlayEnv, exploitability
from sp_wrappers.envs.vector.factory import make_selfplay_vec_env
from sp_wrappers.evaluation.policy_probabilities import as_mixture
from sp_wrappers.games.baselines import PerfectTicTacToePolicy


def marked(name: str, log: list[str]) -> CallablePolicy:
    """Plays the first free cell and writes its name in ``log`` at every move."""

    def act(obs, mask):
        log.append(name)
        return int(np.flatnonzero(mask)[0])

    return CallablePolicy(act, name)


def test_each_game_is_played_by_one_member_drawn_with_the_weights():
    log: list[str] = []
    mixture = MixturePolicy([(marked("a", log), 3.0), (marked("b", log), 1.0)], "mix")
    env = SelfPlayEnv(tictactoe_v3.env(), opponent=mixture)
    firsts = []
    for game in range(200):
        env.reset(seed=game)
        log.clear()
        done = False
        while not done:
            mask = env.driver.learner_mask()
            _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(mask)[-1]))
            done = terminated or truncated
        assert len(set(log)) == 1, log  # every opponent move of a game: one member
        firsts.append(log[0])
    share = firsts.count("a") / len(firsts)
    assert 0.65 < share < 0.85  # weight 0.75


def test_the_vector_env_keeps_one_member_per_copy_and_game():
    log: list[str] = []
    mixture = MixturePolicy([(marked("a", log), 1.0), (marked("b", log), 1.0)], "mix")
    venv = make_selfplay_vec_env(tictactoe_v3.env, n_envs=4, seed=0, opponent=mixture)
    venv.reset()
    for _ in range(60):
        masks = np.stack(venv.env_method("action_masks"))
        venv.step(np.array([int(np.flatnonzero(m)[-1]) for m in masks]))
    venv.close()
    assert mixture.open_games > 4  # several games per copy, each with its member
    assert {"a", "b"} <= set(log)


def test_exact_evaluation_reads_the_mixture_as_its_members_reach_weighted():
    first = CallablePolicy(lambda obs, mask: int(np.flatnonzero(mask)[0]), "first")
    perfect = PerfectTicTacToePolicy(tie_break="first")
    mixture = MixturePolicy([(first, 1.0), (perfect, 3.0)], "mix")
    assert [w for _, w in as_mixture(mixture)] == [0.25, 0.75]
    as_policy = exploitability(mixture, tictactoe_v3.env())
    as_list = exploitability([(first, 1.0), (perfect, 3.0)], tictactoe_v3.env())
    assert as_policy.nash_conv == pytest.approx(as_list.nash_conv)
    assert exploitability(MixturePolicy([(perfect, 1.0)]), tictactoe_v3.env()).nash_conv == 0.0


def test_bad_weights_are_refused_and_a_copy_starts_its_own_games():
    first = CallablePolicy(lambda obs, mask: 0, "first")
    with pytest.raises(ValueError, match="weights sum to 0"):
        MixturePolicy([(first, 0.0)])
    with pytest.raises(ValueError, match="finite weights of 0 or more"):
        MixturePolicy([(first, -1.0)])
    mixture = MixturePolicy([(PerfectTicTacToePolicy(), 1.0)])
    mixture.act(
        np.zeros((1, 3, 3, 2)), np.ones((1, 9), bool), np.random.default_rng(0), [(0, 0, "x")]
    )
    assert mixture.open_games == 1
    assert pickle.loads(pickle.dumps(mixture)).open_games == 0
