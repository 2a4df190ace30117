"""Shared fixtures: game factories for the PettingZoo games we support, and tiny custom games.

Real games (all built fresh by zero-argument factories, so one test never sees another's state):
``tictactoe``, ``connect_four``, ``texas_holdem``, ``pong_aec`` / ``pong_parallel`` (RAM
observations, ``max_cycles=200``) and ``pong_stacked`` (SuperSuit ``frame_stack_v1`` +
``dtype_v0`` over the RAM AEC game).

Custom games, each small enough to reason about by hand, for the edge cases real games lack, are
public in :mod:`sp_wrappers.testing.games` (``GuessGame``, ``AsymmetricGuessGame``, ``RaceGame``,
``EarlyExitGame``); their fixtures are here.

Hypothesis tests cannot use function-scoped fixtures, so the factories are also reachable
through the session-scoped ``games`` fixture (name -> factory).
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv, ParallelEnv

from sp_wrappers.testing.games import AsymmetricGuessGame, EarlyExitGame, GuessGame, RaceGame

warnings.filterwarnings("ignore", message=".*pkg_resources.*")


# ------------------------------------------------------------------------------------------------
# Factories
# ------------------------------------------------------------------------------------------------

PONG_MAX_CYCLES = 200


def _roms() -> str:
    import ale_py

    return os.path.join(os.path.dirname(ale_py.__file__), "roms")


def make_tictactoe(**kwargs: Any) -> AECEnv:
    from pettingzoo.classic import tictactoe_v3

    return tictactoe_v3.env(**kwargs)


def make_connect_four(**kwargs: Any) -> AECEnv:
    from pettingzoo.classic import connect_four_v3

    return connect_four_v3.env(**kwargs)


def make_texas_holdem(**kwargs: Any) -> AECEnv:
    from pettingzoo.classic import texas_holdem_v4

    return texas_holdem_v4.env(**kwargs)


def make_pong_aec() -> AECEnv:
    from pettingzoo.atari import pong_v3

    return pong_v3.env(obs_type="ram", auto_rom_install_path=_roms(), max_cycles=PONG_MAX_CYCLES)


def make_pong_parallel() -> ParallelEnv:
    from pettingzoo.atari import pong_v3

    return pong_v3.parallel_env(
        obs_type="ram", auto_rom_install_path=_roms(), max_cycles=PONG_MAX_CYCLES
    )


def make_pong_stacked() -> AECEnv:
    import supersuit as ss

    return ss.dtype_v0(ss.frame_stack_v1(make_pong_aec(), 4), np.float32)


GAME_FACTORIES: dict[str, Callable[[], Any]] = {
    "tictactoe": make_tictactoe,
    "connect_four": make_connect_four,
    "texas_holdem": make_texas_holdem,
    "pong_aec": make_pong_aec,
    "pong_parallel": make_pong_parallel,
    "pong_stacked": make_pong_stacked,
    "guess": GuessGame,
    "asymmetric_guess": AsymmetricGuessGame,
    "race3": lambda: RaceGame(n_players=3),
    "race_info_mask": lambda: RaceGame(n_players=2, mask_in="info"),
    "early_exit": EarlyExitGame,
}


@pytest.fixture(scope="session")
def games() -> dict[str, Callable[[], Any]]:
    """Every game factory by name (session-scoped, so hypothesis tests may use it)."""
    return GAME_FACTORIES


@pytest.fixture
def tictactoe() -> AECEnv:
    return make_tictactoe()


@pytest.fixture
def connect_four() -> AECEnv:
    return make_connect_four()


@pytest.fixture
def texas_holdem() -> AECEnv:
    return make_texas_holdem()


@pytest.fixture
def pong_aec() -> AECEnv:
    return make_pong_aec()


@pytest.fixture
def pong_parallel() -> ParallelEnv:
    return make_pong_parallel()


@pytest.fixture
def pong_stacked() -> AECEnv:
    return make_pong_stacked()


@pytest.fixture
def guess_game() -> GuessGame:
    return GuessGame()


@pytest.fixture
def asymmetric_game() -> AsymmetricGuessGame:
    return AsymmetricGuessGame()


@pytest.fixture
def race3() -> RaceGame:
    return RaceGame(n_players=3)


@pytest.fixture
def info_mask_game() -> RaceGame:
    return RaceGame(n_players=2, mask_in="info")


@pytest.fixture
def early_exit_game() -> EarlyExitGame:
    return EarlyExitGame()


@pytest.fixture
def single_thread_torch():
    """Train on one torch thread (faster on small nets, fairer on a shared machine)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ------------------------------------------------------------------------------------------------
