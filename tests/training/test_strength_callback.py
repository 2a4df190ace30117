"""StrengthCallback: logs its keys through SB3's logger, keeps its history, draws its plot."""

from __future__ import annotations

import csv
import json

import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import configure

from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.games.baselines import PerfectTicTacToePolicy
from sp_wrappers.training.strength import HISTORY_NAME, PLOT_NAME, StrengthCallback, default_ladder

KEYS = ["eval/random/score", "eval/minimax/score", "eval/rating", "eval/rating_std_error"]


def tiny_model(seed: int = 0) -> MaskablePPO:
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        seed=seed,
        policy_kwargs={"net_arch": [16]},
    )


def callback(run_dir, **kwargs) -> StrengthCallback:
    kwargs.setdefault("eval_every", 64)
    return StrengthCallback.for_game("tictactoe_v3", run_dir=run_dir, **kwargs)


def csv_rows(folder) -> list[dict[str, str]]:
    with open(folder / "progress.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.learning
def test_the_callback_logs_its_keys_keeps_its_history_and_draws_its_plot(
    tmp_path, single_thread_torch
):
    model = tiny_model()
    model.set_logger(configure(str(tmp_path / "log"), ["csv"]))
    strength = callback(tmp_path / "run")
    model.learn(128, callback=strength)

    rows = [r for r in csv_rows(tmp_path / "log") if r.get("eval/rating")]
    assert [int(r["time/total_timesteps"]) for r in rows] == [0, 64, 128]
    for row in rows:
        assert all(row[key] != "" for key in KEYS)
        assert 0.0 <= float(row["eval/minimax/score"]) <= 0.5  # perfect play never loses

    history = json.loads((tmp_path / "run" / HISTORY_NAME).read_text())
    assert history["format_version"] == 1 and history["ladder"] == ["random", "minimax"]
    assert len(history["openings"]) == 9
    assert [e["step"] for e in history["evaluations"]] == [0, 64, 128]
    last = history["evaluations"][-1]
    assert sum(last["wdl"]["minimax"]) == 18 and last["wdl"]["minimax"][0] == 0
    assert sorted(last["by_seat"]["random"]) == ["player_1", "player_2"]
    low, high = last["rating_interval"]
    assert low <= last["rating"] <= high
    (match,) = history["rung_matches"]
    assert (match["player_a"], match["player_b"], match["games"]) == ("random", "minimax", 18)
    assert match["wins"] == 0  # random never beats perfect play
    ratings = history["ladder_ratings"]
    assert ratings["random"] == 1000.0 < ratings["minimax"]

    plot = tmp_path / "run" / "plots" / PLOT_NAME
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.learning
def test_a_resumed_run_continues_the_curve_without_replaying_the_ladder(
    tmp_path, single_thread_torch, monkeypatch
):
    model = tiny_model()
    model.set_logger(configure(str(tmp_path / "log"), ["csv"]))
    model.learn(64, callback=callback(tmp_path / "run"))

    def replay(self):
        raise AssertionError("the rungs' games are in the history; they must not be replayed")

    monkeypatch.setattr(StrengthCallback, "_play_rungs", replay)
    model.learn(64, callback=callback(tmp_path / "run"), reset_num_timesteps=False)
    history = json.loads((tmp_path / "run" / HISTORY_NAME).read_text())
    assert [e["step"] for e in history["evaluations"]] == [0, 64, 128]


def test_an_evaluation_records_its_keys_in_the_logger_before_it_dumps(tmp_path, monkeypatch):
    model = tiny_model()
    model.set_logger(configure(str(tmp_path / "log"), ["csv"]))
    strength = callback(None, openings=[(0,), (4,)])
    strength.init_callback(model)
    recorded = {}
    monkeypatch.setattr(
        model.logger, "dump", lambda step=0: recorded.update(model.logger.name_to_value)
    )
    record = strength.evaluate()
    assert set(KEYS) <= set(recorded)
    assert recorded["eval/rating"] == record["rating"]
    assert sum(record["wdl"]["random"]) == 4  # two openings, both seats
    assert strength.history["rung_matches"][0]["games"] == 4


def test_a_history_of_another_ladder_is_refused_naming_the_file(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / HISTORY_NAME).write_text(
        json.dumps({"format_version": 1, "ladder": ["random"], "evaluations": []})
    )
    model = tiny_model()
    strength = callback(run)
    with pytest.raises(ValueError, match=rf"{HISTORY_NAME} holds the strength history of another"):
        model.learn(64, callback=strength)


def test_a_history_of_another_format_is_refused_naming_the_file(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / HISTORY_NAME).write_text(json.dumps({"format_version": 99}))
    with pytest.raises(ValueError, match=r"strength.json: has format_version 99"):
        tiny_model().learn(64, callback=callback(run))


def test_a_model_of_another_game_is_refused_before_any_game_is_played(tmp_path):
    strength = StrengthCallback(connect_four_v3.env, default_ladder("connect_four_v3"))
    with pytest.raises(ValueError, match=r"connect_four_v3's seat observations .* the model"):
        tiny_model().learn(64, callback=strength)


@pytest.mark.parametrize(
    "ladder, problem",
    [
        ([], "at least one policy"),
        ([RandomPolicy(), RandomPolicy()], "distinct"),
        ([RandomPolicy(policy_id="learner")], "distinct and not 'learner'"),
    ],
)
def test_a_ladder_without_distinct_players_is_refused(ladder, problem):
    with pytest.raises(ValueError, match=problem):
        StrengthCallback(tictactoe_v3.env, ladder)


def test_the_default_ladders_climb():
    assert [p.policy_id for p in default_ladder("tictactoe_v3")] == ["random", "minimax"]
    assert isinstance(default_ladder("tictactoe_v3")[1], PerfectTicTacToePolicy)
    depths = [p.depth for p in default_ladder("connect_four_v3")]
    assert depths == [1, 2, 4]


@pytest.mark.parametrize("progress", [True, False])
def test_an_evaluation_shows_a_progress_bar_over_its_matches_when_asked(progress, capsys):
    # the ladder's games and the learner's can take minutes: a bar says what is being played
    strength = callback(None, openings=[(0,), (4,)], progress=progress)
    strength.init_callback(tiny_model())
    strength.evaluate()
    err = capsys.readouterr().err
    assert ("the ladder's own games" in err and "strength at step 0" in err) is progress, err
    assert "vs minimax" in err or not progress


TACTICS_KEYS = [
    "eval/tactics/wins_taken",
    "eval/tactics/threats_blocked",
    "eval/tactics/wins_handed",
]


@pytest.mark.learning
def test_each_evaluation_counts_the_learners_tactics_logs_and_draws_them(
    tmp_path, single_thread_torch
):
    model = tiny_model()
    model.set_logger(configure(str(tmp_path / "log"), ["csv"]))
    strength = callback(tmp_path / "run", tactics="minimax")
    model.learn(64, callback=strength)

    history = json.loads((tmp_path / "run" / HISTORY_NAME).read_text())
    for evaluation in history["evaluations"]:
        tactics = evaluation["tactics"]
        assert tactics["opponent"] == "minimax" and tactics["positions"] > 0
        # against perfect play the learner meets threats whenever it leaves one open
        assert tactics["safe_chances"] > 0
        assert tactics["wins_handed_share"] == tactics["wins_handed"] / tactics["safe_chances"]
    rows = [r for r in csv_rows(tmp_path / "log") if r.get("eval/rating")]
    assert len(rows) == 2
    for row in rows:
        assert row["eval/tactics/wins_handed"] != ""
    assert (tmp_path / "run" / "plots" / PLOT_NAME).read_bytes()[:4] == b"\x89PNG"


def test_tactics_are_on_for_the_board_games_against_the_first_rung():
    assert callback(None).tactics == "random"
    assert StrengthCallback.for_game("connect_four_v3").tactics == "alphabeta-d1"
    assert StrengthCallback(tictactoe_v3.env, [RandomPolicy()]).tactics is None
    with pytest.raises(ValueError, match=r"tactics must be True, False or one of the ladder's"):
        callback(None, tactics="alphabeta-d9")


def test_a_game_that_cannot_be_copied_keeps_its_curve_without_tactics():
    import threading

    def locked_tictactoe():
        game = tictactoe_v3.env()
        game.unwrapped.lock = threading.Lock()
        return game

    strength = StrengthCallback(
        locked_tictactoe, [RandomPolicy()], openings=[(0,), (4,)], tactics=True
    )
    strength.init_callback(tiny_model())
    with pytest.warns(
        RuntimeWarning, match=r"No tactics in the strength curve: .*cannot be copied"
    ):
        record = strength.evaluate()
    assert "tactics" not in record and record["scores"]["random"] >= 0.0
    assert "tactics" not in strength.evaluate()  # off from then on, without a second warning


def test_a_history_written_before_tactics_is_read_and_drawn(tmp_path):
    from sp_wrappers.training.strength import plot_strength

    history = {
        "ladder": ["random"],
        "ladder_ratings": {"random": 1000.0},
        "evaluations": [
            {
                "step": 0,
                "rating": 1000.0,
                "rating_interval": [900.0, 1100.0],
                "scores": {"random": 0.5},
            },
            {
                "step": 64,
                "rating": 1100.0,
                "rating_interval": [1000.0, 1200.0],
                "scores": {"random": 0.6},
                "tactics": {
                    "opponent": "random",
                    "wins_taken_share": 0.5,
                    "threats_blocked_share": None,
                    "wins_handed_share": 0.25,
                },
            },
        ],
    }
    path = plot_strength(history, tmp_path / PLOT_NAME)
    assert (tmp_path / PLOT_NAME).read_bytes()[:4] == b"\x89PNG" and path
