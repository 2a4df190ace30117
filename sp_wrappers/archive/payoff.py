"""The archive's payoff table: per ordered pair of players, what their match rows add up to.

``scores_against`` (PFSP's win rates, the Nash sampler's payoff matrix) used to number every match
row of a pair on every read, which grew with the history (1.66 s at 228k rows). The index keeps
the sums instead, in the ``payoff`` table, updated in the same write transaction as the match rows
they summarise, so a read costs the same at a million rows as at a thousand.

For each *decay* ``d`` the table holds one row per ordered pair ``(player, opponent)`` with
``player != opponent``: ``games`` (how many games the pair played, either way round), ``score``
(the sum over those games of ``d ** k`` times the player's score, ``k`` the number of games the
pair played after that one) and ``weight`` (the sum of ``d ** k``). The decayed mean score is
``score / weight``; with ``d = 1`` the sums are plain and ``weight == games``. A new game of the
pair multiplies both sums by ``d`` and adds its own term, which is what :func:`fold` does for a
batch of games and :data:`UPSERT` applies to the stored row.

The decays kept are listed in the ``meta`` row ``payoff_decays`` (a JSON list; new archives keep
``1.0`` and ``0.99``, PFSP's default). A read for another decay adds it: its rows are computed
once from the match rows and kept from then on (at most :data:`MAX_DECAYS`; past that, or on an
archive this process cannot write, the scores are computed from the match rows for that read).
An index of format 2 (before the table) gains it, filled from its match rows, in one transaction
the first time it is opened.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NoReturn

from .checks import ArchiveFormatError, check_matches

__all__ = [
    "PAYOFF_SCHEMA",
    "DECAYS_KEY",
    "DEFAULT_DECAYS",
    "MAX_DECAYS",
    "UPSERT",
    "fold",
    "apply_games",
    "stored_decays",
    "add_decay",
    "read_scores",
    "scores_from_rows",
    "rebuild_pairs",
    "upgrade_from_format_2",
]

PAYOFF_SCHEMA = """
CREATE TABLE IF NOT EXISTS payoff (
    decay REAL NOT NULL,
    player TEXT NOT NULL,
    opponent TEXT NOT NULL,
    games INTEGER NOT NULL,
    score REAL NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (decay, player, opponent)
) WITHOUT ROWID;
"""
#: The ``meta`` key listing the decays whose rows the ``payoff`` table keeps (a JSON list).
DECAYS_KEY = "payoff_decays"
#: The decays a new (or upgraded) archive keeps: the plain sums and PFSP's default decay, 0.99
#: (AlphaStar's payoff decay).
DEFAULT_DECAYS = (1.0, 0.99)
#: At most this many decays are kept; scores for others are computed from the match rows.
MAX_DECAYS = 8
#: Adds a batch's sums to a pair's row: ``:mult`` is ``decay ** (games in the batch)``.
UPSERT = (
    "INSERT INTO payoff (decay, player, opponent, games, score, weight) "
    "VALUES (:decay, :player, :opponent, :games, :score, :weight) "
    "ON CONFLICT (decay, player, opponent) DO UPDATE SET "
    "games = games + excluded.games, "
    "score = score * :mult + excluded.score, "
    "weight = weight * :mult + excluded.weight"
)
_FIX = (
    "Delete the meta row 'payoff_decays' (DELETE FROM meta WHERE key = 'payoff_decays') and open "
    "the archive again: the payoff table is rebuilt from the match rows."
)
_FORMAT_2_MATCH_COLUMNS = [
    "id",
    "wall_time",
    "step",
    "player_a",
    "player_b",
    "score_a",
    "seat_a",
    "seat_b",
    "source",
    "team_a",
    "team_b",
    "config",
]

Sums = dict[tuple[float, str, str], list[float]]  # (decay, player, opponent) -> [n, mult, s, w]


def fold(
    games: Iterable[tuple[str, str, float]], decays: Sequence[float], sums: Sums | None = None
) -> Sums:
    """The payoff sums of ``games`` (``(player_a, player_b, score_a)``, oldest first), both ways
    round, for each decay: ``{(decay, player, opponent): [games, decay ** games, score,
    weight]}``. Games of a player against itself are left out, as ``scores_against`` leaves them.

    >>> sums = fold([("a", "b", 1.0), ("b", "a", 1.0)], [1.0, 0.5])
    >>> sums[(1.0, "a", "b")], sums[(0.5, "a", "b")]
    ([2, 1.0, 1.0, 2.0], [2, 0.25, 0.5, 1.5])
    """
    sums = {} if sums is None else sums
    for a, b, x in games:
        if a == b:
            continue
        for player, opponent, score in ((a, b, float(x)), (b, a, 1.0 - float(x))):
            for decay in decays:
                entry = sums.get((decay, player, opponent))
                if entry is None:
                    entry = sums[(decay, player, opponent)] = [0, 1.0, 0.0, 0.0]
                entry[0] += 1
                entry[1] *= decay
                entry[2] = entry[2] * decay + score
                entry[3] = entry[3] * decay + 1.0
    return sums


def apply_games(conn: sqlite3.Connection, games: Sequence[tuple[str, str, float]]) -> None:
    """Add ``games`` (just inserted as match rows, oldest first) to the payoff table, inside the
    caller's write transaction, for every decay the table keeps."""
    decays = stored_decays(conn)
    if not games or not decays:
        return
    conn.executemany(
        UPSERT,
        [
            dict(decay=d, player=p, opponent=o, games=n, mult=m, score=s, weight=w)
            for (d, p, o), (n, m, s, w) in fold(games, decays).items()
        ],
    )


