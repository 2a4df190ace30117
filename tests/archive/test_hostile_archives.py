"""Hostile archives: an archive is untrusted input (issue #15).

Every test crafts the hostile input for real (editing index.sqlite with sqlite3, writing files and
links next to the archive) and checks three things: a named ``ArchiveError`` is raised, no code
that the archive names runs (probe classes record their construction; a probe module raises when
imported), and nothing outside the archive directory is read or deleted (the ``outside`` fixture
checks its files are intact after every test).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3
from safetensors.torch import save as save_safetensors
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.policy_spec import TRUSTED_MODULES
from sp_wrappers.archive.store import (
    ArchiveError,
    ArchiveFormatError,
    CorruptSnapshotError,
    PolicySpecError,
    SnapshotArchive,
    UnsafeArchiveError,
)
from sp_wrappers.envs.selfplay_env import SelfPlayEnv

PROBE = textwrap.dedent(
    """
    # Classes whose construction is observable: each appends its name to CONSTRUCTED.
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    CONSTRUCTED = []

    class Probe:
        def __init__(self, *args, **kwargs):
            CONSTRUCTED.append("Probe")

    class ProbeModule(torch.nn.Module):
        def __init__(self, *args, **kwargs):
            CONSTRUCTED.append("ProbeModule")
            super().__init__()

    class ProbeExtractor(BaseFeaturesExtractor):
        def __init__(self, observation_space, features_dim=8):
            CONSTRUCTED.append("ProbeExtractor")
            super().__init__(observation_space, features_dim)
            self.linear = torch.nn.Linear(18, features_dim)

        def forward(self, observations):
            return self.linear(observations.flatten(1))

    class ProbePolicy(MaskableActorCriticPolicy):
        def __init__(self, *args, **kwargs):
            CONSTRUCTED.append("ProbePolicy")
            super().__init__(*args, **kwargs)
    """
)
NEVER_IMPORTED = 'raise RuntimeError("the archive imported a module it must not import")\n'
TRUSTED = (*TRUSTED_MODULES, "sp_hostile_probe.", "sp_hostile_never.")


def make_model() -> MaskablePPO:
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, seed=0, policy_kwargs={"net_arch": [16]}
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A legitimate archive with two snapshots (steps 0 and 10), built once and copied."""
    path = tmp_path_factory.mktemp("template") / "archive"
    archive = SnapshotArchive(path)
    model = make_model()
    archive.save(model, step=0)
    archive.save(model, step=10)
    archive.close()
    return path


@pytest.fixture(scope="module")
def probe_module(tmp_path_factory: pytest.TempPathFactory):
    """The probe modules, importable as ``sp_hostile_probe`` and ``sp_hostile_never``."""
    root = tmp_path_factory.mktemp("probe")
    (root / "sp_hostile_probe.py").write_text(PROBE)
    (root / "sp_hostile_never.py").write_text(NEVER_IMPORTED)
    sys.path.insert(0, str(root))
    import sp_hostile_probe

    yield sp_hostile_probe
    sys.path.remove(str(root))


@pytest.fixture
def probe(probe_module):
    probe_module.CONSTRUCTED.clear()
    return probe_module


@pytest.fixture
def outside(tmp_path: Path):
    """Files next to the archive (and a directory of them) that must survive every test."""
    victims = {
        tmp_path / "victim.txt": b"keep me\n",
        tmp_path / "elsewhere" / "data.bin": b"x" * 64,
    }
    for path, content in victims.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content)
    yield victims
    for path, content in victims.items():
        assert path.exists(), f"{path} outside the archive was deleted"
        assert path.read_bytes() == content, f"{path} outside the archive was modified"


@pytest.fixture
def archive_dir(template: Path, tmp_path: Path, outside) -> Path:
    path = tmp_path / "archive"
    shutil.copytree(template, path)
    return path


