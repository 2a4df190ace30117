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
4. exploitability: a fresh MaskablePPO trained for --exploit-steps against each final main agent
   (sampling its actions), and the win rate it then reaches (both sampling, from the openings);
5. with --overhead-steps N, the same league run for N steps on the process and on the Ray
   backend: learner steps per second per player (learning only) and seconds per round.

Run (the full comparison takes hours on a few cores):
    python benchmarks/league.py --timesteps 3000000 --exploit-steps 300000 --out runs/bench-league
    python benchmarks/league.py --ladder-only --depths 1 2 4 6 --out runs/bench-ladder
    python benchmarks/league.py --timesteps 6000 --chunk-steps 1024 --exploit-steps 2048 \\
        --depths 1 2 --overhead-steps 6144 --out /tmp/bench-league-tiny      # a smoke test

Writes OUT/league.json and prints one table per measurement.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
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

GAME = "connect_four_v3"
OPENINGS = list(itertools.product(range(7), repeat=2))


def parse_args() -> argparse.Namespace:
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
    return parser.parse_args()


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
def train_arm(name: str, builder: Any, args: argparse.Namespace, make_model: RecipeModel) -> Any:
    league = League(
        game_factory(GAME),
        builder,
        make_model,
        args.out / name,
        chunk_steps=args.chunk_steps,
        n_envs=args.n_envs,
        seed=args.seed,
    )
    result = league.run(args.timesteps, backend=args.backend)
    print(result, flush=True)
    return league, result


def exploitability(
    target: tuple[str, Any], args: argparse.Namespace, make_model: RecipeModel
) -> float:
    """A fresh learner's score against ``target`` (sampling) after ``--exploit-steps``."""
    from sp_wrappers.envs.vector.factory import make_selfplay_vec_env

    opponent = make_player(target, deterministic=False)
    venv = make_selfplay_vec_env(
        game_factory(GAME), n_envs=args.n_envs, seed=args.seed, opponent=opponent
    )
    model = make_model(venv)
    model.learn(args.exploit_steps)
    from sp_wrappers.core.policies import SB3Policy

    exploiter = SB3Policy(model, policy_id="exploiter", deterministic=False)
    games = []
    for k, opening in enumerate(OPENINGS):
        for a_first in (True, False):
            score = play_from_opening(exploiter, opponent, opening, a_first, 2 * k + a_first)
            games.append(score)
    venv.close()
    return float(np.mean(games))


def make_model_for(args: argparse.Namespace) -> RecipeModel:
    """MaskablePPO with the connect_four_v3 recipe's hyperparameters."""
    recipe = recipe_for(GAME)
    return RecipeModel(recipe.algo, recipe.hyperparams, seed=args.seed)


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


def main() -> None:
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.ladder_only:
        ladder(args)
        return
    if args.overhead_only:
        overhead = ray_overhead(args, make_model_for(args))
        (args.out / "overhead.json").write_text(json.dumps(overhead, indent=2))
        return
    make_model = make_model_for(args)
    start = time.perf_counter()
    league, league_result = train_arm("league", alphastar_league(args), args, make_model)
    selfplay = SelfPlayLeague(save_every=args.save_every, latest_ratio=0.5, window=20)
    plain, plain_result = train_arm("selfplay", selfplay, args, make_model)
    mains = {
        "league-main": (
            "snapshot",
            (str(league.archive.path), league_result.final_snapshots["main_agent_0"]),
        ),
        "selfplay": (
            "snapshot",
            (str(plain.archive.path), plain_result.final_snapshots["learner_0"]),
        ),
    }
    bots = {f"alphabeta-d{d}": ("bot", d) for d in args.depths}
    print(f"trained both arms in {time.perf_counter() - start:.0f}s; playing", flush=True)
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
    exploit = {name: exploitability(spec, args, make_model) for name, spec in mains.items()}
    print(f"\nexploitability (fresh exploiter, {args.exploit_steps} steps, its mean score):")
    for name, score in exploit.items():
        print(f"  {name:<12} {score:.3f}")
    overhead = ray_overhead(args, make_model) if args.overhead_steps else {}
    report = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "league": str(league_result),
        "selfplay": str(plain_result),
        "records": table,
        "ratings": {row.player: row._asdict() for row in ratings.table()},
        "exploitability": exploit,
        "ray_overhead": overhead,
        "seconds": time.perf_counter() - start,
    }
    (args.out / "league.json").write_text(json.dumps(report, indent=2))
    print(f"\nwrote {args.out / 'league.json'} in {report['seconds']:.0f}s")


if __name__ == "__main__":
    main()
