"""An archive's match history and the ratings it stores.

Every game a learner, a snapshot or a fixed opponent played is one row of the index's
``matches`` table (the match format of ``docs/formats.md``). Ratings are stored where a resumed
run finds them again: a snapshot's in its row, those of players that are not snapshots (the
learner, fixed opponents such as ``random`` or a reference bot) in the index's ``meta`` table
under ``player_rating:<player>``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from .checks import ArchiveFormatError, ArchiveWriteError
from .index import INDEX_NAME, ArchiveIndex
from .matches import (
    INSERT_MATCH,
    config_key,
    decode_config,
    match_row,
)
from .payoff import add_decay, apply_games, read_scores, scores_from_rows, stored_decays
from .records import MatchRecord, SnapshotInfo, as_snapshot_id, player_name

__all__ = ["MatchHistory", "PLAYER_RATING_KEY", "MIXTURE_KEY"]

#: The ``meta`` key prefix of a non-snapshot player's ratings: ``player_rating:<player>``.
PLAYER_RATING_KEY = "player_rating:"
#: The ``meta`` key of the opponent mixture a run stored (:meth:`MatchHistory.store_mixture`).
MIXTURE_KEY = "nash_mixture"


def _finite_ratings(player: str, values: Mapping[str, float]) -> dict[str, float]:
    clean = {str(k): float(v) for k, v in values.items()}
    bad = [k for k, v in clean.items() if not np.isfinite(v)]
    if bad:
        raise ValueError(f"Ratings must be finite numbers; {player} has {bad} = non-finite.")
    return clean


class MatchHistory:
    """The match rows and stored ratings of one archive, read and written through its index.

    :class:`~sp_wrappers.archive.store.SnapshotArchive` holds one as ``archive.history``, and
    offers its methods under the same names (``archive.record_match``,
    ``archive.scores_against``...): each is documented here, once. The scores it computed are
    cached until the index changes.

    :param index: the archive's index.

    >>> import tempfile
    >>> history = MatchHistory(ArchiveIndex(tempfile.mkdtemp()))
    >>> history.record_match("learner", "random", 1.0)
    >>> history.n_matches(), history.scores_against("random")
    (1, {'learner': (0.0, 1)})
    """

    def __init__(self, index: ArchiveIndex) -> None:
        self.index = index
        # player (and decay) -> (the index version they were read at, the scores)
        self._scores: dict[str, tuple[tuple[int, int, int], dict[str, tuple[float, int]]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_scores": {}}

    def set_ratings(self, ratings: Mapping[str, Mapping[str, float]]) -> None:
        """Replace the stored ratings of snapshots: ``{snapshot_id: {"elo": 1234.0, ...}}``, each
        snapshot's whole ratings object. To change some keys and keep the others (what a rating
        writer wants when other processes rate the same archive), use :meth:`update_ratings`."""
        statements = []
        for sid, values in ratings.items():
            clean = _finite_ratings(str(sid), values)
            statements.append(
                (
                    "UPDATE snapshots SET ratings = ? WHERE id = ?",
                    (json.dumps(clean), as_snapshot_id(sid)),
                )
            )
        self.index.write(statements)

    def update_ratings(self, ratings: Mapping[str, Mapping[str, float]]) -> None:
        """Set some rating keys of snapshots, keeping their other keys: ``{snapshot_id: {"bt":
        1180.2}}`` changes ``bt`` and leaves ``elo`` as stored.

        Each snapshot's ratings are read, changed and written inside one write transaction, so
        two processes rating one archive (``sp-wrappers ratings`` beside a training run) never
        write back a key the other changed meanwhile. Snapshots not in the archive are skipped.

        :param ratings: snapshot id -> rating name -> finite number (Elo points).

        >>> import tempfile, gymnasium as gym
        >>> from stable_baselines3 import PPO
        >>> from sp_wrappers import SnapshotArchive
        >>> archive = SnapshotArchive(tempfile.mkdtemp())
        >>> model = PPO("MlpPolicy", gym.make("CartPole-v1"), policy_kwargs={"net_arch": [8]})
        >>> sid = archive.save(model, step=0, rating=1200.0).id
        >>> archive.update_ratings({sid: {"bt": 1100.0}})
        >>> archive.get(sid).ratings
        {'elo': 1200.0, 'bt': 1100.0}
        """
        changes = {as_snapshot_id(sid): _finite_ratings(str(sid), v) for sid, v in ratings.items()}
        if not changes:
            return
        with self.index.locked() as conn:
            for sid, values in changes.items():
                row = conn.execute("SELECT ratings FROM snapshots WHERE id = ?", (sid,)).fetchone()
                if row is None:
                    continue
                try:
                    stored = json.loads(row[0]) if isinstance(row[0], str) else None
                except ValueError:
                    stored = None
                if not isinstance(stored, dict):
                    raise ArchiveFormatError(
                        f"{self.index.path / INDEX_NAME}: the ratings of snapshot {sid} are not a "
                        "JSON object. Restore the index from a backup, or set them again with "
                        "set_ratings()."
                    )
                conn.execute(
                    "UPDATE snapshots SET ratings = ? WHERE id = ?",
                    (json.dumps({**stored, **values}), sid),
                )

    def set_player_ratings(self, ratings: Mapping[str, Mapping[str, float]]) -> None:
        """Store the ratings of players that are not snapshots of this archive (the learner,
        fixed opponents such as ``random``): ``{player: {"elo": 1234.0, ...}}``, each player's
        replacing what was stored for it. Snapshot ratings go to :meth:`set_ratings`.

        :param ratings: player name -> rating name -> finite number (Elo points).
        """
        statements = []
        for player, values in ratings.items():
            name = player_name(player)
            if name in self._snapshot_ids():
                raise ValueError(
                    f"{name} is a snapshot of {self.index.path}; store its ratings with "
                    "set_ratings()."
                )
            statements.append(
                (
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    (PLAYER_RATING_KEY + name, json.dumps(_finite_ratings(name, values))),
                )
            )
        if statements:
            self.index.write(statements)

    def player_ratings(self) -> dict[str, dict[str, float]]:
        """The stored ratings of players that are not snapshots (see :meth:`set_player_ratings`):
        ``{player: {"elo": 1234.0}}``."""
        rows = (
            self.index.connect()
            .execute(
                "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
                (len(PLAYER_RATING_KEY), PLAYER_RATING_KEY),
            )
            .fetchall()
        )
        out = {}
        for key, value in rows:
            player = key[len(PLAYER_RATING_KEY) :]
            try:
                ratings = json.loads(value) if isinstance(value, str) else None
            except ValueError:
                ratings = None
            if not isinstance(ratings, dict) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v)
                for v in ratings.values()
            ):
                raise ArchiveFormatError(
                    f"{self.index.path / INDEX_NAME}: the stored ratings of player "
                    f"{player[:40]!r} are not a JSON object of finite numbers. Restore the index "
                    "from a backup, or "
                    f"delete the meta row {key[:60]!r} to start that player's ratings again."
                )
            out[player] = {str(k): float(v) for k, v in ratings.items()}
        return out

    def store_mixture(
        self, mixture: Mapping[str, float], step: int | None = None, missing_pairs: int = 0
    ) -> None:
        """Store the opponent mixture a run draws snapshots from (``OpponentSampler(strategy=
        "nash")``'s, stored by :class:`~sp_wrappers.SelfPlayCallback` after each snapshot), in the
        index's ``meta`` row ``nash_mixture``: ``{"step", "wall_time", "mixture",
        "missing_pairs"}``. It replaces the one stored before.

        :param mixture: snapshot id -> probability.
        :param step: the learner step it was computed at.
        :param missing_pairs: how many pairs of its snapshots had no recorded game (counted even).
        """
        clean = _finite_ratings("the mixture", mixture)
        if any(p < 0 for p in clean.values()):
            raise ValueError(f"A mixture's probabilities must be >= 0, got {clean}.")
        record = {
            "step": None if step is None else int(step),
            "wall_time": time.time(),
            "mixture": clean,
            "missing_pairs": int(missing_pairs),
        }
        self.index.write(
            [
                (
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    (MIXTURE_KEY, json.dumps(record)),
                )
            ]
        )

    def stored_mixture(self) -> dict[str, Any] | None:
        """The mixture :meth:`store_mixture` stored last (``None`` when there is none)."""
        row = (
            self.index.connect()
            .execute("SELECT value FROM meta WHERE key = ?", (MIXTURE_KEY,))
            .fetchone()
        )
        if row is None:
            return None
        try:
            record = json.loads(row[0]) if isinstance(row[0], str) else None
        except ValueError:
            record = None
        mixture = record.get("mixture") if isinstance(record, dict) else None
        if not isinstance(mixture, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) and v >= 0
            for v in mixture.values()
        ):
            raise ArchiveFormatError(
                f"{self.index.path / INDEX_NAME}: the meta row {MIXTURE_KEY!r} is not a stored "
                "mixture of finite probabilities. Delete that row (the next run stores its "
                "mixture again) or restore the index from a backup."
            )
        return record

    def _snapshot_ids(self) -> set[str]:
        rows = self.index.connect().execute("SELECT id FROM snapshots").fetchall()
        return {row[0] for row in rows}

    def record_match(
        self,
        player_a: str | SnapshotInfo,
        player_b: str | SnapshotInfo,
        score_a: float,
        step: int | None = None,
        seat_a: str | None = None,
        seat_b: str | None = None,
        source: str = "training",
        team_a: str | None = None,
        team_b: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        """Append one game to the match history (``score_a``: 1 win, 0.5 draw, 0 loss for A).

        Players are snapshot ids (or :class:`SnapshotInfo`), ``learner``, ``latest`` or a
        baseline's ``policy_id``. ``team_a``/``team_b`` name the team each player played (team
        games); ``config`` is the game configuration it was played under (a JSON-able mapping,
        see :func:`config_key`).
        """
        self.record_matches(
            [
                dict(
                    player_a=player_a,
                    player_b=player_b,
                    score_a=score_a,
                    step=step,
                    seat_a=seat_a,
                    seat_b=seat_b,
                    source=source,
                    team_a=team_a,
                    team_b=team_b,
                    config=config,
                )
            ]
        )

    def record_matches(self, matches: Iterable[Mapping[str, Any]]) -> None:
        """Append many games in one transaction (dicts with :meth:`record_match`'s arguments)."""
        now = time.time()
        rows = [match_row(match, now, player_name) for match in matches]
        if not rows:
            return
        games: dict[str, int] = {}
        for row in rows:
            for player in (row[2], row[3]):
                games[player] = games.get(player, 0) + 1
        with self.index.locked() as conn:
            # The match rows, the snapshots' game counts and the payoff table's sums commit
            # together: no reader ever sees one without the others.
            conn.executemany(INSERT_MATCH, rows)
            conn.executemany(
                "UPDATE snapshots SET games = games + ? WHERE id = ?",
                [(n, player) for player, n in games.items()],
            )
            apply_games(conn, [(row[2], row[3], row[4]) for row in rows])

    def matches(
        self,
        player: str | SnapshotInfo | None = None,
        source: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> list[MatchRecord]:
        """The match history in the order it was recorded, optionally for one player, one
        source or one game configuration (games played under exactly ``config``)."""
        return list(self.iter_matches(player, source, config))

    def iter_matches(
        self,
        player: str | SnapshotInfo | None = None,
        source: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> Iterator[MatchRecord]:
        """:meth:`matches` one record at a time, read as it goes: a pass over a long history
        (a rating fit) then never holds every record in memory at once."""
        sql = (
            "SELECT id, wall_time, step, player_a, player_b, score_a, seat_a, seat_b, source, "
            "team_a, team_b, config FROM matches"
        )
        clauses, params = [], []
        if player is not None:
            player = player_name(player)
            clauses.append("(player_a = ? OR player_b = ?)")
            params += [player, player]
        if source is not None:
            clauses.append("source = ?")
            params.append(source)
        if config is not None:
            clauses.append("config = ?")
            params.append(config_key(config))
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        for row in self.index.connect().execute(sql + " ORDER BY id", params):
            yield MatchRecord(
                *row[:-1], config=decode_config(row[-1], row[0], self.index.path / INDEX_NAME)
            )

    def n_matches(self) -> int:
        """How many games the match history holds."""
        return int(self.index.connect().execute("SELECT count(*) FROM matches").fetchone()[0])

    def scores_against(
        self, player: str | SnapshotInfo, decay: float = 1.0
    ) -> dict[str, tuple[float, int]]:
        """``{opponent: (player's score, games)}`` from the match history.

        With ``decay=1`` the score is the mean over every game of the pair. With ``decay < 1``
        recent games count more: a game is weighted ``decay ** k``, ``k`` being the number of
        games the pair played after it, exactly as AlphaStar's payoff and the league's
        :class:`~sp_wrappers.league.payoff.PayoffTable` decay their counts (``0.99``: a game 100
        games back weighs 0.37 of the newest). ``games`` is the undecayed count either way.

        Read from the index's payoff table (:mod:`sp_wrappers.archive.payoff`), which every
        write keeps in step with the match rows: the cost does not grow with the history. A
        decay the table does not keep yet is added to it (computed once from the match rows).

        :param player: the player's name (or its snapshot).
        :param decay: the weight factor per later game of the pair, in ``(0, 1]``.
        """
        if not 0.0 < float(decay) <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {decay!r} (1: the whole history).")
        decay = float(decay)
        player = player_name(player)
        version = self.index.version()
        key = player if decay == 1.0 else f"{player}\x00{decay!r}"
        cached = self._scores.get(key)
        if cached is not None and cached[0] == version:
            return dict(cached[1])
        conn = self.index.connect()
        path = self.index.path / INDEX_NAME
        if decay in stored_decays(conn, path) or self._add_decay(decay):
            result = read_scores(conn, player, decay, path)
        else:  # the table keeps MAX_DECAYS already, or this process cannot write the archive
            result = scores_from_rows(conn, player, decay)
        self._scores[key] = (self.index.version(), result)
        return dict(result)

    def _add_decay(self, decay: float) -> bool:
        """Have the payoff table keep ``decay``; ``False`` when it cannot (see
        :func:`~sp_wrappers.archive.payoff.add_decay`, or a read-only archive)."""
        try:
            with self.index.locked() as conn:
                return add_decay(conn, decay)
        except ArchiveWriteError:
            return False
