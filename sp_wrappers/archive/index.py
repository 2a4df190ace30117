"""The archive's SQLite index: its schema, its connection, format checks and write transactions.

An archive's rows (snapshots, matches, ratings) live in ``index.sqlite`` in SQLite's WAL mode,
so readers in other processes see a consistent view while one process writes. The index is
opened once per process (a forked or unpickled archive reconnects), checked against
:data:`FORMAT_VERSION` (an index of format 1 or 2 is upgraded in place) and written in ``BEGIN
IMMEDIATE`` transactions: :meth:`ArchiveIndex.locked` holds SQLite's write lock across work that
is more than SQL (a save numbers its snapshot, writes its file and inserts its row as one unit),
so any number of processes can write one archive.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .checks import (
    SNAPSHOT_DIR,
    ArchiveFormatError,
    ArchiveWriteError,
    check_matches,
    check_not_linked,
    check_schema,
)
from .matches import upgrade_from_format_1
from .payoff import DECAYS_KEY, DEFAULT_DECAYS, PAYOFF_SCHEMA, upgrade_from_format_2

__all__ = ["ArchiveIndex", "FORMAT_VERSION", "INDEX_NAME", "WalWatch"]

# 2: match rows gained team_a, team_b and config; 3: the payoff table (archive/payoff.py)
FORMAT_VERSION = 3
INDEX_NAME = "index.sqlite"
_SCHEMA = (
    """
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
    + PAYOFF_SCHEMA
)


