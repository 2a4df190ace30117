"""Self-play MaskablePPO on Connect Four, with PFSP opponents and a scripted bot in the mix.

Run:  python examples/connect_four_selfplay.py --timesteps 500000

Same three steps as the tic-tac-toe example (archive, sampler-backed env, callback), here with
prioritized fictitious self-play: snapshots the learner loses to are drawn more often. Prints the
Elo at each snapshot and the final record against RandomPolicy and alpha-beta search.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from pettingzoo.classic import connect_four_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv

from sp_wrappers import (
    AlphaBetaConnectFourPolicy,
    OpponentSampler,
    RandomPolicy,
    SB3Policy,
    SelfPlayCallback,
    SelfPlayEnv,
    SnapshotArchive,
    play_match,
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=500_000, help="learner steps")
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--save-every", type=int, default=50_000, help="learner steps")
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/connect_four_selfplay"))
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    archive = SnapshotArchive(args.out / "archive", max_snapshots=50)

    def make_env(rank: int) -> SelfPlayEnv:
        sampler = OpponentSampler(
            archive,
            window=20,
            latest_ratio=0.5,
            strategy="pfsp",  # favour the snapshots the learner still loses to
            fixed_opponents=[(AlphaBetaConnectFourPolicy(depth=1), 0.1)],
            seed=args.seed + rank,
        )
        return SelfPlayEnv(connect_four_v3.env(), learner="random", opponent=sampler)

    env = DummyVecEnv([lambda rank=rank: make_env(rank) for rank in range(args.n_envs)])
    env.seed(args.seed)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=512,
        batch_size=1024,
        n_epochs=5,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [256, 256]},
        seed=args.seed,
    )
    selfplay = SelfPlayCallback(archive, save_every=args.save_every, verbose=1)
    model.learn(args.timesteps, callback=selfplay)
    model.save(args.out / "model.zip")

    print("\nElo of each snapshot:")
    for info in archive.snapshots():
        print(
            f"  {info.id}  step {info.step:>9,d}  elo {info.ratings.get('elo', float('nan')):7.1f}"
        )

    learner = SB3Policy(model, deterministic=True, policy_id="learner")
    print(f"\nfinal learner, {args.eval_games} games each, seats alternating:")
    for opponent in (RandomPolicy(), AlphaBetaConnectFourPolicy(depth=2)):
        record = play_match(connect_four_v3.env, learner, opponent, args.eval_games, seed=args.seed)
        print(
            f"  vs {opponent.policy_id:14s} {record.wins:4d} wins {record.draws:4d} draws "
            f"{record.losses:4d} losses"
        )


if __name__ == "__main__":
    main()