def _refuse(index: Path, problem: str) -> NoReturn:
    raise ArchiveFormatError(f"{index}: {problem}. {_FIX}")


def stored_decays(conn: sqlite3.Connection, index: Path | None = None) -> list[float]:
    """The decays the payoff table keeps (``[]`` when the ``meta`` row is missing).

    :raises ArchiveFormatError: the row is not a JSON list of numbers in ``(0, 1]``.
    """
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (DECAYS_KEY,)).fetchone()
    if row is None:
        return []
    try:
        decays = json.loads(row[0]) if isinstance(row[0], str) else None
    except ValueError:
        decays = None
    if (
        not isinstance(decays, list)
        or len(decays) > MAX_DECAYS
        or not all(
            isinstance(d, int | float) and not isinstance(d, bool) and 0.0 < d <= 1.0
            for d in decays
        )
    ):
        _refuse(
            index or Path("index.sqlite"),
            f"the meta row {DECAYS_KEY!r} is not a JSON list of at most {MAX_DECAYS} decays in "
            "(0, 1]",
        )
    return [float(d) for d in decays]


def _match_games(
    conn: sqlite3.Connection, where: str = "", params: Sequence[object] = ()
) -> Iterable[tuple[str, str, float]]:
    sql = "SELECT player_a, player_b, score_a FROM matches"
    return conn.execute(f"{sql} {where} ORDER BY id", params)


def _insert_sums(conn: sqlite3.Connection, sums: Sums) -> None:
    conn.executemany(
        "INSERT INTO payoff (decay, player, opponent, games, score, weight) VALUES (?, ?, ?, ?, "
        "?, ?)",
        [(d, p, o, n, s, w) for (d, p, o), (n, _, s, w) in sums.items()],
    )


def add_decay(conn: sqlite3.Connection, decay: float) -> bool:
    """Keep ``decay`` in the payoff table from now on: its rows computed from every match row,
    inside the caller's write transaction. ``False`` (nothing written) when
    :data:`MAX_DECAYS` are kept already; ``True`` when it is kept (also when it already was)."""
    decays = stored_decays(conn)
    if decay in decays:
        return True
    if len(decays) >= MAX_DECAYS:
        return False
    conn.execute("DELETE FROM payoff WHERE decay = ?", (decay,))
    _insert_sums(conn, fold(_match_games(conn), [decay]))
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        (DECAYS_KEY, json.dumps(decays + [decay])),
    )
    return True


