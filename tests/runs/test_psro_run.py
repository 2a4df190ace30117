"""PSRO as one kind of the pipeline: a tiny real Kuhn PSRO run started through ``runs.start``,
opened by ``RunDir``, ``RunArchive`` and ``runs.resolve``, and every command that opens a run
working on it, its members measured in the form PSRO plays them."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

from sp_wrappers import runs
from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli import main
from sp_wrappers.cli.play import play_run
from sp_wrappers.evaluation.exploitability import exploitability
from sp_wrappers.games.openspiel_games import kuhn_poker
from sp_wrappers.league.psro import PSRO_STATE, PSROSettings, read_psro
from sp_wrappers.runs.config import TrainError
from sp_wrappers.runs.kinds import config_class, kind_of_json, run_class
from sp_wrappers.runs.psro import PSROConfig, PSRORun, PSRORunResult
from sp_wrappers.runs.recipes import KUHN_POKER
from sp_wrappers.runs.rundir import RunArchive, RunDir, slug

TINY = {
    "steps_per_iteration": 512,
    "n_envs": 2,
    "hp": {"n_steps": 128, "batch_size": 64, "n_epochs": 2},
}


@pytest.fixture(scope="module")
def psro_run(tmp_path_factory) -> Path:
    """A Kuhn PSRO run of two iterations (three greedy members), started through the pipeline."""
    path = tmp_path_factory.mktemp("psro") / "kuhn"
    config = runs.resolve(KUHN_POKER, {**TINY, "iterations": 2}, kind="psro")
    lines: list[str] = []
    options = runs.RunOptions(report=lines.append, command="test")
    result = runs.start(config, path, options)
    assert isinstance(result, PSRORunResult) and result.psro.iterations == 2
    assert len(lines) == 3 and "exploitability" in lines[-1]
    assert "least exploitable" in result.summary()
    return path


@pytest.fixture
def copy(psro_run, tmp_path) -> Path:
    return shutil.copytree(psro_run, tmp_path / "run")


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


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
    config = runs.resolve(KUHN_POKER, {**TINY, "iterations": 3}, kind="psro")
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


def test_exploitability_measures_members_and_mixture_as_psro_plays_them(psro_run, capsys):
    state = read_psro(psro_run / PSRO_STATE)
    last = state["iterations"][-1]
    status, out, err = cli(capsys, "exploitability", psro_run, "--json")
    assert status == 0, err
    data = json.loads(out)
    # PSRO's members are greedy (its default): each is measured as PSRO plays it, not by its
    # network's probabilities
    assert data["deterministic"] is True
    with SnapshotArchive(psro_run / "archive", create=False) as archive:
        assert list(data["snapshots"]) == state["members"]
        for sid, report in data["snapshots"].items():
            greedy = exploitability(archive.load_policy(sid, deterministic=True), kuhn_poker())
            assert report["exploitability"] == pytest.approx(greedy.exploitability, abs=1e-9)
    # the Nash mixture is the meta-mixture PSRO stored, and its figure is PSRO's own
    weights = {sid: w for sid, w in last["weights"].items() if w > 0}
    assert data["nash_mixture"]["weights"] == pytest.approx(weights)
    assert data["nash_mixture"]["source"] == "psro"
    assert data["nash_mixture"]["exploitability"] == pytest.approx(last["exploitability"], abs=1e-9)
    status, out, err = cli(capsys, "exploitability", psro_run, "--snapshot", "nash")
    assert status == 0, err
    assert "greedy play" in out and "PSRO's meta-mixture, as the run stored it" in out
    assert f"exploitability {last['exploitability']:.4f}" in out
    # --play sample still measures the networks' probabilities when asked
    status, out, err = cli(capsys, "exploitability", psro_run, "--json", "--play", "sample")
    assert status == 0 and json.loads(out)["deterministic"] is False


def test_play_watch_and_tournament_take_the_meta_mixture(copy, capsys):
    out = io.StringIO()
    outcome = play_run(
        str(copy), snapshot="nash", seat="0", seed=0, input_stream=io.StringIO("pass\n" * 4),
        output_stream=out,
    )  # fmt: skip
    assert outcome.finished, out.getvalue()
    status, text, err = cli(capsys, "watch", copy, "--a", "nash", "--b", "random")
    assert status == 0, err
    assert "nash-mixture" in text
    status, text, err = cli(
        capsys, "tournament", copy, "--snapshots", "nash", "latest", "--games-per-pair", "4",
        "--backend", "serial", "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    assert "nash-mixture" in text
    status, text, err = cli(capsys, "ratings", copy)
    assert status == 0, err
    assert "snapshot-" in text


def test_report_and_exploit_open_a_psro_run(copy, capsys):
    status, out, err = cli(capsys, "report", copy)
    assert status == 0, err
    assert "<h2>PSRO</h2>" in (copy / "report.html").read_text()
    status, out, err = cli(
        capsys, "exploit", copy, "--snapshot", "nash", "--steps", "256", "--evaluations", "1",
        "--min-games", "20",
    )  # fmt: skip
    assert status == 0, err
    [result] = json.loads((copy / "exploit" / "exploit.json").read_text())["results"]
    assert result["target"].startswith("nash-mixture") and result["deterministic_target"] is True
    stored = read_psro(copy / PSRO_STATE)["iterations"][-1]["weights"]
    assert result["target_weights"] == pytest.approx({k: w for k, w in stored.items() if w > 0})


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
