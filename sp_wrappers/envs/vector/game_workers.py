"""The game side of the vector env: the game copies and their seat drivers, here or in workers.

The main process hands the games batches of operations, ``(RESET, i, seat, seed, options)`` or
``(PLAY, i, action, pop)``, and gets back one :class:`Status` per operation: an opponent seat to
answer, or the learner's view. :class:`Games` keeps the games in this process, :class:`WorkerGames`
splits them over worker processes (stopped on ``close()``, garbage collection or exit) for slow
games. Each game is driven by a :class:`~sp_wrappers.core.seats.SeatDriver`, or by the driver
class the env passes in (a learner team's ``TeamDriver``), so this module imports no driver of
its own beyond the base. A new game configuration (``set_game_config``) is built and checked
where the game lives (``stage_game``) and replaces the game at that copy's next reset.
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper

from ...core.seats import SeatDriver, as_aec_env
from ..game_config import build_candidate

__all__ = ["RESET", "PLAY", "Status", "GameSpec", "Games", "WorkerGames"]

#: The two kinds of game operation (an operation tuple starts with one of them).
RESET, PLAY = 0, 1


@dataclass
class Status:
    """Where one game stands after an operation: an opponent to answer, or the learner's view.

    ``seat`` is the opponent seat that must act (``observation``/``mask`` are its own), or
    ``None`` when the learner must act or its episode is over (``observation`` is then the
    learner's, ``None`` when its agent left the game; ``reward`` is the learner's pending reward).
    A learner team's episode end also gives ``slot_ends``: each team agent's own termination and
    truncation (an agent that left early ended its own way, not the team's).
    """

    seat: str | None
    observation: Any
    mask: np.ndarray | None
    terminated: bool = False
    truncated: bool = False
    reward: float = 0.0
    returns: dict[str, float] | None = None
    length: int = 0
    illegal_action: Any = None
    #: at a team's episode end, each team agent's own ``(terminated, truncated)``
    slot_ends: list[tuple[bool, bool]] | None = None


@dataclass
class GameSpec:
    """What the main process needs to know about the game (a stand-in for the game itself in
    ``resolve_learner_seats`` and ``seat_spaces``)."""

    possible_agents: list[str]
    observation_spaces: dict[str, spaces.Space]
    action_spaces: dict[str, spaces.Space]
    render_mode: str | None
    metadata: dict[str, Any]

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]


def _advance(driver: SeatDriver, pop: bool) -> Status:
    """Advance ``driver`` to its next decision and describe it."""
    turn = driver.next_turn()
    if turn is not None:
        return Status(turn.seat, turn.observation, turn.action_mask)
    reward = driver.pop_reward() if pop else driver.pending_reward
    if driver.learner_done:
        try:
            obs = driver.learner_observation()
        except (KeyError, AttributeError):  # the learner's agent was removed from the game
            obs = None
        return Status(
            None,
            obs,
            None,
            driver.terminated,
            driver.truncated,
            reward,
            dict(driver.returns),
            driver.learner_steps,
            driver.illegal_action_played,
        )
    obs, mask = driver.learner_view()
    if mask is None:
        mask = driver.all_actions_mask(driver.learner)
    return Status(None, obs, mask, reward=reward)


class Games:
    """A list of games with their seat drivers; answers batches of reset/play operations."""

    def __init__(
        self,
        env_fn: Callable[[], Any],
        n: int,
        keep_dict_obs: bool,
        driver_type: type[SeatDriver] = SeatDriver,
    ) -> None:
        self.games = [as_aec_env(env_fn()) for _ in range(n)]
        # A learner team's env passes its TeamDriver, which describes its own decisions (advance).
        self.driver_type = driver_type
        self._advance: Callable[[Any, bool], Status] = getattr(driver_type, "advance", _advance)
        self.drivers = [self.driver_type(game, keep_dict_obs=keep_dict_obs) for game in self.games]
        self.env_fn, self.keep_dict_obs = env_fn, keep_dict_obs
        self.next_games: dict[int, tuple[Any, dict]] = {}  # game i's next game and its kwargs
        self.kwargs: list[dict[str, Any]] = [{} for _ in range(n)]  # each game's game_kwargs

    def spec(self) -> GameSpec:
        game = self.games[0]
        agents = list(game.possible_agents)
        return GameSpec(
            agents,
            {a: game.observation_space(a) for a in agents},
            {a: game.action_space(a) for a in agents},
            getattr(game, "render_mode", None),
            dict(getattr(game, "metadata", {}) or {}),
        )

    def run(self, items: Sequence[tuple]) -> list[Status]:
        """``(RESET, i, seat, seed, options)`` or ``(PLAY, i, action, pop)`` per item."""
        out = []
        for item in items:
            if item[0] == RESET and item[1] in self.next_games:
                self._switch_game(item[1])
            driver = self.drivers[item[1]]
            if item[0] == RESET:
                driver.reset(item[2], seed=item[3], options=item[4])
                out.append(self._advance(driver, False))
            else:
                driver.play(item[2])
                out.append(self._advance(driver, item[3]))
        return out

    def stage_game(self, i: int, game_kwargs: dict[str, Any]) -> None:
        """Build game ``i``'s next game, ``env_fn(**game_kwargs)``, checked to keep the spaces;
        it replaces the game at ``i``'s next reset."""
        candidate = build_candidate(self.env_fn, game_kwargs, self.games[i], self.kwargs[i])
        self.unstage_game(i)
        self.next_games[i] = (candidate, dict(game_kwargs))

    def unstage_game(self, i: int) -> None:
        old = self.next_games.pop(i, None)
        if old is not None:
            old[0].close()

    def _switch_game(self, i: int) -> None:
        self.games[i].close()
        self.games[i], self.kwargs[i] = self.next_games.pop(i)
        self.drivers[i] = self.driver_type(self.games[i], keep_dict_obs=self.keep_dict_obs)

    def get_attr(self, i: int, name: str) -> Any:
        return getattr(self.games[i], name)

    def set_attr(self, i: int, name: str, value: Any) -> None:
        setattr(self.games[i], name, value)

    def call(self, i: int, name: str, args: tuple, kwargs: dict) -> Any:
        return getattr(self.games[i], name)(*args, **kwargs)

    def close(self) -> None:
        for game in [*self.games, *(game for game, _ in self.next_games.values())]:
            game.close()


def _worker(
    conn: Any,
    parent_conn: Any,
    env_fn: CloudpickleWrapper,
    n: int,
    keep: bool,
    driver_type: type[SeatDriver] = SeatDriver,
) -> None:
    """A worker process's loop: build ``n`` games, answer commands until ``close`` or EOF."""
    parent_conn.close()
    games = None
    try:
        games = Games(env_fn.var, n, keep, driver_type)
        conn.send(("ok", games.spec()))
    except Exception as error:  # noqa: BLE001 - reported to the main process
        conn.send(("error", (_picklable(error), traceback.format_exc())))
        return
    while True:
        try:
            command, payload = conn.recv()
        except (EOFError, KeyboardInterrupt, OSError):
            break
        if command == "close":
            games.close()
            conn.send(("ok", None))
            break
        try:
            result = getattr(games, command)(*payload)
            conn.send(("ok", result))
        except Exception as error:  # noqa: BLE001 - reported to the main process
            conn.send(("error", (_picklable(error), traceback.format_exc())))
    conn.close()


def _picklable(error: Exception) -> Exception:
    import pickle

    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(error).__name__}: {error}")


