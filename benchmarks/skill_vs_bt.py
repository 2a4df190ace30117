"""Do the online skill ratings rank snapshots as the Bradley-Terry fit does, in team and
free-for-all games?

Run (with ``PYTHONPATH=.`` from the repo root):

      python benchmarks/skill_vs_bt.py                            # both games, small budget
      python benchmarks/skill_vs_bt.py --steps 20000 --save-every 2000

For each game a MaskablePPO/PPO learner trains with :class:`~sp_wrappers.SelfPlayCallback`
(``--steps`` learner steps, a snapshot every ``--save-every``): a team game (four-seat Texas
Hold'em played by two partnerships, seats 0 and 2 against 1 and 3, a team's result its chips
against the other's; the opposing team played by the archive's snapshots) and a four-player game
(Texas Hold'em with four seats, the three opposing seats drawn from the archive). For each game
the script prints Spearman's rank correlation over the snapshots that played between the
Bradley-Terry fit over the whole match history (``archive_ratings``: each match row of a game,
one per opposing seat or team, the learner's games credited to the snapshot it descended from)
and

- ``online``: the skill the callback kept during training and stored (``ratings["skill"]``,
  updated from training games only),
- ``replay``: openskill over the same games the fit saw, in order (what ``sp-wrappers ratings``
  shows beside the fit).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from scipy.stats import spearmanr
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv

from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayEnv, SnapshotArchive
from sp_wrappers.envs.vector.factory import make_selfplay_vec_env
from sp_wrappers.ratings.archive_ratings import archive_ratings


def make_holdem() -> Any:
    from pettingzoo.classic import texas_holdem_v4

    return texas_holdem_v4.env(num_players=4)


GAMES = {
    "partnership hold'em (2 v 2 teams)": (make_holdem, {"learner": "odd", "teams": {
        "odd": ["player_0", "player_2"], "even": ["player_1", "player_3"]}}),
    "texas hold'em (4 players)": (make_holdem, {}),
}  # fmt: skip


def measure(name: str, env_fn: Any, env_kwargs: dict, args: argparse.Namespace, root: Path) -> None:
    start = time.perf_counter()
    archive = SnapshotArchive(root / "archive")
    sampler = OpponentSampler(archive, seed=args.seed)
    if "teams" in env_kwargs:  # turn-based: each teammate acts on its own turn (SelfPlayEnv)
        env = DummyVecEnv(
            [lambda: SelfPlayEnv(env_fn(), opponent=sampler, **env_kwargs) for _ in range(2)]
        )
    else:
        env = make_selfplay_vec_env(env_fn, n_envs=2, seed=args.seed, opponent=sampler)
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=128, seed=args.seed,
                policy_kwargs={"net_arch": [64, 64]})  # fmt: skip
    model.learn(args.steps, callback=SelfPlayCallback(archive, save_every=args.save_every))
    env.close()
    ratings = archive_ratings(archive)
    online = {info.id: info.ratings.get("skill") for info in archive.snapshots()}
    rows = [s for s in ratings.snapshots if s.games and online.get(s.id) is not None]
    bt = [s.rating for s in rows]
    rho_online = spearmanr(bt, [online[s.id] for s in rows]).statistic
    rho_replay = spearmanr(bt, [s.skill for s in rows]).statistic
    seconds = time.perf_counter() - start
    print(f"{name}: {len(rows)} snapshots, {archive.n_matches()} match rows, {seconds:.0f} s")
    print(f"  Spearman vs Bradley-Terry: online skill {rho_online:+.3f}, "
          f"replayed skill {rho_replay:+.3f}")  # fmt: skip
    if any(math.isnan(rho) for rho in (rho_online, rho_replay)):
        print("  (nan: one side ranks every snapshot alike; train longer)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6000, help="learner steps per game")
    parser.add_argument("--save-every", type=int, default=600, help="snapshot interval (steps)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=("team", "players"), help="one of the two games")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name, (env_fn, env_kwargs) in GAMES.items():
        if args.only and ("teams" in env_kwargs) != (args.only == "team"):
            continue
        with tempfile.TemporaryDirectory() as folder:
            measure(name, env_fn, env_kwargs, args, Path(folder))


if __name__ == "__main__":
    main()
