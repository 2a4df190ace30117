"""Outcomes per seat in a game of more than two players: three-player Texas hold'em, a real
MaskablePPO learner against random opponents. Every opponent seat's match row holds the learner's
result against that seat alone: the seat that won more than the learner is a learner loss, the one
that lost more a learner win (not the learner's mean outcome, a draw in both), in both
``SelfPlayEnv`` and ``SelfPlayVecEnv``."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from pettingzoo.classic import texas_holdem_v4
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from sp_wrappers import RandomPolicy, SelfPlayCallback, SelfPlayEnv, SelfPlayVecEnv
from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.seats import seat_outcomes
from sp_wrappers.training.callbacks import match_records


@pytest.fixture(autouse=True)
def _one_thread() -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def three_player_holdem() -> Any:
    return texas_holdem_v4.env(num_players=3)


class Summaries(BaseCallback):
    """Every finished episode's ``info["selfplay"]``, in the order the callbacks see them."""

    def __init__(self) -> None:
        super().__init__()
        self.summaries: list[dict[str, Any]] = []

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "selfplay" in info:
                self.summaries.append(info["selfplay"])
        return True


def by_returns(summary: dict[str, Any], seat: str) -> float:
    """The learner against one seat, from the returns (an illegal learner action: a loss)."""
    if "illegal_action" in summary:
        return 0.0
    mine, theirs = summary["returns"][summary["seat"]], summary["returns"][seat]
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


@pytest.mark.parametrize("vectorised", [False, True], ids=["SelfPlayEnv", "SelfPlayVecEnv"])
def test_the_seat_that_beat_the_learner_is_recorded_as_a_loss(tmp_path, vectorised):
    archive = SnapshotArchive(tmp_path / "archive")
    random = RandomPolicy(policy_id="random")
    if vectorised:
        venv = SelfPlayVecEnv(three_player_holdem, n_envs=2, opponent=random, learner="random")
    else:
        venv = DummyVecEnv(
            [lambda: SelfPlayEnv(three_player_holdem(), opponent=random, learner="random")] * 2
        )
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    seen = Summaries()
    selfplay = SelfPlayCallback(archive, save_every=10_000)
    model.learn(256, callback=[selfplay, seen])

    rows = [m for m in archive.matches() if m.player_b == "random"]
    expected = [
        (summary["seat"], seat, by_returns(summary, seat))
        for summary in seen.summaries
        for seat in summary["opponents"]
    ]
    assert [(r.seat_a, r.seat_b, r.score_a) for r in rows] == expected
    # hands where one opponent won more than the learner and the other lost more: a loss and a
    # win, where the learner's mean outcome (0.5) would have recorded two draws
    split = [s for s in seen.summaries if sorted(s["seat_outcomes"].values()) == [0.0, 1.0]]
    assert split, "no hand with one opponent ahead of the learner and one behind"
    assert all(s["outcome"] == 0.5 for s in split)
    # and every seat that finished ahead of the learner is a learner loss in its row
    ahead = {
        (i, seat)
        for i, s in enumerate(seen.summaries)
        for seat in s["opponents"]
        if s["returns"][seat] > s["returns"][s["seat"]]
    }
    assert ahead
    scores = [(i, seat) for i, s in enumerate(seen.summaries) for seat in s["opponents"]]
    assert all(row.score_a == 0.0 for key, row in zip(scores, rows, strict=True) if key in ahead)


def test_match_records_score_each_seat_and_an_outcome_fn_sees_two_seats():
    summary = {
        "outcome": 0.5,
        "seat": "player_0",
        "opponent": "snapshot-0001",
        "opponents": {"player_1": "snapshot-0001", "player_2": "random"},
        "returns": {"player_0": -1.0, "player_1": 3.0, "player_2": -2.0},
        "seat_outcomes": {"player_1": 0.0, "player_2": 1.0},
    }
    rows = match_records(summary, "learner", step=8)
    assert [(r["player_b"], r["seat_b"], r["score_a"]) for r in rows] == [
        ("snapshot-0001", "player_1", 0.0),
        ("random", "player_2", 1.0),
    ]
    seen = []

    def margin(returns: dict[str, float], learner: str) -> float:
        seen.append(sorted(returns))
        other = next(r for seat, r in returns.items() if seat != learner)
        return 1.0 if returns[learner] - other > 1 else 0.0

    assert seat_outcomes(summary["returns"], "player_0", ["player_1", "player_2"], margin) == {
        "player_1": 0.0,
        "player_2": 0.0,
    }
    assert seen == [["player_0", "player_1"], ["player_0", "player_2"]]
    assert seat_outcomes(summary["returns"], "player_0", ["player_1"], None, illegal_action=3) == {
        "player_1": 0.0
    }
