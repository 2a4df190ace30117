"""``sp-wrappers train``: a complete run directory for every registered game, resume, and errors.

Budgets are tiny (a few hundred learner steps, two evaluation games): these tests check the
plumbing, not the strength (``benchmarks/strength.py`` measures that).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_exit_2
from gymnasium import spaces
from pettingzoo import ParallelEnv

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli import main as cli_main
from sp_wrappers.cli.app import run_command
from sp_wrappers.games.registry import GAMES, pettingzoo_games
from sp_wrappers.runs.recipes import ALGOS, RECIPES, recipe_for

ROOT = Path(__file__).resolve().parents[2]
TINY = ("--n-envs", "2", "--hp", "n_steps=64", "--hp", "batch_size=64", "--save-every", "128")
TINY_GAME_KWARGS = {"pong_v3": ("--game-kwarg", "max_cycles=40")}
CONFIG_KEYS = {
    "format_version", "game", "game_kwargs", "algo", "hyperparams", "sampler", "learner",
    "n_envs", "save_every", "seed", "timesteps", "eval_games", "draw_reward", "history",
}  # fmt: skip


def train(capsys, *argv: object) -> tuple[int, str, str]:
    status = run_command("train", [str(a) for a in argv] + ["--no-progress"])
    out, err = capsys.readouterr()
    return status, out, err


def has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


class BoxActionGame(ParallelEnv):
    """Two players pick a number in [-1, 1] (a ``Box`` action space); closer to 0 wins."""

    metadata = {"name": "box_action_v0", "is_parallelizable": True}

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode
        self.possible_agents = ["a", "b"]
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space:
        return spaces.Box(0.0, 1.0, (2,), np.float32)

    def action_space(self, agent: str) -> spaces.Space:
        return spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        return {a: np.zeros(2, np.float32) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        da, db = (abs(float(np.asarray(actions[a]).ravel()[0])) for a in ("a", "b"))
        ra = float(np.sign(db - da))
        obs = {a: np.zeros(2, np.float32) for a in self.agents}
        rewards = {"a": ra, "b": -ra}
        done = {a: True for a in self.agents}
        self.agents = []
        return obs, rewards, done, {a: False for a in done}, {a: {} for a in done}


def box_action_game() -> BoxActionGame:
    return BoxActionGame()


# ------------------------------------------------------------------------------------------------
# A complete run directory for every registered game
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", sorted(g for g, spec in GAMES.items() if spec.teams is None))
def test_train_writes_a_complete_run_directory_for_every_registered_game(game, tmp_path, capsys):
    out = tmp_path / "run"
    status, stdout, err = train(
        capsys, game, "--timesteps", 256, *TINY, *TINY_GAME_KWARGS.get(game, ()),
        "--eval-games", 2, "--out", out,
    )  # fmt: skip
    assert status == 0, err
    config = json.loads((out / "config.json").read_text())
    assert CONFIG_KEYS <= set(config)
    assert config["game"] == game and config["algo"] == RECIPES[game].algo
    assert config["timesteps"] >= 256 and config["history"][0]["final_snapshot"]
    assert (out / "model.zip").is_file()
    archive = SnapshotArchive(out / "archive", create=False)
    assert len(archive) >= 2 and archive.matches(source="evaluation")
    ratings = json.loads((out / "ratings.json").read_text())
    assert ratings["anchor"] == "random" and ratings["final"]["id"] == ratings["final_snapshot"]
    assert set(ratings["evaluation"]) >= {"random"}
    assert all(r["games"] == 2 for r in ratings["evaluation"].values())
    if has_matplotlib():
        assert (out / "plots" / "ratings.png").is_file() and (
            out / "plots" / "payoff.png"
        ).is_file()
    assert "Final learner" in stdout and "vs random" in stdout


def test_the_reference_bots_join_the_end_of_run_evaluation(tmp_path, capsys):
    out = tmp_path / "ttt"
    status, stdout, err = train(
        capsys, "tictactoe_v3", "--timesteps", 128, *TINY, "--eval-games", 2, "--out", out,
        "--no-plots",
    )  # fmt: skip
    assert status == 0, err
    ratings = json.loads((out / "ratings.json").read_text())
    assert set(ratings["evaluation"]) == {"random", "minimax"}
    assert "vs minimax" in stdout
    assert not (out / "plots").exists()


def test_draw_reward_is_recorded_and_kept_when_resuming(tmp_path, capsys):
    out = tmp_path / "contempt"
    common = ("--eval-games", 0, "--no-plots")
    argv = ("tictactoe_v3", "--timesteps", 128, *TINY, "--draw-reward", -0.5, "--out", out)
    status, _, err = train(capsys, *argv, *common)
    assert status == 0, err
    assert json.loads((out / "config.json").read_text())["draw_reward"] == -0.5
    status, _, err = train(capsys, "--resume", out, "--timesteps", 64, *common)
    assert status == 0, err
    config = json.loads((out / "config.json").read_text())
    assert config["draw_reward"] == -0.5 and config["history"][-1]["resumed"]


# ------------------------------------------------------------------------------------------------
# Resume and reproduce
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ttt_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ttt") / "run"
    argv = ["tictactoe_v3", "--timesteps", "256", *TINY, "--eval-games", "2", "--out", str(out)]
    assert run_command("train", argv + ["--no-progress", "--no-plots"]) == 0
    return out


@pytest.fixture
def run(ttt_run, tmp_path) -> Path:
    return shutil.copytree(ttt_run, tmp_path / "run")


def test_resume_continues_the_steps_and_the_snapshot_numbering(run, capsys):
    before = SnapshotArchive(run / "archive", create=False).snapshots()
    config = json.loads((run / "config.json").read_text())
    status, stdout, err = train(capsys, "--resume", run, "--timesteps", 256, "--no-plots")
    assert status == 0, err
    assert "Resuming" in stdout
    after = SnapshotArchive(run / "archive", create=False).snapshots()
    new = after[len(before) :]
    assert [s.id for s in after[: len(before)]] == [s.id for s in before]
    assert new and all(int(s.id.split("-")[1]) > int(before[-1].id.split("-")[1]) for s in new)
    assert all(s.step > before[-1].step for s in new)
    resumed = json.loads((run / "config.json").read_text())
    assert resumed["timesteps"] == config["timesteps"] + 256
    assert [h["resumed"] for h in resumed["history"]] == [False, True]
    assert resumed["hyperparams"] == config["hyperparams"]


def test_resume_of_a_finished_run_asks_for_more_timesteps(run, capsys):
    status, _, err = train(capsys, "--resume", run)
    assert_exit_2(status, err, "pass --timesteps N")


def test_resume_refuses_to_change_the_algorithm(run, capsys):
    status, _, err = train(capsys, "--resume", run, "--algo", "ppo", "--timesteps", 64)
    assert_exit_2(status, err, "--algo cannot change on --resume")


def test_config_json_reproduces_the_run(run, tmp_path, capsys):
    status, _, err = train(capsys, "--config", run / "config.json", "--out", tmp_path / "again")
    assert status == 0, err
    first = json.loads((run / "config.json").read_text())
    second = json.loads((tmp_path / "again" / "config.json").read_text())
    for key in CONFIG_KEYS - {"history"}:
        assert second[key] == first[key], key


def test_the_sp_wrappers_command_runs_train_and_reports_errors_in_one_line(run, tmp_path, capsys):
    status = cli_main(
        [
            "train",
            "--config",
            str(run / "config.json"),
            "--out",
            str(tmp_path / "c"),
            "--timesteps",
            "64",
            "--eval-games",
            "0",
            "--no-progress",
            "--no-plots",
        ]
    )
    assert status == 0
    capsys.readouterr()
    assert cli_main(["train", "chess_v9", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("sp-wrappers: error: Unknown game 'chess_v9'") and len(err.splitlines()) == 1
    )


# ------------------------------------------------------------------------------------------------
# Bad arguments: one clear line, exit status 2
# ------------------------------------------------------------------------------------------------


def test_unknown_game_lists_the_registered_games(capsys):
    status, _, err = train(capsys, "chess_v9")
    assert_exit_2(status, err, "Unknown game 'chess_v9'", *GAMES, "module:function")
    # and both other lists: a count and the command that prints them
    assert "did you mean chess_v6" in err and f"PettingZoo's {len(pettingzoo_games())} " in err, err
    assert "OpenSpiel's" in err and "sp-wrappers games" in err, err


def test_unknown_algorithm_lists_the_choices(capsys):
    status, _, err = train(capsys, "tictactoe_v3", "--algo", "sarsa")
    error, usage = err.strip().splitlines()  # argparse's errors: the line, then a short usage
    assert status == 2 and usage.startswith("usage: sp-wrappers train")
    assert all(fragment in error for fragment in ("invalid choice: 'sarsa'", *ALGOS)), error


def test_dqn_on_a_box_action_space_is_refused(tmp_path, capsys):
    status, _, err = train(capsys, "test_train_command:box_action_game", "--algo", "dqn",
                           "--out", tmp_path / "r")  # fmt: skip
    assert_exit_2(status, err, "--algo dqn needs a Discrete action space", "Box")


def test_maskable_ppo_on_a_game_without_masks_is_refused(tmp_path, capsys):
    status, _, err = train(capsys, "pong_v3", "--algo", "maskable_ppo", "--out", tmp_path / "r")
    assert_exit_2(status, err, "--algo maskable_ppo needs action masks")


@pytest.mark.parametrize(
    "options, message",
    [
        (["--latest-ratio", "1.5"], "--latest-ratio must be between 0 and 1"),
        (["--random-ratio", "-0.1"], "--random-ratio must be between 0 and 1"),
        (["--timesteps", "0"], "--timesteps must be at least 1"),
        (["--swap-every", "0"], "--swap-every must be at least 1"),
        (["--random-ratio", "0.6", "--reference-ratio", "0.6"], "add up to more than 1"),
        (["--hp", "learning_rate=fast"], "'lin_<rate>'"),
        (["--hp", "no_such_option=1"], "Bad hyperparameters for MaskablePPO"),
        (["--hp", "novalue"], "--hp takes KEY=VALUE"),
        (["--draw-reward", "-2"], "--draw-reward must be between -1 and 1"),
        (["--game-kwarg", "no_such_kwarg=1"], "Cannot build the game 'tictactoe_v3'"),
    ],
)
def test_bad_settings_fail_with_one_line(options, message, tmp_path, capsys):
    status, _, err = train(capsys, "tictactoe_v3", *options, "--out", tmp_path / "r")
    assert_exit_2(status, err, message)


def test_reference_ratio_needs_a_game_with_a_reference_bot(tmp_path, capsys):
    status, _, err = train(capsys, "texas_holdem_v4", "--reference-ratio", "0.1", "--out", tmp_path)
    assert_exit_2(
        status, err, "--reference-ratio needs a game with a reference bot", "tictactoe_v3"
    )


def test_an_existing_run_is_not_overwritten(run, capsys):
    status, _, err = train(capsys, "tictactoe_v3", "--out", run)
    assert_exit_2(status, err, "already holds a run", "--resume")


def test_resume_needs_a_run_directory(tmp_path, capsys):
    status, _, err = train(capsys, "--resume", tmp_path / "nothing")
    assert_exit_2(status, err, "config.json does not exist")


# ------------------------------------------------------------------------------------------------
# Recipes
# ------------------------------------------------------------------------------------------------


def test_every_registered_game_has_a_recipe_whose_algorithm_fits_it():
    for name in GAMES:
        recipe = RECIPES[name]
        assert recipe.algo in ALGOS
        has_masks = name in ("tictactoe_v3", "connect_four_v3", "texas_holdem_v4")
        assert (recipe.algo == "maskable_ppo") == has_masks
        json.dumps(recipe.to_dict())  # goes into config.json as-is


def test_another_algorithm_gets_the_generic_recipe_but_keeps_the_game_settings():
    recipe = recipe_for("texas_holdem_v4", algo="dqn")
    assert recipe.algo == "dqn" and not recipe.tuned
    assert recipe.eval_games == RECIPES["texas_holdem_v4"].eval_games


@pytest.mark.parametrize(
    "game, algo",
    [
        ("pettingzoo.classic.connect_four_v3:env", "maskable_ppo"),
        ("test_train_command:box_action_game", "ppo"),
    ],
)
def test_a_game_by_import_path_gets_maskable_ppo_when_it_has_masks_else_ppo(
    game, algo, tmp_path, capsys
):
    status, _, err = train(capsys, game, "--timesteps", 64, *TINY, "--eval-games", 2,
                           "--out", tmp_path / "r", "--no-plots")  # fmt: skip
    assert status == 0, err
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["algo"] == algo and config["game"] == game


def test_opponent_draw_and_illegal_action_are_recorded_kept_on_resume_and_applied(tmp_path, capsys):
    out = tmp_path / "shared"
    common = ("--eval-games", 0, "--no-plots")
    argv = ("tictactoe_v3", "--timesteps", 128, *TINY, "--opponent-draw", "shared", "--out", out)
    status, _, err = train(capsys, *argv, *common)
    assert status == 0, err
    config = json.loads((out / "config.json").read_text())
    assert config["opponent_draw"] == "shared" and config["illegal_action"] == "loss"
    status, _, err = train(capsys, "--resume", out, "--timesteps", 64, *common)
    assert status == 0, err
    assert json.loads((out / "config.json").read_text())["opponent_draw"] == "shared"

    # plain PPO (no masks) soon plays an occupied square: "raise" stops with one line naming it
    strict = tmp_path / "strict"
    argv = ("tictactoe_v3", "--algo", "ppo", "--timesteps", 512, *TINY, "--out", strict)
    status, _, err = train(capsys, *argv, "--illegal-action", "raise", *common)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "chose illegal action" in err and "--illegal-action loss" in err
    status, _, err = train(capsys, *argv[:-1], tmp_path / "lenient", *common)
    assert status == 0, err


@pytest.mark.parametrize("below", ["", "sub"])
def test_out_naming_a_file_is_one_line_and_exit_2(below, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not a run")
    out = afile / below if below else afile
    status, _, err = train(capsys, "tictactoe_v3", "--timesteps", 64, "--out", out)
    assert status == 2 and "Traceback" not in err, err
    assert f"{afile} is a file" in err.strip().splitlines()[-1] and "--out" in err
    assert afile.read_text() == "not a run"


def test_the_train_command_of_a_plain_game_never_runs_a_team_or_league_function(tmp_path):
    """``sp-wrappers train tictactoe_v3``, traced in a process of its own: no function of a team or
    league module runs (building the ``league`` command's parser imports its modules, whose
    import is not a call into them)."""
    code = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
from conftest import team_or_league_module, is_function
entered, seen = set(), set()
def profile(frame, event, arg):
    name = frame.f_code.co_name
    if event == "call" and frame.f_code.co_filename.endswith("single.py"):
        seen.add(name)
    code = frame.f_code
    if event == "call" and is_function(code) and team_or_league_module(code.co_filename):
        entered.add(frame.f_code.co_filename.split("sp_wrappers")[-1] + ":" + name)
sys.setprofile(profile)
from sp_wrappers.cli import main
status = main(["train", "tictactoe_v3", "--timesteps", "128", "--n-envs", "2", "--hp", "n_steps=64",
               "--hp", "batch_size=64", "--eval-games", "1", "--no-progress", "--no-plots",
               "--no-report", "--out", {str(tmp_path / "run")!r}])
sys.setprofile(None)
print("learn" in seen, status, sorted(entered))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.splitlines()
    assert out[-1] == "True 0 []"  # the trace saw SingleRun.learn, and no team or league function
