"""A komi handicap curriculum on 5x5 Go: each env copy gets the komi that keeps its games even.

Run:  python examples/env_generator.py --timesteps 200000
Tiny: python examples/env_generator.py --timesteps 2048 --n-envs 4 --save-every 1024

The learner plays black against its own snapshots. Komi (points given to white) is a game
parameter that keeps the observation and action spaces, so every env copy can play under its
own: the generator, called for a copy when its episode ends, raises the copy's komi when the
learner wins more than 60% of its recent games at that komi and lowers it below 40%. Copies start
at different komis, so one rollout covers several handicaps. Every ``--print-every`` steps the
script prints each copy's komi and the learner's recent record per komi; at the end, its record
per komi over the whole run, read back from the archive's match history.

The same generator from the command line (from the repository root)::

    sp-wrappers train pettingzoo.classic.go_v5:env --game-kwarg board_size=5 \\
        --learner black_0 --env-generator examples.env_generator:komi_curriculum
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import torch
from pettingzoo.classic import go_v5
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from sp_wrappers import (
    EnvGenerator,
    EnvHistory,
    OpponentSampler,
    SelfPlayCallback,
    SnapshotArchive,
    make_selfplay_vec_env,
    win_rates_by_config,
)

START_KOMIS = (0.5, 4.5, 8.5, 12.5)  # copy i starts at START_KOMIS[i % 4]
STEP = 2.0  # komi change per adjustment
RECENT = 20  # games at a komi that decide the next move
LOW, HIGH = 0.4, 0.6  # the learner's target band of scores


def komi_curriculum(step: int, index: int, history: EnvHistory) -> dict[str, Any]:
    """The komi copy ``index`` plays next: up when the learner wins too often at its current
    komi, down when it loses too often (draws count half)."""
    current = history.current(index)
    if current is None or "komi" not in current:
        return {"komi": START_KOMIS[index % len(START_KOMIS)]}
    komi = float(current["komi"])
    recent = history.results(current)[-RECENT:]
    if len(recent) >= RECENT // 2:
        score = sum(r.outcome for r in recent) / len(recent)
        if score > HIGH:
            komi += STEP
        elif score < LOW:
            komi -= STEP
    return {"komi": komi}


class PrintConfigs(BaseCallback):
    """Print every copy's komi and the learner's recent score per komi, every ``every`` steps."""

    def __init__(self, generator: EnvGenerator, every: int) -> None:
        super().__init__()
        self.generator, self.every, self._last = generator, every, 0

    def _on_step(self) -> bool:
        if self.num_timesteps - self._last >= self.every:
            self._last = self.num_timesteps
            komis = [c.game_kwargs.get("komi") if c else None for c in self.generator.configs]
            history = self.generator.history
            scores = ", ".join(
                f"{c['komi']:+.1f}: {history.score(c):.2f} ({history.games(c)})"
                for c in sorted(history.configs(), key=lambda c: c.get("komi", 0.0))
            )
            print(f"step {self.num_timesteps:>7}  copies' komi {komis}  score by komi: {scores}")
        return True


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=200_000, help="learner steps")
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--save-every", type=int, default=20_000, help="learner steps")
    parser.add_argument("--print-every", type=int, default=None, help="default: save-every / 2")
    parser.add_argument("--board-size", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/go_komi_curriculum"))
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    archive = SnapshotArchive(args.out / "archive", max_snapshots=30)
    sampler = OpponentSampler(archive, window=10, latest_ratio=0.5, seed=args.seed)
    env = make_selfplay_vec_env(
        go_v5.env,
        n_envs=args.n_envs,
        seed=args.seed,
        learner="black_0",
        opponent=sampler,
        env_kwargs={"board_size": args.board_size},
    )
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=256, batch_size=256, ent_coef=0.01, seed=args.seed, verbose=0
    )
    generator = EnvGenerator(komi_curriculum, state_path=args.out / "env_generator.json")
    callbacks = [
        SelfPlayCallback(archive, save_every=args.save_every, verbose=1),
        generator,
        PrintConfigs(generator, args.print_every or max(args.save_every // 2, 1)),
    ]
    model.learn(args.timesteps, callback=callbacks)
    model.save(args.out / "model.zip")
    env.close()

    print("\nThe learner's games per configuration (the archive's whole match history):")
    rows = win_rates_by_config(archive, source="training")
    for row in sorted(rows.values(), key=lambda r: r["config"].get("komi", 0.0)):
        w, d, lo = row["wins"], row["draws"], row["losses"]
        print(
            f"  {json.dumps(row['config']):<16} {row['games']:>6} games  {w}-{d}-{lo}  "
            f"score {row['score']:.2f}"
        )


if __name__ == "__main__":
    main()
