"""How strong does `sp-wrappers train` get, and how fast? Reference opponents at several budgets.

Trains one run with the game's recipe (or reads an existing run directory), then takes the
archive snapshot nearest each step budget and plays it, deterministically (Pong: sampling its
actions), against reference opponents in both seats:

- tictactoe_v3: RandomPolicy and the perfect minimax player, from each of the 9 first moves;
- connect_four_v3: RandomPolicy and alpha-beta search at depths 1, 2 and 4, from each of the 49
  two-move openings;
- texas_holdem_v4: RandomPolicy, 1000 hands per seat (win rate, mean chips per hand);
- pong_v3: RandomPolicy, 5 games per seat, each to 21 points or 10,000 frames (about 2.8 min
  of play at 60 frames/s), whichever comes first (win rate by the score at the end, mean return:
  points won minus points lost, serve penalties included). The Pong learner samples its actions
  (as RL Baselines3 Zoo evaluates Atari games): a deterministic policy that never picks FIRE
  never serves, and loses a point every 2 seconds until the time limit.

Why forced openings: a deterministic learner against a search whose ties are rare replays a
handful of games however many seeds it gets ("50-50-0" may be two games, each repeated 50 times).
In the board games the first moves (`--plies`, the learner's included when it moves first) are
played by force, then both players choose their own; every opening is played from both seats
(`--repeats` times, reset seeds differ). Each line reports wins-draws-losses, per seat, how many
distinct games were played, and a 95% bootstrap interval of the win rate (or mean return) that
resamples openings (hands or games where there are no openings).

Targets: tic-tac-toe within 1M learner steps: no losses to RandomPolicy, >= 95% draws and <= 1%
losses against perfect play (issue 6); Connect Four: >= 90% wins against depth 2 within 5M
steps (issue 6); hold'em and Pong: beat RandomPolicy clearly (win rate >= 60% / 80% and the 95%
interval of the mean return above 0) within the recipe's budget (issue 15).

Run:
    python benchmarks/strength.py tictactoe_v3 --out runs/strength-ttt        # train, evaluate
    python benchmarks/strength.py connect_four_v3 --timesteps 1000000 --out runs/strength-c4
    python benchmarks/strength.py tictactoe_v3 --run runs/strength-ttt         # evaluate only
    python benchmarks/strength.py connect_four_v3 --run RUN --plies 0 --repeats 50  # seeded only

Writes RUN_DIR/strength.json (summaries, per-opening results) and prints one line per
(budget, opponent).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli.app import run_command
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.evaluation.openings import OpeningsResult, legal_openings, play_openings
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy, PerfectTicTacToePolicy
from sp_wrappers.games.registry import game_factory


@dataclass(frozen=True)
class Protocol:
    """How one game is measured."""

    opponents: Any  # () -> list of policies
    budgets: list[int]
    plies: int  # forced opening moves
    repeats: int  # games per opening and seat
    eval_kwargs: dict[str, Any] = field(default_factory=dict)  # game kwargs for evaluation
    deterministic: bool = True  # the learner's most likely action, else sampled


PROTOCOLS = {
    "tictactoe_v3": Protocol(
        lambda: [RandomPolicy(), PerfectTicTacToePolicy()],
        [100_000, 200_000, 500_000, 1_000_000],
        plies=1,
        repeats=5,
    ),
    "connect_four_v3": Protocol(
        lambda: [RandomPolicy()] + [AlphaBetaConnectFourPolicy(depth=d) for d in (1, 2, 4)],
        [250_000, 500_000, 1_000_000, 2_000_000, 5_000_000],
        plies=2,
        repeats=1,
    ),
    "texas_holdem_v4": Protocol(
        lambda: [RandomPolicy()], [10_000, 25_000, 50_000, 100_000], plies=0, repeats=1000
    ),
    "pong_v3": Protocol(
        lambda: [RandomPolicy()],
        [50_000, 100_000, 200_000, 300_000],
        plies=0,
        repeats=5,
        eval_kwargs={"max_cycles": 10_000},
        deterministic=False,
    ),
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", choices=sorted(PROTOCOLS))
    parser.add_argument(
        "--timesteps", type=int, default=None, help="training budget (learner steps)"
    )
    parser.add_argument("--out", type=Path, default=None, help="run directory to train into")
    parser.add_argument("--run", type=Path, default=None, help="evaluate this run; no training")
    parser.add_argument("--budgets", type=int, nargs="+", default=None, help="steps to evaluate at")
    parser.add_argument(
        "--plies", type=int, default=None, help="forced opening moves (default: the game's)"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="games per opening and seat (default: the game's)",
    )
    parser.add_argument(
        "--opponents", nargs="+", default=None, help="only these opponents (policy ids)"
    )
    parser.add_argument(
        "--deterministic",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the learner plays its most likely action (default: the game's; Pong samples)",
    )
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


def targets(game: str, step: int, results: dict[str, OpeningsResult]) -> list[str]:
    def verdict(ok: bool) -> str:
        return "MET" if ok else "not met"

    if game == "tictactoe_v3" and step <= 1_010_000:
        r, m = results.get("random"), results.get("minimax")
        if r is None or m is None:
            return []
        _, m_draws, m_losses = m.wdl()
        ok = r.wdl()[2] == 0 and m_draws >= 0.95 * m.n_games and m_losses <= 0.01 * m.n_games
        return [
            "tic-tac-toe target (0 losses to random, >=95% draws, <=1% losses vs minimax "
            f"within 1M steps): {verdict(ok)}"
        ]
    if game == "connect_four_v3" and step <= 5_050_000 and "alphabeta-d2" in results:
        d2 = results["alphabeta-d2"]
        ok = d2.wdl()[0] >= 0.9 * d2.n_games
        return [
            "connect-four target (>=90% wins vs depth 2 within 5M steps): "
            f"{verdict(ok)} ({100 * d2.wdl()[0] / d2.n_games:.0f}%)"
        ]
    threshold = {"texas_holdem_v4": 0.6, "pong_v3": 0.8}.get(game)
    if threshold is not None and "random" in results:
        r = results["random"]
        ok = r.wdl()[0] >= threshold * r.n_games and r.bootstrap("return")[0] > 0
        return [
            f"beats RandomPolicy clearly (>= {threshold:.0%} wins, 95% interval of the mean "
            f"return above 0): {verdict(ok)}"
        ]
    return []


def describe(result: OpeningsResult, seconds: float, returns: bool) -> str:
    wins, draws, losses = result.wdl()
    seats = "  ".join(f"{s} {w}-{d}-{lo}" for s, (w, d, lo) in result.by_seat().items())
    low, high = result.bootstrap("win")
    s_low, s_high = result.bootstrap("score")
    line = (
        f"{wins:4d}-{draws:4d}-{losses:4d}   [{seats}]  win {100 * wins / result.n_games:.0f}% "
        f"({100 * low:.0f}-{100 * high:.0f})  score {result.score:.2f} ({s_low:.2f}-{s_high:.2f})"
    )
    if returns:
        r_low, r_high = result.bootstrap("return")
        line += f"  return {result.mean_return:+.2f} ({r_low:+.2f}, {r_high:+.2f})"
    return line + f"  {result.distinct_games()} distinct of {result.n_games}  ({seconds:.0f}s)"


def main() -> int:
    args = parse_args()
    torch.set_num_threads(1)
    protocol = PROTOCOLS[args.game]
    run = args.run
    if run is None:
        run = args.out or Path(f"runs/strength-{args.game}")
        argv = [args.game, "--out", str(run), "--seed", str(args.seed), *args.train_args]
        if args.timesteps:
            argv += ["--timesteps", str(args.timesteps)]
        status = run_command("train", argv)
        if status:
            return status
    config = json.loads((run / "config.json").read_text())
    archive = SnapshotArchive(run / "archive", create=False)
    budgets = args.budgets or [b for b in protocol.budgets if b <= config["timesteps"]]
    budgets = budgets or [config["timesteps"]]
    env_fn = game_factory(config["game"], {**config["game_kwargs"], **protocol.eval_kwargs})
    plies = protocol.plies if args.plies is None else args.plies
    repeats = protocol.repeats if args.repeats is None else args.repeats
    openings = legal_openings(env_fn, plies)
    deterministic = protocol.deterministic if args.deterministic is None else args.deterministic
    report: dict[str, Any] = {
        "run": str(run),
        "game": args.game,
        "plies": plies,
        "openings": len(openings),
        "repeats": repeats,
        "deterministic": deterministic,
        "eval_kwargs": protocol.eval_kwargs,
        "config": config,
        "budgets": [],
    }
    print(
        f"\n{args.game}: {'deterministic' if deterministic else 'sampling'} snapshots vs "
        f"reference opponents from {len(openings)} openings of {plies} forced moves x both seats "
        f"x {repeats} (W-D-L [per seat]; win rate, "
        "score and, without openings, mean return with 95% bootstrap intervals over openings, "
        "or over games without openings; distinct games)"
    )
    opponents = [
        o for o in protocol.opponents() if args.opponents is None or o.policy_id in args.opponents
    ]
    for budget in budgets:
        snapshot = nearest_snapshot(archive, budget)
        if snapshot is None:
            continue
        learner = archive.load_policy(snapshot.id, deterministic=deterministic)
        results: dict[str, OpeningsResult] = {}
        for index, opponent in enumerate(opponents):
            start = time.perf_counter()
            result = play_openings(
                env_fn,
                learner,
                opponent,
                openings,
                repeats=repeats,
                seed=args.seed + 100_000 * index,
            )
            results[opponent.policy_id] = result
            print(
                f"  {snapshot.step:>9,d} steps ({snapshot.id})  vs {opponent.policy_id:<13} "
                + describe(result, time.perf_counter() - start, returns=plies == 0),
                flush=True,
            )
        for line in targets(args.game, snapshot.step, results):
            print("    " + line)
        report["budgets"].append(
            {
                "budget": budget,
                "snapshot": snapshot.id,
                "step": snapshot.step,
                "results": {name: r.summary() for name, r in results.items()},
            }
        )
    (run / "strength.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {run / 'strength.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