# The command line, as the tests drive it
# ------------------------------------------------------------------------------------------------


def restore_sigint() -> None:
    """In a child process before it runs: SIGINT's default action again. A suite started with
    SIGINT ignored (``nohup``, a background job, some CI runners) would otherwise pass the
    ignore on to every command it starts, and a test's Ctrl-C would never arrive."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interruptible(command: list[str], **kwargs: Any) -> Any:
    """``subprocess.Popen(command, **kwargs)`` for a command the test will interrupt with SIGINT
    (Ctrl-C), however the suite itself was started (see :func:`restore_sigint`)."""
    import subprocess

    return subprocess.Popen(command, preexec_fn=restore_sigint, **kwargs)


@pytest.fixture
def popen_interruptible() -> Callable[..., Any]:
    """:func:`interruptible`: start a command that the test will interrupt with SIGINT."""
    return interruptible


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``sp-wrappers ARGS`` through ``cli.main`` in this process: ``(status, stdout, stderr)``."""
    from sp_wrappers import cli

    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_exit_2(status: int, err: str, *fragments: str) -> None:
    """A user error: exit status 2, no traceback, and every fragment on the last line."""
    assert status == 2, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    for fragment in fragments:
        assert fragment in line, line


@pytest.fixture
def sp_wrappers(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``sp-wrappers ARGS`` through ``cli.main``; returns ``(status, stdout, stderr)``."""
    return lambda *argv: run_cli(capsys, *argv)


# ------------------------------------------------------------------------------------------------
# Parallel workers: pyproject's addopts runs the suite on two pytest-xdist workers (-n 2)
# ------------------------------------------------------------------------------------------------

# A test that starts Ray is marked ``pytest.mark.xdist_group("ray")`` (a module: ``pytestmark``):
# the group runs on one worker, one test after another, so two Ray clusters never start at once.


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "learning: trains a small model (a few seconds); deselect with -m 'not learning'"
    )
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Two workers on two cores: one torch thread each, and for the processes they start (tiny
        # networks gain nothing from intra-op threads, which would fight over the cores).
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(variable, "1")
        import torch

        torch.set_num_threads(1)


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)  # pytest keeps the item's fixtures there
    if info is None:
        return False
    return any(
        d.scope in ("module", "class", "package")
        for defs in info.name2fixturedefs.values()
        for d in defs
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep a module's tests on one worker when they share a module-scoped fixture, so it is
    built once; other tests go to whichever worker is free."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _uses_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items.sort(key=_start_first)


def _start_first(item: pytest.Item) -> int:
    """The longest work first (a stable sort keeps the rest in file order): the docs pages (10 to
    60 s each) and the Ray group (one worker, one test after another), so the run does not end
    with one worker idle while the other finishes a long page."""
    if item.nodeid.startswith("tests/test_docs_snippets.py::test_the_page_runs_as_written"):
        return 0
    group = item.get_closest_marker("xdist_group")
    return 1 if group is not None and group.args and group.args[0] == "ray" else 2


def start_tiny_run(run: Path) -> Path:
    """256 learner steps of MaskablePPO on tic-tac-toe in ``run`` (five snapshots, four games
    against each baseline, ``report.html``), started with ``runs.start``."""
    from sp_wrappers import runs

    overrides = {"timesteps": 256, "n_envs": 2, "save_every": 64, "eval_games": 4}
    hyperparams = {"n_steps": 64, "batch_size": 64}
    config = runs.resolve("tictactoe_v3", {**overrides, "hyperparams": hyperparams})
    runs.start(config, run, runs.RunOptions(progress=False, plots=False))
    return run


TTT_TINY = {
    "timesteps": 128,
    "n_envs": 2,
    "hyperparams": {"n_steps": 32, "batch_size": 64, "n_epochs": 1,
                    "policy_kwargs": {"net_arch": [16]}},
}  # fmt: skip


@pytest.fixture(scope="session")
def ttt_run(tmp_path_factory) -> Path:
    """A tic-tac-toe run directory: its config.json (the recipe, tiny) and an archive of three
    snapshots with games between them, so their Nash mixture rests on results. Built once per
    worker: a test that changes it copies it first."""
    import json

    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers import SelfPlayEnv, SnapshotArchive
    from sp_wrappers.evaluation.match import play_match
    from sp_wrappers.runs import resolve_run

    root = tmp_path_factory.mktemp("exploit") / "ttt"
    root.mkdir()
    config = resolve_run("tictactoe_v3", TTT_TINY)
    (root / "config.json").write_text(json.dumps(config.to_json()))
    archive = SnapshotArchive(root / "archive")
    model = MaskablePPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env()), n_steps=32, batch_size=32,
                        n_epochs=1, seed=0, policy_kwargs={"net_arch": [16]})  # fmt: skip
    for step in (0, 64, 128):
        if step:
            model.learn(64, reset_num_timesteps=False)
        archive.save(model, step=step)
    for a, b in (("snapshot-0000", "snapshot-0001"), ("snapshot-0001", "snapshot-0002"),
                 ("snapshot-0000", "snapshot-0002")):  # fmt: skip
        play_match(tictactoe_v3.env, a, b, 4, archive=archive)
    archive.close()
    return root


PSRO_TINY = {
    "steps_per_iteration": 512,
    "n_envs": 2,
    "hp": {"n_steps": 128, "batch_size": 64, "n_epochs": 2},
}


@pytest.fixture(scope="session")
def psro_run(tmp_path_factory) -> Path:
    """A Kuhn PSRO run of two iterations (three greedy members), started through the pipeline;
    built once per worker (the modules that use it share one xdist group): copy it to change it."""
    pytest.importorskip("pyspiel")
    from sp_wrappers import runs
    from sp_wrappers.runs.psro import PSRORunResult
    from sp_wrappers.runs.recipes import KUHN_POKER

    path = tmp_path_factory.mktemp("psro") / "kuhn"
    config = runs.resolve(KUHN_POKER, {**PSRO_TINY, "iterations": 2}, kind="psro")
    lines: list[str] = []
    options = runs.RunOptions(report=lines.append, command="test")
    result = runs.start(config, path, options)
    assert isinstance(result, PSRORunResult) and result.psro.iterations == 2
    assert len(lines) == 3 and "exploitability" in lines[-1]
    assert "least exploitable" in result.summary()
    return path


# ------------------------------------------------------------------------------------------------
# Tracing: which of sp_wrappers' modules a run enters
# ------------------------------------------------------------------------------------------------


def team_or_league_module(filename: str) -> bool:
    """Whether ``filename`` is a module of team or league runs (``league/``, ``team_*``,
    ``league*``, ``teams.py``) of sp_wrappers; the command line's own modules are not."""
    parts = Path(filename).parts
    if "sp_wrappers" not in parts:
        return False
    inside = parts[parts.index("sp_wrappers") + 1 :]
    return inside[0] == "league" or (
        inside[0] != "cli"
        and any(p.startswith(("team_", "league")) or p == "teams.py" for p in inside)
    )


def is_function(code) -> bool:
    """Whether ``code`` is a function's (not a module's or class body's, which run on import)."""
    return bool(code.co_flags & inspect.CO_OPTIMIZED)


# ------------------------------------------------------------------------------------------------
# A real browser: headless Chromium through Selenium (Debian's chromium and chromium-driver)
# ------------------------------------------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
needs_browser = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="no Chromium/chromedriver (apt-get install chromium chromium-driver; .ci/run does)",
)


def headless_chromium(profile: Path, width: int = 1100, height: int = 900, logs: bool = False):
    """Selenium's Chrome driver on Debian's Chromium, headless, in the profile folder ``profile``
    (``logs``: the browser's console and the DevTools performance log kept for ``get_log``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--no-first-run")
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
