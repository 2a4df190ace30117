"""Every state file kept in the repository (benchmarks/results: PSRO runs as 0.2 wrote them,
with ``"format": 1``, leagues, strength histories) reads through its declared format."""

from __future__ import annotations

from pathlib import Path

import pytest

from sp_wrappers.league.psro import PSRO_FORMAT
from sp_wrappers.league.state import LEAGUE_FORMAT
from sp_wrappers.training.strength_history import STRENGTH_FORMAT

ROOT = Path(__file__).resolve().parents[1]
FORMATS = (PSRO_FORMAT, LEAGUE_FORMAT, STRENGTH_FORMAT)
KEPT = [(f, path) for f in FORMATS for path in sorted((ROOT / "benchmarks").rglob(f.name))]


def test_the_repository_keeps_0_2_psro_states():
    assert any('"format": 1' in p.read_text() for f, p in KEPT if f is PSRO_FORMAT)


@pytest.mark.parametrize("fmt, path", KEPT, ids=[str(p.relative_to(ROOT)) for _, p in KEPT])
def test_a_kept_state_file_reads_through_its_format(fmt, path):
    assert fmt.read(path)["format_version"] == fmt.version
