"""A fast subset of the compatibility matrix (``benchmarks/compat.py``): games from each family
pass Gymnasium's and SB3's env checkers under ``SelfPlayEnv`` and ``SelfPlayVecEnv``, replay
when seeded, play randomly with ``info["selfplay"]`` at every episode end, and train; games that
cannot work say why."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.classic import rps_v2

from sp_wrappers import SelfPlayEnv, SelfPlayVecEnv

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "compat.py"
_SPEC = importlib.util.spec_from_file_location("compat_matrix", _PATH)
compat = importlib.util.module_from_spec(_SPEC)
sys.modules["compat_matrix"] = compat  # dataclasses look their module up
_SPEC.loader.exec_module(compat)

SMALL = {"random_steps": 200, "learn_steps": 64, "time_limit": 0}  # 0: no wall-clock limit


def entry(name, family, module, function="env", cooperative=False, **kwargs):
    return compat.GameEntry(name, family, compat._Factory(module, function, **kwargs), cooperative)


SUBSET = [
    entry("tictactoe_v3", "classic", "pettingzoo.classic.tictactoe_v3"),
    entry("rps_v2", "classic", "pettingzoo.classic.rps_v2"),
    entry("kuhn_poker", "openspiel", "sp_wrappers.games.adapters", "openspiel_env",
          game_name="kuhn_poker"),
    entry("pong_v3", "atari", "pettingzoo.atari.pong_v3", "parallel_env", obs_type="ram",
          max_cycles=50, auto_rom_install_path=compat._rom_path()),
]  # fmt: skip


@pytest.mark.parametrize("game", SUBSET, ids=lambda e: e.name)
def test_game_passes_every_check_of_the_matrix(game):
    if game.family == "openspiel":
        pytest.importorskip("shimmy")
    row = compat.check_game(game, **SMALL)
    assert row.status == "works", row
    assert row.seeded == "yes"
    assert row.play_env.startswith("pass (") and row.play_vec.startswith("pass (")


def test_game_whose_seats_differ_works_with_a_fixed_seat_and_says_so():
    pytest.importorskip("mpe2")
    row = compat.check_game(
        entry("simple_push_v3", "mpe2", "mpe2.simple_push_v3", "parallel_env"), **SMALL
    )
    assert row.status == "works (fixed seat)", row
    assert row.learner == "adversary_0"
    assert "seats' spaces differ" in row.notes[0] and "fixed seat" in row.notes[0]


def test_cooperative_game_row_says_why_and_what_to_do():
    pytest.importorskip("pymunk")
    game = entry(
        "knights_archers_zombies_v11", "butterfly",
        "pettingzoo.butterfly.knights_archers_zombies_v11", "parallel_env", cooperative=True,
        max_cycles=50,
    )  # fmt: skip
    row = compat.check_game(game, **SMALL)
    assert row.status == "n/a"
    assert row.learn == "n/a (cooperative)"
    assert row.env_gym == row.env_sb3 == "pass"
    assert any("no opponent" in note for note in row.notes)


def test_discrete_observations_come_back_as_integers_in_both_envs():
    """rock-paper-scissors hands back 0-d arrays; the learner's space promises an int."""
    env = SelfPlayEnv(rps_v2.env())
    obs, _ = env.reset(seed=0)
    assert isinstance(obs, np.int64) and obs in env.observation_space
    obs, *_ = env.step(0)
    assert isinstance(obs, np.int64)
    check_env(SelfPlayEnv(rps_v2.env()), skip_render_check=True)
    venv = SelfPlayVecEnv(rps_v2.env, n_envs=2)
    assert venv.reset().shape == (2,)
    _, _, dones, infos = venv.step(np.array([0, 1]))
    venv.close()


def test_table_states_the_pass_count():
    rows = [compat.Row("a", "classic", status="works"), compat.Row("b", "classic", status="fails"),
            compat.Row("c", "butterfly", status="n/a")]  # fmt: skip
    text = compat.render(rows, "python benchmarks/compat.py")
    assert "**1 of 2 competitive games work as they are**" in text
    assert "1 cooperative or single-agent games" in text
