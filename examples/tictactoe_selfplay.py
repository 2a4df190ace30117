"""Self-play MaskablePPO on tic-tac-toe that ends unbeatable, proved by walking the whole game.

Run:  python examples/tictactoe_selfplay.py --seed 0

The learner plays only itself: its frozen snapshots, its latest weights and, in two games of
five, ``RandomPolicy`` (whose blunders lead it into the positions a perfect opponent never shows
it); no minimax or other search takes part in training. Two kinds of exploration make it see every
position a perfect opponent could steer it into:

- random openings: each game starts after 0 to 3 random moves (a quarter of the games each), so
  the learner meets the openings its own first-player policy never plays;
- symmetries: each episode is shown in one of the board's 8 rotations and mirrors, so what it learns
  in one corner holds in the others.

Every 20,000 steps the exact walk of the game tree checks the greedy learner, and training stops
at the first check it passes (unbeatable in both seats, no value-losing position): the check only
decides when to stop, it never gives the learner a target (``--no-stop`` trains the whole budget).

After training, the exact walk of the game tree (``exploitability``: every line any opponent can
choose, the learner answering with its greedy move) prints the worst outcome an opponent can force
in each seat with the line that forces it, the positions where the learner throws value away, and
NashConv of its greedy policy; then its record against ``RandomPolicy`` and the perfect (minimax)
player from every first move, in both seats. The last line says whether the model is unbeatable.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from sp_wrappers import (
    ExploitabilityCallback,
    OpponentSampler,
    PerfectTicTacToePolicy,
    RandomOpenings,
    RandomPolicy,
    SelfPlayCallback,
    SelfPlayVecEnv,
    SnapshotArchive,
    legal_openings,
    play_openings,
)
from sp_wrappers.evaluation.exploitability import exploitability


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timesteps", type=int, default=300_000, help="training budget, in learner steps"
    )
    parser.add_argument("--n-envs", type=int, default=8, help="game copies stepped together")
    parser.add_argument("--save-every", type=int, default=20_000, help="learner steps")
    parser.add_argument(
        "--check-every", type=int, default=20_000, help="learner steps between exact checks"
    )
    parser.add_argument(
        "--no-stop", action="store_true", help="train the whole budget, even once unbeatable"
    )
    parser.add_argument(
        "--eval-games", type=int, default=180, help="games per opponent (a multiple of 18)"
    )
    parser.add_argument("--out", type=Path, default=Path("runs/tictactoe_selfplay"))
    return parser.parse_args(argv)


def make_game() -> Any:
    """Tic-tac-toe starting after 0, 1, 2 or 3 random moves (a quarter of the games each)."""
    return RandomOpenings(tictactoe_v3.env(), plies=(0, 3))


class PrintElo(BaseCallback):
    """Prints one line per saved snapshot: step, snapshot id, learner Elo, seconds so far."""

    def __init__(self, selfplay: SelfPlayCallback) -> None:
        super().__init__()
        self.selfplay = selfplay
        self.printed = 0
        self.start = time.perf_counter()

    def _on_step(self) -> bool:
        if self.selfplay.snapshots_saved > self.printed:
            self.printed = self.selfplay.snapshots_saved
            print(
                f"{self.num_timesteps:>9,d} steps  {self.selfplay.archive.latest().id}  "
                f"elo {self.selfplay.elo.rating('learner'):7.1f}  "
                f"{time.perf_counter() - self.start:5.0f}s"
            )
        return True


def train(
    args: argparse.Namespace, callbacks: list[BaseCallback] | None = None
) -> tuple[MaskablePPO, float]:
    """Self-play training (``callbacks``: more SB3 callbacks, as the benchmark's probe);
    returns the model and the training time in seconds."""
    torch.set_num_threads(1)  # many small forward passes: one thread is fastest on 2 cores
    archive = SnapshotArchive(args.out / "archive")
    sampler = OpponentSampler(
        archive,
        window=None,  # every snapshot stays eligible: tic-tac-toe runs keep few of them
        latest_ratio=0.5,  # half the other games against the learner's latest weights
        fixed_opponents=[(RandomPolicy(), 0.4)],  # blunders: the positions perfect play hides
        seed=args.seed,
    )
    env = SelfPlayVecEnv(  # one VecEnv, each copy drawing its own opponents and views
        make_game, n_envs=args.n_envs, learner="random", opponent=sampler, symmetries="auto"
    )
    env.seed(args.seed)
    model = MaskablePPO(
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
    check = ExploitabilityCallback(  # the exact walk: when to stop, never what to learn
        tictactoe_v3.env,
        every=args.check_every,
        stop_below=None if args.no_stop else 0.0,
        eval_at_start=False,
    )
    print(f"self-play on tic-tac-toe for {args.timesteps:,d} steps; archive: {archive.path}")
    start = time.perf_counter()
    callback = CallbackList([selfplay, PrintElo(selfplay), check, *(callbacks or [])])
    model.learn(args.timesteps, callback=callback)
    seconds = time.perf_counter() - start
    env.close()
    model.save(args.out / "model.zip")
    if check.stopped_at is not None:
        print(f"stopped at step {check.stopped_at:,d}: the exact check passed")
    print(f"trained in {seconds:.0f}s ({model.num_timesteps / seconds:,.0f} steps/s)")
    return model, seconds


def strength(model: MaskablePPO, args: argparse.Namespace) -> dict[str, Any]:
    """The exact walk of the greedy policy, then its record from every first move."""
    report = exploitability(model, tictactoe_v3.env(), deterministic=True)
    openings = legal_openings(tictactoe_v3.env, plies=1)  # every first move
    repeats = max(1, args.eval_games // (2 * len(openings)))
    records = {}
    for opponent in (RandomPolicy(), PerfectTicTacToePolicy()):
        record = play_openings(
            tictactoe_v3.env, model, opponent, openings, repeats=repeats, seed=args.seed
        )
        records[opponent.policy_id] = (record.wdl(), record.distinct_games(), record.n_games)
    return {"report": report, "records": records}


def main() -> None:
    args = parse_args()
    model, _ = train(args)
    result = strength(model, args)
    report = result["report"]

    print(f"\nexact walk of the greedy policy ({report.states:,d} positions):")
    for seat, line in report.forced.items():
        best = report.game_values[seat]
        verdict = "as good as perfect play" if line.outcome >= best else "BEATEN"
        moves = ", ".join(f"{player} {action}" for player, action in line.moves) or "-"
        print(f"  as {seat}: an opponent can hold it to {line.outcome:+g} ({verdict}): {moves}")
    print(f"  value-losing positions: {len(report.value_losses)}")
    for loss in report.value_losses[:3]:  # the first few, each with its board
        print("    " + str(loss).replace("\n", "\n      "))
    print(f"  NashConv of the greedy policy: {report.nash_conv:.4f}")

    print("\nfinal learner from each of the 9 first moves, both seats:")
    for name, ((wins, draws, losses), distinct, games) in result["records"].items():
        print(
            f"  vs {name:8s} {wins:4d} wins {draws:4d} draws {losses:4d} losses"
            f"  ({distinct} distinct games of {games})"
        )

    lost = len(report.value_losses)
    if report.unbeatable and not lost:
        print("\nUNBEATABLE: no opponent can beat it in either seat; it never throws away value.")
    elif report.unbeatable:
        print(f"\nUNBEATABLE in both seats, but it throws away value in {lost} position(s).")
    else:
        forced = ", ".join(f"{s} {line.outcome:+g}" for s, line in report.forced.items())
        print(
            f"\nNOT UNBEATABLE: an opponent can force {forced}; {lost} value-losing "
            "position(s). Train longer (--timesteps) or try another seed."
        )


if __name__ == "__main__":
    main()
