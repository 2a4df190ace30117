"""PSRO as one kind of the pipeline: a tiny real Kuhn PSRO run started through ``runs.start``,
opened by ``RunDir``, ``RunArchive`` and ``runs.resolve``, resumed, its members
measured in the form PSRO plays them; the commands that open it are tested in
``tests/cli/test_psro_command.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import PSRO_TINY

pytest.importorskip("pyspiel")

from sp_wrappers import runs
from sp_wrappers.league.psro import PSRO_STATE, PSROSettings, read_psro
from sp_wrappers.runs.config import TrainError
from sp_wrappers.runs.kinds import config_class, kind_of_json, run_class
from sp_wrappers.runs.psro import PSROConfig, PSRORun
from sp_wrappers.runs.recipes import KUHN_POKER
from sp_wrappers.runs.rundir import RunArchive, RunDir, slug

pytestmark = pytest.mark.xdist_group("kuhn_psro_run")  # one worker builds the shared run


@pytest.fixture
def copy(psro_run, tmp_path) -> Path:
    return shutil.copytree(psro_run, tmp_path / "run")


def test_psro_is_a_kind_of_the_pipeline(psro_run):
    run = RunDir(psro_run)
    assert run.kind() == "psro" and config_class("psro") is PSROConfig
    config = run.config()
    assert isinstance(config, PSROConfig) and isinstance(config.settings, PSROSettings)
    assert run_class(config) is PSRORun and kind_of_json(config.to_json()) == "psro"
    assert PSROConfig.from_json(config.to_json()) == config
    assert config.game == KUHN_POKER and config.settings.steps_per_iteration == 512
    [entry] = config.history  # this call's entry, completed at the end
    assert entry["iterations"] == 2 and entry["seconds"] >= 0 and entry["command"] == "test"
    located = RunArchive.locate(psro_run)
    assert located.archive_path == run.archive_path and isinstance(located.config, PSROConfig)
    assert located.greedy is True and located.game() == (KUHN_POKER, {})
    assert run.psro_state_path == psro_run / PSRO_STATE
    assert RunDir.default_for(config).path == Path("runs") / f"psro-{slug(KUHN_POKER)}"
    # the stored run, resolved to go on; another kind's resume is refused with the fix
    more = runs.resolve(resume=psro_run, overrides={"iterations": 5}, kind="psro")
    assert more.iterations == 5 and more.settings == config.settings
    with pytest.raises(
        TrainError, match="holds a psro run; continue it with sp-wrappers psro `resume`"
    ):
        runs.resolve(resume=psro_run)
    with pytest.raises(TrainError, match="A resumed PSRO run keeps its game and settings"):
        runs.resolve(resume=psro_run, overrides={"meta_solver": "prd"}, kind="psro")


def test_a_new_run_refuses_a_psro_run_directory_and_resume_continues_it(copy):
    config = runs.resolve(KUHN_POKER, {**PSRO_TINY, "iterations": 3}, kind="psro")
    before = copy.joinpath("config.json").read_text()
    with pytest.raises(TrainError, match="already holds a run"):
        runs.start(config, copy, runs.RunOptions())
    assert copy.joinpath("config.json").read_text() == before  # nothing written
    with pytest.raises(TrainError, match="counts iterations, not `timesteps`"):
        runs.start(config, copy, runs.RunOptions(resume=True, timesteps=100))
    first_rows = copy.joinpath("progress.csv").read_text()
    resumed = runs.resolve(resume=copy, overrides={"iterations": 3}, kind="psro")
    result = runs.start(resumed, copy, runs.RunOptions(resume=True))
    assert result.psro.iterations == 3 and len(result.psro.members) == 4
    history = RunDir(copy).config().history
    assert [e["from_iteration"] for e in history] == [0, 2]
    # the first call's rows are kept (a resume overwrote them); the resume's are beside them
    assert copy.joinpath("progress.csv").read_text() == first_rows
    [more] = copy.glob("progress-*.csv")
    assert "psro/exploitability" in more.read_text().splitlines()[0]


def test_the_recipes_train_a_stalled_response_on_and_the_settings_round_trip():
    config = runs.resolve(KUHN_POKER, {"iterations": 2}, kind="psro")
    settings = config.settings
    assert (settings.max_doublings, settings.min_gain, settings.keep_budget) == (3, 0.0, False)
    assert settings.max_steps == 8 * settings.steps_per_iteration
    changed = runs.resolve(
        KUHN_POKER, {"max_doublings": 1, "min_gain": 0.25, "keep_budget": True}, kind="psro"
    )
    again = PSROConfig.from_json(json.loads(json.dumps(changed.to_json())))
    assert again == changed and again.settings.keep_budget and again.settings.min_gain == 0.25


def test_a_run_written_before_doublings_resumes_without_them(copy):
    # config.json and psro.json as the first PSRO release wrote them: no doubling settings, no
    # budget; the run goes on as it was started (responses never trained on)
    config = json.loads((copy / "config.json").read_text())
    state = json.loads((copy / PSRO_STATE).read_text())
    for settings in (config["settings"], state["settings"]):
        for key in ("max_doublings", "min_gain", "keep_budget"):
            del settings[key]
    del state["budget"]
    (copy / "config.json").write_text(json.dumps(config))
    (copy / PSRO_STATE).write_text(json.dumps(state))
    resumed = runs.resolve(resume=copy, overrides={"iterations": 3}, kind="psro")
    assert resumed.settings.max_doublings == 0
    result = runs.start(resumed, copy, runs.RunOptions(resume=True))
    last = result.psro.history[-1]
    assert last["response_steps"] == 512 and last["checked_gains"] == []
    assert read_psro(copy / PSRO_STATE)["budget"] == 512


def test_the_report_of_a_kuhn_run_prints_nothing(psro_run, tmp_path, capsys):
    # Shimmy's OpenSpiel games print their state on render(): the replay's frame printed the
    # deal ("1 0") into every PSRO benchmark's output
    from sp_wrappers.runs.report import write_report

    capsys.readouterr()
    page = write_report(psro_run, out=tmp_path / "report.html")
    assert capsys.readouterr().out == ""
    assert "No replay" in page.read_text()  # no frames: said on the page, not printed
