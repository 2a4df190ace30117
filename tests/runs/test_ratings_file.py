"""``ratings.json``: one format for the three shapes its writers give (single, team and league
runs), and a hostile file shown as one line in the report, never a traceback."""

from __future__ import annotations

import html
import json

import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers import SelfPlayVecEnv
from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.state_file import StateFileError
from sp_wrappers.runs.ratings_file import RATINGS_FORMAT
from sp_wrappers.runs.report import write_report

RECORD = {"games": 4, "wins": 2, "draws": 1, "losses": 1, "distinct_games": 3, "openings": 9}
SINGLE = {
    "format_version": 1,
    "method": "bradley-terry",
    "anchor": "random",
    "anchor_rating": 1000.0,
    "final_snapshot": "snapshot-0001",
    "final": {"id": "snapshot-0001", "rating": 1100.0},
    "evaluation": {"random": {**RECORD, "by_seat": {"player_1": [1, 0, 1]}}},
    "players": [{"id": "snapshot-0001", "rating": 1100.0}],
}
LEAGUE = {
    "format_version": 1,
    "method": "bradley-terry",
    "anchor": "random",
    "players": [{"player": "snapshot-0001"}],
    "final_snapshots": {"main_agent_0": "snapshot-0001"},
    "evaluation": {"main_agent_0": {"random": RECORD}},
}
TEAMS = {
    "format_version": 1,
    "kind": "teams",
    "method": "elo",
    "models": {"adversary": ["adversary"]},
    "teams": {"adversary": {"elo": 1210.0, "latest_snapshot": None, "snapshots": {}}},
    "evaluation": {"adversary": {**RECORD, "mean_team_return": 0.5, "opponents": "random"}},
}


@pytest.mark.parametrize("shape", [SINGLE, LEAGUE, TEAMS], ids=["single", "league", "teams"])
def test_every_writers_shape_reads_back(tmp_path, shape):
    path = tmp_path / "ratings.json"
    RATINGS_FORMAT.write(path, shape)
    assert RATINGS_FORMAT.read(path, snapshots={"snapshot-0001"}) == shape


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d["evaluation"]["random"].update(wins="NaN-ish"), "evaluation.random.wins"),
        (lambda d: d["evaluation"]["random"].update(losses=-5), "evaluation.random.losses"),
        (lambda d: d.update(final_snapshot="../../../../tmp/evil"), "final_snapshot"),
        (lambda d: d.update(evaluation=["evil"]), "evaluation"),
        (lambda d: d.update(final_snapshot="snapshot-0042"), "snapshot-0042"),
    ],
)
def test_a_hostile_ratings_file_is_one_line_of_the_report(tmp_path, edit, field):
    archive = SnapshotArchive(tmp_path / "archive")
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=1)
    archive.save(MaskablePPO("MlpPolicy", venv, policy_kwargs={"net_arch": [8]}), step=0)
    data = {**json.loads(json.dumps(SINGLE)), "final_snapshot": "snapshot-0000"}
    edit(data)
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    with pytest.raises(StateFileError) as error:
        RATINGS_FORMAT.read(path, snapshots=["snapshot-0000"])
    message = str(error.value)
    assert "\n" not in message and "ratings.json" in message and field in message, message
    page = write_report(tmp_path, replay=False).read_text()
    assert html.escape(message) in page
    assert path.read_bytes() == before
