"""Does a league beat plain self-play at equal compute? Connect Four, no reference bots in training.

Trains two arms with the connect_four_v3 recipe's algorithm and hyperparameters (MaskablePPO) and
the same total learner steps, neither ever playing a bot:

- league: AlphaStarLeague(1 main agent, 1 main exploiter, 1 league exploiter), steps shared by
  its three players;
- selfplay: SelfPlayLeague (one learner: latest weights 50%, else its newest 20 snapshots).

Then it measures, from every two-move opening (49 openings x both seats, so deterministic
players do not replay one game):

1. the ladder: alpha-beta depths 1, 2, 4 and 6 against each other;
2. each arm's final main agent (deterministic) against every rung, and the two mains head to head;
3. one Bradley-Terry scale over all of those games (random tie-breaks give the bots variety);
4. exploitability: a learned best response (sp_wrappers.learned_best_response), a fresh learner
   of the recipe trained for --exploit-steps against each final main agent (sampling its
   actions) and nothing else, then its score from the openings (greedy) with a 95% interval
   and its curve: a lower bound on exploitability, the same budget for both arms;
5. with --overhead-steps N, the same league run for N steps on the process and on the Ray
   backend: learner steps per second per player (learning only) and seconds per round.

Run (the full comparison takes hours on a few cores), one arm per command so that each survives
a session's end, then the measurements:
    python benchmarks/league.py --timesteps 1500000 --arms league --resume --out runs/bench-league
    python benchmarks/league.py --timesteps 1500000 --arms selfplay --resume --out runs/bench-league
    python benchmarks/league.py --timesteps 1500000 --exploit-steps 200000 --out runs/bench-league
    python benchmarks/league.py --ladder-only --depths 1 2 4 6 --out runs/bench-ladder
    python benchmarks/league.py --timesteps 6000 --chunk-steps 1024 --exploit-steps 2048 \\
        --depths 1 2 --overhead-steps 6144 --out /tmp/bench-league-tiny      # a smoke test

Each arm is a League in OUT/ARM, which writes its league.json, model files and archive at the end
of every round: with `--resume` an arm killed mid-way continues from its last complete round
(without it a half-trained arm is refused); a trained arm (OUT/ARM/done.json) is not trained
again, and each exploitability figure is kept in OUT/exploit-NAME.json once measured. Writes as
it goes OUT/results.jsonl (one JSON line per event: `start`, `heartbeat` every `--heartbeat`
seconds with the arm's steps and the load average, `trained`), at the end OUT/league.json, and
prints one table per measurement; `--report` prints the docs/benchmarks.md table again from
OUT/league.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy
from sp_wrappers.games.registry import game_factory
from sp_wrappers.league import AlphaStarLeague, League, SelfPlayLeague
from sp_wrappers.ratings.bradley_terry import fit_bradley_terry
from sp_wrappers.runs.league import RecipeModel
from sp_wrappers.runs.recipes import recipe_for
from sp_wrappers.training.best_response import LOWER_BOUND

sys.path.insert(0, str(Path(__file__).parent))  # the journal of strength_mechanisms.py
from strength_mechanisms import Journal, heartbeat  # noqa: E402

GAME = "connect_four_v3"
ARMS = ("league", "selfplay")
OPENINGS = list(itertools.product(range(7), repeat=2))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=3_000_000, help="per arm, all players")
    parser.add_argument("--chunk-steps", type=int, default=16_384)
    parser.add_argument("--snapshot-max-steps", type=int, default=200_000)
    parser.add_argument("--save-every", type=int, default=100_000, help="selfplay snapshots")
    parser.add_argument("--n-envs", type=int, default=16)
    parser.add_argument("--exploit-steps", type=int, default=300_000)
    parser.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 6])
    parser.add_argument("--overhead-steps", type=int, default=0, help="0 skips the Ray overhead")
    parser.add_argument("--backend", default="process", choices=["process", "ray", "serial"])
    parser.add_argument("--workers", type=int, default=4, help="processes playing games")
    parser.add_argument("--ladder-only", action="store_true", help="only the bots' ladder")
    parser.add_argument("--overhead-only", action="store_true", help="only the Ray overhead")
    parser.add_argument(
        "--overhead-backends", nargs="+", default=["process", "ray"], help="in this order"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS),
                        help="train these arms; the measurements need both")  # fmt: skip
    parser.add_argument(
        "--resume", action="store_true", help="continue a half-trained arm from its last round"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads per player")
    parser.add_argument("--num-workers", type=int, default=0,
                        help="worker processes stepping each player's games")  # fmt: skip
    parser.add_argument("--heartbeat", type=float, default=60.0, help="seconds between lines")
    parser.add_argument(
        "--hp", action="append", default=[], metavar="KEY=VALUE", help="more hyperparameters"
    )
    parser.add_argument("--report", action="store_true", help="only print OUT/league.json's table")
    return parser.parse_args(argv)


# -- players -----------------------------------------------------------------------------------
def make_player(spec: tuple[str, Any], deterministic: bool = True) -> Any:
    """``("bot", depth)`` or ``("snapshot", (archive_dir, snapshot_id))``."""
    kind, value = spec
    if kind == "bot":
        return AlphaBetaConnectFourPolicy(depth=value)
    archive_dir, snapshot_id = value
    return SnapshotArchive(archive_dir).load_policy(snapshot_id, deterministic=deterministic)


def play_from_opening(a: Any, b: Any, opening: tuple[int, int], a_first: bool, seed: int) -> float:
    """``a``'s score in one game whose first two moves are ``opening``."""
    env = game_factory(GAME)()
    env.reset(seed=seed)
    for move in opening:
        env.step(move)
    first, second = env.possible_agents
    players = {first: a if a_first else b, second: b if a_first else a}
    rng = np.random.default_rng(seed)
    final: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final[agent] = reward
            env.step(None)
            continue
        action = players[agent].act(obs["observation"][None], obs["action_mask"][None], rng)[0]
        env.step(int(action))
    reward_a = final[first if a_first else second]
    return 1.0 if reward_a > 0 else 0.0 if reward_a < 0 else 0.5


