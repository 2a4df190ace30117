"""Seats as a collaborator: an env without teams never runs team code, and a learner team's env is
the same class holding another seating."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mpe2 import simple_tag_v3

from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.envs.vector import SelfPlayVecEnv, TeamVecEnv, make_selfplay_vec_env
from sp_wrappers.envs.vector.team_seating import LearnerTeam

ROOT = Path(__file__).resolve().parents[2]

# Imports the libraries first, then sp_wrappers under a profiler that records every function of
# a team module (a module named team*, at any depth) that runs: at import time and through one
# tiny training run of each env, with the callback's weight syncs and episode drains.
PLAIN_TRAINING = """
import inspect, json, sys, tempfile
from pettingzoo.classic import tictactoe_v3
from stable_baselines3 import PPO

def is_team(module):
    return module.startswith("sp_wrappers") and any(
        part.startswith("team") for part in module.split("."))

ran = set()

def profile(frame, event, arg):
    code = frame.f_code
    if event == "call" and code.co_flags & inspect.CO_OPTIMIZED:  # a function, not a body
        module = frame.f_globals.get("__name__", "")
        if is_team(module):
            ran.add(f"{module}.{code.co_qualname}")

# The core face imports its public names, TeamLayout among them (a dataclass: defining it runs
# dataclass-made code in core.teams); everything after it is the env's own doing.
import sp_wrappers.core

sys.setprofile(profile)
from sp_wrappers.archive import SnapshotArchive
from sp_wrappers.envs import SelfPlayEnv
from sp_wrappers.envs.vector import SelfPlayVecEnv
from sp_wrappers.opponents import OpponentSampler
from sp_wrappers.training import SelfPlayCallback

with tempfile.TemporaryDirectory() as tmp:
    for i, env in enumerate([SelfPlayVecEnv(tictactoe_v3.env, n_envs=2),
                             SelfPlayEnv(tictactoe_v3.env, learner="random")]):
        archive = SnapshotArchive(f"{tmp}/{i}")
        env.set_attr("opponent_source", OpponentSampler(archive)) if i == 0 else (
            env.set_opponent(OpponentSampler(archive)))
        model = PPO("MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0)
        model.learn(32, callback=SelfPlayCallback(archive, save_every=16))
        assert len(archive) >= 1
sys.setprofile(None)
envs_and_opponents = [m for m in sys.modules
                      if is_team(m) and m.split(".")[1] in ("envs", "opponents")]
print(json.dumps({"ran": sorted(ran), "imported": sorted(envs_and_opponents)}))
"""


def test_a_plain_env_never_runs_or_imports_team_code():
    out = subprocess.run(
        [sys.executable, "-c", PLAIN_TRAINING],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.splitlines()
    found = json.loads(out[-1])
    assert found == {"ran": [], "imported": []}


def make_tag():
    return simple_tag_v3.env(max_cycles=5, continuous_actions=False)


def play(env, steps: int = 6) -> list:
    env.seed(0)
    trace = [env.reset()]
    for _ in range(steps):
        obs, rewards, dones, infos = env.step(np.zeros(env.num_envs, dtype=np.int64))
        trace.append((obs, rewards, dones, [info.get("selfplay") for info in infos]))
    env.close()
    return trace


def test_a_learner_team_s_env_is_the_vector_env_with_team_seating():
    env = make_selfplay_vec_env(make_tag, n_envs=2, learner="adversary", teams="prefix")
    inner = env.unwrapped
    assert isinstance(inner, SelfPlayVecEnv) and isinstance(inner.seating, LearnerTeam)
    assert type(inner).step_wait is SelfPlayVecEnv.step_wait  # one game loop for both
    assert [name for name, value in vars(TeamVecEnv).items() if callable(value)] == ["__init__"]
    assert "__new__" not in vars(SelfPlayVecEnv)
    env.close()


def test_the_plain_vector_env_takes_no_teams_any_more():
    with pytest.raises(TypeError, match="teams"):
        SelfPlayVecEnv(make_tag, n_envs=1, learner="adversary", teams="prefix")


def test_team_vec_env_needs_teams():
    with pytest.raises(ValueError, match="TeamVecEnv needs teams="):
        TeamVecEnv(make_tag, n_envs=1)


def test_each_env_holds_the_seating_of_its_learner():
    plain = SelfPlayEnv(make_tag(), learner="agent_0")
    team = SelfPlayEnv(make_tag(), learner="adversary", teams="prefix")
    assert (plain.learner_teams, plain.layout, plain.wants_learner_template) == (None, None, False)
    assert team.learner_teams == ["adversary"] and team.wants_learner_template
    assert type(plain).step is type(team).step and type(plain) is type(team)
