"""Archive paths with a ``{run}`` placeholder: one fresh archive per training run.

A configuration file names one archive path for every run made from it, e.g. an RL Baselines3
Zoo yaml whose Optuna search trains several trials, two at a time with ``--n-jobs 2`` (Optuna runs
them in threads of one process). Written as ``runs/zoo/archive-{run}``, the path gives each run
its own directory: ``{run}`` becomes the lowest 4-digit number whose directory does not exist
yet, created at once (``mkdir`` is atomic, so two processes never get the same one).

A run is what one thread builds between two training starts: the envs
(``gymnasium.make(..., archive="...-{run}")``) and the
:class:`~sp_wrappers.training.callbacks.SelfPlayCallback` built in one thread, in either order,
get the same directory; when the callback's training starts it calls :func:`end_run`, and the
next env or callback built in that thread (the next trial) opens a new one. Env workers in other
processes (``SubprocVecEnv``) would each open their own: use in-process envs
(``DummyVecEnv``, RL Zoo's default) with a template.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["RUN_PLACEHOLDER", "is_run_template", "resolve_run_template", "end_run"]

RUN_PLACEHOLDER = "{run}"
_MAX_RUNS = 10_000

_lock = threading.Lock()
# (process, thread, template) -> the directory of the run that thread has open
_open: dict[tuple[int, int, str], Path] = {}


def is_run_template(path: object) -> bool:
    """Whether ``path`` (a ``str`` or ``os.PathLike``) holds the ``{run}`` placeholder."""
    return isinstance(path, str | os.PathLike) and RUN_PLACEHOLDER in os.fspath(path)


def resolve_run_template(path: str | os.PathLike[str]) -> Path:
    """The directory that ``path`` names for the run open in this thread (see the module
    docstring); a path without ``{run}`` is returned as it is.

    :param path: an archive path, e.g. ``"runs/zoo/archive-{run}"``.
    :raises ValueError: the template names ``{run}`` more than once, holds other ``{...}`` fields,
        or all of its 10,000 run numbers are taken.

    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> first = resolve_run_template(root + "/archive-{run}")
    >>> first.name, resolve_run_template(root + "/archive-{run}") == first
    ('archive-0000', True)
    >>> end_run(root + "/archive-{run}")
    >>> resolve_run_template(root + "/archive-{run}").name
    'archive-0001'
    """
    template = os.fspath(path)
    if RUN_PLACEHOLDER not in template:
        return Path(template)
    if template.count(RUN_PLACEHOLDER) > 1 or "{" in template.replace(RUN_PLACEHOLDER, ""):
        raise ValueError(
            f"The archive path {template!r} may hold {RUN_PLACEHOLDER} once and no other "
            "{...} field, e.g. 'runs/zoo/archive-{run}'."
        )
    key = (os.getpid(), threading.get_ident(), template)
    with _lock:
        if key in _open:
            return _open[key]
        for number in range(_MAX_RUNS):
            candidate = Path(template.replace(RUN_PLACEHOLDER, f"{number:04d}"))
            try:
                candidate.parent.mkdir(parents=True, exist_ok=True)
                candidate.mkdir()
            except FileExistsError:
                continue
            _open[key] = candidate
            return candidate
    raise ValueError(
        f"Every run directory of {template!r} up to {_MAX_RUNS - 1:04d} exists; move the old "
        "runs away or name another directory."
    )


def end_run(path: str | os.PathLike[str]) -> None:
    """Close this thread's run of ``path``: the next env or callback built here starts a new one.

    :param path: the template as the configuration names it (a path without ``{run}`` is ignored).
    """
    template = os.fspath(path)
    with _lock:
        _open.pop((os.getpid(), threading.get_ident(), template), None)
