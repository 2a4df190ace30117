"""Do the teams of `sp-wrappers train simple_tag_v3` learn? Each trained team against random play.

Trains one team run of mpe2's predator-prey game (three predators, ``adversary_0..2``, chase
one faster prey, ``agent_0``; 25 steps per episode) with ``sp-wrappers train simple_tag_v3``:
two PPO learners under ``TeamSelfPlay``, the budget stated per team in each team's own learner
steps. Or reads an existing run directory (``--run``). Then plays, with fresh seeds:

- random predators against random prey (the baseline);
- trained predators against random prey (did the predators learn to catch?);
- random predators against trained prey (did the prey learn to escape?);
- trained predators against trained prey (the two final learners against each other).

Trained players sample their actions from their policy (as they were trained); random players
draw uniformly from the 5 discrete actions. Per match-up the table gives, over ``--episodes``
episodes, the mean and a 95% interval (normal approximation over episodes) of:

- catches per episode: the steps on which a predator touches the prey, counted once per
  touching predator (each predator's reward is 10 per such touch, so it is a predator's return
  divided by 10);
- the predator team's return (sum over the three predators: 30 per catch);
- the prey's return (-10 per catch, minus the penalty for leaving the screen).

Run (the figures in docs/benchmarks.md and the README; 14 and 17 minutes on 2 CPU cores
shared with other work):
    python benchmarks/teams.py --episodes 1000 --out runs/bench-teams
    python benchmarks/teams.py --timesteps 98304 --team-change 12288 --episodes 1000 \
        --out runs/bench-teams-98k
    python benchmarks/teams.py --run runs/bench-teams --episodes 1000   # evaluate only

The defaults are the recipe's: 196,608 learner steps per team, ``team_change`` 24,576.
Pick ``--team-change`` as a multiple of both teams' rollouts (n_steps 128 x 8 copies x 3
predators = 3,072 learner steps; x 1 prey = 1,024) and ``--timesteps`` as a multiple of it, so
both teams get the same budget.

Writes RUN_DIR/teams_benchmark.json with the table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sp_wrappers.cli.app import run_command
from sp_wrappers.games.registry import make_game

PREDATORS = ("adversary_0", "adversary_1", "adversary_2")
PREY = ("agent_0",)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=196_608, help="learner steps per team")
    parser.add_argument("--team-change", type=int, default=24_576, help="learner steps")
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per match-up")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/bench-teams"))
    parser.add_argument("--run", type=Path, default=None, help="evaluate this run, no training")
    parser.add_argument("--train-arg", action="append", default=[], help="extra train option")
    return parser.parse_args(argv)


class Trained:
    """A team's trained model answering all of the team's agents in one forward pass."""

    def __init__(self, path: Path) -> None:
        from stable_baselines3 import PPO

        self.model = PPO.load(path, device="cpu")
        self.name = f"trained ({path.stem})"

    def act(self, observations: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        actions, _ = self.model.predict(observations, deterministic=False)
        return np.asarray(actions)


class Uniform:
    """Uniform random actions over the ``n`` discrete actions."""

    name = "random"

    def __init__(self, n: int) -> None:
        self.n = n

    def act(self, observations: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(self.n, size=len(observations))


def play(predators: Any, prey: Any, episodes: int, seed: int) -> dict[str, np.ndarray]:
    """Per-episode catches, predator team return and prey return over ``episodes`` episodes."""
    env = make_game("simple_tag_v3")  # the registered game: discrete actions, 25 steps
    from pettingzoo.utils.conversions import aec_to_parallel

    game = aec_to_parallel(env)
    rng = np.random.default_rng(seed)
    catches, predator_returns, prey_returns = [], [], []
    for episode in range(episodes):
        obs, _ = game.reset(seed=seed + episode)
        totals = dict.fromkeys(game.possible_agents, 0.0)
        while game.agents:
            actions: dict[str, int] = {}
            for team, policy in ((PREDATORS, predators), (PREY, prey)):
                batch = np.stack([obs[agent] for agent in team])
                for agent, action in zip(team, policy.act(batch, rng), strict=True):
                    actions[agent] = int(action)
            obs, rewards, _, _, _ = game.step(actions)
            for agent, reward in rewards.items():
                totals[agent] += float(reward)
        catches.append(totals[PREDATORS[0]] / 10.0)
        predator_returns.append(sum(totals[a] for a in PREDATORS))
        prey_returns.append(sum(totals[a] for a in PREY))
    game.close()
    return {
        "catches": np.asarray(catches),
        "predator_return": np.asarray(predator_returns),
        "prey_return": np.asarray(prey_returns),
    }


def mean_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and its 95% interval (normal approximation)."""
    mean = float(values.mean())
    half = 1.96 * float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return mean, mean - half, mean + half


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(1)
    run = args.run
    if run is None:
        run = args.out
        command = [
            "simple_tag_v3", "--timesteps", str(args.timesteps), "--team-change",
            str(args.team_change), "--n-envs", str(args.n_envs), "--seed", str(args.seed),
            "--out", str(run), "--no-progress", *args.train_arg,
        ]  # fmt: skip
        print("sp-wrappers train " + " ".join(command), flush=True)
        start = time.perf_counter()
        status = run_command("train", command)
        if status != 0:
            return status
        print(f"trained in {time.perf_counter() - start:.0f}s", flush=True)
    config = json.loads((run / "config.json").read_text())
    models = run / "models"
    trained_predators = Trained(models / "adversary.zip")
    trained_prey = Trained(models / "agent.zip")
    uniform = Uniform(5)
    matchups = [
        ("random", "random", uniform, uniform),
        ("trained", "random", trained_predators, uniform),
        ("random", "trained", uniform, trained_prey),
        ("trained", "trained", trained_predators, trained_prey),
    ]
    seed = 1_000_000 + args.seed  # episodes the run never trained on
    rows = []
    print(
        f"\nsimple_tag_v3, {config['timesteps']:,d} learner steps per team (team_change "
        f"{config['team_change']:,d}), {args.episodes} episodes per match-up, 95% intervals:"
    )
    header = f"{'predators':>9} {'prey':>8} | {'catches/episode':>22} | "
    header += f"{'predator team return':>24} | {'prey return':>24}"
    print(header)
    print("-" * len(header))
    for predators_name, prey_name, predators, prey in matchups:
        start = time.perf_counter()
        result = play(predators, prey, args.episodes, seed)
        row: dict[str, Any] = {"predators": predators_name, "prey": prey_name}
        cells = []
        for key in ("catches", "predator_return", "prey_return"):
            mean, low, high = mean_interval(result[key])
            row[key] = {"mean": mean, "low": low, "high": high}
            cells.append(f"{mean:8.2f} [{low:6.2f}, {high:6.2f}]")
        row["seconds"] = round(time.perf_counter() - start, 1)
        rows.append(row)
        print(
            f"{predators_name:>9} {prey_name:>8} | {cells[0]:>22} | {cells[1]:>24} | {cells[2]:>24}"
        )
    out = {
        "game": "simple_tag_v3",
        "run": str(run),
        "timesteps_per_team": config["timesteps"],
        "team_change": config["team_change"],
        "episodes": args.episodes,
        "eval_seed": seed,
        "rows": rows,
    }
    (run / "teams_benchmark.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
