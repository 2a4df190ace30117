"""Which mechanism makes Connect Four self-play strong at a stated budget? Four arms, one table.

Every arm learns the same number of learner steps (`--timesteps`, default 2M; a league counts
the steps of all its players together) on Connect Four with no reference bot in training
(`--reference-ratio 0`: snapshots, the latest weights and 10% RandomPolicy, as the recipe):

1. `mlp`: today's recipe as pure self-play, the MLP it had (net_arch [256, 256]);
2. `board`: the recipe's BoardExtractor (three 3x3 convolutions over the 6x7 board);
3. `board_sym`: BoardExtractor, every episode in a random left-right view (`--symmetries auto`);
4. `league`: the best of arms 2 and 3 (the higher ladder rating at the end of training, when
   they were trained in OUT; else board_sym; or `--league-features`) as an AlphaStarLeague of
   1 main agent, 1 main exploiter and 1 league exploiter, the main agent taking half of the
   league's learner steps (compute shares).

Then every arm's final learner (deterministic; the league's main agent) plays, from every
two-move opening (49) in both seats:

- alpha-beta at depths 1, 2, 4 and 6 (`--depths`): W-D-L per depth;
- each other arm: the arms head to head;

and gets a rating on the ladder's Bradley-Terry scale (the depths' games among themselves
pin the scale, depth 1 = 1000) with its 95% interval. During training each arm measures its
strength curve every `--eval-every` steps against depths 1, 2 and 4
(`sp_wrappers.training.strength.StrengthCallback`; `ARM/strength.json`, `ARM/plots/
strength.png`). Learner steps per second exclude those evaluations.

Run (about 2.5 hours on 2 CPU cores at 2M steps per arm):
    python benchmarks/strength_mechanisms.py --out runs/mechanisms
    python benchmarks/strength_mechanisms.py --out runs/mechanisms --arms league   # add an arm
    python benchmarks/strength_mechanisms.py --out runs/smoke --timesteps 200000 --arms mlp board

Writes OUT/results.json (everything below) and prints one table; an arm already trained in OUT
(its `done.json`) is evaluated again, not retrained.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import torch

from sp_wrappers.cli.train import main_train
from sp_wrappers.core.policies import SB3Policy
from sp_wrappers.evaluation.openings import legal_openings, play_openings
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy
from sp_wrappers.games.registry import game_factory
from sp_wrappers.league import AlphaStarLeague, League
from sp_wrappers.ratings.bradley_terry import fit_bradley_terry
from sp_wrappers.runs.league import RecipeModel
from sp_wrappers.runs.recipes import recipe_for
from sp_wrappers.runs.single import model_steps
from sp_wrappers.training.strength import StrengthCallback

GAME = "connect_four_v3"
ARMS = ("mlp", "board", "board_sym", "league")
MLP = {"net_arch": [256, 256]}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the benchmark's directory")
    parser.add_argument("--timesteps", type=int, default=2_000_000, help="learner steps per arm")
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    parser.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 6])
    parser.add_argument("--plies", type=int, default=2, help="forced opening moves (2: 49)")
    parser.add_argument(
        "--eval-every",
        type=int,
        default=None,
        help="strength curve interval (default: a tenth; 0: no curve)",
    )
    parser.add_argument("--league-features", choices=("auto", "mlp", "board", "board_sym"),
                        default="auto", help="the league's network and views (auto: the best "
                        "of board and board_sym measured in OUT, else board_sym)")  # fmt: skip
    parser.add_argument(
        "--chunk-steps",
        type=int,
        default=None,
        help="league: steps per player and round (default: 4 rollouts)",
    )
    parser.add_argument("--n-envs", type=int, default=None, help="default: the recipe's (16)")
    parser.add_argument(
        "--hp",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="more hyperparameters for every arm (smoke: n_steps=32)",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


# -- training -------------------------------------------------------------------------------------
def train_single(arm: str, args: argparse.Namespace, directory: Path, every: int) -> dict:
    """Arms 1-3: `sp-wrappers train connect_four_v3 --reference-ratio 0 ...`."""
    argv = [GAME, "--reference-ratio", "0", "--timesteps", str(args.timesteps), "--out",
            str(directory), "--strength-every", str(every), "--eval-games", "0", "--seed",
            str(args.seed), "--no-progress", "--strength-plies", str(args.plies), "--symmetries",
            "auto" if arm == "board_sym" else "none"]  # fmt: skip
    if arm == "mlp":
        argv += ["--hp", f"policy_kwargs={json.dumps(MLP)}"]
    if args.n_envs:
        argv += ["--n-envs", str(args.n_envs)]
    for pair in args.hp:
        argv += ["--hp", pair]
    if main_train(argv) != 0:
        raise SystemExit(f"training arm {arm} failed (see above)")
    config = json.loads((directory / "config.json").read_text())
    eval_seconds = 0.0
    if (directory / "strength.json").exists():  # what the strength curve cost
        history = json.loads((directory / "strength.json").read_text())
        eval_seconds = sum(e["seconds"] for e in history["evaluations"])
        eval_seconds += history.get("ladder_seconds", 0.0)
    return {
        "steps": model_steps("maskable_ppo", directory / "model.zip"),  # whole rollouts
        "learn_seconds": config["history"][-1]["seconds"] - eval_seconds,
        "model": str(directory / "model.zip"),
        "command": "sp-wrappers train " + " ".join(argv),
    }


def league_features(args: argparse.Namespace) -> str:
    """The league's features: ``--league-features``, or (auto) whichever of arms 2 and 3 ended
    its training with the higher ladder rating (its strength curve's last point)."""
    if args.league_features != "auto":
        return args.league_features
    rated = {}
    for arm in ("board", "board_sym"):
        done = args.out / arm / "done.json"
        if done.exists():
            curve = json.loads(done.read_text())["curve"]
            if curve:
                rated[arm] = curve[-1]["rating"]
    return max(rated, key=rated.get) if rated else "board_sym"


def train_league(args: argparse.Namespace, directory: Path, every: int) -> dict:
    """Arm 4: an AlphaStar league (1 + 1 + 1), main agents half the steps, serial backend."""
    features = league_features(args)
    recipe = recipe_for(GAME)
    hyperparams = dict(recipe.hyperparams)
    if features == "mlp":
        hyperparams["policy_kwargs"] = MLP
    for pair in args.hp:
        key, _, raw = pair.partition("=")
        hyperparams[key] = json.loads(raw)
    n_envs = args.n_envs or recipe.n_envs
    chunk = args.chunk_steps or 4 * int(hyperparams["n_steps"]) * n_envs
    league = League(
        game_factory(GAME),
        AlphaStarLeague(1, 1, 1),
        RecipeModel(recipe.algo, hyperparams, seed=args.seed),
        directory,
        chunk_steps=chunk,
        n_envs=n_envs,
        seed=args.seed,
        vec_env_kwargs={"symmetries": "auto"} if features == "board_sym" else {},
    )
    curve = None
    if every:
        curve = StrengthCallback.for_game(
            GAME, eval_every=every, run_dir=directory, opening_plies=args.plies
        )
    learn_seconds = 0.0
    while league.total_steps() < args.timesteps:  # in segments, for the strength curve
        before = {name: p.steps for name, p in league.learners.items()}
        segment = every or args.timesteps
        result = league.run(min(args.timesteps, league.total_steps() + segment), backend="serial")
        for p in result.learners:  # learning time only, summed over the players
            rate = result.steps_per_second.get(p.name)
            if rate:
                learn_seconds += (p.steps - before[p.name]) / rate
        if curve is not None:
            evaluate_main(league, curve)
    return {
        "steps": league.total_steps(),
        "steps_per_player": {p.name: p.steps for p in league.learners.values()},
        "shares": league.shares,
        "features": features,
        "learn_seconds": learn_seconds,
        "model": str(directory / league.model_files["main_agent_0"]),
        "command": f"League(AlphaStarLeague(1, 1, 1), chunk_steps={chunk}, n_envs={n_envs}), "
        f"features {features}",
    }


def evaluate_main(league: League, curve: StrengthCallback) -> None:
    """One point of the league arm's strength curve: its main agent against the ladder, at the
    league's total learner steps."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(league.root / league.model_files["main_agent_0"], device="cpu")
    model.num_timesteps = league.total_steps()
    curve.init_callback(model)
    curve.evaluate()


# -- evaluation -----------------------------------------------------------------------------------
def load_learner(path: str, name: str) -> SB3Policy:
    from sb3_contrib import MaskablePPO

    return SB3Policy(MaskablePPO.load(path, device="cpu"), deterministic=True, policy_id=name)


def wdl(result: Any) -> list[int]:
    return list(result.wdl())


def evaluate(arms: dict[str, dict], depths: list[int], plies: int) -> dict[str, Any]:
    env_fn = game_factory(GAME)
    openings = legal_openings(env_fn, plies)
    rungs = [AlphaBetaConnectFourPolicy(depth=d) for d in depths]
    learners = {arm: load_learner(info["model"], arm) for arm, info in arms.items()}
    games: list[tuple[str, str, float]] = []
    for i, a in enumerate(rungs):  # the ladder's scale
        for b in rungs[i + 1 :]:
            result = play_openings(env_fn, a, b, openings)
            games += [(a.policy_id, b.policy_id, g.outcome) for g in result.games]
    table: dict[str, Any] = {}
    for arm, learner in learners.items():
        table[arm] = {}
        for rung in rungs:
            start = time.perf_counter()
            result = play_openings(env_fn, learner, rung, openings)
            games += [(arm, rung.policy_id, g.outcome) for g in result.games]
            table[arm][rung.policy_id] = {
                "wdl": wdl(result),
                "score": result.score,
                "by_seat": {s: list(v) for s, v in result.by_seat().items()},
                "distinct_games": result.distinct_games(),
                "seconds": round(time.perf_counter() - start, 1),
            }
    fit = fit_bradley_terry(games, anchor=rungs[0].policy_id, anchor_rating=1000.0)
    names = list(learners)
    head_to_head = {
        f"{a} vs {b}": wdl(play_openings(env_fn, learners[a], learners[b], openings))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    }
    return {
        "openings": len(openings),
        "games_per_pair": 2 * len(openings),
        "against": table,
        "ratings": {p: fit.ratings[p] for p in [*names, *(r.policy_id for r in rungs)]},
        "intervals": {p: list(fit.intervals[p]) for p in names},
        "head_to_head": head_to_head,
    }


# -- the story ------------------------------------------------------------------------------------
def read_results(out: Path) -> dict[str, Any]:
    path = out / "results.json"
    return json.loads(path.read_text()) if path.exists() else {"arms": {}}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    every = max(1, args.timesteps // 10) if args.eval_every is None else args.eval_every
    trained: dict[str, dict] = {}
    for arm in [a for a in ARMS if a in args.arms]:  # the league last: it may pick the best
        directory = args.out / arm
        done = directory / "done.json"
        if done.exists():
            trained[arm] = json.loads(done.read_text())
            continue
        start = time.perf_counter()
        if arm == "league":
            info = train_league(args, directory, every)
        else:
            info = train_single(arm, args, directory, every)
        info["wall_seconds"] = round(time.perf_counter() - start, 1)
        info["steps_per_second"] = info["steps"] / max(info["learn_seconds"], 1e-9)
        history = directory / "strength.json"
        info["curve"] = [
            {"step": e["step"], "scores": e["scores"], "rating": e["rating"]}
            for e in (json.loads(history.read_text())["evaluations"] if history.exists() else [])
        ]
        done.write_text(json.dumps(info, indent=1))
        trained[arm] = info
        results = read_results(args.out)  # what later arms (the league) read
        results["arms"].setdefault(arm, {}).update(info)
        (args.out / "results.json").write_text(json.dumps(results, indent=1))
    evaluation = evaluate(trained, args.depths, args.plies)
    results = read_results(args.out)
    for arm, info in trained.items():
        results["arms"].setdefault(arm, {}).update(info)
        results["arms"][arm]["rating"] = evaluation["ratings"][arm]
        results["arms"][arm]["rating_interval"] = evaluation["intervals"][arm]
        results["arms"][arm]["against"] = evaluation["against"][arm]
    results.update(
        timesteps=args.timesteps,
        depths=args.depths,
        openings=evaluation["openings"],
        ladder_ratings={k: v for k, v in evaluation["ratings"].items() if k.startswith("alpha")},
        head_to_head=evaluation["head_to_head"],
    )
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(report(results, trained))
    return 0


def report(results: dict[str, Any], arms: dict[str, dict]) -> str:
    depths = [f"alphabeta-d{d}" for d in results["depths"]]
    lines = [
        f"Connect Four, {results['timesteps']:,d} learner steps per arm, from "
        f"{results['openings']} openings x both seats ({2 * results['openings']} games a pair)",
        "| arm | "
        + " | ".join(f"vs d{d[11:]} W-D-L" for d in depths)
        + " | rating [95%] | steps/s |",
        "|---" * (len(depths) + 3) + "|",
    ]
    for arm in arms:
        info = results["arms"][arm]
        cells = ["-".join(map(str, info["against"][d]["wdl"])) for d in depths]
        low, high = info["rating_interval"]
        lines.append(
            f"| {arm} | " + " | ".join(cells) + f" | {info['rating']:.0f} [{low:.0f}, {high:.0f}]"
            f" | {info['steps_per_second']:.0f} |"
        )
    lines.append("Head to head (first arm's W-D-L): " + ", ".join(
        f"{pair} {'-'.join(map(str, r))}" for pair, r in results["head_to_head"].items()
    ))  # fmt: skip
    for arm in arms:
        if not results["arms"][arm]["curve"]:
            continue
        curve = ", ".join(
            f"{e['step']:,d}: " + "/".join(f"{s:.2f}" for s in e["scores"].values())
            for e in results["arms"][arm]["curve"]
        )
        lines.append(f"{arm} curve (score vs d1/d2/d4 by step): {curve}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
