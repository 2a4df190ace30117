"""The names of a run directory's files and folders, spelled once.

:class:`~sp_wrappers.runs.rundir.RunDir` builds the run directory's paths from these names; the
layers below ``runs`` that write inside a run directory (a league's and a PSRO run's archive, a
team run's archives and models, the strength plot) take them from here, since they cannot import
``runs``. What a layer writes under a name of its own (``league.json``, ``team_selfplay.json``,
``strength.json``) stays in that layer.

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
]

#: Everything that reproduces the run, with its ``kind``.
CONFIG_NAME = "config.json"
#: A single learner's model.
MODEL_NAME = "model.zip"
#: A single learner's, a league's or a PSRO run's :class:`~sp_wrappers.SnapshotArchive`.
ARCHIVE_DIR = "archive"
#: A team run's archives, one folder per team.
ARCHIVES_DIR = "archives"
#: A team run's models, ``<name>.zip`` each.
MODELS_DIR = "models"
RATINGS_NAME = "ratings.json"
REPORT_NAME = "report.html"
PLOTS_DIR = "plots"
#: TensorBoard's logs.
TB_DIR = "tb"
#: SB3's CSV log (a resumed run: ``progress-<from step>.csv``).
PROGRESS_NAME = "progress.csv"
#: ``sp-wrappers exploit``'s own archive and results.
EXPLOIT_DIR = "exploit"
EXPLOIT_HISTORY = "exploit.json"
#: A PSRO run's population, payoffs and iterations.
PSRO_NAME = "psro.json"
