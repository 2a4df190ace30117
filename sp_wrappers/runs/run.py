"""One pipeline for every kind of run: :class:`Run` does what every kind shares, a subclass
supplies its envs, models and learning loop, and :func:`start` picks the subclass by the
configuration's type.

The shape is Stable-Baselines3's ``BaseAlgorithm`` with its on- and off-policy variants::

    start(config, run_dir, options)
      └─ Run.start()                 the order every kind follows
           check()                   kind: probe the game, refuse before anything is written
           RunDir.mkdir, tb/
           setup()                   kind: envs, models, archives
           begin(entry)              config.json with this call's history entry
           learn()                   kind: the learning loop (timed)
           evaluate()                kind: the final games
           write_results()           kind: ratings.json, plots; what it wrote
           end(entry)                config.json with the entry's seconds
           write_report()            report.html (a page that cannot be written is a note)
           result(written)           kind: its RunResult

:class:`~sp_wrappers.runs.single.SingleRun`, :class:`~sp_wrappers.runs.team_train.TeamRun` and
:class:`~sp_wrappers.runs.league.LeagueRun` are the kinds; a new kind is a subclass with those
hooks and one line in :data:`~sp_wrappers.runs.kinds.RUN_KINDS` (see docs/architecture.md).

>>> options = RunOptions(timesteps=500, progress=False)
>>> options.timesteps, options.plots, options.backend
(500, True, 'process')
"""

from __future__ import annotations

import contextlib
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ..core.jsonio import write_json
from ..core.run_layout import CONFIG_NAME, TB_DIR
from .kinds import config_class, kind_of_json, run_class
from .models import limited_torch_threads
from .options import RunOptions
from .report import report_at_end
from .rundir import RunDir, run_trusted_modules, tensorboard_dir

__all__ = ["RunOptions", "RunResult", "Run", "start"]


class RunResult(ABC):
    """What a run produced; each kind's result (``TrainResult``, ``TeamTrainResult``,
    ``LeagueResult``) has at least these attributes and :meth:`summary`: ``run_dir`` (the run
    directory), ``config`` (the run's configuration, as written to ``config.json`` at the end),
    ``seconds`` (wall-clock time of this call's learning, in seconds), ``written`` (the files and
    folders written, by name) and ``notes`` (things skipped and why: no tensorboard, no
    matplotlib, no page).
    """

    run_dir: Path
    config: Any
    seconds: float
    written: list[str]
    notes: list[str]

    @abstractmethod
    def summary(self) -> str:
        """A few lines on how the run went."""


class Run(ABC):
    """The pipeline every kind of run follows (see the module docstring); a subclass overrides
    the hooks :meth:`check`, :meth:`setup`, :meth:`learn`, :meth:`evaluate`,
    :meth:`write_results` and :meth:`result`, and may extend :meth:`history_entry`.

    :param config: the run's typed configuration (its class is the subclass's
        ``config_class``).
    :param run_dir: the run directory.
    :param options: how to run it.
    """

    #: The kind of run (``config.json``'s ``kind``).
    kind: ClassVar[str]

    def __init__(self, config: Any, run_dir: RunDir, options: RunOptions) -> None:
        self.config = config
        self.run_dir = run_dir
        self.options = options
        self.notes: list[str] = []
        self.tb: str | None = None
        self.seconds = 0.0
        self.entry: dict[str, Any] = {}

    @property
    def trusted_modules(self) -> tuple[str, ...]:
        """The modules the run's snapshots may name: the configuration's and the options'."""
        return run_trusted_modules(self.config, self.options.trusted_modules)

    def start(self) -> RunResult:
        """Run the configuration (see the module docstring) and return its result."""
        self.check()
        self.run_dir.path.mkdir(parents=True, exist_ok=True)
        self.tb = tensorboard_dir(self.run_dir.path, self.notes)
        with self.threads():
            self.setup()
            self.begin(self.history_entry())
            started = time.perf_counter()
            self.learn()
            self.seconds = time.perf_counter() - started
            self.evaluate()
        written = [CONFIG_NAME, *self.write_results()]
        if self.tb is not None:
            written.append(f"{TB_DIR}/")
        self.end({"seconds": round(self.seconds, 1), **self.end_entry()})
        if self.options.html_report:
            written += self.write_report()
        return self.result(written)

    # -- what every kind shares -------------------------------------------------------------------

    def threads(self) -> contextlib.AbstractContextManager[Any]:
        """The torch threads while training (``options.torch_threads``)."""
        return limited_torch_threads(self.options.torch_threads)

    def history_entry(self) -> dict[str, Any]:
        """This call's entry in ``config.json``'s history (extended by each kind)."""
        return {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}

    def begin(self, entry: dict[str, Any], **changes: Any) -> None:
        """Write ``config.json`` with ``entry`` added to its history (and ``changes``)."""
        self.entry = entry
        self.config = self.config.replace(history=(*self.config.history, entry), **changes)
        self.write_config()

    def end(self, more: Mapping[str, Any]) -> None:
        """Write ``config.json`` with this call's history entry completed by ``more``."""
        self.entry = {**self.entry, **more}
        self.config = self.config.replace(history=(*self.config.history[:-1], self.entry))
        self.write_config()

    def write_config(self) -> None:
        """Write ``config.json`` (atomically)."""
        write_json(self.run_dir.config_path, self.config.to_json())

    def write_report(self) -> list[str]:
        """``report.html`` (see :func:`~sp_wrappers.runs.report.report_at_end`)."""
        return report_at_end(self.run_dir.path, self.notes)

    def say(self, line: str) -> None:
        """A progress line to ``options.report`` (nowhere without one)."""
        if self.options.report is not None:
            self.options.report(line)

    # -- what each kind supplies ------------------------------------------------------------------

    def check(self) -> None:  # noqa: B027 (an optional hook: nothing to refuse by default)
        """Probe the game and refuse what cannot run, before anything is written."""

    @abstractmethod
    def setup(self) -> None:
        """Build the envs, models and archives."""

    @abstractmethod
    def learn(self) -> None:
        """The learning loop."""

    def evaluate(self) -> None:  # noqa: B027 (an optional hook: no final games by default)
        """The final games (inside the torch-threads limit, with the envs still open)."""

    def write_results(self) -> list[str]:
        """Write ratings, plots and what else the kind keeps; the names written."""
        return []

    def end_entry(self) -> dict[str, Any]:
        """What the kind adds to this call's history entry at the end (besides ``seconds``)."""
        return {}

    @abstractmethod
    def result(self, written: list[str]) -> RunResult:
        """The kind's result."""


def start(
    config: Any,
    run_dir: str | os.PathLike[str] | RunDir | None = None,
    options: RunOptions | None = None,
) -> RunResult:
    """Start (or, with ``options.resume``, continue) the run of ``config``: the one entry point
    of every kind, its :class:`Run` class looked up by the configuration's type.

    :param config: a typed configuration (:func:`~sp_wrappers.runs.resolve.resolve`), or the
        content of a ``config.json`` (its ``kind`` picks the class).
    :param run_dir: the run directory (default: ``runs/<game>``, a league ``runs/league-<game>``).
    :param options: how to run it (default: :class:`RunOptions`'s defaults).
    :return: the kind's :class:`RunResult`.
    :raises TrainError: a run that cannot start or did not do what it was asked, with the fix.
    """
    if isinstance(config, Mapping):
        config = config_class(kind_of_json(config)).from_json(config)
    kind = run_class(config)
    if run_dir is None:
        folder = RunDir.default_for(config)
    else:
        folder = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    return kind(config, folder, options or RunOptions()).start()