def execute(archive_dir: Path, sql: str, params: tuple = ()) -> None:
    conn = sqlite3.connect(archive_dir / "index.sqlite")
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def edit_spec(archive_dir: Path, change, snapshot_id: str = "snapshot-0001") -> None:
    conn = sqlite3.connect(archive_dir / "index.sqlite")
    row = conn.execute("SELECT policy_spec FROM snapshots WHERE id = ?", (snapshot_id,))
    spec = json.loads(row.fetchone()[0])
    change(spec)
    conn.execute(
        "UPDATE snapshots SET policy_spec = ? WHERE id = ?", (json.dumps(spec), snapshot_id)
    )
    conn.commit()
    conn.close()


def replace_weights(archive_dir: Path, payload: bytes, snapshot_id: str = "snapshot-0001") -> None:
    """Write a weights file and record its true sha256, as a forger would."""
    (archive_dir / "snapshots" / f"{snapshot_id}.safetensors").write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    execute(archive_dir, "UPDATE snapshots SET sha256 = ? WHERE id = ?", (digest, snapshot_id))


# -- paths -----------------------------------------------------------------------------------------
def test_a_file_column_pointing_outside_is_refused_and_pruning_deletes_nothing(archive_dir):
    # The report: a row naming ../victim.txt, then two saves with max_snapshots=2.
    execute(archive_dir, "UPDATE snapshots SET file = '../victim.txt' WHERE id = 'snapshot-0000'")
    archive = SnapshotArchive(archive_dir, max_snapshots=2)
    model = make_model()
    for step in (20, 30):
        with pytest.raises(UnsafeArchiveError, match=r"snapshot-0000.*\.\./victim\.txt.*backup"):
            archive.save(model, step=step)
    with pytest.raises(UnsafeArchiveError):
        archive.load_policy("snapshot-0000")


@pytest.mark.parametrize(
    "snapshot_id",
    ["../victim", "snapshot-0000/../../victim", "/etc/passwd", "snapshot-0001", "snapshot-0000 "],
)
def test_snapshot_ids_that_are_not_snapshot_nnnn_of_their_seq_are_refused(archive_dir, snapshot_id):
    execute(
        archive_dir,
        "UPDATE snapshots SET id = ?, file = ? WHERE seq = 1",
        (snapshot_id + "x", f"snapshots/{snapshot_id}x.safetensors"),
    )
    execute(
        archive_dir,
        "UPDATE snapshots SET id = ?, file = ? WHERE seq = 0",
        (snapshot_id, f"snapshots/{snapshot_id}.safetensors"),
    )
    with pytest.raises(UnsafeArchiveError, match="id that is not snapshot-0000"):
        SnapshotArchive(archive_dir, max_snapshots=2).snapshots()


def test_a_huge_seq_is_refused(archive_dir):
    execute(
        archive_dir,
        "UPDATE snapshots SET seq = ?, id = ?, file = ? WHERE seq = 1",
        (2**62, f"snapshot-{2**62}", f"snapshots/snapshot-{2**62}.safetensors"),
    )
    with pytest.raises(ArchiveFormatError, match="seq"):
        SnapshotArchive(archive_dir).snapshots()


def test_a_symlinked_snapshot_file_is_refused_even_when_its_hash_matches(archive_dir, tmp_path):
    file = archive_dir / "snapshots" / "snapshot-0001.safetensors"
    target = tmp_path / "elsewhere" / "weights.safetensors"
    shutil.move(file, target)  # the very bytes the index's sha256 describes
    file.symlink_to(target)
    archive = SnapshotArchive(archive_dir, max_snapshots=2)
    with pytest.raises(UnsafeArchiveError, match="snapshot-0001.safetensors is a symlink"):
        archive.load_policy("snapshot-0001")
    with pytest.raises(UnsafeArchiveError):
        archive.load_state_dict("snapshot-0001")
    # Pruning it removes the link inside the archive, never the file it points to.
    archive.save(make_model(), step=20)
    assert archive.prune() == [] and "snapshot-0001" not in archive
    assert target.exists() and not os.path.lexists(file)


def test_a_fifo_in_place_of_a_snapshot_file_is_refused_without_blocking(archive_dir):
    file = archive_dir / "snapshots" / "snapshot-0001.safetensors"
    file.unlink()
    os.mkfifo(file)
    with pytest.raises(UnsafeArchiveError, match="not a regular file"):
        SnapshotArchive(archive_dir).load_policy("snapshot-0001")


