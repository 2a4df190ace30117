"""The archive's match-history format: canonical configuration keys and the format-1 upgrade.

A match row is checked before it is written; a game configuration has one canonical text (what
the ``matches.config`` column stores and what filters compare), and a stored one is parsed back as
untrusted strict JSON. An index written by format 1 (before team games and game configurations
were recorded) gains the ``team_a``, ``team_b`` and ``config`` columns in one transaction. A
person's games (``sp-wrappers play --record``) carry their own player name and source.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from .checks import ArchiveFormatError, json_column

__all__ = [
    "config_key",
    "decode_config",
    "match_row",
    "INSERT_MATCH",
    "upgrade_from_format_1",
    "HUMAN",
    "PLAY_SOURCE",
]

#: The player name of a person in the match history (a player, not a baseline, in the ratings).
HUMAN = "human"
#: The ``source`` of a game a person played against a snapshot.
PLAY_SOURCE = "play"

_FORMAT_1_MATCH_COLUMNS = [
    "id",
    "wall_time",
    "step",
    "player_a",
    "player_b",
    "score_a",
    "seat_a",
    "seat_b",
    "source",
]
_ADDED_IN_FORMAT_2 = ("team_a", "team_b", "config")
INSERT_MATCH = (
    "INSERT INTO matches (wall_time, step, player_a, player_b, score_a, seat_a, seat_b, source, "
    "team_a, team_b, config) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def config_key(config: Mapping[str, Any]) -> str:
    """The canonical JSON text of a game configuration: keys sorted, no spaces, no NaN.

    Two configurations are the same exactly when their keys are equal, whatever the key order.

    >>> config_key({"komi": 7.5, "board_size": 5})
    '{"board_size":5,"komi":7.5}'
    """
    if not isinstance(config, Mapping):
        raise TypeError(
            f"A game configuration must be a mapping of keyword arguments, got "
            f"{type(config).__name__}; pass e.g. {{'komi': 7.5}}."
        )
    bad = [key for key in config if not isinstance(key, str)]
    if bad:
        raise TypeError(f"Game configuration keys must be strings, got {bad!r}.")
    for key, value in config.items():
        try:
            json.dumps(value, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"Game configuration key {key!r} has the value {value!r}, which cannot be "
                f"recorded as JSON ({error}); use numbers, strings, booleans, None, lists or "
                "dicts of them."
            ) from error
    return json.dumps(dict(config), sort_keys=True, separators=(",", ":"), allow_nan=False)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def match_row(match: Mapping[str, Any], now: float, as_player: Callable[[Any], str]) -> tuple:
    """The values :data:`INSERT_MATCH` takes for one game given as a dict of
    :meth:`~sp_wrappers.SnapshotArchive.record_match`'s arguments (checked: a score in [0, 1], a
    non-negative step, a JSON-able configuration)."""
    score = float(match["score_a"])
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"score_a must be between 0 and 1, got {score} in {match}.")
    step = match.get("step")
    if step is not None and int(step) < 0:
        raise ValueError(f"step must be a non-negative learner step, got {step}.")
    config = match.get("config")
    return (
        now,
        None if step is None else int(step),
        as_player(match["player_a"]),
        as_player(match["player_b"]),
        score,
        _text(match.get("seat_a")),
        _text(match.get("seat_b")),
        str(match.get("source", "training")),
        _text(match.get("team_a")),
        _text(match.get("team_b")),
        None if config is None else config_key(config),
    )


def decode_config(text: str | None, match_id: int, index: Path) -> dict[str, Any] | None:
    """A stored ``config`` column as a dict (``None`` when the game recorded none).

    :raises ArchiveFormatError: the text is not strict JSON or not a JSON object.
    """
    if text is None:
        return None

    def refuse(problem: str) -> NoReturn:
        raise ArchiveFormatError(
            f"{index}: match row {match_id} {problem}. Restore the index from a backup or start "
            "a new archive directory."
        )

    config = json_column(text, "config", refuse)
    if not isinstance(config, dict):
        refuse("has a config that is not a JSON object")
    return config


def _is_format_1(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
    if row is None or str(row[0]) != "1":
        return False
    columns = [r[1] for r in conn.execute("PRAGMA table_info(matches)").fetchall()]
    return columns == _FORMAT_1_MATCH_COLUMNS


def upgrade_from_format_1(conn: sqlite3.Connection) -> bool:
    """Add format 2's match columns to a format-1 index; ``True`` when it upgraded.

    Only an index whose ``meta`` says format 1 and whose ``matches`` table has exactly format 1's
    columns is touched, in one transaction (a crash leaves it at format 1, readable again). The
    check is repeated inside the transaction, so processes opening the archive at the same moment
    (env workers) upgrade it once.
    Anything else is left for the schema and format checks to judge.
    """
    if not _is_format_1(conn):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _is_format_1(conn):  # another process upgraded it while this one waited
            conn.execute("ROLLBACK")
            return False
        for column in _ADDED_IN_FORMAT_2:
            conn.execute(f"ALTER TABLE matches ADD COLUMN {column} TEXT")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'format_version'")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


def config_matches(config: Mapping[str, Any] | None, wanted: Mapping[str, Any]) -> bool:
    """Whether ``config`` has every key of ``wanted`` with the same value (other keys may
    differ; a game played without a configuration counts as ``{}``).

    >>> config_matches({"komi": 7.5, "reward_fn": "m:f"}, {"komi": 7.5})
    True
    >>> config_matches(None, {"komi": 7.5}), config_matches(None, {})
    (False, True)
    """
    config = config or {}
    return all(key in config and config[key] == value for key, value in wanted.items())
