"""SnapshotArchive: persistence, crash safety, concurrent readers, cache bound, pruning, errors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.store import (
    ArchiveFormatError,
    CorruptSnapshotError,
    IncompatibleSnapshotError,
    SnapshotArchive,
)
from sp_wrappers.envs.selfplay_env import SelfPlayEnv

# A model the subprocesses can build too: tic-tac-toe, a small MaskablePPO.
MAKE_MODEL = textwrap.dedent(
    """
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO
    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    def make_model(seed=0):
        env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
        return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=seed,
                           policy_kwargs={"net_arch": [16]})
    """
)


def make_model(seed: int = 0) -> MaskablePPO:
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, seed=seed, policy_kwargs={"net_arch": [16]}
    )


def run_python(code: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", MAKE_MODEL + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def boards(n: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random tic-tac-toe-shaped observations and all-legal masks."""
    rng = np.random.default_rng(seed)
    obs = rng.integers(0, 2, size=(n, 3, 3, 2)).astype(np.int8)
    return obs, np.ones((n, 9), dtype=bool)


def test_saved_snapshot_plays_like_the_model_it_came_from(tmp_path):
    model = make_model()
    archive = SnapshotArchive(tmp_path)
    info = archive.save(model, step=123, tags=("first",), rating=1200.0)
    assert (info.id, info.step, info.tags, info.ratings) == (
        "snapshot-0000",
        123,
        ("first",),
        {"elo": 1200.0},
    )
    obs, masks = boards()
    frozen = archive.load_policy(info.id, deterministic=True)
    expected = [
        model.predict(o, action_masks=m, deterministic=True)[0]
        for o, m in zip(obs, masks, strict=True)
    ]
    assert frozen.act(obs, masks, np.random.default_rng(0)).tolist() == np.array(expected).tolist()
    assert frozen.policy_id == "snapshot-0000"


def test_reopening_in_a_new_process_restores_snapshots_ratings_and_matches(tmp_path):
    model = make_model()
    archive = SnapshotArchive(tmp_path)
    for step in (0, 100, 200):
        archive.save(model, step=step)
    archive.set_ratings({"snapshot-0001": {"elo": 1234.5, "bt": 1100.0}})
    archive.record_matches(
        [
            dict(player_a="learner", player_b="snapshot-0000", score_a=1.0, step=50),
            dict(
                player_a="learner",
                player_b="snapshot-0001",
                score_a=0.5,
                step=150,
                seat_a="player_1",
            ),
        ]
    )
    obs, masks = boards()
    expected = archive.load_policy("snapshot-0002", deterministic=True).act(obs, masks, None)
    np.save(tmp_path / "obs.npy", obs)
    # The child has no model object: it rebuilds the policy from the stored spec and weights.
    result = run_python(
        f"""
        import json, numpy as np
        from sp_wrappers.archive.store import SnapshotArchive
        archive = SnapshotArchive({str(tmp_path)!r}, create=False)
        obs = np.load({str(tmp_path / "obs.npy")!r})
        policy = archive.load_policy("snapshot-0002", deterministic=True)
        print(json.dumps(dict(
            ids=[s.id for s in archive.snapshots()],
            steps=[s.step for s in archive.snapshots()],
            ratings=archive.get("snapshot-0001").ratings,
            games=archive.get("snapshot-0001").games,
            matches=[(m.player_a, m.player_b, m.score_a, m.step, m.seat_a)
                     for m in archive.matches()],
            actions=policy.act(obs, np.ones((len(obs), 9), bool), None).tolist(),
        )))
        """
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["ids"] == ["snapshot-0000", "snapshot-0001", "snapshot-0002"]
    assert seen["steps"] == [0, 100, 200]
    assert seen["ratings"] == {"elo": 1234.5, "bt": 1100.0}
    assert seen["games"] == 1
    assert seen["matches"] == [
        ["learner", "snapshot-0000", 1.0, 50, None],
        ["learner", "snapshot-0001", 0.5, 150, "player_1"],
    ]
    assert seen["actions"] == expected.tolist()


def test_snapshot_numbering_continues_after_reopening(tmp_path):
    model = make_model()
    SnapshotArchive(tmp_path).save(model, step=0)
    assert SnapshotArchive(tmp_path).save(model, step=10).id == "snapshot-0001"


def test_weights_are_safetensors_and_loading_never_unpickles(tmp_path):
    archive = SnapshotArchive(tmp_path)
    info = archive.save(make_model(), step=0)
    header = info.file.read_bytes()
    size = int.from_bytes(header[:8], "little")
    assert json.loads(header[8 : 8 + size])["__metadata__"]["id"] == info.id
    assert b"\x80\x04" not in header[:2]  # not a pickle stream
    spec = info.policy_spec
    assert spec["policy_class"] == "sb3_contrib.common.maskable.policies:MaskableActorCriticPolicy"
    json.dumps(spec)  # plain JSON all the way down


def test_spec_naming_an_untrusted_class_is_refused_without_importing_it(tmp_path):
    archive = SnapshotArchive(tmp_path)
    archive.save(make_model(), step=0)
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    spec = json.loads(conn.execute("SELECT policy_spec FROM snapshots").fetchone()[0])
    spec["policy_class"] = "os:system"
    conn.execute("UPDATE snapshots SET policy_spec = ?", (json.dumps(spec),))
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match="not trusted"):
        SnapshotArchive(tmp_path).load_policy("snapshot-0000")


