"""How fast ``sp-wrappers`` answers what needs no model: help, a mistyped flag, a refusal.

Each command runs in a fresh interpreter (``python -m sp_wrappers.cli ...``, what the console
script runs), ``--repeat`` times; the table gives the median wall time and whether the run
imported torch or Stable-Baselines3 (it should not: they load once a command trains). The target
(issue #42) is under half a second for each command on an idle machine; ``import sp_wrappers``
alone is the floor.

    python benchmarks/cli_startup.py --repeat 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import sp_wrappers": ["-c", "import sp_wrappers"],
    "sp-wrappers --help": ["-m", "sp_wrappers.cli", "--help"],
    "sp-wrappers train --help": ["-m", "sp_wrappers.cli", "train", "--help"],
    "sp-wrappers league --help": ["-m", "sp_wrappers.cli", "league", "--help"],
    "sp-wrappers train --timestpes 3": ["-m", "sp_wrappers.cli", "train", "--timestpes", "3"],
    "sp-wrappers train chess": ["-m", "sp_wrappers.cli", "train", "chess"],
    "sp-wrappers ratings /no/such/run": ["-m", "sp_wrappers.cli", "ratings", "/no/such/run"],
}
#: Run after the command, in the same interpreter: did it import the learners?
PROBE = (
    "import sys, atexit\n"
    "heavy = {'torch', 'stable_baselines3'}\n"
    "atexit.register(lambda: print('HEAVY' if heavy & set(sys.modules) else '', file=sys.stderr))"
)


def run_once(args: list[str]) -> tuple[float, bool]:
    code = (
        args[1]
        if args[0] == "-c"
        else f"import runpy; runpy.run_module({args[1]!r}, run_name='__main__')"
    )
    argv = [] if args[0] == "-c" else args[2:]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", f"{PROBE}\nimport sys; sys.argv[1:] = {argv!r}\n{code}"],
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, "HEAVY" in done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (default: 5)")
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {options.repeat} runs each, median")
    print(f"{'command':<36} {'seconds':>8}  imports torch/SB3")
    for name, args in COMMANDS.items():
        runs = [run_once(args) for _ in range(options.repeat)]
        seconds = statistics.median(t for t, _ in runs)
        heavy = any(h for _, h in runs)
        print(f"{name:<36} {seconds:>8.2f}  {'yes' if heavy else 'no'}")


if __name__ == "__main__":
    main()
