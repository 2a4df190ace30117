"""``sp-wrappers train`` on team games: the lines a team run prints.

The team options (``--teams``, ``--team-change``, ``--shared``) live in
:mod:`sp_wrappers.cli.train`'s parser; :func:`~sp_wrappers.runs.resolve.resolve` decides whether
a run is a team run, and :func:`sp_wrappers.runs.start` runs it
(:class:`~sp_wrappers.runs.team_train.TeamRun`).
"""

from __future__ import annotations

from pathlib import Path

from ..runs.config import TeamRunConfig
from ..runs.rundir import CONFIG_NAME

__all__ = ["team_run_banner"]


def team_run_banner(config: TeamRunConfig, run: Path, resume: bool) -> str:
    """The line printed before a team run starts."""
    source = CONFIG_NAME if resume else config.recipe
    return (
        f"{'Resuming' if resume else 'Training'} {config.algo} teams on {config.game} "
        f"({source}) into {run}"
    )
