"""No rating and no file is lost when processes share an archive or one is killed mid-prune."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.evaluation.match import play_match


def make_model(seed: int = 0) -> MaskablePPO:
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, seed=seed, policy_kwargs={"net_arch": [16]}
    )


# -- two processes rating one archive -------------------------------------------------------------
# Each test stops a real writer (in its own process) at the start of its write transaction, has
# another process commit a change to the same snapshot's ratings at that moment, then lets the
# writer go on: what the writer read before its transaction must not overwrite that change.


def _signal_at_write(archive, at_write) -> None:
    """Set ``at_write`` when ``archive``'s connection starts a write transaction."""
    archive._index.connect().set_trace_callback(
        lambda sql: at_write.set() if sql.startswith("BEGIN IMMEDIATE") else None
    )


def _store_fit(root: str, at_write, results) -> None:
    """``sp-wrappers ratings``' write: refit the archive and store each snapshot's "bt"."""
    try:
        from sp_wrappers.archive.store import SnapshotArchive
        from sp_wrappers.ratings.archive_ratings import store_archive_ratings

        archive = SnapshotArchive(root)
        _signal_at_write(archive, at_write)
        store_archive_ratings(archive)
        results.put(None)
    except BaseException:
        results.put(traceback.format_exc())


def _store_elo(root: str, snapshot: str, at_write, results) -> None:
    """A training run's write: SelfPlayCallback storing its online Elo."""
    try:
        from sp_wrappers.training.callbacks import SelfPlayCallback

        callback = SelfPlayCallback(root)
        callback.elo.ratings[snapshot] = 1250.0
        _signal_at_write(callback.archive, at_write)
        callback._store_elo()
        results.put(None)
    except BaseException:
        results.put(traceback.format_exc())


def _race(root: Path, snapshot: str, ratings: dict, target, *args) -> None:
    """Run ``target`` in a new process; while it waits for the write lock, commit ``ratings`` as
    the snapshot's stored ratings from this one (another writer that got there first)."""
    context = multiprocessing.get_context("spawn")
    at_write, results = context.Event(), context.Queue()
    conn = sqlite3.connect(root / "index.sqlite", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE snapshots SET ratings = ? WHERE id = ?", (json.dumps(ratings), snapshot))
    process = context.Process(target=target, args=(str(root), *args, at_write, results))
    process.start()
    try:
        assert at_write.wait(timeout=300), "the writer never started its write transaction"
    finally:
        conn.execute("COMMIT")
        conn.close()
    outcome = results.get(timeout=300)
    process.join(timeout=60)
    assert outcome is None, outcome


def _rated_archive(root: Path) -> str:
    archive = SnapshotArchive(root)
    snapshot = archive.save(make_model(), step=0, rating=1200.0).id
    play_match(tictactoe_v3.env, snapshot, RandomPolicy(), 6, archive=archive)
    return snapshot


def test_ratings_stored_beside_a_training_run_keep_the_elo_it_wrote_meanwhile(tmp_path):
    snapshot = _rated_archive(tmp_path)
    _race(tmp_path, snapshot, {"elo": 1300.0}, _store_fit)
    ratings = SnapshotArchive(tmp_path).get(snapshot).ratings
    assert ratings["elo"] == 1300.0 and "bt" in ratings


def test_a_training_run_s_elo_write_keeps_the_ratings_stored_meanwhile(tmp_path):
    snapshot = _rated_archive(tmp_path)
    _race(tmp_path, snapshot, {"elo": 1200.0, "bt": 987.0}, _store_elo, snapshot)
    assert SnapshotArchive(tmp_path).get(snapshot).ratings == {"elo": 1250.0, "bt": 987.0}


# -- a prune killed between its commit and its file deletes ---------------------------------------

KILLED_PRUNE = textwrap.dedent(
    """
    import os, sys
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO
    from sp_wrappers.archive import store
    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    archive = store.SnapshotArchive(sys.argv[1], max_snapshots=2, keep_recent=1)
    model = MaskablePPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env()), n_steps=64, batch_size=64,
                        policy_kwargs={"net_arch": [16]})
    archive.save(model, step=0)
    archive.save(model, step=10)
    # Killed once the prune has committed, before it deletes any file.
    store.unlink_all = lambda *args, **kwargs: os._exit(9)
    archive.save(model, step=20)
    """
)


def test_files_a_killed_prune_left_are_swept_at_the_next_prune_and_on_open(tmp_path):
    root = tmp_path / "archive"
    trainer = SnapshotArchive(root, max_snapshots=2, keep_recent=1)  # open before the kill
    for attempt in range(2):
        killed = subprocess.run(
            [sys.executable, "-c", KILLED_PRUNE, str(root)], capture_output=True, timeout=300
        )
        assert killed.returncode == 9, killed.stderr.decode()[-2000:]
        conn = sqlite3.connect(root / "index.sqlite")  # not an archive: opening one sweeps
        pruned = [r[0] for r in conn.execute("SELECT id FROM snapshots WHERE pruned = 1")]
        conn.close()
        left = [sid for sid in pruned if (root / "snapshots" / f"{sid}.safetensors").exists()]
        assert left, "the kill should leave the pruned snapshot's file behind"
        if attempt == 0:
            # A process that had the archive open sweeps them at its next prune.
            trainer.save(make_model(), step=100)
        else:
            # Opening the archive sweeps them too.
            SnapshotArchive(root)
        assert not [sid for sid in left if (root / "snapshots" / f"{sid}.safetensors").exists()]
    listed = {info.id for info in SnapshotArchive(root).snapshots()}
    assert {p.stem for p in Path(root / "snapshots").iterdir()} == listed
