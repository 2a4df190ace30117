"""The end-of-run evaluation of ``sp-wrappers train`` spreads its games over forced openings and
says how many distinct games it played (a deterministic learner against a deterministic bot
otherwise replays the same few games)."""

from __future__ import annotations

import json

import numpy as np
import torch
from pettingzoo.classic import tictactoe_v3

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli.app import run_command
from sp_wrappers.core.policies import CallablePolicy
from sp_wrappers.evaluation.openings import spread_match

TINY = ("--n-envs", "2", "--hp", "n_steps=64", "--hp", "batch_size=64", "--save-every", "128")


def test_the_end_of_run_games_start_from_every_opening_and_count_distinct_games(tmp_path, capsys):
    torch.set_num_threads(1)
    out = tmp_path / "ttt"
    argv = ["tictactoe_v3", "--timesteps", "128", *TINY, "--eval-games", "18", "--out", str(out)]
    assert run_command("train", [*argv, "--no-plots", "--seed", "3"]) == 0
    stdout = capsys.readouterr().out
    ratings = json.loads((out / "ratings.json").read_text())
    for name in ("random", "minimax"):
        evaluation = ratings["evaluation"][name]
        assert evaluation["games"] == 18
        # the 9 first moves of tic-tac-toe, each from both seats
        assert evaluation["openings"] == 9 and evaluation["opening_plies"] == 1
        assert evaluation["by_seat"] and sum(map(sum, evaluation["by_seat"].values())) == 18
        assert 9 <= evaluation["distinct_games"] <= 18
    assert "from 9 forced openings of 1 move(s)" in stdout
    assert "distinct)" in stdout
    archive = SnapshotArchive(out / "archive", create=False)
    first_moves = {m.seat_a for m in archive.matches(source="evaluation")}
    assert first_moves == {"player_1", "player_2"}
    assert len(archive.matches(source="evaluation")) == 36


def test_a_deterministic_pair_plays_one_distinct_game_per_opening_and_seat():
    a = CallablePolicy(lambda obs, mask: int(np.flatnonzero(mask)[0]), "first-legal")
    b = CallablePolicy(lambda obs, mask: int(np.flatnonzero(mask)[-1]), "last-legal")
    result = spread_match(tictactoe_v3.env, a, b, n_games=40, plies=1, seed=0)
    assert result.n_games == 40 and result.openings == 9
    # 18 (opening, seat) pairs: the 22 games beyond them replay games already played
    assert result.distinct_games == 18
    # without openings (what the summary played before): one game per seat, replayed
    plain = spread_match(tictactoe_v3.env, a, b, n_games=40, plies=0, seed=0)
    assert plain.distinct_games == 2 and plain.openings == 1


def test_the_leagues_main_agents_are_evaluated_from_openings_too(tmp_path, capsys):
    from sp_wrappers.cli import main

    torch.set_num_threads(1)
    out = tmp_path / "league"
    tiny = [
        "--chunk-steps", "64", "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=32",
        "--snapshot-max-steps", "64", "--eval-games", "4", "--backend", "serial", "--no-progress",
        "--no-plots", "--league-exploiters", "0", "--main-exploiters", "0",
    ]  # fmt: skip
    assert main(["league", "tictactoe_v3", "--timesteps", "128", *tiny, "--out", str(out)]) == 0
    assert "distinct)" in capsys.readouterr().out
    ratings = json.loads((out / "ratings.json").read_text())
    for evaluation in ratings["evaluation"]["main_agent_0"].values():
        assert evaluation["games"] == 4 and evaluation["openings"] == 2  # 2 openings x 2 seats
        assert 2 <= evaluation["distinct_games"] <= 4
