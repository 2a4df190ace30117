"""Pruning by rating (``prune_by="rating"``): the archive keeps the first snapshot, the newest and
the strongest, ranked by the lower end of their skill interval so that one lucky game keeps none;
as safe as the spread under concurrent writers (real processes) and a prune killed mid-way."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import pytest
import torch

from sp_wrappers.archive.store import PRUNE_Z, SnapshotArchive, prune_rating

WRITERS, SAVES_PER_WRITER = 4, 8
MAX_SNAPSHOTS, KEEP_RECENT = 6, 3
STRONG = {"skill": 2000.0, "skill_sigma": 10.0}  # writer 0's snapshots: proven strong
WEAK = {"skill": 1000.0, "skill_sigma": 10.0}
LUCKY = {"skill": 2100.0, "skill_sigma": 400.0}  # the best guess, from one or two games


def make_model():
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers import SelfPlayEnv

    torch.set_num_threads(1)
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, policy_kwargs={"net_arch": [8]})


def ratings_of(writer: int, k: int) -> dict[str, float]:
    if writer == 0:
        return STRONG
    return LUCKY if (writer, k) == (1, 5) else WEAK


def test_the_rating_pruning_keeps_the_first_the_newest_and_the_proven_strong(tmp_path):
    archive = SnapshotArchive(tmp_path / "a", max_snapshots=5, keep_recent=2, prune_by="rating")
    model = make_model()
    plan = [WEAK, STRONG, LUCKY, WEAK, {"skill": 1900.0, "skill_sigma": 20.0}, {}, WEAK, WEAK]
    saved = [archive.save(model, step=100 * i, ratings=r).id for i, r in enumerate(plan)]
    kept = [info.id for info in archive.snapshots()]
    # the first; the two newest; of the rest the two with the highest lower bound: STRONG
    # (1980) and the 1900 +- 20 one (1861), not LUCKY (2100 - 1.96 * 400 = 1316) nor unrated
    assert kept == [saved[0], saved[1], saved[4], saved[6], saved[7]]
    assert prune_rating(LUCKY) == pytest.approx(2100 - PRUNE_Z * 400)
    # the spread, the default, keeps the evenly spread ones whatever their rating
    spread = SnapshotArchive(tmp_path / "b", max_snapshots=5, keep_recent=2)
    ids = [spread.save(model, step=100 * i, ratings=r).id for i, r in enumerate(plan)]
    assert [info.id for info in spread.snapshots()] != kept and ids[1] not in spread


def test_unknown_prune_policy_is_refused_naming_the_choices(tmp_path):
    with pytest.raises(ValueError, match=r"prune_by must be one of \['spread', 'rating'\]"):
        SnapshotArchive(tmp_path, max_snapshots=4, prune_by="elo")


def _writer(root: str, writer: int, start, results) -> None:
    """Save SAVES_PER_WRITER snapshots rated at their save (each save prunes by rating)."""
    try:
        model = make_model()
        archive = SnapshotArchive(
            root, max_snapshots=MAX_SNAPSHOTS, keep_recent=KEEP_RECENT, prune_by="rating"
        )
        start.wait()
        saved = []
        for k in range(SAVES_PER_WRITER):
            info = archive.save(model, step=writer * 1_000_000 + k, ratings=ratings_of(writer, k))
            archive.record_match("learner", info.id, 0.5, step=k)
            saved.append(info.id)
        results.put((writer, saved, None))
    except BaseException:
        results.put((writer, [], traceback.format_exc()))


def test_four_writers_pruning_by_rating_at_once_keep_the_strong_and_lose_nothing(tmp_path):
    root = str(tmp_path / "shared")
    SnapshotArchive(root)
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(WRITERS), context.Queue()
    writers = [
        context.Process(target=_writer, args=(root, w, start, results)) for w in range(WRITERS)
    ]
    for process in writers:
        process.start()
    outcomes = [results.get(timeout=300) for _ in writers]
    for process in writers:
        process.join(timeout=60)
    errors = [f"writer {n}: {error}" for n, _, error in outcomes if error]
    assert not errors, "\n".join(errors)
    total = WRITERS * SAVES_PER_WRITER
    archive = SnapshotArchive(root)
    rows = archive.snapshots(include_pruned=True)
    assert [row.seq for row in rows] == list(range(total))  # every save has its row
    assert archive.n_matches() == total  # and every game
    listed = archive.snapshots()
    assert len(listed) == MAX_SNAPSHOTS  # two writers pruning at once never dropped too many
    assert listed[0].seq == 0
    assert [row.seq for row in listed[-KEEP_RECENT:]] == list(range(total - KEEP_RECENT, total))
    # between them, the proven strong: writer 0's, never the lucky one nor a weak one
    assert all(row.step // 1_000_000 == 0 for row in listed[1:-KEEP_RECENT]), listed
    assert all(row.ratings == ratings_of(*divmod(row.step, 1_000_000)) for row in rows)
    files = sorted(path.name for path in (Path(root) / "snapshots").iterdir())
    assert files == sorted(f"{row.id}.safetensors" for row in listed)


KILLED_PRUNE = textwrap.dedent(
    """
    import os, sys
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO
    from sp_wrappers.archive import store
    from sp_wrappers.envs.selfplay_env import SelfPlayEnv

    archive = store.SnapshotArchive(sys.argv[1], max_snapshots=3, keep_recent=1,
                                    prune_by="rating")
    model = MaskablePPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env()), n_steps=64, batch_size=64,
                        policy_kwargs={"net_arch": [16]})
    for step, skill in ((0, 900.0), (10, 1500.0), (20, 1000.0)):
        archive.save(model, step=step, ratings={"skill": skill, "skill_sigma": 10.0})
    # Killed once the prune has committed, before it deletes any file.
    store.unlink_all = lambda *args, **kwargs: os._exit(9)
    archive.save(model, step=30, ratings={"skill": 800.0, "skill_sigma": 10.0})
    """
)


def test_a_rating_prune_killed_after_its_commit_leaves_no_file_behind_once_reopened(tmp_path):
    root = tmp_path / "archive"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_PRUNE, str(root)], capture_output=True, timeout=300
    )
    assert killed.returncode == 9, killed.stderr.decode()[-2000:]
    assert (root / "snapshots" / "snapshot-0002.safetensors").exists()  # left by the kill
    archive = SnapshotArchive(root)  # opening sweeps it
    assert [info.id for info in archive.snapshots()] == [
        "snapshot-0000",
        "snapshot-0001",
        "snapshot-0003",
    ]  # the first, the strongest (1500 over 1000), the newest
    assert {p.stem for p in (root / "snapshots").iterdir()} == {
        info.id for info in archive.snapshots()
    }


def test_train_takes_prune_by_and_refuses_an_unknown_policy_naming_the_flag(tmp_path, capsys):
    from sp_wrappers.cli import main
    from sp_wrappers.runs.config import TrainError
    from sp_wrappers.runs.resolve import resolve_run

    config = resolve_run("tictactoe_v3", {"max_snapshots": 4, "prune_by": "rating"})
    assert config.prune_by == "rating"
    assert resolve_run("tictactoe_v3").prune_by is None  # the spread, and not in config.json
    with pytest.raises(TrainError, match="`prune_by` must be one of spread, rating"):
        resolve_run("tictactoe_v3", {"prune_by": "elo"})
    with pytest.raises(SystemExit):
        main(["train", "tictactoe_v3", "--prune-by", "elo"])
    assert "--prune-by: invalid choice: 'elo'" in capsys.readouterr().err
