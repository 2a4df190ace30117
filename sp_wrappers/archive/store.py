"""The snapshot archive: policy snapshots, their ratings and the match history, in one directory.

Layout (documented in ``docs/formats.md``)::

    ARCHIVE/
      index.sqlite                    # SQLite in WAL mode: meta, snapshots, matches
      snapshots/snapshot-0000.safetensors

A save takes SQLite's write lock (``BEGIN IMMEDIATE``), numbers the snapshot after the highest
number in the index, writes the weights to a temporary file, flushes it to disk, renames it into
place and inserts the index row before the lock is released: any number of processes can save into
one archive, each save gets its own number, and every row's file is the one its hash names. A
process killed at any moment never leaves a listed snapshot whose file is missing or incomplete.
A prune chooses what to drop under the same lock, and a reader whose snapshot was pruned by
another process between its listing and its load gets :class:`SnapshotPrunedError` (the sampler
draws again), never a warning about a corrupt file. Weights are safetensors (never unpickled);
the index row carries a JSON policy spec from which
:func:`~sp_wrappers.archive.policy_spec.build_policy` rebuilds the SB3 policy. Readers in other
processes (env workers, tournaments) see a consistent view while the trainer writes. Loaded
opponents live in a bounded LRU cache.

An archive may come from someone else, so everything read from it is untrusted input (the checks
are listed in ``docs/formats.md``, "Security"): snapshot ids must match ``snapshot-NNNN`` and
every snapshot path is derived from the id inside ``snapshots/`` (the ``file`` column is only
checked, never followed); symlinks are refused; rows, policy specs and safetensors headers are
validated before anything is built, read in full or deleted. Failures raise subclasses of
:class:`ArchiveError` naming the file or row and the fix.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .checks import (
    MAX_STEP,
    SNAPSHOT_DIR,
    ArchiveFormatError,
    ArchiveWriteError,
    CorruptSnapshotError,
    IncompatibleSnapshotError,
    SnapshotPrunedError,
    UnsafeArchiveError,
    check_not_linked,
    move_all,
    unlink_all,
)
from .files import snapshot_payload, write_snapshot_file
from .history import MatchHistory
from .index import FORMAT_VERSION, INDEX_NAME, ArchiveIndex
from .matches import config_key
from .payoff import rebuild_pairs
from .policy_spec import (
    MAX_PARAMETERS,
    PATH_PLACEHOLDER,
    TRUSTED_MODULES,
    ArchiveError,
    PolicySpecError,
    build_policy,
    policy_spec,
    spec_classes,
)
from .reads import SnapshotReader, pruned_error
from .records import MatchRecord, SnapshotInfo, as_snapshot_id, info_from_row
from .spaces import space_from_json, spaces_match
from .templates import is_run_template, resolve_run_template

__all__ = [
    "SnapshotArchive",
    "SnapshotInfo",
    "MatchRecord",
    "as_archive",
    "config_key",
    "FORMAT_VERSION",
    "DISCARDED_TAG",
    "ORPHANED_DIR",
    "PRUNE_BY",
    "PRUNE_Z",
    "prune_rating",
    "ArchiveError",
    "ArchiveFormatError",
    "ArchiveWriteError",
    "CorruptSnapshotError",
    "IncompatibleSnapshotError",
    "PolicySpecError",
    "SnapshotPrunedError",
    "UnsafeArchiveError",
]


# archive directory (real path) -> "module:QualName" of every class in the specs this process
# saved there: those classes are already imported here, so rebuilding them trusts nothing new
_SAVED_CLASSES: dict[str, set[str]] = {}

# (index version, every row, the unpruned rows by id, their ids in order)
_Listing = tuple[tuple[int, int, int], list[SnapshotInfo], dict[str, SnapshotInfo], tuple[str, ...]]

#: The tag of snapshots :meth:`SnapshotArchive.discard` took back.
DISCARDED_TAG = "discarded"
#: Where :meth:`SnapshotArchive.discard` moves the files of the snapshots it unlists.
ORPHANED_DIR = "orphaned"


#: The pruning policies :class:`SnapshotArchive` knows (its ``prune_by``).
PRUNE_BY = ("spread", "rating")

#: How many standard deviations below its rating a snapshot is ranked at when pruning by rating
#: (the lower end of a 95% interval).
PRUNE_Z = 1.96


def prune_rating(ratings: Mapping[str, Any] | None) -> float:
    """The rating pruning by rating ranks a snapshot at: the lower end of its skill interval,
    ``skill - PRUNE_Z * skill_sigma`` (the online ``openskill`` rating and its standard
    deviation on the Elo scale that :class:`~sp_wrappers.SelfPlayCallback` stores); ``-inf``
    for a snapshot without them.

    >>> prune_rating({"skill": 1300.0, "skill_sigma": 50.0}), prune_rating({"elo": 1500.0})
    (1202.0, -inf)
    """
    ratings = ratings or {}
    skill, sigma = ratings.get("skill"), ratings.get("skill_sigma")
    if not isinstance(skill, int | float) or not isinstance(sigma, int | float):
        return -math.inf
    low = float(skill) - PRUNE_Z * float(sigma)
    return low if math.isfinite(low) else -math.inf


def _on_history(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` of :class:`MatchHistory` as a method of the archive (the same signature and
    docstring), called on the archive's history."""

    @functools.wraps(method)
    def on_archive(self: SnapshotArchive, *args: Any, **kwargs: Any) -> Any:
        return method(self._history, *args, **kwargs)

    return on_archive