def test_a_symlinked_snapshots_directory_is_refused(archive_dir, tmp_path):
    real = tmp_path / "elsewhere" / "snapshots"
    shutil.move(archive_dir / "snapshots", real)
    (archive_dir / "snapshots").symlink_to(real, target_is_directory=True)
    with pytest.raises(UnsafeArchiveError, match="snapshots is a symlink"):
        SnapshotArchive(archive_dir, max_snapshots=2)
    assert sorted(p.name for p in real.iterdir()) == [
        "snapshot-0000.safetensors",
        "snapshot-0001.safetensors",
    ]


@pytest.mark.parametrize("name", ["index.sqlite", "index.sqlite-wal"])
def test_a_symlinked_index_or_journal_is_refused(archive_dir, tmp_path, name):
    target = tmp_path / "elsewhere" / name
    if (archive_dir / name).exists():
        shutil.move(archive_dir / name, target)
    else:
        target.write_bytes(b"")  # SQLite would write its journal through the link
    (archive_dir / name).symlink_to(target)
    before = target.read_bytes()
    with pytest.raises(UnsafeArchiveError, match=f"{name} is a symlink"):
        SnapshotArchive(archive_dir)
    assert target.read_bytes() == before


@pytest.mark.parametrize(
    "content", [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, b"SQLite format 3\x00" + b"\xff" * 84]
)
def test_an_index_that_is_not_sqlite_is_refused(archive_dir, content):
    (archive_dir / "index.sqlite").write_bytes(content)
    with pytest.raises(ArchiveFormatError, match="not a readable archive index.*restore"):
        SnapshotArchive(archive_dir)


def test_an_index_that_is_a_directory_is_refused(tmp_path):
    (tmp_path / "archive" / "index.sqlite").mkdir(parents=True)
    with pytest.raises(UnsafeArchiveError, match="not a regular file"):
        SnapshotArchive(tmp_path / "archive")


def test_sql_triggers_in_the_index_are_refused(archive_dir):
    execute(
        archive_dir,
        "CREATE TRIGGER rewrite AFTER UPDATE ON snapshots BEGIN "
        "UPDATE snapshots SET file = '../victim.txt'; END",
    )
    with pytest.raises(UnsafeArchiveError, match="trigger rewrite"):
        SnapshotArchive(archive_dir)


# -- rows ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("step", -1, "step"),
        ("step", 2**63 - 1, "step"),
        ("step", "ten", "step"),
        ("wall_time", "yesterday", "wall_time"),
        ("games", -5, "games"),
        ("pruned", 7, "pruned"),
        ("sha256", "../../etc", "sha256"),
        ("tags", '{"a": 1}', "tags"),
        ("tags", "not json", "tags.*not valid JSON"),
        ("ratings", '"high"', "ratings"),
        ("ratings", '{"elo": "high"}', "ratings"),
        ("ratings", '{"elo": NaN}', "ratings"),
        ("ratings", '{"elo": 1e999}', "ratings"),
        ("policy_spec", "[1, 2]", "policy_spec"),
        ("policy_spec", "[" * 100_000 + "]" * 100_000, "policy_spec.*not valid JSON"),
        ("policy_spec", b"\x00binary", "policy_spec.*SQL type bytes"),
    ],
)
def test_rows_with_values_of_the_wrong_type_or_range_are_named(archive_dir, column, value, message):
    execute(archive_dir, f"UPDATE snapshots SET {column} = ? WHERE seq = 1", (value,))
    with pytest.raises(ArchiveFormatError, match=f"snapshot-0001.*{message}.*new archive"):
        SnapshotArchive(archive_dir).snapshots()