def read_scores(
    conn: sqlite3.Connection, player: str, decay: float, index: Path
) -> dict[str, tuple[float, int]]:
    """``{opponent: (player's decayed mean score, games)}`` from the payoff table.

    :raises ArchiveFormatError: a row holds values no sequence of games gives.
    """
    rows = conn.execute(
        "SELECT opponent, games, score, weight FROM payoff WHERE decay = ? AND player = ?",
        (decay, player),
    ).fetchall()
    out = {}
    for opponent, games, score, weight in rows:
        numbers = (score, weight)
        if (
            not isinstance(opponent, str)
            or not isinstance(games, int)
            or games < 1
            or not all(isinstance(v, float | int) and math.isfinite(v) for v in numbers)
            or not 0.0 < weight <= games
            or not -1e-9 * weight <= score <= weight * (1.0 + 1e-9)
        ):
            _refuse(
                index,
                f"the payoff row of {str(player)[:40]!r} against {str(opponent)[:40]!r} (decay "
                f"{decay}) holds values no match history gives",
            )
        out[opponent] = (min(1.0, max(0.0, score / weight)), games)
    return out


def scores_from_rows(
    conn: sqlite3.Connection, player: str, decay: float
) -> dict[str, tuple[float, int]]:
    """:func:`read_scores` computed from the match rows themselves (for a decay the table does
    not keep)."""
    sums = fold(_match_games(conn, "WHERE player_a = ? OR player_b = ?", (player, player)), [decay])
    return {o: (s / w, int(n)) for (_, p, o), (n, _, s, w) in sums.items() if p == player}


def rebuild_pairs(conn: sqlite3.Connection, pairs: Iterable[tuple[str, str]]) -> None:
    """Compute the payoff rows of these pairs again from their match rows (after rows were
    deleted), inside the caller's write transaction."""
    decays = stored_decays(conn)
    for a, b in {tuple(sorted(pair)) for pair in pairs}:
        conn.execute(
            "DELETE FROM payoff WHERE (player = ? AND opponent = ?) OR (player = ? AND opponent "
            "= ?)",
            (a, b, b, a),
        )
        where = "WHERE (player_a = ? AND player_b = ?) OR (player_a = ? AND player_b = ?)"
        _insert_sums(conn, fold(_match_games(conn, where, (a, b, b, a)), decays))


def _needs_payoff(conn: sqlite3.Connection) -> bool:
    """Whether the index is format 2 (no payoff table yet) or format 3 whose table has no list of
    decays (deleted to have the table rebuilt)."""
    row = conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
    if row is None or str(row[0]) not in ("2", "3"):
        return False
    columns = [r[1] for r in conn.execute("PRAGMA table_info(matches)").fetchall()]
    if columns != _FORMAT_2_MATCH_COLUMNS:
        return False
    has_table = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='payoff'"
    ).fetchone()[0]
    if str(row[0]) == "2":
        return not has_table
    return (
        bool(has_table)
        and not conn.execute("SELECT count(*) FROM meta WHERE key = ?", (DECAYS_KEY,)).fetchone()[0]
    )


def upgrade_from_format_2(conn: sqlite3.Connection, index: Path) -> bool:
    """Give a format-2 index its payoff table, filled from its match rows (or fill a format-3
    table again whose ``payoff_decays`` row was deleted); ``True`` when it did.

    One transaction, checked again inside it, so processes opening the archive at once fill it
    once, and a crash leaves the index as it was. The match rows are checked before they are
    summed.
    """
    if not _needs_payoff(conn):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _needs_payoff(conn):  # another process did it while this one waited
            conn.execute("ROLLBACK")
            return False
        check_matches(conn, index)
        conn.execute(PAYOFF_SCHEMA)
        conn.execute("DELETE FROM payoff")
        _insert_sums(conn, fold(_match_games(conn), DEFAULT_DECAYS))
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            (DECAYS_KEY, json.dumps(list(DEFAULT_DECAYS))),
        )
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'format_version'")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True