SAVE_FOREVER = """
import sys
from sp_wrappers.archive.store import SnapshotArchive
archive = SnapshotArchive(sys.argv[1])
model = make_model()
print("ready", flush=True)
step = 0
while True:
    archive.save(model, step=step)
    match = dict(player_a="learner", player_b=archive.latest().id, score_a=1.0, step=step)
    archive.record_matches([match] * 5)
    step += 1
"""


def test_sigkill_during_saves_leaves_a_consistent_archive(tmp_path):
    rng = np.random.default_rng(0)
    for round_ in range(4):
        child = subprocess.Popen(
            [sys.executable, "-c", MAKE_MODEL + SAVE_FOREVER, str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.2 + rng.random() * 0.8)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        archive = SnapshotArchive(tmp_path)
        listed = archive.snapshots()
        assert listed, f"round {round_}: the child saved nothing before it was killed"
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("error")  # a hash mismatch would warn
            for info in listed:
                assert info.file.exists()
                archive.load_policy(info.id)
        assert [i.seq for i in listed] == list(range(len(listed)))
        match_ids = [m.player_b for m in archive.matches()]
        assert set(match_ids) <= {i.id for i in listed}
        archive.close()


READ_WHILE_WRITING = """
import sys, time
from sp_wrappers.archive.store import SnapshotArchive
archive = SnapshotArchive(sys.argv[1])
model = make_model()
for step in range(40):
    archive.save(model, step=step)
    match = dict(player_a="learner", player_b=archive.latest().id, score_a=0.5, step=step)
    archive.record_matches([match] * 3)
print("done", flush=True)
"""


def test_a_reader_in_another_process_sees_a_consistent_view_while_the_trainer_writes(tmp_path):
    writer = subprocess.Popen(
        [sys.executable, "-c", MAKE_MODEL + READ_WHILE_WRITING, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    while not (tmp_path / "index.sqlite").exists():
        time.sleep(0.05)
    reader = SnapshotArchive(tmp_path, cache_size=2)
    seen_counts = []
    deadline = time.time() + 90
    while writer.poll() is None and time.time() < deadline:
        listed = reader.snapshots()
        seen_counts.append(len(listed))
        if listed:
            reader.load_policy(listed[-1].id)  # every listed snapshot is complete on disk
        for match in reader.matches():
            assert match.player_b in {i.id for i in reader.snapshots()}
    assert writer.wait(timeout=60) == 0
    assert seen_counts == sorted(seen_counts), "the listing went backwards"
    assert len(reader.snapshots()) == 40
    assert reader.n_matches() == 120


def test_a_corrupted_file_is_skipped_with_a_warning_naming_it(tmp_path):
    archive = SnapshotArchive(tmp_path)
    model = make_model()
    archive.save(model, step=0)
    bad = archive.save(model, step=1)
    data = bytearray(bad.file.read_bytes())
    data[-1] ^= 0xFF
    bad.file.write_bytes(bytes(data))
    reopened = SnapshotArchive(tmp_path)
    with pytest.warns(RuntimeWarning, match=r"snapshot-0001.*sha256"):
        with pytest.raises(CorruptSnapshotError):
            reopened.load_policy("snapshot-0001")
    assert [i.id for i in reopened.snapshots()] == ["snapshot-0000"]


def test_policy_cache_is_bounded_whatever_the_archive_size(tmp_path):
    archive = SnapshotArchive(tmp_path, cache_size=3)
    model = make_model()
    for step in range(10):
        archive.save(model, step=step)
    for info in archive.snapshots():
        archive.load_policy(info.id)
    assert archive.cached_ids() == ["snapshot-0007", "snapshot-0008", "snapshot-0009"]
    first = archive.load_policy("snapshot-0009")
    assert archive.load_policy("snapshot-0009") is first  # served from the cache


def test_pruning_keeps_the_newest_the_first_and_a_spread_of_history(tmp_path):
    archive = SnapshotArchive(tmp_path, max_snapshots=8, keep_recent=3)
    model = make_model()
    for step in range(0, 1000, 10):
        archive.save(model, step=step)
    steps = [info.step for info in archive.snapshots()]
    assert len(steps) == 8
    assert steps[0] == 0 and steps[-3:] == [970, 980, 990]
    older_gaps = np.diff(steps[:-3])
    assert older_gaps.min() >= 100, f"older snapshots bunched together: {steps}"
    files = sorted(p.name for p in (tmp_path / "snapshots").iterdir())
    assert len(files) == 8
    # Pruned snapshots stay in the index, so matches that mention them keep their meaning.
    every = archive.snapshots(include_pruned=True)
    assert [info.step for info in every] == list(range(0, 1000, 10))
    pruned = [info for info in every if info.pruned]
    assert len(pruned) == 92 and not any(info.file.exists() for info in pruned)


def test_pfsp_scores_combine_both_sides_of_each_match(tmp_path):
    archive = SnapshotArchive(tmp_path)
    archive.record_match("learner", "a", 1.0)
    archive.record_match("learner", "a", 0.0)
    archive.record_match("b", "learner", 1.0)  # learner lost as player B
    archive.record_match("b", "learner", 0.5)
    assert archive.scores_against("learner") == {"a": (0.5, 2), "b": (0.25, 2)}


def test_archive_written_by_another_format_version_is_refused(tmp_path):
    SnapshotArchive(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'format_version'")
    conn.commit()
    conn.close()
    with pytest.raises(ArchiveFormatError, match="format version 99.*new archive directory"):
        SnapshotArchive(tmp_path)


def test_a_directory_without_an_index_is_not_an_archive(tmp_path):
    with pytest.raises(ArchiveFormatError, match="not a snapshot archive"):
        SnapshotArchive(tmp_path, create=False)
    (tmp_path / "index.sqlite").write_text("this is not a database, it is a shopping list" * 50)
    with pytest.raises(ArchiveFormatError, match="not a readable archive index"):
        SnapshotArchive(tmp_path)


def test_a_snapshot_for_other_spaces_is_reported_as_incompatible(tmp_path):
    from pettingzoo.classic import connect_four_v3

    archive = SnapshotArchive(tmp_path)
    archive.save(make_model(), step=0)
    other = MaskablePPO("MlpPolicy", SelfPlayEnv(connect_four_v3.env()), n_steps=64)
    with pytest.raises(IncompatibleSnapshotError, match="snapshot-0000.*new archive directory"):
        archive.check_compatible(other)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="max_snapshots"):
        SnapshotArchive(tmp_path, max_snapshots=1)
    with pytest.raises(ValueError, match="cache_size"):
        SnapshotArchive(tmp_path, cache_size=0)
    with pytest.raises(ValueError, match="score_a"):
        SnapshotArchive(tmp_path).record_match("a", "b", 2.0)
    with pytest.raises(KeyError, match="no-such.*snapshot-0000"):
        archive = SnapshotArchive(tmp_path)
        archive.save(make_model(), step=0)
        archive.get("no-such")


FULL_DISK = """
import resource, signal, sys
from sp_wrappers.archive.store import ArchiveWriteError, SnapshotArchive
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails with EFBIG instead
archive = SnapshotArchive(sys.argv[1])
model = make_model()
archive.save(model, step=0)
size = archive.latest().file.stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, size // 2))  # the disk is now "full"
try:
    archive.save(model, step=1)
except ArchiveWriteError as error:
    print("refused:", error)
"""


def test_a_full_disk_refuses_the_save_and_keeps_what_was_saved(tmp_path):
    result = run_python(FULL_DISK.replace("sys.argv[1]", repr(str(tmp_path))))
    assert result.returncode == 0, result.stderr
    assert "refused: Could not write snapshot" in result.stdout
    assert "intact" in result.stdout
    archive = SnapshotArchive(tmp_path)
    assert [i.id for i in archive.snapshots()] == ["snapshot-0000"]
    archive.load_policy("snapshot-0000")
    assert not [p for p in (tmp_path / "snapshots").iterdir() if p.name.startswith(".")]


def test_archive_pickles_without_its_connection_and_reconnects(tmp_path):
    import pickle

    archive = SnapshotArchive(tmp_path)
    archive.save(make_model(), step=0)
    archive.load_policy("snapshot-0000")
    clone = pickle.loads(pickle.dumps(archive))
    assert clone.cached_ids() == []
    assert [i.id for i in clone.snapshots()] == ["snapshot-0000"]
    assert os.fspath(clone.path) == os.fspath(archive.path)


def test_a_snapshot_info_is_accepted_wherever_a_snapshot_id_is(tmp_path):
    archive = SnapshotArchive(tmp_path)
    model = make_model()
    archive.save(model, step=0)
    archive.save(model, step=10)
    first, second = archive  # iterating gives SnapshotInfo objects
    assert archive.load_policy(first).policy_id == "snapshot-0000"
    assert set(archive.load_state_dict(second)) == set(archive.load_state_dict("snapshot-0001"))
    assert archive.get(second) == second and second in archive
    archive.record_match("learner", first, 1.0, step=5)
    archive.record_matches([dict(player_a=second, player_b=first, score_a=0.5)])
    assert [m.player_b for m in archive.matches(player=first)] == ["snapshot-0000"] * 2
    assert archive.scores_against(first) == {"learner": (0.0, 1), "snapshot-0001": (0.5, 1)}
    with pytest.raises(TypeError, match="snapshot id.*SnapshotInfo"):
        archive.load_policy(3)


def test_a_pruned_snapshot_is_reported_as_pruned(tmp_path):
    archive = SnapshotArchive(tmp_path, max_snapshots=2)
    model = make_model()
    for step in (0, 10, 20):
        archive.save(model, step=step)
    (pruned,) = [info for info in archive.snapshots(include_pruned=True) if info.pruned]
    with pytest.raises(KeyError, match=f"{pruned.id}.*was pruned"):
        archive.load_policy(pruned)


def test_archive_errors_name_the_module_that_defines_them():
    from sp_wrappers.archive import checks, errors, store

    assert store.ArchiveFormatError is checks.ArchiveFormatError
    assert checks.ArchiveFormatError.__module__ == "sp_wrappers.archive.errors"
    assert store.PolicySpecError.__module__ == "sp_wrappers.archive.errors"
    assert errors.ArchiveError.__module__ == "sp_wrappers.archive.errors"


def test_the_archive_holds_its_index_history_and_reader_instead_of_inheriting_them(tmp_path):
    from sp_wrappers.archive.history import MatchHistory
    from sp_wrappers.archive.index import ArchiveIndex

    assert SnapshotArchive.__bases__ == (object,)
    archive = SnapshotArchive(tmp_path)
    archive.record_match("learner", "random", 1.0)
    # The history and the index work on the archive's directory without the archive.
    history = MatchHistory(ArchiveIndex(tmp_path, create=False))
    assert history.scores_against("learner") == {"random": (1.0, 1)}


def test_this_process_sees_its_own_writes_through_the_cached_listing_and_scores(tmp_path):
    archive = SnapshotArchive(tmp_path)
    model = make_model()
    archive.save(model, step=0)
    assert len(archive) == 1 and archive.scores_against("learner") == {}
    archive.save(model, step=10)
    archive.record_match("learner", "snapshot-0000", 1.0)
    assert len(archive) == 2
    assert archive.scores_against("learner") == {"snapshot-0000": (1.0, 1)}
    archive.record_match("learner", "snapshot-0000", 0.0)
    assert archive.scores_against("learner") == {"snapshot-0000": (0.5, 2)}


def test_discard_unlists_snapshots_and_deletes_their_games_in_one_go(tmp_path):
    from sp_wrappers.archive.store import DISCARDED_TAG, SnapshotPrunedError

    archive = SnapshotArchive(tmp_path)
    model = make_model()
    kept, dropped = archive.save(model, step=0), archive.save(model, step=10)
    archive.record_match(kept, dropped, 1.0, source="league")
    archive.record_match("learner", kept, 0.5, source="league")
    archive.load_policy(dropped)
    late_game = archive.matches(player=dropped)[0].id
    # Ids that are not there are skipped.
    counts = archive.discard(snapshots=[dropped.id, "snapshot-0099"], matches=[late_game, 999])
    assert counts == (1, 1)
    assert [info.id for info in archive] == [kept.id]
    (row,) = [i for i in archive.snapshots(include_pruned=True) if i.id == dropped.id]
    assert row.pruned and DISCARDED_TAG in row.tags
    assert not (tmp_path / "snapshots" / f"{dropped.id}.safetensors").exists()
    assert (tmp_path / "orphaned" / f"{dropped.id}.safetensors").is_file()  # moved, not deleted
    assert dropped.id not in archive.cached_ids()
    with pytest.raises(SnapshotPrunedError):
        archive.load_policy(dropped)
    assert [m.player_a for m in archive.matches()] == ["learner"]
    games = sqlite3.connect(tmp_path / "index.sqlite").execute(
        "SELECT id, games FROM snapshots ORDER BY id"
    )
    assert games.fetchall() == [(kept.id, 1), (dropped.id, 0)]
    assert archive.discard() == (0, 0)


def test_a_discard_killed_before_moving_its_files_has_them_moved_aside_on_the_next_open(tmp_path):
    from sp_wrappers.archive.store import DISCARDED_TAG

    archive = SnapshotArchive(tmp_path)
    model = make_model()
    kept, dropped = archive.save(model, step=0), archive.save(model, step=10)
    pruned = archive.save(model, step=20)
    # the index says discarded (and, for another, pruned) but the files are still there
    with sqlite3.connect(tmp_path / "index.sqlite") as conn:
        conn.execute(
            "UPDATE snapshots SET pruned = 1, tags = ? WHERE id = ?",
            (json.dumps([DISCARDED_TAG]), dropped.id),
        )
        conn.execute("UPDATE snapshots SET pruned = 1 WHERE id = ?", (pruned.id,))
    archive.close()
    with SnapshotArchive(tmp_path) as again:
        assert [info.id for info in again] == [kept.id]
    assert (tmp_path / "orphaned" / f"{dropped.id}.safetensors").is_file()
    assert not (tmp_path / "snapshots" / f"{dropped.id}.safetensors").exists()
    assert not (tmp_path / "snapshots" / f"{pruned.id}.safetensors").exists()  # pruned: deleted
    assert not (tmp_path / "orphaned" / f"{pruned.id}.safetensors").exists()


def test_a_discard_never_moves_files_through_a_linked_orphaned_folder(tmp_path):
    from sp_wrappers.archive.store import UnsafeArchiveError

    archive = SnapshotArchive(tmp_path / "archive")
    info = archive.save(make_model(), step=0)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "archive" / "orphaned").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafeArchiveError, match="orphaned is a symlink"):
        archive.discard(snapshots=[info.id])
    assert (tmp_path / "archive" / "snapshots" / f"{info.id}.safetensors").is_file()
    assert list(elsewhere.iterdir()) == []
