"""How to run a configuration: :class:`RunOptions`, what a call on a run chooses that is not
part of the run (it is not written to ``config.json``). Its command-line options are declared
here once, as settings (:mod:`sp_wrappers.core.settings`): ``--device``, ``--threads`` and
``--trust-module`` for every kind of run, progress and report for train and league, the
league's backend.

>>> options = RunOptions(timesteps=500, progress=False)
>>> options.timesteps, options.plots, options.backend
(500, True, 'process')
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.settings import RUN_KINDS_ALL, TRAIN_KINDS, setting

__all__ = ["RunOptions", "RUNNING"]

#: The help's group of these options.
RUNNING = "running"
_TRAIN_AND_LEAGUE = (*TRAIN_KINDS, "league")
_LEAGUE = ("league",)
_running = functools.partial(setting, group=RUNNING)


def _backends() -> tuple[str, ...]:
    """The league's backends (loaded when asked: a single-learner run imports no league code)."""
    from ..league.backends import BACKENDS

    return tuple(BACKENDS)


def _off(name: str, help: str) -> Any:
    """A run option that is on unless ``--no-<name>`` is given."""
    return _running(True, help=help, flag=f"no-{name}", type=bool, kinds=_TRAIN_AND_LEAGUE)


@dataclass(frozen=True)
class RunOptions:
    """How to run a configuration: what is not part of the run itself (it is not written to
    ``config.json``, and may differ between the calls on one run).

    :param resume: continue the run in the run directory (its models, archives and history).
    :param timesteps: learner steps for this call (``None``: the configuration's for a new run,
        the steps still missing to reach it when resuming; a league: the total to reach).
    :param progress: show progress (a bar, or one line per team change).
    :param plots: write ``plots/`` (when matplotlib is installed).
    :param html_report: write ``report.html`` at the end.
    :param device: torch device of the learners.
    :param torch_threads: torch CPU threads while training (``None``: torch's setting).
    :param command: the command line, recorded in ``config.json``'s history.
    :param trusted_modules: modules whose classes the snapshots may name, on top of those the
        configuration names (see :func:`~sp_wrappers.runs.rundir.run_trusted_modules`).
    :param report: where progress lines go (team changes, league rounds; ``None``: nowhere).
    :param warn: where warnings go (a stalled league round, a lost worker; ``None``: nowhere).
    :param backend: a league's backend: ``serial``, ``process`` or ``ray``.
    :param address: a Ray cluster's address (league, ``ray`` backend).
    :param num_cpus: CPUs of a local Ray cluster.
    :param num_gpus: GPUs of a local Ray cluster.
    :param stall_seconds: a league round making no progress this long is reported to ``warn``.
    """

    resume: bool = False
    timesteps: int | None = None
    progress: bool = _off("progress", "no progress bar (a league: no line per round)")
    plots: bool = _off("plots", "do not write plots/")
    html_report: bool = _off(
        "report", "do not write report.html at the end (sp-wrappers report RUN_DIR writes it)"
    )
    device: str = _running(
        "cpu",
        help="torch device of the learners (default: cpu)",
        kinds=RUN_KINDS_ALL,
    )
    torch_threads: int | None = _running(
        1,
        type=int,
        metavar="N",
        help="torch CPU threads per learner (default: 1, fastest for small networks)",
        flag="threads",
        low=1,
        kinds=RUN_KINDS_ALL,
    )
    command: str | None = None
    trusted_modules: Sequence[str] = _running(
        (),
        help="rebuild snapshots whose policy names classes from module MOD (a custom features "
        "extractor; importing MOD runs its code). A run's own config.json already trusts the "
        "modules it names; repeatable",
        flag="trust-module",
        metavar="MOD",
        type=list,
        kinds=RUN_KINDS_ALL,
    )
    report: Callable[[str], None] | None = None
    warn: Callable[[str], None] | None = None
    backend: str = _running(
        "process",
        help="where the players learn: serial (this process, one after the other), process "
        "(one process each, the default) or ray (one Ray actor each)",
        choices=_backends,
        kinds=_LEAGUE,
    )
    address: str | None = _running(None, help="Ray cluster address (--backend ray)", kinds=_LEAGUE)
    num_cpus: float | None = _running(
        None,
        help="Ray CPUs per player (default: 1, or an equal share when the cluster has fewer)",
        low=0.0,
        type=float,
        kinds=_LEAGUE,
    )
    num_gpus: float = _running(0, help="Ray GPUs per player", low=0.0, type=float, kinds=_LEAGUE)
    stall_seconds: float | None = _running(
        120.0,
        help="report on stderr a round in which no player finishes for S seconds (default: 120)",
        low=0.0,
        metavar="S",
        type=float,
        kinds=_LEAGUE,
    )
