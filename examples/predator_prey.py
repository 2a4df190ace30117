"""Predator-prey with two PPO learners: asymmetric self-play on mpe2's ``simple_tag_v3``.

Three predators (``adversary_0..2``, one shared network) chase one faster prey (``agent_0``).
``TeamSelfPlay`` trains one team at a time for ``--team-change`` of its learner steps while the
other team plays frozen snapshots from its own archive, as ML-Agents' ghost trainer does.

Run:  python examples/predator_prey.py                 # 196,608 learner steps per team
      python examples/predator_prey.py --tiny          # a few seconds, for the tests

Prints each team's Elo at every team change, then each final team against random play
(catches per episode: steps on which a predator touches the prey, counted per predator).
Needs ``pip install "sp-wrappers[mpe]"``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from mpe2 import simple_tag_v3
from stable_baselines3 import PPO

from sp_wrappers.training.team_selfplay import TeamSelfPlay
from sp_wrappers.training.team_setup import make_team_vec_env

TEAMS = "prefix"  # adversary_0..2 -> "adversary", agent_0 -> "agent"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=196_608, help="learner steps per team")
    parser.add_argument("--team-change", type=int, default=24_576, help="learner steps")
    parser.add_argument("--save-every", type=int, default=6_144, help="learner steps")
    parser.add_argument("--n-envs", type=int, default=8, help="game copies per team")
    parser.add_argument("--max-cycles", type=int, default=25, help="steps per episode")
    parser.add_argument("--eval-episodes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/predator_prey"))
    parser.add_argument("--tiny", action="store_true", help="a tiny budget (tests)")
    args = parser.parse_args()
    if args.tiny:
        args.timesteps, args.team_change, args.save_every = 384, 192, 192
        args.n_envs, args.max_cycles, args.eval_episodes = 2, 10, 4
    return args


def catches_against_random(
    model: PPO | None, team: str, max_cycles: int, episodes: int, seed: int
) -> float:
    """Mean catches per episode with ``team`` played by ``model`` and the other team random."""
    env = simple_tag_v3.parallel_env(max_cycles=max_cycles, continuous_actions=False)
    rng = np.random.default_rng(seed)
    catches = 0.0
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        while env.agents:
            ours = [a for a in env.agents if a.rsplit("_", 1)[0] == team]
            actions = {a: int(rng.integers(5)) for a in env.agents if a not in ours}
            if ours:
                predicted, _ = model.predict(np.stack([obs[a] for a in ours]))
                actions.update(zip(ours, map(int, predicted), strict=True))
            obs, rewards, _, _, _ = env.step(actions)
            catches += rewards["adversary_0"] / 10  # each predator gets 10 per catch
    env.close()
    return catches / episodes


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)

    def env_fn():
        return simple_tag_v3.parallel_env(max_cycles=args.max_cycles, continuous_actions=False)

    models = {
        team: PPO(
            "MlpPolicy",
            make_team_vec_env(env_fn, TEAMS, team, n_envs=args.n_envs, seed=args.seed),
            n_steps=32 if args.tiny else 128,
            batch_size=64 if args.tiny else 256,
            n_epochs=1 if args.tiny else 10,
            gamma=0.95,
            ent_coef=0.01,
            policy_kwargs={"net_arch": [64, 64]},
            seed=args.seed,
        )
        for team in ("adversary", "agent")
    }
    run = TeamSelfPlay(
        env_fn,
        TEAMS,
        models,
        team_change=args.team_change,
        save_every=args.save_every,
        run_dir=args.out,  # archives/<team>/, models/<team>.zip, team_selfplay.json
        resume=True,  # continue the run in --out when there is one
        seed=args.seed,
    )
    total = 2 * args.timesteps  # TeamSelfPlay counts the steps of both teams together
    print(f"{'turn':>4}  {'learned':<9}  {'steps (adversary / agent)':>25}  Elo per team")
    while run.total_steps < total:
        team = run.learning_team
        run.learn(min(total, run.total_steps + args.team_change))
        steps = " / ".join(f"{m.num_timesteps:,d}" for m in models.values())
        elo = ", ".join(f"{t} {e:.0f}" for t, e in run.team_elo.items())
        print(f"{run.team_changes:>4}  {team:<9}  {steps:>25}  {elo}")

    print("\nFinal teams against random play, catches per episode:")
    random_catches = catches_against_random(None, "", args.max_cycles, args.eval_episodes, 1)
    for team, model in models.items():
        mean = catches_against_random(model, team, args.max_cycles, args.eval_episodes, 1)
        print(f"  trained {team:<9} {mean:6.2f}   (random against random: {random_catches:.2f})")


if __name__ == "__main__":
    main()
