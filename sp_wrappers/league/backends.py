"""Where a league's learning players run: this process, one process each, or Ray actors.

This module holds :func:`make_backend`, :data:`BACKENDS` and the three backends
(:class:`SerialBackend`, :class:`ProcessBackend`, :class:`RayBackend`).

Every backend holds one :class:`~sp_wrappers.league.worker.PlayerWorker` per learning player and
offers the same three calls: ``describe()`` (each player's policy spec and initial weights),
``train(plans)`` (one chunk for every player, all at once, results when all are done) and
``close()``. Only plans and results cross the boundary: no backend shares a filesystem with the
league's driver. Ray is imported here and nowhere else in the league.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import traceback
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from .worker import ChunkPlan, ChunkResult, PlayerWorker

__all__ = ["BACKENDS", "make_backend", "SerialBackend", "ProcessBackend", "RayBackend"]

BACKENDS = ("serial", "process", "ray")


class SerialBackend:
    """Every player in this process, one after the other (tests and debugging)."""

    def __init__(self, workers: Mapping[str, Mapping[str, Any]]) -> None:
        self.workers = {name: PlayerWorker(**kwargs) for name, kwargs in workers.items()}

    def describe(self) -> dict[str, dict[str, Any]]:
        return {name: worker.describe() for name, worker in self.workers.items()}

    def train(self, plans: Mapping[str, ChunkPlan]) -> dict[str, ChunkResult]:
        return {name: self.workers[name].train_chunk(plan) for name, plan in plans.items()}

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()


def _process_main(conn: Any, payload: bytes) -> None:
    """A player's process: build the worker, then answer commands until ``close``."""
    import cloudpickle

    try:
        worker = PlayerWorker(**cloudpickle.loads(payload))
        conn.send(("ok", None))
    except BaseException:  # noqa: BLE001 - reported to the driver, which raises
        conn.send(("error", traceback.format_exc()))
        return
    while True:
        try:
            command, argument = conn.recv()
        except EOFError:
            break
        if command == "close":
            worker.close()
            conn.send(("ok", None))
            break
        try:
            result = worker.describe() if command == "describe" else worker.train_chunk(argument)
            conn.send(("ok", result))
        except BaseException:  # noqa: BLE001
            conn.send(("error", traceback.format_exc()))


