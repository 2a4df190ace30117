"""The archive's SQLite index: its schema, connection, format checks and write transactions.

This module holds :data:`FORMAT_VERSION`, :data:`INDEX_NAME`, the schema and
:class:`ArchiveIndex`, the base of :class:`~sp_wrappers.archive.store.SnapshotArchive` that owns
the connection: opened in WAL mode, once per process (a forked or unpickled archive reconnects),
checked against the format version (a format-1 index is upgraded in place) and written in
``BEGIN IMMEDIATE`` transactions. :meth:`ArchiveIndex._locked` holds SQLite's write lock across
work that is more than SQL (a save numbers its snapshot, writes its file and inserts its row as
one unit), so any number of processes can write one archive.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .checks import (
    SNAPSHOT_DIR,
    ArchiveFormatError,
    ArchiveWriteError,
    check_matches,
    check_not_linked,
    check_schema,
)
from .matches import (
    upgrade_from_format_1,
)
from .policy_spec import (
    MAX_PARAMETERS,
)

if TYPE_CHECKING:
    from .store import SnapshotArchive

__all__ = ["ArchiveIndex", "FORMAT_VERSION", "INDEX_NAME"]

FORMAT_VERSION = 2  # 2: match rows gained team_a, team_b and config
INDEX_NAME = "index.sqlite"
_MAX_STEP = 2**62

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
    seq INTEGER PRIMARY KEY,
    id TEXT UNIQUE NOT NULL,
    step INTEGER NOT NULL,
    wall_time REAL NOT NULL,
    tags TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    file TEXT NOT NULL,
    policy_spec TEXT NOT NULL,
    ratings TEXT NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,
    pruned INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    wall_time REAL NOT NULL,
    step INTEGER,
    player_a TEXT NOT NULL,
    player_b TEXT NOT NULL,
    score_a REAL NOT NULL,
    seat_a TEXT,
    seat_b TEXT,
    source TEXT NOT NULL,
    team_a TEXT,
    team_b TEXT,
    config TEXT
);
CREATE INDEX IF NOT EXISTS matches_players ON matches (player_a, player_b);
"""


class ArchiveIndex:
    """The connection to an archive's index (see the module docstring)."""

    # -- connection --------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._conn_pid == os.getpid():
            return self._conn
        index = self.path / INDEX_NAME
        check_not_linked(index, sidecars=True)
        if not index.exists():
            if not self._create:
                raise ArchiveFormatError(
                    f"{self.path} is not a snapshot archive (no {INDEX_NAME}). Point at the "
                    "directory that SelfPlayCallback or `sp-wrappers train` wrote (for a run "
                    "directory, its archive/ folder)."
                )
            try:
                (self.path / SNAPSHOT_DIR).mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise ArchiveWriteError(
                    f"Cannot create the archive directory {self.path}: {error}. Choose a "
                    "writable location."
                ) from error
        check_not_linked(self.path / SNAPSHOT_DIR, directory=True)
        try:
            conn = self._open_index(index)
        except sqlite3.DatabaseError as error:
            raise ArchiveFormatError(
                f"{index} is not a readable archive index ({error}). If the directory holds "
                "something else, choose another path; if it is an archive, restore the file."
            ) from error
        self._conn, self._conn_pid = conn, os.getpid()
        self._cache.clear()
        self._listing = None
        self._scores.clear()
        return conn

    def _open_index(self, index: Path) -> sqlite3.Connection:
        """Connect, switch to WAL, create the schema if missing and check what is there.

        Processes that open a new archive at the same moment (env workers each opening it) race
        for the journal-mode switch and the schema, and SQLite can answer "database is locked"
        at once there instead of waiting; those attempts are retried for up to a minute.
        """
        deadline = time.monotonic() + 60.0
        delay = 0.01
        while True:
            conn = sqlite3.connect(index, timeout=60.0, isolation_level=None)
            try:
                # Schema objects (triggers, views, defaults) may not call functions with side
                # effects.
                conn.execute("PRAGMA trusted_schema=OFF")
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA) if not self._has_schema(conn) else None
                upgrade_from_format_1(conn)
                check_schema(conn, index)
                self._check_format(conn)
                check_matches(conn, index)
                return conn
            except sqlite3.OperationalError as error:
                conn.close()
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except BaseException:
                conn.close()
                raise

    @staticmethod
    def _has_schema(conn: sqlite3.Connection) -> bool:
        row = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN "
            "('meta', 'snapshots', 'matches')"
        ).fetchone()
        return row[0] == 3

    def _check_format(self, conn: sqlite3.Connection) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
        if row is None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('format_version', ?)",
                    (str(FORMAT_VERSION),),
                )
                conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('created', ?)", (repr(time.time()),)
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return
        try:
            version = int(str(row[0])[:20])
        except ValueError:
            version = None
        if version != FORMAT_VERSION:
            raise ArchiveFormatError(
                f"The archive {self.path} has format version {str(row[0])[:20]}; this "
                f"sp_wrappers reads version {FORMAT_VERSION}. Install the sp_wrappers version "
                "that wrote it, or start a new archive directory."
            )

    @contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: SQLite's write lock is held from the start, so
        what is read inside (the next snapshot number, the listing a prune works from) cannot
        change under the caller before its writes commit. Other writers wait (up to the
        connection's 60 s busy timeout); readers in WAL mode never do.

        :raises ArchiveWriteError: the lock or a write failed (full or read-only disk, or another
            process held the lock for over a minute); the transaction is rolled back.
        """
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise self._write_error(error) from error
        try:
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as error:
            raise self._write_error(error) from error
        finally:
            self._listing = None
            self._scores.clear()

    def _write_error(self, error: sqlite3.OperationalError) -> ArchiveWriteError:
        return ArchiveWriteError(
            f"Cannot write to the archive index {self.path / INDEX_NAME}: {error}. Check "
            "free disk space and the directory's permissions; earlier data is intact."
        )

    def _write(self, statements: Iterable[tuple[str, Sequence[Any]]]) -> None:
        with self._locked() as conn:
            for sql, params in statements:
                conn.execute(sql, params)

    def close(self) -> None:
        """Close the index connection and drop cached policies."""
        if self._conn is not None and self._conn_pid == os.getpid():
            self._conn.close()
        self._conn = None
        self._cache.clear()

    def __enter__(self) -> SnapshotArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(
            _conn=None, _conn_pid=None, _cache=OrderedDict(), _listing=None, _scores={}, _parsed={}
        )
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("max_parameters", MAX_PARAMETERS)
        state.setdefault("_parsed", {})
        self.__dict__.update(state)

    def _data_version(self) -> int:
        return int(self._connect().execute("PRAGMA data_version").fetchone()[0])