def _play_task(task: tuple) -> list[tuple[str, str, float]]:
    import torch

    torch.set_num_threads(1)
    (name_a, spec_a), (name_b, spec_b), openings, deterministic, seed = task
    a, b = make_player(spec_a, deterministic), make_player(spec_b, deterministic)
    games = []
    for k, opening in enumerate(openings):
        for a_first in (True, False):
            score = play_from_opening(a, b, opening, a_first, seed + 2 * k + a_first)
            games.append((name_a, name_b, score))
    return games


def play_pairs(pairs: list, workers: int, deterministic: bool = True, seed: int = 0) -> list:
    """Every pair from all 49 openings x both seats, split over ``workers`` processes."""
    tasks = [
        (a, b, OPENINGS[i : i + 7], deterministic, seed + 1000 * n + i)
        for n, (a, b) in enumerate(pairs)
        for i in range(0, len(OPENINGS), 7)
    ]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [game for games in pool.map(_play_task, tasks) for game in games]


def record(games: list, a: str, b: str) -> tuple[int, int, int]:
    scores = [s if x == a else 1 - s for x, y, s in games if {x, y} == {a, b}]
    return scores.count(1.0), scores.count(0.5), scores.count(0.0)


# -- training ----------------------------------------------------------------------------------
def train_arm(name: str, builder: Any, args: argparse.Namespace, make_model: RecipeModel) -> dict:
    """Train (or, with ``--resume``, continue) one arm; its ``done.json``: steps, speed, time,
    load and its main agent's final snapshot."""
    directory = args.out / name
    done = directory / "done.json"
    if done.exists():
        return json.loads(done.read_text())
    if (directory / "league.json").exists() and not args.resume:
        raise SystemExit(
            f"arm {name} in {directory} was started and not finished: pass --resume to continue "
            "it from its last complete round, or remove the directory to train it again."
        )
    journal = Journal(args.out)
    league = League(
        game_factory(GAME),
        builder,
        make_model,
        directory,
        chunk_steps=args.chunk_steps,
        n_envs=args.n_envs,
        seed=args.seed,
        torch_threads=args.threads,
        vec_env_kwargs={"num_workers": args.num_workers},
    )
    before = league.total_steps()
    players = {n: p.steps for n, p in league.learners.items()}
    journal.write("start", name, step=before, threads=args.threads, num_workers=args.num_workers)
    with heartbeat(journal, name, league.total_steps, args.heartbeat):
        result = league.run(args.timesteps, backend=args.backend)
    print(result, flush=True)
    learn_seconds = sum(  # this session's learning time, summed over the players
        (p.steps - players[p.name]) / result.steps_per_second[p.name]
        for p in result.learners
        if result.steps_per_second.get(p.name)
    )
    rate = (league.total_steps() - before) / learn_seconds if learn_seconds else None
    journal.write("trained", name, step=league.total_steps(), steps_per_second=rate)
    main = "main_agent_0" if "main_agent_0" in result.final_snapshots else "learner_0"
    info = {
        "steps": league.total_steps(),
        "steps_per_player": {p.name: p.steps for p in result.learners},
        "steps_per_second": rate,
        "rounds": result.rounds,
        "archive": str(league.archive.path),
        "final_snapshot": result.final_snapshots[main],
        "summary": str(result),
        "threads": args.threads,
        "num_workers": args.num_workers,
        **journal.wall_and_load(name),
    }
    done.write_text(json.dumps(info, indent=1))
    return info


