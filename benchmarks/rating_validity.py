"""Are the ratings right? Bradley-Terry vs online Elo, on synthetic players and on a real run.

Run (after ``pip install -e ".[masking,games]"``, or with ``PYTHONPATH=.`` from the repo root):

      python benchmarks/rating_validity.py                 # synthetic + ~40 s tic-tac-toe run
      python benchmarks/rating_validity.py --no-real       # synthetic only (about a second)

Synthetic: players with known Bradley-Terry strengths play a seeded round robin. We fit
``fit_bradley_terry`` once over all games and, as ML-Agents logs it, run online Elo (K=16) over the
same games in a random order. Both are scored against the truth: Spearman rank correlation, RMSE
after aligning the means, and (for Bradley-Terry, which has error bars) the mean width and the
coverage of its 95% intervals.

Real: a short MaskablePPO self-play run on tic-tac-toe saves snapshots into a ``SnapshotArchive``.
Each snapshot's Bradley-Terry rating, fitted over the training matches only, is compared with a
measurement it never saw: its win rate against ``RandomPolicy``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from sp_wrappers.ratings.bradley_terry import fit_bradley_terry
from sp_wrappers.ratings.elo import EloRatings


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=20)
    parser.add_argument("--games-per-pair", type=int, default=50)
    parser.add_argument("--spread", type=float, default=200.0, help="std of true strengths (Elo)")
    parser.add_argument("--replicates", type=int, default=20, help="seeded tournaments to average")
    parser.add_argument("--elo-k", type=float, default=16.0)
    parser.add_argument("--real", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--timesteps", type=int, default=30_000, help="learner steps (real part)")
    parser.add_argument("--save-every", type=int, default=3_000, help="learner steps")
    parser.add_argument("--eval-games", type=int, default=100, help="games per snapshot vs random")
    parser.add_argument("--out", type=Path, default=None, help="archive dir (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1, ties sharing their average rank."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(len(x))
    for value in np.unique(x):
        tied = x == value
        r[tied] = r[tied].mean()
    return r


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(ranks(x), ranks(y))[0, 1])


def rmse_after_centering(estimate: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((estimate - estimate.mean() - (truth - truth.mean())) ** 2)))


def tournament(rng: np.random.Generator, args: argparse.Namespace):
    """True strengths and a shuffled round robin of win/loss games between them."""
    truth = rng.normal(0.0, args.spread, args.players)
    a, b = np.triu_indices(args.players, 1)
    a, b = np.repeat(a, args.games_per_pair), np.repeat(b, args.games_per_pair)
    wins = rng.random(len(a)) < 1.0 / (1.0 + 10.0 ** ((truth[b] - truth[a]) / 400.0))
    order = rng.permutation(len(a))
    games = [(f"p{a[i]:02d}", f"p{b[i]:02d}", float(wins[i])) for i in order]
    return truth, games


def synthetic(args: argparse.Namespace) -> None:
    names = [f"p{i:02d}" for i in range(args.players)]
    rows = {"bt": [], "elo": []}
    fit_seconds = []
    for replicate in range(args.replicates):
        truth, games = tournament(np.random.default_rng(args.seed + replicate), args)

        start = time.perf_counter()
        bt = fit_bradley_terry(games, center=0.0)
        fit_seconds.append(time.perf_counter() - start)
        estimate = np.array([bt.ratings[p] for p in names])
        low, high = np.array([bt.intervals[p] for p in names]).T
        centred = truth - truth.mean()
        rows["bt"].append(
            (
                spearman(estimate, truth),
                rmse_after_centering(estimate, truth),
                float(np.mean(high - low)),
                float(np.mean((low <= centred) & (centred <= high))),
            )
        )

        elo = EloRatings(k=args.elo_k)
        for a, b, score in games:  # already in a random order
            elo.update(a, b, score)
        estimate = np.array([elo.rating(p) for p in names])
        rows["elo"].append((spearman(estimate, truth), rmse_after_centering(estimate, truth)))

    n_games = len(games)
    print(
        f"\n== synthetic: {args.players} players, {args.games_per_pair} games per pair "
        f"({n_games:,d} games), true strengths ~ N(0, {args.spread:g}) Elo, "
        f"{args.replicates} seeded replicates (mean ± std) =="
    )
    print(
        f"{'method':<28} {'spearman':>15} {'rmse (Elo)':>15} {'95% CI width':>14} {'coverage':>9}"
    )
    bt, elo = np.array(rows["bt"]), np.array(rows["elo"])
    print(
        f"{'Bradley-Terry (batch MLE)':<28} {bt[:, 0].mean():7.4f} ± {bt[:, 0].std():5.4f} "
        f"{bt[:, 1].mean():7.1f} ± {bt[:, 1].std():5.1f} {bt[:, 2].mean():14.1f} "
        f"{bt[:, 3].mean():9.3f}"
    )
    print(
        f"{f'online Elo, K={args.elo_k:g}':<28} {elo[:, 0].mean():7.4f} ± {elo[:, 0].std():5.4f} "
        f"{elo[:, 1].mean():7.1f} ± {elo[:, 1].std():5.1f} {'-':>14} {'-':>9}"
    )
    print(f"Bradley-Terry fit time: {1000 * np.mean(fit_seconds):.1f} ms per {n_games:,d} games")
    verdict = "PASS" if bt[:, 0].mean() >= 0.95 else "FAIL"
    print(f"target Spearman >= 0.95 for Bradley-Terry: {verdict}")


def real(args: argparse.Namespace) -> None:
    try:
        import torch
        from pettingzoo.classic import tictactoe_v3
        from sb3_contrib import MaskablePPO

        from sp_wrappers.archive.store import SnapshotArchive
        from sp_wrappers.core.policies import RandomPolicy
        from sp_wrappers.envs.selfplay_env import SelfPlayEnv
        from sp_wrappers.evaluation.match import play_match
        from sp_wrappers.opponents.sampler import OpponentSampler
        from sp_wrappers.ratings.attribution import attribute_learner_matches
        from sp_wrappers.training.callbacks import SelfPlayCallback
    except ImportError as error:
        print(f"\n== real: skipped ({error}); install the 'masking' and 'games' extras ==")
        return

    torch.set_num_threads(1)
    out = args.out or Path(tempfile.mkdtemp(prefix="rating_validity_"))
    archive = SnapshotArchive(out / "archive")
    sampler = OpponentSampler(archive, window=10, latest_ratio=0.5, seed=args.seed)
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random", opponent=sampler)
    model = MaskablePPO("MlpPolicy", env, n_steps=1024, batch_size=256, seed=args.seed, verbose=0)
    selfplay = SelfPlayCallback(archive, save_every=args.save_every)
    print(f"\n== real: MaskablePPO self-play on tic-tac-toe, {args.timesteps:,d} steps ==")
    start = time.perf_counter()
    model.learn(args.timesteps, callback=selfplay)
    print(f"trained in {time.perf_counter() - start:.0f}s; archive: {archive.path}")

    snapshots = archive.snapshots()
    steps = sorted((info.step, info.id) for info in snapshots)
    games = attribute_learner_matches(archive.matches(), steps)
    bt = fit_bradley_terry(games, anchor=steps[0][1], anchor_rating=1000.0)
    print(
        f"{len(games):,d} training games between {len(bt.ratings)} snapshots; BT converged: "
        f"{bt.converged}"
    )

    reference = RandomPolicy()
    print(
        f"\n{'snapshot':<16} {'step':>7} {'BT rating':>10} {'95% interval':>18} "
        f"{'online Elo':>10} {'vs random':>10}"
    )
    rated, bt_ratings, elo_ratings, win_rates = [], [], [], []
    for info in snapshots:
        if info.id not in bt.ratings:
            continue
        policy = archive.load_policy(info.id, deterministic=False)
        record = play_match(tictactoe_v3.env, policy, reference, args.eval_games, seed=args.seed)
        elo = (info.ratings or {}).get("elo", float("nan"))
        low, high = bt.intervals[info.id]
        print(
            f"{info.id:<16} {info.step:>7,d} {bt.ratings[info.id]:10.1f} "
            f"[{low:7.1f}, {high:7.1f}] {elo:10.1f} {record.score_a:10.3f}"
        )
        rated.append(info.id)
        bt_ratings.append(bt.ratings[info.id])
        elo_ratings.append(elo)
        win_rates.append(record.score_a)
    print(f"\nscore vs random = (wins + draws/2) / {args.eval_games} games, seats alternating")
    print(f"Spearman(BT rating, score vs random):  {spearman(bt_ratings, win_rates):.3f}")
    if np.all(np.isfinite(elo_ratings)):
        print(f"Spearman(online Elo, score vs random): {spearman(elo_ratings, win_rates):.3f}")


def main() -> None:
    args = parse_args()
    synthetic(args)
    if args.real:
        real(args)


if __name__ == "__main__":
    main()
