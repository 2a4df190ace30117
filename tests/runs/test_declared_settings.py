"""Every run setting is declared once (a field's ``metadata``): a new setting is one field, and
the command line, the overrides, resume and the range checks follow with no other edit."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sp_wrappers.cli.app import build_parser
from sp_wrappers.cli.run_options import run_settings
from sp_wrappers.core.settings import TRAIN_KINDS
from sp_wrappers.runs.config import TrainError
from sp_wrappers.runs.resolve import resolve

PACKAGE = Path(__file__).resolve().parents[2] / "sp_wrappers"

#: The one line a new setting is (on RunConfig, before its recorded fields).
NEW_FIELD = """\
    centre_pull: float = setting(
        0.0, help="pull toward the centre", low=0.0, high=1.0, metavar="M", type=float,
        kinds=("single",), fixed=("single",),
    )
"""
ANCHOR = "    history: tuple[Mapping[str, Any], ...] = field(default=(), metadata=WHEN_SET)\n"

CHECKS = """
import json, sys
from pathlib import Path
from sp_wrappers.cli.app import build_parser
from sp_wrappers.cli.common import flag_names
from sp_wrappers.cli.run_options import run_settings
from sp_wrappers.runs.config import TrainError
from sp_wrappers.runs.resolve import resolve

parser = build_parser()
assert "--centre-pull M" in parser.command_parser("train").format_help()
args = parser.parse_args(["train", "tictactoe_v3", "--centre-pull", "0.3"])
overrides, _ = run_settings(args, ("single", "teams"))
config = resolve("tictactoe_v3", overrides)
assert config.centre_pull == 0.3 and config.to_json()["centre_pull"] == 0.3
assert type(config).from_json(config.to_json()) == config
for bad, said in ((2, "`centre_pull` must be between 0 and 1"), ):
    try:
        resolve("tictactoe_v3", {"centre_pull": bad})
    except TrainError as error:
        assert said in str(error) and "--centre-pull" in flag_names(str(error)), error
    else:
        raise AssertionError("no range check")
run = Path(sys.argv[1])
run.mkdir()
(run / "config.json").write_text(json.dumps(config.to_json()))
assert resolve(resume=run, overrides={"window": 3}).centre_pull == 0.3
try:
    resolve(resume=run, overrides={"centre_pull": 0.5})
except TrainError as error:
    assert "`centre_pull` cannot change on `resume`" in str(error), error
else:
    raise AssertionError("a setting fixed on resume changed")
try:
    resolve("simple_tag_v3", {"centre_pull": 0.5})
except TrainError as error:
    assert "`centre_pull` applies to single-learner runs" in str(error), error
else:
    raise AssertionError("a single-learner setting reached a team run")
print("ok")
"""


def test_a_new_setting_is_one_field_that_reaches_the_cli_resume_and_the_checks(tmp_path):
    copy = tmp_path / "pkg" / "sp_wrappers"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    config = copy / "runs" / "config.py"
    text = config.read_text()
    assert text.count(ANCHOR) >= 1
    config.write_text(text.replace(ANCHOR, NEW_FIELD + ANCHOR, 1))  # the one edit
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHECKS), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(copy.parent), "PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.strip().endswith("ok"), result.stderr[-3000:]


def test_every_run_command_takes_device_threads_and_trust_module():
    parser = build_parser()
    for command in ("train", "league", "psro"):
        args = parser.parse_args([command, "g", "--device", "cuda", "--threads", "3",
                                  "--trust-module", "mine"])  # fmt: skip
        kinds = TRAIN_KINDS if command == "train" else (command,)
        _, options = run_settings(args, kinds)
        assert options == {"device": "cuda", "torch_threads": 3, "trusted_modules": ("mine",)}


def test_declared_ranges_and_choices_are_the_checks():
    with pytest.raises(TrainError, match="`latest_ratio` must be between 0 and 1, got 1.5"):
        resolve("tictactoe_v3", {"latest_ratio": 1.5})
    with pytest.raises(TrainError, match="`opponent_draw` must be one of per_env, shared"):
        resolve("tictactoe_v3", {"opponent_draw": "all"})
    with pytest.raises(TrainError, match="`save_every` must be at least 1"):
        resolve("tictactoe_v3", {"save_every": 0})


def test_no_option_of_a_run_command_is_declared_in_two_modules():
    import re

    declared_in: dict[str, set[str]] = {}
    for name in ("train.py", "league.py", "psro.py", "run_options.py", "common.py"):
        module = PACKAGE / "cli" / name
        for flag in re.findall(r"add_argument\(\s*\"(--[a-z-]+)\"", module.read_text()):
            declared_in.setdefault(flag, set()).add(module.name)
    twice = {flag: sorted(where) for flag, where in declared_in.items() if len(where) > 1}
    assert twice == {}
