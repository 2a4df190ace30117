"""Match records carry the team each player played and the game configuration (format 2)."""

from __future__ import annotations

import sqlite3

import pytest

from sp_wrappers.archive.index import FORMAT_VERSION
from sp_wrappers.archive.store import ArchiveFormatError, SnapshotArchive, config_key

FORMAT_1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE snapshots (
    seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, step INTEGER NOT NULL,
    wall_time REAL NOT NULL, tags TEXT NOT NULL, sha256 TEXT NOT NULL, file TEXT NOT NULL,
    policy_spec TEXT NOT NULL, ratings TEXT NOT NULL, games INTEGER NOT NULL DEFAULT 0,
    pruned INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE matches (
    id INTEGER PRIMARY KEY AUTOINCREMENT, wall_time REAL NOT NULL, step INTEGER,
    player_a TEXT NOT NULL, player_b TEXT NOT NULL, score_a REAL NOT NULL,
    seat_a TEXT, seat_b TEXT, source TEXT NOT NULL
);
INSERT INTO meta VALUES ('format_version', '1');
INSERT INTO meta VALUES ('created', '0.0');
INSERT INTO matches (wall_time, step, player_a, player_b, score_a, seat_a, seat_b, source)
    VALUES (1.0, 10, 'learner', 'random', 1.0, 'player_0', 'player_1', 'training');
"""


def test_team_and_config_round_trip_through_the_match_history(tmp_path):
    archive = SnapshotArchive(tmp_path / "a")
    archive.record_match(
        "learner", "random", 1.0, step=5, team_a="adversary", team_b="agent", config={"komi": 7.5}
    )
    archive.record_match("learner", "random", 0.0, step=6)
    first, second = SnapshotArchive(tmp_path / "a").matches()
    assert (first.team_a, first.team_b, first.config) == ("adversary", "agent", {"komi": 7.5})
    assert (second.team_a, second.team_b, second.config) == (None, None, None)


def test_matches_filter_by_configuration_whatever_the_key_order(tmp_path):
    archive = SnapshotArchive(tmp_path / "a")
    archive.record_matches(
        [
            dict(player_a="learner", player_b="random", score_a=1.0, config={"a": 1, "b": 2}),
            dict(player_a="learner", player_b="random", score_a=0.0, config={"a": 2, "b": 2}),
            dict(player_a="learner", player_b="random", score_a=0.5),
        ]
    )
    picked = archive.matches(config={"b": 2, "a": 1})
    assert [m.score_a for m in picked] == [1.0]
    assert [m.score_a for m in archive.matches(config={"a": 2, "b": 2}, source="training")] == [0.0]
    assert archive.matches(config={"a": 3}) == []


def test_config_key_is_canonical_and_refuses_what_json_cannot_hold():
    assert config_key({"b": 1, "a": [1, 2]}) == config_key({"a": [1, 2], "b": 1})
    assert config_key({"komi": 7.5}) == '{"komi":7.5}'
    with pytest.raises(TypeError, match="'fn'.*JSON"):
        config_key({"fn": object()})
    with pytest.raises(TypeError, match="'komi'"):
        config_key({"komi": float("nan")})
    with pytest.raises(TypeError, match="mapping"):
        config_key([("komi", 7.5)])


def test_a_config_that_is_not_json_is_refused_before_anything_is_written(tmp_path):
    archive = SnapshotArchive(tmp_path / "a")
    archive.record_match("learner", "random", 1.0)
    with pytest.raises(TypeError, match="'reward'"):
        archive.record_matches(
            [
                dict(player_a="learner", player_b="x", score_a=1.0),
                dict(player_a="learner", player_b="y", score_a=1.0, config={"reward": print}),
            ]
        )
    assert archive.n_matches() == 1


def test_a_format_1_archive_is_upgraded_in_place_and_keeps_its_games(tmp_path):
    root = tmp_path / "old"
    (root / "snapshots").mkdir(parents=True)
    conn = sqlite3.connect(root / "index.sqlite")
    conn.executescript(FORMAT_1_SCHEMA)
    conn.close()
    archive = SnapshotArchive(root)
    (old,) = archive.matches()
    assert (old.player_a, old.score_a, old.seat_a, old.team_a, old.config) == (
        "learner",
        1.0,
        "player_0",
        None,
        None,
    )
    archive.record_match("learner", "random", 0.0, team_a="t", config={"k": 1})
    archive.close()
    conn = sqlite3.connect(root / "index.sqlite")
    assert conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone() == (
        str(FORMAT_VERSION),
    )
    conn.close()
    assert [m.config for m in SnapshotArchive(root).matches()] == [None, {"k": 1}]


@pytest.mark.parametrize(
    "value, problem",
    [("{not json", "not valid JSON"), ("[1, 2]", "not a JSON object"), ("NaN", "JSON")],
)
def test_a_hostile_config_column_is_refused_naming_the_row(tmp_path, value, problem):
    archive = SnapshotArchive(tmp_path / "a")
    archive.record_match("learner", "random", 1.0, config={"ok": 1})
    archive.close()
    conn = sqlite3.connect(tmp_path / "a" / "index.sqlite")
    conn.execute("UPDATE matches SET config = ?", (value,))
    conn.commit()
    conn.close()
    with pytest.raises(ArchiveFormatError, match=f"match row 1 .*{problem}"):
        SnapshotArchive(tmp_path / "a").matches()


def test_a_team_column_of_the_wrong_type_is_refused_when_the_archive_opens(tmp_path):
    archive = SnapshotArchive(tmp_path / "a")
    archive.record_match("learner", "random", 1.0, team_a="a")
    archive.close()
    conn = sqlite3.connect(tmp_path / "a" / "index.sqlite")
    conn.execute("UPDATE matches SET team_a = x'00ff'")
    conn.commit()
    conn.close()
    with pytest.raises(ArchiveFormatError, match="teams and config text or null"):
        SnapshotArchive(tmp_path / "a")


def _open_and_read(root, barrier, results):
    barrier.wait()
    try:
        SnapshotArchive(root).matches()
        results.put("ok")
    except Exception as error:  # reported to the parent, which asserts on it
        results.put(f"{type(error).__name__}: {error}")


def test_processes_opening_a_format_1_archive_at_once_upgrade_it_once(tmp_path):
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for trial in range(4):
        root = tmp_path / f"old-{trial}"
        (root / "snapshots").mkdir(parents=True)
        conn = sqlite3.connect(root / "index.sqlite")
        conn.executescript(FORMAT_1_SCHEMA)
        conn.close()
        barrier, results = context.Barrier(4), context.Queue()
        workers = [
            context.Process(target=_open_and_read, args=(root, barrier, results)) for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=60) for _ in workers]
        for worker in workers:
            worker.join()
        assert outcomes == ["ok"] * 4
        assert len(SnapshotArchive(root).matches()) == 1
