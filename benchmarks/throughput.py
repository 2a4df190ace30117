"""How fast does self-play train? Learner steps per second side by side; memory as archives grow.

Run (after ``pip install -e ".[masking,games]"``, or with ``PYTHONPATH=.`` from the repo root):

      python benchmarks/throughput.py                                   # full run (a few minutes)
      python benchmarks/throughput.py --timesteps 1024 --n-envs 1,8 --pong-timesteps 512  # quick
      python benchmarks/throughput.py --only light,wrapper              # issue #15's two figures

Connect Four, MaskablePPO (``n_steps * n_envs = 512`` per rollout, 4 epochs of 128-sample batches),
learner steps per second of ``model.learn`` (rollouts *and* updates), at each ``--n-envs``:

(a) ``SelfPlayVecEnv`` against snapshots: ``OpponentSampler(window=10, latest_ratio=0.5,
    swap_every=1 episode)`` over an archive of ``--snapshots`` snapshots, the latest weights sent
    to the sampler after every rollout (``env_method("sync_latest_weights", ...)``, as
    ``SelfPlayCallback`` does);
(b) the same env against ``RandomPolicy`` (the cost of the env without opponent inference);
(c) what users write today: a plain Gymnasium wrapper per game whose opponent (half the episodes
    the learning model, otherwise one of ten loaded snapshot models) calls ``model.predict`` on one
    observation at a time, in ``DummyVecEnv``;
(d) raw PettingZoo stepping with random legal actions (the env-work ceiling; one learner step =
    two moves).

Every config is warmed up (one rollout and update) before timing; configs run interleaved, each
``--rounds`` times (4 short rounds by default: on a shared machine one slow spell in a long round
moved a/b by several points between runs), and the best round is reported. ``--clock cpu`` times
with this process's CPU time instead of the wall clock (steadier on a machine shared with other
jobs; all of it runs in this process).

``light``: a lighter learner than the recipes (MaskablePPO ``n_steps=256, batch_size=256``, 8
envs), where opponent inference weighs more: snapshots as in (a), drawn per env copy
(``opponent_draw="per_env"``) and shared by all copies (``"shared"``), against ``RandomPolicy``.

``wrapper``: the wrapper's own cost, agent steps per second (every move of every seat) of 8
Connect Four copies, random legal learner actions: ``SelfPlayVecEnv`` against ``RandomPolicy``
against PettingZoo's own loop over 8 games (``env.last()``, then ``env.step``) and against a
leaner loop (``observe`` for the mask only, no reward read); random actions are drawn for all 8
games at once in both loops.

Then Pong (RAM) with and without ``num_workers``, and the resident memory after drawing opponents
from archives of 10 and of 200 snapshots, against the archive cache's bound. ``--only`` picks
sections: ``recipe`` (a-d), ``light``, ``wrapper``, ``pong``, ``memory``, ``families`` (DQN and
SAC against snapshots as a share of the same learner against ``RandomPolicy``: see
``throughput_families.py``).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from pettingzoo.classic import connect_four_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from sp_wrappers import OpponentSampler, RandomPolicy, SelfPlayVecEnv, SnapshotArchive
from sp_wrappers.core.weights import state_arrays

ROLLOUT = 512  # learner steps per rollout, all env copies together
SECTIONS = ("recipe", "light", "wrapper", "pong", "memory", "families")
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-envs", default="1,8,32", help="comma-separated env counts")
    parser.add_argument("--timesteps", type=int, default=4096, help="learner steps per round")
    parser.add_argument(
        "--rounds", type=int, default=4, help="interleaved rounds; the best is kept (noise)"
    )
    parser.add_argument("--snapshots", type=int, default=12, help="snapshots in the archive")
    parser.add_argument("--pong-timesteps", type=int, default=2048, help="0 skips Pong")
    parser.add_argument("--pong-envs", type=int, default=8)
    parser.add_argument("--pong-workers", type=int, default=2)
    parser.add_argument("--memory", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--memory-draws", type=int, default=2000, help="opponent draws per archive")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}"
    )
    parser.add_argument("--light-timesteps", type=int, default=4096, help="learner steps per round")
    parser.add_argument("--wrapper-steps", type=int, default=20000, help="agent steps per round")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument(
        "--family-timesteps", type=int, default=2048, help="learner steps per round (families)"
    )
    args = parser.parse_args()
    args.only = {name for name in args.only.split(",") if name}
    if args.only - set(SECTIONS):
        parser.error(f"--only takes sections from {SECTIONS}, got {sorted(args.only)}")
    return args


# -- (c) the approach users write today ----------------------------------------------------------
class PredictOpponentEnv(gym.Env):
    """Connect Four from a random seat; the opponent calls ``model.predict`` on one observation."""

    def __init__(self, learner_model: Any, snapshot_models: list[Any], seed: int) -> None:
        self.game = connect_four_v3.env()
        self.game.reset(seed=seed)
        self.observation_space = self.game.observation_space("player_0")["observation"]
        self.action_space = self.game.action_space("player_0")
        self.learner_model, self.snapshot_models = learner_model, snapshot_models
        self.rng = np.random.default_rng(seed)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.game.reset(seed=seed)
        self.seat = self.game.possible_agents[int(self.rng.integers(2))]
        latest = self.rng.random() < 0.5
        self.opponent = (
            self.learner_model
            if latest
            else self.snapshot_models[self.rng.integers(len(self.snapshot_models))]
        )
        self._play_opponent()
        return self.game.observe(self.seat)["observation"], {}

    def step(self, action: int):
        self.game.step(int(action))
        self._play_opponent()
        done = self.game.terminations[self.seat] or self.game.truncations[self.seat]
        reward = float(self.game._cumulative_rewards[self.seat])
        return self.game.observe(self.seat)["observation"], reward, done, False, {}

    def _play_opponent(self) -> None:
        game = self.game
        while game.agent_selection != self.seat and not game.terminations[self.seat]:
            obs = game.observe(game.agent_selection)
            action, _ = self.opponent.predict(
                obs["observation"], action_masks=obs["action_mask"], deterministic=False
            )
            game.step(int(action))

    def action_masks(self) -> np.ndarray:
        return self.game.observe(self.seat)["action_mask"].astype(bool)


class SyncLatest(BaseCallback):
    """Send the learner's weights to the env's samplers after every rollout."""

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        state = state_arrays(self.model.policy)  # as SelfPlayCallback sends them
        self.training_env.env_method("sync_latest_weights", self.num_timesteps + 1, state)


# -- setup -----------------------------------------------------------------------------------------
def new_model(env: Any, n_envs: int) -> MaskablePPO:
    return MaskablePPO(
        "MlpPolicy", env, n_steps=max(ROLLOUT // n_envs, 8), batch_size=128, n_epochs=4, seed=0
    )


def build(kind: str, n: int, archive: SnapshotArchive, snapshot_models: list[Any]) -> Any:
    """A warmed-up trainer (``learn(steps)`` callable) or stepper for one config."""
    if kind == "a":
        sampler = OpponentSampler(archive, window=10, latest_ratio=0.5, swap_every=1, seed=0)
        env = SelfPlayVecEnv(connect_four_v3.env, n, opponent=sampler)
        model = new_model(env, n)
        callback = SyncLatest()
    elif kind == "b":
        env = SelfPlayVecEnv(connect_four_v3.env, n, opponent=RandomPolicy())
        model, callback = new_model(env, n), None
    elif kind == "c":
        holder: list[Any] = []
        fns = [lambda i=i: PredictOpponentEnv(holder[0], snapshot_models, i) for i in range(n)]
        env = DummyVecEnv([_placeholder_env] * n)
        model = new_model(env, n)
        holder.append(model)
        model.set_env(DummyVecEnv(fns))
        callback = None
    else:
        return RawStepper(n)
    env.seed(0)

    def learn(steps: int) -> None:
        model.learn(steps, callback=callback, reset_num_timesteps=False)

    learn(ROLLOUT)  # warm-up: one rollout and update
    return learn


def _placeholder_env() -> gym.Env:
    """Spaces for building the (c) model before its envs (which need the model) exist."""
    game = connect_four_v3.env()
    env = gym.Env()
    env.observation_space = game.observation_space("player_0")["observation"]
    env.action_space = game.action_space("player_0")
    env.action_masks = lambda: np.ones(7, dtype=bool)
    return env


class RawStepper:
    """(d): ``n`` PettingZoo games stepped with random legal actions."""

    def __init__(self, n: int) -> None:
        self.games = [connect_four_v3.env() for _ in range(n)]
        for i, game in enumerate(self.games):
            game.reset(seed=i)
        self.rng = np.random.default_rng(0)
        self(ROLLOUT)

    def __call__(self, steps: int) -> None:
        moves = 0
        while moves < 2 * steps:
            for game in self.games:
                agent = game.agent_selection
                if game.terminations[agent] or game.truncations[agent]:
                    game.reset()
                    continue
                legal = np.flatnonzero(game.observe(agent)["action_mask"])
                game.step(int(self.rng.choice(legal)))
                moves += 1


def timed(run: Any, steps: int) -> float:
    gc.collect()
    start = clock()
    done = run(steps)  # a stepper may report the steps it made (whole vector steps)
    return (done if isinstance(done, int) else steps) / (clock() - start)


def make_archive(path: Path, n_snapshots: int, model: Any) -> SnapshotArchive:
    archive = SnapshotArchive(path)
    params = list(model.policy.parameters())
    for step in range(n_snapshots):
        with torch.no_grad():  # distinct weights per snapshot, as in a real run
            for p in params:
                p.add_(0.01 * torch.randn_like(p))
        archive.save(model, step=step * 1000)
    return archive


def rss_mib() -> float:
    """Resident memory in MiB, after handing freed heap pages back to the OS (glibc), so that
    memory the allocator merely keeps around does not read as memory in use."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: read RSS as it is
        pass
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- the story ---------------------------------------------------------------------------------
def main() -> None:
    global clock
    args = parse_args()
    clock = CLOCKS[args.clock]
    sizes = [int(n) for n in args.n_envs.split(",") if n]  # --n-envs "": memory and Pong only
    if "recipe" not in args.only:
        sizes = []
    workdir = Path(tempfile.mkdtemp(prefix="sp-throughput-"))
    template = new_model(SelfPlayVecEnv(connect_four_v3.env, 1), 1)
    archive = make_archive(workdir / "archive", args.snapshots, template)
    snapshot_models = []
    for k in range(10 if sizes else 0):  # (c)'s opponents
        template.save(workdir / f"model{k}.zip")
        snapshot_models.append(MaskablePPO.load(workdir / f"model{k}.zip", device="cpu"))
    print(
        f"cpus={os.cpu_count()} torch={torch.__version__} archive={len(archive)} snapshots "
        f"clock={args.clock} load average={' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    # torch threads: one config with the default and with one thread
    default_threads = torch.get_num_threads()
    if sizes:
        n = 8 if 8 in sizes else sizes[-1]
        run = build("a", n, archive, snapshot_models)
        with_default = timed(run, args.timesteps // 2)
        torch.set_num_threads(1)
        with_one = timed(run, args.timesteps // 2)
        print(
            f"torch threads, (a) at n_envs={n}: {default_threads} threads {with_default:7.0f} "
            f"steps/s | 1 thread {with_one:7.0f} steps/s  (the rest uses 1 thread)"
        )
    torch.set_num_threads(1)

    configs = {
        (kind, n): build(kind, n, archive, snapshot_models) for n in sizes for kind in "abcd"
    }
    best: dict[tuple[str, int], float] = {}
    for _ in range(args.rounds):
        for key, run in configs.items():  # interleaved: every config once per round
            best[key] = max(best.get(key, 0.0), timed(run, args.timesteps))

    if sizes:
        print(f"\nConnect Four, MaskablePPO, learner steps/s (best of {args.rounds} rounds)")
        print(
            f"{'n_envs':>6} {'(a) snap':>9} {'(b) rand':>9} {'(c) pred':>9} {'(d) raw':>9}"
            f" {'a/b':>6} {'a/c':>6}"
        )
        for n in sizes:
            a, b, c, d = (best[(k, n)] for k in "abcd")
            print(f"{n:>6} {a:9.0f} {b:9.0f} {c:9.0f} {d:9.0f} {a / b:6.2f} {a / c:6.2f}")
        print("targets: a/b >= 0.90 at 8 and 32 envs, a/c >= 1.7 at 8 envs")

    if "light" in args.only:
        light(args, archive)
    if "wrapper" in args.only:
        wrapper(args)
    if args.pong_timesteps and "pong" in args.only:
        pong(args)
    if args.memory and "memory" in args.only:
        memory(args, workdir, template)
    if "families" in args.only:
        from throughput_families import families  # benchmarks/ is on sys.path as a script

        families(args, clock)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def light(args: argparse.Namespace, archive: SnapshotArchive) -> None:
    """Issue #15's lighter learner: snapshots drawn every episode, per copy or shared."""
    n, rollout = 8, 256 * 8
    runs = {}
    for kind in ("per_env", "shared", "random"):
        if kind == "random":
            env = SelfPlayVecEnv(connect_four_v3.env, n, opponent=RandomPolicy())
        else:
            sampler = OpponentSampler(archive, window=10, latest_ratio=0.5, swap_every=1, seed=0)
            env = SelfPlayVecEnv(connect_four_v3.env, n, opponent=sampler, opponent_draw=kind)
        model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=256, seed=0)
        callback = None if kind == "random" else SyncLatest()
        env.seed(0)
        model.learn(rollout, callback=callback)  # warm-up: one rollout and update
        runs[kind] = lambda s, m=model, c=callback: m.learn(
            s, callback=c, reset_num_timesteps=False
        )
    best = dict.fromkeys(runs, 0.0)
    for _ in range(args.rounds):
        for kind, run in runs.items():
            best[kind] = max(best[kind], timed(run, args.light_timesteps))
    per_env, shared, rand = best["per_env"], best["shared"], best["random"]
    print(
        f"\nLight learner (MaskablePPO n_steps=256 batch_size=256, Connect Four, 8 envs; "
        f"snapshots: window 10, latest_ratio 0.5, a new draw every episode), learner steps/s, "
        f"best of {args.rounds}"
    )
    print(f"  snapshots, opponent_draw='per_env': {per_env:7.0f}   a/b {per_env / rand:.2f}")
    print(f"  snapshots, opponent_draw='shared' : {shared:7.0f}   a/b {shared / rand:.2f}")
    print(f"  RandomPolicy (b)                  : {rand:7.0f}")
    print("  target: a/b >= 0.95 (issue #15)")


class CountingRandom(RandomPolicy):
    """``RandomPolicy`` that counts the moves it makes (the opponents' agent steps)."""

    moves = 0

    def act(self, observations: Any, action_masks: Any, rng: np.random.Generator) -> np.ndarray:
        CountingRandom.moves += len(action_masks)
        return super().act(observations, action_masks, rng)


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> list[int]:
    """One uniformly random legal action per row, drawn for all rows at once."""
    scores = rng.random(masks.shape)
    scores[~masks] = -1.0
    return scores.argmax(axis=1).tolist()


class WrapperStepper:
    """``SelfPlayVecEnv`` against ``RandomPolicy``, random legal learner actions."""

    def __init__(self, n: int) -> None:
        self.env = SelfPlayVecEnv(connect_four_v3.env, n, opponent=CountingRandom())
        self.env.seed(0)
        self.env.reset()
        self.rng = np.random.default_rng(0)
        self(2000)

    def __call__(self, steps: int) -> int:
        env, n = self.env, self.env.num_envs
        CountingRandom.moves, learner_moves = 0, 0
        while learner_moves + CountingRandom.moves < steps:
            env.step(np.array(random_legal(env.action_masks(), self.rng)))
            learner_moves += n
        return learner_moves + CountingRandom.moves


class PettingZooStepper:
    """``n`` games stepped in turn with random legal actions: PettingZoo's own loop
    (``env.last()``, reset when the agent to act is done) or, ``lean``, ``observe`` only."""

    def __init__(self, n: int, lean: bool) -> None:
        self.games = [connect_four_v3.env() for _ in range(n)]
        for i, game in enumerate(self.games):
            game.reset(seed=i)
        self.lean = lean
        self.rng = np.random.default_rng(0)
        self(2000)

    def __call__(self, steps: int) -> int:
        moves = 0
        while moves < steps:
            masks = []
            for game in self.games:
                if self.lean:
                    agent = game.agent_selection
                    if game.terminations[agent] or game.truncations[agent]:
                        game.reset()
                    observation = game.observe(game.agent_selection)
                else:
                    observation, _, terminated, truncated, _ = game.last()
                    if terminated or truncated:
                        game.reset()
                        observation, _, _, _, _ = game.last()
                masks.append(observation["action_mask"])
            actions = random_legal(np.array(masks, dtype=bool), self.rng)
            for game, action in zip(self.games, actions, strict=True):
                game.step(action)
            moves += len(self.games)
        return moves


def wrapper(args: argparse.Namespace) -> None:
    """The wrapper's own cost: agent steps/s of SelfPlayVecEnv against raw PettingZoo loops."""
    runs = {
        "wrapper": WrapperStepper(8),
        "last": PettingZooStepper(8, lean=False),
        "lean": PettingZooStepper(8, lean=True),
    }
    best = dict.fromkeys(runs, 0.0)
    for _ in range(args.rounds):
        for name, run in runs.items():
            best[name] = max(best[name], timed(run, args.wrapper_steps))
    w = best["wrapper"]
    print(
        f"\nWrapper cost: Connect Four, 8 copies, random legal actions, agent steps/s "
        f"(both seats' moves), best of {args.rounds}"
    )
    print(f"  SelfPlayVecEnv vs RandomPolicy       : {w:7.0f}")
    last, lean = best["last"], best["lean"]
    print(f"  PettingZoo loop (last, step)         : {last:7.0f}   ratio {w / last:.2f}")
    print(f"  lean loop (observe, step; no reward) : {lean:7.0f}   ratio {w / lean:.2f}")
    print("  target: SelfPlayVecEnv >= 0.90 of the PettingZoo loop (issue #15)")


def pong(args: argparse.Namespace) -> None:
    """Pong (RAM), PPO against a frozen copy of itself, games in this process or in workers."""
    import ale_py
    from pettingzoo.atari import pong_v3
    from stable_baselines3 import PPO

    from sp_wrappers import SB3Policy

    roms = os.path.join(os.path.dirname(ale_py.__file__), "roms")
    kwargs = {"obs_type": "ram", "auto_rom_install_path": roms, "max_cycles": 1000}
    n = args.pong_envs
    runs = {}
    for workers in (0, args.pong_workers):
        env = SelfPlayVecEnv(pong_v3.env, n, env_kwargs=kwargs, num_workers=workers)
        model = PPO("MlpPolicy", env, n_steps=max(ROLLOUT // n, 8), batch_size=128, n_epochs=4)
        env.set_attr("opponent_source", SB3Policy(model, policy_id="frozen"))
        env.seed(0)
        model.learn(ROLLOUT)
        runs[workers] = (env, model)
    rates = {w: 0.0 for w in runs}
    for _ in range(args.rounds):
        for workers, (_, model) in runs.items():
            run = lambda s, m=model: m.learn(s, reset_num_timesteps=False)  # noqa: E731
            rates[workers] = max(rates[workers], timed(run, args.pong_timesteps))
    print(f"\nPong (RAM), PPO, n_envs={n}, learner steps/s (best of {args.rounds})")
    for workers, rate in rates.items():
        print(f"  num_workers={workers}: {rate:7.0f}")
    for env, _ in runs.values():
        env.close()


def memory(args: argparse.Namespace, workdir: Path, template: Any) -> None:
    """RSS after many opponent draws from archives of 10 and of 200 snapshots."""
    per_policy = sum(p.numel() * p.element_size() for p in template.policy.parameters()) / 2**20
    archives = {n: make_archive(workdir / f"memory{n}", n, template) for n in (10, 200)}
    gc.collect()
    before = rss_mib()  # one policy's real footprint: load 20, then drop them from the cache
    held = [archives[200].load_policy(info.id) for info in archives[200].snapshots()[:20]]
    archives[200]._cache.clear()
    gc.collect()
    footprint = (rss_mib() - before) / len(held)
    del held
    gc.collect()
    baseline = rss_mib()
    results = {}
    for count, archive in archives.items():
        sampler = OpponentSampler(archive, window=None, latest_ratio=0.0, seed=0)
        env = SelfPlayVecEnv(connect_four_v3.env, 8, opponent=sampler)
        env.seed(0)
        env.reset()
        rng = np.random.default_rng(0)
        drawn = 0
        while drawn < args.memory_draws:  # play games: every episode draws new opponents
            masks = env.action_masks()
            _, _, dones, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            drawn += int(dones.sum())
        env.close()
        gc.collect()
        results[count] = (rss_mib(), len(archive.cached_ids()), archive.cache_size)
    (rss10, cached10, bound), (rss200, cached200, _) = results[10], results[200]
    print(f"\nMemory after {args.memory_draws} opponent draws (8 envs, uniform over the archive)")
    print(f"  before drawing: RSS {baseline:7.1f} MiB (both archives open)")
    print(f"  10 snapshots  : RSS {rss10:7.1f} MiB, {cached10} policies cached")
    print(f"  200 snapshots : RSS {rss200:7.1f} MiB, {cached200} policies cached")
    print(
        f"  difference 200 vs 10: {rss200 - rss10:+.1f} MiB; cache bound {bound} policies x "
        f"{footprint:.2f} MiB measured per loaded policy ({per_policy:.3f} MiB of it weights) = "
        f"{bound * footprint:.1f} MiB; without the bound, 200 policies would take about "
        f"{200 * footprint:.0f} MiB"
    )


if __name__ == "__main__":
    main()
