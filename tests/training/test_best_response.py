"""The learned best response where the truth is known: tic-tac-toe, whose exact walk says which
targets can be beaten. Tiny budgets (a few thousand learner steps at most)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers import (
    CallablePolicy,
    MixturePolicy,
    exploitability,
    learned_best_response,
)
from sp_wrappers.games.baselines import PerfectTicTacToePolicy
from sp_wrappers.training.best_response import LOWER_BOUND, stochastic_policy


def first_legal(obs, mask):
    """Plays the lowest free cell: beatable (the exact walk says so)."""
    return int(np.flatnonzero(mask)[0])


FIRST_LEGAL = CallablePolicy(first_legal, "first-legal")


def tiny_ppo(venv):
    torch.set_num_threads(1)
    return MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=64,
        batch_size=64,
        n_epochs=4,
        seed=0,
        policy_kwargs={"net_arch": [32]},
    )


def test_it_finds_a_win_against_a_policy_the_exact_walk_calls_beatable():
    assert exploitability(FIRST_LEGAL, tictactoe_v3.env()).unbeatable is False
    result = learned_best_response(
        tictactoe_v3.env, FIRST_LEGAL, tiny_ppo, steps=2048, n_envs=4, evaluations=2, plies=1
    )
    wins, _, _ = result.openings.wdl()
    assert wins > 0
    assert result.score > result.curve[0]["score"]  # it learned: better than the fresh learner
    assert result.score > 0.5  # wins more than it loses against the beatable bot
    low, high = result.interval
    assert low <= result.score <= high
    assert LOWER_BOUND in result.summary()


def test_it_scores_at_most_a_draw_against_perfect_play():
    perfect = PerfectTicTacToePolicy()
    assert exploitability(perfect, tictactoe_v3.env()).unbeatable
    result = learned_best_response(
        tictactoe_v3.env, perfect, tiny_ppo, steps=1024, n_envs=4, evaluations=2, plies=1
    )
    assert all(point["wins"] == 0 for point in result.curve)
    assert result.score <= 0.5
    # minimax breaks ties at random: every opening is played more than once per seat
    assert result.openings.n_games == 2 * 9 * 2 and stochastic_policy(perfect)


def test_the_curve_has_a_point_at_the_start_and_every_steps_over_k():
    result = learned_best_response(
        tictactoe_v3.env,
        PerfectTicTacToePolicy(tie_break="first"),
        tiny_ppo,
        steps=512,
        n_envs=2,
        evaluations=4,
        plies=1,
    )
    assert [p["step"] for p in result.curve] == [0, 128, 256, 384, 512]
    assert result.openings.n_games == 18  # a deterministic target: each opening once per seat
    assert result.steps == result.model.num_timesteps == 512
    record = result.to_dict()
    assert record["bound"] == LOWER_BOUND and len(record["curve"]) == 5
    assert record["final"]["games"] == 18


def test_a_mixture_target_plays_one_member_per_game_and_several_games_per_opening():
    mixture = MixturePolicy([(FIRST_LEGAL, 0.5), (PerfectTicTacToePolicy(), 0.5)], "mix")
    result = learned_best_response(
        tictactoe_v3.env, mixture, tiny_ppo, steps=256, n_envs=2, evaluations=1, plies=1,
        min_games=72,
    )  # fmt: skip
    assert result.openings.n_games == 72  # 9 openings x 2 seats x 4 repeats
    assert result.target == "mix"


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError, match="steps must be at least 1"):
        learned_best_response(tictactoe_v3.env, FIRST_LEGAL, tiny_ppo, steps=0)
    with pytest.raises(ValueError, match="evaluations must be at least 1"):
        learned_best_response(tictactoe_v3.env, FIRST_LEGAL, tiny_ppo, steps=8, evaluations=0)
