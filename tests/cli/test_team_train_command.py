"""``sp-wrappers train`` on team games: the registered team games, a run directory per team run,
resume, the errors, and the predator-prey example.

Budgets are tiny (a few hundred learner steps per team): these tests check the plumbing, not the
strength (``benchmarks/teams.py`` measures that).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_exit_2

from sp_wrappers.cli.app import run_command
from sp_wrappers.games.registry import GAMES, QUADRAPONG_TEAMS, MissingGameError, make_game
from sp_wrappers.runs.recipes import recipe_for

ROOT = Path(__file__).resolve().parents[2]
# Tiny PPO settings: n_steps * slots must exceed batch_size only a little.
TINY = (
    "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=64", "--hp", "n_epochs=1",
    "--save-every", "128", "--eval-games", "2", "--no-progress",
)  # fmt: skip
TAG_TINY = (*TINY, "--game-kwarg", "max_cycles=10")


def train(capsys, *argv: object) -> tuple[int, str, str]:
    status = run_command("train", [str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


# ------------------------------------------------------------------------------------------------
# The registered team games
# ------------------------------------------------------------------------------------------------


def test_simple_tag_is_registered_with_prefix_teams_and_discrete_actions():
    assert GAMES["simple_tag_v3"].teams == "prefix"
    game = make_game("simple_tag_v3")
    assert game.possible_agents == ["adversary_0", "adversary_1", "adversary_2", "agent_0"]
    assert game.action_space("agent_0").n == 5 and game.unwrapped.max_cycles == 25
    assert recipe_for("simple_tag_v3").teams == "prefix"


def test_a_missing_mpe2_names_the_mpe_extra(monkeypatch, capsys):
    for name in [m for m in sys.modules if m == "mpe2" or m.startswith("mpe2.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mpe2", None)  # `import mpe2` now raises ImportError
    with pytest.raises(MissingGameError, match=r'pip install "sp-wrappers\[mpe\]"'):
        make_game("simple_tag_v3")
    status, _, err = train(capsys, "simple_tag_v3", "--timesteps", 64, "--out", "unused")
    assert_exit_2(status, err, "needs the mpe2 package", 'pip install "sp-wrappers[mpe]"')
    assert importlib.util.find_spec("sp_wrappers") is not None


def test_quadrapong_groups_first_and_third_against_second_and_fourth_on_scaled_ram():
    assert GAMES["quadrapong_v4"].teams == QUADRAPONG_TEAMS
    assert QUADRAPONG_TEAMS == {
        "first_third": ("first_0", "third_0"),
        "second_fourth": ("second_0", "fourth_0"),
    }
    game = make_game("quadrapong_v4", max_cycles=20, frame_skip=4)
    game.reset(seed=0)
    obs = game.observe("first_0")
    assert obs.shape == (128,) and obs.dtype == np.float32 and 0.0 <= obs.min() <= obs.max() <= 1


def test_quadrapong_teams_step_with_a_team_learner_one_slot_per_teammate():
    from sp_wrappers.games.registry import game_factory
    from sp_wrappers.training.team_setup import make_team_vec_env

    env_fn = game_factory("quadrapong_v4", {"max_cycles": 12, "frame_skip": 4})
    venv = make_team_vec_env(env_fn, GAMES["quadrapong_v4"].teams, "first_third", 2, seed=0)
    assert venv.num_envs == 4  # 2 game copies x 2 teammates
    venv.reset()
    summaries = []
    for _ in range(15):
        _, _, dones, infos = venv.step(np.array([venv.action_space.sample() for _ in range(4)]))
        summaries += [
            i["selfplay"] for d, i in zip(dones, infos, strict=True) if d and "selfplay" in i
        ]
    venv.close()
    assert summaries and {s["team"] for s in summaries} == {"first_third"}
    assert all(set(s["team_returns"]) == {"first_third", "second_fourth"} for s in summaries)


# ------------------------------------------------------------------------------------------------
# sp-wrappers train on simple_tag_v3
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tag_run(tmp_path_factory):
    """A tiny team run of simple_tag_v3 (two team changes or more), shared by the tests below."""
    out = tmp_path_factory.mktemp("tag") / "run"
    argv = ["simple_tag_v3", "--teams", "prefix", "--timesteps", "384", "--team-change", "192"]
    status = run_command("train", [*argv, *TAG_TINY, "--out", str(out)])
    assert status == 0
    return out


def test_train_teams_writes_a_run_directory_with_a_model_and_an_archive_per_team(tag_run):
    config = json.loads((tag_run / "config.json").read_text())
    assert config["kind"] == "teams" and config["teams"] == "prefix"
    assert config["models"] == {"adversary": ["adversary"], "agent": ["agent"]}
    assert config["team_change"] == 192 and config["game_kwargs"]["max_cycles"] == 10
    for team in ("adversary", "agent"):
        assert (tag_run / "models" / f"{team}.zip").is_file()
        assert (tag_run / "archives" / team / "index.sqlite").is_file()
    state = json.loads((tag_run / "team_selfplay.json").read_text())
    assert state["team_changes"] >= 2 and all(n >= 384 for n in state["steps"].values())
    ratings = json.loads((tag_run / "ratings.json").read_text())
    assert set(ratings["teams"]) == {"adversary", "agent"}
    assert all(isinstance(r["elo"], float) for r in ratings["teams"].values())
    # each team's snapshots keep OpenSkill ratings with intervals beside Elo and Bradley-Terry
    for entry in ratings["teams"].values():
        assert {"openskill", "openskill_low", "openskill_high"} <= set(entry["latest_snapshot"])
        rated = [s for s in entry["snapshots"].values() if "openskill" in s]
        assert rated and all(
            s["openskill_low"] < s["openskill"] < s["openskill_high"] for s in rated
        )
    assert set(ratings["evaluation"]) == {"adversary", "agent"}
    assert ratings["evaluation"]["agent"]["games"] == 2


def test_a_team_run_ends_with_one_report_per_team_archive(tag_run):
    for team in ("adversary", "agent"):
        text = (tag_run / f"report-{team}.html").read_text()
        assert "<h2>The archive</h2>" in text and f"archives/{team}" in text
        assert "simple_tag_v3" in text  # the run's config.json, found from the team's archive
    assert not (tag_run / "report.html").exists()


def test_a_team_run_config_replays_with_config(tag_run, tmp_path, capsys):
    out = tmp_path / "again"
    status, stdout, err = train(
        capsys, "--config", tag_run / "config.json", "--timesteps", 192, "--out", out
    )
    assert status == 0, err
    first = json.loads((tag_run / "config.json").read_text())
    again = json.loads((out / "config.json").read_text())
    for key in ("game", "game_kwargs", "algo", "hyperparams", "teams", "team_change", "sampler"):
        assert again[key] == first[key], key


def test_train_teams_prints_each_turn_and_each_teams_rating(tmp_path, capsys):
    with_progress = [option for option in TAG_TINY if option != "--no-progress"]
    status, out, err = train(
        capsys, "simple_tag_v3", "--timesteps", 192, "--team-change", 192, *with_progress,
        "--out", tmp_path / "run",
    )  # fmt: skip
    assert status == 0, err
    turns = [line for line in out.splitlines() if " learned (team changes: " in line]
    assert len(turns) >= 2 and {t.split()[0] for t in turns} == {"adversary", "agent"}
    assert "adversary" in turns[0] and "agent" in turns[0] and "Elo" in turns[0]
    summary = out[out.index("Trained ppo") :]
    assert "  adversary  Elo" in summary and "  agent      Elo" in summary
    assert "against random teams" in summary
    assert "final games against random teams" in err  # a bar while the last games play


def test_resume_continues_with_the_same_learning_team_and_step_counts(tmp_path, capsys):
    out = tmp_path / "run"
    common = (*TAG_TINY, "--out", out)
    assert train(capsys, "simple_tag_v3", "--timesteps", 192, "--team-change", 192, *common)[0] == 0
    before = json.loads((out / "team_selfplay.json").read_text())
    status, stdout, err = train(capsys, "--resume", out, "--timesteps", 192, "--no-progress")
    assert status == 0, err
    assert "Resuming ppo teams on simple_tag_v3" in stdout
    after = json.loads((out / "team_selfplay.json").read_text())
    assert after["team_changes"] > before["team_changes"]
    for team, steps in before["steps"].items():
        assert after["steps"][team] > steps
    config = json.loads((out / "config.json").read_text())
    assert [h["resumed"] for h in config["history"]] == [False, True]
    assert config["history"][1]["from_steps"] == before["steps"]
    snapshots = sorted(p.name for p in (out / "archives" / "agent" / "snapshots").iterdir())
    assert snapshots[0] == "snapshot-0000.safetensors" and len(snapshots) >= 3


def test_resume_refuses_changing_the_teams(tag_run, capsys):
    status, _, err = train(capsys, "--resume", tag_run, "--teams", "prefix")
    assert_exit_2(status, err, "--teams cannot change on --resume")


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------


def test_shared_is_refused_when_the_teams_spaces_differ(tmp_path, capsys):
    status, _, err = train(capsys, "simple_tag_v3", "--shared", *TAG_TINY, "--out", tmp_path)
    assert_exit_2(
        status, err, "--shared trains one model for every team", "(16,)", "(14,)", "drop --shared"
    )
    assert not (tmp_path / "models").exists()


@pytest.mark.parametrize(
    "options, fragments",
    [
        (("--team-change", "0"), ["--team-change must be at least 1"]),
        (("--random-ratio", "0.2"), ["--random-ratio applies to single-learner runs"]),
        (("--teams", "{nope"), ["--teams takes 'prefix' or a JSON object"]),
        (
            ("--teams", '{"hunters": ["adversary_0", "adversary_1"], "prey": ["agent_0"]}'),
            ["'adversary_2'", "in no team"],
        ),
        (
            ("--teams", '{"a": ["adversary_0", "agent_0"], "b": ["adversary_1", "adversary_2"]}'),
            ["cannot be played by one learner"],
        ),
    ],
    ids=["team-change-0", "random-ratio", "bad-json", "agent-in-no-team", "mixed-spaces"],
)
def test_bad_team_options_fail_with_one_line_naming_the_fix(options, fragments, tmp_path, capsys):
    status, _, err = train(capsys, "simple_tag_v3", *options, *TAG_TINY, "--out", tmp_path)
    assert_exit_2(status, err, *fragments)


def test_an_env_generator_on_a_team_run_is_refused_naming_both_options(tmp_path, capsys):
    out = tmp_path / "run"
    status, _, err = train(
        capsys, "simple_tag_v3", "--teams", "prefix", "--env-generator", "gen:configs",
        "--timesteps", 128, "--team-change", 192, *TAG_TINY, "--out", out,
    )  # fmt: skip
    assert_exit_2(status, err, "--env-generator does not work with a team run")
    assert "Drop --teams or --env-generator" in err
    assert not out.exists()


def test_a_config_files_env_generator_on_a_team_run_is_refused(tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"game": "simple_tag_v3", "env_generator": "gen:configs"}))
    out = tmp_path / "run"
    status, _, err = train(
        capsys, "--config", config, "--teams", "prefix", "--timesteps", 192, *TAG_TINY,
        "--out", out,
    )  # fmt: skip
    assert_exit_2(status, err, "the --config file's env_generator does not work with a team run")
    assert not out.exists()


def test_a_team_change_shorter_than_a_teams_rollout_is_refused_naming_both(tmp_path, capsys):
    # the predators' PPO collects 32 steps x 2 games x 3 predators = 192 learner steps a rollout
    status, _, err = train(
        capsys, "simple_tag_v3", "--timesteps", 192, "--team-change", 96, *TAG_TINY,
        "--out", tmp_path / "run",
    )  # fmt: skip
    assert_exit_2(status, err, "--team-change 96", "'adversary'", "= 192 learner steps")
    assert "Pass --team-change 192" in err and "lower n_steps" in err
    assert "team_change=" not in err  # a CLI user is told the flag, not the Python argument


def test_without_team_change_the_run_picks_one_that_fits_every_teams_rollout(tmp_path, capsys):
    # a game by import path has no recipe, so no recipe team_change: a tenth of 1000 steps is 100,
    # shorter than the predators' rollout of 192 (32 x 2 x 3) and not a multiple of the prey's
    # 64 (32 x 2 x 1): the run takes 192, a multiple of both
    out = tmp_path / "run"
    game = "mpe2.simple_tag_v3:env"
    options = ("--teams", "prefix", "--game-kwarg", "continuous_actions=False")
    status, _, err = train(capsys, game, *options, "--timesteps", 1000, *TAG_TINY, "--out", out)
    assert status == 0, err
    config = json.loads((out / "config.json").read_text())
    assert config["team_change"] == 192


def test_a_python_team_change_shorter_than_a_rollout_names_the_argument_and_a_fit(tmp_path):
    from stable_baselines3 import PPO

    from sp_wrappers.training.team_selfplay import TeamSelfPlay
    from sp_wrappers.training.team_setup import TeamChangeError, make_team_vec_env

    env_fn = lambda: make_game("simple_tag_v3", max_cycles=10)  # noqa: E731
    models = {
        team: PPO("MlpPolicy", make_team_vec_env(env_fn, "prefix", team, 2), n_steps=32)
        for team in ("adversary", "agent")
    }
    with pytest.raises(TeamChangeError, match=r"team_change=100 .* Pass team_change=192"):
        TeamSelfPlay(env_fn, "prefix", models, team_change=100, run_dir=tmp_path)


def test_team_options_on_a_game_without_teams_name_teams(tmp_path, capsys):
    status, _, err = train(capsys, "tictactoe_v3", "--team-change", 100, "--out", tmp_path)
    assert_exit_2(status, err, "--team-change applies to team runs", "--teams prefix")


# ------------------------------------------------------------------------------------------------
# Quadrapong: one model for both teams by default
# ------------------------------------------------------------------------------------------------


def test_quadrapong_trains_one_shared_model_by_default(tmp_path, capsys):
    status, out, err = train(
        capsys, "quadrapong_v4", "--timesteps", 128, *TINY, "--game-kwarg", "max_cycles=30",
        "--out", tmp_path / "run",
    )  # fmt: skip
    assert status == 0, err
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["models"] == {"shared": ["first_third", "second_fourth"]}
    assert (tmp_path / "run" / "models" / "shared.zip").is_file()
    assert "one ppo model for the teams first_third, second_fourth" in out


# ------------------------------------------------------------------------------------------------
# The example
# ------------------------------------------------------------------------------------------------


def test_the_predator_prey_example_runs_in_its_tiny_mode_and_prints_elo_per_team(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "predator_prey.py"), "--tiny", "--out",
         str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    turns = [line for line in result.stdout.splitlines() if "adversary 1" in line]
    assert len(turns) >= 2 and all("agent 1" in line for line in turns)
    assert "trained adversary" in result.stdout and "trained agent" in result.stdout
    assert (tmp_path / "team_selfplay.json").is_file()


# ------------------------------------------------------------------------------------------------
# Gymnasium ids
# ------------------------------------------------------------------------------------------------


def test_the_team_games_ids_play_a_team_with_the_games_own_teams():
    import gymnasium as gym

    predators = gym.make("sp_wrappers/SimpleTag-v0", max_cycles=5)  # learner="adversary"
    prey = gym.make("sp_wrappers/SimpleTag-v0", learner="agent", max_cycles=5)
    assert predators.observation_space.shape == (16,) and prey.observation_space.shape == (14,)
    for env in (predators, prey):
        env.reset(seed=0)
        while True:
            _, _, terminated, truncated, info = env.step(env.action_space.sample())
            if terminated or truncated:
                break
        env.close()
    assert set(info["selfplay"]["team_returns"]) == {"adversary", "agent"}
    assert info["selfplay"]["team"] == "agent"


def test_the_ratings_command_on_a_team_run_names_each_teams_archive(tag_run, capsys):
    from sp_wrappers.cli import main as cli_main

    assert cli_main(["ratings", str(tag_run)]) == 2
    err = capsys.readouterr().err
    assert "is a team run with one archive per team" in err
    assert str(tag_run / "archives" / "adversary") in err
    assert cli_main(["ratings", str(tag_run / "archives" / "agent")]) == 0
    assert "adversary/snapshot-0000" in capsys.readouterr().out


def test_a_killed_team_run_resumes_with_its_learning_team_steps_and_elo(tmp_path, capsys):
    import signal
    import time

    out = tmp_path / "run"
    argv = ["simple_tag_v3", "--timesteps", "100000", "--team-change", "192", *TAG_TINY]
    process = subprocess.Popen(
        [sys.executable, "-m", "sp_wrappers.cli", "train", *argv, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    state_path = out / "team_selfplay.json"
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if state_path.exists() and json.loads(state_path.read_text())["team_changes"] >= 3:
                break
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    killed = json.loads(state_path.read_text())
    assert killed["team_changes"] >= 3
    status, stdout, err = train(capsys, "--resume", out, "--timesteps", 96, "--no-progress")
    assert status == 0, err
    resumed = json.loads(state_path.read_text())
    assert resumed["team_changes"] > killed["team_changes"]
    # the turn the kill interrupted is finished by the team that was learning
    assert resumed["turns"][len(killed["turns"])]["team"] == killed["learning_team"]
    for team in ("adversary", "agent"):
        assert resumed["steps"][team] >= killed["steps"][team]
        assert f"  {team}" in stdout
    assert sum(resumed["steps"].values()) > sum(killed["steps"].values())
    first = json.loads((out / "config.json").read_text())["history"]
    assert [h["resumed"] for h in first] == [False, True]


# ------------------------------------------------------------------------------------------------
# Every team gets its budget (#34)
# ------------------------------------------------------------------------------------------------


def _steps_of(run: Path) -> dict[str, int]:
    return json.loads((run / "team_selfplay.json").read_text())["steps"]


def test_a_short_run_of_the_recipe_trains_every_team_its_budget(tmp_path, capsys):
    # the recipe sets no team_change: it comes from the budget (a tenth, fitting the rollouts of
    # 32 x 2 x 3 = 192 and 32 x 2 = 64 and dividing 384), not a fixed 24,576 the budget never
    # reaches (which trained the predators alone)
    out = tmp_path / "run"
    status, stdout, err = train(
        capsys, "simple_tag_v3", "--timesteps", 384, *TAG_TINY, "--out", out
    )
    assert status == 0, err
    assert json.loads((out / "config.json").read_text())["team_change"] == 192
    assert _steps_of(out) == {"adversary": 384, "agent": 384}
    assert (out / "models" / "agent.zip").is_file() and (out / "models" / "adversary.zip").is_file()
    assert "384 / 384 learner steps" in stdout


def test_a_team_change_longer_than_the_budget_still_trains_every_team(tmp_path, capsys):
    # named teams, a turn longer than the whole run: the first team ends its turn at its budget
    out = tmp_path / "run"
    teams = json.dumps({"red": ["adversary_0", "adversary_1", "adversary_2"], "blue": ["agent_0"]})
    status, _, err = train(
        capsys, "simple_tag_v3", "--no-shared", "--teams", teams, "--timesteps", 192,
        "--team-change", 1920, *TAG_TINY, "--out", out,
    )  # fmt: skip
    assert status == 0, err
    assert _steps_of(out) == {"red": 192, "blue": 192}
    for argv in (["--resume", out, "--timesteps", 192], ["--resume", out]):
        before = _steps_of(out)
        config = json.loads((out / "config.json").read_text())
        if len(argv) == 2:  # the run's own budget, raised: resume trains what each team lacks
            config["timesteps"] = max(before.values()) + 192
            (out / "config.json").write_text(json.dumps(config))
        status, _, err = train(capsys, *argv, "--no-progress")
        assert status == 0, err
        after = _steps_of(out)
        assert all(after[team] >= before[team] + 192 for team in before), (argv, before, after)


def test_a_team_runs_banner_names_its_recipe_as_a_single_learner_run_does():
    from sp_wrappers.cli.train import team_run_banner
    from sp_wrappers.runs.resolve import resolve_run

    config = resolve_run("simple_tag_v3", {"timesteps": 384})
    assert config.recipe in ("tuned", "generic")  # not a third word, "game"
    assert f"({config.recipe})" in team_run_banner(config, Path("runs/x"), resume=False)
