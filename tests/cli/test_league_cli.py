"""``sp-wrappers league``: the run directory, the summary, resuming, and one-line user errors."""

from __future__ import annotations

import json

from sp_wrappers.cli import main

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


def test_chunks_are_rounded_to_whole_rollouts_in_one_line_and_the_progress_adds_up(
    tmp_path, capsys
):
    # The command of issue #34: tic-tac-toe's recipe learns rollouts of 256 x 8 = 2,048 steps, so
    # the 1,024 asked (1,536/768/768 in the shares 50/25/25) made every player learn 2,048: the
    # shares broke (33% each) and a raw UserWarning said so. Now the league rounds the round to
    # 8,192 steps (4,096/2,048/2,048), says so once, and its counts reach what it says.
    out = tmp_path / "run"
    argv = ["league", "tictactoe_v3", "--timesteps", "6144", "--chunk-steps", "1024"]
    rest = ["--eval-games", "2", "--backend", "serial", "--no-plots", "--no-report"]
    assert main([*argv, *rest, "--out", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert "Warning" not in err and "Traceback" not in err, err
    assert err.splitlines() == [
        "sp-wrappers league: --chunk-steps 1024 rounded to whole rollouts of 2,048 steps "
        "(n_steps x n_envs) in the compute shares: 8,192 steps a round (main_agent_0 4,096, "
        "main_exploiter_0 2,048, league_exploiter_0 2,048); --timesteps 6144 runs to 8,192."
    ]
    steps = {
        p["name"]: p["steps"] for p in json.loads((out / "league.json").read_text())["learners"]
    }
    assert steps == {"main_agent_0": 4096, "main_exploiter_0": 2048, "league_exploiter_0": 2048}
    assert "round 1: 8,192/8,192 steps" in printed and "past the" not in printed
    assert "(50% of the league's; its compute share 50%)" in printed
    assert "Steps apart from the compute shares" not in printed

    # a resume rounds its budget the same way (and takes this call's --eval-games)
    resume = ["league", "--resume", str(out), "--timesteps", "12288", "--eval-games", "1"]
    assert main([*resume, "--backend", "serial", "--no-plots", "--no-report"]) == 0
    printed, err = capsys.readouterr()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("sp-wrappers league: --chunk-steps 1024 rounded to whole rollouts")
    assert err.rstrip().endswith("; --timesteps 12288 runs to 16,384.")
    assert "round 2: 16,384/16,384 steps" in printed and "past the" not in printed
    assert "nan" not in printed  # every player learned in the resumed round: a score, a speed
    steps = {
        p["name"]: p["steps"] for p in json.loads((out / "league.json").read_text())["learners"]
    }
    assert steps == {"main_agent_0": 8192, "main_exploiter_0": 4096, "league_exploiter_0": 4096}
    assert json.loads((out / "config.json").read_text())["eval_games"] == 1
    evaluation = json.loads((out / "ratings.json").read_text())["evaluation"]["main_agent_0"]
    assert {bot: match["games"] for bot, match in evaluation.items()} == dict.fromkeys(
        evaluation, 1
    )


def test_chunks_that_fit_the_rollouts_say_nothing(tmp_path, capsys):
    # rollouts of 32 x 2 = 64; 128 steps a round (64 + 64) and a budget of two rounds: no line
    out = tmp_path / "run"
    args = ["league", "tictactoe_v3", "--league-exploiters", "0", "--timesteps", "256"]
    assert main([*args, *TINY, "--no-plots", "--no-report", "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""


def test_a_player_that_sat_a_round_out_shows_no_score_and_no_speed():
    from types import SimpleNamespace

    from sp_wrappers.runs.league import LeagueProgress

    lines: list[str] = []
    learners = {
        "main_agent_0": SimpleNamespace(role="main_agent", steps=256, snapshots=[], resets=0),
        "main_exploiter_0": SimpleNamespace(
            role="main_exploiter", steps=64, snapshots=[], resets=0
        ),
    }
    league = SimpleNamespace(
        round=3,
        frozen=[],
        learners=learners,
        round_steps={"main_agent_0": 64, "main_exploiter_0": 0},
        total_steps=lambda: 320,
    )
    results = {
        "main_agent_0": SimpleNamespace(matches=[{"score_a": 1.0}], learn_seconds=0.5),
        "main_exploiter_0": SimpleNamespace(matches=[], learn_seconds=0.001),
    }
    LeagueProgress(384, report=lines.append)(league, results)
    assert lines[0] == "round 3: 320/384 steps, 0 frozen players"
    assert "score  1.00 over    1 games      128 steps/s" in lines[1]
    assert "sat this round out" in lines[2] and "nan" not in lines[2] and "steps/s" not in lines[2]


def test_every_league_option_has_help_text():
    import argparse

    from sp_wrappers.cli.league import add_league_parser

    parser = add_league_parser(argparse.ArgumentParser().add_subparsers())
    silent = [
        action.option_strings[0]
        for action in parser._actions  # argparse lists its options only here
        if action.option_strings and not (action.help or "").split("(default")[0].strip()
    ]
    assert silent == []


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


def test_a_league_killed_after_its_last_round_but_before_its_end_resumes_to_finish_it(
    tmp_path, capsys
):
    out = tmp_path / "run"
    args = ["league", "tictactoe_v3", "--league-exploiters", "0", "--main-exploiters", "0"]
    assert main([*args, "--timesteps", "128", *TINY, "--no-plots", "--out", str(out)]) == 0
    done = sum(p["steps"] for p in json.loads((out / "league.json").read_text())["learners"])
    (out / "ratings.json").unlink()  # as if killed during the end-of-run evaluation
    capsys.readouterr()
    resume = ["league", "--resume", str(out), "--timesteps", str(done)]
    assert main([*resume, "--backend", "serial", "--no-progress", "--no-plots"]) == 0
    assert (out / "ratings.json").exists()
    assert "Traceback" not in capsys.readouterr().err


def test_symmetries_are_recorded_kept_on_resume_and_a_wrong_one_fails_in_one_line(tmp_path, capsys):
    out = tmp_path / "sym"
    args = ["league", "tictactoe_v3", "--league-exploiters", "0", "--main-exploiters", "0"]
    assert (
        main([*args, "--timesteps", "128", *TINY, "--symmetries", "auto", "--out", str(out)]) == 0
    )
    assert json.loads((out / "config.json").read_text())["symmetries"] == "auto"
    resume = ["league", "--resume", str(out), "--timesteps", "256", "--backend", "serial"]
    assert main([*resume, "--no-progress", "--no-plots", "--no-report"]) == 0
    assert json.loads((out / "config.json").read_text())["symmetries"] == "auto"
    capsys.readouterr()
    bad = [
        "league",
        "connect_four_v3",
        "--symmetries",
        "tictactoe_v3",
        "--out",
        str(tmp_path / "bad"),
    ]
    assert main([*bad, *TINY]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "--symmetries tictactoe_v3" in err.strip().splitlines()[-1]
    assert "--symmetries none" in err
    # a league without the option keeps the 0.2 file: no key at all
    plain = tmp_path / "plain"
    assert main([*args, "--timesteps", "128", *TINY, "--no-report", "--out", str(plain)]) == 0
    assert "symmetries" not in json.loads((plain / "config.json").read_text())
