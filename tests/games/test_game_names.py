"""The game names people type: every PettingZoo environment by its own name, OpenSpiel games by
their OpenSpiel names (``openspiel:NAME`` where a name clashes), and an unknown name refused
before a command prints or writes anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PSRO_TINY

from sp_wrappers.games.errors import MissingGameError, UnknownGameError
from sp_wrappers.games.registry import (
    GAMES,
    game_names,
    make_game,
    pettingzoo_games,
    resolve_game,
)


def test_chess_by_pettingzoos_own_name_is_built():
    game = make_game("chess_v6")
    assert game.metadata["name"] == "chess_v6"
    assert game.possible_agents == ["player_0", "player_1"]


def test_every_pettingzoo_environment_resolves_or_names_its_install_line():
    names = pettingzoo_games()
    assert {"chess_v6", "go_v5", "rps_v2", "pistonball_v6", "boxing_v2"} <= set(names)
    for name in names:
        try:
            assert callable(resolve_game(name)), name
        except MissingGameError as error:  # e.g. the sisl games without Box2D
            assert f"The game {name} needs" in str(error) and "pip install" in str(error)


def test_a_missing_extra_is_one_line_with_the_install_command(sp_wrappers, tmp_path):
    try:
        import Box2D  # noqa: F401
    except ImportError:
        pass
    else:  # pragma: no cover - this machine has the sisl extra
        pytest.skip("Box2D is installed")
    status, out, err = sp_wrappers("train", "multiwalker_v9", "--out", str(tmp_path / "run"))
    assert status == 2 and out == "", err
    assert 'needs Box2D, which is not installed: pip install "pettingzoo[sisl]"' in err, err
    assert not (tmp_path / "run").exists()


def test_openspiel_games_by_their_openspiel_names():
    pytest.importorskip("pyspiel")
    from sp_wrappers.games.openspiel_games import kuhn_poker, leduc_poker

    assert resolve_game("kuhn_poker") is kuhn_poker
    assert resolve_game("leduc_poker") is leduc_poker
    # Leduc through its own constructor: the information state, whichever spelling
    assert make_game("openspiel:leduc_poker").observation_space("player_0").shape == (30,)
    liars = make_game("liars_dice")
    assert liars.possible_agents == ["player_0", "player_1"]
    assert "liars_dice" in game_names()["openspiel"]


def test_an_openspiel_name_that_clashes_asks_for_the_one_meant():
    pytest.importorskip("pyspiel")
    with pytest.raises(UnknownGameError, match=r"chess_v6 or openspiel:chess"):
        resolve_game("chess")
    assert make_game("openspiel:tic_tac_toe").possible_agents == ["player_0", "player_1"]


def test_an_unknown_name_lists_the_three_sources_shortly():
    with pytest.raises(UnknownGameError) as caught:
        resolve_game("chess_v9")
    message = str(caught.value)
    assert "did you mean chess_v6" in message and "\n" not in message
    assert all(name in message for name in GAMES)
    assert f"PettingZoo's {len(pettingzoo_games())} environments" in message
    assert "sp-wrappers games" in message and "module:function" in message
    assert len(message) < 600  # counts and a command, not 160 names


@pytest.mark.parametrize("command", ["train", "league", "psro"])
def test_an_unknown_game_is_refused_before_the_command_prints_or_writes(
    command, sp_wrappers, tmp_path
):
    # psro printed "PSRO on chess_v9 (ppo) into DIR" and then the error
    status, out, err = sp_wrappers(command, "chess_v9", "--out", str(tmp_path / "run"))
    assert status == 2 and out == "", (out, err)
    assert err.startswith("sp-wrappers: error: Unknown game 'chess_v9'"), err
    assert not (tmp_path / "run").exists()


@pytest.mark.learning
def test_psro_on_kuhn_poker_by_its_name_gets_the_kuhn_recipe_and_runs(sp_wrappers, tmp_path):
    pytest.importorskip("pyspiel")
    from sp_wrappers.runs import resolve
    from sp_wrappers.runs.recipes import KUHN_POKER

    by_name = resolve("kuhn_poker", {"iterations": 1}, kind="psro")
    by_path = resolve(KUHN_POKER, {"iterations": 1}, kind="psro")
    assert by_name.replace(game=KUHN_POKER) == by_path  # the same tuned recipe
    out = tmp_path / "run"
    argv = ["psro", "kuhn_poker", "--out", str(out), "--iterations", "1"]
    argv += ["--steps", str(PSRO_TINY["steps_per_iteration"]), "--n-envs", "2"]
    argv += [f"--hp={k}={v}" for k, v in PSRO_TINY["hp"].items()]
    status, stdout, err = sp_wrappers(*argv)
    assert status == 0, err
    assert stdout.startswith(f"PSRO on kuhn_poker (maskable_ppo) into {out}"), stdout
    assert json.loads((out / "config.json").read_text())["game"] == "kuhn_poker"


def test_the_compatibility_page_lists_every_name():
    page = (Path(__file__).resolve().parents[2] / "docs" / "compatibility.md").read_text()
    names = game_names()
    missing = [n for n in names["pettingzoo"] + names["openspiel"] if f"`{n}`" not in page]
    assert not missing, f"docs/compatibility.md lacks {missing}: rebuild its game-names section"


def test_the_games_command_prints_the_three_lists(sp_wrappers):
    status, out, err = sp_wrappers("games")
    assert status == 0, err
    registered, pettingzoo, openspiel = out.strip().splitlines()
    assert registered.startswith("Registered: tictactoe_v3")
    assert pettingzoo.startswith(f"PettingZoo ({len(pettingzoo_games())}):")
    assert "chess_v6" in pettingzoo and openspiel.startswith("OpenSpiel (")
