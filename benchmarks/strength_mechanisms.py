"""Which mechanism makes Connect Four self-play strong at a stated budget? Arms, seeds, one table.

Every arm learns the same number of learner steps (`--timesteps`, default 2M; a league counts
the steps of all its players together) on Connect Four with no reference bot in training
(`--reference-ratio 0`: snapshots, the latest weights and 10% RandomPolicy, as the recipe):

1. `mlp`: today's recipe as pure self-play, the MLP it had (net_arch [256, 256]);
2. `board`: the recipe's BoardExtractor (three 3x3 convolutions over the 6x7 board);
3. `board_sym`: BoardExtractor, every episode in a random left-right view (`--symmetries auto`);
4. `mlp_sym`: the MLP with the mirror views (`--symmetries auto`), the recipe issue #39 measured
   at 0.29 against depth 1 after 2M steps; three times the CNN's speed per step, so it is the arm
   to run for an hour of one core (`--timesteps 10000000`) rather than for equal steps;
5. `pfsp`: board_sym with its snapshot opponents drawn by prioritized fictitious self-play
   (`--strategy pfsp`: the snapshots the learner beats least are drawn most), the first of the
   next mechanisms after the first three arms fell short of the targets;
6. the screening arms of #47, each board_sym plus one change (`--arms NAME`, not in the default
   set): `gamma90` and `gamma97` (discount 0.9, 0.97), `openings16` (every learner game started
   after 0-16 random moves: `--random-openings 0-16`), `ent003` (ent_coef 0.03), `lr1e3`
   (learning rate lin_1e-3), `wide` (BoardExtractor with 64 channels, 256 features, net_arch
   [256]) and `epochs` (n_epochs 16, batch_size 1024);
7. `league`: the best of arms 2 and 3 (the higher ladder rating at the end of training, when
   they were trained in OUT; else board_sym; or `--league-features`) as an AlphaStarLeague of
   1 main agent, 1 main exploiter and 1 league exploiter, the main agent taking half of the
   league's learner steps (compute shares).

`--seeds 0 1 2` trains and evaluates each arm once per seed, in OUT/ARM (seed 0, so arms
trained before seeds existed count as seed 0) and OUT/ARM-sK (seed K); the table then gives each
arm's mean and spread over its seeds.

Then every arm's final learner (deterministic; the league's main agent) plays, from every
two-move opening (49) in both seats:

- alpha-beta at depths 1, 2, 4 and 6 (`--depths`): W-D-L per depth, and its one-move tactics in
  the games against depth 1 (`sp_wrappers.evaluation.tactics`: immediate wins taken, single
  threats blocked, wins handed over when a safe move existed, each with its count);
- each other arm: the arms head to head;
- with `--exploit-steps N`, a learned best response (`sp_wrappers.learned_best_response`): a fresh
  learner of the recipe, the same for every arm, trained N steps against the arm's final learner
  alone, then scored from the openings with a 95% interval and its curve (a lower bound on the
  arm's exploitability: lower is better);

and gets a rating on the ladder's Bradley-Terry scale (the depths' games among themselves
pin the scale, depth 1 = 1000) with its 95% interval. During training each arm measures its
strength curve every `--eval-every` steps against depths 1, 2 and 4, with its tactics against
depth 1 (`sp_wrappers.training.strength.StrengthCallback`; `ARM/strength.json`, `ARM/plots/
strength.png`). Learner steps per second exclude those evaluations.

Run (about 2.5 hours on 2 CPU cores at 2M steps per arm), one arm at a time so that each
survives a session's end:
    python benchmarks/strength_mechanisms.py --out runs/mechanisms --arms board --resume
    python benchmarks/strength_mechanisms.py --out runs/mechanisms --arms league --resume
    python benchmarks/strength_mechanisms.py --out runs/mechanisms --timesteps 1000000 \
        --arms gamma90 --seeds 0 1 2 --resume                                    # a screen
    python benchmarks/strength_mechanisms.py --out runs/mechanisms --report     # the table
    python benchmarks/strength_mechanisms.py --out runs/smoke --timesteps 200000 --arms mlp board

Checkpoints: a single-learner arm is an `sp-wrappers train` run, whose model.zip, archive and
strength.json are rewritten at every snapshot (`--save-every`, the recipe's 100k rounded to
whole rollouts so that a resumed arm ends on the step an uninterrupted one does); the league
arm's league.json, model files and strength.json at the end of every round. With `--resume`
an arm killed mid-way continues from its last checkpoint (the steps after it are trained
again; without `--resume` a half-trained arm is refused). An arm already trained in OUT (its
`done.json`, also one written by an older version) is evaluated again, tactics included, not
retrained.

Writes, as it goes, OUT/results.jsonl: one JSON line per event (`start` of a session,
`heartbeat` every `--heartbeat` seconds with the arm's checkpointed step and the load average,
`trained`, `evaluated`), so a session cut short still shows its time and load; at the end
OUT/results.json (everything below) and one table. `--report` prints that table again from the
results files (the docs/benchmarks.md table) and writes it to OUT/report.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from sp_wrappers.cli.app import run_command
from sp_wrappers.core.policies import SB3Policy
from sp_wrappers.evaluation.openings import legal_openings, play_openings
from sp_wrappers.evaluation.tactics import TacticsReport, game_tactics
from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy
from sp_wrappers.games.registry import game_factory
from sp_wrappers.league import AlphaStarLeague, League
from sp_wrappers.ratings.bradley_terry import fit_bradley_terry
from sp_wrappers.runs.league import RecipeModel
from sp_wrappers.runs.recipes import recipe_for
from sp_wrappers.runs.single import model_steps
from sp_wrappers.training.best_response import LOWER_BOUND, learned_best_response
from sp_wrappers.training.strength import StrengthCallback

GAME = "connect_four_v3"
#: The arms run when `--arms` is not given (#39's).
DEFAULT_ARMS = ("mlp", "board", "board_sym", "mlp_sym", "pfsp", "league")
BOARD = "sp_wrappers.core.networks:BoardExtractor"
#: #47's screening arms: board_sym plus one change each, as (--hp overrides, train options).
SCREENS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "gamma90": ({"gamma": 0.9}, []),
    "gamma97": ({"gamma": 0.97}, []),
    "openings16": ({}, ["--random-openings", "0-16"]),
    "ent003": ({"ent_coef": 0.03}, []),
    "lr1e3": ({"learning_rate": "lin_1e-3"}, []),
    "wide": (
        {
            "policy_kwargs": {
                "features_extractor_class": BOARD,
                "features_extractor_kwargs": {"channels": 64, "n_layers": 3, "features_dim": 256},
                "net_arch": [256],
            }
        },
        [],
    ),
    "epochs": ({"n_epochs": 16, "batch_size": 1024}, []),
}
ARMS = (*DEFAULT_ARMS[:-1], *SCREENS, "league")  # the league last: it may pick the best
#: The arms that train on random left-right views.
MIRRORED = ("board_sym", "mlp_sym", "pfsp", *SCREENS)
MLP = {"net_arch": [256, 256]}
TACTICS_DEPTH = 1  # the tactics are counted in the games against this alpha-beta depth


def run_key(arm: str, seed: int) -> str:
    """An arm's directory and results key for one seed: ``ARM`` for seed 0, else ``ARM-sK``."""
    return arm if seed == 0 else f"{arm}-s{seed}"


