"""Every constructor and function that takes an archive also takes its path (a config file can
name it), and rejects anything else at once with a TypeError that names what it accepts."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers import (
    OpponentSampler,
    PerfectTicTacToePolicy,
    RandomPolicy,
    SelfPlayCallback,
    SelfPlayEnv,
    SnapshotArchive,
    archive_ratings,
    play_match,
    round_robin,
    store_archive_ratings,
)
from sp_wrappers.archive.store import ArchiveFormatError
from sp_wrappers.evaluation.round_robin import RoundRobinResult


def train(archive_arg_env, archive_arg_callback, seed: int = 0) -> None:
    env = SelfPlayEnv(tictactoe_v3.env(), opponent=OpponentSampler(archive_arg_env, seed=seed))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=seed)
    model.learn(256, callback=SelfPlayCallback(archive_arg_callback, save_every=64))


def history(path: Path) -> tuple[list[tuple[str, int]], list[tuple[str, str, float, int]]]:
    archive = SnapshotArchive(path, create=False)
    snapshots = [(s.id, s.step) for s in archive.snapshots()]
    matches = [(m.player_a, m.player_b, m.score_a, m.step) for m in archive.matches()]
    return snapshots, matches


@pytest.fixture(scope="module")
def rated_archive(tmp_path_factory) -> Path:
    """An archive with two snapshots and games against a baseline, built once."""
    path = tmp_path_factory.mktemp("rated") / "archive"
    train(str(path), str(path))
    archive = SnapshotArchive(path)
    for info in archive.snapshots()[:2]:
        play_match(tictactoe_v3.env, info.id, RandomPolicy(), 4, archive=archive)
    return path


def test_training_with_a_path_records_what_training_with_an_archive_object_records(tmp_path):
    by_path, by_object = tmp_path / "by_path", tmp_path / "by_object"
    train(str(by_path), by_path)  # str for the sampler, pathlib.Path for the callback
    archive = SnapshotArchive(by_object)
    train(archive, archive)

    snapshots, matches = history(by_path)
    assert [step for _, step in snapshots] == [0, 64, 128, 192, 256]
    assert len(matches) > 10
    assert (snapshots, matches) == history(by_object)


def test_sampler_from_a_path_draws_the_same_opponents_as_from_the_archive(rated_archive):
    by_path = OpponentSampler(str(rated_archive), latest_ratio=0.0, seed=3)
    by_object = OpponentSampler(SnapshotArchive(rated_archive), latest_ratio=0.0, seed=3)
    assert isinstance(by_path.archive, SnapshotArchive)
    draws = [(by_path.draw().policy_id, by_object.draw().policy_id) for _ in range(20)]
    assert [a for a, _ in draws] == [b for _, b in draws]
    assert len({a for a, _ in draws}) > 1


def test_evaluation_functions_give_the_same_results_for_a_path_and_an_archive(rated_archive):
    archive = SnapshotArchive(rated_archive)
    assert archive_ratings(str(rated_archive)).table() == archive_ratings(archive).table()
    from_path = RoundRobinResult.from_archive(rated_archive)
    assert from_path.players == RoundRobinResult.from_archive(archive).players
    assert store_archive_ratings(rated_archive).table() == store_archive_ratings(archive).table()


def test_round_robin_and_play_match_record_into_the_archive_at_a_path(tmp_path, rated_archive):
    archive = SnapshotArchive(rated_archive)
    before = archive.n_matches()
    play_match(tictactoe_v3.env, "snapshot-0000", RandomPolicy(), 2, archive=str(rated_archive))
    result = round_robin(
        rated_archive,
        participants=["snapshot-0000"],
        baselines=[PerfectTicTacToePolicy()],
        games_per_pair=2,
        env_fn=tictactoe_v3.env,
        backend="serial",
        progress=False,
    )
    assert result.players == ["snapshot-0000", "minimax"]
    assert archive.n_matches() == before + 4


def test_evaluating_a_path_that_holds_no_archive_fails_and_creates_nothing(tmp_path):
    missing = tmp_path / "no-archive"
    for evaluate in (archive_ratings, store_archive_ratings, RoundRobinResult.from_archive):
        with pytest.raises(ArchiveFormatError, match="is not a snapshot archive"):
            evaluate(missing)
    assert not missing.exists()


def test_training_constructors_create_the_archive_a_path_names(tmp_path):
    OpponentSampler(tmp_path / "a")
    SelfPlayCallback(str(tmp_path / "b"))
    assert (tmp_path / "a" / "index.sqlite").exists() and (tmp_path / "b" / "index.sqlite").exists()


CONSTRUCTORS = {
    "OpponentSampler": OpponentSampler,
    "SelfPlayCallback": SelfPlayCallback,
    "round_robin": functools.partial(round_robin, env_fn=tictactoe_v3.env),
    "archive_ratings": archive_ratings,
    "store_archive_ratings": store_archive_ratings,
    "RoundRobinResult.from_archive": RoundRobinResult.from_archive,
    "play_match": lambda archive: play_match(
        tictactoe_v3.env, RandomPolicy(), RandomPolicy(policy_id="r"), 1, archive=archive
    ),
}


WRONG = [42, None, {"path": "runs/x"}, ["runs/x"], b"runs/x", ""]
CASES = [
    (name, wrong)
    for name in sorted(CONSTRUCTORS)
    for wrong in WRONG
    if not (name == "play_match" and wrong is None)  # play_match's archive is optional
]


@pytest.mark.parametrize(("name", "wrong"), CASES)
def test_a_wrong_archive_type_fails_at_construction_naming_what_is_accepted(name, wrong):
    with pytest.raises(TypeError, match=r"takes a SnapshotArchive or the path of its directory"):
        CONSTRUCTORS[name](wrong)


def test_the_callback_warns_when_the_envs_draw_from_another_archive(tmp_path):
    env = SelfPlayEnv(tictactoe_v3.env(), opponent=OpponentSampler(tmp_path / "typo"))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    callback = SelfPlayCallback(tmp_path / "archive", save_every=64)
    with (
        pytest.warns(UserWarning, match=r"the envs draw their opponents from .*typo"),
        pytest.raises(RuntimeError, match=r"typo had any snapshot.* the same archive"),
    ):
        model.learn(64, callback=callback)


def test_the_callback_is_silent_when_the_envs_draw_from_its_archive(tmp_path, recwarn):
    train(tmp_path / "archive", str(tmp_path / "archive"))
    assert not [w for w in recwarn if "draw their opponents" in str(w.message)]
