"""BoardExtractor: shapes and gradients on every board game, training, and archive round trips."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from gymnasium import spaces
from pettingzoo.classic import connect_four_v3

import sp_wrappers
from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.networks import BoardExtractor
from sp_wrappers.core.seats import seat_spaces
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.games.registry import GAMES, MissingGameError, make_game

SMALL = {"features_dim": 32, "channels": 16, "n_layers": 2}
# Worktrees and editable installs may point elsewhere: children import the package we test.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(sp_wrappers.__file__)))


def board_games() -> dict[str, tuple[str, dict]]:
    """Every registered game whose learner sees a board (2-D or 3-D planes), plus Go and chess."""
    found = {}
    for name in GAMES:
        try:
            game = make_game(name)
        except MissingGameError:
            continue
        space, _ = seat_spaces(game, game.possible_agents[0], keep_dict_obs=False)
        game.close()
        if len(space.shape) in (2, 3):
            found[name] = (name, {})
    found["go_v5 5x5"] = ("pettingzoo.classic.go_v5:env", {"board_size": 5})
    found["chess_v6"] = ("pettingzoo.classic.chess_v6:env", {})
    return found


BOARD_GAMES = board_games()


def test_the_registered_board_games_are_found():
    assert {"tictactoe_v3", "connect_four_v3"} <= set(BOARD_GAMES)


@pytest.mark.parametrize("label", sorted(BOARD_GAMES))
def test_output_shape_and_a_gradient_for_every_weight_on_each_board_game(label):
    name, kwargs = BOARD_GAMES[label]
    game = make_game(name, **kwargs)
    space, _ = seat_spaces(game, game.possible_agents[0], keep_dict_obs=False)
    game.close()
    extractor = BoardExtractor(space, **SMALL)
    space.seed(0)
    batch = torch.as_tensor(np.stack([space.sample() for _ in range(4)]))
    features = extractor(batch)
    assert features.shape == (4, SMALL["features_dim"])
    features.pow(2).sum().backward()
    for name_, parameter in extractor.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name_


def test_head_channels_shrink_the_dense_layer_of_a_big_board():
    space = spaces.Box(0, 1, (19, 19, 17), bool)
    plain = BoardExtractor(space, features_dim=64, channels=32)
    headed = BoardExtractor(space, features_dim=64, channels=32, head_channels=2)
    assert headed.linear[0].in_features == 2 * 19 * 19 < plain.linear[0].in_features
    assert headed(torch.zeros(1, 19, 19, 17)).shape == (1, 64)


def test_a_single_plane_board_without_a_channel_axis_is_accepted():
    extractor = BoardExtractor(spaces.Box(-1, 1, (4, 5), np.float32), **SMALL)
    assert extractor(torch.zeros(3, 4, 5)).shape == (3, SMALL["features_dim"])


@pytest.mark.parametrize(
    "space, problem",
    [
        (spaces.Box(0, 1, (72,), np.float32), "shape (72,)"),
        (spaces.Dict({"observation": spaces.Box(0, 1, (3, 3, 2), np.int8)}), "Dict"),
        (spaces.Discrete(9), "Discrete"),
    ],
)
def test_an_observation_that_is_not_a_board_is_refused_with_the_fix(space, problem):
    with pytest.raises((TypeError, ValueError), match=re.escape(problem)) as error:
        BoardExtractor(space)
    assert "keep_dict_obs" in str(error.value)


@pytest.mark.parametrize("argument", ["features_dim", "channels", "n_layers"])
def test_sizes_must_be_positive_integers(argument):
    space = spaces.Box(0, 1, (3, 3, 2), np.int8)
    with pytest.raises(ValueError, match=f"{argument} must be an integer >= 1, got 0"):
        BoardExtractor(space, **{argument: 0})


def _model(seed: int = 0):
    from sb3_contrib import MaskablePPO

    env = SelfPlayEnv(connect_four_v3.env(), learner="random")
    return MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=64,
        n_epochs=2,
        seed=seed,
        policy_kwargs={
            "features_extractor_class": BoardExtractor,
            "features_extractor_kwargs": dict(SMALL),
            "net_arch": [32],
        },
    )


@pytest.mark.learning
def test_a_snapshot_with_the_extractor_reloads_in_a_fresh_process_and_plays(
    tmp_path, single_thread_torch
):
    model = _model()
    before = {k: v.clone() for k, v in model.policy.state_dict().items()}
    model.learn(256)
    changed = [k for k, v in model.policy.state_dict().items() if not torch.equal(v, before[k])]
    assert any(k.startswith("features_extractor.convolutions") for k in changed)

    archive = SnapshotArchive(tmp_path / "archive")
    info = archive.save(model, step=model.num_timesteps)
    spec = archive.get(info.id).policy_spec["kwargs"]
    assert spec["features_extractor_class"] == {
        "__class__": f"{BoardExtractor.__module__}:BoardExtractor"
    }
    assert spec["features_extractor_kwargs"] == SMALL

    rng = np.random.default_rng(0)
    boards = np.zeros((8, 6, 7, 2), dtype=np.int8)
    for board in boards:  # a few legal-looking positions: stacks from the bottom
        for column in range(7):
            for height in range(int(rng.integers(0, 4))):
                board[5 - height, column, int(rng.integers(2))] = 1
    np.save(tmp_path / "boards.npy", boards)
    expected = archive.load_policy(info.id, deterministic=True).act(boards, None, None)
    archive.close()

    child = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        from pettingzoo.classic import connect_four_v3
        from sp_wrappers.archive.store import SnapshotArchive
        from sp_wrappers.evaluation.match import play_match
        from sp_wrappers.core.policies import RandomPolicy

        archive = SnapshotArchive({str(tmp_path / "archive")!r}, create=False)
        policy = archive.load_policy({info.id!r}, deterministic=True)
        boards = np.load({str(tmp_path / "boards.npy")!r})
        result = play_match(connect_four_v3.env, policy, RandomPolicy(), n_games=2, seed=0)
        print(json.dumps({{"actions": policy.act(boards, None, None).tolist(),
                          "extractor": type(policy.policy.features_extractor).__name__,
                          "games": result.n_games}}))
        """
    )
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"actions": expected.tolist(), "extractor": "BoardExtractor", "games": 2}
