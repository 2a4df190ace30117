"""Several processes on one archive: concurrent saves and prunes, readers drawing while snapshots
are pruned under them, and read failures that are re-checked before a snapshot is called bad.

The concurrency test runs real processes (``multiprocessing`` with ``spawn``), each with its own
connection, as training runs, SubprocVecEnv workers and tournaments sharing an archive do.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import textwrap
import traceback
import warnings
from pathlib import Path

import pytest
import torch

from sp_wrappers.archive import reads
from sp_wrappers.archive.index import WalWatch
from sp_wrappers.archive.store import (
    CorruptSnapshotError,
    SnapshotArchive,
    SnapshotPrunedError,
)
from sp_wrappers.opponents.sampler import OpponentSampler

WRITERS, READERS, SAVES_PER_WRITER = 4, 2, 10
MAX_SNAPSHOTS, KEEP_RECENT = 6, 3


def make_model():
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    torch.set_num_threads(1)
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, policy_kwargs={"net_arch": [8]})


def value_of(writer: int, k: int) -> float:
    """The value every weight of writer ``writer``'s ``k``-th snapshot is set to."""
    return float(writer * 1000 + k)


def weights_value(state) -> set[float]:
    return {float(v) for tensor in state.values() for v in torch.unique(tensor.float()).tolist()}


def _writer(root: str, writer: int, start, results) -> None:
    """Save SAVES_PER_WRITER snapshots (each save prunes) whose weights all equal value_of()."""
    try:
        model = make_model()
        archive = SnapshotArchive(root, max_snapshots=MAX_SNAPSHOTS, keep_recent=KEEP_RECENT)
        start.wait()
        saved = []
        for k in range(SAVES_PER_WRITER):
            with torch.no_grad():
                for parameter in model.policy.state_dict().values():
                    parameter.fill_(value_of(writer, k))
            info = archive.save(
                model, step=writer * 1_000_000 + k, tags=[f"value={value_of(writer, k)}"]
            )
            archive.record_match("learner", info.id, 0.5, step=k)
            saved.append((info.id, info.step, info.sha256))
        results.put(("writer", writer, saved, None))
    except BaseException:
        results.put(("writer", writer, [], traceback.format_exc()))


def _reader(root: str, reader: int, start, done, results) -> None:
    """Draw and load opponents until the writers are done; check each one's weights."""
    try:
        torch.set_num_threads(1)
        archive = SnapshotArchive(root)
        sampler = OpponentSampler(archive, window=10, latest_ratio=0.0, seed=reader)
        start.wait()
        loaded, problems = 0, []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            while not done.is_set() or loaded == 0:
                policy = sampler.draw()
                if not policy.policy_id.startswith("snapshot-"):
                    continue
                rows = {i.id: i for i in archive.snapshots(include_pruned=True)}
                tag = rows[policy.policy_id].tags[0]
                found = weights_value(policy.policy.state_dict())
                if found != {float(tag.removeprefix("value="))}:
                    problems.append(f"{policy.policy_id} ({tag}) holds the weights {found}")
                loaded += 1
        problems += [str(w.message) for w in caught if "Skipping snapshot" in str(w.message)]
        results.put(("reader", reader, loaded, "\n".join(problems) or None))
    except BaseException:
        results.put(("reader", reader, 0, traceback.format_exc()))


def test_four_writers_saving_and_pruning_while_two_readers_draw_lose_nothing(tmp_path):
    root = str(tmp_path / "shared")
    SnapshotArchive(root)  # created once, as a training run's callback does first
    context = multiprocessing.get_context("spawn")
    start, done, results = context.Barrier(WRITERS + READERS), context.Event(), context.Queue()
    writers = [
        context.Process(target=_writer, args=(root, w, start, results)) for w in range(WRITERS)
    ]
    readers = [
        context.Process(target=_reader, args=(root, r, start, done, results))
        for r in range(READERS)
    ]
    for process in writers + readers:
        process.start()
    outcomes = []
    for _ in writers:
        outcomes.append(results.get(timeout=300))
    done.set()
    for _ in readers:
        outcomes.append(results.get(timeout=300))
    for process in writers + readers:
        process.join(timeout=60)
    errors = [f"{kind} {n}: {error}" for kind, n, _, error in outcomes if error]
    assert not errors, "\n".join(errors)
    assert all(process.exitcode == 0 for process in writers + readers)

    saved = [entry for kind, _, entries, _ in outcomes if kind == "writer" for entry in entries]
    assert all(loaded > 0 for kind, _, loaded, _ in outcomes if kind == "reader")
    total = WRITERS * SAVES_PER_WRITER
    assert len({sid for sid, _, _ in saved}) == len(saved) == total  # each save its own snapshot

    archive = SnapshotArchive(root)
    rows = archive.snapshots(include_pruned=True)
    # Every save has its row, numbered without gaps, with the hash its writer computed.
    assert [row.seq for row in rows] == list(range(total))
    assert {(row.id, row.step, row.sha256) for row in rows} == set(saved)
    # Only pruning removed snapshots, and by its rule: the first and the newest kept.
    listed = archive.snapshots()
    assert len(listed) == MAX_SNAPSHOTS
    assert listed[0].seq == 0
    assert [row.seq for row in listed[-KEEP_RECENT:]] == list(range(total - KEEP_RECENT, total))
    files = sorted(path.name for path in (Path(root) / "snapshots").iterdir())
    assert files == sorted(f"{row.id}.safetensors" for row in listed)
    # Every listed row loads, and its weights are the ones its writer saved under it.
    for row in listed:
        writer, k = divmod(row.step, 1_000_000)
        assert weights_value(archive.load_state_dict(row)) == {value_of(writer, k)}
        assert row.tags == (f"value={value_of(writer, k)}",)
    assert archive.n_matches() == total


