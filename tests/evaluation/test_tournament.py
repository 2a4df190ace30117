"""Evaluation: play_match recording, round robin (serial, process, Ray), payoff matrix, ratings."""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.store import IncompatibleSnapshotError, SnapshotArchive
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.evaluation.match import play_match
from sp_wrappers.evaluation.round_robin import RoundRobinResult, pair_seed, round_robin
from sp_wrappers.games.baselines import PerfectTicTacToePolicy
from sp_wrappers.opponents.sampler import OpponentSampler
from sp_wrappers.ratings.archive_ratings import archive_ratings
from sp_wrappers.training.callbacks import SelfPlayCallback

# The Ray backend test starts Ray: one Ray cluster at a time (conftest.py).
pytestmark = pytest.mark.xdist_group("ray")

BASELINES = [RandomPolicy(), PerfectTicTacToePolicy()]


def train_archive(path) -> SnapshotArchive:
    """Three tiny tic-tac-toe snapshots (steps 0, 128, 256) and the training games between them."""
    archive = SnapshotArchive(path)
    env = SelfPlayEnv(tictactoe_v3.env(), opponent=OpponentSampler(archive))
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, seed=0, policy_kwargs={"net_arch": [16]}
    )
    model.learn(256, callback=SelfPlayCallback(archive, save_every=128))
    archive.close()
    return SnapshotArchive(path, create=False)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return train_archive(tmp_path_factory.mktemp("trained") / "archive").path


@pytest.fixture
def archive(trained, tmp_path):
    """A fresh copy of the trained archive, so each test writes its own match history."""
    return SnapshotArchive(shutil.copytree(trained, tmp_path / "archive"), create=False)


def evaluation_games(archive) -> list:
    return archive.matches(source="evaluation")


# ------------------------------------------------------------------------------------------------
# play_match
# ------------------------------------------------------------------------------------------------


def test_play_match_with_archive_records_every_game_as_evaluation(archive):
    before = archive.n_matches()
    result = play_match(tictactoe_v3.env, "snapshot-0002", RandomPolicy(), 6, archive=archive)
    records = evaluation_games(archive)
    assert archive.n_matches() - before == 6 == len(records)
    assert {(r.player_a, r.player_b) for r in records} == {("snapshot-0002", "random")}
    assert [r.score_a for r in records] == [outcome for _, outcome in result.games]
    assert all({r.seat_a, r.seat_b} == {"player_1", "player_2"} for r in records)


def test_snapshot_info_rows_work_wherever_snapshot_ids_do_in_evaluation(archive):
    infos = archive.snapshots()[:2]
    result = play_match(tictactoe_v3.env, infos[0], RandomPolicy(), 2, archive=archive)
    assert result.player_a == infos[0].id
    table = round_robin(
        archive, infos, games_per_pair=2, env_fn=tictactoe_v3.env, backend="serial", progress=False
    )
    assert set(table.players) == {info.id for info in infos}


def test_play_match_without_archive_writes_nothing(archive):
    before = archive.n_matches()
    play_match(tictactoe_v3.env, RandomPolicy(), PerfectTicTacToePolicy(), 2)
    assert archive.n_matches() == before


# ------------------------------------------------------------------------------------------------
# round_robin: the matrix and the match history
# ------------------------------------------------------------------------------------------------


def test_round_robin_payoff_matrix_is_complete_and_consistent(archive):
    result = round_robin(
        archive,
        games_per_pair=4,
        baselines=BASELINES,
        env_fn=tictactoe_v3.env,
        backend="serial",
        progress=False,
    )
    ids = ["snapshot-0000", "snapshot-0001", "snapshot-0002", "random", "minimax"]
    assert result.players == ids
    assert result.scores.shape == result.games.shape == (5, 5)
    off_diagonal = ~np.eye(5, dtype=bool)
    assert np.isnan(np.diag(result.scores)).all()
    np.testing.assert_allclose((result.scores + result.scores.T)[off_diagonal], 1.0)
    assert (result.games[off_diagonal] == 4).all() and (np.diag(result.games) == 0).all()
    assert len(result.matches) == 10
    assert result.score("minimax", "random") >= 0.5  # perfect play never loses


