"""``sp-wrappers train`` on team games: the registered team games, a run directory per team run,
resume, the errors, and the predator-prey example.

Budgets are tiny (a few hundred learner steps per team): these tests check the plumbing, not the
strength (``benchmarks/teams.py`` measures that).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from sp_wrappers.games import GAMES, QUADRAPONG_TEAMS, MissingGameError, make_game
from sp_wrappers.recipes import recipe_for
from sp_wrappers.train_command import main_train

ROOT = Path(__file__).resolve().parents[1]
# Tiny PPO settings: n_steps * slots must exceed batch_size only a little.
TINY = (
    "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=64", "--hp", "n_epochs=1",
    "--save-every", "128", "--eval-games", "2", "--no-progress",
)  # fmt: skip
TAG_TINY = (*TINY, "--game-kwarg", "max_cycles=10")


def train(capsys, *argv: object) -> tuple[int, str, str]:
    status = main_train([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_exit_2(status: int, err: str, *fragments: str) -> None:
    assert status == 2, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    for fragment in fragments:
        assert fragment in line, line


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
