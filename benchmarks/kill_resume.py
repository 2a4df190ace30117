"""Kill test: SIGKILL one ``sp-wrappers train`` run again and again, ``--resume`` it each time,
and check that nothing it had recorded is lost.

The run (tic-tac-toe, bounded archive, a Bradley-Terry refit every ``--fit-every`` steps) is
killed ``--kills`` times, each at a random moment of a ``--segment`` of steps, aimed in turn at:
a snapshot save (fired when a ``.snapshot-*.tmp`` appears in the archive), a rating fit, a
rollout, the ``model.zip`` checkpoint (fired when ``model.tmp.zip`` appears), or no phase at all.
To aim at a phase and to name the phase a kill really landed in, the run is frozen with SIGSTOP,
its Python stack is read with py-spy (optional: ``pip install py-spy``; without it phases are
"unknown" and the fit and rollout kills land at random moments), and it is then SIGKILLed or let
go on with SIGCONT. While the run is frozen the archive index is read: what it lists then is what
the run had recorded before the kill ("before"). After the kill it is read again and every listed
snapshot is loaded (hash checked) ("after"). Then the run is resumed with ``--resume RUN``; the
last resume adds ``--timesteps`` (half a segment) so the run ends, evaluates and writes
``ratings.json``.

Checked after each kill: every snapshot listed before is still listed and loads, every match row
recorded before is still there (count and ids); after each resume: it started from the step of the
``model.zip`` checkpoint the kill left, the archive still holds every earlier record (pruned
snapshots keep their index rows), and the stored 'bt' ratings were refitted.

    pip install py-spy
    python benchmarks/kill_resume.py --out /tmp/kill-resume           # 10 kills, ~15 min on 2 cores
    python benchmarks/kill_resume.py --kills 2 --segment 8000 --out /tmp/kill-quick
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

TARGETS = ("snapshot save", "rating fit", "rollout", "checkpoint save (model.zip)", "random")

# (function, file, phase): the innermost frame of the main thread that matches decides the phase.
PHASES = (
    ("record_matches", "sp_wrappers/archive.py", "match write"),
    ("set_ratings", "sp_wrappers/archive.py", "rating write"),
    ("fit_ratings", "sp_wrappers/callbacks.py", "rating fit"),
    ("fit_bradley_terry", "sp_wrappers/ratings.py", "rating fit"),
    ("attribute_learner_matches", "sp_wrappers/callbacks.py", "rating fit"),
    ("prune", "sp_wrappers/archive.py", "snapshot save"),
    ("save", "sp_wrappers/archive.py", "snapshot save"),
    ("save_model", "sp_wrappers/train.py", "checkpoint save (model.zip)"),
    ("_sync_latest_weights", "sp_wrappers/callbacks.py", "weight sync"),
    ("_evaluate", "sp_wrappers/summary.py", "final evaluation"),
    ("_rate", "sp_wrappers/summary.py", "final rating fit"),
    ("collect_rollouts", "", "rollout"),
    ("train", "ppo", "gradient update"),
)
FRAME = re.compile(r"^\s*(\S+) \((.*):\d+\)")


@dataclass
class State:
    """What the run directory holds at one moment."""

    listed: dict[str, int]  # listed snapshot id -> step
    rows: set[str]  # every snapshot row, pruned ones included
    matches: set[int]  # match ids
    bt: dict[str, float]  # stored 'bt' ratings
    checkpoint: int  # num_timesteps in model.zip
    newest_step: int  # newest step in the match history
    in_flight: list[str]  # temporary files of writes in progress


def read_state(run: Path) -> State:
    conn = sqlite3.connect(run / "archive" / "index.sqlite", timeout=30.0)
    try:
        rows = conn.execute("SELECT id, step, pruned, ratings FROM snapshots").fetchall()
        matches = {r[0] for r in conn.execute("SELECT id FROM matches")}
        newest = conn.execute("SELECT max(step) FROM matches").fetchone()[0] or 0
    finally:
        conn.close()
    bt = {sid: json.loads(r)["bt"] for sid, _, _, r in rows if "bt" in json.loads(r)}
    tmp = [p.name for p in (run / "archive" / "snapshots").glob(".*.tmp")]
    tmp += [p.name for p in run.glob("*.tmp*")]
    return State(
        listed={sid: step for sid, step, pruned, _ in rows if not pruned},
        rows={sid for sid, *_ in rows},
        matches=matches,
        bt=bt,
        checkpoint=checkpoint_step(run),
        newest_step=int(newest),
        in_flight=sorted(tmp),
    )


def checkpoint_step(run: Path) -> int:
    try:
        with zipfile.ZipFile(run / "model.zip") as model:
            return int(json.loads(model.read("data"))["num_timesteps"])
    except (OSError, KeyError, zipfile.BadZipFile):
        return -1


def loadable(run: Path, ids: list[str]) -> int:
    """How many of the snapshots ``ids`` load from the archive (hash checked)."""
    from sp_wrappers import SnapshotArchive
    from sp_wrappers.archive.store import CorruptSnapshotError

    archive = SnapshotArchive(run / "archive", create=False)
    ok = 0
    for sid in ids:
        try:
            ok += archive.load_policy(sid).policy_id == sid
        except (CorruptSnapshotError, KeyError) as error:
            print(f"  cannot load {sid}: {error}")
    archive.close()
    return ok


def phase_of(pid: int, py_spy: str | None) -> str:
    """The phase the (stopped) process is in, read from its main thread's Python stack."""
    if py_spy is None:
        return "unknown"
    dump = subprocess.run(
        [py_spy, "dump", "--pid", str(pid), "--nonblocking"], capture_output=True, text=True
    ).stdout
    main = dump.split('"MainThread"', 1)[-1].split("\nThread ", 1)[0]
    frames = [m.groups() for m in map(FRAME.match, main.splitlines()) if m]
    for function, path in frames:
        for name, file, phase in PHASES:
            if function.rsplit(".", 1)[-1] == name and file in path:  # Class.method or function
                return phase
    return "other: " + (frames[0][0] if frames else "?")