@pytest.mark.parametrize(
    ("column", "value"), [("score_a", 5.0), ("score_a", "win"), ("step", -3), ("player_a", b"\x00")]
)
def test_match_rows_with_values_of_the_wrong_type_or_range_are_named(archive_dir, column, value):
    SnapshotArchive(archive_dir).record_match("learner", "snapshot-0000", 1.0, step=1)
    execute(archive_dir, f"UPDATE matches SET {column} = ?", (value,))
    with pytest.raises(ArchiveFormatError, match="match row 1.*score_a must be"):
        SnapshotArchive(archive_dir)


def test_a_format_version_that_is_not_a_number_is_named(archive_dir):
    execute(archive_dir, "UPDATE meta SET value = 'one' WHERE key = 'format_version'")
    with pytest.raises(ArchiveFormatError, match="format version one"):
        SnapshotArchive(archive_dir)


# -- classes and arguments in the policy spec ------------------------------------------------------
def test_the_policy_class_must_be_an_sb3_policy(archive_dir):
    # The report: a trusted module's class that is not a policy got constructed.
    def change(spec):
        spec["policy_class"] = "stable_baselines3.common.vec_env.subproc_vec_env:SubprocVecEnv"

    edit_spec(archive_dir, change)
    with pytest.raises(PolicySpecError, match="snapshot-0001.*not a subclass of.*BasePolicy"):
        SnapshotArchive(archive_dir).load_policy("snapshot-0001")


@pytest.mark.parametrize(
    ("slot", "name", "message"),
    [
        ("policy_class", "sp_hostile_probe:Probe", "not a subclass"),
        ("features_extractor_class", "sp_hostile_probe:ProbeModule", "BaseFeaturesExtractor"),
        ("features_extractor_class", "stable_baselines3.common.vec_env:SubprocVecEnv", "not a"),
        ("activation_fn", "sp_hostile_probe:Probe", "torch.nn.modules.module:Module"),
        ("optimizer_class", "sp_hostile_probe:ProbeModule", "Optimizer"),
        # a class reached through a trusted module's imports is not under its own name
        ("activation_fn", "stable_baselines3.common.vec_env.subproc_vec_env:mp.Process", "under"),
        ("policy_class", "os:system", "not trusted"),
        ("policy_class", "sp_hostile_probe:__class__.__base__", "not an importable class"),
        ("policy_class", "..sp_hostile_probe:Probe", "not an importable class"),
    ],
)
def test_a_class_of_the_wrong_type_in_a_slot_is_refused_unconstructed(
    archive_dir, probe, slot, name, message
):
    def change(spec):
        if slot == "policy_class":
            spec["policy_class"] = name
        else:
            spec["kwargs"][slot] = {"__class__": name}

    edit_spec(archive_dir, change)
    archive = SnapshotArchive(archive_dir, trusted_modules=TRUSTED)
    with pytest.raises(PolicySpecError, match=message):
        archive.load_policy("snapshot-0001")
    assert probe.CONSTRUCTED == []


@pytest.mark.parametrize(
    "place",
    [
        lambda spec, c: spec["kwargs"]["net_arch"].append(c),
        lambda spec, c: spec["kwargs"].__setitem__("features_extractor_kwargs", {"x": c}),
        lambda spec, c: spec["kwargs"].__setitem__("optimizer_kwargs", {"eps": [c]}),
        lambda spec, c: spec["kwargs"].__setitem__("ortho_init", c),
        lambda spec, c: spec["kwargs"]["activation_fn"].__setitem__("extra", c),
    ],
    ids=["net_arch", "extractor_kwargs", "optimizer_kwargs", "scalar", "beside_a_slot"],
)
def test_a_class_outside_the_typed_slots_is_refused_without_importing_it(archive_dir, probe, place):
    edit_spec(archive_dir, lambda spec: place(spec, {"__class__": "sp_hostile_never:Anything"}))
    with pytest.raises(PolicySpecError):
        SnapshotArchive(archive_dir, trusted_modules=TRUSTED).load_policy("snapshot-0001")
    assert "sp_hostile_never" not in sys.modules and probe.CONSTRUCTED == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"evil": 1}, r"\['evil'\] to sp_hostile_probe:ProbePolicy, which takes no such"),
        ({"lr_schedule": 1}, "takes no such"),
        (
            {
                "features_extractor_class": {"__class__": "sp_hostile_probe:ProbeExtractor"},
                "features_extractor_kwargs": {"evil": 1},
            },
            r"\['evil'\] to sp_hostile_probe:ProbeExtractor",
        ),
        ({"optimizer_kwargs": {"evil": 1}}, r"\['evil'\] to torch.optim.adam:Adam"),
    ],
    ids=["policy", "reserved", "extractor", "optimizer"],
)
def test_keyword_arguments_the_constructor_does_not_take_are_refused_unconstructed(
    archive_dir, probe, kwargs, message
):
    def change(spec):
        spec["policy_class"] = "sp_hostile_probe:ProbePolicy"
        spec["kwargs"].update(kwargs)

    edit_spec(archive_dir, change)
    with pytest.raises(PolicySpecError, match=message):
        SnapshotArchive(archive_dir, trusted_modules=TRUSTED).load_policy("snapshot-0001")
    assert probe.CONSTRUCTED == []


