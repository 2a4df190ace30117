"""Taking back records that a writer made but never committed to (a league round cut short).

This module holds :func:`discard_records` and :data:`DISCARDED_TAG`.

A league writes a round's games and snapshots into the archive, then its ``league.json``; a kill
between the two leaves records that no ``league.json`` knows of. On resume the league calls
:func:`discard_records` with them: the match rows are deleted (and the ``games`` counts of the
snapshots they named go down again), the snapshots are unlisted like pruned ones and tagged
``discarded`` (their rows stay, so a snapshot id is never handed out twice), and their files are
deleted. All rows change in one write transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .checks import SNAPSHOT_DIR, check_not_linked, unlink_all

if TYPE_CHECKING:
    from .store import SnapshotArchive

__all__ = ["discard_records", "DISCARDED_TAG"]

DISCARDED_TAG = "discarded"


def discard_records(
    archive: SnapshotArchive,
    snapshots: Iterable[str] = (),
    matches: Iterable[int] = (),
) -> tuple[int, int]:
    """Unlist ``snapshots`` (ids) and delete ``matches`` (match row ids) in one transaction.

    :param archive: the archive to change.
    :param snapshots: snapshot ids to unlist (tagged ``discarded``, files deleted).
    :param matches: ids of match rows (:attr:`MatchRecord.id`) to delete.
    :returns: how many snapshots and match rows were discarded.

    >>> import tempfile
    >>> from sp_wrappers.archive.store import SnapshotArchive
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> archive.record_match("a", "b", 1.0, source="league")
    >>> discard_records(archive, matches=[m.id for m in archive.matches()]), archive.n_matches()
    ((0, 1), 0)
    """
    snapshot_ids = sorted(set(snapshots))
    match_ids = sorted({int(m) for m in matches})
    if not snapshot_ids and not match_ids:
        return 0, 0
    conn = archive._connect()
    statements: list[tuple[str, tuple[object, ...]]] = []
    games: dict[str, int] = {}
    for match_id in match_ids:
        row = conn.execute(
            "SELECT player_a, player_b FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
        if row is None:
            continue
        for player in row:
            games[player] = games.get(player, 0) + 1
        statements.append(("DELETE FROM matches WHERE id = ?", (match_id,)))
    deleted = len(statements)
    statements += [
        ("UPDATE snapshots SET games = max(0, games - ?) WHERE id = ?", (n, player))
        for player, n in games.items()
    ]
    discarded = []
    for snapshot_id in snapshot_ids:
        row = conn.execute("SELECT tags FROM snapshots WHERE id = ?", (snapshot_id,)).fetchone()
        if row is None:
            continue
        tags = [t for t in json.loads(row[0]) if t != DISCARDED_TAG] + [DISCARDED_TAG]
        statements.append(
            (
                "UPDATE snapshots SET pruned = 1, tags = ? WHERE id = ?",
                (json.dumps(tags), snapshot_id),
            )
        )
        discarded.append(snapshot_id)
    archive._write(statements)
    directory = archive.path / SNAPSHOT_DIR
    if discarded and directory.exists():
        check_not_linked(directory, directory=True)
        for key in [k for k in archive._cache if k.rsplit("@", 1)[0] in set(discarded)]:
            del archive._cache[key]
        unlink_all(directory, [f"{snapshot_id}.safetensors" for snapshot_id in discarded])
    return len(discarded), deleted
