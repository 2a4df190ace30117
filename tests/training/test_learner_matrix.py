"""Specification: every SB3 / sb3-contrib learner trains by self-play in every runner.

The matrix: each learner x ``SelfPlayEnv`` (in a ``DummyVecEnv``), ``SelfPlayVecEnv`` and the
league's serial backend, at a few hundred learner steps, with ``latest_ratio=0`` so every opponent
after the first save is a snapshot: it learns, saves snapshots, plays them as masked opponents
(the envs stop on any illegal opponent move), and the snapshots reload in a fresh process, pass
the archive's checks and play a match. Discrete learners play tic-tac-toe; the Box-action ones
(SAC, TD3, DDPG, TQC, CrossQ) play :class:`ReachGame`, a small continuous two-player game.

Then, marked ``learning``, one short real run per family that beats ``RandomPolicy``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import stable_baselines3 as sb3
import torch
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.classic import tictactoe_v3
from stable_baselines3.common.vec_env import DummyVecEnv

sb3_contrib = pytest.importorskip("sb3_contrib")

from sp_wrappers import (  # noqa: E402
    OpponentSampler,
    RandomPolicy,
    SelfPlayCallback,
    SelfPlayEnv,
    SelfPlayVecEnv,
    SnapshotArchive,
    play_match,
)
from sp_wrappers.league import League, SelfPlayLeague  # noqa: E402

torch.set_num_threads(1)
STEPS = 256
tictactoe_env = tictactoe_v3.env  # importable by name from the fresh process

# learner -> (class, policy, arguments for a few hundred steps)
DISCRETE: dict[str, tuple[Any, str, dict[str, Any]]] = {
    "PPO": (sb3.PPO, "MlpPolicy", {"n_steps": 32, "batch_size": 32, "n_epochs": 2}),
    "A2C": (sb3.A2C, "MlpPolicy", {"n_steps": 8}),
    "DQN": (sb3.DQN, "MlpPolicy", {"learning_starts": 32, "buffer_size": 2000}),
    "TRPO": (sb3_contrib.TRPO, "MlpPolicy", {"n_steps": 32, "batch_size": 32}),
    "MaskablePPO": (
        sb3_contrib.MaskablePPO,
        "MlpPolicy",
        {"n_steps": 32, "batch_size": 32, "n_epochs": 2},
    ),
    "QRDQN": (sb3_contrib.QRDQN, "MlpPolicy", {"learning_starts": 32, "buffer_size": 2000}),
    "ARS": (sb3_contrib.ARS, "MlpPolicy", {"n_delta": 2, "n_eval_episodes": 1}),
    "ARSLinear": (sb3_contrib.ARS, "LinearPolicy", {"n_delta": 2, "n_eval_episodes": 1}),
    "RecurrentPPO": (
        sb3_contrib.RecurrentPPO,
        "MlpLstmPolicy",
        {"n_steps": 32, "batch_size": 32, "n_epochs": 2, "policy_kwargs": {"lstm_hidden_size": 16}},
    ),
}
BOX: dict[str, Any] = {
    "SAC": sb3.SAC,
    "TD3": sb3.TD3,
    "DDPG": sb3.DDPG,
    "TQC": sb3_contrib.TQC,
    "CrossQ": sb3_contrib.CrossQ,
}


class ReachGame(ParallelEnv):
    """Both players see a target in [-1, 1] and move a Box(-1, 1) action towards it, 4 rounds a
    game; each round, the closer one gets +1 and the other -1 (zero-sum, symmetric)."""

    metadata = {"name": "reach_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode
        self.possible_agents = ["p0", "p1"]
        self.agents: list[str] = []
        self._obs = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self._act = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self._rng = np.random.default_rng()

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs

    def action_space(self, agent: str) -> spaces.Space:
        return self._act

    def _observe(self) -> dict[str, np.ndarray]:
        obs = np.array([self._target, self._round / 4], dtype=np.float32)
        return {a: obs.copy() for a in self.agents}

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self._round = 0
        self._target = float(self._rng.uniform(-1, 1))
        return self._observe(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple:
        d0 = abs(float(np.asarray(actions["p0"]).reshape(-1)[0]) - self._target)
        d1 = abs(float(np.asarray(actions["p1"]).reshape(-1)[0]) - self._target)
        r0 = float(np.sign(d1 - d0))
        rewards = {"p0": r0, "p1": -r0}
        self._round += 1
        self._target = float(self._rng.uniform(-1, 1))
        done = self._round >= 4
        obs = self._observe()
        flags = {a: done for a in self.agents}
        truncated = {a: False for a in self.agents}
        infos = {a: {} for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, flags, truncated, infos


def discrete_model(name: str, env: Any, seed: int = 0) -> Any:
    cls, policy, kwargs = DISCRETE[name]
    return cls(policy, env, seed=seed, **kwargs)


def box_model(name: str, env: Any, seed: int = 0) -> Any:
    small = {"net_arch": [32, 32]}
    return BOX[name](
        "MlpPolicy", env, learning_starts=32, buffer_size=2000, seed=seed, policy_kwargs=small
    )


def selfplay_run(
    make_model: Any, make_env: Any, runner: str, root: Path, steps: int = STEPS
) -> SnapshotArchive:
    """A few hundred learner steps of self-play against snapshots in ``runner``."""
    archive = SnapshotArchive(root / "archive")
    if runner == "env":
        envs = [
            lambda i=i: SelfPlayEnv(
                make_env(), opponent=OpponentSampler(archive, latest_ratio=0.0, seed=i)
            )
            for i in range(2)
        ]
        env = DummyVecEnv(envs)
    else:
        env = SelfPlayVecEnv(
            make_env, n_envs=2, opponent=OpponentSampler(archive, latest_ratio=0.0, seed=0)
        )
    model = make_model(env)
    model.learn(steps, callback=SelfPlayCallback(archive, save_every=steps // 4))
    assert model.num_timesteps >= steps
    return archive


RELOAD = """
import json, sys
sys.path.insert(0, {tests!r})
from sp_wrappers import SnapshotArchive, RandomPolicy, play_match
from {module} import {env_fn}
archive = SnapshotArchive({path!r}, create=False)
ids = [info.id for info in archive]
families = set()
for sid in ids:
    policy = archive.load_policy(sid)
    families.add(policy.family)
    result = play_match({env_fn}, policy, RandomPolicy(), 2, seed=0, illegal_action="raise")
    assert result.n_games == 2