class ArchiveIndex:
    """The connection to one archive's index, opened once per process, and its transactions.

    What the archive and its match history read and write goes through here: :meth:`connect`
    (the connection of this process, opened and checked on first use), :meth:`locked` (one write
    transaction), :meth:`write` (statements in one transaction) and :meth:`version` (changes
    whenever the index may have changed, so readers can cache what they parsed).

    :param path: the archive directory (``index.sqlite`` and ``snapshots/`` inside it).
    :param create: create a new index when ``path`` holds none; ``False`` raises
        :class:`~sp_wrappers.archive.checks.ArchiveFormatError` instead.
    :param on_connect: called after each new connection opens (this process's first use, after
        :meth:`close`, a fork or unpickling), so an owner can drop what it cached from the old one.

    >>> import tempfile
    >>> index = ArchiveIndex(tempfile.mkdtemp())
    >>> index.write([("INSERT INTO meta VALUES (?, ?)", ("note", "hello"))])
    >>> index.connect().execute("SELECT value FROM meta WHERE key = 'note'").fetchone()
    ('hello',)
    >>> index.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        create: bool = True,
        on_connect: Callable[[], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.create = create
        self.on_connect = on_connect
        self._conn: sqlite3.Connection | None = None
        self._conn_pid: int | None = None
        self._opened = 0  # connections opened by this object (part of version())
        self._written = 0  # write transactions ended through this object (part of version())
        self._wal: WalWatch | None = None  # this connection's watch on the WAL file

    def connect(self) -> sqlite3.Connection:
        """This process's connection, opened (and the index created or checked) on first use.

        :raises ArchiveFormatError: no index there and ``create`` is false, or the file is not
            a readable index of this format.
        :raises ArchiveWriteError: a new archive directory cannot be created.
        :raises UnsafeArchiveError: the index, its sidecars or ``snapshots/`` are symlinks.
        """
        if self._conn is not None and self._conn_pid == os.getpid():
            return self._conn
        index = self.path / INDEX_NAME
        check_not_linked(index, sidecars=True)
        if not index.exists():
            if not self.create:
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
        self._opened += 1
        self._close_wal()
        if self.on_connect is not None:
            self.on_connect()
        return conn

    def version(self) -> tuple[int, int, int]:
        """A value that changes whenever the index may have changed since it was last read: a
        new connection, a write transaction through this object, or a commit by any other
        connection (SQLite's ``PRAGMA data_version``).

        SQLite is asked only when the WAL file may have changed (see :class:`WalWatch`): a
        reader that draws at every episode start pays a ``stat`` of an open file, not a query.
        """
        conn = self.connect()
        if self._wal is None:
            self._wal = WalWatch.open(conn, self.path / INDEX_NAME)
        data_version = self._wal.data_version(conn)
        return self._opened, self._written, data_version

    def _close_wal(self) -> None:
        if self._wal is not None:
            self._wal.close()
        self._wal = None

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
                upgrade_from_format_2(conn, index)
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
                conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                    (DECAYS_KEY, json.dumps(list(DEFAULT_DECAYS))),
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
    def locked(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: SQLite's write lock is held from the start, so
        what is read inside (the next snapshot number, the listing a prune works from) cannot
        change under the caller before its writes commit. Other writers wait (up to the
        connection's 60 s busy timeout); readers in WAL mode never do.

        :raises ArchiveWriteError: the lock or a write failed (full or read-only disk, or another
            process held the lock for over a minute); the transaction is rolled back.
        """
        conn = self.connect()
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
            self._written += 1

    def _write_error(self, error: sqlite3.OperationalError) -> ArchiveWriteError:
        return ArchiveWriteError(
            f"Cannot write to the archive index {self.path / INDEX_NAME}: {error}. Check "
            "free disk space and the directory's permissions; earlier data is intact."
        )

    def write(self, statements: Iterable[tuple[str, Sequence[Any]]]) -> None:
        """Run ``(sql, parameters)`` statements in one write transaction (see :meth:`locked`)."""
        with self.locked() as conn:
            for sql, params in statements:
                conn.execute(sql, params)

    def close(self) -> None:
        """Close this process's connection (the next use opens a new one)."""
        if self._conn is not None and self._conn_pid == os.getpid():
            self._conn.close()
        self._conn = None
        self._close_wal()

    def __getstate__(self) -> dict[str, Any]:
        # A connection does not cross processes: the copy opens its own on first use. The hook
        # belongs to the owner, which hands its copy's hook to the copied index.
        return {
            **self.__dict__,
            "_conn": None,
            "_conn_pid": None,
            "on_connect": None,
            "_wal": None,
        }


class WalWatch:
    """When to ask SQLite whether another connection committed: only when the index's WAL file
    changed since the last answer, or once that answer is :attr:`RECHECK_NS` old.

    In WAL mode every commit appends to (or, after a checkpoint, rewrites) the WAL file, which
    updates its size, modification and change times; ``os.fstat`` of the open file reads them
    for a fraction of a ``PRAGMA data_version`` query. Two guards keep the answer exact with
    concurrent writers: a signature is trusted only once the file's modification and change
    times are :attr:`SETTLE_NS` older than the moment before it was read (so that a later write
    cannot carry the same coarse timestamp: git's rule for "racily clean" index entries), and
    SQLite is asked again at least every :attr:`RECHECK_NS` (a writer stalled between writing
    its commit and publishing it is seen then). Without a WAL (another journal mode, no file
    yet) every call asks SQLite, as before.

    :param fd: an open file descriptor of the WAL file, or ``None``.

    >>> import tempfile
    >>> index = Path(tempfile.mkdtemp()) / "index.sqlite"
    >>> conn = sqlite3.connect(index, isolation_level=None)
    >>> conn.execute("PRAGMA journal_mode=WAL").fetchone()
    ('wal',)
    >>> _ = conn.execute("CREATE TABLE t (x)")
    >>> watch = WalWatch.open(conn, index)
    >>> watch.data_version(conn) == conn.execute("PRAGMA data_version").fetchone()[0]
    True
    >>> watch.close()
    >>> conn.close()
    """

    #: how old (ns) the WAL's times must be before its signature is trusted
    SETTLE_NS = 2_000_000_000
    #: how long (ns) a trusted answer is kept at most
    RECHECK_NS = 2_000_000_000

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        # (the WAL's signature, data_version, when it was asked) of the last trusted answer
        self._fresh: tuple[tuple[int, int, int, int], int, int] | None = None
        self._closer = weakref.finalize(self, os.close, fd) if fd is not None else None

    @classmethod
    def open(cls, conn: sqlite3.Connection, index: Path) -> WalWatch:
        """A watch on ``index``'s WAL file while ``conn`` (which keeps it in place) is open."""
        if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
            return cls(None)
        try:
            fd = os.open(f"{index}-wal", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:  # not there yet: ask SQLite until the next connection
            return cls(None)
        return cls(fd)

    def data_version(self, conn: sqlite3.Connection) -> int:
        """SQLite's ``PRAGMA data_version`` on ``conn``, or the last one where it cannot have
        changed since."""
        now = time.time_ns()  # before the stat: a write after it has a later change time
        fresh = self._fresh
        signature = self._signature()
        if fresh is not None and signature == fresh[0] and now - fresh[2] < self.RECHECK_NS:
            return fresh[1]
        data_version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        # the later of its modification and change times (Windows reports creation as st_ctime)
        trusted = signature is not None and max(signature[2:]) <= now - self.SETTLE_NS
        self._fresh = (signature, data_version, now) if trusted else None
        return data_version

    def _signature(self) -> tuple[int, int, int, int] | None:
        if self.fd is None:
            return None
        try:
            found = os.fstat(self.fd)
        except OSError:
            return None
        return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns

    def close(self) -> None:
        """Close the file (the index's connection closed or was replaced)."""
        if self._closer is not None:
            self._closer()
        self.fd, self._fresh = None, None
