"""The run report: ``sp-wrappers report RUN_DIR`` writes one self-contained page, which a real
browser (headless Chromium, when installed) opens with every image loaded and no console error."""

from __future__ import annotations

import base64
import html
import io
import json
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import headless_chromium, needs_browser, start_tiny_run
from PIL import Image

from sp_wrappers.runs.report import write_report

SECTIONS = (
    "Elo over learner steps",
    "Bradley-Terry ratings (95% intervals)",
    "Payoff matrix",
    "Strength against the reference players",
    "The archive",
    "Replay: the latest snapshot against the best earlier one",
    "Configuration (config.json)",
)


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    """A tiny real run: 256 steps of MaskablePPO on tic-tac-toe, five snapshots, evaluation
    games against random and minimax (``runs.start``, about two seconds)."""
    return start_tiny_run(tmp_path_factory.mktemp("report") / "run")


class _Page(HTMLParser):
    """Every tag and attribute of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def report(trained_run) -> Path:
    return write_report(trained_run)


def test_the_report_is_one_self_contained_page(report):
    text = report.read_text(encoding="utf-8")
    assert "One-move tactics" not in text  # the run measured no strength curve
    page = _parse(report)
    assert not [tag for tag, _ in page.tags if tag in ("script", "link", "iframe", "object")]
    for tag, attrs in page.tags:
        for name in ("src", "href", "srcset", "poster", "data"):
            value = attrs.get(name, "")
            assert not value or value.startswith("data:"), (tag, name, value[:80])
    assert "http://" not in text and "https://" not in text and "url(" not in text
    csp = [a["content"] for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy"]
    assert csp == ["default-src 'none'; img-src data:; style-src 'unsafe-inline'"]
    for title in SECTIONS:
        assert f"<h2>{title}</h2>" in text
    images = [attrs for tag, attrs in page.tags if tag == "img"]
    assert [a["src"].split(";")[0] for a in images] == ["data:image/png"] * 3 + ["data:image/gif"]
    for attrs in images:  # every embedded image decodes
        with Image.open(io.BytesIO(base64.b64decode(attrs["src"].split(",", 1)[1]))) as image:
            assert image.width > 0 and image.height > 0
    assert "vs minimax" in text and "maskable_ppo" in text and "matches recorded" in text


def test_missing_matplotlib_and_imageio_leave_notes_not_a_broken_page(
    trained_run, monkeypatch, tmp_path
):
    loaded = [name for name in sys.modules if name.split(".")[0] in ("matplotlib", "imageio")]
    for name in {"matplotlib", "imageio", *loaded}:  # every import of them now fails
        monkeypatch.setitem(sys.modules, name, None)
    text = html.unescape(write_report(trained_run, out=tmp_path / "report.html").read_text())
    assert 'pip install "sp-wrappers[plots]"' in text and 'pip install "sp-wrappers[video]"' in text
    assert "<img" not in text
    for title in SECTIONS:
        assert f"<h2>{title}</h2>" in text


def test_a_person_is_listed_with_the_players_not_the_reference_players(tmp_path):
    from pettingzoo.classic import tictactoe_v3

    from sp_wrappers import PerfectTicTacToePolicy, RandomPolicy, SnapshotArchive, play_match

    with SnapshotArchive(tmp_path / "archive") as archive:
        play_match(tictactoe_v3.env, PerfectTicTacToePolicy(), RandomPolicy(), 4, archive=archive)
        archive.record_match(player_a="human", player_b="minimax", score_a=0.5, source="play")
    text = write_report(tmp_path / "archive", out=tmp_path / "r.html", replay=False).read_text()
    assert "<td>human (a person)</td>" in text
    assert "vs human" not in text and "<td>minimax</td>" in text


# ------------------------------------------------------------------------------------------------
# At the end of a run: train and league write the page; a page that fails is a note
# ------------------------------------------------------------------------------------------------

TINY_TRAIN = ["--timesteps", "128", "--n-envs", "2", "--hp", "n_steps=64", "--hp", "batch_size=64"]
TINY_TRAIN += ["--save-every", "64", "--eval-games", "2", "--no-progress", "--no-plots"]


def test_train_ends_with_report_html_and_a_page_that_fails_is_a_note_not_a_failure(
    tmp_path, sp_wrappers
):
    run = tmp_path / "run"
    status, out, err = sp_wrappers("train", "tictactoe_v3", *TINY_TRAIN, "--out", run)
    assert status == 0, err
    text = (run / "report.html").read_text()
    assert "<h2>Payoff matrix</h2>" in text and "report.html" in out
    assert "Note: no report.html" not in out
    # the page cannot be written (its path is taken by a folder): the run still finishes
    (run / "report.html").unlink()
    (run / "report.html").mkdir()
    before = (run / "model.zip").stat().st_mtime_ns
    status, out, err = sp_wrappers("train", "--resume", run, "--timesteps", "64", "--no-progress")
    assert status == 0, err
    assert "Note: no report.html: IsADirectoryError" in out
    assert f"`sp-wrappers report {run}`" in out and "The run itself is complete" in out
    assert (run / "model.zip").stat().st_mtime_ns > before
    status, out, err = sp_wrappers(
        "train", "tictactoe_v3", *TINY_TRAIN, "--out", tmp_path / "quiet", "--no-report"
    )
    assert status == 0, err
    assert not (tmp_path / "quiet" / "report.html").exists()


def test_league_ends_with_report_html(tmp_path, sp_wrappers):
    run = tmp_path / "league"
    argv = ["league", "tictactoe_v3", "--timesteps", "256", "--chunk-steps", "64"]
    argv += ["--main-exploiters", "1", "--league-exploiters", "0", "--n-envs", "2"]
    argv += ["--hp", "n_steps=32", "--hp", "batch_size=32", "--eval-games", "2"]
    argv += ["--backend", "serial", "--no-progress", "--no-plots", "--out", run]
    status, out, err = sp_wrappers(*argv)
    assert status == 0, err
    text = (run / "report.html").read_text()
    assert "<h2>Bradley-Terry ratings (95% intervals)</h2>" in text and "report.html" in out
    assert "<h2>Replay: the latest snapshot against the best earlier one</h2>" in text
    assert "<td>main_agent_0 vs random</td>" in text and "vs main_agent_0" not in text


# ------------------------------------------------------------------------------------------------
# In a real browser: headless Chromium through Selenium
# ------------------------------------------------------------------------------------------------


@needs_browser
def test_headless_chromium_loads_every_image_without_a_console_error(report, tmp_path):
    driver = headless_chromium(tmp_path / "chromium", 1200, 900, logs=True)
    try:
        driver.get(report.as_uri())  # returns once the page's load event fired
        loaded = driver.execute_script(
            "return Array.from(document.images, i => "
            "({alt: i.alt, complete: i.complete, width: i.naturalWidth}));"
        )
        shot = driver.execute_cdp_cmd(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
        )
        # console errors, uncaught exceptions, failed loads and refused sources (CSP)
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        events = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    finally:
        driver.quit()
    assert len(loaded) == 4
    assert all(i["complete"] and i["width"] > 0 for i in loaded), loaded
    assert errors == []
    requested = [
        e["params"]["request"]["url"][:60]
        for e in events  # the report's own requests (Chromium's new-tab page loads beside it)
        if e.get("method") == "Network.requestWillBeSent"
        and e["params"].get("documentURL") == report.as_uri()
    ]
    assert requested and all(url.startswith(("file:", "data:")) for url in requested), requested
    screenshot = tmp_path / "report.png"
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    with Image.open(screenshot) as image:
        pixels = np.asarray(image.convert("RGB"))
    assert pixels.shape[0] > 900 and pixels.std() > 10  # the whole page, not a blank one


def test_the_elo_section_lists_every_snapshot_and_names_those_it_cannot_draw(report, trained_run):
    from sp_wrappers import SnapshotArchive

    text = report.read_text()
    section = text[text.index("<h2>Elo over learner steps</h2>") : text.index("<h2>Bradley")]
    with SnapshotArchive(trained_run / "archive") as archive:
        snapshots = archive.snapshots()
    assert all(f"<td>{s.id}</td>" in section for s in snapshots)  # three snapshots, three rows
    unrated = [s.id for s in snapshots if "elo" not in s.ratings]
    assert ("Not drawn, without a stored Elo" in section) == bool(unrated)
    assert all(sid in section.split("Not drawn")[-1] for sid in unrated)


def test_the_payoff_matrix_fits_the_page_at_its_own_size_with_its_numbers_as_text(report):
    text = report.read_text()
    section = text[text.index("<h2>Payoff matrix</h2>") : text.index("<h2>Strength against")]
    assert "The payoff numbers as text" in section and "<pre>" in section
    encoded = section.split("base64,", 1)[1].split("'", 1)[0].split('"', 1)[0]
    with Image.open(io.BytesIO(base64.b64decode(encoded))) as image:
        assert image.width <= 1000  # the section's width in a 1280-pixel window: not scaled


@needs_browser
def test_every_figure_fits_a_1280_pixel_wide_window(report, tmp_path):
    # the payoff figure (two panels side by side, 1,600 pixels for seven players) was cut off
    driver = headless_chromium(tmp_path / "chromium")
    try:
        metrics = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.get(report.as_uri())
        page = driver.execute_script(
            "return {page: document.documentElement.scrollWidth, "
            "window: window.innerWidth, images: Array.from(document.images, i => {"
            "const r = i.getBoundingClientRect(), s = i.closest('section')"
            ".getBoundingClientRect(); return {alt: i.alt, left: r.left, right: r.right, "
            "shown: r.width, natural: i.naturalWidth, section: [s.left, s.right]}})};"
        )
    finally:
        driver.quit()
    assert page["window"] == 1280 and page["page"] <= 1280, page
    payoff = [i for i in page["images"] if i["alt"].startswith("payoff matrix")]
    assert payoff, page["images"]
    for image in page["images"]:
        left, right = image["section"]
        assert left <= image["left"] and image["right"] <= right <= 1280, image
    # and the payoff figure at its own size: its numbers as readable as drawn
    assert payoff[0]["shown"] == payoff[0]["natural"], payoff


def test_snapshots_all_at_one_step_get_no_curve_on_an_axis_around_nothing(tmp_path):
    # a team whose learner never stepped had its snapshots at step 0: the page drew "0 learner
    # steps" on an axis from -0.04 to 0.04; now it says so and lists them (one without Elo)
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers import SelfPlayEnv, SnapshotArchive

    model = MaskablePPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env(), learner="random"))
    with SnapshotArchive(tmp_path / "archive") as archive:
        first = archive.save(model, step=0)
        second = archive.save(model, step=0)
        archive.set_ratings({first.id: {"elo": 1200.0}})
    text = write_report(tmp_path / "archive", out=tmp_path / "r.html", replay=False).read_text()
    section = text[text.index("<h2>Elo over learner steps</h2>") : text.index("<h2>Bradley")]
    assert f"Only {first.id} (learner step 0) has an Elo, so there is no curve" in section
    assert "<img" not in section and f"<td>{first.id}</td>" in section
    assert f"no game rated them yet): {second.id}." in section
    with SnapshotArchive(tmp_path / "archive") as archive:
        archive.set_ratings({second.id: {"elo": 1210.0}})
    text = write_report(tmp_path / "archive", out=tmp_path / "r.html", replay=False).read_text()
    assert "The 2 snapshots with an Elo are all at learner step 0, so there is no" in text


def test_one_rated_snapshot_beside_a_later_unrated_one_is_not_called_all_at_one_step(tmp_path):
    # snapshots at steps 0 and 6,144, the second unrated: the page said "Every rated snapshot is
    # at learner step 0", as if the run had not moved
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    from sp_wrappers import SelfPlayEnv, SnapshotArchive

    model = MaskablePPO("MlpPolicy", SelfPlayEnv(tictactoe_v3.env(), learner="random"))
    with SnapshotArchive(tmp_path / "archive") as archive:
        first = archive.save(model, step=0, rating=1200.0)
        second = archive.save(model, step=6144)
    text = write_report(tmp_path / "archive", out=tmp_path / "r.html", replay=False).read_text()
    section = text[text.index("<h2>Elo over learner steps</h2>") : text.index("<h2>Bradley")]
    assert "Every rated snapshot" not in section
    assert f"Only {first.id} (learner step 0) has an Elo, so there is no curve" in section
    assert f"<td>{second.id}</td><td>6,144</td><td>-</td>" in section
    assert f"no game rated them yet): {second.id}." in section


def test_the_psro_support_lists_members_above_the_threshold_and_folds_the_rest():
    from sp_wrappers.runs.report import SUPPORT_THRESHOLD, support_text

    # a mixture of dozens of members at 0.003 each used to fill the table cell with all of them
    weights = {"snapshot-0009": 0.55, "snapshot-0002": 0.25, "snapshot-0001": 0.0}
    weights.update({f"snapshot-{i:04d}": 0.2 / 40 for i in range(10, 50)})
    text = support_text(weights)
    assert text.startswith("snapshot-0009=0.550 snapshot-0002=0.250 and 40 members below")
    assert f"below {SUPPORT_THRESHOLD:g} (0.200 in all)" in text
    assert "snapshot-0010" not in text and "snapshot-0001" not in text
    assert support_text({"a": 0.004, "b": 0.006}) == "2 members below 0.01 (0.010 in all)"


@pytest.mark.learning
def test_a_run_with_a_strength_curve_gets_a_tactics_section_per_evaluation(tmp_path):
    from sp_wrappers import runs

    overrides = {"timesteps": 128, "n_envs": 2, "save_every": 64, "eval_games": 2}
    hyperparams = {"n_steps": 32, "batch_size": 64, "n_epochs": 1}
    config = runs.resolve(
        "tictactoe_v3", {**overrides, "strength_every": 64, "hyperparams": hyperparams}
    )
    run = tmp_path / "run"
    runs.start(config, run, runs.RunOptions(progress=False, plots=False))
    history = json.loads((run / "strength.json").read_text())
    evaluations = [e for e in history["evaluations"] if "tactics" in e]
    assert len(evaluations) == len(history["evaluations"]) >= 2
    text = html.unescape(write_report(run, out=tmp_path / "report.html").read_text())
    assert "<h2>One-move tactics</h2>" in text
    section = text.split("<h2>One-move tactics</h2>")[1].split("</section>")[0]
    last = evaluations[-1]["tactics"]
    cell = f"{last['wins_handed']} of {last['safe_chances']}"
    assert cell in section and section.count("<tr>") == len(evaluations) + 1
