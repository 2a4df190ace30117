"""The names of a run directory's files and folders, spelled once.

:class:`~sp_wrappers.runs.rundir.RunDir` builds the run directory's paths from these names; the
layers below ``runs`` that write inside a run directory (a league's and a PSRO run's archive, a
team run's archives and models, the strength plot) take them from here, since they cannot import
``runs``. What a layer writes under a name of its own (``league.json``, ``team_selfplay.json``,
``strength.json``) stays in that layer. What each file holds: :mod:`sp_wrappers.runs.rundir`.

>>> f"{ARCHIVES_DIR}/red", CONFIG_NAME
('archives/red', 'config.json')
"""

from __future__ import annotations

__all__ = [
    "CONFIG_NAME",
    "MODEL_NAME",
    "ARCHIVE_DIR",
    "ARCHIVES_DIR",
    "MODELS_DIR",
    "RATINGS_NAME",
    "REPORT_NAME",
    "PLOTS_DIR",
    "TB_DIR",
    "PROGRESS_NAME",
    "EXPLOIT_DIR",
    "EXPLOIT_HISTORY",
    "PSRO_NAME",
    "MAGNET_NAME",
]

CONFIG_NAME = "config.json"
MODEL_NAME = "model.zip"
ARCHIVE_DIR = "archive"
ARCHIVES_DIR = "archives"
MODELS_DIR = "models"
RATINGS_NAME = "ratings.json"
REPORT_NAME = "report.html"
PLOTS_DIR = "plots"
TB_DIR = "tb"
PROGRESS_NAME = "progress.csv"
EXPLOIT_DIR = "exploit"
EXPLOIT_HISTORY = "exploit.json"
PSRO_NAME = "psro.json"
MAGNET_NAME = "magnet.safetensors"
