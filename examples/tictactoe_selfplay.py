"""Self-play MaskablePPO on tic-tac-toe: the learner trains against frozen snapshots of itself.

Run:  python examples/tictactoe_selfplay.py --timesteps 300000

Prints the Elo of each snapshot as training goes, then the final learner's record against
``RandomPolicy`` and against a perfect (minimax) player from every first move, in both seats
(a deterministic learner against a deterministic player replays one game per opening, so the
record counts distinct games, not one game many times).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import DummyVecEnv

from sp_wrappers import (
    OpponentSampler,
    PerfectTicTacToePolicy,
    RandomOpenings,
    RandomPolicy,
    SB3Policy,
    SelfPlayCallback,
    SelfPlayEnv,
    SnapshotArchive,
    legal_openings,
    play_openings,
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=300_000, help="learner steps")
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--save-every", type=int, default=25_000, help="learner steps")
    parser.add_argument(
        "--eval-games", type=int, default=180, help="games per opponent (a multiple of 18)"
    )
    parser.add_argument(
        "--random-openings",
        type=float,
        default=0.5,
        help="share of training games that start from a random first move (0 turns it off)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/tictactoe_selfplay"))
    return parser.parse_args()


class PrintElo(BaseCallback):
    """Prints one line per saved snapshot: step, snapshot id, learner Elo, recent win rate."""

    def __init__(self, selfplay: SelfPlayCallback) -> None:
        super().__init__()
        self.selfplay = selfplay
        self.printed = 0
        self.start = time.time()

    def _on_step(self) -> bool:
        if self.selfplay.snapshots_saved > self.printed:
            self.printed = self.selfplay.snapshots_saved
            newest = self.selfplay.archive.latest()
            print(
                f"{self.num_timesteps:>9,d} steps  {newest.id}  "
                f"elo {self.selfplay.elo.rating('learner'):7.1f}  "
                f"{time.time() - self.start:5.0f}s"
            )
        return True


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)  # many small forward passes: one thread is fastest on 2 cores
    archive = SnapshotArchive(args.out / "archive")

    def make_env(rank: int) -> SelfPlayEnv:
        sampler = OpponentSampler(
            archive,
            window=None,  # every snapshot stays eligible: tic-tac-toe runs keep few of them
            latest_ratio=0.5,
            fixed_opponents=[(RandomPolicy(), 0.2)],  # never forget how to beat a random player
            seed=args.seed + rank,
        )
        game = tictactoe_v3.env()
        if args.random_openings > 0:  # exploring starts: positions after every first move
            game = RandomOpenings(game, plies=1, probability=args.random_openings)
        return SelfPlayEnv(game, learner="random", opponent=sampler)

    env = DummyVecEnv([lambda rank=rank: make_env(rank) for rank in range(args.n_envs)])
    env.seed(args.seed)
    model = MaskablePPO(  # the tic-tac-toe recipe of `sp-wrappers train` (sp_wrappers.runs.recipes)
        "MlpPolicy",
        env,
        n_steps=256,
        batch_size=256,
        n_epochs=10,
        learning_rate=lambda progress: 1e-3 * progress,  # linear decay to 0
        ent_coef=0.005,
        gamma=0.99,
        policy_kwargs={"net_arch": [128, 128]},
        seed=args.seed,
    )
    selfplay = SelfPlayCallback(archive, save_every=args.save_every, fit_every=args.save_every)
    print(f"self-play on tic-tac-toe for {args.timesteps:,d} steps; archive: {archive.path}")
    model.learn(args.timesteps, callback=CallbackList([selfplay, PrintElo(selfplay)]))
    model.save(args.out / "model.zip")

    result = selfplay.fit_ratings()
    if result is not None:
        print("\nBradley-Terry ratings of the snapshots (fit over every recorded match):")
        for info in archive.snapshots():
            if info.id in result.ratings:
                low, high = result.intervals[info.id]
                print(
                    f"  {info.id}  step {info.step:>9,d}  {result.ratings[info.id]:7.1f}"
                    f"  [{low:7.1f}, {high:7.1f}]"
                )

    learner = SB3Policy(model, deterministic=True, policy_id="learner")
    openings = legal_openings(tictactoe_v3.env, plies=1)  # every first move
    repeats = max(1, args.eval_games // (2 * len(openings)))
    print(f"\nfinal learner from each of the {len(openings)} first moves, both seats:")
    for opponent in (RandomPolicy(), PerfectTicTacToePolicy()):
        record = play_openings(
            tictactoe_v3.env, learner, opponent, openings, repeats=repeats, seed=args.seed
        )
        wins, draws, losses = record.wdl()
        print(
            f"  vs {opponent.policy_id:8s} {wins:4d} wins {draws:4d} draws {losses:4d} losses"
            f"  ({record.distinct_games()} distinct games of {record.n_games})"
        )


if __name__ == "__main__":
    main()