_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@contextlib.contextmanager
def _thread_environment(threads: int | None) -> Iterator[None]:
    """Set the BLAS/OpenMP thread variables for the processes started inside the block."""
    if threads is None:
        yield
        return
    saved = {k: os.environ.get(k) for k in _THREAD_VARIABLES}
    os.environ.update({k: str(int(threads)) for k in _THREAD_VARIABLES})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class ProcessBackend:
    """One process per player on this machine (``spawn``, so no state leaks from the driver);
    the players of a round learn in parallel."""

    def __init__(self, workers: Mapping[str, Mapping[str, Any]]) -> None:
        import cloudpickle

        context = mp.get_context("spawn")
        self._conns: dict[str, Any] = {}
        self._procs: dict[str, Any] = {}
        for name, kwargs in workers.items():
            parent, child = context.Pipe()
            process = context.Process(
                target=_process_main,
                args=(child, cloudpickle.dumps(dict(kwargs))),
                name=f"league-{name}",
                daemon=True,
            )
            # A child reads the BLAS/OpenMP thread counts when it imports numpy and torch: give it
            # the player's torch_threads (as Ray gives its actors num_cpus), else every player
            # starts one thread per core and they oversubscribe the machine.
            with _thread_environment(kwargs.get("torch_threads")):
                process.start()
            child.close()
            self._conns[name], self._procs[name] = parent, process
        try:
            for name in self._conns:
                self._receive(name)
        except BaseException:
            self.close()
            raise

    def _receive(self, name: str) -> Any:
        try:
            status, value = self._conns[name].recv()
        except EOFError as error:
            code = self._procs[name].exitcode
            raise RuntimeError(
                f"League player {name}'s process died (exit code {code}). Look for an "
                "out-of-memory kill or a crash in its env; the league resumes from its last round."
            ) from error
        if status == "error":
            raise RuntimeError(f"League player {name} failed in its process:\n{value}")
        return value

    def _call_all(self, command: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        for name, argument in arguments.items():
            self._conns[name].send((command, argument))
        return {name: self._receive(name) for name in arguments}

    def describe(self) -> dict[str, dict[str, Any]]:
        return self._call_all("describe", dict.fromkeys(self._conns))

    def train(self, plans: Mapping[str, ChunkPlan]) -> dict[str, ChunkResult]:
        return self._call_all("train", plans)

    def close(self) -> None:
        for name, conn in self._conns.items():
            try:
                if self._procs[name].is_alive():
                    conn.send(("close", None))
                    conn.recv()
            except (OSError, EOFError):
                pass
            conn.close()
        for process in self._procs.values():
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
        self._conns, self._procs = {}, {}


def import_ray() -> Any:
    """Import Ray or fail with the command that installs it."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(
            "backend='ray' needs Ray, which is not installed. Install it with "
            "`pip install 'ray[default]'`, or use backend='process' on one machine."
        ) from error
    return ray


class RayBackend:
    """One Ray actor per player, on any node of a Ray cluster.

    :param address: the cluster to connect to (``"auto"``, ``"ray://host:10001"``); ``None``
        starts a local Ray when none is running.
    :param num_cpus: CPUs each player's actor reserves.
    :param num_gpus: GPUs each player's actor reserves (the model's ``device`` is the user's).
    :param actor_options: per player name, more ``.options()`` for its actor (e.g. custom
        ``resources`` that pin it to a node).
    """

    def __init__(
        self,
        workers: Mapping[str, Mapping[str, Any]],
        address: str | None = None,
        num_cpus: float = 1,
        num_gpus: float = 0,
        actor_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        ray = import_ray()
        self.ray = ray
        self._started_ray = False
        if not ray.is_initialized():
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
            self._started_ray = address is None
        available = float(ray.cluster_resources().get("CPU", 0.0))
        wanted = float(num_cpus) * len(workers)
        if wanted > available:
            warnings.warn(
                f"The league's {len(workers)} players ask for {wanted:g} CPUs (num_cpus="
                f"{num_cpus:g} each) but the Ray cluster has {available:g}: the players that do "
                "not fit wait for a node, and a round never ends until they run. Pass a smaller "
                "num_cpus (e.g. 0.5) or add nodes.",
                RuntimeWarning,
                stacklevel=3,
            )
        actor_class = ray.remote(PlayerWorker)
        options = dict(actor_options or {})
        unknown = sorted(set(options) - set(workers))
        if unknown:
            raise ValueError(
                f"actor_options names players {unknown} that the league does not have; its "
                f"players are {sorted(workers)}."
            )
        self.actors = {
            name: actor_class.options(
                num_cpus=num_cpus, num_gpus=num_gpus, name=None, **dict(options.get(name, {}))
            ).remote(**kwargs)
            for name, kwargs in workers.items()
        }

    def _get(self, refs: Mapping[str, Any]) -> dict[str, Any]:
        values = self.ray.get(list(refs.values()))
        return dict(zip(refs, values, strict=True))

    def describe(self) -> dict[str, dict[str, Any]]:
        return self._get({name: actor.describe.remote() for name, actor in self.actors.items()})

    def train(self, plans: Mapping[str, ChunkPlan]) -> dict[str, ChunkResult]:
        return self._get({n: self.actors[n].train_chunk.remote(p) for n, p in plans.items()})

    def close(self) -> None:
        for actor in self.actors.values():
            try:
                self.ray.get(actor.close.remote())
            except Exception:  # noqa: BLE001 - the actor may already be gone
                pass
            self.ray.kill(actor)
        self.actors = {}
        if self._started_ray:
            self.ray.shutdown()


def make_backend(
    backend: str, workers: Mapping[str, Mapping[str, Any]], **options: Any
) -> SerialBackend | ProcessBackend | RayBackend:
    """The backend named ``backend`` holding one worker per entry of ``workers``.

    :param options: Ray's ``address``, ``num_cpus``, ``num_gpus``, ``actor_options``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    if backend == "ray":
        return RayBackend(workers, **options)
    ray_only = sorted(k for k, v in options.items() if v not in (None, {}, 1, 0))
    if ray_only:
        raise ValueError(f"{ray_only} only apply to backend='ray'; remove them or use Ray.")
    return SerialBackend(workers) if backend == "serial" else ProcessBackend(workers)
