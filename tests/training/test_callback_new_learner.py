"""A new learner on an archive that another learner filled (the next trial of a hyperparameter
search, a restart with another network) trains against the old snapshots without error."""

from __future__ import annotations

from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayEnv, SnapshotArchive


def learn(path, net_arch: list[int], steps: int = 128) -> MaskablePPO:
    env = SelfPlayEnv(tictactoe_v3.env(), opponent=OpponentSampler(path, latest_ratio=1.0))
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        seed=0,
        policy_kwargs={"net_arch": net_arch},
    )
    model.learn(steps, callback=SelfPlayCallback(path, save_every=64))
    return model


def test_a_learner_with_another_network_saves_its_own_first_snapshot_and_plays_its_latest(
    tmp_path,
):
    path = tmp_path / "archive"
    learn(path, [8])
    first = [(s.id, s.step) for s in SnapshotArchive(path).snapshots()]
    assert first == [("snapshot-0000", 0), ("snapshot-0001", 64), ("snapshot-0002", 128)]

    learn(path, [16])  # latest_ratio=1: every game against this learner's own latest weights
    archive = SnapshotArchive(path)
    second = [(s.id, s.step) for s in archive.snapshots()][3:]
    assert second == [("snapshot-0003", 128), ("snapshot-0004", 192), ("snapshot-0005", 256)]
    shapes = {k: tuple(v.shape) for k, v in archive.load_state_dict("snapshot-0003").items()}
    assert (16,) in shapes.values() and (8,) not in shapes.values()
    assert {m.player_b for m in archive.matches() if m.step > 128} == {"latest"}


def test_a_resumed_learner_with_the_same_network_saves_no_extra_snapshot(tmp_path):
    path = tmp_path / "archive"
    learn(path, [8])
    learn(path, [8])
    steps = [s.step for s in SnapshotArchive(path).snapshots()]
    assert steps == [0, 64, 128, 192, 256]