def test_round_robin_writes_every_game_to_the_match_history(archive):
    result = round_robin(
        archive,
        games_per_pair=2,
        baselines=[RandomPolicy()],
        env_fn=tictactoe_v3.env,
        backend="serial",
        progress=False,
    )
    records = evaluation_games(archive)
    assert len(records) == 6 * 2  # 4 players, 6 pairs
    played = sorted((m.player_a, m.player_b) for m in result.matches for _ in m.games)
    assert sorted((r.player_a, r.player_b) for r in records) == played
    rebuilt = RoundRobinResult.from_archive(archive, result.players, source="evaluation")
    np.testing.assert_array_equal(rebuilt.scores, result.scores)


def test_skip_played_plays_only_the_missing_games(archive):
    kwargs = dict(
        baselines=[RandomPolicy()],
        env_fn=tictactoe_v3.env,
        backend="serial",
        progress=False,
        skip_played=True,
    )
    round_robin(archive, games_per_pair=2, **kwargs)
    topped_up = round_robin(archive, games_per_pair=3, **kwargs)
    assert [m.n_games for m in topped_up.matches] == [1] * 6
    assert (topped_up.games[~np.eye(4, dtype=bool)] == 3).all()  # earlier games count too
    again = round_robin(archive, games_per_pair=3, **kwargs)
    assert again.matches == [] and len(evaluation_games(archive)) == 18
    np.testing.assert_array_equal(again.scores, topped_up.scores)


def test_participants_pick_a_subset_of_snapshots(archive):
    result = round_robin(
        archive,
        participants=["snapshot-0000", "snapshot-0002"],
        games_per_pair=2,
        env_fn=tictactoe_v3.env,
        backend="serial",
        progress=False,
    )
    assert result.players == ["snapshot-0000", "snapshot-0002"]
    assert result.games[0, 1] == 2


def test_pair_seeds_depend_only_on_the_seed_and_the_pair_index():
    assert pair_seed(7, 3) == pair_seed(7, 3)
    assert len({pair_seed(7, k) for k in range(100)}) == 100
    assert pair_seed(7, 3) != pair_seed(8, 3)


# ------------------------------------------------------------------------------------------------
# Backends give the same results for a seed
# ------------------------------------------------------------------------------------------------


def run_backend(trained, tmp_path, backend: str) -> RoundRobinResult:
    archive = SnapshotArchive(shutil.copytree(trained, tmp_path / backend), create=False)
    return round_robin(
        archive,
        games_per_pair=3,
        baselines=BASELINES,
        env_fn=tictactoe_v3.env,
        seed=11,
        backend=backend,
        n_workers=2,
        progress=False,
    )


def same_results(x: RoundRobinResult, y: RoundRobinResult) -> bool:
    return (
        x.players == y.players
        and np.array_equal(x.scores, y.scores, equal_nan=True)
        and [(m.player_a, m.player_b, m.games) for m in x.matches]
        == [(m.player_a, m.player_b, m.games) for m in y.matches]
    )


@pytest.fixture(scope="module")
def serial_result(trained, tmp_path_factory):
    return run_backend(trained, tmp_path_factory.mktemp("serial"), "serial")


def test_process_backend_gives_the_serial_results(trained, tmp_path, serial_result):
    assert same_results(run_backend(trained, tmp_path, "process"), serial_result)


def test_ray_backend_gives_the_serial_results(trained, tmp_path, serial_result, monkeypatch):
    # the backend starts a Ray of its own, even where the machine advertises another cluster
    # (RAY_ADDRESS, or a `ray start` / another job's Ray): ray.init(num_cpus=...) refused to
    # run there ("When connecting to an existing cluster, num_cpus ... must not be provided")
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    try:
        assert same_results(run_backend(trained, tmp_path, "ray"), serial_result)
    finally:
        ray.shutdown()


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------


