"""One root for user errors: every error a user can fix derives from ``SpWrappersError``, keeps
its built-in base, and every command prints it on one line with exit status 2."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import pytest

import sp_wrappers
from sp_wrappers.cli import main
from sp_wrappers.core.errors import SpWrappersError

#: Error classes that are not a user's to fix: none today. Add one here only with the reason.
NOT_USER_ERRORS: dict[str, str] = {}

#: The built-in bases that ``except`` clauses written against 0.2 rely on.
BUILT_IN_BASES = {
    "IllegalActionError": ValueError,
    "SnapshotPrunedError": KeyError,
    "ArchiveWriteError": OSError,
    "IncompatibleSnapshotError": ValueError,
    "PolicySpecError": ValueError,
    "UnknownGameError": ValueError,
    "MissingGameError": ImportError,
    "MoveError": ValueError,
    "ObservationWrapperError": ValueError,
    "PlayError": ValueError,
    "TeamChangeError": ValueError,
    "LeagueSetupError": ValueError,
    "PlayersLostError": RuntimeError,
    "StateFileError": ValueError,
}


def _error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(sp_wrappers.__path__, "sp_wrappers."):
        try:
            loaded = importlib.import_module(module.name)
        except ImportError:  # an optional extra that is not installed (e.g. Ray)
            continue
        for name, value in vars(loaded).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.startswith("sp_wrappers.")
                and name.endswith("Error")
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_error_a_user_can_fix_derives_from_the_one_root():
    classes = _error_classes()
    assert len(classes) >= 20, sorted(classes)
    outside = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, SpWrappersError) and name not in NOT_USER_ERRORS
    )
    assert outside == []


def test_errors_keep_their_built_in_bases_and_natural_modules():
    classes = {cls.__name__: cls for cls in _error_classes().values()}
    for name, base in BUILT_IN_BASES.items():
        assert issubclass(classes[name], base), name
    # each class says where it is defined: its layer's errors module (no rewritten __module__)
    for cls in _error_classes().values():
        source = inspect.getsourcefile(cls)
        assert source is not None and source.endswith(cls.__module__.replace(".", "/") + ".py")


def test_old_import_paths_of_moved_errors_still_work():
    from sp_wrappers.archive.checks import SnapshotPrunedError
    from sp_wrappers.archive.store import ArchiveFormatError
    from sp_wrappers.core.seats import IllegalActionError
    from sp_wrappers.games.registry import UnknownGameError
    from sp_wrappers.league.worker import LeagueSetupError

    for cls in (SnapshotPrunedError, ArchiveFormatError, IllegalActionError, UnknownGameError):
        assert issubclass(cls, SpWrappersError)
    assert LeagueSetupError.__module__ == "sp_wrappers.league.errors"


def test_a_damaged_league_json_on_resume_is_one_line_and_exit_2(tmp_path, capsys):
    from sp_wrappers.runs.league import resolve_league

    config = resolve_league("tictactoe_v3", {"timesteps": 64})
    (tmp_path / "config.json").write_text(json.dumps(config.to_json()))
    (tmp_path / "league.json").write_text("garbage{")
    argv = ["league", "--resume", str(tmp_path), "--backend", "serial", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "league.json: cannot read" in err and "restore league.json from a backup" in err


def _main_running(monkeypatch, error: BaseException):
    """``sp-wrappers`` whose command raises ``error``."""
    import argparse

    cli_main = importlib.import_module("sp_wrappers.cli.app")

    def command(args: argparse.Namespace) -> int:
        raise error

    def build_parser(include_train: bool = True) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="sp-wrappers")
        parser.set_defaults(func=command)
        return parser

    monkeypatch.setattr(cli_main, "build_parser", build_parser)
    return cli_main.main


def test_any_user_error_is_one_line_and_exit_2_even_under_a_built_in_base(monkeypatch, capsys):
    from sp_wrappers.archive.errors import SnapshotPrunedError

    pruned = SnapshotPrunedError("snapshot-0003 was pruned; pick another")
    assert _main_running(monkeypatch, pruned)([]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "sp-wrappers: error: snapshot-0003 was pruned; pick another"


def test_a_bug_still_shows_its_traceback(monkeypatch):
    main_ = _main_running(monkeypatch, KeyError("a bug"))  # a plain KeyError is no user error
    with pytest.raises(KeyError, match="a bug"):
        main_([])


def test_a_missing_optional_dependency_is_one_class_that_names_its_extra(monkeypatch):
    import sys

    from sp_wrappers.core.errors import DependencyNotInstalled
    from sp_wrappers.core.extras import require

    # both entries: a test run that drew a plot before holds matplotlib.figure already imported
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(DependencyNotInstalled) as caught:
        require("matplotlib.figure", "plots", "Plotting")
    assert isinstance(caught.value, ImportError) and isinstance(caught.value, SpWrappersError)
    assert str(caught.value) == (
        'Plotting needs matplotlib, which is not installed: pip install "sp-wrappers[plots]".'
    )
    assert require("json", None).__name__ == "json"


def test_the_command_line_catches_the_class_not_a_pip_install_substring(monkeypatch, capsys):
    from sp_wrappers.cli import inspect as inspect_commands
    from sp_wrappers.core.errors import DependencyNotInstalled

    def missing(args):
        raise DependencyNotInstalled('X needs y, which is not installed: pip install "y".')

    monkeypatch.setattr(inspect_commands, "cmd_ratings", missing)
    assert main(["ratings", "somewhere"]) == 2
    assert capsys.readouterr().err.startswith("sp-wrappers: error: X needs y")

    def broken(args):  # an ImportError of our own code is a bug: its traceback stays
        raise ImportError("cannot import name 'z' (pip install nothing fixes this)")

    monkeypatch.setattr(inspect_commands, "cmd_ratings", broken)
    with pytest.raises(ImportError, match="cannot import name"):
        main(["ratings", "somewhere"])
