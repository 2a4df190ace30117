"""Shared fixtures: game factories for the PettingZoo games we support, and tiny custom games.

Real games (all built fresh by zero-argument factories, so one test never sees another's state):
``tictactoe``, ``connect_four``, ``texas_holdem``, ``pong_aec`` / ``pong_parallel`` (RAM
observations, ``max_cycles=200``) and ``pong_stacked`` (SuperSuit ``frame_stack_v1`` +
``dtype_v0`` over the RAM AEC game).

Custom games, each small enough to reason about by hand, for the edge cases real games lack:

- :class:`GuessGame` (parallel, no masks, plain ``Box`` observation): both players see a cue and
  score by naming it. A plain PPO learns it in a few thousand steps.
- :class:`RaceGame` (AEC, any number of players): players in turn add 1-3 to a counter; whoever
  reaches the target exactly wins. Masks live in the dict observation or, with
  ``mask_in="info"``, only in ``info["action_mask"]``.
- :class:`EarlyExitGame` (AEC): the ``"leaver"`` seat is eliminated by the opponent's first move
  (with its final reward) while the ``"stayer"`` plays on alone.
- :class:`AsymmetricGuessGame`: like :class:`GuessGame` but the seats' action spaces differ.

Hypothesis tests cannot use function-scoped fixtures, so the factories are also reachable
through the session-scoped ``games`` fixture (name -> factory).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

warnings.filterwarnings("ignore", message=".*pkg_resources.*")


# ------------------------------------------------------------------------------------------------
# Custom games
# ------------------------------------------------------------------------------------------------


class GuessGame(ParallelEnv):
    """Simultaneous one-shot game without masks.

    Both players observe the same one-hot cue ``c`` in ``range(n_cues)`` and choose an action in
    ``Discrete(n_cues)``; a player scores 1 when its action equals the cue. Each player's reward
    is its score minus the other's, so "name the cue" is the dominant strategy.
    """

    metadata = {"name": "guess_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(self, n_cues: int = 3, render_mode: str | None = None) -> None:
        self.n_cues = n_cues
        self.render_mode = render_mode
        self.possible_agents = ["p0", "p1"]
        self.agents: list[str] = []
        self._obs_space = spaces.Box(0.0, 1.0, (n_cues,), np.float32)
        self._act_spaces = {a: spaces.Discrete(self._n_actions(a)) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self.cue = 0

    def _n_actions(self, agent: str) -> int:
        return self.n_cues

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_spaces[agent]

    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.n_cues, dtype=np.float32)
        obs[self.cue] = 1.0
        return obs

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.cue = int(self._rng.integers(self.n_cues))
        return {a: self._obs() for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]):
        scores = {a: float(int(actions[a]) == self.cue) for a in self.agents}
        p0, p1 = self.possible_agents
        rewards = {p0: scores[p0] - scores[p1], p1: scores[p1] - scores[p0]}
        observations = {a: self._obs() for a in self.agents}
        terminations = {a: True for a in self.agents}
        truncations = {a: False for a in self.agents}
        infos = {a: {} for a in self.agents}
        self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str:
        return f"cue={self.cue}"


class AsymmetricGuessGame(GuessGame):
    """:class:`GuessGame` whose seats differ: ``p0`` has 3 actions, ``p1`` only 2."""

    metadata = {"name": "asymmetric_guess_v0", "render_modes": [], "is_parallelizable": True}

    def _n_actions(self, agent: str) -> int:
        return 3 if agent == "p0" else 2

    def reset(self, seed: int | None = None, options: dict | None = None):
        out = super().reset(seed=seed, options=options)
        self.cue = min(self.cue, 1)  # a cue every seat can name
        return out


class RaceGame(AECEnv):
    """Players take turns adding 1, 2 or 3 (actions 0, 1, 2) to a counter starting at 0.

    Whoever brings the counter to ``target`` exactly wins ``n_players - 1``; every other player
    gets -1. Moves that would pass ``target`` are illegal (masked); playing one loses at once
    (``-(n_players - 1)`` for the mover, +1 for the others). An agent observes the counter
    (one-hot) and its own seat (one-hot).

    :param n_players: number of seats (``player_0`` moves first).
    :param target: the counter value that wins.
    :param mask_in: ``"obs"`` for PettingZoo's ``{"observation", "action_mask"}`` dict,
        ``"info"`` for a plain ``Box`` observation with the mask in ``infos[agent]["action_mask"]``.
    """

    metadata = {"name": "race_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, n_players: int = 3, target: int = 10, mask_in: str = "obs") -> None:
        super().__init__()
        assert mask_in in ("obs", "info")
        self.n_players = n_players
        self.target = target
        self.mask_in = mask_in
        self.possible_agents = [f"player_{i}" for i in range(n_players)]
        board = spaces.Box(0.0, 1.0, (target + 1 + n_players,), np.float32)
        if mask_in == "obs":
            self._obs_space: spaces.Space = spaces.Dict(
                {"observation": board, "action_mask": spaces.Box(0, 1, (3,), np.int8)}
            )
        else:
            self._obs_space = board
        self._act_space = spaces.Discrete(3)
        self.counter = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def _legal(self) -> np.ndarray:
        return np.array([self.counter + k + 1 <= self.target for k in range(3)], dtype=np.int8)

    def observe(self, agent: str) -> Any:
        board = np.zeros(self.target + 1 + self.n_players, dtype=np.float32)
        board[self.counter] = 1.0
        board[self.target + 1 + self.possible_agents.index(agent)] = 1.0
        if self.mask_in == "obs":
            return {"observation": board, "action_mask": self._legal()}
        return board

    def _update_infos(self) -> None:
        for agent in self.agents:
            self.infos[agent] = {"action_mask": self._legal()} if self.mask_in == "info" else {}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.agents = list(self.possible_agents)
        self.counter = int((options or {}).get("start", 0))
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._update_infos()
        self.agent_selection = self.agents[0]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if not self._legal()[int(action)]:  # like PettingZoo's classic games: an illegal move loses
            for a in self.agents:
                self.rewards[a] = -float(self.n_players - 1) if a == agent else 1.0
                self.terminations[a] = True
        else:
            self.counter += int(action) + 1
        if self.counter == self.target:
            for a in self.agents:
                self.rewards[a] = float(self.n_players - 1) if a == agent else -1.0
                self.terminations[a] = True
        index = self.possible_agents.index(agent)
        self.agent_selection = self.possible_agents[(index + 1) % self.n_players]
        self._update_infos()
        self._accumulate_rewards()


class EarlyExitGame(AECEnv):
    """Two seats, ``"leaver"`` then ``"stayer"``, taking turns with actions ``Discrete(2)``.

    The stayer's first move eliminates the leaver: it terminates with a final reward of +1 if its
    move matched the stayer's, else -1 (the stayer gets the opposite). The stayer then plays
    ``extra_moves`` more moves alone and gets +0.5 on its last one. No masks; the observation is
    ``[moves made so far, leaver's move]``.
    """

    metadata = {"name": "early_exit_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, extra_moves: int = 3) -> None:
        super().__init__()
        self.extra_moves = extra_moves
        self.possible_agents = ["leaver", "stayer"]
        self._obs_space = spaces.Box(0.0, 100.0, (2,), np.float32)
        self._act_space = spaces.Discrete(2)
        self.moves = 0
        self.leaver_move = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_space

    def observe(self, agent: str) -> np.ndarray:
        return np.array([self.moves, self.leaver_move], dtype=np.float32)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.moves = 0
        self.leaver_move = 0
        self.agent_selection = "leaver"

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        self.moves += 1
        if agent == "leaver":
            self.leaver_move = int(action)
        elif self.moves == 2:  # the stayer's first move eliminates the leaver
            won = int(action) == self.leaver_move
            self.rewards["leaver"] = 1.0 if won else -1.0
            self.rewards["stayer"] = -self.rewards["leaver"]
            self.terminations["leaver"] = True
        elif self.moves == 2 + self.extra_moves:
            self.rewards["stayer"] = 0.5
            self.terminations["stayer"] = True
        self.agent_selection = "stayer"
        self._accumulate_rewards()
        self._deads_step_first()


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
