"""Hostile run histories (``strength.json``, ``exploitability.json``, ``env_generator.json``,
the k-opponent history): each refused with one line naming the file, the field and the fix,
the file left as it was; and each file as 0.2 wrote it still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers import SelfPlayVecEnv
from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.state_file import StateFileError
from sp_wrappers.training.env_generator import ENV_GENERATOR_STATE, EnvGenerator
from sp_wrappers.training.k_opponents import HISTORY_NAME as K_HISTORY
from sp_wrappers.training.k_opponents import KOpponentRollouts
from sp_wrappers.training.strength import HISTORY_NAME, StrengthCallback


def tiny_model(n_envs: int = 1) -> MaskablePPO:
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=n_envs)
    return MaskablePPO(
        "MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, policy_kwargs={"net_arch": [16]}
    )


def _refused(path: Path, edit, field: str, act) -> str:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    with pytest.raises(StateFileError) as error:
        act()
    message = str(error.value)
    assert "\n" not in message and path.name in message and field in message, message
    assert path.read_bytes() == before  # the file is left as it was
    return message


# -- strength.json ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def strength_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("strength") / "run"
    tiny_model().learn(
        64, callback=StrengthCallback.for_game("tictactoe_v3", run_dir=run, eval_every=64)
    )
    return run


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d["evaluations"][0]["scores"].update(random="NaN-ish"), "scores.random"),
        (lambda d: d["evaluations"][0].update(step=-5), "evaluations[0].step"),
        (lambda d: d["evaluations"][0]["scores"].pop("minimax"), "evaluations[0].scores"),
        (lambda d: d.update(ladder="../../../../tmp/evil"), "ladder"),
        (
            lambda d: d["evaluations"][0]["tactics"].update(wins_taken=-3),
            "evaluations[0].tactics.wins_taken",
        ),
        (
            lambda d: d["evaluations"][0]["tactics"].update(wins_handed_share="NaN-ish"),
            "evaluations[0].tactics.wins_handed_share",
        ),
        (lambda d: d.update(format_version="1"), "format_version '1'"),
    ],
)
def test_a_hostile_strength_history_is_refused_in_one_line(strength_run, tmp_path, edit, field):
    path = tmp_path / HISTORY_NAME
    path.write_bytes((strength_run / HISTORY_NAME).read_bytes())
    callback = StrengthCallback.for_game("tictactoe_v3", run_dir=tmp_path, eval_every=64)
    message = _refused(path, edit, field, lambda: tiny_model().learn(64, callback=callback))
    assert "move it away" in message


# -- exploitability.json ---------------------------------------------------------------------


def test_a_hostile_exploitability_history_is_refused_in_one_line(tmp_path):
    pytest.importorskip("pyspiel")
    from sp_wrappers.games.openspiel_games import kuhn_poker
    from sp_wrappers.training.exploitability import (
        EXPLOITABILITY_HISTORY,
        ExploitabilityCallback,
        read_exploitability,
    )

    archive = SnapshotArchive(tmp_path / "archive")
    venv = SelfPlayVecEnv(kuhn_poker, n_envs=2)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1)
    archive.save(model, step=0)

    def learn():
        callback = ExploitabilityCallback(kuhn_poker, archive, every=64, run_dir=tmp_path)
        model.learn(64, callback=callback, reset_num_timesteps=False)

    learn()
    path = tmp_path / EXPLOITABILITY_HISTORY
    assert read_exploitability(tmp_path)["snapshots"]
    edits = [
        (lambda d: d["evaluations"][0]["learner"].update(nash_conv="NaN-ish"), "nash_conv"),
        (lambda d: d["evaluations"][0]["learner"].update(exploitability=-5), "exploitability"),
        (
            lambda d: d["snapshots"].update(
                {"../../../../tmp/evil": d["snapshots"]["snapshot-0000"]}
            ),
            "evil",
        ),
        (
            lambda d: d["snapshots"].update({"snapshot-0042": d["snapshots"]["snapshot-0000"]}),
            "snapshot-0042",
        ),
        (lambda d: d.update(method="guess"), "method"),
    ]
    good = path.read_bytes()
    for edit, field in edits:
        path.write_bytes(good)
        _refused(path, edit, field, learn)


# -- the k-opponent history ------------------------------------------------------------------

RECORD = {
    "rollout": 0,
    "step": 32,
    "opponents": ["snapshot-0000", "latest"],
    "outcomes": [0.5, None],
    "returns": [0.1, None],
    "counts": [3, 0],
}


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d["records"][0].update(outcomes=["NaN-ish", None]), "outcomes[0]"),
        (lambda d: d["records"][0].update(counts=[-5, 0]), "counts[0]"),
        (lambda d: d["records"][0].update(outcomes=[0.5]), "records[0]"),
        (lambda d: d.update(k=0), "k"),
        (lambda d: d.update(records={"evil": 1}), "records"),
        (lambda d: d["records"][0].update(opponents=["../../../../tmp/evil", "latest"]), "evil"),
        (lambda d: d["records"][0].update(opponents=["snapshot-0042", "latest"]), "0042"),
    ],
)
def test_a_hostile_k_opponent_history_is_refused_in_one_line(tmp_path, edit, field):
    archive = SnapshotArchive(tmp_path / "archive")
    archive.save(tiny_model(), step=0)
    path = archive.path / K_HISTORY
    path.write_text(json.dumps({"format_version": 1, "k": 2, "records": [RECORD]}))
    assert len(KOpponentRollouts(archive, k=2, reward_fn=lambda r, h: 0.0).history) == 1
    message = _refused(
        path, edit, field, lambda: KOpponentRollouts(archive, k=2, reward_fn=lambda r, h: 0.0)
    )
    assert "delete it to start a new history" in message


# -- env_generator.json ----------------------------------------------------------------------


def _same(step, index, history):
    return {}


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d["copies"][0].update(game_kwargs="NaN-ish"), "copies[0].game_kwargs"),
        (lambda d: d["copies"][1].update(reward_fn=5), "copies[1].reward_fn"),
        (lambda d: d.update(copies={"../../../../tmp/evil": {}}), "copies"),
        (lambda d: d.update(step=-5), "step"),
    ],
)
def test_a_hostile_env_generator_state_is_refused_in_one_line(tmp_path, edit, field):
    path = tmp_path / ENV_GENERATOR_STATE
    state = {
        "format_version": 1,
        "step": 10,
        "generator": "tests:_same",
        "copies": [{"game_kwargs": {}, "reward_fn": None}, {"game_kwargs": {}}],
    }
    path.write_text(json.dumps(state))
    tiny_model(n_envs=2).learn(64, callback=EnvGenerator(_same, state_path=path))  # it reads
    path.write_text(json.dumps(state))
    message = _refused(
        path,
        edit,
        field,
        lambda: tiny_model(n_envs=2).learn(64, callback=EnvGenerator(_same, state_path=path)),
    )
    assert "let the generator choose" in message
