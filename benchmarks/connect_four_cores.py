"""Which way of using a second core trains Connect Four fastest? A short side-by-side measurement.

`sp-wrappers train connect_four_v3` ran at about 852 learner steps/s with the load average at
1.0 on 2 cores (issue #36): one core idle. This script trains the recipe as pure self-play
(`--reference-ratio 0 --symmetries auto`: its MaskablePPO, BoardExtractor, 16 game copies, an
archive of a few snapshots, 10% RandomPolicy) for `--seconds` per arm and round, arms
interleaved over `--rounds`, and prints learner steps per second per arm with the load average:

- `baseline`: one torch thread, the games in this process (today's `train`);
- `threads2`: a second torch thread (`sp-wrappers train --threads 2`);
- `workers1` / `workers2`: the games stepped in 1 or 2 worker processes
  (`SelfPlayVecEnv(num_workers=...)`; the opponents' forward passes stay batched in this
  process);
- `threads2_workers1`: both.

Steps per second count whole rollouts (collection and the PPO update), from the first rollout's
end (start-up excluded) to the last rollout start. Run it alone on a quiet machine:

    python benchmarks/connect_four_cores.py                        # 5 arms x 2 rounds x 45 s
    python benchmarks/connect_four_cores.py --seconds 2 --rounds 1 --arms baseline workers1 \\
        --n-envs 2 --hp n_steps=32 --hp batch_size=64                # a smoke test

The fastest arm becomes the recipe's default (`--threads` of `train`, or game workers).
Writes OUT/cores.json (`--out`, default runs/connect-four-cores).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from stable_baselines3.common.callbacks import BaseCallback

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.envs.vector.factory import make_selfplay_vec_env
from sp_wrappers.games.registry import game_factory
from sp_wrappers.runs.config import probe_or_fail
from sp_wrappers.runs.models import build_model, build_sampler
from sp_wrappers.runs.resolve import resolve_run

GAME = "connect_four_v3"
#: arm -> (torch threads, game worker processes)
ARMS = {
    "baseline": (1, 0),
    "threads2": (2, 0),
    "workers1": (1, 1),
    "workers2": (1, 2),
    "threads2_workers1": (2, 1),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=45.0, help="per arm and round")
    parser.add_argument("--rounds", type=int, default=2, help="arms interleaved, best round kept")
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS))
    parser.add_argument("--n-envs", type=int, default=None, help="default: the recipe's (16)")
    parser.add_argument("--snapshots", type=int, default=4, help="in the archive at the start")
    parser.add_argument("--symmetries", choices=("auto", "none"), default="auto",
                        help="a random mirror view per episode, as issue #36's run")  # fmt: skip
    parser.add_argument("--hp", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", type=Path, default=Path("runs/connect-four-cores"))
    return parser.parse_args(argv)


class StopAfter(BaseCallback):
    """Stop learning ``seconds`` after the first rollout ends; keep each rollout start's
    ``(time, steps)``."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.marks: list[tuple[float, int]] = []

    def _on_rollout_start(self) -> None:
        self.marks.append((time.perf_counter(), self.num_timesteps))

    def _on_step(self) -> bool:
        return len(self.marks) < 2 or time.perf_counter() - self.marks[1][0] < self.seconds

    def steps_per_second(self) -> float:
        (t0, s0), (t1, s1) = self.marks[1], self.marks[-1]  # the first rollout is start-up
        return (s1 - s0) / (t1 - t0) if t1 > t0 else float("nan")


def measure(arm: str, args: argparse.Namespace, config: Any, root: Path) -> dict[str, Any]:
    """One arm's learner steps per second over about ``--seconds`` of training."""
    threads, workers = ARMS[arm]
    torch.set_num_threads(threads)
    env_fn = game_factory(GAME)
    probe = probe_or_fail(env_fn, GAME, {}, config.learner)
    archive = SnapshotArchive(Path(tempfile.mkdtemp(dir=root)) / "archive")
    opponent = build_sampler(archive, config.sampler, GAME, 0, probe.action_space, probe.has_masks)
    venv = make_selfplay_vec_env(
        env_fn, n_envs=int(config.n_envs), seed=0, learner=config.learner, opponent=opponent,
        num_workers=workers, symmetries=None if args.symmetries == "none" else "auto",
    )  # fmt: skip
    model = build_model(
        config.algo, config.hyperparams, 0, venv, probe.observation_space, None, "cpu"
    )
    for step in range(args.snapshots):  # opponents drawn from a window, as in a run
        archive.save(model, step=step)
    stop = StopAfter(args.seconds)
    load_before = os.getloadavg()[0]
    model.learn(10**9, callback=stop)
    venv.close()
    return {
        "arm": arm,
        "threads": threads,
        "num_workers": workers,
        "steps_per_second": stop.steps_per_second(),
        "steps": stop.marks[-1][1] - stop.marks[1][1],
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    overrides: dict[str, Any] = {"reference_ratio": 0.0}
    if args.n_envs:
        overrides["n_envs"] = args.n_envs
    config = resolve_run(GAME, overrides)
    hyperparams = dict(config.hyperparams)
    for pair in args.hp:
        key, _, raw = pair.partition("=")
        hyperparams[key] = json.loads(raw)
    config = config.replace(hyperparams=hyperparams)
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for round_ in range(args.rounds):
            for arm in args.arms:
                row = {"round": round_, **measure(arm, args, config, Path(root))}
                rows.append(row)
                print(
                    f"round {round_} {arm:<18} {row['steps_per_second']:7.0f} steps/s "
                    f"({row['steps']} steps)  load {row['load_before']:.2f} -> "
                    f"{row['load_after']:.2f}",
                    flush=True,
                )
    best = {arm: max(r["steps_per_second"] for r in rows if r["arm"] == arm) for arm in args.arms}
    base = best.get("baseline")
    print(f"\nbest of {args.rounds} round(s), {args.seconds:.0f} s each:")
    for arm, rate in sorted(best.items(), key=lambda item: -item[1]):
        ratio = f"  {rate / base:.2f}x baseline" if base else ""
        print(f"  {arm:<18} {rate:7.0f} steps/s{ratio}")
    result = {"seconds": args.seconds, "n_envs": int(config.n_envs), "rows": rows, "best": best}
    (args.out / "cores.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
