"""League training on tic-tac-toe with tiny budgets: players, resets, the archive, the process
backend and resuming a killed league."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.core.state_file import StateFileError
from sp_wrappers.league import (
    AlphaStarLeague,
    League,
    LeagueSetupError,
    SelfPlayLeague,
    league_games,
)
from sp_wrappers.league.runner import STATE_NAME
from sp_wrappers.league.worker import ChunkPlan, PlayerWorker
from sp_wrappers.ratings.bradley_terry import fit_bradley_terry

CHUNK = 64


def tiny_model(env):
    return MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=32,
        n_epochs=1,
        policy_kwargs={"net_arch": [16]},
        seed=0,
    )


def frozen_model(env):
    """A learner whose updates change nothing (learning rate 0): its weights show resets."""
    model = tiny_model(env)
    model.learning_rate = 0.0
    model.lr_schedule = lambda _: 0.0
    return model


def every_round_builder(**kwargs):
    """Snapshots after every chunk, so resets happen in a few rounds."""
    return AlphaStarLeague(snapshot_min_steps=CHUNK, snapshot_max_steps=CHUNK, **kwargs)


def test_worker_reset_restores_initial_weights():
    worker = PlayerWorker("main_exploiter_0", tictactoe_v3.env, frozen_model, n_envs=2, seed=0)
    initial = worker.describe()["initial_weights"]
    for parameter in worker.model.policy.parameters():  # as if it had learned
        parameter.data += 1.0
    plan = ChunkPlan(CHUNK, {"main_agent_0": 1.0}, reset=True, seed=0)
    plan.weights = {"main_agent_0": ("v0", worker.describe()["spec"], initial)}
    result = worker.train_chunk(plan)
    assert result.steps == CHUNK
    for name, value in initial.items():
        np.testing.assert_array_equal(result.weights[name], value)
    assert {m["player_b"] for m in result.matches} == {"main_agent_0"}
    worker.close()


def connect_four_model(env):
    """Ignores the env it gets and builds the model on connect four's."""
    from sp_wrappers import make_selfplay_vec_env

    return tiny_model(make_selfplay_vec_env(connect_four_v3.env, n_envs=1))


def test_make_model_for_another_game_fails_naming_the_fix(tmp_path):
    league = League(tictactoe_v3.env, SelfPlayLeague(), connect_four_model, tmp_path)
    with pytest.raises(LeagueSetupError, match="Build the model on the env that make_model"):
        league.run(CHUNK, backend="serial")


def test_main_exploiter_resets_after_each_snapshot_and_the_archive_tags_roles(tmp_path):
    league = League(
        tictactoe_v3.env,
        every_round_builder(main_agents=1, main_exploiters=1, league_exploiters=0),
        tiny_model,
        tmp_path,
        chunk_steps=CHUNK,
        n_envs=2,
        seed=0,
    )
    plans = []
    make_plans = league._plans
    league._plans = lambda: plans.append(make_plans()) or plans[-1]
    result = league.run(2 * 3 * CHUNK, backend="serial")

    assert result.rounds == 3
    main, exploiter = league.learners["main_agent_0"], league.learners["main_exploiter_0"]
    assert exploiter.resets == len(exploiter.snapshots) == 3
    assert main.resets == 0 and len(main.snapshots) == 4  # initial + one per round
    assert [p["main_exploiter_0"].reset for p in plans] == [False, True, True]
    assert not any(p["main_agent_0"].reset for p in plans)
    tags = {info.id: set(info.tags) for info in league.archive.snapshots()}
    first_exploiter = exploiter.snapshots[0]
    assert {"role:main_exploiter", "parent:main_exploiter_0", "previous:none"} <= tags[
        first_exploiter
    ]
    assert f"previous:{main.snapshots[0]}" in tags[main.snapshots[1]]
    # every game is in the one archive, and all players get one Bradley-Terry scale
    assert league.archive.n_matches() > 0
    ratings = fit_bradley_terry(league_games(league.archive))
    assert set(main.snapshots[1:]) | set(exploiter.snapshots) <= set(ratings.ratings)


def test_selfplay_league_is_a_league_with_one_learner(tmp_path):
    league = League(
        tictactoe_v3.env, SelfPlayLeague(save_every=CHUNK), tiny_model, tmp_path, CHUNK, n_envs=2
    )
    result = league.run(2 * CHUNK, backend="serial")
    (learner,) = result.learners
    assert learner.steps == 2 * CHUNK and len(learner.snapshots) == 3
    opponents = {m.player_b for m in league.archive.matches()}
    assert opponents <= {"learner_0", *learner.snapshots}


