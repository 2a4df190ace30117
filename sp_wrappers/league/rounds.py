"""A league round as a unit: played to the end despite lost workers, recorded whole or not at all.

A round is played on a backend until every player has finished its chunk: a player whose worker
died gets a new one from the league's last complete round and plays its chunk again.

Every snapshot the league saves carries ``round:<n>``: the round whose end took it (``round:0``
for the initial snapshots; a final snapshot carries the round the run ended after). Every game
carries its player's learner step. ``league.json`` is written last, so on resume whatever the
archive holds beyond it (snapshots of a later round, games past a player's recorded step, a final
snapshot ``league.json`` does not name) belongs to a round cut short: the league discards it
(:meth:`~sp_wrappers.archive.store.SnapshotArchive.discard`) and replays the round.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..archive.store import SnapshotArchive
from .builders import FrozenPlayer, LearnerState
from .faults import OnStall, PlayersLostError
from .state import LEAGUE_FORMAT
from .worker import LEAGUE_SOURCE, ChunkPlan, ChunkResult

__all__ = [
    "play_round",
    "unfinished_round",
    "check_rounds",
    "round_tag",
    "ROUND_TAG",
    "DEFAULT_MAX_RETRIES",
]

ROUND_TAG = "round:"
DEFAULT_MAX_RETRIES = 3


def round_tag(round: int) -> str:
    """The tag of a snapshot taken at the end of ``round`` (``round:0``: at the start)."""
    return f"{ROUND_TAG}{int(round)}"


def _round_of(tags: Iterable[str]) -> int | None:
    for tag in tags:
        if tag.startswith(ROUND_TAG):
            try:
                return int(tag[len(ROUND_TAG) :])
            except ValueError:
                return None
    return None


def check_rounds(path: Any, state: Any, snapshots: Mapping[str, Any]) -> None:
    """Refuse a ``league.json`` whose snapshots the archive records as taken after the rounds
    it claims: its word and the archive's must agree before a resume discards anything.

    :param path: the state file (for the error).
    :param state: its :class:`~sp_wrappers.league.state.LeagueState`.
    :param snapshots: every snapshot of the archive by id (pruned ones too).
    :raises StateFileError: naming the field and the fix.
    """
    named = [
        (f"learners.{name}.snapshots", sid)
        for name, learner in state.learners.items()
        for sid in learner.snapshots
    ]
    named += [("frozen", f.id) for f in state.frozen]
    named += [(f"final_snapshots.{n}", sid) for n, sid in state.final_snapshots.items()]
    for where, sid in named:
        taken = _round_of(snapshots[sid].tags)
        if taken is not None and taken > state.round:
            raise LEAGUE_FORMAT.refuse(
                path,
                "round",
                f"is {state.round}, but {where} names {sid}, which the archive records as "
                f"taken at round {taken}",
            )


def unfinished_round(
    archive: SnapshotArchive,
    round: int,
    learners: Mapping[str, LearnerState],
    frozen: Iterable[FrozenPlayer] = (),
    final_snapshots: Mapping[str, str] | None = None,
) -> tuple[list[str], list[int]]:
    """The snapshot ids and match row ids a league with this state never took in.

    :param archive: the league's archive.
    :param round: the rounds ``league.json`` records as complete (0 for a league never written).
    :param learners: the learning players as ``league.json`` records them (names, steps,
        snapshots).
    :param frozen: the frozen pool as recorded.
    :param final_snapshots: ``{player: final snapshot id}`` as recorded.
    :returns: ``(snapshot ids, match ids)`` to discard.
    """
    known = {s for learner in learners.values() for s in learner.snapshots}
    known |= {f.id for f in frozen} | set((final_snapshots or {}).values())
    parents = {f"parent:{name}" for name in learners}
    snapshots = []
    for info in archive.snapshots():
        taken = _round_of(info.tags)
        if taken is None or not parents & set(info.tags) or info.id in known:
            continue
        if taken >= round:
            snapshots.append(info.id)
    matches = [
        m.id
        for m in archive.iter_matches(source=LEAGUE_SOURCE)
        if m.player_a in learners and m.step is not None and m.step > learners[m.player_a].steps
    ]
    return snapshots, matches


def play_round(
    pool: Any,
    plans: Mapping[str, ChunkPlan],
    restart: Callable[[str], Mapping[str, Any]],
    full_weights: Callable[[str, ChunkPlan], ChunkPlan],
    round: int,
    max_retries: int = DEFAULT_MAX_RETRIES,
    stall_seconds: float | None = None,
    on_stall: OnStall | None = None,
    on_lost: Callable[[str, str, int], None] | None = None,
) -> dict[str, ChunkResult]:
    """Every player's chunk of one round; a player whose worker dies is given a new worker,
    built from the league's last complete round, and plays its chunk again.

    :param pool: the backend (``train``, ``restart``).
    :param plans: ``{player: plan}`` for the round.
    :param restart: ``restart(player)`` returns the worker arguments of the player's last
        complete round (its model file, steps).
    :param full_weights: ``full_weights(player, plan)`` returns the plan with the weights of every
        opponent (a new worker holds none).
    :param round: the round's number once complete (for reports).
    :param max_retries: new workers per round before giving up (the league directory then holds
        the last complete round, ready to resume).
    :param stall_seconds: report a round that makes no progress for this long (seconds).
    :param on_stall: receives each :class:`~sp_wrappers.league.faults.StallReport`.
    :param on_lost: called with ``(player, what happened, attempt)`` for each lost worker.
    """
    results: dict[str, ChunkResult] = {}
    pending = dict(plans)
    for attempt in range(1, max_retries + 2):
        try:
            results.update(
                pool.train(pending, stall_seconds=stall_seconds, on_stall=on_stall, round=round)
            )
            return results
        except PlayersLostError as error:
            results.update(error.results)
            if attempt > max_retries:
                raise PlayersLostError(error.lost, results) from error
            for name, why in error.lost.items():
                if on_lost is not None:
                    on_lost(name, why, attempt)
                pool.restart(name, restart(name))
            pending = {name: full_weights(name, plans[name]) for name in error.lost}
    raise AssertionError("unreachable")  # pragma: no cover


def with_weights(plan: ChunkPlan, weights: Mapping[str, Any]) -> ChunkPlan:
    """``plan`` carrying ``weights`` (every opponent's) instead of only the new ones."""
    return dataclasses.replace(plan, weights=dict(weights))