# -- read failures are re-checked ----------------------------------------------------------------


def _archive_with(path: Path, n: int) -> SnapshotArchive:
    archive = SnapshotArchive(path)
    model = make_model()
    for step in range(n):
        archive.save(model, step=step * 10)
    return archive


PRUNE_ELSEWHERE = textwrap.dedent(
    """
    import sys
    from sp_wrappers.archive.store import SnapshotArchive
    print(SnapshotArchive(sys.argv[1], max_snapshots=2, keep_recent=1).prune())
    """
)


def test_snapshot_pruned_by_another_process_mid_load_is_drawn_again_without_a_warning(
    tmp_path, monkeypatch
):
    archive = _archive_with(tmp_path / "a", 4)
    sampler = OpponentSampler(archive, window=None, latest_ratio=0.0, seed=0)
    real_read = reads.read_snapshot_file
    pruned: list[str] = []

    def read_after_a_prune_elsewhere(directory, name, limit):
        # The race, made certain: another process prunes after this one read the listing.
        if not pruned:
            pruned.extend(eval(_elsewhere(PRUNE_ELSEWHERE, archive)))  # the ids it printed
        return real_read(directory, name, limit)

    monkeypatch.setattr(reads, "read_snapshot_file", read_after_a_prune_elsewhere)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "restore the file" warning
        policies = [sampler.draw() for _ in range(8)]
    assert sorted(pruned) == ["snapshot-0001", "snapshot-0002"]
    assert {p.policy_id for p in policies} <= {"snapshot-0000", "snapshot-0003"}
    assert [info.id for info in archive] == ["snapshot-0000", "snapshot-0003"]
    with pytest.raises(SnapshotPrunedError, match="was pruned"):
        archive.load_state_dict("snapshot-0001")


SAVE_ELSEWHERE = textwrap.dedent(
    """
    import sys
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO
    from sp_wrappers.archive.store import SnapshotArchive
    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, policy_kwargs={"net_arch": [8]})
    print(SnapshotArchive(sys.argv[1]).save(model, step=1000).id)
    """
)


def _elsewhere(script: str, archive: SnapshotArchive) -> str:
    """Run ``script`` on the archive in another process; what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(archive.path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _count_freshness_queries(archive: SnapshotArchive) -> list[str]:
    """The ``PRAGMA data_version`` queries the archive's connection runs from now on."""
    asked: list[str] = []
    archive._index.connect().set_trace_callback(
        lambda sql: asked.append(sql) if "data_version" in sql else None
    )
    return asked


def test_a_snapshot_saved_by_another_process_after_the_listing_was_cached_is_drawn(
    tmp_path, monkeypatch
):
    # The WAL file's signature is trusted at once and kept an hour: only its change says
    # that another process committed.
    monkeypatch.setattr(WalWatch, "SETTLE_NS", 0)
    monkeypatch.setattr(WalWatch, "RECHECK_NS", 3600 * 10**9)
    archive = _archive_with(tmp_path / "a", 2)
    sampler = OpponentSampler(archive, window=None, latest_ratio=0.0, seed=0)
    assert sampler.eligible_ids() == ["snapshot-0000", "snapshot-0001"]
    asked = _count_freshness_queries(archive)
    assert {sampler.draw().policy_id for _ in range(50)} == {"snapshot-0000", "snapshot-0001"}
    assert asked == []  # fifty draws from the kept listing, no query
    assert _elsewhere(SAVE_ELSEWHERE, archive) == "snapshot-0002"
    drawn = [sampler.draw().policy_id for _ in range(60)]
    assert "snapshot-0002" in drawn
    assert sampler.eligible_ids() == ["snapshot-0000", "snapshot-0001", "snapshot-0002"]
    assert len(asked) == 1  # the WAL changed: asked once, then the new listing is kept


