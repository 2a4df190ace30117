"""The ``sp-wrappers`` command line: ratings, tournament and plot on a real run, and its errors."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli import main
from sp_wrappers.cli.common import game_factory, make_game, resolve_run_dir
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.opponents.sampler import OpponentSampler
from sp_wrappers.ratings.archive_ratings import archive_ratings
from sp_wrappers.training.callbacks import SelfPlayCallback

REPO = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    """A run directory: ``config.json`` and an archive of three tiny tic-tac-toe snapshots."""
    run = tmp_path_factory.mktemp("run")
    (run / "config.json").write_text(json.dumps({"game": "tictactoe_v3", "game_kwargs": {}}))
    archive = SnapshotArchive(run / "archive")
    env = SelfPlayEnv(tictactoe_v3.env(), opponent=OpponentSampler(archive))
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, seed=0, policy_kwargs={"net_arch": [16]}
    )
    model.learn(256, callback=SelfPlayCallback(archive, save_every=128))
    archive.close()
    return run


@pytest.fixture
def run(trained_run, tmp_path) -> Path:
    return shutil.copytree(trained_run, tmp_path / "run")


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line_error(status: int, err: str, *fragments: str) -> None:
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sp-wrappers: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]


TOURNAMENT = ("--games-per-pair", 2, "--backend", "serial", "--no-progress")


# ------------------------------------------------------------------------------------------------
# Commands on a real run
# ------------------------------------------------------------------------------------------------


def test_ratings_prints_a_row_per_snapshot_from_the_training_games(run, capsys):
    status, out, _ = cli(capsys, "ratings", run)
    assert status == 0
    for snapshot in ("snapshot-0000", "snapshot-0001", "snapshot-0002"):
        assert snapshot in out
    assert "95% CI" in out and "games" in out
    status, out, _ = cli(capsys, "ratings", run, "--json")
    assert status == 0
    players = json.loads(out)["players"]
    assert [p["id"] for p in players] == ["snapshot-0000", "snapshot-0001", "snapshot-0002"]


def test_tournament_plays_the_missing_games_then_prints_the_table(run, capsys):
    status, out, _ = cli(
        capsys, "tournament", run, *TOURNAMENT, "--baseline", "random", "--baseline", "minimax"
    )
    assert status == 0
    assert "Played 20 games in 10 pairs" in out  # 3 snapshots + 2 baselines: 10 pairs
    assert "random fixed at 1000" in out and "vs minimax (W-D-L)" in out
    archive = SnapshotArchive(run / "archive", create=False)
    assert len(archive.matches(source="evaluation")) == 20
    assert "Stored the refitted ratings of 3 snapshots" in out
    refit = archive_ratings(archive, anchor=None)  # the fit the callback stores under "bt"
    for line in refit.snapshots:
        stored = archive.get(line.id).ratings
        assert stored["bt"] == pytest.approx(line.rating) and "elo" in stored
    status, out, _ = cli(
        capsys, "tournament", run, *TOURNAMENT, "--baseline", "random", "--baseline", "minimax"
    )
    assert status == 0 and "Played 0 games in 0 pairs" in out


def test_tournament_on_an_archive_directory_takes_the_game_option(run, capsys):
    status, out, _ = cli(
        capsys,
        "tournament",
        run / "archive",
        "--game",
        "tictactoe_v3",
        "--snapshots",
        "snapshot-0000",
        "snapshot-0002",
        *TOURNAMENT,
    )
    assert status == 0 and "Played 6 games in 3 pairs" in out


def test_plot_writes_nonempty_pngs(run, capsys, tmp_path):
    assert cli(capsys, "tournament", run, *TOURNAMENT)[0] == 0
    status, out, _ = cli(capsys, "plot", run, "--out", tmp_path / "plots")
    assert status == 0
    for name in ("ratings.png", "payoff.png"):
        path = tmp_path / "plots" / name
        assert str(path) in out
        assert path.stat().st_size > 1000 and path.read_bytes()[:8] == PNG_SIGNATURE


def test_plot_defaults_to_the_run_directory_and_works_before_any_tournament(run, capsys):
    status, _, _ = cli(capsys, "plot", run)
    assert status == 0
    assert (run / "plots" / "ratings.png").stat().st_size > 0
    assert (run / "plots" / "payoff.png").stat().st_size > 0


# ------------------------------------------------------------------------------------------------
# Errors: exit status 2, one line, no traceback
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["ratings", "tournament", "plot"])
def test_a_directory_that_is_not_an_archive(command, tmp_path, capsys):
    status, _, err = cli(capsys, command, tmp_path)
    assert_one_line_error(status, err, "not a snapshot archive")


def test_a_path_that_does_not_exist(tmp_path, capsys):
    status, _, err = cli(capsys, "ratings", tmp_path / "missing")
    assert_one_line_error(status, err, "not a directory")


@pytest.mark.parametrize("command", ["ratings", "plot"])
def test_an_archive_without_matches(command, tmp_path, capsys):
    SnapshotArchive(tmp_path / "archive").close()
    status, _, err = cli(capsys, command, tmp_path)
    assert_one_line_error(status, err, "no matches yet")


def test_an_unknown_backend(run, capsys):
    status, _, err = cli(capsys, "tournament", run, "--backend", "dask")
    assert_one_line_error(status, err, "dask", "process, ray, serial")


def test_ray_not_installed_names_the_extra(run, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    status, _, err = cli(capsys, "tournament", run, "--backend", "ray", "--no-progress")
    assert_one_line_error(status, err, 'pip install "sp-wrappers[ray]"')


def test_matplotlib_not_installed_names_the_extra(run, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    status, _, err = cli(capsys, "plot", run)
    assert_one_line_error(status, err, 'pip install "sp-wrappers[plots]"')


def test_a_game_nobody_named(run, capsys, tmp_path):
    bare = shutil.copytree(run / "archive", tmp_path / "bare")  # no config.json anywhere
    status, _, err = cli(capsys, "tournament", bare, *TOURNAMENT)
    assert_one_line_error(status, err, "--game")


def test_a_game_that_does_not_fit_the_snapshots(run, capsys):
    status, _, err = cli(capsys, "tournament", run, "--game", "connect_four_v3", *TOURNAMENT)
    assert_one_line_error(status, err, "connect_four_v3")


@pytest.mark.parametrize(
    "baseline, fragment",
    [("alphabeta2", "connect_four_v3 only"), ("stockfish", "Unknown baseline")],
)
def test_a_baseline_that_does_not_exist_or_does_not_play_the_game(run, capsys, baseline, fragment):
    status, _, err = cli(capsys, "tournament", run, "--baseline", baseline, *TOURNAMENT)
    assert_one_line_error(status, err, fragment)


def test_errors_leave_no_traceback_in_a_real_process(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "sp_wrappers.cli", "ratings", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


# ------------------------------------------------------------------------------------------------
# Games, run directories and the train hook
# ------------------------------------------------------------------------------------------------


def test_games_resolve_by_registered_name_or_import_path():
    assert make_game("connect_four_v3").metadata["name"] == "connect_four_v3"
    assert make_game("pettingzoo.classic.tictactoe_v3:env").metadata["name"] == "tictactoe_v3"
    assert game_factory("texas_holdem_v4")().metadata["name"] == "texas_holdem_v4"


def test_pong_is_registered_with_ram_observations():
    game = make_game("pong_v3", max_cycles=10)
    assert game.observation_space(game.possible_agents[0]).shape == (128,)


def test_config_of_a_run_is_found_from_its_archive_folder(run):
    assert resolve_run_dir(run).config.game == "tictactoe_v3"
    assert resolve_run_dir(run / "archive").config.game == "tictactoe_v3"
    assert resolve_run_dir(run / "archive").archive_path == run / "archive"


def test_train_command_comes_from_sp_wrappers_train_command_when_it_exists(monkeypatch, capsys):
    fake = types.ModuleType("sp_wrappers.cli.train")

    def add_train_parser(subparsers):
        parser = subparsers.add_parser("train")
        parser.add_argument("game")
        parser.set_defaults(func=lambda args: print(f"training {args.game}") or 0)

    fake.add_train_parser = add_train_parser
    monkeypatch.setitem(sys.modules, "sp_wrappers.cli.train", fake)
    status, out, _ = cli(capsys, "train", "tictactoe_v3")
    assert status == 0 and out.strip() == "training tictactoe_v3"


def test_a_broken_train_module_does_not_break_the_other_commands(monkeypatch, capsys, tmp_path):
    real_import = importlib.import_module

    def import_module(name, *args):
        if (
            name == "sp_wrappers.cli.train"
        ):  # the train module needs something that is not installed
            raise ModuleNotFoundError("No module named 'wandb'", name="wandb")
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", import_module)
    status, _, err = cli(capsys, "ratings", tmp_path)
    assert_one_line_error(status, err, "not a snapshot archive")
    status, _, err = cli(capsys, "train")
    assert_one_line_error(status, err, "train command is unavailable")
