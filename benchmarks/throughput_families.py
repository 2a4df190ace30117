"""The ``families`` section of ``throughput.py``: off-policy learners against snapshots.

Run:  python benchmarks/throughput.py --only families [--family-timesteps 2048 --rounds 3]

Two rows, each "self-play against snapshots as a share of the same learner against
``RandomPolicy``" (target >= 0.95), learner steps per second of ``model.learn``, 8 env copies:

- DQN on Connect Four (SB3 defaults but ``learning_starts=256``): Q-network opponents, the
  greedy legal move under the mask, one batched forward pass per policy per step;
- SAC on :class:`ReachGame`, a small continuous two-player game defined here (both seats see a
  target and move a ``Box(-1, 1)`` action towards it): squashed-Gaussian opponents.

The snapshot side draws from an archive of ``--snapshots`` snapshots of the learner
(``OpponentSampler(window=10, latest_ratio=0.5, swap_every=1)``), the latest weights sent after
every rollout as ``SelfPlayCallback`` does. Configs are warmed up, run interleaved, best of
``--rounds``.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.classic import connect_four_v3
from stable_baselines3 import DQN, SAC
from stable_baselines3.common.callbacks import BaseCallback

from sp_wrappers import OpponentSampler, RandomPolicy, SelfPlayVecEnv, SnapshotArchive
from sp_wrappers.core.weights import state_arrays

__all__ = ["ReachGame", "families"]


class ReachGame(ParallelEnv):
    """Both players see a target in [-1, 1] and move towards it, 4 rounds a game; each round the
    closer one gets +1 and the other -1."""

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
        self._round, self._target = 0, float(self._rng.uniform(-1, 1))
        return self._observe(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple:
        d0 = abs(float(np.asarray(actions["p0"]).reshape(-1)[0]) - self._target)
        d1 = abs(float(np.asarray(actions["p1"]).reshape(-1)[0]) - self._target)
        r0 = float(np.sign(d1 - d0))
        self._round += 1
        self._target = float(self._rng.uniform(-1, 1))
        done = self._round >= 4
        obs = self._observe()
        infos = {a: {} for a in self.agents}
        flags, truncated = {a: done for a in self.agents}, {a: False for a in self.agents}
        if done:
            self.agents = []
        return obs, {"p0": r0, "p1": -r0}, flags, truncated, infos


class _SyncLatest(BaseCallback):
    """Send the learner's weights to the env's samplers after every rollout."""

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        state = state_arrays(self.model.policy)  # as SelfPlayCallback sends them
        self.training_env.env_method("sync_latest_weights", self.num_timesteps + 1, state)


ROWS = {  # row -> (game, model factory)
    "DQN, Connect Four": (
        connect_four_v3.env,
        lambda env: DQN("MlpPolicy", env, learning_starts=256, seed=0),
    ),
    "SAC, ReachGame (Box)": (
        ReachGame,
        lambda env: SAC("MlpPolicy", env, learning_starts=256, seed=0),
    ),
}


def _runner(game: Any, make_model: Any, opponent: Any, sync: bool, n: int) -> Any:
    env = SelfPlayVecEnv(game, n, opponent=opponent)
    model = make_model(env)
    callback = _SyncLatest() if sync else None
    env.seed(0)
    model.learn(512, callback=callback)  # warm-up, past learning_starts

    def learn(steps: int) -> None:
        model.learn(steps, callback=callback, reset_num_timesteps=False)

    return learn, model


def families(args: argparse.Namespace, clock: Any = time.perf_counter) -> None:
    """Print the DQN and SAC rows (see the module docstring)."""
    n = 8
    steps = getattr(args, "family_timesteps", 2048)
    print(f"\nOff-policy learners, {n} envs, learner steps/s (best of {args.rounds} rounds)")
    print(f"{'learner, game':<24} {'(a) snap':>9} {'(b) rand':>9} {'a/b':>6}")
    for row, (game, make_model) in ROWS.items():
        workdir = Path(tempfile.mkdtemp(prefix="sp-families-"))
        rand, model = _runner(game, make_model, RandomPolicy(), False, n)
        archive = SnapshotArchive(workdir / "archive")
        params = list(model.policy.parameters())
        for k in range(args.snapshots):
            with torch.no_grad():  # distinct weights per snapshot, as in a real run
                for p in params:
                    p.add_(0.01 * torch.randn_like(p))
            archive.save(model, step=k * 1000)
        sampler = OpponentSampler(archive, window=10, latest_ratio=0.5, swap_every=1, seed=0)
        snap, _ = _runner(game, make_model, sampler, True, n)
        best = {"a": 0.0, "b": 0.0}
        for _ in range(args.rounds):
            for key, run in (("a", snap), ("b", rand)):
                gc.collect()
                start = clock()
                run(steps)
                best[key] = max(best[key], steps / (clock() - start))
        print(f"{row:<24} {best['a']:9.0f} {best['b']:9.0f} {best['a'] / best['b']:6.2f}")
    print("target: a/b >= 0.95")