print(json.dumps({{"ids": ids, "families": sorted(families)}}))
"""


def reload_in_fresh_process(archive: SnapshotArchive, env_fn: str) -> dict[str, Any]:
    script = RELOAD.format(
        tests=str(Path(__file__).parent),
        module=Path(__file__).stem,
        env_fn=env_fn,
        path=str(archive.path),
    )
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


FAMILY = {
    "PPO": "actor_critic", "A2C": "actor_critic", "TRPO": "actor_critic",
    "MaskablePPO": "actor_critic", "DQN": "q_network", "QRDQN": "q_network", "ARS": "ars",
    "ARSLinear": "ars", "RecurrentPPO": "recurrent",
}  # fmt: skip


@pytest.mark.parametrize("runner", ["env", "vec"])
@pytest.mark.parametrize("name", list(DISCRETE))
def test_discrete_learner_self_plays_tictactoe_and_its_snapshots_reload_elsewhere(
    name, runner, tmp_path
):
    archive = selfplay_run(
        lambda env: discrete_model(name, env), tictactoe_v3.env, runner, tmp_path
    )
    assert len(archive) >= 3
    assert archive.cached_ids()  # snapshots were loaded to play the learner
    if not name.startswith("ARS"):  # ARS's callbacks carry no infos: no match records (yet)
        assert any(m.player_b.startswith("snapshot-") for m in archive.matches())
    if runner == "vec":  # one fresh process per learner is enough
        reloaded = reload_in_fresh_process(archive, "tictactoe_env")
        assert reloaded["families"] == [FAMILY[name]]
        assert reloaded["ids"] == [info.id for info in archive]


@pytest.mark.parametrize("name", list(BOX))
def test_box_learner_self_plays_a_continuous_game_and_its_snapshots_reload_elsewhere(
    name, tmp_path
):
    archive = selfplay_run(lambda env: box_model(name, env), ReachGame, "vec", tmp_path, 128)
    assert len(archive) >= 3
    reloaded = reload_in_fresh_process(archive, "ReachGame")
    assert reloaded["families"] == ["actor"]


@pytest.mark.parametrize("name", list(DISCRETE))
def test_discrete_learner_plays_in_the_serial_league(name, tmp_path):
    league = League(
        tictactoe_v3.env,
        SelfPlayLeague(save_every=64),
        lambda env: discrete_model(name, env),
        tmp_path / "league",
        chunk_steps=64,
        n_envs=2,
        seed=0,
    )
    result = league.run(128, backend="serial")
    (learner,) = result.learners
    assert learner.steps >= 128 and len(learner.snapshots) >= 2
    if not name.startswith("ARS"):  # ARS's callbacks carry no infos: no match records (yet)
        opponents = {m.player_b for m in league.archive.matches()}
        assert opponents & set(learner.snapshots)  # its snapshots played it, masked


# -- learning, not only plumbing: one short real run per family beats RandomPolicy -------------
def _score(model: Any, env_fn: Any, games: int = 100) -> float:
    from sp_wrappers import SB3Policy

    learner = SB3Policy(model, deterministic=True, policy_id="learner")
    result = play_match(env_fn, learner, RandomPolicy(), games, seed=123)
    wins = sum(1 for _, outcome in result.games if outcome == 1.0)
    losses = sum(1 for _, outcome in result.games if outcome == 0.0)
    return (wins - losses) / games


STRENGTH = {  # family -> (learner, arguments, learner steps: about twice what seeds 0-2 need)
    "actor_critic": ("MaskablePPO", {"n_steps": 256, "batch_size": 64}, 6_000),
    "q_network": (
        "DQN",
        {"learning_starts": 500, "buffer_size": 20_000, "exploration_fraction": 0.3,
         "train_freq": 4, "target_update_interval": 500, "learning_rate": 5e-4},
        15_000,
    ),
    "recurrent": (
        "RecurrentPPO",
        {"n_steps": 256, "batch_size": 128, "policy_kwargs": {"lstm_hidden_size": 32}},
        6_000,
    ),
    "ars": ("ARSLinear", {"n_delta": 4, "n_eval_episodes": 4}, 20_000),
}  # fmt: skip


@pytest.mark.learning
@pytest.mark.parametrize("family", list(STRENGTH))
def test_a_short_selfplay_run_of_each_discrete_family_beats_random(family, tmp_path):
    name, kwargs, steps = STRENGTH[family]
    cls, policy, _ = DISCRETE[name]
    archive = SnapshotArchive(tmp_path / "archive")
    sampler = OpponentSampler(
        archive, latest_ratio=0.5, fixed_opponents=[(RandomPolicy(), 0.5)], seed=0
    )
    env = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4, opponent=sampler)
    model = cls(policy, env, seed=0, **kwargs)
    model.learn(steps, callback=SelfPlayCallback(archive, save_every=steps // 4))
    assert _score(model, tictactoe_v3.env) > 0.2  # wins minus losses, both seats


@pytest.mark.learning
def test_a_short_selfplay_run_of_a_box_actor_beats_random(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    sampler = OpponentSampler(
        archive, latest_ratio=0.5, fixed_opponents=[(RandomPolicy(), 0.5)], seed=0
    )
    env = SelfPlayVecEnv(ReachGame, n_envs=2, opponent=sampler)
    model = sb3.SAC("MlpPolicy", env, learning_starts=200, buffer_size=5000, seed=0)
    model.learn(900, callback=SelfPlayCallback(archive, save_every=300))  # 800 scored >= 0.78
    assert _score(model, ReachGame) > 0.5
