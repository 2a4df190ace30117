"""The archive's payoff table: always equal to what its match rows say, whoever writes them."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3

import numpy as np
import pytest

from sp_wrappers.archive.history import MatchHistory
from sp_wrappers.archive.index import FORMAT_VERSION, ArchiveIndex
from sp_wrappers.archive.store import ArchiveFormatError, SnapshotArchive

PLAYERS = ["learner", "random", "snapshot-0000", "snapshot-0001", "snapshot-0002", "latest"]
DECAYS = [1.0, 0.99, 0.9, 0.5]


def expected_scores(matches, player: str, decay: float) -> dict[str, tuple[float, int]]:
    """``scores_against`` by its definition, from the match rows: a game weighs ``decay ** k``,
    ``k`` the number of games the pair played after it; games against oneself are left out."""
    by_opponent: dict[str, list[float]] = {}
    for m in matches:  # oldest first
        if m.player_a == m.player_b:
            continue
        if m.player_a == player:
            by_opponent.setdefault(m.player_b, []).append(m.score_a)
        elif m.player_b == player:
            by_opponent.setdefault(m.player_a, []).append(1.0 - m.score_a)
    out = {}
    for opponent, scores in by_opponent.items():
        weights = decay ** np.arange(len(scores))[::-1]
        out[opponent] = (float(np.dot(weights, scores) / weights.sum()), len(scores))
    return out


def old_undecayed_query(conn, player: str) -> dict[str, tuple[float, int]]:
    """What ``scores_against(player)`` computed before the payoff table (every row of the pair)."""
    totals: dict[str, list[float]] = {}
    for opponent, score, count in conn.execute(
        "SELECT player_b, sum(score_a), count(*) FROM matches WHERE player_a = ? GROUP BY player_b "
        "UNION ALL SELECT player_a, sum(1.0 - score_a), count(*) FROM matches WHERE player_b = ? "
        "GROUP BY player_a",
        (player, player),
    ):
        total = totals.setdefault(opponent, [0.0, 0])
        total[0] += score
        total[1] += count
    return {o: (s / n, int(n)) for o, (s, n) in totals.items() if o != player}


def random_games(rng: np.random.Generator, n: int, halves: bool = True) -> list[dict]:
    games = []
    for _ in range(n):
        a, b = rng.choice(PLAYERS, size=2)  # sometimes a player against itself
        score = float(rng.choice([0.0, 0.5, 1.0])) if halves else float(rng.random())
        games.append(dict(player_a=str(a), player_b=str(b), score_a=score, source="training"))
    return games


def record_in_batches(archive, games, rng) -> None:
    i = 0
    while i < len(games):
        size = int(rng.integers(1, 12))
        batch, i = games[i : i + size], i + size
        if size == 1:
            archive.record_match(**batch[0])
        else:
            archive.record_matches(batch)


def assert_table_equals_rows(archive, decays=DECAYS) -> None:
    matches = archive.matches()
    for player in PLAYERS:
        for decay in decays:
            got = archive.scores_against(player, decay=decay)
            want = expected_scores(matches, player, decay)
            assert set(got) == set(want), (player, decay)
            for opponent, (score, games) in want.items():
                assert got[opponent][1] == games
                assert got[opponent][0] == pytest.approx(score, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_scores_read_from_the_payoff_table_equal_the_match_rows_on_random_histories(tmp_path, seed):
    rng = np.random.default_rng(seed)
    archive = SnapshotArchive(tmp_path / "a")
    games = random_games(rng, int(rng.integers(50, 400)), halves=seed % 2 == 0)
    record_in_batches(archive, games, rng)
    assert_table_equals_rows(archive)
    if seed % 2 == 0:  # 0, 0.5 and 1 sum exactly: the plain means equal the old query's exactly
        conn = sqlite3.connect(tmp_path / "a" / "index.sqlite")
        for player in PLAYERS:
            assert archive.scores_against(player) == old_undecayed_query(conn, player)
        conn.close()
    # Discarding games (a league round taken back) sums the pairs' rows again.
    ids = [m.id for m in archive.matches()]
    archive.discard(matches=rng.choice(ids, size=len(ids) // 3, replace=False).tolist())
    assert_table_equals_rows(archive)
    # A new process reads the same table.
    assert_table_equals_rows(SnapshotArchive(tmp_path / "a"))


def test_scores_are_read_without_touching_the_match_rows(tmp_path):
    index = ArchiveIndex(tmp_path)
    history = MatchHistory(index)
    history.record_matches(random_games(np.random.default_rng(0), 200))
    statements: list[str] = []
    index.connect().set_trace_callback(statements.append)
    for decay in (1.0, 0.99):
        history.scores_against("learner", decay=decay)
    assert statements and not [s for s in statements if "matches" in s]


def test_a_decay_the_table_does_not_keep_is_added_once_and_kept_up_to_date(tmp_path):
    rng = np.random.default_rng(1)
    archive = SnapshotArchive(tmp_path)
    archive.record_matches(random_games(rng, 100))
    archive.scores_against("learner", decay=0.7)
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    (decays,) = conn.execute("SELECT value FROM meta WHERE key = 'payoff_decays'").fetchone()
    assert json.loads(decays) == [1.0, 0.99, 0.7]
    record_in_batches(archive, random_games(rng, 100), rng)
    assert_table_equals_rows(archive, decays=[0.7])
    conn.close()


FORMAT_2_SCHEMA = """
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
    seat_a TEXT, seat_b TEXT, source TEXT NOT NULL, team_a TEXT, team_b TEXT, config TEXT
);
CREATE INDEX matches_players ON matches (player_a, player_b);
INSERT INTO meta VALUES ('format_version', '2');
INSERT INTO meta VALUES ('created', '0.0');
"""


def make_format_2_archive(root, games) -> None:
    (root / "snapshots").mkdir(parents=True)
    conn = sqlite3.connect(root / "index.sqlite")
    conn.executescript(FORMAT_2_SCHEMA)
    conn.executemany(
        "INSERT INTO matches (wall_time, player_a, player_b, score_a, source) VALUES (1.0, ?, ?, "
        "?, 'training')",
        [(g["player_a"], g["player_b"], g["score_a"]) for g in games],
    )
    conn.commit()
    conn.close()


def test_a_format_2_archive_opens_and_its_payoff_table_is_filled_from_its_games(tmp_path):
    rng = np.random.default_rng(2)
    make_format_2_archive(tmp_path / "old", random_games(rng, 300))
    archive = SnapshotArchive(tmp_path / "old")
    conn = sqlite3.connect(tmp_path / "old" / "index.sqlite")
    assert conn.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone() == (
        str(FORMAT_VERSION),
    )
    assert conn.execute("SELECT count(*) FROM payoff").fetchone()[0] > 0
    conn.close()
    assert_table_equals_rows(archive)
    record_in_batches(archive, random_games(rng, 100), rng)
    assert_table_equals_rows(archive)


def _open_format_2(root, barrier, results) -> None:
    barrier.wait()
    try:
        results.put(len(SnapshotArchive(root).scores_against("learner")))
    except Exception as error:  # reported to the parent, which asserts on it
        results.put(f"{type(error).__name__}: {error}")


def test_processes_opening_a_format_2_archive_at_once_fill_its_table_once(tmp_path):
    context = multiprocessing.get_context("fork")
    games = random_games(np.random.default_rng(3), 200)
    make_format_2_archive(tmp_path / "old", games)
    barrier, results = context.Barrier(3), context.Queue()
    workers = [
        context.Process(target=_open_format_2, args=(tmp_path / "old", barrier, results))
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join()
    assert len(set(outcomes)) == 1 and isinstance(outcomes[0], int), outcomes
    assert_table_equals_rows(SnapshotArchive(tmp_path / "old"))


def _record(root, seed: int, barrier) -> None:
    rng = np.random.default_rng(seed)
    archive = SnapshotArchive(root)
    barrier.wait()
    record_in_batches(archive, random_games(rng, 400, halves=False), rng)


def test_two_processes_recording_at_once_keep_the_table_equal_to_the_rows(tmp_path):
    SnapshotArchive(tmp_path / "a").close()
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(2)
    writers = [
        context.Process(target=_record, args=(tmp_path / "a", seed, barrier)) for seed in (10, 11)
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=300)
        assert writer.exitcode == 0
    archive = SnapshotArchive(tmp_path / "a")
    assert archive.n_matches() == 800
    assert_table_equals_rows(archive)


def test_a_payoff_row_no_history_gives_is_refused_and_the_table_can_be_rebuilt(tmp_path):
    archive = SnapshotArchive(tmp_path)
    archive.record_matches(random_games(np.random.default_rng(4), 50))
    archive.close()
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    conn.execute("UPDATE payoff SET weight = -1.0 WHERE player = 'learner'")
    conn.commit()
    with pytest.raises(ArchiveFormatError, match="payoff row of 'learner'.*payoff_decays"):
        SnapshotArchive(tmp_path).scores_against("learner")
    # The fix the message gives: delete the list of decays; the next open sums the rows again.
    conn.execute("DELETE FROM meta WHERE key = 'payoff_decays'")
    conn.commit()
    conn.close()
    assert_table_equals_rows(SnapshotArchive(tmp_path))
