"""Does the README's main job end unbeatable for every seed, and how long does its training take?

Runs the training of ``examples/tictactoe_selfplay.py`` (its ``train`` and ``strength``, unchanged)
once per seed, each in a fresh process, and appends one JSON line per seed to the results file:
the seed, training seconds, learner steps and steps/s, the forced outcome per seat from the exact
walk (``exploitability``), the value-losing positions, NashConv of the greedy policy, the records
(wins, draws, losses) against ``RandomPolicy`` and the perfect player from every first move, the
load average before and after training, and the machine. With ``--probe-every N`` it also walks
the live learner every N steps and records the first step from which it stayed unbeatable (the
learning rate still decays over the whole budget, so that is not what a shorter budget gives).
``train_cpu_seconds`` is the training process's CPU time (one torch thread): on a busy machine it
tells about what the wall time would be on a quiet one.

Resumable: a seed already in the results file with the same budget is skipped.
Seeds run one after another by default (the timing the README quotes); ``--parallel K`` runs K at
once, which shares the cores and slows each run down: use it for the outcomes, not the times.

Run (on a quiet machine, note its load):
    python benchmarks/main_job_seeds.py --seeds 0 1 2 3 4
    python benchmarks/main_job_seeds.py --seeds 0 1 2 --timesteps 200000 --probe-every 25000
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tictactoe_selfplay.py"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--timesteps", type=int, default=None, help="learner steps (default: the example's)"
    )
    parser.add_argument("--parallel", type=int, default=1, help="seeds trained at once")
    parser.add_argument(
        "--probe-every", type=int, default=0, help="walk the live learner every N steps (0: off)"
    )
    parser.add_argument(
        "--results", type=Path, default=Path("benchmarks/results/main_job_seeds.jsonl")
    )
    return parser.parse_args()


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("tictactoe_selfplay", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def machine() -> str:
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        model = next((ln.split(":", 1)[1].strip() for ln in cpuinfo if "model name" in ln), model)
    return f"{model}, {os.cpu_count()} cores"


def run_seed(seed: int, timesteps: int | None, probe_every: int) -> dict[str, Any]:
    """Train and evaluate one seed (in a worker process); its printout goes to a log file."""
    from pettingzoo.classic import tictactoe_v3
    from stable_baselines3.common.callbacks import BaseCallback

    from sp_wrappers.evaluation.exploitability import exploitability

    example = load_example()

    class Probe(BaseCallback):
        """Walks the live greedy learner every ``probe_every`` steps."""

        def __init__(self) -> None:
            super().__init__()
            self.next, self.unbeatable_from, self.curve = probe_every, None, []

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                self.next += probe_every
                report = exploitability(self.model, tictactoe_v3.env(), deterministic=True)
                good = bool(report.unbeatable) and not report.value_losses
                self.curve.append([self.num_timesteps, report.nash_conv, len(report.value_losses)])
                if not good:
                    self.unbeatable_from = None
                elif self.unbeatable_from is None:
                    self.unbeatable_from = self.num_timesteps
            return True

    with tempfile.TemporaryDirectory(prefix=f"main-job-{seed}-") as out:
        argv = ["--seed", str(seed), "--out", out]
        if timesteps is not None:
            argv += ["--timesteps", str(timesteps)]
        args = example.parse_args(argv)
        probe = Probe() if probe_every > 0 else None
        log = Path(out) / "log.txt"
        load_before, cpu_before = os.getloadavg(), time.process_time()
        with open(log, "w") as stream, contextlib.redirect_stdout(stream):
            model, seconds = example.train(args, [probe] if probe else None)
            load_after, cpu_seconds = os.getloadavg(), time.process_time() - cpu_before
            result = example.strength(model, args)
        report = result["report"]
        row: dict[str, Any] = {
            "seed": seed,
            "timesteps": args.timesteps,
            "train_seconds": round(seconds, 1),
            "steps": int(model.num_timesteps),
            # the example stops at its first exact check passed (--no-stop trains the budget)
            "stopped_at": (
                int(model.num_timesteps) if model.num_timesteps < args.timesteps else None
            ),
            "steps_per_s": round(model.num_timesteps / seconds, 1),
            # CPU time of the training process (probes included): near the wall time on a quiet
            # machine, so a busy machine's runs still tell how long a quiet one would take
            "train_cpu_seconds": round(cpu_seconds, 1),
            "unbeatable": bool(report.unbeatable) and not report.value_losses,
            "forced": {s: line.outcome for s, line in report.forced.items()},
            "forcing_lines": {
                s: [list(m) for m in line.moves]
                for s, line in report.forced.items()
                if line.outcome < report.game_values[s]
            },
            "value_losing_positions": len(report.value_losses),
            "nash_conv": report.nash_conv,
            "wdl": {name: list(wdl) for name, (wdl, _, _) in result["records"].items()},
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in load_after],
            "machine": machine(),
        }
        if probe is not None:
            row["unbeatable_from_step"] = probe.unbeatable_from
            row["probe_curve"] = probe.curve
        return row


def main() -> None:
    args = parse_args()
    budget = args.timesteps or load_example().parse_args([]).timesteps
    done = set()
    if args.results.exists():
        for line in args.results.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done.add((row["seed"], row["timesteps"]))
    todo = [seed for seed in args.seeds if (seed, budget) not in done]
    skipped = sorted(set(args.seeds) - set(todo))
    if skipped:
        print(f"already in {args.results}: seeds {skipped} at {budget:,d} steps")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    print(f"{len(todo)} seed(s) of {budget:,d} steps, {args.parallel} at a time")
    context = get_context("spawn")  # fresh processes: no torch or PettingZoo state shared
    with ProcessPoolExecutor(max_workers=args.parallel, mp_context=context) as pool:
        futures = {pool.submit(run_seed, s, budget, args.probe_every): s for s in todo}
        for future in as_completed(futures):
            row = future.result()
            with open(args.results, "a") as stream:
                stream.write(json.dumps(row) + "\n")
            print(
                f"seed {row['seed']}: {'UNBEATABLE' if row['unbeatable'] else 'beatable'}  "
                f"forced {row['forced']}  value-losing {row['value_losing_positions']}  "
                f"NashConv {row['nash_conv']:.3f}  {row['train_seconds']:.0f}s "
                f"({row['steps_per_s']:,.0f} steps/s, load {row['load_before'][0]:.1f})  "
                f"vs random {row['wdl']['random']}  vs minimax {row['wdl']['minimax']}"
            )


if __name__ == "__main__":
    main()
