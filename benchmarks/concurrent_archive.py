"""Fault benchmark: several writer processes saving and pruning into one archive while reader
processes draw and load opponents from it; then count what was saved, what loads and what was lost.

Each writer (a real process, ``multiprocessing`` with ``spawn``) builds a MaskablePPO tic-tac-toe
learner, sets all its weights to a value that encodes (writer, save number), saves it into the
shared archive (``max_snapshots`` bounds it, so every save also prunes) and records
``--matches`` match rows against it. Each reader draws opponents with an ``OpponentSampler``
(``window`` larger than what pruning keeps recent, so draws race prunes) and checks that every
policy it loads holds the weights its row's tag names. With ``--kills K``, K writers are SIGKILLed
at random moments (mid-save included) and restarted, continuing their numbering.

Afterwards the archive is opened again and every row checked. Reported: writers, saves returned,
rows in the index (their numbers without gaps or duplicates), listed rows that load with the
right weights, rows pruned by rule, records lost (a returned save or a recorded match missing
from the index), errors raised in any process, and reader draws.

    python benchmarks/concurrent_archive.py --writers 4 --readers 2 --saves 25
    python benchmarks/concurrent_archive.py --writers 4 --saves 25 --kills 3
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import random
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path


def make_model():
    import torch
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    torch.set_num_threads(1)
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, policy_kwargs={"net_arch": [64]}
    )


def value_of(writer: int, k: int) -> float:
    return float(writer * 1000 + k)


def weight_values(state) -> set[float]:
    import torch

    return {float(v) for t in state.values() for v in torch.unique(t.float()).tolist()}


def writer(args, index: int, first: int, start, results) -> None:
    """Saves ``first..args.saves-1``; reports each save as it returns (a kill loses none)."""
    import torch

    from sp_wrappers.archive.store import SnapshotArchive

    try:
        model = make_model()
        archive = SnapshotArchive(args.root, max_snapshots=args.max_snapshots,
                                  keep_recent=args.keep_recent)  # fmt: skip
        if start is not None:
            start.wait()
        for k in range(first, args.saves):
            with torch.no_grad():
                for parameter in model.policy.state_dict().values():
                    parameter.fill_(value_of(index, k))
            info = archive.save(
                model, step=index * 1_000_000 + k, tags=[f"value={value_of(index, k)}"]
            )
            for _ in range(args.matches):
                archive.record_match("learner", info.id, 0.5, step=k)
            with open(f"{args.root}.writer-{index}.saves", "a") as log:  # survives a SIGKILL
                log.write(f"{info.id} {info.step} {info.sha256}\n")
        results.put(("writer done", index, None))
    except BaseException:
        results.put(("error", index, traceback.format_exc()))


def reader(args, index: int, start, done, results) -> None:
    from sp_wrappers.archive.store import SnapshotArchive
    from sp_wrappers.opponents.sampler import OpponentSampler

    try:
        make_model()  # imports SB3 and torch now, not at the first load (tens of seconds)
        archive = SnapshotArchive(args.root)
        sampler = OpponentSampler(archive, window=2 * args.max_snapshots, latest_ratio=0.0,
                                  seed=index)  # fmt: skip
        start.wait()
        draws = loads = bad = 0
        while not done.is_set():
            policy = sampler.draw()
            draws += 1
            if not policy.policy_id.startswith("snapshot-"):
                time.sleep(0.01)  # nothing saved yet: leave the CPU to the writers
                continue
            rows = {i.id: i for i in archive.snapshots(include_pruned=True)}
            expected = float(rows[policy.policy_id].tags[0].removeprefix("value="))
            bad += weight_values(policy.policy.state_dict()) != {expected}
            loads += 1
        results.put(("reader done", index, (draws, loads, bad)))
    except BaseException:
        results.put(("reader error", index, traceback.format_exc()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--saves", type=int, default=25, help="saves per writer")
    parser.add_argument("--matches", type=int, default=5, help="match rows per save")
    parser.add_argument("--max-snapshots", type=int, default=10)
    parser.add_argument("--keep-recent", type=int, default=5)
    parser.add_argument("--kills", type=int, default=0, help="writers SIGKILLed and restarted")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", default=None, help="archive directory (default: a new one)")
    args = parser.parse_args()
    args.root = args.root or str(Path(tempfile.mkdtemp()) / "archive")
    rng = random.Random(args.seed)

    from sp_wrappers.archive.store import ArchiveError, SnapshotArchive

    SnapshotArchive(args.root)
    context = multiprocessing.get_context("spawn")
    start, done, results = (
        context.Barrier(args.writers + args.readers),
        context.Event(),
        context.Queue(),
    )
    began = time.perf_counter()
    writers = {w: context.Process(target=writer, args=(args, w, 0, start, results))
               for w in range(args.writers)}  # fmt: skip
    readers = [context.Process(target=reader, args=(args, r, start, done, results))
               for r in range(args.readers)]  # fmt: skip
    for process in [*writers.values(), *readers]:
        process.start()
    errors, finished, reads = [], set(), []
    kills_left, kills = args.kills, 0

    def saves_of(index: int) -> list[tuple[str, int, str]]:
        try:
            lines = Path(f"{args.root}.writer-{index}.saves").read_text().splitlines()
        except FileNotFoundError:
            return []
        fields = [line.split() for line in lines]  # a line cut by a kill has fewer than 3
        return [(f[0], int(f[1]), f[2]) for f in fields if len(f) == 3 and len(f[2]) == 64]

    def handle(kind: str, index: int, payload) -> None:
        if kind == "writer done":
            finished.add(index)
        elif kind == "error":
            errors.append(f"writer {index}: {payload}")
            finished.add(index)
        elif kind == "reader error":
            errors.append(f"reader {index}: {payload}")
            reads.append((0, 0, 0))
        elif kind == "reader done":
            reads.append(payload)

    next_kill = float("inf")  # set at the first save: every writer is past the start barrier
    while len(finished) < args.writers:
        if kills_left and time.monotonic() >= next_kill:
            victim = rng.choice([w for w in writers if w not in finished])
            os.kill(writers[victim].pid, signal.SIGKILL)
            writers[victim].join()
            first = len(saves_of(victim))
            writers[victim] = context.Process(
                target=writer, args=(args, victim, first, None, results)
            )
            writers[victim].start()
            kills_left, kills = kills_left - 1, kills + 1
            next_kill = time.monotonic() + rng.uniform(0.02, 0.3)
        try:
            handle(*results.get(timeout=0.01))
        except queue.Empty:  # check the kill clock again
            pass
        if next_kill == float("inf") and saves_of(0):
            next_kill = time.monotonic() + rng.uniform(0.02, 0.3)
    done.set()
    while len(reads) < len(readers):
        handle(*results.get(timeout=300))
    for process in [*writers.values(), *readers]:
        process.join(timeout=60)
    seconds = time.perf_counter() - began
    saved = {w: saves_of(w) for w in writers}

    archive = SnapshotArchive(args.root)
    rows = archive.snapshots(include_pruned=True)
    returned = {entry for entries in saved.values() for entry in entries}
    in_index = {(row.id, row.step, row.sha256) for row in rows}
    listed = archive.snapshots()
    loads_right = 0
    for row in listed:
        w, k = divmod(row.step, 1_000_000)
        try:
            loads_right += weight_values(archive.load_state_dict(row)) == {value_of(w, k)}
        except ArchiveError as error:  # counted as a row that does not load
            print(f"{row.id} does not load: {str(error)[:200]}")
    files = {
        p.name for p in (Path(args.root) / "snapshots").iterdir() if not p.name.startswith(".")
    }
    pruned = [row for row in rows if row.pruned]
    expected_matches = len(returned) * args.matches
    print(f"archive: {args.root}")
    asked = args.writers * args.saves
    print(f"writers {args.writers}, readers {args.readers}, saves asked {asked}, "
          f"kills {kills}, {seconds:.1f} s")  # fmt: skip
    gapless = [r.seq for r in rows] == list(range(len(rows)))
    print(f"saves returned: {len(returned)}; rows in the index: {len(rows)} "
          f"(numbers 0..{len(rows) - 1} without gaps: {gapless})")  # fmt: skip
    files_left = sum(f"{r.id}.safetensors" in files for r in pruned)
    print(f"listed: {len(listed)} (max_snapshots {args.max_snapshots}); load with the right "
          f"weights: {loads_right}/{len(listed)}; pruned by rule: {len(pruned)} "
          f"(files left: {files_left})")  # fmt: skip
    print(f"records lost: saves {len(returned - in_index)}, matches "
          f"{max(0, expected_matches - archive.n_matches())} of {expected_matches} "
          f"(rows from saves a kill cut short: {len(in_index - returned)})")  # fmt: skip
    print(f"reader draws {sum(r[0] for r in reads)}, snapshot loads {sum(r[1] for r in reads)}, "
          f"wrong weights {sum(r[2] for r in reads)}")  # fmt: skip
    print(f"errors raised: {len(errors)}")
    for error in errors:
        print(error)
    sys.exit(1 if errors or returned - in_index or loads_right != len(listed) else 0)


if __name__ == "__main__":
    main()