def freeze_in(proc: subprocess.Popen, run: Path, target: str, py_spy: str | None) -> str:
    """SIGSTOP the run inside ``target`` (or after 90 s of trying); returns the phase it is in."""
    stop = lambda: os.killpg(proc.pid, signal.SIGSTOP)  # noqa: E731
    deadline = time.monotonic() + 90.0
    snapshots = run / "archive" / "snapshots"
    if target in ("snapshot save", "checkpoint save (model.zip)"):  # watch for its temporary file
        where, suffix = (snapshots, ".tmp") if target == "snapshot save" else (run, ".tmp.zip")
        while time.monotonic() < deadline and proc.poll() is None:
            if any(name.endswith(suffix) for name in os.listdir(where)):
                stop()
                return phase_of(proc.pid, py_spy)
            time.sleep(0.001)
    elif target != "random" and py_spy is not None:  # sample the stack until it is there
        while time.monotonic() < deadline and proc.poll() is None:
            stop()
            phase = phase_of(proc.pid, py_spy)
            if phase == target:
                return phase
            os.killpg(proc.pid, signal.SIGCONT)
            time.sleep(random.uniform(0.02, 0.08))
    stop()
    return phase_of(proc.pid, py_spy)


def start(command: list[str], log: Path) -> subprocess.Popen:
    print("$", " ".join(command[2:]), flush=True)
    with open(log, "a") as handle:
        return subprocess.Popen(command, stdout=handle, stderr=handle, start_new_session=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--segment", type=int, default=15_000, help="learner steps between kills")
    parser.add_argument("--save-every", type=int, default=3_000)
    parser.add_argument("--fit-every", type=int, default=2_500)
    parser.add_argument("--max-snapshots", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0, help="seeds the kill moments")
    parser.add_argument("--py-spy", default=shutil.which("py-spy"), help="path to py-spy")
    parser.add_argument("--out", default="/tmp/sp-kill-resume", help="the run goes to OUT/run")
    args = parser.parse_args()
    random.seed(args.seed)
    out = Path(args.out)
    run, log = out / "run", out / "train.log"
    if run.exists():
        sys.exit(f"{run} exists; pass another --out.")
    out.mkdir(parents=True, exist_ok=True)
    if args.py_spy is None:
        print("py-spy not found: phases are not named and fit/rollout kills land at random.")
    train = [sys.executable, "-m", "sp_wrappers.cli", "train"]
    options = ["--no-progress", "--no-plots"]
    budget = 10 * args.segment * args.kills  # more steps than the kills leave time for
    proc = start(
        train + ["tictactoe_v3", "--out", str(run), "--timesteps", str(budget),
                 "--save-every", str(args.save_every), "--fit-every", str(args.fit_every),
                 "--max-snapshots", str(args.max_snapshots), "--eval-games", "20", *options],
        log,
    )  # fmt: skip
    rows, everything_before = [], None
    resumed_from = 0
    started = time.perf_counter()
    for kill in range(1, args.kills + 1):
        target = TARGETS[(kill - 1) % len(TARGETS)]
        # -- run to a random moment of this segment, then aim at the phase and freeze ---------
        goal = resumed_from + int(random.uniform(0.4, 1.0) * args.segment)
        while proc.poll() is None:
            if (run / "model.zip").exists() and (run / "archive" / "index.sqlite").exists():
                if read_state(run).newest_step >= goal:
                    break
            time.sleep(0.25)
        if proc.poll() is not None:
            sys.exit(f"train exited with status {proc.returncode} before kill {kill}; see {log}")
        phase = freeze_in(proc, run, target, args.py_spy)
        before = read_state(run)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

        # -- what survived the kill -------------------------------------------------------------
        after = read_state(run)
        history = json.loads((run / "config.json").read_text())["history"]
        lost_snapshots = sorted(set(before.listed) - set(after.listed))
        lost_matches = before.matches - after.matches
        loads = loadable(run, sorted(after.listed))
        row = dict(
            kill=kill, target=target, phase=phase, step=before.newest_step,
            checkpoint=before.checkpoint, resumed_from=history[-1]["from_step"],
            snapshots_before=len(before.listed), snapshots_after=len(after.listed),
            loadable=loads, matches_before=len(before.matches), matches_after=len(after.matches),
            lost=len(lost_snapshots) + len(lost_matches), in_flight=",".join(before.in_flight),
        )  # fmt: skip
        # -- and what the previous resume kept, continued and refitted -------------------------
        if everything_before is not None:
            prev = everything_before
            row["kept"] = prev.rows <= after.rows and prev.matches <= after.matches
            row["continued"] = history[-1]["from_step"] == prev.checkpoint
            row["bt_refit"] = any(after.bt.get(k) != v for k, v in prev.bt.items()) or bool(
                set(after.bt) - set(prev.bt)
            )
        rows.append(row)
        everything_before = after
        print(
            f"kill {kill:2d} ({target}): landed in {phase} at step ~{before.newest_step:,d}, "
            f"model.zip at {before.checkpoint:,d}; lost {row['lost']}; "
            f"in flight: {row['in_flight'] or '-'}",
            flush=True,
        )
        # -- resume: plainly, and the last time for half a segment more so the run finishes ---
        resumed_from = after.checkpoint
        last = ["--timesteps", str(args.segment // 2)] if kill == args.kills else []
        proc = start(train + ["--resume", str(run), *last, *options], log)

    status = proc.wait()
    final = read_state(run)
    config = json.loads((run / "config.json").read_text())
    ratings = json.loads((run / "ratings.json").read_text()) if status == 0 else {}
    newest = max(final.listed.values()) if final.listed else -1
    rows[-1].setdefault("kept", None)
    last_kept = everything_before.rows <= final.rows and everything_before.matches <= final.matches
    last_continued = config["history"][-1]["from_step"] == everything_before.checkpoint
    last_refit = any(final.bt.get(k) != v for k, v in everything_before.bt.items())
    loads = loadable(run, sorted(final.listed))

    # -- report ---------------------------------------------------------------------------------
    print()
    print("| kill | aimed at | landed in | step | model.zip | resumed from "
          "| snapshots before/after (loadable) | matches before/after | lost | in flight "
          "| next resume: kept, continued, bt refit |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows):
        nxt = rows[i + 1] if i + 1 < len(rows) else {}
        follow = (
            (nxt.get("kept"), nxt.get("continued"), nxt.get("bt_refit"))
            if nxt
            else (last_kept, last_continued, last_refit)
        )
        print(
            f"| {r['kill']} | {r['target']} | {r['phase']} | {r['step']:,d} | "
            f"{r['checkpoint']:,d} | {config['history'][r['kill']]['from_step']:,d} | "
            f"{r['snapshots_before']}/{r['snapshots_after']} ({r['loadable']}) | "
            f"{r['matches_before']:,d}/{r['matches_after']:,d} | {r['lost']} | "
            f"{r['in_flight'] or '-'} | {', '.join('yes' if f else 'NO' for f in follow)} |"
        )
    lost = sum(r["lost"] for r in rows)
    survived = sum(
        r["lost"] == 0 and r["loadable"] == r["snapshots_after"] for r in rows
    )  # fmt: skip
    resumed_ok = all(r.get("kept", True) and r.get("continued", True) for r in rows)
    total = final.checkpoint  # the learner's steps in the final model.zip
    print()
    print(f"final run: exit status {status}, {total:,d} learner steps, final snapshot at step "
          f"{newest:,d}, {len(final.listed)} snapshots listed ({loads} load), "
          f"{len(final.rows) - len(final.listed)} pruned, {len(final.matches):,d} matches, "
          f"ratings.json {'written' if ratings else 'MISSING'}, temporary files left: "
          f"{', '.join(final.in_flight) or 'none'}")  # fmt: skip
    print(f"{survived}/{args.kills} kills survived; {lost} records lost; resumes kept every "
          f"record and continued from the checkpoint: {'yes' if resumed_ok else 'NO'}; "
          f"{(time.perf_counter() - started) / 60:.1f} min")  # fmt: skip
    (out / "kill_resume.json").write_text(json.dumps(rows, indent=1, default=str))
    ok = status == 0 and lost == 0 and survived == args.kills and resumed_ok and last_kept
    return 0 if ok and loads == len(final.listed) and newest == total else 1


if __name__ == "__main__":
    sys.exit(main())
