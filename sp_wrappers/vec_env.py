"""``SelfPlayVecEnv``: many copies of a PettingZoo game as one SB3 ``VecEnv``, opponents batched.

This module holds :class:`SelfPlayVecEnv` and :func:`make_selfplay_vec_env`.

Each env copy behaves exactly like a :class:`~sp_wrappers.SelfPlayEnv` seeded the same way (same
observations, rewards, dones and ``info["selfplay"]``), but opponent moves are not answered one game
at a time: at every inner step, the opponent seats of all copies that must act and face the same
policy are stacked and answered by *one* ``act`` call (one forward pass for a snapshot). Turn-based
games loop until every copy awaits the learner again; simultaneous-move games (PettingZoo Parallel
envs, converted to AEC) take the same path.

With ``num_workers > 0`` the games themselves run in worker processes (for slow games such as
Atari) while opponent inference stays batched in the main process. Workers stop on ``close()``,
when a ``with`` block exits (also on an exception), and at interpreter exit.
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import (
    CloudpickleWrapper,
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from ._opponents import OpponentSlots, as_opponent_source
from ._seats import (
    OutcomeFn,
    SeatDriver,
    as_aec_env,
    check_illegal_action_mode,
    check_learner_action,
    episode_outcome,
    seat_spaces,
)
from .env import (
    _MAX_EMPTY_GAMES,
    GameSeeds,
    SeatChooser,
    _zeros,
    learner_action,
    pop_learner_seat,
    resolve_learner_seats,
    with_seat_spaces,
    wrapper_generator,
)
from .policies import (
    RandomPolicy,
    check_opponent_action,
    choose_from_scores,
    is_policy,
    stack_observations,
)

__all__ = ["SelfPlayVecEnv", "make_selfplay_vec_env"]

_RESET, _PLAY = 0, 1


# ------------------------------------------------------------------------------------------------
# The game side: games and their seat drivers (in this process or in a worker)
# ------------------------------------------------------------------------------------------------


@dataclass
class _Status:
    """Where one game stands after an operation: an opponent to answer, or the learner's view.

    ``seat`` is the opponent seat that must act (``observation``/``mask`` are its own), or
    ``None`` when the learner must act or its episode is over (``observation`` is then the
    learner's, ``None`` when its agent left the game; ``reward`` is the learner's pending reward).
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


@dataclass
class _GameSpec:
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


