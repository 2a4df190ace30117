"""Plain self-play against novelty search over k-opponent outcome vectors, on Connect Four.

Run:  python examples/novelty_selfplay.py --timesteps 60000

1. A short warm-up of plain self-play fills an archive with a few snapshots.
2. Two branches continue from the warm-up model for the same number of learner steps:
   (a) plain self-play (OpponentSampler + SelfPlayCallback);
   (b) every rollout plays k snapshots at once (KOpponentRollouts), and the learner is paid, on top
       of the game's reward, for an outcome vector unlike those of earlier rollouts
       (novelty_reward).
3. The outcome vectors of (b) are printed as they come, and at the end both branches' snapshots are
   compared: how far apart their strategies are (mean total-variation distance between their
   action distributions over the same positions).
"""

from __future__ import annotations

import argparse
import itertools
import shutil
from pathlib import Path

import numpy as np
import torch
from pettingzoo.classic import connect_four_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import CallbackList

from sp_wrappers import (
    KOpponentRollouts,
    OpponentSampler,
    SelfPlayCallback,
    SnapshotArchive,
    make_selfplay_vec_env,
    novelty_reward,
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=60_000, help="learner steps per branch")
    parser.add_argument("--warmup", type=int, default=20_000, help="learner steps of warm-up")
    parser.add_argument("--k", type=int, default=4, help="opponents per rollout")
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--novelty-scale", type=float, default=1.0)
    parser.add_argument("--positions", type=int, default=500, help="positions for the distance")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/novelty_selfplay"))
    return parser.parse_args()


def new_model(venv, seed: int) -> MaskablePPO:
    return MaskablePPO(
        "MlpPolicy", venv, n_steps=128, batch_size=256, ent_coef=0.01, seed=seed, verbose=0
    )


def warm_up(args: argparse.Namespace) -> Path:
    """Plain self-play until the archive holds k + 1 snapshots."""
    archive = SnapshotArchive(args.out / "warmup" / "archive")
    sampler = OpponentSampler(archive, latest_ratio=0.5, seed=args.seed)
    venv = make_selfplay_vec_env(connect_four_v3.env, args.n_envs, args.seed, opponent=sampler)
    model = new_model(venv, args.seed)
    every = max(args.warmup // args.k, args.n_envs * 128)
    model.learn(args.warmup, callback=SelfPlayCallback(archive, save_every=every))
    model.save(args.out / "warmup" / "model.zip")
    print(f"warm-up: {len(archive)} snapshots after {model.num_timesteps:,} steps")
    return args.out / "warmup"


def branch(args: argparse.Namespace, warm: Path, novelty: bool) -> tuple[SnapshotArchive, list]:
    """Continue from the warm-up model; returns the branch's archive and its new snapshots."""
    name = "novelty" if novelty else "plain"
    root = args.out / name
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(warm, root)
    archive = SnapshotArchive(root / "archive")
    first_new = len(archive)
    sampler = OpponentSampler(archive, latest_ratio=0.5, seed=args.seed)
    venv = make_selfplay_vec_env(connect_four_v3.env, args.n_envs, args.seed, opponent=sampler)
    model = MaskablePPO.load(root / "model.zip", env=venv)
    callbacks = [SelfPlayCallback(archive, save_every=max(args.timesteps // 6, 1))]
    if novelty:
        callbacks.append(
            KOpponentRollouts(
                archive,
                k=args.k,
                reward_fn=novelty_reward(k_nearest=5, scale=args.novelty_scale),
                mode="add",  # the game's reward stays; novelty comes on top
                window=2 * args.k,
                seed=args.seed,
                verbose=1,
            )
        )
    print(f"\n== {name}: {args.timesteps:,} learner steps ==")
    model.learn(args.timesteps, callback=CallbackList(callbacks), reset_num_timesteps=False)
    return archive, [info.id for info in archive.snapshots()[first_new:]]


def random_positions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move, from games of random moves."""
    rng = np.random.default_rng(seed)
    env = connect_four_v3.env()
    observations, masks = [], []
    while len(observations) < n:
        env.reset(seed=int(rng.integers(1 << 30)))
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                break
            observations.append(obs["observation"])
            masks.append(obs["action_mask"].astype(bool))
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return np.array(observations[:n]), np.array(masks[:n])


def action_probabilities(archive: SnapshotArchive, snapshot_id: str, obs, masks) -> np.ndarray:
    policy = archive.load_policy(snapshot_id).policy
    with torch.no_grad():
        tensor = torch.as_tensor(obs, dtype=torch.float32)
        distribution = policy.get_distribution(tensor, action_masks=masks)
        return distribution.distribution.probs.numpy()


def strategy_spread(archive: SnapshotArchive, ids: list, obs, masks) -> float:
    """Mean total-variation distance between the snapshots' action distributions."""
    probs = [action_probabilities(archive, i, obs, masks) for i in ids]
    pairs = list(itertools.combinations(probs, 2))
    if not pairs:
        return float("nan")
    return float(np.mean([0.5 * np.abs(p - q).sum(axis=1).mean() for p, q in pairs]))


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    warm = warm_up(args)
    plain = branch(args, warm, novelty=False)
    novel = branch(args, warm, novelty=True)
    obs, masks = random_positions(args.positions, args.seed)
    print("\nHow far apart each branch's new snapshots play (mean total-variation distance)")
    for name, (archive, ids) in (("plain self-play", plain), ("novelty reward", novel)):
        spread = strategy_spread(archive, ids, obs, masks)
        print(f"  {name:16s} {len(ids)} snapshots  distance {spread:.3f}")


if __name__ == "__main__":
    main()
