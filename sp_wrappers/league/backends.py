"""Where a league's learning players run: this process, one process each, or Ray actors.

Every backend holds one :class:`~sp_wrappers.league.worker.PlayerWorker` per learning player and
offers the same calls: ``describe()`` (each player's policy spec and initial weights),
``train(plans)`` (one chunk for every player, all at once, results when all are done),
``restart(name, kwargs)`` (a new worker for a player whose worker died) and ``close()``. Only
plans and results cross the boundary: no backend shares a filesystem with the league's driver.

While a round runs, a backend that hears from no player for ``stall_seconds`` hands a
:class:`~sp_wrappers.league.faults.StallReport` (who is waiting, and why) to ``on_stall``; a
player whose process or actor died is reported in a
:class:`~sp_wrappers.league.faults.PlayersLostError` together with the other players' results.
Ray is imported here and nowhere else in the league.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.connection import wait as wait_for_connections
from typing import TYPE_CHECKING, Any

from ..core.errors import DependencyNotInstalled
from ..core.processes import require_main_guard
from .errors import LeagueSetupError
from .faults import (
    OnStall,
    PlayersDoNotFitError,
    PlayersLostError,
    StallReport,
    describe_resources,
    fit_per_player,
)

if TYPE_CHECKING:  # pragma: no cover - the worker imports SB3: loaded when a player starts
    from .worker import ChunkPlan, ChunkResult

__all__ = ["BACKENDS", "make_backend", "SerialBackend", "ProcessBackend", "RayBackend"]

BACKENDS = ("serial", "process", "ray")
_POLL_SECONDS = 0.5


class _StallClock:
    """Calls ``on_stall`` once every ``stall_seconds`` in which no player finished."""

    def __init__(self, stall_seconds: float | None, on_stall: OnStall | None, round: int) -> None:
        self.stall_seconds = stall_seconds
        self.on_stall = on_stall
        self.round = round
        self.since = self.last = time.monotonic()

    def progress(self) -> None:
        self.last = time.monotonic()

    def check(self, waiting: Callable[[], dict[str, str]], done: list[str]) -> None:
        if self.stall_seconds is None or self.on_stall is None:
            return
        now = time.monotonic()
        if now - self.last >= self.stall_seconds:
            self.on_stall(StallReport(self.round, now - self.since, waiting(), list(done)))
            self.last = now


class SerialBackend:
    """Every player in this process, one after the other (tests and debugging)."""

    def __init__(self, workers: Mapping[str, Mapping[str, Any]]) -> None:
        from .worker import PlayerWorker

        self.workers = {name: PlayerWorker(**kwargs) for name, kwargs in workers.items()}

    def describe(self, **_: Any) -> dict[str, dict[str, Any]]:
        return {name: worker.describe() for name, worker in self.workers.items()}

    def train(self, plans: Mapping[str, ChunkPlan], **_: Any) -> dict[str, ChunkResult]:
        return {name: self.workers[name].train_chunk(plan) for name, plan in plans.items()}

    def restart(self, name: str, kwargs: Mapping[str, Any]) -> None:
        from .worker import PlayerWorker

        self.workers[name].close()
        self.workers[name] = PlayerWorker(**kwargs)

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()


def _process_main(conn: Any, payload: bytes) -> None:
    """A player's process: build the worker, then answer commands until ``close``."""
    import cloudpickle

    from .worker import PlayerWorker

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
        require_main_guard('a league (backend="process")')
        self._conns: dict[str, Any] = {}
        self._procs: dict[str, Any] = {}
        try:
            for name, kwargs in workers.items():
                self._start(name, kwargs)
            for name in list(self._conns):
                self._receive(name)
        except BaseException:
            self.close()
            raise

    def _start(self, name: str, kwargs: Mapping[str, Any]) -> None:
        import cloudpickle

        context = mp.get_context("spawn")
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

    def _died(self, name: str) -> str:
        process = self._procs[name]
        process.join(timeout=5)
        return f"its process (pid {process.pid}) died with exit code {process.exitcode}"

    def _receive(self, name: str) -> Any:
        try:
            status, value = self._conns[name].recv()
        except (EOFError, OSError) as error:
            raise RuntimeError(
                f"League player {name}: {self._died(name)}. Look for an out-of-memory kill or "
                "a crash in its env; the league resumes from its last round."
            ) from error
        if status == "error":
            raise RuntimeError(f"League player {name} failed in its process:\n{value}")
        return value

    def _call_all(
        self,
        command: str,
        arguments: Mapping[str, Any],
        stall_seconds: float | None = None,
        on_stall: OnStall | None = None,
        round: int = 0,
    ) -> dict[str, Any]:
        results: dict[str, Any] = {}
        lost: dict[str, str] = {}
        waiting: dict[Any, str] = {}
        for name, argument in arguments.items():
            try:
                self._conns[name].send((command, argument))
                waiting[self._conns[name]] = name
            except OSError:
                lost[name] = self._died(name)
        clock = _StallClock(stall_seconds, on_stall, round)
        failures = []
        while waiting:
            ready = wait_for_connections(list(waiting), timeout=_POLL_SECONDS)
            for conn in ready:
                name = waiting.pop(conn)
                clock.progress()
                try:
                    status, value = conn.recv()
                except (EOFError, OSError):
                    lost[name] = self._died(name)
                    continue
                if status == "error":
                    failures.append(f"League player {name} failed in its process:\n{value}")
                else:
                    results[name] = value
            clock.check(
                lambda: {
                    name: f"learning in its process (pid {self._procs[name].pid})"
                    for name in waiting.values()
                },
                list(results),
            )
        if failures:
            raise RuntimeError("\n".join(failures))
        if lost:
            raise PlayersLostError(lost, results)
        return results

    def describe(
        self, stall_seconds: float | None = None, on_stall: OnStall | None = None
    ) -> dict[str, dict[str, Any]]:
        return self._call_all("describe", dict.fromkeys(self._conns), stall_seconds, on_stall)

    def train(
        self,
        plans: Mapping[str, ChunkPlan],
        stall_seconds: float | None = None,
        on_stall: OnStall | None = None,
        round: int = 0,
    ) -> dict[str, ChunkResult]:
        return self._call_all("train", plans, stall_seconds, on_stall, round)

    def restart(self, name: str, kwargs: Mapping[str, Any]) -> None:
        """Replace ``name``'s process by a new one built from ``kwargs``."""
        self._conns[name].close()
        process = self._procs[name]
        if process.is_alive():
            process.terminate()
        process.join(timeout=10)
        self._start(name, kwargs)
        self._receive(name)

    def close(self) -> None:
        for name, conn in self._conns.items():
            try:
                if self._procs[name].is_alive():
                    conn.send(("close", None))
                    if conn.poll(30):
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
        raise DependencyNotInstalled(
            "backend='ray' needs Ray, which is not installed. Install it with "
            "`pip install 'ray[default]'`, or use backend='process' on one machine."
        ) from error
    return ray