class SnapshotArchive:
    """A directory of policy snapshots with ratings and match history that survives crashes.

    Methods that take a snapshot accept its id or the :class:`SnapshotInfo` that iterating the
    archive gives. An archive from elsewhere is untrusted input: see ``docs/formats.md``
    ("Security") for what is checked before anything is built, read or deleted.

    The archive holds three collaborators, each handed the index rather than the archive: an
    :class:`~sp_wrappers.archive.index.ArchiveIndex` (the SQLite connection of this process, the
    schema and format checks, write transactions), a
    :class:`~sp_wrappers.archive.history.MatchHistory` (match rows and stored ratings; the match
    and rating methods below hand on to it) and a
    :class:`~sp_wrappers.archive.reads.SnapshotReader` (weights files read and checked, the
    snapshots whose files failed). It keeps the listing it parsed (until the index changes) and
    the loaded policies (a bounded LRU cache) itself.

    :param path: the archive directory (created when missing and ``create`` is true).
    :param max_snapshots: keep at most this many snapshots listed; older ones are pruned, keeping
        the newest ``keep_recent``, the first, and an evenly spread sample of the rest. ``None``
        keeps all.
    :param keep_recent: how many of the newest snapshots pruning never touches (default: half of
        ``max_snapshots``).
    :param prune_by: which older snapshots pruning keeps beside the first and the newest:
        ``"spread"`` (default) an even spread over the history; ``"rating"`` the strongest, ranked
        by the lower end of their rating's interval (:func:`prune_rating`: the stored ``"skill"``
        less :data:`PRUNE_Z` times ``"skill_sigma"``), so a snapshot that won a lucky game or two
        (a wide interval) does not outrank one that proved itself; unrated snapshots go first, in
        the spread's order.
    :param cache_size: how many loaded opponent policies stay in memory (LRU).
    :param create: create a new archive when ``path`` holds none; ``False`` raises instead.
    :param trusted_modules: module prefixes whose classes a policy spec may name, added to
        :data:`~sp_wrappers.archive.policy_spec.TRUSTED_MODULES` (SB3, sb3-contrib, torch,
        sp_wrappers). Importing a module under them runs its code: list only packages you trust.
        The classes of policies saved into this archive by this process (a custom features
        extractor, say) are trusted for it without being listed.
    :param max_parameters: refuse to rebuild a policy with more weights and buffers than this
        (values; the default allows 50 million).

    >>> import tempfile, gymnasium as gym
    >>> from stable_baselines3 import PPO
    >>> model = PPO("MlpPolicy", gym.make("CartPole-v1"), policy_kwargs={"net_arch": [8]})
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> archive.save(model, step=0).id
    'snapshot-0000'
    >>> archive.record_match("learner", "snapshot-0000", 1.0, step=10)
    >>> len(archive), archive.scores_against("learner")
    (1, {'snapshot-0000': (1.0, 1)})
    >>> [archive.load_policy(info).policy_id for info in archive]
    ['snapshot-0000']
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        max_snapshots: int | None = None,
        keep_recent: int | None = None,
        cache_size: int = 16,
        prune_by: str = "spread",
        create: bool = True,
        trusted_modules: Sequence[str] = (),
        max_parameters: int = MAX_PARAMETERS,
    ) -> None:
        if max_snapshots is not None and max_snapshots < 2:
            raise ValueError(f"max_snapshots must be >= 2 or None, got {max_snapshots}.")
        if keep_recent is not None and (
            keep_recent < 1 or (max_snapshots is not None and keep_recent >= max_snapshots)
        ):
            raise ValueError(
                f"keep_recent must be between 1 and max_snapshots - 1, got {keep_recent}."
            )
        if cache_size < 1:
            raise ValueError(f"cache_size must be >= 1, got {cache_size}.")
        if prune_by not in PRUNE_BY:
            raise ValueError(f"prune_by must be one of {list(PRUNE_BY)}, got {prune_by!r}.")
        if isinstance(trusted_modules, str):
            raise TypeError(
                f"trusted_modules must be a list of module prefixes, got the string "
                f"{trusted_modules!r}; pass [{trusted_modules!r}]."
            )
        self.path = Path(path)
        self.max_snapshots = max_snapshots
        self.keep_recent = keep_recent
        self.prune_by = prune_by
        self.cache_size = int(cache_size)
        extra = tuple(m for m in trusted_modules if m not in TRUSTED_MODULES)
        self.trusted_modules = TRUSTED_MODULES + extra
        self.max_parameters = int(max_parameters)
        self._cache: OrderedDict[str, Any] = OrderedDict()
        # re-read only when the index changes (see _Listing)
        self._listing: _Listing | None = None
        self._ids: tuple[Any, frozenset[str], tuple[str, ...]] | None = None  # snapshot_ids()
        self._parsed: dict[tuple[Any, ...], SnapshotInfo] = {}  # raw row -> its checked info
        self._index = ArchiveIndex(self.path, create=create, on_connect=self._cache.clear)
        self._history = MatchHistory(self._index)
        self._reader = SnapshotReader(self._index)
        self._index.connect()
        self.sweep_pruned_files()

    # -- the index ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the index connection and drop cached policies."""
        self._index.close()
        self._cache.clear()

    def __enter__(self) -> SnapshotArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        # The index and history drop their connection and caches themselves.
        return {
            **self.__dict__,
            "_cache": OrderedDict(),
            "_listing": None,
            "_parsed": {},
            "_ids": None,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._index.on_connect = self._cache.clear

    # -- snapshots ---------------------------------------------------------------------------------
    def _rows(self) -> tuple[list[SnapshotInfo], dict[str, SnapshotInfo]]:
        """Every row (validated) and the unpruned ones by id, re-read when the index changed."""
        conn = self._index.connect()
        version = self._index.version()
        if self._listing is None or self._listing[0] != version:
            raw = conn.execute(
                "SELECT seq, id, step, wall_time, tags, sha256, file, policy_spec, ratings, "
                "games, pruned FROM snapshots ORDER BY seq"
            ).fetchall()
            # Rows that did not change since the last listing are not parsed and checked again.
            index, directory = self.path / INDEX_NAME, self.path / SNAPSHOT_DIR
            parsed = {
                row: self._parsed.get(row) or info_from_row(row, index, directory) for row in raw
            }
            self._parsed = parsed
            rows = list(parsed.values())
            listed = {info.id: info for info in rows if not info.pruned}
            self._listing = (version, rows, listed, tuple(listed))
        return self._listing[1], self._listing[2]

    def snapshots(self, include_pruned: bool = False) -> list[SnapshotInfo]:
        """Every listed snapshot, oldest first (corrupt ones left out).

        :param include_pruned: also return the rows of snapshots that :meth:`prune` unlisted
            (``info.pruned`` is true and their weights file is gone), for example to name every
            snapshot the match history mentions.
        :raises ArchiveFormatError: a row holds values of the wrong type or out of range
            (:class:`UnsafeArchiveError` when its id or ``file`` points outside ``snapshots/``).
        """
        every, listed = self._rows()
        rows = every if include_pruned else listed.values()
        bad = self._reader.bad_ids()
        return [info for info in rows if info.id not in bad] if bad else list(rows)

    def snapshot_ids(self) -> tuple[str, ...]:
        """The ids of :meth:`snapshots`, oldest first: the same tuple object until the listing
        changes (another process saved or pruned, a file was called bad or restored), so a
        caller that draws at every episode start can keep what it derived from it.

        >>> import tempfile
        >>> SnapshotArchive(tempfile.mkdtemp()).snapshot_ids()
        ()
        """
        self._rows()
        listing = self._listing
        assert listing is not None  # set by _rows()
        bad = self._reader.bad_ids()
        cached = self._ids
        if cached is not None and cached[0] is listing and cached[1] == bad:
            return cached[2]
        ids = tuple(i for i in listing[3] if i not in bad) if bad else listing[3]
        self._ids = (listing, frozenset(bad), ids)
        return ids

    def __len__(self) -> int:
        return len(self.snapshots())

    def __iter__(self) -> Iterator[SnapshotInfo]:
        return iter(self.snapshots())

    def __contains__(self, snapshot: object) -> bool:
        if not isinstance(snapshot, (str, SnapshotInfo)):
            return False
        sid = as_snapshot_id(snapshot)
        return sid in self._rows()[1] and sid in {info.id for info in self.snapshots()}

    def latest(self) -> SnapshotInfo | None:
        """The newest listed snapshot, or ``None`` for an empty archive."""
        listing = self.snapshots()
        return listing[-1] if listing else None

    def get(self, snapshot: str | SnapshotInfo) -> SnapshotInfo:
        """The listed snapshot with this id (or the id of this :class:`SnapshotInfo`).

        :raises SnapshotPrunedError: (a ``KeyError``) the snapshot was pruned.
        :raises KeyError: naming the known ids.
        """
        sid = as_snapshot_id(snapshot)
        every, listed = self._rows()
        info = listed.get(sid)
        if info is not None and not self._reader.is_bad(sid):
            return info
        if info is not None:
            raise KeyError(
                f"Snapshot {sid!r} in {self.path} was left out after its file failed a check "
                "(see the earlier warning); restore the file (it is checked again once it "
                "changes) or delete the snapshot from the archive."
            )
        if any(row.id == sid for row in every):
            raise pruned_error(self.path, sid)
        known = [i.id for i in self.snapshots()]
        shown = known if len(known) <= 10 else known[:5] + ["..."] + known[-5:]
        raise KeyError(f"No snapshot {sid!r} in {self.path}; known ids: {shown}.")

    def save(
        self,
        model: Any,
        step: int,
        tags: Sequence[str] = (),
        rating: float | None = None,
        ratings: Mapping[str, float] | None = None,
    ) -> SnapshotInfo:
        """Save the weights of ``model`` (an SB3 model, policy or ``SB3Policy``) as a new snapshot.

        :param step: the learner step (``model.num_timesteps``) the snapshot was taken at.
        :param tags: free-form labels stored with it.
        :param rating: its starting Elo (stored as ``ratings["elo"]``).
        :param ratings: more starting ratings stored with it (``{"skill": ..., "skill_sigma":
            ...}``), in the same transaction as its row, so a prune never sees it unrated.
        :raises ArchiveWriteError: on a read-only or full disk; nothing saved before is lost.

        Safe to call from any number of processes at once on one archive: numbering, the file
        write and the index row happen under SQLite's write lock, so each save gets its own
        snapshot (other writers wait for the lock, readers do not).
        """
        if not 0 <= int(step) <= MAX_STEP:
            raise ValueError(f"step must be a non-negative learner step, got {step}.")
        stored = {} if rating is None else {"elo": rating}
        stored.update(ratings or {})
        for key, value in stored.items():
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise ValueError(f"rating {key!r} must be a number, got {value!r}.")
            if not np.isfinite(value):
                raise ValueError(f"rating {key!r} must be a finite number, got {value}.")
        policy = getattr(model, "policy", model)
        spec = policy_spec(policy)
        _SAVED_CLASSES.setdefault(self._trust_key(), set()).update(spec_classes(spec))
        state = policy.state_dict()
        ratings = {str(key): float(value) for key, value in stored.items()}
        tags = tuple(str(t) for t in tags)
        wall_time = time.time()
        with self._index.locked() as conn:
            # Numbered under the write lock: no other process can take this number, write this
            # file or insert this row until the row below commits.
            (seq,) = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM snapshots").fetchone()
            snapshot_id = f"snapshot-{seq:04d}"
            relative = f"{SNAPSHOT_DIR}/{snapshot_id}.safetensors"
            final = self.path / relative
            payload, digest = snapshot_payload(state, snapshot_id)
            write_snapshot_file(final, payload)  # replaces only an unlisted file of a killed save
            try:
                conn.execute(
                    "INSERT INTO snapshots (seq, id, step, wall_time, tags, sha256, file, "
                    "policy_spec, ratings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        seq,
                        snapshot_id,
                        int(step),
                        wall_time,
                        json.dumps(list(tags)),
                        digest,
                        relative,
                        json.dumps(spec),
                        json.dumps(ratings),
                    ),
                )
            except BaseException:
                unlink_all(final.parent, [final.name])
                raise
        info = SnapshotInfo(
            id=snapshot_id,
            step=int(step),
            wall_time=wall_time,
            tags=tags,
            sha256=digest,
            file=final,
            ratings=ratings,
            policy_spec=spec,
            seq=seq,
        )
        if self.max_snapshots is not None:
            self.prune()
        return info

    def _build(self, info: SnapshotInfo, device: str) -> Any:
        """The snapshot's policy with random weights, rebuilt from its checked spec."""
        saved = _SAVED_CLASSES.get(self._trust_key(), ())
        try:
            return build_policy(
                info.policy_spec, self.trusted_modules, device, self.max_parameters, saved
            )
        except PolicySpecError as error:
            message = str(error).replace(PATH_PLACEHOLDER, repr(str(self.path)))
            raise PolicySpecError(
                f"Snapshot {info.id} in {self.path / INDEX_NAME}: {message}"
            ) from error

    def _trust_key(self) -> str:
        return os.path.realpath(self.path)

    def load_state_dict(self, snapshot: str | SnapshotInfo) -> dict[str, Any]:
        """The snapshot's weights as torch tensors, after checking the file's hash and that it
        holds exactly the tensors (names, shapes, dtypes) its policy spec describes.

        :raises CorruptSnapshotError: the file is missing, its hash differs or its tensors do
            not fit the spec, on two reads a moment apart (a warning naming the file is issued
            and the snapshot is left out of :meth:`snapshots` until its file changes).
        :raises SnapshotPrunedError: the snapshot was pruned, perhaps by another process since
            this one read the listing (no warning: draw another).
        :raises PolicySpecError: the stored policy spec is refused (see :func:`build_policy`).
        :raises UnsafeArchiveError: the file or ``snapshots/`` is a symlink or not a plain file.
        """
        info = self.get(snapshot)
        return self._read_weights(info, self._build(info, "cpu"))

    def _read_weights(self, info: SnapshotInfo, policy: Any) -> dict[str, Any]:
        """The reader's checked weights; a snapshot pruned under it is gone from the next
        listing, which is read again whatever the index's version says."""
        try:
            return self._reader.load_weights(info, policy)
        except SnapshotPrunedError:
            self._listing = None
            raise

    def load_policy(
        self, snapshot: str | SnapshotInfo, deterministic: bool = False, device: str = "cpu"
    ) -> Any:
        """A frozen :class:`~sp_wrappers.SB3Policy` for a snapshot (its id or its
        :class:`SnapshotInfo`), from the bounded cache.

        The policy is rebuilt from the stored spec (no pickle; checked as :func:`build_policy`
        describes), the weights file is checked against the spec before it is read in full, and
        the policy's ``policy_id`` is the snapshot id. At most ``cache_size`` policies are kept.

        :raises CorruptSnapshotError: see :meth:`load_state_dict` (the sampler draws another).
        :raises SnapshotPrunedError: the snapshot was pruned (the sampler draws another).
        :raises PolicySpecError: the stored spec names a class, argument or size it must not.
        """
        from ..core.policies import SB3Policy

        snapshot_id = as_snapshot_id(snapshot)
        key = f"{snapshot_id}@{device}"
        cached = self._cache.get(key)
        if cached is None:
            info = self.get(snapshot_id)
            policy = self._build(info, device)
            policy.load_state_dict(self._read_weights(info, policy), strict=True)
            cached = SB3Policy(policy, policy_id=snapshot_id, device=device, copy_weights=False)
            self._cache[key] = cached
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        if cached.deterministic != deterministic:
            cached = copy.copy(cached)
            cached.deterministic = deterministic
        return cached

    def cached_ids(self) -> list[str]:
        """Snapshot ids whose policies are in the in-memory cache, least recently used first."""
        return [key.rsplit("@", 1)[0] for key in self._cache]

    def check_compatible(self, model_or_spaces: Any, action_space: Any = None) -> None:
        """Raise :class:`IncompatibleSnapshotError` when the newest snapshot's spaces differ from
        a model's (or from the given observation and action spaces)."""
        if action_space is None:
            policy = getattr(model_or_spaces, "policy", model_or_spaces)
            observation_space, action_space = policy.observation_space, policy.action_space
        else:
            observation_space = model_or_spaces
        newest = self.latest()
        if newest is None:
            return
        where = f"snapshot {newest.id}'s observation_space"
        stored_obs = space_from_json(newest.policy_spec.get("observation_space"), where)
        where = f"snapshot {newest.id}'s action_space"
        stored_act = space_from_json(newest.policy_spec.get("action_space"), where)
        same_obs = spaces_match(stored_obs, observation_space)
        if not (same_obs and spaces_match(stored_act, action_space)):
            raise IncompatibleSnapshotError(
                f"Snapshot {newest.id} in {self.path} was saved for observation space "
                f"{stored_obs} and action space {stored_act}, but this model uses "
                f"{observation_space} and {action_space}. Use a new archive directory for a "
                "different game or wrapper stack."
            )

    # -- pruning -----------------------------------------------------------------------------------
    def prune(self) -> list[str]:
        """Unlist snapshots beyond ``max_snapshots`` and delete their files; returns their ids.

        Kept: the newest ``keep_recent``, the first snapshot, and older snapshots spread evenly
        over the rest of the history (``prune_by="spread"``) or the highest rated of them by the
        lower end of their interval (``prune_by="rating"``, see :func:`prune_rating`). Pruned
        snapshots keep their index rows (marked pruned), so ratings and the match history that
        mention them stay intact. Only
        ``snapshots/<id>.safetensors`` of a validated id is ever deleted, never a path the index
        names, and nothing when ``snapshots/`` is a symlink.
        """
        if self.max_snapshots is None:
            return []
        directory = self.path / SNAPSHOT_DIR
        check_not_linked(directory, directory=True)
        with self._index.locked() as conn:
            # Chosen under the write lock from the index as it is now: two processes pruning
            # at once never both drop a snapshot each from the same listing (dropping too many).
            self._listing = None
            listing = self.snapshots()
            drop: list[SnapshotInfo] = []
            if len(listing) > self.max_snapshots:
                recent = self.keep_recent or max(1, self.max_snapshots // 2)
                kept = list(listing)
                while len(kept) > self.max_snapshots:
                    # Among the older snapshots (never the first), drop the one whose neighbours
                    # are closest together: repeated, this keeps an even spread over the history.
                    candidates = range(1, len(kept) - recent)
                    victim = min(candidates, key=lambda i: self._prune_key(kept, i))
                    drop.append(kept.pop(victim))
                for info in drop:
                    conn.execute("UPDATE snapshots SET pruned = 1 WHERE id = ?", (info.id,))
        self._uncache(info.id for info in drop)
        # After the commit: a reader that still finds a pruned row unpruned finds its file too.
        unlink_all(directory, [f"{info.id}.safetensors" for info in drop])
        self.sweep_pruned_files()  # what an earlier prune killed before its deletes left
        return [info.id for info in drop]

    def _prune_key(self, kept: list[SnapshotInfo], i: int) -> tuple[float, ...]:
        """The order pruning drops ``kept[i]`` in (lowest first)."""
        gap = kept[i + 1].step - kept[i - 1].step
        if self.prune_by == "rating":
            return (prune_rating(kept[i].ratings), gap, i)
        return (gap, i)

    def sweep_pruned_files(self) -> list[str]:
        """Delete the weights files that snapshots marked pruned (or discarded) still have on
        disk: what a prune or a discard killed between its commit and its deletes left behind
        (nothing else ever deletes the file of a row already marked pruned). Runs when the
        archive opens and after every prune; a file that cannot be deleted (a read-only archive)
        is left for the next writer. Returns the ids whose files it deleted.

        Rows are never unpruned and ids never reused, so such a file is never read again; only
        ``snapshots/<id>.safetensors`` of a row whose id is ``snapshot-%04d`` of its ``seq`` is
        deleted, relative to ``snapshots/`` opened without following links.
        """
        directory = self.path / SNAPSHOT_DIR
        check_not_linked(directory, directory=True)
        try:
            present = {name for name in os.listdir(directory) if name.endswith(".safetensors")}
        except OSError:
            return []
        if not present:
            return []
        rows = self._index.connect().execute("SELECT seq, id, tags FROM snapshots WHERE pruned = 1")
        stale, discarded = [], []
        for seq, sid, tags in rows:
            if not (
                type(seq) is int
                and 0 <= seq
                and sid == f"snapshot-{seq:04d}"
                and f"{sid}.safetensors" in present
            ):
                continue
            # a discard killed before it moved its files: they go aside, as discard's do
            (discarded if f'"{DISCARDED_TAG}"' in str(tags) else stale).append(sid)
        if not stale and not discarded:
            return []
        self._uncache(stale + discarded)
        try:
            unlink_all(directory, [f"{sid}.safetensors" for sid in sorted(stale)])
            names = [f"{sid}.safetensors" for sid in sorted(discarded)]
            move_all(directory, names, self.path / ORPHANED_DIR)
        except OSError:
            return []
        return sorted(stale)

    def discard(
        self, snapshots: Iterable[str] = (), matches: Iterable[int] = ()
    ) -> tuple[int, int]:
        """Take back records a writer made but never committed to (a league round cut short):
        unlist ``snapshots`` like pruned ones, tagged ``discarded`` (their rows stay, so a
        snapshot id is never handed out twice; their files are moved into ``orphaned/``, never
        deleted: a discard on a wrong word loses nothing), and delete the match
        rows ``matches`` (the ``games`` counts of the snapshots they named go down again), all in
        one write transaction.

        :param snapshots: snapshot ids to unlist.
        :param matches: ids of match rows (:attr:`MatchRecord.id`) to delete.
        :returns: how many snapshots and match rows were discarded.

        >>> import tempfile
        >>> archive = SnapshotArchive(tempfile.mkdtemp())
        >>> archive.record_match("a", "b", 1.0, source="league")
        >>> archive.discard(matches=[m.id for m in archive.matches()]), archive.n_matches()
        ((0, 1), 0)
        """
        snapshot_ids = sorted(set(snapshots))
        match_ids = sorted({int(m) for m in matches})
        if not snapshot_ids and not match_ids:
            return 0, 0
        discarded = []
        with self._index.locked() as conn:
            games: dict[str, int] = {}
            pairs = set()
            deleted = 0
            for match_id in match_ids:
                row = conn.execute(
                    "SELECT player_a, player_b FROM matches WHERE id = ?", (match_id,)
                ).fetchone()
                if row is None:
                    continue
                for player in row:
                    games[player] = games.get(player, 0) + 1
                pairs.add((row[0], row[1]))
                conn.execute("DELETE FROM matches WHERE id = ?", (match_id,))
                deleted += 1
            conn.executemany(
                "UPDATE snapshots SET games = max(0, games - ?) WHERE id = ?",
                [(n, player) for player, n in games.items()],
            )
            # A decayed sum cannot take one game back out: the pairs' rows are summed again.
            rebuild_pairs(conn, pairs)
            for snapshot_id in snapshot_ids:
                row = conn.execute(
                    "SELECT tags FROM snapshots WHERE id = ?", (snapshot_id,)
                ).fetchone()
                if row is None:
                    continue
                tags = [t for t in json.loads(row[0]) if t != DISCARDED_TAG] + [DISCARDED_TAG]
                conn.execute(
                    "UPDATE snapshots SET pruned = 1, tags = ? WHERE id = ?",
                    (json.dumps(tags), snapshot_id),
                )
                discarded.append(snapshot_id)
        directory = self.path / SNAPSHOT_DIR
        if discarded and directory.exists():
            check_not_linked(directory, directory=True)
            self._uncache(discarded)
            names = [f"{snapshot_id}.safetensors" for snapshot_id in discarded]
            move_all(directory, names, self.path / ORPHANED_DIR)
        return len(discarded), deleted

    def _uncache(self, snapshot_ids: Iterable[str]) -> None:
        """Drop the cached policies of these snapshots (on every device)."""
        gone = set(snapshot_ids)
        for key in [k for k in self._cache if k.rsplit("@", 1)[0] in gone]:
            del self._cache[key]

    # -- ratings and matches: the match history's ----------------------------------------------
    @property
    def history(self) -> MatchHistory:
        """The archive's match history and stored ratings
        (:class:`~sp_wrappers.archive.history.MatchHistory`). Its methods are also the archive's,
        under the same names (``archive.record_match`` is ``archive.history.record_match``)."""
        return self._history

    set_ratings = _on_history(MatchHistory.set_ratings)
    update_ratings = _on_history(MatchHistory.update_ratings)
    set_player_ratings = _on_history(MatchHistory.set_player_ratings)
    player_ratings = _on_history(MatchHistory.player_ratings)
    record_match = _on_history(MatchHistory.record_match)
    record_matches = _on_history(MatchHistory.record_matches)
    matches = _on_history(MatchHistory.matches)
    iter_matches = _on_history(MatchHistory.iter_matches)
    n_matches = _on_history(MatchHistory.n_matches)
    store_mixture = _on_history(MatchHistory.store_mixture)
    stored_mixture = _on_history(MatchHistory.stored_mixture)
    scores_against = _on_history(MatchHistory.scores_against)

    def __repr__(self) -> str:
        return f"SnapshotArchive({str(self.path)!r}, snapshots={len(self)})"


def as_archive(archive: Any, create: bool = True, owner: str = "archive") -> SnapshotArchive:
    """The :class:`SnapshotArchive` that ``archive`` names: the archive itself, or the one at a
    path (``str`` or ``os.PathLike``), opened here.

    Every public constructor and function that takes an archive calls this on its argument, so a
    path from a configuration file (RL Baselines3 Zoo's yaml, ``gymnasium.make`` keyword
    arguments) works wherever an archive object does, and anything else fails at once.

    :param archive: a :class:`SnapshotArchive` or the path of its directory; with ``create``, a
        path holding ``{run}`` names one fresh directory per training run
        (:func:`~sp_wrappers.archive.templates.resolve_run_template`).
    :param create: create a new archive when the path holds none (training); ``False`` raises
        :class:`ArchiveFormatError` instead (evaluation of an existing archive).
    :param owner: who asks, for the error message (e.g. ``"OpponentSampler(archive=...)"``).
    :raises TypeError: ``archive`` is neither an archive nor a path.

    >>> import tempfile
    >>> archive = as_archive(tempfile.mkdtemp())
    >>> as_archive(archive) is archive
    True
    >>> as_archive(42, owner="OpponentSampler(archive=...)")
    Traceback (most recent call last):
    ...
    TypeError: OpponentSampler(archive=...) takes a SnapshotArchive or the path of its directory \
(str or os.PathLike), got int: 42.
    """
    if isinstance(archive, SnapshotArchive):
        return archive
    if isinstance(archive, str | os.PathLike) and str(os.fspath(archive)):
        if create and is_run_template(archive):
            archive = resolve_run_template(archive)
        return SnapshotArchive(archive, create=create)
    raise TypeError(
        f"{owner} takes a SnapshotArchive or the path of its directory (str or os.PathLike), "
        f"got {type(archive).__name__}: {archive!r}."
    )
