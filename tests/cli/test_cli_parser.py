"""Bad command-line input is one error line (with the closest option or command offered) and a
short usage hint, never the full usage; help texts print percentages as written; a command never
changes its parsed arguments."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from sp_wrappers.cli import main
from sp_wrappers.cli.app import build_parser
from sp_wrappers.cli.train import run_train_command

TINY_ARGS = (
    "--timesteps", "128", "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=64",
    "--save-every", "64", "--eval-games", "0", "--no-progress", "--no-plots", "--no-report",
)  # fmt: skip


def error_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err.splitlines()


def test_a_mistyped_option_is_one_line_naming_the_closest_option(capsys):
    lines = error_of(["train", "tictactoe_v3", "--timestpes", "64"], capsys)
    assert len(lines) == 2
    assert lines[0] == (
        "sp-wrappers train: error: unrecognized arguments: --timestpes 64; "
        "did you mean --timesteps?"
    )
    assert lines[1].startswith("usage: sp-wrappers train") and "--help" in lines[1]


@pytest.mark.parametrize(
    ("argv", "offered"),
    [
        (["ratings", "runs/x", "--jsn"], "--json"),
        (["tournament", "runs/x", "--games-per-par", "4"], "--games-per-pair"),
        (["plot", "runs/x", "--outt", "p"], "--out"),
        (["play", "runs/x", "--snapshott", "best"], "--snapshot"),
        (["watch", "runs/x", "--openning", "4"], "--opening"),
        (["report", "runs/x", "--no-replays"], "--no-replay"),
        (["league", "tictactoe_v3", "--chunk-stesp", "1"], "--chunk-steps"),
    ],
)
def test_every_subcommand_offers_its_own_closest_option(argv, offered, capsys):
    lines = error_of(argv, capsys)
    assert len(lines) == 2
    assert lines[0].startswith(f"sp-wrappers {argv[0]}: error: unrecognized arguments")
    assert lines[0].endswith(f"did you mean {offered}?")


def test_a_mistyped_command_offers_the_closest_command(capsys):
    lines = error_of(["trian", "tictactoe_v3"], capsys)
    assert len(lines) == 2 and lines[0].endswith("did you mean train?")


def test_other_argparse_errors_are_one_line_and_a_short_usage(capsys):
    lines = error_of(["train", "tictactoe_v3", "--timesteps", "many"], capsys)
    assert lines[0] == "sp-wrappers train: error: argument --timesteps: invalid int value: 'many'"
    assert len(lines) == 2
    lines = error_of(["ratings"], capsys)
    assert lines == [
        "sp-wrappers ratings: error: the following arguments are required: RUN_DIR",
        "usage: sp-wrappers ratings RUN_DIR [options]  (sp-wrappers ratings --help lists them)",
    ]


@pytest.mark.parametrize("command", ["ratings", "plot"])
def test_help_shows_95_percent_once(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "95%" in out and "%%" not in out


# ------------------------------------------------------------------------------------------------
# One entry point, light to start
# ------------------------------------------------------------------------------------------------

HEAVY = ("torch", "stable_baselines3", "sb3_contrib", "pettingzoo", "ray", "matplotlib")


def _run_python(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["train", "--help"],
        ["league", "--help"],
        ["psro", "--help"],
        ["train", "--timestpes", "3"],
    ],
)
def test_help_and_argument_errors_import_no_learner_and_no_game(argv):
    code = (
        "import sys\n"
        "from sp_wrappers.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = _run_python(code)
    assert result.stdout.splitlines()[-1] == "[]", result.stderr


def test_a_refusal_that_needs_no_model_imports_no_learner():
    code = (
        "import sys\n"
        "from sp_wrappers.cli import main\n"
        "status = main(['train', 'chess_v9'])\n"
        f"print(status, sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = _run_python(code)
    assert result.stdout.splitlines()[-1] == "2 []", result.stderr
    assert "Unknown game 'chess_v9'" in result.stderr


def test_the_name_main_of_the_cli_package_is_one_thing_the_function():
    import importlib
    import pkgutil

    import sp_wrappers.cli
    from sp_wrappers.cli import app

    for info in pkgutil.walk_packages(sp_wrappers.cli.__path__, "sp_wrappers.cli."):
        importlib.import_module(info.name)
    assert sp_wrappers.cli.main is app.main and callable(sp_wrappers.cli.main)
    assert "sp_wrappers.cli.main" not in {
        info.name for info in pkgutil.walk_packages(sp_wrappers.cli.__path__, "sp_wrappers.cli.")
    }


def test_console_scripts_installed_by_0_2_still_start_without_a_warning():
    # pip wrote `from sp_wrappers.cli import main` into the 0.2 script.
    code = "from sp_wrappers.cli import main\nraise SystemExit(main(['--version']))"
    result = _run_python(code, "-W", "error")
    assert result.returncode == 0 and result.stdout.startswith("sp-wrappers "), result.stderr


def test_ctrl_c_in_a_command_is_status_130_with_the_commands_hint(monkeypatch, capsys):
    from sp_wrappers.cli import train

    def interrupted(args, argv=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "run_train_command", interrupted)
    assert main(["train", "tictactoe_v3"]) == 130
    assert capsys.readouterr().err == ("sp-wrappers train: interrupted; continue with --resume\n")


def test_one_command_runs_through_the_one_entry_point_with_its_status(capsys):
    from sp_wrappers.cli.app import run_command

    assert run_command("train", ["--timesteps", "many"]) == 2
    assert capsys.readouterr().err.startswith("sp-wrappers train: error: argument --timesteps")
    assert run_command("league", ["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: sp-wrappers league")


# ------------------------------------------------------------------------------------------------
# The command line never changes its arguments
# ------------------------------------------------------------------------------------------------


def test_the_train_command_never_changes_its_parsed_arguments(tmp_path, capsys):
    run = tmp_path / "run"
    for argv in (
        ["tictactoe_v3", *TINY_ARGS, "--out", str(run)],
        ["--resume", str(run), "--timesteps", "64", "--window", "0", *TINY_ARGS[-3:]],
    ):
        args = build_parser().command_parser("train").parse_args(argv)
        before = copy.deepcopy(vars(args))
        assert run_train_command(args, argv) == 0
        assert vars(args) == before
    assert json.loads((run / "config.json").read_text())["sampler"]["window"] is None