KILLED_RUN = """
import sys
sys.path.insert(0, {tests!r})
from pettingzoo.classic import tictactoe_v3
from sp_wrappers.league import League
from test_league import CHUNK, every_round_builder, tiny_model

if __name__ == "__main__":
    league = League(tictactoe_v3.env, every_round_builder(league_exploiters=0), tiny_model,
                    {root!r}, chunk_steps=CHUNK, n_envs=2, seed=0)
    league.run(10**9, backend="process")
"""


def _round(root: Path) -> int:
    try:
        return json.loads((root / STATE_NAME).read_text())["round"]
    except (OSError, ValueError):
        return -1


def test_league_state_round_trips_through_league_json_and_refuses_another_league(tmp_path):
    from sp_wrappers.league.builders import FrozenPlayer, PlayerSpec
    from sp_wrappers.league.state import LeagueState

    specs = [PlayerSpec("main_agent_0", "main_agent"), PlayerSpec("main_exploiter_0", "exploiter")]
    shares = {"main_agent_0": 0.5, "main_exploiter_0": 0.5}
    path = tmp_path / STATE_NAME
    state = LeagueState.new(path, specs, seed=3)
    state.round = 2
    state.learners["main_agent_0"].steps = 128
    state.learners["main_agent_0"].snapshots.append("snapshot-0000")
    state.frozen.append(FrozenPlayer("snapshot-0000", "main_agent_0", "main_agent", 64))
    state.pending_resets.add("main_exploiter_0")
    state.model_files["main_agent_0"] = "players/main_agent_0/model-00002.zip"
    state.final_snapshots["main_agent_0"] = "snapshot-0000"
    state.total_timesteps = 512
    state.rng.integers(10)
    state.write(builder="SomeLeague()", chunk_steps=64, shares=shares, payoff={"pairs": []})

    back = LeagueState.read(path, specs, shares)
    assert (back.round, back.learners, back.frozen) == (state.round, state.learners, state.frozen)
    assert (back.pending_resets, back.model_files, back.final_snapshots) == (
        state.pending_resets,
        state.model_files,
        state.final_snapshots,
    )
    assert back.total_timesteps == 512
    assert back.rng.integers(1000, size=4).tolist() == state.rng.integers(1000, size=4).tolist()
    saved = json.loads(path.read_text())
    assert saved["format_version"] == 1 and saved["builder"] == "SomeLeague()"

    with pytest.raises(LeagueSetupError, match="the builder asks for"):
        LeagueState.read(path, specs[:1], {"main_agent_0": 1.0})
    path.write_text("{")
    with pytest.raises(StateFileError, match="league.json: cannot read"):
        LeagueState.read(path, specs, shares)


def test_the_leagues_progress_is_its_state(tmp_path):
    league = League(tictactoe_v3.env, SelfPlayLeague(), tiny_model, tmp_path, chunk_steps=CHUNK)
    assert not league.resumed and league.round == league.state.round == 0
    assert league.learners is league.state.learners and league.rng is league.state.rng
    league.round = 4
    assert league.state.round == 4 and league.state_json()["round"] == 4


def test_process_league_killed_mid_run_resumes_with_players_payoff_and_archive(tmp_path):
    root = tmp_path / "league"
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(KILLED_RUN.format(tests=str(Path(__file__).parent), root=str(root)))
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    process = subprocess.Popen([sys.executable, str(script)], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while _round(root) < 2:
            assert process.poll() is None, "the league process ended before two rounds"
            assert time.monotonic() < deadline, "no two rounds within 240 s"
            time.sleep(0.5)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the driver and its player processes
        process.wait()

    saved = json.loads((root / STATE_NAME).read_text())
    league = League(
        tictactoe_v3.env,
        every_round_builder(league_exploiters=0),
        tiny_model,
        root,
        chunk_steps=CHUNK,
        n_envs=2,
        seed=0,
    )
    assert league.resumed and league.round == saved["round"]
    assert {n: p.steps for n, p in league.learners.items()} == {
        p["name"]: p["steps"] for p in saved["learners"]
    }
    assert [f.id for f in league.frozen] == [f["id"] for f in saved["frozen"]]
    snapshots_before = {info.id for info in league.archive.snapshots()}
    # the payoff table rebuilt from the archive equals the one the killed run wrote
    rebuilt, written = league.payoff.to_json()["pairs"], saved["payoff"]["pairs"]
    assert [pair[:2] for pair in rebuilt] == [pair[:2] for pair in written]
    numbers = [x for pair in written for x in pair[2:]]
    assert [x for pair in rebuilt for x in pair[2:]] == pytest.approx(numbers)
    steps_before = league.total_steps()
    result = league.run(steps_before + 2 * CHUNK, backend="serial")
    assert result.rounds == saved["round"] + 1
    assert all(p.steps == steps_before // 2 + CHUNK for p in result.learners)
    assert snapshots_before <= {info.id for info in league.archive.snapshots()}
    assert league.learners["main_exploiter_0"].resets == len(
        league.learners["main_exploiter_0"].snapshots
    )