def exploitability(
    target: tuple[str, Any], args: argparse.Namespace, make_model: RecipeModel
) -> dict[str, Any]:
    """The learned best response against ``target`` (sampling): a fresh learner of the recipe
    trained against it alone for ``--exploit-steps``, then scored greedily from the 49 openings
    in both seats (``learned_best_response``); its score is a lower bound on exploitability."""
    from sp_wrappers.training.best_response import learned_best_response

    result = learned_best_response(
        game_factory(GAME),
        make_player(target, deterministic=False),
        make_model,
        steps=args.exploit_steps,
        n_envs=args.n_envs,
        seed=args.seed,
        evaluations=4,
        plies=2,
    )
    return result.to_dict()


def exploit_score(value: Any) -> float:
    """The score of an ``exploit-NAME.json`` (a number where an older version wrote one)."""
    return float(value["score"] if isinstance(value, dict) else value)


def make_model_for(args: argparse.Namespace) -> RecipeModel:
    """MaskablePPO with the connect_four_v3 recipe's hyperparameters."""
    recipe = recipe_for(GAME)
    hyperparams = dict(recipe.hyperparams)
    for pair in args.hp:
        key, _, raw = pair.partition("=")
        hyperparams[key] = json.loads(raw)
    return RecipeModel(recipe.algo, hyperparams, seed=args.seed)


def alphastar_league(args: argparse.Namespace) -> AlphaStarLeague:
    """1 main agent, 1 main exploiter, 1 league exploiter; AlphaStar's 1:2 step limits."""
    limit = args.snapshot_max_steps
    return AlphaStarLeague(1, 1, 1, snapshot_max_steps=limit, snapshot_min_steps=limit // 2)


def ray_overhead(args: argparse.Namespace, make_model: RecipeModel) -> dict[str, Any]:
    rows = {}
    for backend in args.overhead_backends:
        league = League(
            game_factory(GAME),
            alphastar_league(args),
            make_model,
            args.out / f"overhead-{backend}-{time.time_ns()}",
            chunk_steps=args.chunk_steps,
            n_envs=args.n_envs,
            seed=args.seed,
        )
        # Ray reserves num_cpus per player: three players must fit on this machine's CPUs.
        cpus = min(1.0, (os.cpu_count() or 1) / 3)
        options = {"num_cpus": cpus} if backend == "ray" else {}
        result = league.run(args.overhead_steps, backend=backend, **options)
        rows[backend] = {
            "steps_per_second": result.steps_per_second,
            "seconds_per_round": result.seconds / max(result.rounds, 1),
            "rounds": result.rounds,
        }
        print(backend, rows[backend], flush=True)
    return rows


def ladder(args: argparse.Namespace) -> None:
    """The bots against each other from the openings, on one Bradley-Terry scale."""
    bots = {f"alphabeta-d{d}": ("bot", d) for d in args.depths}
    pairs = list(itertools.combinations(bots.items(), 2))
    start = time.perf_counter()
    games = play_pairs(pairs, args.workers, seed=args.seed)
    ratings = fit_bradley_terry(games, anchor="alphabeta-d1", anchor_rating=1000.0)
    print(f"ladder from 49 openings x both seats ({time.perf_counter() - start:.0f}s):")
    print(ratings.format_table())
    records = {}
    for (a, _), (b, _) in pairs:
        records[f"{a} vs {b}"] = record(games, a, b)
        print(f"  {a:>14} vs {b:<14} {'-'.join(map(str, records[f'{a} vs {b}']))} (W-D-L)")
    report = {"ratings": {row.player: row._asdict() for row in ratings.table()}}
    report["records"] = records
    (args.out / "ladder.json").write_text(json.dumps(report, indent=2))


def cached(path: Path, measure: Any) -> Any:
    """``measure()``, kept in ``path`` once measured (a resumed run does not measure it again)."""
    if path.exists():
        return json.loads(path.read_text())
    value = measure()
    path.write_text(json.dumps(value))
    return value


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report:
        print(report(json.loads((args.out / "league.json").read_text())))
        return
    if args.ladder_only:
        ladder(args)
        return
    if args.overhead_only:
        overhead = ray_overhead(args, make_model_for(args))
        (args.out / "overhead.json").write_text(json.dumps(overhead, indent=2))
        return
    make_model = make_model_for(args)
    start = time.perf_counter()
    builders = {
        "league": alphastar_league(args),
        "selfplay": SelfPlayLeague(save_every=args.save_every, latest_ratio=0.5, window=20),
    }
    arms = {name: train_arm(name, builders[name], args, make_model) for name in args.arms}
    missing = [name for name in ARMS if not (args.out / name / "done.json").exists()]
    if missing:
        print(f"trained {sorted(arms)}; train {missing} (--arms) before the measurements")
        return
    arms = {name: json.loads((args.out / name / "done.json").read_text()) for name in ARMS}
    mains = {
        "league-main": ("snapshot", (arms["league"]["archive"], arms["league"]["final_snapshot"])),
        "selfplay": ("snapshot", (arms["selfplay"]["archive"], arms["selfplay"]["final_snapshot"])),
    }
    bots = {f"alphabeta-d{d}": ("bot", d) for d in args.depths}
    print(f"both arms trained ({time.perf_counter() - start:.0f}s here); playing", flush=True)
    pairs = list(itertools.combinations(bots.items(), 2))
    pairs += [(m, b) for m in mains.items() for b in bots.items()]
    pairs += [tuple(mains.items())]
    games = play_pairs(pairs, args.workers, seed=args.seed)
    ratings = fit_bradley_terry(games, anchor="alphabeta-d1", anchor_rating=1000.0)
    print("\nBradley-Terry, Elo scale, alphabeta-d1 = 1000 (98 games per pair, from 49 openings):")
    print(ratings.format_table())
    table = {}
    for a, b in [(x[0], y[0]) for x, y in pairs]:
        table[f"{a} vs {b}"] = record(games, a, b)
        print(f"  {a:>14} vs {b:<14} {'-'.join(map(str, table[f'{a} vs {b}']))} (W-D-L)")
    exploit = {
        name: cached(
            args.out / f"exploit-{name}-{args.exploit_steps}.json",
            lambda spec=spec: exploitability(spec, args, make_model),
        )
        for name, spec in mains.items()
    }
    print(f"\nlearned best response ({args.exploit_steps} steps; {LOWER_BOUND}):")
    for name, value in exploit.items():
        interval = value.get("score_ci95") if isinstance(value, dict) else None
        extra = f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
        print(f"  {name:<12} {exploit_score(value):.3f}{extra}")
    overhead = ray_overhead(args, make_model) if args.overhead_steps else {}
    result = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "arms": arms,
        "league": arms["league"]["summary"],
        "selfplay": arms["selfplay"]["summary"],
        "depths": args.depths,
        "records": table,
        "ratings": {row.player: row._asdict() for row in ratings.table()},
        "exploitability": exploit,
        "exploit_steps": args.exploit_steps,
        "ray_overhead": overhead,
        "evaluation_load": list(os.getloadavg()),
        "seconds": time.perf_counter() - start,
    }
    (args.out / "league.json").write_text(json.dumps(result, indent=2))
    print("\n" + report(result))
    print(f"\nwrote {args.out / 'league.json'} in {result['seconds']:.0f}s")


