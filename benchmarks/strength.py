"""How strong does `sp-wrappers train` get, and how fast? Reference opponents at several budgets.

Trains one run with the game's recipe (or reads an existing run directory), then takes the
archive snapshot nearest each step budget and plays it, deterministically, against reference
opponents in both seats:

- tictactoe_v3: RandomPolicy and the perfect minimax player (random tie-breaks);
- connect_four_v3: RandomPolicy and alpha-beta search at depths 1, 2 and 4 (random tie-breaks).

The opponents' random tie-breaks give the games their variety. Targets (issue 6):

- tic-tac-toe within 1M learner steps: no losses to RandomPolicy, >= 95% draws and <= 1% losses
  against perfect play;
- Connect Four within 5M learner steps: >= 90% wins against depth-2 search.

Run:
    python benchmarks/strength.py tictactoe_v3 --timesteps 1000000 --out runs/strength-ttt
    python benchmarks/strength.py connect_four_v3 --timesteps 5000000 --out runs/strength-c4
    python benchmarks/strength.py tictactoe_v3 --run runs/strength-ttt      # evaluate only

Writes RUN_DIR/strength.json and prints one table row per (budget, opponent).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from sp_wrappers.archive import SnapshotArchive
from sp_wrappers.baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy
from sp_wrappers.evaluation import play_match
from sp_wrappers.games import game_factory
from sp_wrappers.policies import RandomPolicy
from sp_wrappers.train import main_train

OPPONENTS = {
    "tictactoe_v3": lambda: [RandomPolicy(), PerfectTicTacToePolicy()],
    "connect_four_v3": lambda: (
        [RandomPolicy()] + [AlphaBetaConnectFourPolicy(depth=d) for d in (1, 2, 4)]
    ),
}
DEFAULT_BUDGETS = {
    "tictactoe_v3": [100_000, 200_000, 500_000, 1_000_000],
    "connect_four_v3": [250_000, 500_000, 1_000_000, 2_000_000, 5_000_000],
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", choices=sorted(OPPONENTS))
    parser.add_argument(
        "--timesteps", type=int, default=None, help="training budget (learner steps)"
    )
    parser.add_argument("--out", type=Path, default=None, help="run directory to train into")
    parser.add_argument("--run", type=Path, default=None, help="evaluate this run; no training")
    parser.add_argument("--budgets", type=int, nargs="+", default=None, help="steps to evaluate at")
    parser.add_argument("--games", type=int, default=200, help="games per opponent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--train-args",
        nargs=argparse.REMAINDER,
        default=[],
        help="further `sp-wrappers train` options (put last)",
    )
    return parser.parse_args()


def nearest_snapshot(archive: SnapshotArchive, budget: int):
    """The newest snapshot taken at or before ``budget`` steps (1% slack for rollout rounding)."""
    eligible = [s for s in archive.snapshots() if s.step <= budget * 1.01]
    return eligible[-1] if eligible else None


def targets(game: str, step: int, results: dict) -> list[str]:
    lines = []
    if game == "tictactoe_v3" and step <= 1_010_000:
        r, m = results["random"], results["minimax"]
        ok = (
            r["losses"] == 0
            and m["draws"] >= 0.95 * m["games"]
            and m["losses"] <= 0.01 * m["games"]
        )
        lines.append(
            f"tic-tac-toe target (0 losses to random, >=95% draws, <=1% losses vs "
            f"minimax within 1M steps): {'MET' if ok else 'not met'}"
        )
    if game == "connect_four_v3" and step <= 5_050_000:
        d2 = results["alphabeta-d2"]
        ok = d2["wins"] >= 0.9 * d2["games"]
        lines.append(
            f"connect-four target (>=90% wins vs depth 2 within 5M steps): "
            f"{'MET' if ok else 'not met'} ({100 * d2['wins'] / d2['games']:.0f}%)"
        )
    return lines


def main() -> int:
    args = parse_args()
    run = args.run
    if run is None:
        run = args.out or Path(f"runs/strength-{args.game}")
        argv = [args.game, "--out", str(run), "--seed", str(args.seed), *args.train_args]
        if args.timesteps:
            argv += ["--timesteps", str(args.timesteps)]
        status = main_train(argv)
        if status:
            return status
    config = json.loads((run / "config.json").read_text())
    archive = SnapshotArchive(run / "archive", create=False)
    budgets = args.budgets or [b for b in DEFAULT_BUDGETS[args.game] if b <= config["timesteps"]]
    budgets = budgets or [config["timesteps"]]
    env_fn = game_factory(config["game"], config["game_kwargs"])
    report = {
        "run": str(run),
        "game": args.game,
        "games_per_opponent": args.games,
        "config": config,
        "budgets": [],
    }
    print(
        f"\n{args.game}: deterministic snapshots vs reference opponents, {args.games} games each,"
        " seats alternating (W-D-L; per seat in brackets)"
    )
    for budget in budgets:
        snapshot = nearest_snapshot(archive, budget)
        if snapshot is None:
            continue
        learner = archive.load_policy(snapshot.id, deterministic=True)
        results = {}
        for index, opponent in enumerate(OPPONENTS[args.game]()):
            start = time.perf_counter()
            match = play_match(env_fn, learner, opponent, args.games, seed=args.seed + 1000 * index)
            results[opponent.policy_id] = {
                "games": match.n_games,
                "wins": match.wins,
                "draws": match.draws,
                "losses": match.losses,
                "by_seat": {seat: list(wdl) for seat, wdl in match.by_seat().items()},
            }
            seats = "  ".join(f"{s} {w}-{d}-{lo}" for s, (w, d, lo) in match.by_seat().items())
            print(
                f"  {snapshot.step:>9,d} steps ({snapshot.id})  vs {opponent.policy_id:<13} "
                f"{match.wins:4d}-{match.draws:4d}-{match.losses:4d}   [{seats}]  "
                f"({time.perf_counter() - start:.0f}s)",
                flush=True,
            )
        for line in targets(args.game, snapshot.step, results):
            print("    " + line)
        report["budgets"].append(
            {"budget": budget, "snapshot": snapshot.id, "step": snapshot.step, "results": results}
        )
    (run / "strength.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {run / 'strength.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
