"""A run made with a custom features extractor works in every command that opens its archive.

``train --hp 'policy_kwargs={"features_extractor_class": "mymod:TinyExtractor"}'`` trained, but
``tournament``, ``watch``, ``report``'s replay and ``train --resume`` of that run, each a new
process, refused its snapshots ("module is not trusted"). A run directory's own ``config.json``
names the classes its user chose, so a command working on that run trusts exactly their modules
(and says so on stderr); ``--trust-module MOD`` trusts more; an archive from elsewhere stays
refused. Each command runs in its own process, as a user runs it, so nothing it imported before
(the module of a class it saved) is trusted by accident.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sp_wrappers.archive.policy_spec import TRUSTED_MODULES
from sp_wrappers.runs.rundir import run_trusted_modules

ROOT = Path(__file__).resolve().parents[2]

EXTRACTOR = """
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor


class TinyExtractor(BaseFeaturesExtractor):
    def __init__(self, observation_space, features_dim=8):
        super().__init__(observation_space, features_dim)
        n = 1
        for size in observation_space.shape:
            n *= size
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(n, features_dim))

    def forward(self, observations):
        return torch.relu(self.net(observations))
"""

HP = 'policy_kwargs={"features_extractor_class": "mymod:TinyExtractor", "net_arch": [8]}'
TRUST_LINE = "trusting module mymod:"


def cli(tmp: Path, *argv: object) -> subprocess.CompletedProcess[str]:
    """``sp-wrappers ARGV`` in a new process that can import ``mymod`` (on PYTHONPATH)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp / "code"), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "sp_wrappers.cli", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp,
    )


@pytest.fixture(scope="module")
def custom_run(tmp_path_factory) -> Path:
    """A tiny train run whose learner has ``mymod:TinyExtractor`` (module ``mymod`` is only
    importable from PYTHONPATH, never imported by the tests' own process)."""
    tmp = tmp_path_factory.mktemp("custom")
    (tmp / "code").mkdir()
    (tmp / "code" / "mymod.py").write_text(EXTRACTOR)
    out = cli(tmp, "train", "tictactoe_v3", "--hp", HP, "--hp", "n_steps=32",
              "--hp", "batch_size=32", "--timesteps", "128", "--n-envs", "2",
              "--save-every", "64", "--eval-games", "2", "--no-progress", "--no-plots",
              "--no-report", "--out", tmp / "run")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "mymod" not in sys.modules
    return tmp


def test_the_modules_a_run_trusts_are_those_its_config_names_and_those_given():
    config = {"hyperparams": {"policy_kwargs": {"features_extractor_class": "mypkg.nets:Tiny"}}}
    assert run_trusted_modules(config) == ("mypkg.nets.",)
    assert run_trusted_modules(config, ["extra"]) == ("mypkg.nets.", "extra.")
    assert run_trusted_modules({"hyperparams": {"policy_kwargs": {"net_arch": [8]}}}) == ()
    assert run_trusted_modules({}, ["mymod."]) == ("mymod.",)


def test_tournament_and_watch_trust_the_modules_the_run_config_names(custom_run):
    run = custom_run / "run"
    out = cli(custom_run, "tournament", run, "--games-per-pair", "2", "--backend", "process",
              "--workers", "1", "--no-progress")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Played" in out.stdout
    lines = [line for line in out.stderr.splitlines() if "trusting" in line]
    assert len(lines) == 1 and TRUST_LINE in lines[0] and "mymod:TinyExtractor" in lines[0]

    out = cli(custom_run, "watch", run, "--a", "latest", "--b", "snapshot-0000")
    assert out.returncode == 0, out.stderr
    assert TRUST_LINE in out.stderr and "snapshot-0000" in out.stdout


def test_report_replays_and_train_resumes_a_run_with_a_custom_extractor(custom_run):
    run = custom_run / "run"
    out = cli(custom_run, "report", run)
    assert out.returncode == 0, out.stderr
    page = (run / "report.html").read_text()
    assert "No replay" not in page and "image/gif" in page

    out = cli(custom_run, "train", "--resume", run, "--timesteps", "64", "--no-progress",
              "--no-plots", "--no-report")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert TRUST_LINE in out.stderr
    assert json.loads((run / "config.json").read_text())["history"][-1]


def test_an_archive_without_its_run_stays_refused_unless_the_module_is_trusted(
    custom_run, tmp_path
):
    elsewhere = tmp_path / "archive"
    shutil.copytree(custom_run / "run" / "archive", elsewhere)  # no config.json beside it
    out = cli(custom_run, "watch", elsewhere, "--a", "latest", "--b", "random", "--game",
              "tictactoe_v3")  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "not trusted" in out.stderr and "--trust-module mymod" in out.stderr
    out = cli(custom_run, "watch", elsewhere, "--a", "latest", "--b", "random", "--game",
              "tictactoe_v3", "--trust-module", "mymod")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "trusting module mymod: --trust-module" in out.stderr


def test_a_league_with_a_custom_extractor_trusts_its_module(custom_run):
    out = cli(custom_run, "league", "tictactoe_v3", "--selfplay", "--save-every", "64",
              "--timesteps", "128", "--chunk-steps", "64", "--n-envs", "2", "--hp", HP,
              "--hp", "n_steps=32", "--hp", "batch_size=32", "--eval-games", "2",
              "--backend", "serial", "--no-progress", "--no-plots", "--no-report",
              "--out", custom_run / "league")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert TRUST_LINE in out.stderr
    state = json.loads((custom_run / "league" / "league.json").read_text())
    assert any(player["snapshots"] for player in state["learners"])


def test_league_from_python_takes_trusted_modules(tmp_path, monkeypatch):
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers.league import League, SelfPlayLeague

    (tmp_path / "mytinynet.py").write_text(EXTRACTOR)
    monkeypatch.syspath_prepend(str(tmp_path))
    import mytinynet

    def make_model(env):
        kwargs = {"features_extractor_class": mytinynet.TinyExtractor}
        return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0,
                           policy_kwargs=kwargs)  # fmt: skip

    league = League(tictactoe_v3.env, SelfPlayLeague(save_every=64), make_model,
                    tmp_path / "league", chunk_steps=64, n_envs=2, seed=0,
                    trusted_modules=["mytinynet."])  # fmt: skip
    assert league.archive.trusted_modules == (*TRUSTED_MODULES, "mytinynet.")
    result = league.run(128, backend="serial")
    assert [len(p.snapshots) for p in result.learners] == [3]


def test_a_team_run_with_a_custom_extractor_resumes(custom_run):
    pytest.importorskip("mpe2")
    run = custom_run / "team"
    common = ["--timesteps", "192", "--n-envs", "1", "--team-change", "96", "--save-every",
              "96", "--eval-games", "0", "--no-progress", "--no-plots", "--no-report"]  # fmt: skip
    out = cli(custom_run, "train", "simple_tag_v3", "--hp", HP, "--hp", "n_steps=32",
              "--hp", "batch_size=32", *common, "--out", run)  # fmt: skip
    assert out.returncode == 0, out.stderr
    out = cli(custom_run, "train", "--resume", run, "--timesteps", "96", "--no-progress",
              "--no-plots", "--no-report")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert TRUST_LINE in out.stderr