def report(result: dict[str, Any]) -> str:
    """The docs/benchmarks.md table: per arm its W-D-L per depth, rating with its 95% interval,
    the head to head, exploitability, steps, steps/s, wall time and load."""
    names = {"league-main": "league", "selfplay": "selfplay"}
    columns = " | ".join(["league main agent", "plain self-play"])
    lines = [f"| from 49 openings x both seats | {columns} |", "|---|---|---|"]

    def row(label: str, cell: Any) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(m, a) for m, a in names.items()) + " |")

    depths = result["depths"]
    row(
        "vs alpha-beta depth " + " / ".join(map(str, depths)) + " (W-D-L)",
        lambda m, a: " / ".join(
            "-".join(map(str, result["records"][f"{m} vs alphabeta-d{d}"])) for d in depths
        ),
    )

    def rating(m: str, a: str) -> str:
        r = result["ratings"][m]
        return f"{r['rating']:.0f} [{r['low']:.0f}, {r['high']:.0f}]"

    row("Bradley-Terry rating (depth 1 = 1000; 95% interval)", rating)
    lines.append(
        "| head to head (W-D-L, league main first) | "
        + "-".join(map(str, result["records"]["league-main vs selfplay"]))
        + " | |"
    )
    row(
        f"learned best response's score after {result['exploit_steps']:,d} steps (a lower bound "
        "on exploitability)",
        lambda m, a: f"{exploit_score(result['exploitability'][m]):.3f}",
    )
    arms = result["arms"]
    row("learner steps (all players)", lambda m, a: f"{arms[a]['steps']:,d}")
    row("learner steps/s", lambda m, a: f"{arms[a]['steps_per_second'] or float('nan'):.0f}")
    row(
        "training wall time (sessions)",
        lambda m, a: f"{arms[a]['wall_seconds'] / 60:.1f} min ({arms[a]['sessions']})",
    )
    row(
        "load average (mean / max)",
        lambda m, a: f"{arms[a]['load_mean']:.1f} / {arms[a]['load_max']:.1f}",
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
