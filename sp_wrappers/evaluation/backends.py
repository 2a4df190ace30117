"""Where a round robin's games are played.

This module holds the backends of :func:`~sp_wrappers.evaluation.round_robin.round_robin`:
one :class:`PairTask` per pair of players, run serially, in spawned worker processes
(``"process"``) or as Ray tasks (``"ray"``), and :data:`BACKENDS`, their names. A task names its
snapshots by id and carries the archive *path*, never a policy object: each worker reopens the
archive and loads the weights itself. This is the one module that imports Ray:
:func:`import_ray` and :func:`start_local_ray` serve the league's backends too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.extras import require
from ..core.policies import Policy
from ..core.processes import require_main_guard
from .match import MatchResult, play_match

__all__ = ["BACKENDS", "PAIR_RUNNERS", "PairTask", "check_backend", "import_ray", "start_local_ray"]


BACKENDS = ("process", "ray", "serial")


@dataclass(frozen=True)
class PairTask:
    """One pair's games: what a worker needs, all of it picklable."""

    index: int
    archive_path: str
    player_a: Any  # a snapshot id (str) or a picklable policy
    player_b: Any
    env_fn: Callable[[], Any]
    n_games: int
    seed: int
    deterministic: bool
    #: the archive's trusted modules, so a worker rebuilds what the caller's archive may
    trusted_modules: tuple[str, ...] = ()


_WORKER_ARCHIVES: dict[tuple[str, tuple[str, ...]], Any] = {}


def _worker_archive(path: str, trusted_modules: Sequence[str] = ()) -> Any:
    """The archive at ``path``, opened once per worker process (its policy cache is reused)."""
    from ..archive.store import SnapshotArchive

    key = (path, tuple(trusted_modules))
    archive = _WORKER_ARCHIVES.get(key)
    if archive is None:
        archive = SnapshotArchive(path, create=False, trusted_modules=trusted_modules)
        _WORKER_ARCHIVES[key] = archive
    return archive


def _init_worker() -> None:
    """Worker processes share the CPU: one torch thread each."""
    import torch

    torch.set_num_threads(1)


def _run_pair(task: PairTask, archive: Any = None) -> tuple[int, MatchResult]:
    """Play one pair (in a worker, or in the caller's process with its ``archive``)."""
    if archive is None:
        _init_worker()
        archive = _worker_archive(task.archive_path, task.trusted_modules)

    def resolve(player: Any) -> Policy:
        if isinstance(player, str):
            return archive.load_policy(player, deterministic=task.deterministic)
        return player

    result = play_match(
        task.env_fn, resolve(task.player_a), resolve(task.player_b), task.n_games, seed=task.seed
    )
    return task.index, result


def _serial_backend(
    tasks: Sequence[PairTask], archive: Any, n_workers: int | None
) -> Iterator[tuple[int, MatchResult]]:
    for task in tasks:
        yield _run_pair(task, archive)


def _process_backend(
    tasks: Sequence[PairTask], archive: Any, n_workers: int | None
) -> Iterator[tuple[int, MatchResult]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    require_main_guard('a round robin (backend="process")')
    workers = n_workers or min(len(tasks), os.cpu_count() or 1)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker) as pool:
        futures = [pool.submit(_run_pair, task) for task in tasks]
        try:
            for future in as_completed(futures):
                try:
                    yield future.result()
                except BrokenProcessPool as error:
                    raise RuntimeError(
                        'A round-robin worker process died (backend="process"). Worker processes '
                        "are spawned: a script that starts a tournament must guard its entry "
                        "point with `if __name__ == '__main__':`, and env_fn and the baselines "
                        'must be importable; backend="serial" runs without workers.'
                    ) from error
        finally:
            for future in futures:
                future.cancel()


def import_ray() -> Any:
    """Import Ray, or fail with the command that installs it (the tournament's and the league's
    ``backend="ray"``: the one place the package imports Ray).

    :raises DependencyNotInstalled: Ray is not installed; the message names the extra and
        the other backend.
    """
    return require("ray", "ray", 'backend="ray"', instead='or use backend="process"')


def start_local_ray(num_cpus: float | None = None) -> bool:
    """Start a Ray of this process's own (``address="local"``) unless this process already has
    one; another cluster on the machine (``RAY_ADDRESS``, a ``ray start``, another job's Ray) is
    never joined, so its nodes are never measured nor used.

    :param num_cpus: the CPUs the new Ray offers; ``None``: the machine's.
    :return: whether this call started Ray (the caller then shuts it down).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    return True


def _ray_backend(
    tasks: Sequence[PairTask], archive: Any, n_workers: int | None
) -> Iterator[tuple[int, MatchResult]]:
    ray = import_ray()
    start_local_ray(n_workers)  # a Ray of its own, whatever other cluster the machine has
    remote = ray.remote(num_cpus=1)(_run_pair)
    pending = [remote.remote(task) for task in tasks]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    finally:
        for ref in pending:
            ray.cancel(ref)


PAIR_RUNNERS: dict[str, Callable[..., Iterator[tuple[int, MatchResult]]]] = {
    "process": _process_backend,
    "ray": _ray_backend,
    "serial": _serial_backend,
}


def check_backend(backend: str) -> None:
    if backend not in PAIR_RUNNERS:
        raise ValueError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
    if backend == "ray":
        import_ray()
