"""Every command that opens a run, on a tiny real Kuhn PSRO run (``psro_run`` in conftest):
exploitability, play, watch, tournament, ratings, report and exploit take its meta-mixture
(``--snapshot nash``) and measure its members as PSRO plays them."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli import main
from sp_wrappers.cli.play import play_run
from sp_wrappers.evaluation.exploitability import exploitability
from sp_wrappers.games.openspiel_games import kuhn_poker
from sp_wrappers.league.psro import PSRO_STATE, read_psro

pytestmark = pytest.mark.xdist_group("kuhn_psro_run")  # one worker builds the shared run


@pytest.fixture
def copy(psro_run, tmp_path) -> Path:
    return shutil.copytree(psro_run, tmp_path / "run")


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


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