def test_kwargs_for_a_default_class_are_checked_against_that_class(archive_dir, probe):
    def change(spec):
        spec["policy_class"] = "sp_hostile_probe:ProbePolicy"  # takes **kwargs itself
        del spec["kwargs"]["optimizer_class"]  # so the optimizer is its parent's default, Adam
        spec["kwargs"]["optimizer_kwargs"] = {"evil": 1}

    edit_spec(archive_dir, change)
    with pytest.raises(PolicySpecError, match=r"\['evil'\] to torch.optim.adam:Adam"):
        SnapshotArchive(archive_dir, trusted_modules=TRUSTED).load_policy("snapshot-0001")
    assert probe.CONSTRUCTED == []


def test_probe_classes_are_constructed_when_the_spec_is_legitimate(tmp_path, probe):
    # The control for the tests above: the probes do record a construction.
    model = MaskablePPO(
        probe.ProbePolicy,
        SelfPlayEnv(tictactoe_v3.env(), learner="random"),
        n_steps=64,
        policy_kwargs={"net_arch": [8], "features_extractor_class": probe.ProbeExtractor},
    )
    archive = SnapshotArchive(tmp_path / "archive", trusted_modules=TRUSTED)
    archive.save(model, step=0)
    probe.CONSTRUCTED.clear()
    assert archive.load_policy("snapshot-0000").policy_id == "snapshot-0000"
    assert sorted(set(probe.CONSTRUCTED)) == ["ProbeExtractor", "ProbePolicy"]
    probe.CONSTRUCTED.clear()
    # The classes this process saved are trusted for that archive only: the same snapshots
    # elsewhere (another archive, as another process would see them) need trusted_modules.
    shutil.copytree(tmp_path / "archive", tmp_path / "copy")
    with pytest.raises(PolicySpecError, match="not trusted.*trusted_modules"):
        SnapshotArchive(tmp_path / "copy").load_policy("snapshot-0000")
    assert probe.CONSTRUCTED == []


# -- sizes -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("kwargs", "net_arch"), [10**6], "between 1 and 65536"),
        (("kwargs", "net_arch"), [-5], "between 1 and 65536"),
        (("kwargs", "net_arch"), [0], "between 1 and 65536"),
        (("kwargs", "net_arch"), [True], "between 1 and 65536"),
        (("kwargs", "net_arch"), ["64"], "between 1 and 65536"),
        (("kwargs", "net_arch"), {"pi": [8], "evil": [8]}, "pi, vf and qf"),
        (("kwargs", "net_arch"), [65536, 65536, 65536], "more than 50000000 parameters"),
        (("kwargs", "ortho_init"), 10**40, "between"),
        (("action_space", "n"), 10**12, "action_space.n"),
        (("action_space", "n"), -3, "action_space.n"),
        (("action_space", "n"), 0, "action_space.n"),
        (("observation_space", "shape"), [10**6, 10**6], "more than 16777216 elements"),
        (("observation_space", "shape"), [-1, 3, 2], "observation_space.shape"),
        (("observation_space", "dtype"), "object", "dtype"),
        (("observation_space", "low"), {"values": [0, 1]}, "lists 2 values for a shape of 18"),
        (("observation_space", "low"), {"fill": "sixty"}, "must be a number"),
        (("observation_space", "type"), "Text", "Unknown space type"),
    ],
)
def test_absurd_or_negative_numbers_in_the_spec_are_refused_before_allocating(
    archive_dir, path, value, message
):
    def change(spec):
        spec[path[0]][path[1]] = value

    edit_spec(archive_dir, change)
    with pytest.raises(PolicySpecError, match=message):
        SnapshotArchive(archive_dir).load_policy("snapshot-0001")