def arm_of(key: str, info: dict[str, Any]) -> str:
    """The arm a results key belongs to (``done.json`` files of older versions name none)."""
    if info.get("arm"):
        return str(info["arm"])
    base, sep, seed = key.rpartition("-s")
    return base if sep and seed.isdigit() else key


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the benchmark's directory")
    parser.add_argument("--timesteps", type=int, default=2_000_000, help="learner steps per arm")
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(DEFAULT_ARMS),
                        help="default: #39's six; the screening arms are named")  # fmt: skip
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
    parser.add_argument("--seed", type=int, default=0, help="the seed (OUT/ARM-sK unless 0)")
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=None,
        help="train and evaluate every arm once per seed (default: --seed)",
    )
    parser.add_argument(
        "--no-head-to-head",
        action="store_true",
        help="skip the arms' games against each other (many runs: n(n-1)/2 pairs)",
    )
    parser.add_argument("--resume", action="store_true",
                        help="continue a half-trained arm from its last checkpoint")  # fmt: skip
    parser.add_argument(
        "--save-every",
        type=int,
        default=None,
        help="single arms' snapshot and model.zip interval (default: the recipe's, in whole "
        "rollouts)",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the learner")
    parser.add_argument(
        "--num-workers",
        type=int,
        default=0,
        help="league arm: worker processes stepping each player's games (single arms: "
        "sp-wrappers train has no such option yet)",
    )
    parser.add_argument("--heartbeat", type=float, default=60.0, help="seconds between lines")
    parser.add_argument(
        "--quiet-steps",
        type=int,
        default=49_152,
        help="single arms: before training, the same command for this many learner steps (about "
        "60 s) in a scratch directory gives the arm's quiet speed (OUT/ARM-quiet.json); run it "
        "with nothing else on the machine. 0: no quiet measurement",
    )
    parser.add_argument(
        "--exploit-steps",
        type=int,
        default=0,
        help="after the evaluation, a learned best response against each evaluated arm's final "
        "learner: a fresh learner of the recipe (the same for every arm) trained this many "
        "steps against it alone, scored from the openings (OUT/exploit-ARM-N.json; a lower "
        "bound on exploitability). 0: none",
    )
    parser.add_argument("--report", action="store_true", help="only print the results' table")
    return parser.parse_args(argv)


# -- results as they go ---------------------------------------------------------------------------
class Journal:
    """OUT/results.jsonl: one JSON line per event, appended and flushed at once, each with the
    time and the load average; ``session`` tells this process's lines from a killed one's."""

    def __init__(self, out: Path) -> None:
        self.path = out / "results.jsonl"
        self.session = f"{os.getpid()}-{time.time():.0f}"
        self.lock = threading.Lock()

    def write(self, event: str, arm: str, **fields: Any) -> None:
        line = {"event": event, "arm": arm, "session": self.session, "time": time.time(),
                "load": list(os.getloadavg()), **fields}  # fmt: skip
        with self.lock, self.path.open("a") as f:
            f.write(json.dumps(line) + "\n")

    def lines(self, arm: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        rows = [json.loads(x) for x in self.path.read_text().splitlines() if x.strip()]
        return [r for r in rows if arm is None or r["arm"] == arm]

    def wall_and_load(self, arm: str) -> dict[str, Any]:
        """The arm's training time over all its sessions (a killed one up to its last line)
        and the load averages its lines saw."""
        sessions: dict[str, list[float]] = {}
        loads = []
        for r in self.lines(arm):
            if r["event"] in ("start", "heartbeat", "trained"):
                sessions.setdefault(r["session"], []).append(r["time"])
                loads.append(r["load"][0])
        return {
            "wall_seconds": round(sum(max(t) - min(t) for t in sessions.values()), 1),
            "sessions": len(sessions),
            "load_mean": round(sum(loads) / len(loads), 2) if loads else None,
            "load_max": max(loads) if loads else None,
        }


@contextmanager
def heartbeat(journal: Journal, arm: str, step: Callable[[], int | None], every: float
              ) -> Iterator[None]:  # fmt: skip
    """A daemon thread writing a ``heartbeat`` line every ``every`` seconds while training."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            try:
                journal.write("heartbeat", arm, step=step())
            except Exception:  # a checkpoint being replaced: the next beat reads it
                pass

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def rollout_size(args: argparse.Namespace) -> int:
    """Learner steps per rollout of every arm (n_steps x n_envs, overrides included)."""
    recipe = recipe_for(GAME)
    n_steps = recipe.hyperparams["n_steps"]
    for pair in args.hp:
        key, _, raw = pair.partition("=")
        n_steps = json.loads(raw) if key == "n_steps" else n_steps
    return int(n_steps) * (args.n_envs or recipe.n_envs)


def save_every(args: argparse.Namespace) -> int:
    """Whole rollouts, so that a checkpoint falls on a rollout's end and a resumed arm ends on
    the step an uninterrupted one does (SB3 learns whole rollouts from wherever it resumes)."""
    rollout = rollout_size(args)
    wanted = args.save_every or recipe_for(GAME).save_every
    return rollout * max(1, round(wanted / rollout))


# -- training -------------------------------------------------------------------------------------
def train_single(arm: str, args: argparse.Namespace, directory: Path, every: int) -> dict:
    """Arms 1-3: `sp-wrappers train connect_four_v3 --reference-ratio 0 ...`; with an arm
    half-trained in ``directory``, `sp-wrappers train --resume` from its last model.zip."""
    argv = single_argv(arm, args, directory, args.timesteps, every)
    model = directory / "model.zip"
    if (directory / "config.json").exists() and not model.exists():
        shutil.rmtree(directory)  # killed before its first checkpoint: nothing to keep
    runtime = ["--threads", str(args.threads)]
    if not (directory / "config.json").exists():
        command = argv + runtime
    elif model_steps("maskable_ppo", model) >= args.timesteps:
        command = []  # trained; killed before its done.json
    else:
        command = ["--resume", str(directory), "--no-progress", *runtime]
    if command and run_command("train", command) != 0:
        raise SystemExit(f"training arm {arm} failed (see above)")
    return {
        "steps": model_steps("maskable_ppo", model),  # whole rollouts
        **single_timing(directory),
        "model": str(model),
        "command": "sp-wrappers train " + " ".join(argv),
    }


def single_argv(arm: str, args: argparse.Namespace, directory: Path, timesteps: int,
                every: int) -> list[str]:  # fmt: skip
    """The arm's `sp-wrappers train` arguments (without the runtime ones)."""
    argv = [GAME, "--reference-ratio", "0", "--timesteps", str(timesteps), "--out",
            str(directory), "--strength-every", str(every), "--eval-games", "0", "--seed",
            str(args.seed), "--no-progress", "--strength-plies", str(args.plies), "--symmetries",
            "auto" if arm in MIRRORED else "none"]  # fmt: skip
    argv += ["--save-every", str(save_every(args))]
    if arm in ("mlp", "mlp_sym"):
        argv += ["--hp", f"policy_kwargs={json.dumps(MLP)}"]
    if arm == "pfsp":
        argv += ["--strategy", "pfsp"]
    if arm in SCREENS:
        hyperparams, options = SCREENS[arm]
        argv += options
        for key, value in hyperparams.items():
            text = value if isinstance(value, str) else json.dumps(value)
            argv += ["--hp", f"{key}={text}"]
    if args.n_envs:
        argv += ["--n-envs", str(args.n_envs)]
    for pair in args.hp:
        argv += ["--hp", pair]
    return argv


def quiet_speed(arm: str, args: argparse.Namespace, journal: Journal) -> dict[str, Any]:
    """The arm's quiet speed: the same `sp-wrappers train` command for ``--quiet-steps`` learner
    steps (no strength curve, no report) in OUT/ARM-quiet, alone on the machine, measured once
    and kept in OUT/ARM-quiet.json. An arm's steps/s over this speed is the ratio that says
    whether its figures count (>= 0.85: it kept its core)."""
    path = args.out / f"{arm}-quiet.json"
    if path.exists():
        return json.loads(path.read_text())
    scratch = args.out / f"{arm}-quiet"
    shutil.rmtree(scratch, ignore_errors=True)
    steps = rollout_size(args) * max(1, round(args.quiet_steps / rollout_size(args)))
    argv = single_argv(arm, args, scratch, steps, 0)
    argv += ["--no-plots", "--no-report", "--threads", str(args.threads)]
    load_before = list(os.getloadavg())
    if run_command("train", argv) != 0:
        raise SystemExit(f"the quiet measurement of arm {arm} failed (see above)")
    timing = single_timing(scratch)
    info = {
        "steps_per_second": timing["measured_steps"] / max(timing["learn_seconds"], 1e-9),
        "steps": timing["measured_steps"],
        "seconds": timing["learn_seconds"],
        "load_before": load_before,
        "load_after": list(os.getloadavg()),
        "command": "sp-wrappers train " + " ".join(argv),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info, indent=1))
    journal.write("quiet", arm, **{k: v for k, v in info.items() if k != "command"})
    shutil.rmtree(scratch, ignore_errors=True)
    return info


def single_timing(directory: Path) -> dict[str, Any]:
    """Learner steps per second of the arm's last (uninterrupted) session: its steps over its
    seconds less the strength evaluations it played."""
    config = json.loads((directory / "config.json").read_text())
    session = config["history"][-1]
    started = datetime.datetime.strptime(session["started"], "%Y-%m-%dT%H:%M:%S%z").timestamp()
    eval_seconds = 0.0
    if (directory / "strength.json").exists():  # what the strength curve cost
        history = json.loads((directory / "strength.json").read_text())
        eval_seconds = sum(
            e["seconds"] for e in history["evaluations"] if e["wall_time"] >= started - 1
        )
        if session["from_step"] == 0:
            eval_seconds += history.get("ladder_seconds", 0.0)
    steps = model_steps("maskable_ppo", directory / "model.zip") - session["from_step"]
    seconds = session.get("seconds", math.nan)  # nan: killed after its last step
    return {"learn_seconds": seconds - eval_seconds, "measured_steps": steps}


def heartbeat_rate(out: Path, arm: str) -> float | None:
    """Learner steps per second of ``arm``'s last session that learned, from its ``start`` and
    ``heartbeat`` lines in OUT/results.jsonl (strength evaluations included); ``None`` when no
    session moved. For an arm whose last training session was killed, which left no timing."""
    path = out / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    sessions: dict[str, list[dict]] = {}
    for row in rows:
        if row.get("arm") == arm and row["event"] in ("start", "heartbeat") and row.get("step"):
            sessions.setdefault(row["session"], []).append(row)
        elif row.get("arm") == arm and row["event"] == "start":
            sessions.setdefault(row["session"], []).append({**row, "step": 0})
    for lines in reversed(list(sessions.values())):
        first, last = lines[0], lines[-1]
        if last["step"] > first["step"] and last["time"] > first["time"]:
            return (last["step"] - first["step"]) / (last["time"] - first["time"])
    return None


def league_features(args: argparse.Namespace) -> str:
    """The league's features: ``--league-features``, or (auto) whichever of arms 2 and 3 ended
    its training with the higher ladder rating (its strength curve's last point)."""
    if args.league_features != "auto":
        return args.league_features
    rated = {}
    for arm in ("board", "board_sym"):
        done = args.out / run_key(arm, args.seed) / "done.json"
        if done.exists():
            curve = json.loads(done.read_text())["curve"]
            if curve:
                rated[arm] = curve[-1]["rating"]
    return max(rated, key=rated.get) if rated else "board_sym"


def train_league(args: argparse.Namespace, directory: Path, every: int) -> dict:
    """Arm 4: an AlphaStar league (1 + 1 + 1), main agents half the steps, serial backend; one
    `League.run` to the budget (its schedules run once over it), the curve measured between
    rounds. A league half-trained in ``directory`` resumes from its last complete round."""
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
    vec_env_kwargs: dict[str, Any] = {"num_workers": args.num_workers}
    if features == "board_sym":
        vec_env_kwargs["symmetries"] = "auto"
    curve = None
    if every:
        curve = StrengthCallback.for_game(
            GAME, eval_every=every, run_dir=directory, opening_plies=args.plies
        )

    last = [-1]  # the step of the curve's newest point

    def measure(league: League, results: Any = None) -> None:
        """A curve point at the first round past each multiple of ``every`` not measured yet."""
        total = league.total_steps()
        due = last[0] < 0 or total >= (last[0] // every + 1) * every
        if league.model_files and due and total != last[0]:
            evaluate_main(league, curve)
            last[0] = total

    league = League(
        game_factory(GAME),
        AlphaStarLeague(1, 1, 1),
        RecipeModel(recipe.algo, hyperparams, seed=args.seed),
        directory,
        chunk_steps=chunk,
        n_envs=n_envs,
        seed=args.seed,
        torch_threads=args.threads,
        vec_env_kwargs=vec_env_kwargs,
        on_round=measure if curve is not None else None,
    )
    before = {name: p.steps for name, p in league.learners.items()}
    if curve is not None and (directory / "strength.json").exists():  # resumed: its curve
        points = json.loads((directory / "strength.json").read_text())["evaluations"]
        steps = [e["step"] for e in points if e["step"] <= league.total_steps()]
        last[0] = max(steps, default=-1)
        measure(league)  # the point a kill interrupted
    result = league.run(args.timesteps, backend="serial")
    learn_seconds = 0.0
    for p in result.learners:  # learning time only, summed over the players
        rate = result.steps_per_second.get(p.name)
        if rate:
            learn_seconds += (p.steps - before[p.name]) / rate
    if curve is not None and last[0] != league.total_steps():
        evaluate_main(league, curve)  # the final point
    return {
        "steps": league.total_steps(),
        "steps_per_player": {p.name: p.steps for p in league.learners.values()},
        "shares": league.shares,
        "features": features,
        "learn_seconds": learn_seconds,
        "measured_steps": league.total_steps() - sum(before.values()),
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


def evaluate(
    arms: dict[str, dict], depths: list[int], plies: int, head_to_head: bool = True
) -> dict[str, Any]:
    """Every run's final learner against the depths (its tactics counted in the games against
    depth 1), their ratings on the ladder's scale, and (``head_to_head``) the runs against each
    other."""
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
    tactics: dict[str, Any] = {}
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
            if rung.depth == TACTICS_DEPTH:
                tactics[arm] = arm_tactics(env_fn, result, rung.policy_id)
        if arm not in tactics:  # depth 1 is not among the depths: its games for the tactics
            rung = AlphaBetaConnectFourPolicy(depth=TACTICS_DEPTH)
            result = play_openings(env_fn, learner, rung, openings)
            tactics[arm] = arm_tactics(env_fn, result, rung.policy_id)
    fit = fit_bradley_terry(games, anchor=rungs[0].policy_id, anchor_rating=1000.0)
    names = list(learners)
    head_to_head = {
        f"{a} vs {b}": wdl(play_openings(env_fn, learners[a], learners[b], openings))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if head_to_head
    }
    return {
        "openings": len(openings),
        "games_per_pair": 2 * len(openings),
        "against": table,
        "ratings": {p: fit.ratings[p] for p in [*names, *(r.policy_id for r in rungs)]},
        "intervals": {p: list(fit.intervals[p]) for p in names},
        "head_to_head": head_to_head,
        "tactics": tactics,
    }


def arm_tactics(env_fn: Callable[[], Any], result: Any, opponent: str) -> dict[str, Any]:
    """A learner's one-move tactics in its games of ``result`` (played from seed 0)."""
    start = time.perf_counter()
    report = game_tactics(env_fn, result, seed=0)
    return {
        "opponent": opponent,
        **report.as_dict(),
        "seconds": round(time.perf_counter() - start, 1),
    }


def exploit_arm(arm: str, info: dict, args: argparse.Namespace) -> dict[str, Any]:
    """The learned best response against ``arm``'s final learner (greedy, as evaluated): a fresh
    learner of the recipe (``--hp`` included; the same for every arm, so arms compare at equal
    compute) trained ``--exploit-steps`` against it alone, scored from the openings. Kept in
    OUT/exploit-ARM-N.json once measured."""
    path = args.out / f"exploit-{arm}-{args.exploit_steps}.json"
    if path.exists():
        return json.loads(path.read_text())
    recipe = recipe_for(GAME)
    hyperparams = dict(recipe.hyperparams)
    for pair in args.hp:
        key, _, raw = pair.partition("=")
        hyperparams[key] = json.loads(raw)
    result = learned_best_response(
        game_factory(GAME),
        load_learner(info["model"], arm),
        RecipeModel(recipe.algo, hyperparams, seed=args.seed),
        steps=args.exploit_steps,
        n_envs=args.n_envs or recipe.n_envs,
        seed=args.seed,
        plies=args.plies,
    ).to_dict()
    path.write_text(json.dumps(result, indent=1))
    return result


# -- the story ------------------------------------------------------------------------------------
def read_results(out: Path) -> dict[str, Any]:
    path = out / "results.json"
    return json.loads(path.read_text()) if path.exists() else {"arms": {}}


def checkpoint_step(directory: Path) -> int | None:
    """The learner steps an arm's last checkpoint holds (``None`` before the first)."""
    if (directory / "league.json").exists():
        state = json.loads((directory / "league.json").read_text())
        return sum(p["steps"] for p in state["learners"])
    if (directory / "model.zip").exists():
        return model_steps("maskable_ppo", directory / "model.zip")
    return None


def train_arm(arm: str, args: argparse.Namespace, journal: Journal, every: int) -> dict:
    """Train one arm for ``args.seed`` (or continue it, with ``--resume``) and write its
    ``done.json`` in OUT/ARM (seed 0) or OUT/ARM-sK."""
    key = run_key(arm, args.seed)
    directory = args.out / key
    started = any((directory / name).exists() for name in ("config.json", "league.json"))
    if started and not args.resume:
        raise SystemExit(
            f"arm {key} in {directory} was started and not finished: pass --resume to continue "
            "it from its last checkpoint, or remove the directory to train it again."
        )
    quiet = None
    if arm != "league" and args.quiet_steps and checkpoint_step(directory) is None:
        quiet = quiet_speed(arm, args, journal)  # before the arm, alone
    journal.write("start", key, step=checkpoint_step(directory) or 0, threads=args.threads,
                  num_workers=args.num_workers, timesteps=args.timesteps)  # fmt: skip
    with heartbeat(journal, key, lambda: checkpoint_step(directory), args.heartbeat):
        if arm == "league":
            info = train_league(args, directory, every)
        else:
            info = train_single(arm, args, directory, every)
    if math.isfinite(info.get("learn_seconds", math.nan)):
        info["steps_per_second"] = info["measured_steps"] / max(info["learn_seconds"], 1e-9)
    else:  # the last training session was killed: its own lines say how fast it went
        info["steps_per_second"] = heartbeat_rate(args.out, key)
        info["steps_per_second_source"] = "heartbeats (evaluations included: a lower bound)"
    journal.write("trained", key, step=info["steps"], steps_per_second=info["steps_per_second"])
    info.update(journal.wall_and_load(key), threads=args.threads, num_workers=args.num_workers)
    info.update(arm=arm, seed=args.seed)
    quiet_path = args.out / f"{arm}-quiet.json"
    quiet = quiet or (json.loads(quiet_path.read_text()) if quiet_path.exists() else None)
    if quiet is not None and info["steps_per_second"] is not None:
        info["quiet_steps_per_second"] = quiet["steps_per_second"]
        info["speed_ratio"] = info["steps_per_second"] / quiet["steps_per_second"]
    history = directory / "strength.json"
    info["curve"] = [
        {"step": e["step"], "scores": e["scores"], "rating": e["rating"],
         "rating_interval": e["rating_interval"],
         **({"tactics": e["tactics"]} if "tactics" in e else {})}
        for e in (json.loads(history.read_text())["evaluations"] if history.exists() else [])
    ]  # fmt: skip
    (directory / "done.json").write_text(json.dumps(info, indent=1))
    return info


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report:
        results = read_results(args.out)
        arms = {a: i for a, i in results["arms"].items() if "against" in i}
        if not arms:
            raise SystemExit(f"no evaluated arm in {args.out / 'results.json'} yet")
        table = report(results, arms)
        (args.out / "report.md").write_text(table + "\n")
        print(table)
        return 0
    journal = Journal(args.out)
    every = max(1, args.timesteps // 10) if args.eval_every is None else args.eval_every
    trained: dict[str, dict] = {}
    seeded: dict[str, argparse.Namespace] = {}
    seeds = args.seeds if args.seeds is not None else [args.seed]
    for arm in [a for a in ARMS if a in args.arms]:  # the league last: it may pick the best
        for seed in seeds:
            key = run_key(arm, seed)
            seeded[key] = argparse.Namespace(**{**vars(args), "seed": seed})
            done = args.out / key / "done.json"
            if done.exists():  # trained, perhaps by an older version: evaluated again
                info = {"arm": arm, "seed": seed, **json.loads(done.read_text())}
                moved = args.out / key / Path(info["model"]).name
                if not Path(info["model"]).exists() and moved.exists():  # OUT was moved
                    info["model"] = str(moved)
                trained[key] = info
                continue
            trained[key] = train_arm(arm, seeded[key], journal, every)
            results = read_results(args.out)  # what later arms (the league) read
            results["arms"].setdefault(key, {}).update(trained[key])
            (args.out / "results.json").write_text(json.dumps(results, indent=1))
    evaluation = evaluate(trained, args.depths, args.plies, not args.no_head_to_head)
    results = read_results(args.out)
    for key, info in trained.items():
        results["arms"].setdefault(key, {}).update(info)
        results["arms"][key]["rating"] = evaluation["ratings"][key]
        results["arms"][key]["rating_interval"] = evaluation["intervals"][key]
        results["arms"][key]["against"] = evaluation["against"][key]
        results["arms"][key]["tactics"] = evaluation["tactics"][key]
        against = {d: r["wdl"] for d, r in evaluation["against"][key].items()}
        journal.write("evaluated", key, rating=evaluation["ratings"][key], against=against,
                      tactics=evaluation["tactics"][key])  # fmt: skip
        if args.exploit_steps:
            exploit = exploit_arm(key, info, seeded[key])
            results["arms"][key]["exploit"] = exploit
            journal.write("exploited", key, steps=exploit["steps"], score=exploit["score"])
    results.update(
        timesteps=args.timesteps,
        depths=args.depths,
        openings=evaluation["openings"],
        ladder_ratings={k: v for k, v in evaluation["ratings"].items() if k.startswith("alpha")},
        head_to_head=evaluation["head_to_head"],
        evaluation_load=list(os.getloadavg()),
    )
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(report(results, trained))
    return 0


def report(results: dict[str, Any], arms: dict[str, dict]) -> str:
    """The docs/benchmarks.md table: per arm (and seed) its W-D-L per depth, its tactics against
    depth 1, ladder rating with its 95% interval, steps, learner steps/s, training wall time and
    load; per arm trained on several seeds their mean and spread; the head to head; the curves;
    the commands."""
    depths = [f"alphabeta-d{d}" for d in results["depths"]]
    lines = [
        f"Connect Four, {results['timesteps']:,d} learner steps per arm, from "
        f"{results['openings']} openings x both seats ({2 * results['openings']} games a pair)",
        "",
        "| arm | "
        + " | ".join(f"vs d{d[11:]} W-D-L" for d in depths)
        + " | wins taken | single threats blocked | wins handed over"
        + " | rating [95%] | steps | steps/s (quiet, ratio) | wall time | load (mean / max) |",
        "|---" * (len(depths) + 9) + "|",
    ]
    for arm in arms:
        info = results["arms"][arm]
        cells = ["-".join(map(str, info["against"][d]["wdl"])) for d in depths]
        low, high = info["rating_interval"]
        wall = info.get("wall_seconds")
        wall_text = "-" if wall is None else f"{int(wall // 60)} min {int(wall % 60):02d} s"
        load = info.get("load_mean")
        load_text = "-" if load is None else f"{load:.1f} / {info['load_max']:.1f}"
        rate = info.get("steps_per_second")
        speed = "-" if rate is None else f"{rate:.0f}"
        if info.get("steps_per_second_source"):
            speed += " (heartbeats)"
        if rate is not None and "quiet_steps_per_second" in info:
            speed += f" ({info['quiet_steps_per_second']:.0f}, {info['speed_ratio']:.2f})"
        cells += tactics_cells(info.get("tactics"))
        lines.append(
            f"| {arm} | " + " | ".join(cells) + f" | {info['rating']:.0f} [{low:.0f}, {high:.0f}]"
            f" | {info['steps']:,d} | {speed} | {wall_text} | {load_text} |"
        )
    lines += seeds_table(results, arms, depths)
    if results.get("head_to_head"):
        lines += ["", "Head to head (first arm's W-D-L): " + ", ".join(
            f"{pair} {'-'.join(map(str, r))}" for pair, r in results["head_to_head"].items()
        )]  # fmt: skip
    exploited = [arm for arm in arms if "exploit" in results["arms"][arm]]
    if exploited:
        lines += ["", f"Learned best response ({LOWER_BOUND}):", ""]
        lines += [
            "| arm | exploiter steps | exploiter score [95%] | W-D-L | curve |",
            "|---" * 5 + "|",
        ]
        for arm in exploited:
            e = results["arms"][arm]["exploit"]
            low, high = e["score_ci95"]
            curve = ", ".join(f"{p['step']:,d}: {p['score']:.2f}" for p in e["curve"])
            final = e["final"]
            lines.append(
                f"| {arm} | {e['steps']:,d} | {e['score']:.3f} [{low:.3f}, {high:.3f}] | "
                f"{final['wins']}-{final['draws']}-{final['losses']} | {curve} |"
            )
    for arm in arms:
        if not results["arms"][arm]["curve"]:
            continue
        curve = ", ".join(
            f"{e['step']:,d}: " + "/".join(f"{s:.2f}" for s in e["scores"].values())
            for e in results["arms"][arm]["curve"]
        )
        lines += ["", f"{arm} curve (score vs d1/d2/d4 by step): {curve}"]
        points = [e for e in results["arms"][arm]["curve"] if e.get("tactics")]
        if points:
            tactics = ", ".join(
                f"{e['step']:,d}: " + "/".join(share(e["tactics"], n) for n in TACTICS)
                for e in points
            )
            lines += [
                "",
                f"{arm} tactics curve (wins taken/threats blocked/handed over): {tactics}",
            ]
    lines += ["", "Commands:"] + [f"- {arm}: `{results['arms'][arm]['command']}`" for arm in arms]
    return "\n".join(lines)


TACTICS = {"wins_taken": "win_chances", "threats_blocked": "single_threats",
           "wins_handed": "safe_chances"}  # fmt: skip


def share(tactics: dict[str, Any], name: str) -> str:
    value = tactics.get(f"{name}_share")
    return "-" if value is None else f"{value:.2f}"


def tactics_cells(tactics: dict[str, Any] | None) -> list[str]:
    """``count of chances (share)`` for the three tactics (``-`` for a run evaluated without)."""
    if not tactics:
        return ["-"] * len(TACTICS)
    report = TacticsReport.from_dict(tactics)
    return [
        f"{getattr(report, name)} of {getattr(report, chances)} ({share(tactics, name)})"
        for name, chances in TACTICS.items()
    ]


def spread(values: list[float], digits: int = 2) -> str:
    """``mean ± sd (min-max)`` of a few seeds' values."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return "-"
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    low, high = min(values), max(values)
    return f"{mean:.{digits}f} ± {sd:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def seeds_table(results: dict[str, Any], keys: dict[str, dict], depths: list[str]) -> list[str]:
    """Per arm evaluated on two seeds or more: the mean, standard deviation and range over its
    seeds of the score against each depth, the tactics shares and the rating."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for key in keys:
        info = results["arms"][key]
        groups.setdefault(arm_of(key, info), []).append(info)
    groups = {arm: infos for arm, infos in groups.items() if len(infos) > 1}
    if not groups:
        return []
    lines = [
        "",
        "Over seeds: mean ± standard deviation (range)",
        "",
        "| arm | seeds | "
        + " | ".join(f"score vs d{d[11:]}" for d in depths)
        + " | wins taken | single threats blocked | wins handed over | rating |",
        "|---" * (len(depths) + 6) + "|",
    ]
    for arm, infos in groups.items():
        seeds = ",".join(str(i.get("seed", "?")) for i in infos)
        cells = [spread([i["against"][d]["score"] for i in infos]) for d in depths]
        for name in TACTICS:
            cells.append(spread([(i.get("tactics") or {}).get(f"{name}_share") for i in infos]))
        cells.append(spread([i["rating"] for i in infos], digits=0))
        lines.append(f"| {arm} | {seeds} | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
