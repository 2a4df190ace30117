"""Who gets credit for a game, in one place.

The learner's games go to the snapshot it descended from at the time, a league player's games
to the snapshot it grew into; the callback's Elo, the archive ratings, the league and team play
all read games through these rules."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..archive.matches import config_matches
from ..archive.store import SnapshotArchive
from ..opponents.sampler import LATEST_ID

__all__ = [
    "attribute_learner_matches",
    "attributed_games",
    "iter_attributed_matches",
    "league_games",
]


def attribute_learner_matches(
    matches: Iterable[Any], snapshot_steps: Sequence[tuple[int, str]], learner_id: str = "learner"
) -> list[tuple[str, str, float]]:
    """Turn recorded matches into snapshot-vs-player matches for a batch rating fit.

    The learner between two saves descends from the newest snapshot saved at or before the match's
    step, so its games are credited to that snapshot. Games of a snapshot against itself (the
    learner against its own latest weights) carry no rating information and are dropped.

    :param matches: records with ``player_a``, ``player_b``, ``score_a`` and ``step``.
    :param snapshot_steps: ``(step, snapshot_id)`` pairs sorted by step.
    :param learner_id: the name the learner's matches are recorded under.

    >>> from types import SimpleNamespace as M
    >>> steps = [(0, "snapshot-0000"), (100, "snapshot-0001")]
    >>> attribute_learner_matches(
    ...     [M(player_a="learner", player_b="snapshot-0000", score_a=1.0, step=150),
    ...      M(player_a="learner", player_b="snapshot-0001", score_a=0.5, step=120)], steps)
    [('snapshot-0001', 'snapshot-0000', 1.0)]
    """
    return list(iter_attributed_matches(matches, snapshot_steps, learner_id))


def iter_attributed_matches(
    matches: Iterable[Any], snapshot_steps: Sequence[tuple[int, str]], learner_id: str
) -> Iterator[tuple[str, str, float]]:
    """:func:`attribute_learner_matches` one game at a time."""
    keys = [step for step, _ in snapshot_steps]
    for match in matches:
        a, b = match.player_a, match.player_b
        if a == learner_id or b == learner_id:
            step = match.step if match.step is not None else (keys[-1] if keys else 0)
            index = bisect.bisect_right(keys, step) - 1
            if index < 0:
                continue
            version = snapshot_steps[index][1]
            a = version if a == learner_id else a
            b = version if b == learner_id else b
        if a == b or LATEST_ID in (a, b):
            continue
        yield a, b, float(match.score_a)


def league_games(
    archive: SnapshotArchive, include_evaluation: bool = True, source: str | None = None
) -> list[tuple[str, str, float]]:
    """The archive's games as snapshot-vs-snapshot games for a Bradley-Terry fit.

    A learning player's game at step ``s`` is credited to the first snapshot taken from it at or
    after ``s`` (the weights it was growing into; the run's final snapshot closes every player's
    last stretch, and a reset player's games go to its new lineage). Games a player played
    against its own current weights, and games with no such snapshot, are left out.

    :param include_evaluation: also keep games between snapshots and bots (e.g. ``evaluation``).
    :param source: only the games recorded with this source (``"league"``, ``"evaluation"``).
    """
    by_player: dict[str, list[tuple[int, int, str]]] = {}
    for info in archive.snapshots(include_pruned=True):
        for tag in info.tags:
            if tag.startswith("parent:"):
                by_player.setdefault(tag[len("parent:") :], []).append(
                    (info.step, info.seq, info.id)
                )
    for entries in by_player.values():
        entries.sort()

    def credit(player: str, step: int | None) -> str | None:
        entries = by_player.get(player)
        if entries is None:
            return player
        if step is None:
            return entries[-1][2]
        index = bisect.bisect_left([e[0] for e in entries], step)
        return entries[index][2] if index < len(entries) else None

    games = []
    for match in archive.matches(source=source):
        if match.source != "league" and not include_evaluation:
            continue
        a = credit(match.player_a, match.step)
        b = credit(match.player_b, match.step)
        if a is None or b is None or a == b:
            continue
        games.append((a, b, float(match.score_a)))
    return games


def attributed_games(
    archive: Any, source: str | None = None, config: Mapping[str, Any] | None = None
) -> list[tuple[str, str, float]]:
    """The archive's match history as ``(player_a, player_b, score_a)``, with the learner's games
    credited to the snapshot it descends from (see ``attribute_learner_matches``); in a league's
    archive (snapshots tagged ``parent:<player>``) each player's games are credited to the
    snapshot it grew into (see ``sp_wrappers.league.league_games``). ``config`` keeps the games
    whose configuration has its keys and values (see ``sp_wrappers.training.env_generator``)."""

    every = archive.snapshots(include_pruned=True)
    if any(tag.startswith("parent:") for info in every for tag in info.tags):
        if config is not None:
            raise ValueError(
                f"{archive.path} is a league's archive; filtering its games by configuration is "
                "not supported. Drop --config (config=...)."
            )

        return league_games(archive, source=source)
    steps = sorted((info.step, info.id) for info in archive.snapshots())
    matches: Any = archive.iter_matches(source=source)
    if config is not None:
        matches = (m for m in matches if config_matches(m.config, config))
    return attribute_learner_matches(matches, steps, "learner")