def test_huge_multi_discrete_and_nested_spaces_are_refused(archive_dir):
    edit_spec(
        archive_dir,
        lambda s: s.__setitem__("action_space", {"type": "MultiDiscrete", "nvec": [[-1, 2]]}),
    )
    with pytest.raises(PolicySpecError, match="nvec"):
        SnapshotArchive(archive_dir).load_policy("snapshot-0001")
    nested: dict = {"type": "Discrete", "n": 2}
    for _ in range(40):
        nested = {"type": "Tuple", "spaces": [nested]}
    edit_spec(archive_dir, lambda s: s.__setitem__("action_space", nested))
    with pytest.raises(PolicySpecError, match="deeper than"):
        SnapshotArchive(archive_dir).load_policy("snapshot-0001")


def test_max_parameters_bounds_what_a_spec_may_build(archive_dir):
    with pytest.raises(PolicySpecError, match="raise max_parameters"):
        SnapshotArchive(archive_dir, max_parameters=100).load_policy("snapshot-0001")
    assert SnapshotArchive(archive_dir).load_policy("snapshot-0001").policy_id == "snapshot-0001"


# -- weights files ---------------------------------------------------------------------------------
def weights_of(model: MaskablePPO, snapshot_id: str, aliases: dict | None = None) -> bytes:
    state = {k: v.contiguous() for k, v in model.policy.state_dict().items()}
    metadata = {"format_version": "1", "id": snapshot_id, "aliases": json.dumps(aliases or {})}
    return save_safetensors(state, metadata=metadata)


def test_weights_whose_shapes_do_not_match_the_spec_are_refused_before_loading(archive_dir):
    wider = MaskablePPO(
        "MlpPolicy", SelfPlayEnv(tictactoe_v3.env()), n_steps=64, policy_kwargs={"net_arch": [32]}
    )
    replace_weights(archive_dir, weights_of(wider, "snapshot-0001"))
    archive = SnapshotArchive(archive_dir)
    with pytest.warns(RuntimeWarning, match="snapshot-0001"):
        with pytest.raises(CorruptSnapshotError, match=r"does not hold the tensors.*F32 \[32"):
            archive.load_policy("snapshot-0001")
    assert [info.id for info in archive] == ["snapshot-0000"]  # the sampler draws another


def forge(archive_dir: Path, mutate) -> None:
    """Rewrite snapshot-0001's header with ``mutate(header, payload)`` and re-hash it."""
    file = archive_dir / "snapshots" / "snapshot-0001.safetensors"
    payload = file.read_bytes()
    size = int.from_bytes(payload[:8], "little")
    header = json.loads(payload[8 : 8 + size])
    new_payload = mutate(header, payload[8 + size :])
    replace_weights(archive_dir, new_payload)


