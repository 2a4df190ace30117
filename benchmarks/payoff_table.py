"""Does an opponent draw cost the same at a million recorded games as at a thousand?

Run (with ``PYTHONPATH=.`` from the repo root):

      python benchmarks/payoff_table.py                          # 1k vs 1M match rows
      python benchmarks/payoff_table.py --sizes 1000 20000       # a quick check
      python benchmarks/payoff_table.py --old-query              # also time the query PFSP used

For each size an archive gets 10 tic-tac-toe snapshots and that many match rows, written through
``record_matches`` in batches (the path training uses, which keeps the payoff table): games of the
learner against the snapshots (training) and of snapshots against each other (evaluation). Then,
``--repeats`` times, one more game is recorded (so every cache is stale, as after a rollout) and
the sampler's refresh is timed: ``snapshot_probabilities()`` of ``OpponentSampler(strategy=
"pfsp")`` (the learner's decayed scores) and of ``strategy="nash"`` (the payoff matrix between the
snapshots, solved again because a game between two of them was recorded), then one ``draw()``;
``nash_payoffs`` is the matrix's read alone (``archive_payoffs``), without the linear programs,
whose time depends on the matrix, not on the history. The median of each is printed per size,
with the ratio of the largest size to the smallest: about 1 when a draw does not grow with the
history. ``--old-query`` also times the window query
``scores_against(decay=0.99)`` ran before the payoff table (1.66 s at 228k rows on the issue's
machine).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers import OpponentSampler, SelfPlayEnv, SnapshotArchive
from sp_wrappers.opponents.nash import archive_payoffs

SNAPSHOTS = 10
BATCH = 20_000
# The query scores_against(player, decay) ran on every archive change before the payoff table.
OLD_QUERY = (
    "SELECT opponent, score, age, n FROM ("
    " SELECT opponent, score,"
    "  ROW_NUMBER() OVER (PARTITION BY opponent ORDER BY id DESC) - 1 AS age,"
    "  COUNT(*) OVER (PARTITION BY opponent) AS n FROM ("
    "   SELECT id, player_b AS opponent, score_a AS score FROM matches"
    "   WHERE player_a = ? AND player_b != ? UNION ALL"
    "   SELECT id, player_a AS opponent, 1.0 - score_a AS score FROM matches"
    "   WHERE player_b = ? AND player_a != ?)"
    ") WHERE age < ?"
)


def fill(path: Path, rows: int, model: MaskablePPO, rng: np.random.Generator) -> SnapshotArchive:
    archive = SnapshotArchive(path)
    ids = [archive.save(model, step=100 * k).id for k in range(SNAPSHOTS)]
    written = 0
    while written < rows:
        n = min(BATCH, rows - written)
        a = rng.integers(0, SNAPSHOTS, n)
        b = rng.integers(0, SNAPSHOTS, n)
        learner = rng.random(n) < 0.8  # most games are training games of the learner
        scores = rng.choice([0.0, 0.5, 1.0], n)
        archive.record_matches(
            dict(
                player_a="learner" if learner[i] else ids[a[i]],
                player_b=ids[b[i]],
                score_a=float(scores[i]),
                source="training" if learner[i] else "evaluation",
            )
            for i in range(n)
        )
        written += n
    return archive


def median_time(repeats: int, setup: Callable[[], None], run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        setup()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(rows: int, repeats: int, old_query: bool, model: MaskablePPO) -> dict[str, float]:
    rng = np.random.default_rng(rows)
    start = time.perf_counter()
    archive = fill(Path(tempfile.mkdtemp()) / "archive", rows, model, rng)
    filled = time.perf_counter() - start
    ids = [info.id for info in archive.snapshots()]
    pfsp = OpponentSampler(archive, window=SNAPSHOTS, latest_ratio=0.0, strategy="pfsp", seed=0)
    nash = OpponentSampler(archive, window=SNAPSHOTS, latest_ratio=0.0, strategy="nash", seed=0)
    for sid in ids:  # every snapshot's policy in the cache, as in a long run
        archive.load_policy(sid)

    def learner_game() -> None:
        archive.record_match("learner", ids[int(rng.integers(SNAPSHOTS))], 1.0)

    def snapshot_game() -> None:
        a, b = rng.choice(SNAPSHOTS, 2, replace=False)
        archive.record_match(ids[a], ids[b], float(rng.choice([0.0, 1.0])), source="evaluation")

    result = {
        "rows": float(archive.n_matches()),
        "fill_s": filled,
        "pfsp_refresh_ms": 1e3 * median_time(repeats, learner_game, pfsp.snapshot_probabilities),
        "pfsp_draw_ms": 1e3 * median_time(repeats, learner_game, pfsp.draw),
        "nash_payoffs_ms": 1e3
        * median_time(repeats, snapshot_game, lambda: archive_payoffs(archive, ids)),
        "nash_refresh_ms": 1e3 * median_time(repeats, snapshot_game, nash.snapshot_probabilities),
        "nash_draw_ms": 1e3 * median_time(repeats, snapshot_game, nash.draw),
    }
    if old_query:
        import sqlite3

        conn = sqlite3.connect(archive.path / "index.sqlite")
        horizon = int(np.ceil(np.log(1e-9) / np.log(0.99)))
        params = ("learner",) * 4 + (horizon,)
        result["old_query_ms"] = 1e3 * median_time(
            max(1, repeats // 5), lambda: None, lambda: conn.execute(OLD_QUERY, params).fetchall()
        )
        conn.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--old-query", action="store_true", help="also time the pre-table query")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = MaskablePPO(
        "MlpPolicy", SelfPlayEnv(tictactoe_v3.env()), policy_kwargs={"net_arch": [16]}
    )
    results = [measure(n, args.repeats, args.old_query, model) for n in sorted(args.sizes)]
    keys = [k for k in results[0] if k.endswith("_ms")]
    print(f"{'match rows':>12} {'fill s':>8} " + " ".join(f"{k:>16}" for k in keys))
    for r in results:
        print(
            f"{int(r['rows']):>12} {r['fill_s']:>8.1f} " + " ".join(f"{r[k]:>16.3f}" for k in keys)
        )
    small, large = results[0], results[-1]
    print(f"\nratio {int(large['rows'])} rows / {int(small['rows'])} rows (median times):")
    for key in keys:
        print(f"  {key:<16} {large[key] / small[key]:6.2f}x")


if __name__ == "__main__":
    main()
