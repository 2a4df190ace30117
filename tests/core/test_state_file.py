"""``core/state_file``: one version key, one reader (0.2's version key still read), one writer
(atomic, the version first), one error naming the file, the field and the fix."""

from __future__ import annotations

import json
import math

import pytest

from sp_wrappers.core.errors import SpWrappersError
from sp_wrappers.core.state_file import (
    VERSION_KEY,
    Bool,
    Int,
    List,
    Map,
    Num,
    Obj,
    Optional,
    SnapshotId,
    StateFileError,
    StateFormat,
    Str,
)


def _weights_sum_to_one_at_most(data, refuse) -> None:
    if sum(data["weights"].values()) > 1 + 1e-9:
        raise refuse("weights", "sum past 1")


NOTES = StateFormat(
    "notes.json",
    2,
    Obj(
        {"step": Int(min=0), "weights": Map(Num(min=0, max=1), key=SnapshotId())},
        optional={"best": Optional(SnapshotId(also=("latest",))), "done": Bool()},
    ),
    fix="delete notes.json to start again",
    checks=(_weights_sum_to_one_at_most,),
)


def _write(tmp_path, data) -> object:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(data))
    return path


def test_the_writer_puts_the_version_first_under_one_key_and_the_reader_reads_it_back(tmp_path):
    path = tmp_path / "notes.json"
    NOTES.write(path, {"format": 2, "step": 3, "weights": {"snapshot-0001": 1.0}})
    text = path.read_text()
    assert text.lstrip("{\n ").startswith(f'"{VERSION_KEY}": 2') and '"format"' not in text
    assert NOTES.read(path, snapshots=["snapshot-0001"])["step"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.json"]  # no temporary left


def test_a_0_2_file_with_its_format_key_is_read(tmp_path):
    path = _write(tmp_path, {"format": 2, "step": 0, "weights": {}})
    assert NOTES.read(path)[VERSION_KEY] == 2


@pytest.mark.parametrize(
    "data, fragment",
    [
        ({VERSION_KEY: 3, "step": 0, "weights": {}}, "has format_version 3"),
        ({VERSION_KEY: True, "step": 0, "weights": {}}, "has format_version True"),
        ({"step": 0, "weights": {}}, "has format_version None"),
        ([1, 2], "holds list"),
        ({VERSION_KEY: 2, "weights": {}}, "field step is missing"),
        ({VERSION_KEY: 2, "step": "NaN-ish", "weights": {}}, "field step must be an integer >= 0"),
        ({VERSION_KEY: 2, "step": True, "weights": {}}, "field step must be an integer"),
        ({VERSION_KEY: 2, "step": -1, "weights": {}}, "got -1"),
        ({VERSION_KEY: 2, "step": 0, "weights": {"snapshot-0001": -5}}, 'weights["snapshot-0001"]'),
        (
            {VERSION_KEY: 2, "step": 0, "weights": {"../../tmp/evil": 1}},
            '["../../tmp/evil"] (a key)',
        ),
        ({VERSION_KEY: 2, "step": 0, "weights": {}, "best": "snapshot-0099"}, "not a snapshot of"),
        ({VERSION_KEY: 2, "step": 0, "weights": {}, "done": "yes"}, "field done must be true"),
        (
            {VERSION_KEY: 2, "step": 0, "weights": {"snapshot-0001": 0.7, "snapshot-0002": 0.7}},
            "sum past 1",
        ),
    ],
)
def test_a_file_its_format_refuses_is_one_line_naming_the_file_field_and_fix(
    tmp_path, data, fragment
):
    path = _write(tmp_path, data)
    with pytest.raises(StateFileError) as error:
        NOTES.read(path, snapshots=["snapshot-0001", "snapshot-0002"])
    message = str(error.value)
    assert isinstance(error.value, SpWrappersError) and isinstance(error.value, ValueError)
    assert message.startswith(f"{path}: ") and fragment in message, message
    assert message.endswith("delete notes.json to start again.") and "\n" not in message
    assert error.value.path == path


def test_latest_stands_for_a_snapshot_where_declared_and_nan_only_where_allowed(tmp_path):
    path = _write(tmp_path, {VERSION_KEY: 2, "step": 0, "weights": {}, "best": "latest"})
    assert NOTES.read(path, snapshots=[])["best"] == "latest"
    assert "finite" in Num().describe() and "finite" not in Num(finite=False).describe()
    with pytest.raises(StateFileError, match="a finite number"):
        NOTES.read(
            _write(tmp_path, {VERSION_KEY: 2, "step": 0, "weights": {"snapshot-0001": math.nan}})
        )
    assert List(Str(), max_length=1).describe() == "a list of a string"


def test_an_unreadable_file_names_the_fix(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"format_version": 2, "step"')
    with pytest.raises(StateFileError, match=r"notes.json: cannot read the notes.json .*; delete"):
        NOTES.read(path)
    with pytest.raises(StateFileError, match="cannot read"):
        NOTES.read(tmp_path / "missing.json")