def _shutdown(processes: list[Any], pipes: list[Any]) -> None:
    """Stop worker processes: ask politely, then terminate stragglers (idempotent)."""
    for pipe in pipes:
        try:
            pipe.send(("close", None))
        except (BrokenPipeError, EOFError, OSError):
            pass
    for pipe in pipes:
        try:
            if pipe.poll(2.0):
                pipe.recv()
        except (BrokenPipeError, EOFError, OSError):
            pass
    for process in processes:
        process.join(timeout=2.0)
        if process.is_alive():
            process.terminate()
            process.join(timeout=2.0)
    for pipe in pipes:
        pipe.close()


class WorkerGames:
    """The same operations as :class:`Games`, with the games split over worker processes."""

    def __init__(
        self,
        env_fn: Callable[[], Any],
        n: int,
        num_workers: int,
        keep_dict_obs: bool,
        start_method: str | None,
        driver_type: type[SeatDriver] = SeatDriver,
    ) -> None:
        if start_method is None:
            methods = mp.get_all_start_methods()
            start_method = "forkserver" if "forkserver" in methods else "spawn"
        ctx = mp.get_context(start_method)
        if start_method == "forkserver":
            # Workers fork from a server that has imported this module (and SB3, torch) once,
            # instead of importing them again in every worker of every env.
            ctx.set_forkserver_preload([__name__])
        sizes = [len(c) for c in np.array_split(np.arange(n), num_workers)]
        self.owner: list[tuple[int, int]] = []  # env index -> (worker, index in that worker)
        self.pipes: list[Any] = []
        self.processes: list[Any] = []
        self._finalizer = weakref.finalize(self, _shutdown, self.processes, self.pipes)
        wrapped = CloudpickleWrapper(env_fn)
        for w, size in enumerate(sizes):
            parent, child = ctx.Pipe()
            process = ctx.Process(
                target=_worker,
                args=(child, parent, wrapped, size, keep_dict_obs, driver_type),
                daemon=True,
            )
            process.start()
            child.close()
            self.pipes.append(parent)
            self.processes.append(process)
            self.owner.extend((w, j) for j in range(size))
        specs = [self._receive(w) for w in range(len(self.pipes))]
        self._spec = specs[0]

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def spec(self) -> GameSpec:
        return self._spec

    def _receive(self, w: int) -> Any:
        try:
            status, payload = self.pipes[w].recv()
        except (EOFError, OSError, ConnectionResetError) as error:
            code = self.processes[w].exitcode
            raise RuntimeError(
                f"SelfPlayVecEnv worker {w} (pid {self.processes[w].pid}) died (exit code {code}); "
                "check that the game constructor works in a fresh process (and that it is "
                "importable there), or use num_workers=0."
            ) from error
        if status == "error":
            error, text = payload
            raise type(error)(*error.args) if _simple(error) else error from RuntimeError(
                f"in SelfPlayVecEnv worker {w}:\n{text}"
            )
        return payload

    def _ask(self, w: int, command: str, *payload: Any) -> Any:
        self.pipes[w].send((command, payload))
        return self._receive(w)

    def run(self, items: Sequence[tuple]) -> list[Status]:
        per_worker: dict[int, list[tuple]] = {}
        where: list[tuple[int, int]] = []
        for item in items:
            w, j = self.owner[item[1]]
            batch = per_worker.setdefault(w, [])
            where.append((w, len(batch)))
            batch.append((item[0], j, *item[2:]))
        for w, batch in per_worker.items():
            self.pipes[w].send(("run", (batch,)))
        results: dict[int, list[Status]] = {}
        failure: BaseException | None = None
        for w in per_worker:  # receive from every worker, even after a failure, to stay in sync
            try:
                results[w] = self._receive(w)
            except Exception as error:  # noqa: BLE001
                failure = failure or error
        if failure is not None:
            raise failure
        return [results[w][k] for w, k in where]

    def get_attr(self, i: int, name: str) -> Any:
        w, j = self.owner[i]
        return self._ask(w, "get_attr", j, name)

    def set_attr(self, i: int, name: str, value: Any) -> None:
        w, j = self.owner[i]
        self._ask(w, "set_attr", j, name, value)

    def call(self, i: int, name: str, args: tuple, kwargs: dict) -> Any:
        w, j = self.owner[i]
        return self._ask(w, "call", j, name, args, kwargs)

    def stage_game(self, i: int, game_kwargs: dict[str, Any]) -> None:
        w, j = self.owner[i]
        self._ask(w, "stage_game", j, game_kwargs)

    def unstage_game(self, i: int) -> None:
        w, j = self.owner[i]
        self._ask(w, "unstage_game", j)

    def close(self) -> None:
        self._finalizer()


def _simple(error: BaseException) -> bool:
    """Whether ``error`` can be rebuilt from its args (so it can be raised with our context)."""
    try:
        type(error)(*error.args)
        return True
    except Exception:  # noqa: BLE001
        return False