class RayBackend:
    """One Ray actor per player, on any node of a Ray cluster.

    :param address: the cluster to connect to (``"auto"``, ``"ray://host:10001"``); ``None``
        starts a local Ray when none is running.
    :param num_cpus: CPUs each player's actor reserves; ``None``: one each, or an equal share of
        the cluster's CPUs when it has fewer than one per player (e.g. 0.6666 for three players
        on two CPUs). A number the cluster cannot hold for every player at once raises
        :class:`~sp_wrappers.league.faults.PlayersDoNotFitError` before anything starts.
    :param num_gpus: GPUs each player's actor reserves (the model's ``device`` is the user's).
    :param actor_options: per player name, more ``.options()`` for its actor (e.g. custom
        ``resources`` that pin it to a node).
    """

    def __init__(
        self,
        workers: Mapping[str, Mapping[str, Any]],
        address: str | None = None,
        num_cpus: float | None = None,
        num_gpus: float = 0,
        actor_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        ray = import_ray()
        self.ray = ray
        self._started_ray = False
        if not ray.is_initialized():
            try:
                ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
            except ConnectionError as error:
                if address is None:
                    raise
                raise LeagueSetupError(
                    f"Cannot connect to a Ray cluster at address {address!r} "
                    f"({str(error).splitlines()[0] if str(error) else type(error).__name__}). "
                    "Start one on this machine with `ray start --head` (or pass the address of "
                    "a running cluster), or drop the address (--address) to start a local Ray "
                    "for this run."
                ) from None
            self._started_ray = address is None
        options = dict(actor_options or {})
        unknown = sorted(set(options) - set(workers))
        if unknown:
            raise ValueError(
                f"actor_options names players {unknown} that the league does not have; its "
                f"players are {sorted(workers)}."
            )
        try:
            self.num_cpus = self._fit("CPU", num_cpus, len(workers))
            self.num_gpus = self._fit("GPU", num_gpus, len(workers))
        except PlayersDoNotFitError:
            self._shutdown()
            raise
        from .worker import PlayerWorker

        self._actor_class = ray.remote(PlayerWorker)
        self._options = options
        self.actors: dict[str, Any] = {}
        self._ready: dict[str, Any] = {}
        for name, kwargs in workers.items():
            self._start(name, kwargs)

    def _fit(self, resource: str, asked: float | None, players: int) -> float:
        nodes = [n.get("Resources", {}) for n in self.ray.nodes() if n.get("Alive")]
        total = sum(float(n.get(resource, 0.0)) for n in nodes)
        largest = max((float(n.get(resource, 0.0)) for n in nodes), default=0.0)
        if asked is None:
            share = fit_per_player(total, players)
            if share <= 0 and resource == "CPU":
                raise PlayersDoNotFitError(resource, 1.0, players, total, largest)
            return share
        asked = float(asked)
        if asked > 0 and (asked * players > total + 1e-9 or asked > largest + 1e-9):
            raise PlayersDoNotFitError(resource, asked, players, total, largest)
        return asked

    def _start(self, name: str, kwargs: Mapping[str, Any]) -> None:
        self.actors[name] = self._actor_class.options(
            num_cpus=self.num_cpus, num_gpus=self.num_gpus, **dict(self._options.get(name, {}))
        ).remote(**kwargs)
        self._ready[name] = self.actors[name].node.remote()

    def _asks(self, name: str) -> str:
        asks = {"CPU": self.num_cpus, "GPU": self.num_gpus}
        asks.update(self._options.get(name, {}).get("resources", {}))
        return describe_resources({k: v for k, v in asks.items() if v})

    def _why(self, name: str, started: float) -> str:
        ready, _ = self.ray.wait([self._ready[name]], timeout=0)
        if not ready:
            return (
                f"its actor is not placed: it asks for {self._asks(name)}, the cluster has "
                f"{describe_resources(self.ray.available_resources())} free of "
                f"{describe_resources(self.ray.cluster_resources())}"
            )
        try:
            node = str(self.ray.get(self._ready[name]))[:12]
        except Exception:  # noqa: BLE001 - the actor died: its result says how
            return "its actor died"
        return f"learning on node {node} for {time.monotonic() - started:.0f} s"

    def _lost(self, error: BaseException) -> bool:
        exceptions = self.ray.exceptions
        kinds = tuple(
            getattr(exceptions, kind)
            for kind in ("RayActorError", "WorkerCrashedError", "NodeDiedError", "ObjectLostError")
            if hasattr(exceptions, kind)
        )
        return isinstance(error, kinds)

    def _gather(
        self,
        refs: Mapping[str, Any],
        stall_seconds: float | None = None,
        on_stall: OnStall | None = None,
        round: int = 0,
    ) -> dict[str, Any]:
        waiting = {ref: name for name, ref in refs.items()}
        results: dict[str, Any] = {}
        lost: dict[str, str] = {}
        clock = _StallClock(stall_seconds, on_stall, round)
        while waiting:
            ready, _ = self.ray.wait(list(waiting), num_returns=1, timeout=_POLL_SECONDS)
            for ref in ready:
                name = waiting.pop(ref)
                clock.progress()
                try:
                    results[name] = self.ray.get(ref)
                except Exception as error:  # noqa: BLE001 - sorted below
                    if not self._lost(error):
                        raise  # the player's own error (RayTaskError): retrying repeats it
                    lost[name] = f"its Ray actor died ({type(error).__name__})"
            clock.check(
                lambda: {name: self._why(name, clock.since) for name in waiting.values()},
                list(results),
            )
        if lost:
            raise PlayersLostError(lost, results)
        return results

    def describe(
        self, stall_seconds: float | None = None, on_stall: OnStall | None = None
    ) -> dict[str, dict[str, Any]]:
        refs = {name: actor.describe.remote() for name, actor in self.actors.items()}
        return self._gather(refs, stall_seconds, on_stall)

    def train(
        self,
        plans: Mapping[str, ChunkPlan],
        stall_seconds: float | None = None,
        on_stall: OnStall | None = None,
        round: int = 0,
    ) -> dict[str, ChunkResult]:
        refs = {n: self.actors[n].train_chunk.remote(p) for n, p in plans.items()}
        return self._gather(refs, stall_seconds, on_stall, round)

    def restart(self, name: str, kwargs: Mapping[str, Any]) -> None:
        """Replace ``name``'s actor by a new one built from ``kwargs`` (Ray places it)."""
        with contextlib.suppress(Exception):
            self.ray.kill(self.actors[name], no_restart=True)
        self._start(name, kwargs)

    def close(self) -> None:
        for name, actor in self.actors.items():
            placed, _ = self.ray.wait([self._ready[name]], timeout=0)
            try:  # an actor that was never placed never answers: do not wait for it
                if placed:
                    self.ray.get(actor.close.remote(), timeout=30)
            except Exception:  # noqa: BLE001 - the actor may already be gone
                pass
            with contextlib.suppress(Exception):
                self.ray.kill(actor)
        self.actors = {}
        self._shutdown()

    def _shutdown(self) -> None:
        if self._started_ray:
            self.ray.shutdown()
            self._started_ray = False


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