@pytest.mark.parametrize(
    ("settle_ns", "recheck_ns"),
    [(3600 * 10**9, 3600 * 10**9), (0, 0)],
    ids=["the-wal-changed-too-recently", "the-answer-is-too-old"],
)
def test_the_archive_asks_sqlite_when_the_wal_signature_cannot_be_trusted(
    tmp_path, monkeypatch, settle_ns, recheck_ns
):
    # A write within the same coarse timestamp as the last stat would leave the signature as it
    # was, and a writer may publish its commit after writing it: then SQLite is asked each time.
    monkeypatch.setattr(WalWatch, "SETTLE_NS", settle_ns)
    monkeypatch.setattr(WalWatch, "RECHECK_NS", recheck_ns)
    archive = _archive_with(tmp_path / "a", 2)
    sampler = OpponentSampler(archive, window=None, latest_ratio=0.0, seed=0)
    sampler.draw()
    asked = _count_freshness_queries(archive)
    for _ in range(5):
        sampler.draw()
    assert len(asked) >= 5  # each draw asks (a first load of a snapshot asks again)


def test_a_snapshot_pruned_elsewhere_under_a_kept_listing_is_drawn_again(tmp_path, monkeypatch):
    """As the test above with the WAL's signature trusted: the load that finds the snapshot
    pruned drops the listing, so the draw is made again from the index as it is."""
    monkeypatch.setattr(WalWatch, "SETTLE_NS", 0)
    monkeypatch.setattr(WalWatch, "RECHECK_NS", 3600 * 10**9)
    archive = _archive_with(tmp_path / "a", 4)
    sampler = OpponentSampler(archive, window=None, latest_ratio=0.0, seed=0)
    assert len(sampler.eligible_ids()) == 4
    real_read = reads.read_snapshot_file
    pruned: list[str] = []

    def read_after_a_prune_elsewhere(directory, name, limit):
        if not pruned:
            pruned.extend(eval(_elsewhere(PRUNE_ELSEWHERE, archive)))
        return real_read(directory, name, limit)

    monkeypatch.setattr(reads, "read_snapshot_file", read_after_a_prune_elsewhere)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        policies = [sampler.draw() for _ in range(8)]
    assert sorted(pruned) == ["snapshot-0001", "snapshot-0002"]
    assert {p.policy_id for p in policies} <= {"snapshot-0000", "snapshot-0003"}
    assert sampler.eligible_ids() == ["snapshot-0000", "snapshot-0003"]


def test_a_read_that_fails_once_is_read_again_before_the_snapshot_is_called_bad(
    tmp_path, monkeypatch
):
    archive = _archive_with(tmp_path / "a", 2)
    real_read = reads.read_snapshot_file
    failures = []

    def fail_once(directory, name, limit):
        if not failures:
            failures.append(name)
            raise OSError(5, "Input/output error (a moment's failure)")
        return real_read(directory, name, limit)

    monkeypatch.setattr(reads, "read_snapshot_file", fail_once)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        archive.load_policy("snapshot-0001")
    assert failures == ["snapshot-0001.safetensors"]
    assert [info.id for info in archive] == ["snapshot-0000", "snapshot-0001"]


def test_a_restored_snapshot_file_is_listed_again_without_reopening_the_archive(tmp_path):
    archive = _archive_with(tmp_path / "a", 2)
    file = archive.path / "snapshots" / "snapshot-0001.safetensors"
    backup = tmp_path / "backup.safetensors"
    shutil.move(file, backup)
    with pytest.warns(RuntimeWarning, match="restore the file"):
        with pytest.raises(CorruptSnapshotError, match="cannot be read"):
            archive.load_policy("snapshot-0001")
    assert [info.id for info in archive] == ["snapshot-0000"]
    shutil.move(backup, file)
    assert [info.id for info in archive] == ["snapshot-0000", "snapshot-0001"]
    assert archive.load_policy("snapshot-0001").policy_id == "snapshot-0001"


# -- one archive per run: {run} --------------------------------------------------------------------


def _train_one_run(template: str, seed: int, results: dict) -> None:
    """What one Optuna trial thread of RL Zoo does: envs, then the callback, then learn."""
    import gymnasium as gym
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    from sp_wrappers.training.callbacks import SelfPlayCallback

    env = make_vec_env(
        lambda: gym.make("sp_wrappers/TicTacToe-v0", archive=template, latest_ratio=0.5),
        n_envs=2,
    )
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=64,
        seed=seed,
        policy_kwargs={"net_arch": [8 + seed]},
    )
    callback = SelfPlayCallback(template, save_every=32)
    model.learn(64, callback=callback)
    results[seed] = callback.archive.path
    env.close()


def test_archive_paths_with_run_give_each_thread_s_training_run_its_own_archive(tmp_path):
    import threading

    torch.set_num_threads(1)
    template = str(tmp_path / "study" / "archive-{run}")
    results: dict[int, Path] = {}
    threads = [threading.Thread(target=_train_one_run, args=(template, s, results)) for s in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(p.name for p in results.values()) == ["archive-0000", "archive-0001"]
    for seed, path in results.items():
        archive = SnapshotArchive(path, create=False)
        widths = {
            archive.load_state_dict(s)["mlp_extractor.policy_net.0.bias"].shape[0] for s in archive
        }
        assert widths == {8 + seed}  # only this run's network
        opponents = {m.player_b for m in archive.matches()}
        assert opponents <= {s.id for s in archive} | {"latest", "random"}
    # A run after those, in this thread, gets the next number.
    _train_one_run(template, 2, results)
    assert results[2].name == "archive-0002"