def packed(header: dict, data: bytes) -> bytes:
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + data


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda h, d: (2**62).to_bytes(8, "little") + json.dumps(h).encode() + d, "claims"),
        (
            lambda h, d: packed(
                {**h, "__metadata__": {**h["__metadata__"], "aliases": '{"x": "missing"}'}}, d
            ),
            "aliases",
        ),
        (
            lambda h, d: packed(
                {**h, "__metadata__": {**h["__metadata__"], "id": "snapshot-0000"}}, d
            ),
            "names the snap",
        ),
        (lambda h, d: packed(h, d + b"\x00" * 16), "cover"),
        (lambda h, d: packed(h, d) + b"\x00" * 2_000_000, "longer than"),
        (
            lambda h, d: packed({k: v for i, (k, v) in enumerate(h.items()) if i != 1}, d),
            "tensors missing",
        ),
        (lambda h, d: b"\x05\x00", "shorter"),
        (lambda h, d: packed(h, d).replace(b'"F32"', b'"F64"', 1), "offsets that do not fit"),
    ],
    ids=[
        "huge_header_size",
        "alias_to_missing",
        "other_id",
        "gap",
        "oversized",
        "missing",
        "truncated",
        "dtype",
    ],
)
def test_a_weights_file_whose_header_lies_is_refused_before_it_is_parsed(
    archive_dir, mutate, message
):
    forge(archive_dir, mutate)
    with pytest.warns(RuntimeWarning):
        with pytest.raises(CorruptSnapshotError, match=f"snapshot-0001.*{message}"):
            SnapshotArchive(archive_dir).load_policy("snapshot-0001")


def test_every_refusal_is_an_archive_error():
    for error in (ArchiveFormatError, UnsafeArchiveError, CorruptSnapshotError, PolicySpecError):
        assert issubclass(error, ArchiveError)
    assert issubclass(PolicySpecError, ValueError)  # as before: callers catching ValueError


@pytest.mark.parametrize(
    ("algorithm", "policy", "env_id", "policy_kwargs"),
    [
        ("stable_baselines3:PPO", "MlpPolicy", "CartPole-v1", {"net_arch": [8]}),
        ("stable_baselines3:A2C", "MlpPolicy", "CartPole-v1", {"optimizer_kwargs": {"eps": 1e-5}}),
        ("stable_baselines3:DQN", "MlpPolicy", "CartPole-v1", {"net_arch": [8]}),
        ("stable_baselines3:SAC", "MlpPolicy", "Pendulum-v1", {"net_arch": [8], "n_critics": 3}),
        ("stable_baselines3:TD3", "MlpPolicy", "Pendulum-v1", {"net_arch": {"pi": [8], "qf": [4]}}),
        ("sb3_contrib:QRDQN", "MlpPolicy", "CartPole-v1", {"n_quantiles": 5}),
        ("sb3_contrib:TQC", "MlpPolicy", "Pendulum-v1", {"net_arch": [8]}),
        ("sb3_contrib:RecurrentPPO", "MlpLstmPolicy", "CartPole-v1", {"lstm_hidden_size": 8}),
        (
            "stable_baselines3:PPO",
            "CnnPolicy",
            "image",
            {"features_extractor_kwargs": {"features_dim": 8}},
        ),
        ("stable_baselines3:PPO", "MultiInputPolicy", "dict", {"net_arch": [8]}),
    ],
)
def test_legitimate_specs_of_every_sb3_policy_family_still_rebuild(
    algorithm, policy, env_id, policy_kwargs
):
    # The checks must not refuse what SB3 and sb3-contrib write: build, load weights, compare.
    import importlib

    import gymnasium as gym
    import numpy as np
    import torch

    from sp_wrappers.archive.policy_spec import build_policy, policy_spec

    module, name = algorithm.split(":")
    cls = getattr(importlib.import_module(module), name)
    spaces = {
        "image": gym.spaces.Box(0, 255, (36, 36, 3), np.uint8),
        "dict": gym.spaces.Dict({"a": gym.spaces.Box(0, 1, (3,)), "b": gym.spaces.Discrete(3)}),
    }
    env = gym.make("CartPole-v1" if env_id in spaces else env_id)
    if env_id in spaces:  # only the spaces matter: the model is never stepped
        env = gym.wrappers.TransformObservation(env, lambda obs: obs, spaces[env_id])
    model = cls(policy, env, policy_kwargs=policy_kwargs, seed=0)
    rebuilt = build_policy(json.loads(json.dumps(policy_spec(model.policy))))
    rebuilt.load_state_dict(model.policy.state_dict(), strict=True)
    rebuilt_state = rebuilt.state_dict()
    for key, value in model.policy.state_dict().items():
        assert torch.equal(value, rebuilt_state[key]), key
