"""``sp-wrappers league``: the run directory, the summary, resuming, and one-line user errors."""

from __future__ import annotations

import json

from sp_wrappers.cli.main import main

TINY = [
    "--chunk-steps", "64", "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=32",
    "--snapshot-max-steps", "64", "--eval-games", "4", "--backend", "serial", "--no-progress",
]  # fmt: skip


def test_league_command_writes_a_run_directory_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["league", "tictactoe_v3", "--league-exploiters", "0", "--timesteps", "256"]
    assert main([*args, *TINY, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "main_agent_0" in printed and "vs minimax" in printed and "rating" in printed
    config = json.loads((out / "config.json").read_text())
    assert config["league"]["main_exploiters"] == 1 and config["league"]["league_exploiters"] == 0
    ratings = json.loads((out / "ratings.json").read_text())
    assert set(ratings["evaluation"]) == {"main_agent_0"}
    assert (out / "plots" / "league_payoff.png").stat().st_size > 0

    # `sp-wrappers ratings` on the league's directory rates the same snapshots as its ratings.json
    capsys.readouterr()
    assert main(["ratings", str(out), "--json"]) == 0
    rated = {row["id"] for row in json.loads(capsys.readouterr().out)["players"]}
    assert rated == {row["player"] for row in ratings["players"]}

    resume = ["league", "--resume", str(out), "--timesteps", "384", "--backend", "serial"]
    assert main([*resume, "--no-progress", "--no-plots"]) == 0
    state = json.loads((out / "league.json").read_text())
    assert [p["steps"] for p in state["learners"]] == [192, 192]
    assert len(json.loads((out / "config.json").read_text())["history"]) == 2


def test_league_command_user_errors_are_one_line(tmp_path, capsys):
    assert main(["league", "tictactoe_v3", "--main-agents", "0", "--out", str(tmp_path)]) == 2
    assert "at least one main agent" in capsys.readouterr().err
    assert main(["league", "--resume", str(tmp_path / "missing")]) == 2
    assert "--resume needs a run directory" in capsys.readouterr().err


def test_ray_options_without_the_ray_backend_name_the_flags(tmp_path, capsys):
    argv = ["league", "tictactoe_v3", "--num-cpus", "2", "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--num-cpus only apply to --backend ray" in err and "Traceback" not in err


def test_league_resume_at_or_below_the_steps_done_is_refused_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["league", "tictactoe_v3", "--league-exploiters", "0", "--main-exploiters", "0"]
    assert main([*args, "--timesteps", "128", *TINY, "--no-plots", "--out", str(out)]) == 0
    done = sum(p["steps"] for p in json.loads((out / "league.json").read_text())["learners"])
    before = {name: (out / name).read_bytes() for name in ("config.json", "league.json")}
    index = (out / "archive" / "index.sqlite").stat().st_mtime_ns
    capsys.readouterr()
    for timesteps in (done, done - 1):
        resume = ["league", "--resume", str(out), "--timesteps", str(timesteps)]
        assert main([*resume, "--backend", "serial", "--no-progress", "--no-plots"]) == 2
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
        assert f"already has {done:,d} learner steps" in lines[0] and "--timesteps" in lines[0]
        assert "nan" not in captured.out
    assert {name: (out / name).read_bytes() for name in before} == before
    assert (out / "archive" / "index.sqlite").stat().st_mtime_ns == index