def test_unknown_backend_is_a_value_error_listing_the_choices(archive):
    with pytest.raises(ValueError, match="process, ray, serial"):
        round_robin(archive, env_fn=tictactoe_v3.env, backend="dask")


def test_ray_backend_without_ray_names_the_extra(archive, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r'pip install "sp-wrappers\[ray\]"'):
        round_robin(archive, env_fn=tictactoe_v3.env, backend="ray")


def test_a_game_that_does_not_fit_the_snapshots_fails_before_playing(archive):
    with pytest.raises(IncompatibleSnapshotError):
        round_robin(archive, env_fn=connect_four_v3.env, backend="serial", progress=False)
    assert evaluation_games(archive) == []


def test_duplicate_player_ids_are_rejected(archive):
    with pytest.raises(ValueError, match="unique"):
        round_robin(
            archive,
            baselines=[RandomPolicy(), RandomPolicy()],
            env_fn=tictactoe_v3.env,
            backend="serial",
        )


def test_missing_env_fn_and_unknown_snapshot_are_clear_errors(archive):
    with pytest.raises(ValueError, match="env_fn"):
        round_robin(archive, backend="serial")
    with pytest.raises(KeyError, match="snapshot-0099"):
        round_robin(
            archive,
            participants=["snapshot-0099", "snapshot-0000"],
            env_fn=tictactoe_v3.env,
            backend="serial",
        )


# ------------------------------------------------------------------------------------------------
# Ratings from the archive
# ------------------------------------------------------------------------------------------------


def test_archive_ratings_anchor_random_and_count_training_games(archive):
    training = archive_ratings(archive)  # training games only: no random, mean-centred fit
    assert training.anchor is None and training.baselines == {}
    assert training.snapshots[0].games > 0
    round_robin(
        archive,
        games_per_pair=4,
        baselines=BASELINES,
        env_fn=tictactoe_v3.env,
        backend="serial",
        progress=False,
    )
    ratings = archive_ratings(archive, anchor="random", anchor_rating=1000.0)
    assert ratings.anchor == "random" and ratings.baselines["random"] == 1000.0
    assert ratings.baselines["minimax"] > 1000.0
    first = ratings.snapshots[0]
    assert first.games == training.snapshots[0].games + 4 * 4  # 4 opponents, 4 games each
    assert first.low < first.rating < first.high
    assert set(first.baseline_results) == {"random", "minimax"}
    assert first.baseline_games == 8
    assert 0.0 <= first.win_rate_vs_baselines <= 1.0
    table = ratings.table()
    assert "snapshot-0002" in table and "random fixed at 1000" in table
    rows = {row["id"]: row for row in ratings.rows()}
    assert rows["random"]["kind"] == "baseline" and rows["snapshot-0000"]["step"] == 0


def test_pruned_snapshots_in_the_history_are_neither_listed_nor_taken_for_baselines(archive):
    archive.record_match("snapshot-0001", "random", 1.0)
    archive.record_match("snapshot-0002", "snapshot-9999", 0.0)  # a bot that only looks like one
    pruning = SnapshotArchive(archive.path, max_snapshots=2, keep_recent=1)
    assert pruning.prune() == ["snapshot-0001"]
    every = {info.id: info.pruned for info in archive.snapshots(include_pruned=True)}
    assert every == {"snapshot-0000": False, "snapshot-0001": True, "snapshot-0002": False}
    ratings = archive_ratings(archive)
    assert [s.id for s in ratings.snapshots] == ["snapshot-0000", "snapshot-0002"]
    assert set(ratings.baselines) == {"random", "snapshot-9999"}
    players = RoundRobinResult.from_archive(archive).players
    assert "snapshot-0001" not in players and "snapshot-9999" in players


def test_archive_ratings_of_an_archive_without_games_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="no games"):
        archive_ratings(SnapshotArchive(tmp_path / "empty"))
