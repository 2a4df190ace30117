"""Soak test: one long ``sp-wrappers train`` run with a bounded archive, watched from outside.

Runs ``sp-wrappers train tictactoe_v3`` for ``--timesteps`` learner steps (default 1M) with
``--max-snapshots`` (the bounded archive) and a periodic rating fit, and samples every
``--every`` seconds: the resident memory (RSS) of the train process and its children, the
archive's size on disk (snapshot files and index), how many snapshots are listed and how many
matches are recorded. At the end it loads every listed snapshot (hash checked) and judges memory
after warm-up: the slope of RSS against learner steps over the second half of the run and the
spread (max - min) after warm-up. Samples go to ``OUT/soak.csv``.

    python benchmarks/soak.py --out /tmp/soak            # 1M steps, ~15-30 min on 2 cores
    python benchmarks/soak.py --timesteps 100000 --out /tmp/soak-short

Uses psutil for RSS when installed, else ``/proc/PID/status`` (Linux).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

MIB = 1024 * 1024


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0
        total = 0
        for proc in procs:
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def du(path: Path) -> int:
    """Bytes of the regular files under ``path``."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def archive_counts(archive: Path) -> tuple[int, int, int]:
    """(listed snapshots, matches, newest recorded learner step) read from the index."""
    index = archive / "index.sqlite"
    if not index.exists():
        return 0, 0, 0
    try:
        conn = sqlite3.connect(index, timeout=5.0)
        try:
            listed = conn.execute("SELECT count(*) FROM snapshots WHERE pruned = 0").fetchone()[0]
            matches, step = conn.execute("SELECT count(*), max(step) FROM matches").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # the schema is not written yet
        return 0, 0, 0
    return int(listed), int(matches), int(step or 0)


def judge(samples: list[dict[str, float]], timesteps: int, warmup: float) -> None:
    """Print whether memory stayed flat during training after warm-up, and the archive's size.

    Only samples taken while training are judged (step < ``timesteps``): the end-of-run
    evaluation and rating fit that follow are one-off.
    """
    steps = np.array([s["step"] for s in samples], dtype=float)
    rss = np.array([s["rss_mib"] for s in samples])
    end = steps.max() if steps.max() < timesteps else timesteps  # a cut-off soak: its last step
    warm = (steps >= warmup * end) & (steps < timesteps)
    second_half = (steps >= 0.5 * end) & (steps < timesteps)
    slope = np.polyfit(steps[second_half], rss[second_half], 1)[0] * 100_000
    grew = rss[warm][-1] - rss[warm][0]
    archive_mib = [s["archive_mib"] for s in samples]
    last = samples[-1]
    print(f"RSS while training, after warm-up ({warmup:.0%} of {end:,.0f} steps): "
          f"min {rss[warm].min():.1f} MiB, max {rss[warm].max():.1f} MiB, "
          f"first->last {grew:+.1f} MiB; "
          f"slope over the second half {slope:+.2f} MiB per 100k steps")  # fmt: skip
    print(f"archive on disk: {archive_mib[0]:.2f} -> {max(archive_mib):.2f} MiB (max), "
          f"{archive_mib[-1]:.2f} MiB at the last sample "
          f"(snapshots/ {last['snapshots_mib']:.2f} MiB, {last['listed']:.0f} listed)")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=1_000_000)
    parser.add_argument("--max-snapshots", type=int, default=20)
    parser.add_argument("--save-every", type=int, default=10_000)
    parser.add_argument("--fit-every", type=int, default=50_000)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=0.2, help="fraction of steps ignored")
    parser.add_argument("--out", default="/tmp/sp-soak", help="the run goes to OUT/run")
    parser.add_argument("--report", metavar="CSV", help="only judge an earlier soak's soak.csv")
    args = parser.parse_args()
    if args.report:  # e.g. a soak cut off before its end
        with open(args.report, newline="") as handle:
            rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]
        judge(rows, args.timesteps, args.warmup)
        return 0

    out = Path(args.out)
    run = out / "run"
    if run.exists():
        sys.exit(f"{run} exists; pass another --out.")
    out.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "sp_wrappers.cli", "train", "tictactoe_v3",
        "--timesteps", str(args.timesteps), "--max-snapshots", str(args.max_snapshots),
        "--save-every", str(args.save_every), "--fit-every", str(args.fit_every),
        "--eval-games", "50", "--threads", "1", "--no-progress", "--no-plots", "--out", str(run),
    ]  # fmt: skip
    print("$", " ".join(command), flush=True)
    log = open(out / "train.log", "w")
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    # -- sample until the run ends -----------------------------------------------------------------
    samples: list[dict[str, float]] = []
    table = open(out / "soak.csv", "w", newline="")  # written as it goes: a cut-off soak keeps it
    writer = csv.writer(table)
    print(f"{'min':>6} {'step':>9} {'RSS MiB':>8} {'archive MiB':>11} {'snapshots':>9} "
          f"{'matches':>8}", flush=True)  # fmt: skip
    next_print = 0.0
    while proc.poll() is None:
        rss = tree_rss(proc.pid)
        listed, matches, step = archive_counts(run / "archive")
        sample = dict(
            seconds=round(time.perf_counter() - start, 1),
            step=step,
            rss_mib=round(rss / MIB, 1),
            archive_mib=round(du(run / "archive") / MIB, 2),
            snapshots_mib=round(du(run / "archive" / "snapshots") / MIB, 2),
            listed=listed,
            matches=matches,
        )
        if rss:
            if not samples:
                writer.writerow(sample.keys())
            samples.append(sample)
            writer.writerow(sample.values())
            table.flush()
        if step >= next_print:
            minutes = sample["seconds"] / 60
            line = f"{minutes:6.1f} {step:9,d} {sample['rss_mib']:8.1f} "
            print(line + f"{sample['archive_mib']:11.2f} {listed:9d} {matches:8d}", flush=True)
            next_print = step + args.timesteps / 20
        time.sleep(args.every)
    log.close()
    table.close()
    if proc.returncode != 0:
        print(f"train exited with status {proc.returncode}; see {out / 'train.log'}")
        return 1

    # -- every listed snapshot loads -------------------------------------------------------------
    from sp_wrappers import SnapshotArchive

    archive = SnapshotArchive(run / "archive", create=False)
    listed_ids = [info.id for info in archive.snapshots()]
    loaded = sum(archive.load_policy(sid).policy_id == sid for sid in listed_ids)
    pruned = len(archive.snapshots(include_pruned=True)) - len(listed_ids)
    config = json.loads((run / "config.json").read_text())
    steps_done = config["history"][-1]["from_step"] + config["history"][-1]["steps"]

    minutes = (time.perf_counter() - start) / 60
    print()
    print(f"train: {steps_done:,d} learner steps in {minutes:.1f} min; {len(samples)} samples")
    print(f"snapshots: {len(listed_ids)} listed (bound {args.max_snapshots}), {pruned} pruned, "
          f"{loaded}/{len(listed_ids)} load with their hash checked")  # fmt: skip
    print(f"matches recorded: {samples[-1]['matches']:,d}")
    judge(samples, args.timesteps, args.warmup)
    return 0 if loaded == len(listed_ids) else 1


if __name__ == "__main__":
    sys.exit(main())