def _advance(driver: SeatDriver, pop: bool) -> _Status:
    """Advance ``driver`` to its next decision and describe it."""
    turn = driver.next_turn()
    if turn is not None:
        return _Status(turn.seat, turn.observation, turn.action_mask)
    reward = driver.pop_reward() if pop else driver.pending_reward
    if driver.learner_done:
        try:
            obs = driver.learner_observation()
        except (KeyError, AttributeError):  # the learner's agent was removed from the game
            obs = None
        return _Status(
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
    mask = driver.learner_mask()
    if mask is None:
        mask = driver.all_actions_mask(driver.learner)
    return _Status(None, driver.learner_observation(), mask, reward=reward)


class _Games:
    """A list of games with their seat drivers; answers batches of reset/play operations."""

    def __init__(self, env_fn: Callable[[], Any], n: int, keep_dict_obs: bool) -> None:
        self.games = [as_aec_env(env_fn()) for _ in range(n)]
        self.drivers = [SeatDriver(game, keep_dict_obs=keep_dict_obs) for game in self.games]

    def spec(self) -> _GameSpec:
        game = self.games[0]
        agents = list(game.possible_agents)
        return _GameSpec(
            agents,
            {a: game.observation_space(a) for a in agents},
            {a: game.action_space(a) for a in agents},
            getattr(game, "render_mode", None),
            dict(getattr(game, "metadata", {}) or {}),
        )

    def run(self, items: Sequence[tuple]) -> list[_Status]:
        """``(_RESET, i, seat, seed, options)`` or ``(_PLAY, i, action, pop)`` per item."""
        out = []
        for item in items:
            driver = self.drivers[item[1]]
            if item[0] == _RESET:
                driver.reset(item[2], seed=item[3], options=item[4])
                out.append(_advance(driver, False))
            else:
                driver.play(item[2])
                out.append(_advance(driver, item[3]))
        return out

    def get_attr(self, i: int, name: str) -> Any:
        return getattr(self.games[i], name)

    def set_attr(self, i: int, name: str, value: Any) -> None:
        setattr(self.games[i], name, value)

    def call(self, i: int, name: str, args: tuple, kwargs: dict) -> Any:
        return getattr(self.games[i], name)(*args, **kwargs)

    def close(self) -> None:
        for game in self.games:
            game.close()


def _worker(conn: Any, parent_conn: Any, env_fn: CloudpickleWrapper, n: int, keep: bool) -> None:
    """A worker process's loop: build ``n`` games, answer commands until ``close`` or EOF."""
    parent_conn.close()
    games = None
    try:
        games = _Games(env_fn.var, n, keep)
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


class _WorkerGames:
    """The same operations as :class:`_Games`, with the games split over worker processes."""

    def __init__(
        self,
        env_fn: Callable[[], Any],
        n: int,
        num_workers: int,
        keep_dict_obs: bool,
        start_method: str | None,
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
                target=_worker, args=(child, parent, wrapped, size, keep_dict_obs), daemon=True
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

    def spec(self) -> _GameSpec:
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

    def run(self, items: Sequence[tuple]) -> list[_Status]:
        per_worker: dict[int, list[tuple]] = {}
        where: list[tuple[int, int]] = []
        for item in items:
            w, j = self.owner[item[1]]
            batch = per_worker.setdefault(w, [])
            where.append((w, len(batch)))
            batch.append((item[0], j, *item[2:]))
        for w, batch in per_worker.items():
            self.pipes[w].send(("run", (batch,)))
        results: dict[int, list[_Status]] = {}
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

    def close(self) -> None:
        self._finalizer()


def _simple(error: BaseException) -> bool:
    """Whether ``error`` can be rebuilt from its args (so it can be raised with our context)."""
    try:
        type(error)(*error.args)
        return True
    except Exception:  # noqa: BLE001
        return False


# ------------------------------------------------------------------------------------------------
# The main-process side of one env copy: seat, opponents, random stream, results
# ------------------------------------------------------------------------------------------------


class _EnvCopy:
    """One env copy as the main process sees it: what a ``SelfPlayEnv`` holds besides the game.

    ``get_attr``/``env_method`` on the vector env look here first (``action_masks``,
    ``sync_latest_weights``, ``learner_seats``, ``opponent_source``, ``np_random``, ...).
    """

    def __init__(self, owner: SelfPlayVecEnv, index: int, opponent: Any) -> None:
        spec = owner.game_spec
        self.index = index
        self.learner_mode = owner.learner_mode
        self.learner_seats = owner.learner_seats
        self.observation_space = owner.observation_space
        self.action_space = owner.action_space
        self.keep_dict_obs = owner.keep_dict_obs
        self.outcome_fn = owner.outcome_fn
        self.render_mode = spec.render_mode
        self.metadata = dict(spec.metadata)
        self._default_opponents: dict[str, RandomPolicy] | None = None
        if opponent is None:
            self._default_opponents = owner._default_opponents
            opponent = self._default_opponents[self.learner_seats[0]]
        self.opponent_source = as_opponent_source(opponent)
        self.slots = OpponentSlots(self.opponent_source)
        self.seat_policies: dict[str, Any] = {}
        self.learner = self.learner_seats[0]
        self._np_random: np.random.Generator | None = None
        self.seat_chooser = SeatChooser(self.learner_seats, self.learner_mode)
        self._owner = weakref.proxy(owner)
        # the episode being started or played
        self.phase = _RESET
        self.status: _Status | None = None
        self._forced_seat: str | None = None
        self._reset_options: dict | None = None
        self._game_seed: int | None = None
        self._game_seeds = GameSeeds()
        self._empty_games = 0

    @property
    def np_random(self) -> np.random.Generator:
        """This copy's generator: learner seats, opponent draws, opponents' random choices."""
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    # -- SelfPlayEnv's hooks, per copy -------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """The learner's current legal actions (all ``True`` for games without masks)."""
        mask = None if self.status is None else self.status.mask
        if mask is None:
            raise TypeError("action_masks() needs a Discrete action space (and a reset env).")
        return mask

    def sync_latest_weights(self, version: int, state: Mapping[str, Any]) -> None:
        """Give this copy's opponent source the learner's newest weights."""
        sync = getattr(self.opponent_source, "sync_latest_weights", None)
        if sync is not None:
            sync(version, state)
            self._owner._place(getattr(self.opponent_source, "latest", None))

    def episode_summary(self, status: _Status) -> dict[str, Any]:
        """What ``info["selfplay"]`` holds at the end of the learner's episode."""
        opponents = {seat: p.policy_id for seat, p in self.seat_policies.items()}
        returns = status.returns or {}
        summary = {
            "opponent": next(iter(opponents.values())),
            "opponents": opponents,
            "outcome": episode_outcome(
                returns, self.learner, self.outcome_fn, status.illegal_action
            ),
            "seat": self.learner,
            "return": returns.get(self.learner, 0.0),
            "returns": dict(returns),
            "length": status.length,
        }
        if status.illegal_action is not None:
            summary["illegal_action"] = status.illegal_action
        return summary

    # -- the episode's life cycle (mirrors SelfPlayEnv.reset / step) -------------------------------
    def begin_reset(self, seed: int | None, options: dict | None) -> tuple:
        if seed is not None:
            self._np_random = wrapper_generator(seed)
            self.seat_chooser.restart()
        options = dict(options or {})
        forced = pop_learner_seat(options, self.learner_seats)
        self._forced_seat = forced
        self._reset_options = options or None
        self._game_seed = self._game_seeds.next(seed)
        self._empty_games = 0
        return self.start_game()

    def start_game(self) -> tuple:
        """Draw the seat and line-up of a new game; the game-side reset operation to run."""
        owner = self._owner
        self.phase = _RESET
        seat = self._forced_seat or self.seat_chooser.next(self.np_random)
        self.learner = seat
        opponent_seats = [a for a in owner.game_spec.possible_agents if a != seat]
        lineup = self.slots.start_episode(len(opponent_seats), self.np_random)
        if self._default_opponents is not None:
            lineup = [self._default_opponents[a] for a in opponent_seats]
        self.seat_policies = with_seat_spaces(
            dict(zip(opponent_seats, lineup, strict=True)), owner._action_spaces
        )
        self.slots.check_lineup(self.seat_policies, owner._opponent_spaces)
        for policy in self.seat_policies.values():
            owner._place(policy)
        return (_RESET, self.index, seat, self._game_seed, self._reset_options)

    def restart_empty_game(self) -> tuple:
        """The game ended before the learner's first turn: play another (as SelfPlayEnv does)."""
        self._empty_games += 1
        if self._empty_games >= _MAX_EMPTY_GAMES:
            raise RuntimeError(
                f"{_MAX_EMPTY_GAMES} games in a row ended before seat {self.learner!r} could act; "
                "check the game's turn order or pick another learner seat."
            )
        self._game_seed = self._game_seeds.next(None)
        return self.start_game()

    def begin_step(self, action: Any) -> tuple:
        self.phase = _PLAY
        self.slots.count_step()
        return (_PLAY, self.index, action, True)


# ------------------------------------------------------------------------------------------------
# Batched random draws that reproduce per-env draws
# ------------------------------------------------------------------------------------------------


class _RowGenerators:
    """A stand-in for ``np.random.Generator`` whose row ``i`` of a batched draw comes from
    generator ``i``, exactly as if that env's policy had been called alone with ``n = 1``.

    Draws whose ``size`` has the batch as its first dimension (``random``, ``integers``,
    ``uniform``, ``normal``, ... as every policy here uses them) are split by row; any other draw
    comes from the first row's generator.
    """

    _SIZE_POSITION = {
        "random": 0,
        "standard_normal": 0,
        "standard_exponential": 0,
        "standard_gamma": 1,
        "exponential": 1,
        "choice": 1,
        "integers": 2,
        "uniform": 2,
        "normal": 2,
        "gumbel": 2,
        "logistic": 2,
        "beta": 2,
        "binomial": 2,
    }

    def __init__(self, generators: Sequence[np.random.Generator]) -> None:
        self._generators = list(generators)

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """The common case (every policy here draws this way), without the generic dispatch."""
        shape = (size,) if isinstance(size, int | np.integer) else size
        if out is not None or not shape or shape[0] != len(self._generators):
            return self._generators[0].random(size, dtype, out)
        rest = tuple(shape[1:])
        return np.stack([g.random(rest, dtype) for g in self._generators])

    def __getattr__(self, name: str) -> Any:
        first = getattr(self._generators[0], name)
        position = self._SIZE_POSITION.get(name)
        if position is None or not callable(first):
            return first
        n = len(self._generators)

        def draw(*args: Any, **kwargs: Any) -> Any:
            in_kwargs = "size" in kwargs
            if in_kwargs:
                size = kwargs["size"]
            else:
                size = args[position] if len(args) > position else None
            shape = (size,) if isinstance(size, int | np.integer) else size
            if shape is None or len(shape) == 0 or shape[0] != n:
                return first(*args, **kwargs)
            row = (1, *tuple(shape)[1:])
            rows = []
            for generator in self._generators:
                method = getattr(generator, name)
                if in_kwargs:
                    rows.append(method(*args, **{**kwargs, "size": row}))
                else:
                    rows.append(method(*args[:position], row, *args[position + 1 :], **kwargs))
            return np.concatenate(rows, axis=0)

        return draw


class _FastSB3:
    """Answers for ``SB3Policy`` opponents over actor-critic networks (PPO, A2C, MaskablePPO) on
    flat observations, without the per-call overhead of building torch distributions.

    It computes the same logits (in numpy for SB3's standard MLP on CPU, else with the network's
    own torch modules), normalised the same way, and samples exactly as ``SB3Policy.act`` does.
    Each network class is checked once against ``SB3Policy.act`` (same actions, same random
    draws); a class that differs, and every other kind of policy, goes through ``policy.act``.
    """

    def __init__(self) -> None:
        self._verified: dict[tuple[type, ...], bool] = {}
        self._plans: weakref.WeakKeyDictionary[Any, tuple] = weakref.WeakKeyDictionary()

    def _numpy_plan(self, network: Any, device: Any) -> list[tuple] | None:
        """For SB3's standard MLP actor on CPU (flatten, Linear/Tanh/ReLU layers, Linear head):
        the layers as numpy views of the weights, which follow in-place weight updates (the
        sampler's latest weights). ``None`` for anything else, which takes the torch path."""
        try:
            cached = self._plans.get(network)
        except TypeError:
            return None
        if cached is not None:
            tensors, pointers, plan = cached
            # moving a module (``.to``) gives every weight new storage; loads copy in place
            if not tensors or tensors[0].data_ptr() == pointers[0]:
                return plan
        plan = _build_numpy_plan(network, device)
        tensors = [t for step in (plan or ()) for t in step[3:]]
        self._plans[network] = (tensors, [t.data_ptr() for t in tensors], plan)
        return plan

    def route(self, policy: Any, obs: Any, masks: np.ndarray | None) -> Any:
        """How to answer for ``policy``: its numpy plan (a list), ``"torch"``, or ``None`` for
        ``policy.act``. The first use of each kind of network is checked against its own act."""
        from .policies import SB3Policy

        if type(policy) is not SB3Policy or not isinstance(obs, np.ndarray):
            return None
        network = policy.policy
        plan = self._numpy_plan(network, policy.device)
        kind = (type(network), plan is not None)
        verified = self._verified.get(kind)
        if verified is None:
            verified = self._applies(policy) and self._agrees(policy, obs, masks, plan)
            self._verified[kind] = verified
        if not verified:
            return None
        return "torch" if plan is None else plan

    def act(self, policy: Any, obs: Any, masks: np.ndarray | None, rng: Any) -> np.ndarray | None:
        """The policy's actions, or ``None`` when the fast path does not apply."""
        route = self.route(policy, obs, masks)
        if route is None:
            return None
        return self._act(policy, obs, masks, rng, None if route == "torch" else route)

    @staticmethod
    def sample_merged(parts: list[tuple], twice: bool) -> np.ndarray:
        """Actions for several numpy-plan groups at once, in the order of their rows.

        ``parts`` holds ``(plan, observations, masks, deterministic, generators, members)`` per
        group. Each group's logits come from its own plan; normalising, then masking and sampling
        (``choose_from_scores``, as everywhere) run once over all rows. Row by row these are the
        same operations, and the same random draws from each row's generator, as ``_act``, so
        every row gets the same action as ``SB3Policy.act`` would give it alone."""
        blocks = [_numpy_logits(part[0], part[1]) for part in parts]
        logits = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
        logits = logits - _logsumexp(logits)  # as torch's Categorical
        if twice:  # sb3-contrib's MaskableCategorical normalises again
            logits = logits - _logsumexp(logits)
        scores = logits.astype(np.float64)
        masks = None
        if any(part[2] is not None for part in parts):
            filled = [
                np.ones(b.shape, dtype=bool) if p[2] is None else p[2]
                for b, p in zip(blocks, parts, strict=True)
            ]
            masks = filled[0] if len(filled) == 1 else np.concatenate(filled)
        generators = [g for part in parts if not part[3] for g in part[4]]
        rng = None
        if generators:
            rng = generators[0] if len(generators) == 1 else _RowGenerators(generators)
        if not generators or len(generators) == len(scores):  # all rows argmax, or all sampled
            return choose_from_scores(scores, masks, rng is None, rng)
        actions = choose_from_scores(scores, masks, True, None)
        sampled = np.repeat([not p[3] for p in parts], [len(b) for b in blocks])
        row_masks = None if masks is None else masks[sampled]
        actions[sampled] = choose_from_scores(scores[sampled], row_masks, False, rng)
        return actions

    @staticmethod
    def _applies(policy: Any) -> bool:
        from stable_baselines3.common.preprocessing import is_image_space

        network = policy.policy
        space = network.observation_space
        return (
            all(
                hasattr(network, name)
                for name in ("mlp_extractor", "action_net", "pi_features_extractor")
            )
            and getattr(network, "q_net", None) is None
            and isinstance(network.action_space, spaces.Discrete)
            and isinstance(space, spaces.Box)
            and not is_image_space(space)
        )

    def _agrees(
        self, policy: Any, obs: np.ndarray, masks: np.ndarray | None, plan: list[tuple] | None
    ) -> bool:
        try:
            expected_rng, fast_rng = np.random.default_rng(7), np.random.default_rng(7)
            expected = np.asarray(policy.act(obs, masks, expected_rng))
            fast = self._act(policy, obs, masks, fast_rng, plan)
        except Exception:  # noqa: BLE001 - any surprise: keep the general path
            return False
        return (
            np.array_equal(expected, fast)
            and expected_rng.bit_generator.state == fast_rng.bit_generator.state
        )

    def _act(
        self,
        policy: Any,
        obs: np.ndarray,
        masks: np.ndarray | None,
        rng: Any,
        plan: list[tuple] | None,
    ) -> np.ndarray:
        import torch

        network = policy.policy
        if plan is not None:
            logits = _numpy_logits(plan, obs)
            logits = logits - _logsumexp(logits)  # as torch's Categorical
            if _normalises_twice(network):  # sb3-contrib's MaskableCategorical normalises again
                logits = logits - _logsumexp(logits)
            scores = logits.astype(np.float64)
        else:
            with torch.no_grad():
                logits = _actor_logits(network, obs, policy.device)
                logits = logits - logits.logsumexp(dim=-1, keepdim=True)
                if _normalises_twice(network):
                    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            scores = logits.cpu().numpy().astype(np.float64)
        return choose_from_scores(scores, masks, policy.deterministic, rng)


def _actor_logits(network: Any, obs: np.ndarray, device: Any) -> Any:
    """``action_net(mlp_extractor.forward_actor(features))`` with the fewest torch calls: the
    standard flatten extractor and MLP are run layer by layer (same operations, same numbers)."""
    import torch
    from stable_baselines3.common.policies import BaseModel
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

    space = network.observation_space
    extractor = network.pi_features_extractor
    if type(extractor) is FlattenExtractor:  # preprocess_obs on a Box is .float(), then flatten
        flat = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
        features = torch.from_numpy(np.ascontiguousarray(flat)).to(device)
    else:
        tensor = torch.as_tensor(obs.reshape((-1, *space.shape)), device=device)
        features = BaseModel.extract_features(network, tensor, extractor)
    extractor = network.mlp_extractor
    if type(extractor) is MlpExtractor and type(extractor.policy_net) is torch.nn.Sequential:
        for layer in extractor.policy_net:
            features = layer.forward(features)
    else:
        features = extractor.forward_actor(features)
    return network.action_net.forward(features)


def _build_numpy_plan(network: Any, device: Any) -> list[tuple] | None:
    import torch
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

    if torch.device(device).type != "cpu":
        return None
    if type(network.pi_features_extractor) is not FlattenExtractor:
        return None
    extractor = network.mlp_extractor
    if type(extractor) is not MlpExtractor or type(extractor.policy_net) is not torch.nn.Sequential:
        return None
    plan: list[tuple] = []
    for layer in [*extractor.policy_net, network.action_net]:
        if type(layer) is torch.nn.Linear and layer.bias is not None:
            weight, bias = layer.weight, layer.bias  # kept to notice weights moved or replaced
            plan.append(("linear", weight.detach().numpy().T, bias.detach().numpy(), weight, bias))
        elif type(layer) is torch.nn.Tanh:
            plan.append(("tanh",))
        elif type(layer) is torch.nn.ReLU:
            plan.append(("relu",))
        else:
            return None
    if plan[-1][0] != "linear":
        return None
    return plan


def _numpy_logits(plan: list[tuple], obs: np.ndarray) -> np.ndarray:
    """The actor's logits in float32 numpy: a few microseconds where torch's per-call overhead
    costs tens (numbers agree with torch's to float rounding)."""
    x = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
    for step in plan:
        if step[0] == "linear":
            x = x @ step[1]
            x += step[2]
        elif step[0] == "tanh":
            np.tanh(x, out=x)
        else:
            np.maximum(x, 0.0, out=x)
    return x


def _logsumexp(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=-1, keepdims=True)
    return np.log(np.exp(x - top).sum(axis=-1, keepdims=True)) + top


def _normalises_twice(network: Any) -> bool:
    dist = getattr(network, "action_dist", None)
    return type(dist).__module__.startswith("sb3_contrib")


def _batch_key(policy: Any) -> tuple:
    """Policies with equal keys answer as one: the same object, or SB3 wrappers around the same
    network acting the same way (the archive hands out such copies for ``deterministic``)."""
    network = getattr(policy, "policy", None)
    if network is not None and hasattr(policy, "deterministic") and hasattr(network, "forward"):
        return ("network", id(network), type(policy), bool(policy.deterministic))
    return ("object", id(policy))


# ------------------------------------------------------------------------------------------------
# The vector env
# ------------------------------------------------------------------------------------------------


class SelfPlayVecEnv(VecEnv):
    """``n_envs`` copies of a PettingZoo game as one SB3 ``VecEnv``, opponents answered in batches.

    Every copy behaves like a :class:`~sp_wrappers.SelfPlayEnv` (same spaces, seats, swap schedule,
    rewards and ``info["selfplay"]``; copy ``i`` reset with seed ``s + i`` plays exactly as a
    ``SelfPlayEnv`` reset with that seed). Opponent seats that must act at the same time and face
    the same policy (the same object, or the same snapshot network) are answered by one batched
    ``act`` call; each row still draws its randomness from its own copy's generator.
    ``SB3Policy`` opponents over actor-critic networks skip ``act`` for a leaner path that computes
    the same logits (SB3's standard MLP in numpy, on views of the weights) and samples the same
    way; it is checked against ``act`` on first use. Batched and single forward passes agree to
    float rounding, so trajectories match ``SelfPlayEnv``'s except at exact ties.

    The VecEnv contract holds as in ``DummyVecEnv``: auto-reset with
    ``infos[i]["terminal_observation"]`` and ``"TimeLimit.truncated"``, ``reset_infos``,
    ``seed``/``set_options`` for the next reset, ``env_method``/``get_attr``/``set_attr``
    (looked up on the copy — ``action_masks``, ``sync_latest_weights``, ``opponent_source``,
    ``learner_seats``, ... — then on the PettingZoo game itself, in its worker if any), so
    ``MaskablePPO``, ``VecMonitor``, ``VecNormalize``, ``VecFrameStack`` and
    :class:`~sp_wrappers.SelfPlayCallback` work unchanged;
    ``env_method("sync_latest_weights", ...)`` reaches each distinct opponent source once.

    :param env_fn: a function returning a fresh PettingZoo ``AECEnv`` or ``ParallelEnv``, e.g.
        ``tictactoe_v3.env``; called once per copy (in the workers when ``num_workers > 0``, so it
        must then be picklable by cloudpickle).
    :param n_envs: number of game copies.
    :param learner: the learner's agent name, ``"random"`` or ``"alternate"`` (see ``SelfPlayEnv``).
    :param opponent: as in ``SelfPlayEnv`` (a policy, a callable returning one per episode, or an
        ``OpponentSampler``), shared by every copy — each copy still draws its own opponents with
        its own generator and swap schedule — or a list with one such entry per copy.
    :param keep_dict_obs: give the learner PettingZoo's ``{"observation", "action_mask"}`` dict.
    :param outcome_fn: ``fn(returns, learner_seat) -> float`` in [0, 1] (see ``SelfPlayEnv``).
    :param illegal_action: ``"loss"`` or ``"raise"``: what a learner action its mask forbids does
        (see ``SelfPlayEnv``).
    :param env_kwargs: keyword arguments for ``env_fn``.
    :param num_workers: 0 steps every game in this process; ``k > 0`` spreads the copies over ``k``
        worker processes (worth it when one game step costs more than about 50 microseconds, as
        for Atari). Opponent inference always runs in this process.
    :param device: torch device for opponent inference. SB3-backed opponents (``SB3Policy``,
        archive snapshots, the sampler's latest weights) on another device are moved to this one
        when first drawn (the archive's cached copy moves too). ``None`` leaves them where they are.
    :param start_method: multiprocessing start method for the workers (default ``"forkserver"``
        where available, else ``"spawn"``).

    >>> from pettingzoo.classic import tictactoe_v3
    >>> env = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4, learner="player_1")
    >>> _ = env.seed(0)
    >>> obs = env.reset()
    >>> obs.shape, env.action_masks().shape
    ((4, 3, 3, 2), (4, 9))
    >>> dones = np.zeros(4, dtype=bool)
    >>> while not dones[0]:
    ...     actions = np.array([np.flatnonzero(m)[0] for m in env.action_masks()])
    ...     obs, rewards, dones, infos = env.step(actions)
    >>> sorted(infos[0]["selfplay"])
    ['length', 'opponent', 'opponents', 'outcome', 'return', 'returns', 'seat']
    >>> "terminal_observation" in infos[0]
    True
    >>> env.close()
    """

    def __init__(
        self,
        env_fn: Callable[..., Any],
        n_envs: int = 1,
        learner: str = "random",
        opponent: Any = None,
        keep_dict_obs: bool = False,
        outcome_fn: OutcomeFn | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        num_workers: int = 0,
        device: str | None = "cpu",
        start_method: str | None = None,
        illegal_action: str = "loss",
    ) -> None:
        _check_env_fn(env_fn)
        self.illegal_action = check_illegal_action_mode(illegal_action)
        if not isinstance(n_envs, int | np.integer) or n_envs < 1:
            raise ValueError(f"n_envs must be a positive integer, got {n_envs!r}.")
        if not isinstance(num_workers, int | np.integer) or num_workers < 0:
            raise ValueError(
                f"num_workers must be 0 (games in this process) or a positive number of worker "
                f"processes, got {num_workers!r}."
            )
        n_envs, num_workers = int(n_envs), min(int(num_workers), int(n_envs))
        opponents = _per_copy_opponents(opponent, n_envs)
        if env_kwargs:
            env_fn = _WithKwargs(env_fn, dict(env_kwargs))
        self.num_workers = num_workers
        self.device = device
        self.closed = False
        self.games: _Games | _WorkerGames
        if num_workers:
            self.games = _WorkerGames(env_fn, n_envs, num_workers, keep_dict_obs, start_method)
        else:
            self.games = _Games(env_fn, n_envs, keep_dict_obs)
        try:
            self._setup(n_envs, learner, opponents, keep_dict_obs, outcome_fn)
        except BaseException:
            self.games.close()
            raise

    def _setup(
        self,
        n_envs: int,
        learner: str,
        opponents: list[Any],
        keep_dict_obs: bool,
        outcome_fn: OutcomeFn | None,
    ) -> None:
        spec = self.game_spec = self.games.spec()
        self.keep_dict_obs = keep_dict_obs
        self.outcome_fn = outcome_fn
        self.learner_mode = learner
        self.learner_seats = resolve_learner_seats(spec, learner, keep_dict_obs)
        observation_space, action_space = seat_spaces(spec, self.learner_seats[0], keep_dict_obs)
        self._action_spaces = dict(spec.action_spaces)
        self._plain_discrete_seats = {
            seat
            for seat, space in self._action_spaces.items()
            if type(space) is spaces.Discrete and space.start == 0
        }
        self._seat_spaces = {a: seat_spaces(spec, a, keep_dict_obs) for a in spec.possible_agents}
        # seats with equal spaces may share a batch
        kinds: list[tuple[spaces.Space, spaces.Space]] = []
        self._seat_kind: dict[str, int] = {}
        for agent, pair in self._seat_spaces.items():
            if pair not in kinds:
                kinds.append(pair)
            self._seat_kind[agent] = kinds.index(pair)
        self._default_opponents = {
            a: RandomPolicy(spec.action_spaces[a]) for a in spec.possible_agents
        }
        self.observation_space, self.action_space = observation_space, action_space
        self.copies = [_EnvCopy(self, i, opponents[i]) for i in range(n_envs)]
        self._actions: np.ndarray | None = None
        self._fast = _FastSB3()
        self._placed: weakref.WeakSet[Any] = weakref.WeakSet()
        super().__init__(n_envs, observation_space, action_space)

    # -- VecEnv API ------------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Reset every copy (with the seeds/options set by ``seed``/``set_options``, then none)."""
        self._check_open()
        items = [
            copy.begin_reset(self._seeds[i], self._options[i]) for i, copy in enumerate(self.copies)
        ]
        self._drive(items)
        for i, copy in enumerate(self.copies):
            self.reset_infos[i] = {"seat": copy.learner}
        self._reset_seeds()
        self._reset_options()
        return self._stack([copy.status.observation for copy in self.copies])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        self._check_open()
        actions, self._actions = self._actions, None
        if actions is None:
            raise RuntimeError("step_wait() called without step_async(actions).")
        if len(actions) != self.num_envs:
            raise ValueError(
                f"Got {len(actions)} actions for {self.num_envs} envs; pass one action per env."
            )
        for copy in self.copies:
            if copy.status is None or copy.status.seat is not None:
                raise RuntimeError("step() called before reset(); call reset() first.")
        checked = [learner_action(a, self.action_space) for a in actions]
        if self.illegal_action == "raise":  # ("loss" is applied by each game's SeatDriver)
            start = getattr(self.action_space, "start", 0)
            for copy, a in zip(self.copies, checked, strict=True):
                check_learner_action(a, copy.status.mask, copy.learner, int(start))
        self._results: list[tuple | None] = [None] * self.num_envs
        self._drive([copy.begin_step(a) for copy, a in zip(self.copies, checked, strict=True)])
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = []
        for i, copy in enumerate(self.copies):
            result = self._results[i]
            if result is None:  # the episode goes on
                status = copy.status
                rewards[i] = status.reward
                infos.append({"seat": copy.learner, "TimeLimit.truncated": False})
            else:
                rewards[i], dones[i], info = result
                infos.append(info)
                self.reset_infos[i] = {"seat": copy.learner}
        self._results = []
        obs = self._stack([copy.status.observation for copy in self.copies])
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """Every copy's legal learner actions, shape ``(n_envs, n_actions)``."""
        return np.stack([copy.action_masks() for copy in self.copies])

    def close(self) -> None:
        """Close every game and stop the worker processes (safe to call twice)."""
        if getattr(self, "closed", True):
            return
        self.closed = True
        self.games.close()

    def __enter__(self) -> SelfPlayVecEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the worker processes (empty without workers)."""
        return list(getattr(self.games, "pids", []))

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            warnings.warn(
                f"The render mode is {self.render_mode}, but get_images() needs 'rgb_array'.",
                stacklevel=2,
            )
            return [None] * self.num_envs
        return [self.games.call(i, "render", (), {}) for i in range(self.num_envs)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each copy (the copy's own, else the PettingZoo game's)."""
        out = []
        for i in self._get_indices(indices):
            copy = self.copies[i]
            if hasattr(copy, attr_name) and not attr_name.startswith("_"):
                out.append(getattr(copy, attr_name))
            else:
                out.append(self.games.get_attr(i, attr_name))
        return out

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute on each copy (where the copy has it), else on the PettingZoo game."""
        for i in self._get_indices(indices):
            copy = self.copies[i]
            if hasattr(copy, attr_name) and not attr_name.startswith("_"):
                setattr(copy, attr_name, value)
                if attr_name == "opponent_source":
                    copy.opponent_source = as_opponent_source(value)
                    copy.slots = OpponentSlots(copy.opponent_source)
            else:
                self.games.set_attr(i, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each copy (its own, else the PettingZoo game's).

        ``sync_latest_weights`` reaches each distinct opponent source once (a sampler shared by
        every copy is synced once per call).
        """
        out = []
        synced: set[int] = set()
        for i in self._get_indices(indices):
            copy = self.copies[i]
            method = getattr(copy, method_name, None) if not method_name.startswith("_") else None
            if method_name == "sync_latest_weights":
                if id(copy.opponent_source) in synced:
                    out.append(None)
                    continue
                synced.add(id(copy.opponent_source))
            if callable(method):
                out.append(method(*method_args, **method_kwargs))
            else:
                out.append(self.games.call(i, method_name, method_args, method_kwargs))
        return out

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Copies are not Gymnasium envs, so no Gymnasium wrapper wraps them."""
        return [False for _ in self._get_indices(indices)]

    # -- the batched game loop -------------------------------------------------------------------
    def _drive(self, items: list[tuple]) -> None:
        """Run game-side operations, then answer opponents in batches until every copy waits for
        the learner. Episodes that end on the way are recorded and restarted (auto-reset) before
        the batch is formed, so a new game's first opponent move joins the current batch."""
        while items:
            turns: list[tuple[_EnvCopy, _Status]] = []
            while items:  # restarts (auto-resets, games that ended before the learner moved)
                running, items = items, []
                for item, status in zip(running, self.games.run(running), strict=True):
                    copy = self.copies[item[1]]
                    copy.status = status
                    if status.seat is not None:
                        turns.append((copy, status))
                    elif status.terminated or status.truncated:
                        if copy.phase == _PLAY:
                            self._finish_episode(copy, status)
                            items.append(copy.begin_reset(None, None))
                        else:
                            items.append(copy.restart_empty_game())
            items = self._answer(turns)

    def _finish_episode(self, copy: _EnvCopy, status: _Status) -> None:
        obs = status.observation
        if obs is None:
            obs = _zeros(self.observation_space)
        info: dict[str, Any] = {"seat": copy.learner, "selfplay": copy.episode_summary(status)}
        info["TimeLimit.truncated"] = status.truncated and not status.terminated
        info["terminal_observation"] = obs
        self._results[copy.index] = (status.reward, True, info)

    def _answer(self, turns: list[tuple[_EnvCopy, _Status]]) -> list[tuple]:
        """One ``act`` call per group of (policy, seat spaces, masked or not)."""
        groups: dict[tuple, list[tuple[_EnvCopy, _Status]]] = {}
        for copy, status in turns:
            policy = copy.seat_policies[status.seat]
            key = (_batch_key(policy), self._seat_kind[status.seat], status.mask is None)
            groups.setdefault(key, []).append((copy, status))
        items: list[tuple] = []
        merged: dict[tuple[int, bool], list[tuple]] = {}  # numpy-plan groups, sampled together
        for members in groups.values():
            first_copy, first = members[0]
            policy = first_copy.seat_policies[first.seat]
            generators = [copy.np_random for copy, _ in members]
            if getattr(policy, "batched", True) is False:  # e.g. an unbatched CallablePolicy
                actions = [
                    policy.act(
                        stack_observations([s.observation]),
                        None if s.mask is None else s.mask[None],
                        g,
                    )[0]
                    for (_, s), g in zip(members, generators, strict=True)
                ]
            else:
                obs = stack_observations([s.observation for _, s in members])
                masks = None if first.mask is None else np.stack([s.mask for _, s in members])
                route = self._fast.route(policy, obs, masks)
                if isinstance(route, list):
                    n_actions = route[-1][2].shape[0]  # the plan ends in action_net's bias
                    key = (n_actions, _normalises_twice(policy.policy))
                    part = (route, obs, masks, policy.deterministic, generators, members)
                    merged.setdefault(key, []).append(part)
                    continue
                rng = generators[0] if len(members) == 1 else _RowGenerators(generators)
                if route == "torch":
                    actions = self._fast._act(policy, obs, masks, rng, None)
                else:
                    actions = policy.act(obs, masks, rng)
                if len(actions) != len(members):
                    raise ValueError(
                        f"Opponent {policy.policy_id!r} returned {len(actions)} actions for "
                        f"{len(members)} observations; act() must return one action per row."
                    )
            items.extend(self._play_items(members, actions))
        for (_, twice), parts in merged.items():
            actions = self._fast.sample_merged(parts, twice).tolist()
            members = [member for part in parts for member in part[5]]
            items.extend(self._play_items(members, actions, legal=True))
        return items

    def _play_items(
        self, members: list[tuple[_EnvCopy, _Status]], actions: Any, legal: bool = False
    ) -> list[tuple]:
        """The game items that play ``actions``, each checked against its seat's space and mask.

        ``legal=True`` (the numpy fast path: indices chosen under the row's mask) skips the check
        where the seat's space is a plain ``Discrete(n)``: such actions are legal by construction.
        """
        items = []
        for (copy, status), action in zip(members, actions, strict=True):
            if not (legal and status.seat in self._plain_discrete_seats):
                own = copy.seat_policies[status.seat]
                action = check_opponent_action(
                    own, action, self._action_spaces[status.seat], status.mask, status.seat
                )
            items.append((_PLAY, copy.index, action, copy.phase == _PLAY))
        return items

    # -- helpers ---------------------------------------------------------------------------------
    def _opponent_spaces(self, seat: str) -> tuple[spaces.Space, spaces.Space]:
        return self._seat_spaces[seat]

    def _place(self, policy: Any) -> None:
        """Move an SB3-backed opponent to ``device`` (once per policy object)."""
        if policy is None or self.device is None or policy in self._placed:
            return
        network = getattr(policy, "policy", None)
        current = getattr(policy, "device", None)
        if network is not None and current is not None and hasattr(network, "to"):
            import torch

            if torch.device(current) != torch.device(self.device):
                network.to(self.device)
                policy.device = self.device
        try:
            self._placed.add(policy)
        except TypeError:  # not weak-referenceable: check again next time
            pass

    def _stack(self, observations: list[Any]) -> VecEnvObs:
        space = self.observation_space
        if isinstance(space, spaces.Dict):
            return {
                key: np.stack([o[key] for o in observations]).astype(sub.dtype, copy=False)
                for key, sub in space.spaces.items()
            }
        stacked = np.stack(observations)
        if space.dtype is not None and stacked.dtype != space.dtype:
            stacked = stacked.astype(space.dtype)
        return stacked

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("This SelfPlayVecEnv is closed; build a new one.")

    def __repr__(self) -> str:
        return (
            f"SelfPlayVecEnv(n_envs={self.num_envs}, learner={self.learner_mode!r}, "
            f"num_workers={self.num_workers})"
        )


class _WithKwargs:
    """``env_fn(**env_kwargs)`` as a picklable zero-argument callable."""

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.fn, self.kwargs = fn, kwargs

    def __call__(self) -> Any:
        return self.fn(**self.kwargs)


def _check_env_fn(env_fn: Any) -> None:
    from pettingzoo.utils.env import AECEnv, ParallelEnv

    if isinstance(env_fn, AECEnv | ParallelEnv):
        raise TypeError(
            f"SelfPlayVecEnv needs a function that builds the game (one per copy), got an env "
            f"instance ({type(env_fn).__name__}). Pass the constructor, e.g. tictactoe_v3.env, or "
            "lambda: pong_v3.env(obs_type='ram')."
        )
    if not callable(env_fn):
        raise TypeError(
            f"env_fn must be a function returning a PettingZoo env, got {type(env_fn).__name__}."
        )


def _per_copy_opponents(opponent: Any, n_envs: int) -> list[Any]:
    if isinstance(opponent, list | tuple) and not is_policy(opponent):
        if len(opponent) != n_envs:
            raise ValueError(
                f"opponent is a list of {len(opponent)} entries but n_envs={n_envs}; pass one "
                "opponent (shared by every copy) or exactly one per copy."
            )
        return list(opponent)
    return [opponent] * n_envs


def make_selfplay_vec_env(
    env_fn: Callable[..., Any],
    n_envs: int = 8,
    seed: int | None = None,
    monitor: bool = True,
    **kwargs: Any,
) -> VecEnv:
    """A :class:`SelfPlayVecEnv`, seeded and (by default) wrapped in ``VecMonitor``.

    The SB3-style shortcut (like ``make_vec_env``): ``VecMonitor`` gives the ``rollout/ep_rew_mean``
    and ``ep_len_mean`` lines of SB3's logger.

    :param env_fn: a function returning a fresh PettingZoo env (see :class:`SelfPlayVecEnv`).
    :param n_envs: number of game copies.
    :param seed: copy ``i`` is reset with seed ``seed + i`` at the first reset; ``None`` leaves it
        unseeded.
    :param monitor: wrap the result in ``VecMonitor``.
    :param kwargs: any other :class:`SelfPlayVecEnv` argument (``learner``, ``opponent``,
        ``num_workers``, ...).

    >>> from pettingzoo.classic import connect_four_v3
    >>> env = make_selfplay_vec_env(connect_four_v3.env, n_envs=2, seed=0)
    >>> env.reset().shape
    (2, 6, 7, 2)
    >>> env.close()
    """
    from stable_baselines3.common.vec_env import VecMonitor

    env: VecEnv = SelfPlayVecEnv(env_fn, n_envs=n_envs, **kwargs)
    if seed is not None:
        env.seed(seed)
    if monitor:
        env = VecMonitor(env)
    return env
