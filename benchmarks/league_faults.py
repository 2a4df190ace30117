"""League fault benchmark: kill players' workers mid-round, again and again, and count what is lost.

A league (AlphaStarLeague 1/1/1 on tic-tac-toe, tiny MaskablePPO players) runs on the process or
the Ray backend. In every round until --kills kills have landed, a thread SIGKILLs one player's
worker (its spawned process, or its Ray actor's process while it runs ``train_chunk``) at a random
moment of the round. The league replaces the worker from the last complete round and plays that
player's chunk again. At the end the benchmark compares what the rounds reported with what the
archive and league.json hold:

- kills survived: kills that landed, and the run still finished;
- records lost: games the completed rounds reported that are missing from the archive (negative:
  games recorded twice), and listed snapshots that league.json does not know (orphans);
- steps: every player at its exact step count (no chunk learned twice or skipped).

Run:
    python benchmarks/league_faults.py --kills 5 --backend process --out /tmp/league-faults
    python benchmarks/league_faults.py --kills 3 --backend ray --out /tmp/league-faults-ray

Prints one table and writes OUT/league_faults.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import threading
import time
from pathlib import Path

from pettingzoo.classic import tictactoe_v3

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.league import AlphaStarLeague, League


def tiny_model(env):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1)


def worker_pids(backend: str) -> list[int]:
    """The players' processes: spawned children of this process, or Ray actors mid-chunk."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if backend == "ray" and cmdline.startswith(b"ray::PlayerWorker.train_chunk"):
            pids.append(int(entry.name))
        elif backend == "process" and parent == os.getpid() and b"spawn_main" in cmdline:
            pids.append(int(entry.name))
    return pids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--backend", choices=("process", "ray"), default="process")
    parser.add_argument("--chunk-steps", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=None, help="(default: kills + 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="/tmp/league-faults")
    args = parser.parse_args()
    rounds = args.rounds or args.kills + 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    root = out / f"league-{args.backend}-{time.strftime('%H%M%S')}"
    chance = random.Random(args.seed)
    kills: list[dict] = []
    reported = {"games": 0}

    def attack() -> None:
        time.sleep(chance.uniform(0.1, 1.5))
        pids = worker_pids(args.backend)
        if pids:
            pid = chance.choice(pids)
            os.kill(pid, signal.SIGKILL)
            kills.append({"pid": pid, "at": time.time()})

    def on_round(league: League, results: dict) -> None:
        reported["games"] += sum(len(r.matches) for r in results.values())
        if len(kills) < args.kills and league.round < rounds:
            threading.Thread(target=attack, daemon=True).start()

    players = 3
    builder = AlphaStarLeague(1, 1, 1, snapshot_min_steps=args.chunk_steps)
    league = League(
        tictactoe_v3.env, builder, tiny_model, root, args.chunk_steps, 2, on_round=on_round
    )
    start = time.perf_counter()
    finished, error = True, None
    try:
        options = {"num_cpus": None} if args.backend == "ray" else {}
        # one kill per round at most: allow a retry more than the kills per round
        result = league.run(
            rounds * players * args.chunk_steps, backend=args.backend, max_retries=3, **options
        )
    except Exception as exc:  # noqa: BLE001 - reported below
        finished, error, result = False, repr(exc), None
    seconds = time.perf_counter() - start
    state = json.loads((root / "league.json").read_text())
    archive = SnapshotArchive(root / "archive")
    rows = archive.n_matches()
    known = {s for p in state["learners"] for s in p["snapshots"]}
    known |= set(state["final_snapshots"].values())
    orphans = [
        i.id
        for i in archive.snapshots()
        if any(t.startswith("parent:") for t in i.tags) and i.id not in known
    ]
    exact = all(p["steps"] == state["round"] * args.chunk_steps for p in state["learners"])
    report = {
        "backend": args.backend,
        "players": players,
        "rounds": state["round"],
        "chunk_steps": args.chunk_steps,
        "kills": len(kills),
        "workers_lost": len(result.lost_workers) if result else None,
        "finished": finished,
        "error": error,
        "games_reported": reported["games"],
        "game_rows": rows,
        "games_lost": reported["games"] - rows,
        "orphan_snapshots": len(orphans),
        "exact_steps": exact,
        "seconds": round(seconds, 1),
    }
    (out / "league_faults.json").write_text(json.dumps(report, indent=1))
    print(f"{'backend':<10}{'kills':>6}{'lost':>6}{'finished':>10}{'rounds':>8}"
          f"{'games':>8}{'lost':>6}{'orphans':>9}{'exact':>7}{'s':>7}")  # fmt: skip
    print(
        f"{args.backend:<10}{len(kills):>6}{report['workers_lost']!s:>6}{finished!s:>10}"
        f"{state['round']:>8}{rows:>8}{report['games_lost']:>6}{len(orphans):>9}"
        f"{exact!s:>7}{seconds:>7.0f}"
    )
    return 0 if finished and report["games_lost"] == 0 and not orphans and exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
