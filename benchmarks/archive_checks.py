"""What do the untrusted-input checks of ``SnapshotArchive`` cost on the paths training uses?

Run (with ``PYTHONPATH=.`` from the repo root; point PYTHONPATH at another checkout to compare):

      python benchmarks/archive_checks.py                  # 200 snapshots, Connect Four [128, 128]
      python benchmarks/archive_checks.py --snapshots 50   # quicker

An archive of ``--snapshots`` Connect Four MaskablePPO snapshots (``net_arch=[128, 128]``, the
recipe's policy) is written once; then, each timed ``--repeats`` times and the best reported:

(a) ``save`` of one more snapshot (the callback's cost per snapshot);
(b) the listing after the index changed (a new ``SnapshotArchive`` reading every row, as a worker
    process does after a save);
(c) the listing when nothing changed (``snapshots()``, called per opponent draw);
(d) ``load_policy`` of a snapshot that is not in the cache (rebuild the policy, read, hash and
    check the weights file).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
from pettingzoo.classic import connect_four_v3
from sb3_contrib import MaskablePPO

from sp_wrappers import SelfPlayEnv, SnapshotArchive


def best_of(repeats: int, run: Callable[[], object], setup: Callable[[], None] = lambda: None):
    times = []
    for _ in range(repeats):
        setup()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = MaskablePPO(
        "MlpPolicy", SelfPlayEnv(connect_four_v3.env()), policy_kwargs={"net_arch": [128, 128]}
    )
    path = Path(tempfile.mkdtemp()) / "archive"
    archive = SnapshotArchive(path, cache_size=1)
    for step in range(args.snapshots):
        archive.save(model, step=step)
    ids = [info.id for info in archive.snapshots()]
    steps = iter(range(args.snapshots, 10**9))
    save = best_of(args.repeats, lambda: archive.save(model, step=next(steps)))
    relist = best_of(args.repeats, lambda: SnapshotArchive(path).snapshots())
    archive.snapshots()
    listing = best_of(args.repeats * 10, archive.snapshots)
    picks = iter(ids * 2)
    load = best_of(args.repeats, lambda: archive.load_policy(next(picks)))
    print(f"archive of {args.snapshots} snapshots, best of {args.repeats}:")
    print(f"  (a) save one snapshot             {save * 1e3:8.2f} ms")
    print(f"  (b) listing after a change        {relist * 1e3:8.2f} ms")
    print(f"  (c) listing, nothing changed      {listing * 1e3:8.3f} ms")
    print(f"  (d) load_policy, cache miss       {load * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
