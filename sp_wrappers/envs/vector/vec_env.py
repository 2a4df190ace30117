"""``SelfPlayVecEnv``: many copies of a PettingZoo game as one SB3 ``VecEnv``, opponents batched.

Each env copy behaves exactly like a :class:`~sp_wrappers.SelfPlayEnv` seeded the same way (same
observations, rewards, dones and ``info["selfplay"]``), but opponent moves are not answered one game
at a time: at every inner step, the opponent seats of all copies that must act and face the same
policy are stacked and answered by *one* ``act`` call (one forward pass for a snapshot). Turn-based
games loop until every copy awaits the learner again; simultaneous-move games (PettingZoo Parallel
envs, converted to AEC) take the same path.

With ``num_workers > 0`` the games themselves run in worker processes (for slow games such as
Atari) while opponent inference stays batched in the main process. Workers stop on ``close()``,
when a ``with`` block exits (also on an exception), and at interpreter exit.

The env keeps the VecEnv contract and the game loop, and holds its collaborators, each with its
own state: the games (:mod:`~sp_wrappers.envs.vector.game_workers`, here or in workers), one
:class:`~sp_wrappers.envs.vector.env_copy.EnvCopy` per copy (seat, opponents, random stream,
configuration), the :class:`~sp_wrappers.envs.vector.batching.OpponentBatches` that answer the
opponents (with the numpy fast path of :mod:`~sp_wrappers.envs.vector.fast_path`) and the
:class:`~sp_wrappers.envs.vector.env_copy.OpponentPlacement` that moves opponents to ``device``.
A learner team's env (:mod:`~sp_wrappers.envs.vector.team_vec_env`) subclasses it and shares its
set-up.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from ...core.policies import (
    RandomPolicy,
    is_policy,
)
from ...core.seats import (
    OutcomeFn,
    SeatDriver,
    check_illegal_action_mode,
    check_learner_action,
    seat_spaces,
)
from ...core.teams import TeamLayout
from ...opponents.slots import OPPONENT_DRAWS, as_opponent_source, shared_slots
from ..game_config import RewardFn, check_game_kwargs, check_reward_fn
from ..selfplay_env import (
    learner_action,
    resolve_learner_seats,
    zero_observation,
)
from ..symmetric_view import resolve_symmetries
from .arguments import WithKwargs, check_env_fn, per_copy_opponents
from .batching import OpponentBatches
from .env_copy import CopySettings, EnvCopy, OpponentPlacement
from .game_workers import PLAY, Games, GameSpec, Status, WorkerGames

__all__ = ["SelfPlayVecEnv"]


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
    (looked up on the copy — ``action_masks``, ``sync_latest_weights``, ``drain_episodes``,
    ``opponent_source``, ``learner_seats``, ... — then on the PettingZoo game itself, in its
    worker if any), so
    ``MaskablePPO``, ``VecMonitor``, ``VecNormalize(norm_obs=False)`` and ``SelfPlayCallback`` work
    unchanged (``VecFrameStack`` is refused: see :mod:`sp_wrappers.envs.observation_wrappers`);
    ``env_method("sync_latest_weights", ...)`` reaches each distinct opponent source once.

    :param env_fn: a function returning a fresh PettingZoo ``AECEnv`` or ``ParallelEnv``, e.g.
        ``tictactoe_v3.env``; called once per copy (in the workers when ``num_workers > 0``, so it
        must then be picklable by cloudpickle).
    :param n_envs: number of game copies.
    :param learner: the learner's agent name, ``"random"`` or ``"alternate"`` (see ``SelfPlayEnv``).
    :param opponent: as in ``SelfPlayEnv`` (a policy, a callable returning one per episode, or an
        ``OpponentSampler``), given to every copy, or a list with one such entry per copy.
    :param opponent_draw: ``"per_env"`` (default): each copy draws its own opponents, with its own
        generator and swap schedule, so one rollout meets several opponents at once (more
        opponent diversity per rollout, one forward pass per distinct opponent in play).
        ``"shared"``: every copy faces one line-up between swaps, as under ML-Agents' ghost
        trainer, so one forward pass answers all copies. Its schedule counts all copies together:
        a new line-up after ``n_envs * swap_every`` episodes (or after ``swap_every`` learner steps
        of each copy), so each line-up gets as much play as under per-env draws; copies take it
        up at their next episode start. Needs one ``opponent`` for all copies. Use ``"shared"``
        when opponent inference is a large part of the step (a light learner, many copies, a
        snapshot window drawn from every episode) or to reproduce ML-Agents; keep ``"per_env"``
        when a rollout should mix many opponents (a wide window, PFSP, ``fixed_opponents``).
    :param keep_dict_obs: give the learner PettingZoo's ``{"observation", "action_mask"}`` dict.
    :param outcome_fn: ``fn(returns, learner_seat) -> float`` in [0, 1] (see ``SelfPlayEnv``).
    :param illegal_action: ``"loss"`` or ``"raise"``: what a learner action its mask forbids does
        (see ``SelfPlayEnv``).
    :param env_kwargs: keyword arguments for ``env_fn``. :meth:`set_game_config` rebuilds chosen
        copies with ``env_fn(**env_kwargs, **game_kwargs)`` at their next episode start.
    :param num_workers: 0 steps every game in this process; ``k > 0`` spreads the copies over ``k``
        worker processes (worth it when one game step costs more than about 50 microseconds, as
        for Atari). Opponent inference always runs in this process.
    :param device: torch device for opponent inference. SB3-backed opponents (``SB3Policy``,
        archive snapshots, the sampler's latest weights) on another device are moved to this one
        when first drawn (the archive's cached copy moves too). ``None`` leaves them where they are.
    :param start_method: multiprocessing start method for the workers (default ``"forkserver"``
        where available, else ``"spawn"``).
    :param teams: ``None`` (every agent its own team, as above), ``"prefix"`` or ``{team: [agent,
        ...]}`` (see :class:`~sp_wrappers.TeamLayout`): ``learner`` then names a team and each of
        its agents is its own slot (parameter sharing), so ``num_envs == n_envs * team_size``,
        slot ``g * team_size + k`` being agent ``k`` in game copy ``g`` (``n_games == n_envs``);
        ``opponent`` may be ``{team: source}``. The env is then a ``TeamVecEnv`` (a subclass).
    :param symmetries: play each copy's episodes in a symmetric view of the board, drawn per copy
        at each reset with the copy's generator (see ``SelfPlayEnv``): ``"auto"``, a game name with
        built-ins, or a list of :class:`~sp_wrappers.games.symmetries.Symmetry`, checked against
        the game at construction. The mapping runs in this process (also with workers): the
        learner's observations, ``terminal_observation`` (in the ending episode's view) and
        ``action_masks()`` go out mapped, its actions come back mapped to the game's; opponents
        see the real game. Not with ``teams``.

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
    ['length', 'opponent', 'opponents', 'outcome', 'return', 'returns', 'seat', 'seat_outcomes']
    >>> "terminal_observation" in infos[0]
    True
    >>> env.close()
    """

    #: Each game's seat driver (a learner team's env drives its games with a ``TeamDriver``).
    _driver_type: type[SeatDriver] = SeatDriver
    #: The team layout of a learner team's env (``None``: every agent its own team).
    layout: TeamLayout | None = None
    #: Each copy's main-process side (a learner team's env has its own).
    _copy_type: type[EnvCopy] = EnvCopy
    #: What the deprecated ``SelfPlayVecEnv(teams=...)`` builds; :mod:`.team_vec_env` sets it.
    _team_env_class: type[SelfPlayVecEnv] | None = None

    def __new__(cls, *args: Any, teams: Any = None, **kwargs: Any) -> SelfPlayVecEnv:
        if teams is not None and cls is SelfPlayVecEnv and cls._team_env_class is not None:
            warnings.warn(
                "SelfPlayVecEnv(..., teams=...) is deprecated and goes away in 0.3: build a "
                "learner team's env with sp_wrappers.make_selfplay_vec_env(env_fn, teams=...) "
                "or sp_wrappers.envs.vector.TeamVecEnv(env_fn, teams=...).",
                DeprecationWarning,
                stacklevel=2,
            )
            return super().__new__(cls._team_env_class)
        return super().__new__(cls)

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
        opponent_draw: str = "per_env",
        illegal_action: str = "loss",
        teams: Any = None,
        symmetries: Any = None,
    ) -> None:
        check_env_fn(env_fn)
        self.teams = teams
        if opponent_draw not in OPPONENT_DRAWS:
            raise ValueError(
                f"opponent_draw must be one of {OPPONENT_DRAWS}, got {opponent_draw!r}: 'per_env' "
                "gives each copy its own opponents, 'shared' one line-up for all copies."
            )
        if (
            opponent_draw == "shared"
            and isinstance(opponent, list | tuple)
            and not is_policy(opponent)
        ):
            raise ValueError(
                "opponent_draw='shared' gives every copy the same opponents, so it takes one "
                "opponent (a policy, a callable or an OpponentSampler), not a list per copy."
            )
        self.opponent_draw = opponent_draw
        self.illegal_action = check_illegal_action_mode(illegal_action)
        if not isinstance(n_envs, int | np.integer) or n_envs < 1:
            raise ValueError(f"n_envs must be a positive integer, got {n_envs!r}.")
        if not isinstance(num_workers, int | np.integer) or num_workers < 0:
            raise ValueError(
                f"num_workers must be 0 (games in this process) or a positive number of worker "
                f"processes, got {num_workers!r}."
            )
        n_envs, num_workers = int(n_envs), min(int(num_workers), int(n_envs))
        opponents = per_copy_opponents(opponent, n_envs)
        if env_kwargs:
            env_fn = WithKwargs(env_fn, dict(env_kwargs))
        if symmetries is not None and teams is not None:
            raise ValueError("symmetries= does not work with teams= yet; leave one of them out.")
        self.symmetries = resolve_symmetries(symmetries, env_fn)
        self.env_fn = env_fn  # the game's constructor, for evaluation games (SelfPlayCallback)
        self.num_workers = num_workers
        self.device = device
        self.closed = False
        self.games: Games | WorkerGames
        driver = self._driver_type
        if num_workers:
            self.games = WorkerGames(
                env_fn, n_envs, num_workers, keep_dict_obs, start_method, driver
            )
        else:
            self.games = Games(env_fn, n_envs, keep_dict_obs, driver)
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
        """Everything that needs the game: the learner's seats and spaces, the copies and the
        opponent batches (one set-up for this env and a learner team's: see the hooks
        :meth:`_resolve_learner` and :meth:`_default_opponent_policies`)."""
        spec = self.game_spec = self.games.spec()
        self.keep_dict_obs = keep_dict_obs
        self.outcome_fn = outcome_fn
        self.learner_mode = learner
        self.learner_seats, agents = self._resolve_learner(spec, learner, opponents)
        # one slot per agent the learner plays in each copy (several with a learner team)
        self.n_games, self.team_size = n_envs, len(agents)
        observation_space, action_space = seat_spaces(spec, agents[0], keep_dict_obs)
        self.observation_space, self.action_space = observation_space, action_space
        self._batches = OpponentBatches(spec, keep_dict_obs)
        self._placement = OpponentPlacement(self.device)
        settings = CopySettings(
            possible_agents=list(spec.possible_agents),
            learner_mode=learner,
            learner_seats=self.learner_seats,
            observation_space=observation_space,
            action_space=action_space,
            keep_dict_obs=keep_dict_obs,
            outcome_fn=outcome_fn,
            render_mode=spec.render_mode,
            metadata=spec.metadata,
            default_opponents=self._default_opponent_policies(spec),
            seat_spaces=self._batches.seat_spaces,
            symmetries=self.symmetries,
            layout=self.layout,
        )
        self.copies = [
            self._copy_type(i, opponents[i], settings, self._placement) for i in range(n_envs)
        ]
        if self.opponent_draw == "shared":  # one source (and so one line-up) for every copy
            for copy in self.copies:
                copy.opponent_source = self.copies[0].opponent_source
        self._share_slots()
        self._actions: np.ndarray | None = None
        VecEnv.__init__(self, n_envs * self.team_size, observation_space, action_space)

    def _resolve_learner(
        self, spec: GameSpec, learner: str, opponents: list[Any]
    ) -> tuple[list[str], list[str]]:
        """The seats the learner may play (``learner_seats``), and the agents it plays in one
        copy (one slot each; here its one seat)."""
        seats = resolve_learner_seats(spec, learner, self.keep_dict_obs)
        return seats, [seats[0]]

    def _default_opponent_policies(self, spec: GameSpec) -> dict[str, Any]:
        """The policy of each seat when no opponent is given: random play."""
        return {a: RandomPolicy(spec.action_spaces[a]) for a in spec.possible_agents}

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
        return self._stack([copy.learner_observation() for copy in self.copies])

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
        checked = self._learner_actions(actions)
        if self.symmetries is not None:  # the learner acts in its copy's view
            pairs = zip(self.copies, checked, strict=True)
            checked = [copy.view.action_to_game(a) for copy, a in pairs]
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
                info = {"seat": copy.learner, "TimeLimit.truncated": False}
                rewards[i] = copy.config.transform(copy.status.reward, info)
                infos.append(info)
            else:
                rewards[i], dones[i], info = result
                infos.append(info)
                self.reset_infos[i] = {"seat": copy.learner}
        self._results = []
        obs = self._stack([copy.learner_observation() for copy in self.copies])
        return obs, rewards, dones, infos

    def _learner_actions(self, actions: Any) -> list[Any]:
        """The learner's actions checked against its space, in the form the game expects (an
        integer array for a ``Discrete`` space is checked in one go)."""
        space = self.action_space
        if (
            type(space) is spaces.Discrete
            and isinstance(actions, np.ndarray)
            and actions.dtype.kind in "iu"
            and actions.size == self.num_envs
        ):
            flat = actions.reshape(-1)
            if flat.min() >= space.start and flat.max() < space.start + space.n:
                return flat.tolist()
        return [learner_action(a, space) for a in actions]

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
        """Set an attribute on each copy (where the copy has it), else on the PettingZoo game;
        ``opponent_source`` is ``env_method("set_opponent", value)`` (one source for them all)."""
        if attr_name == "opponent_source":
            value = as_opponent_source(value)
            try:
                for i in self._get_indices(indices):
                    self.copies[i].set_opponent(value)
            finally:
                self._share_slots()
            return
        for i in self._get_indices(indices):
            copy = self.copies[i]
            if hasattr(copy, attr_name) and not attr_name.startswith("_"):
                setattr(copy, attr_name, value)
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
        every copy is synced once per call); ``set_game_config`` is :meth:`set_game_config` for
        each chosen copy; ``set_opponent`` regroups the copies that share draws afterwards.
        """
        chosen = list(self._get_indices(indices))
        if method_name == "set_game_config":  # built where the games live (maybe in workers)
            for i in chosen:
                self._stage_game_configs(*method_args, chosen=[i], **method_kwargs)
            return [None] * len(chosen)
        out = []
        synced: set[int] = set()
        try:
            for i in chosen:
                copy = self.copies[i]
                method = None if method_name.startswith("_") else getattr(copy, method_name, None)
                if method_name == "sync_latest_weights":
                    if id(copy.opponent_source) in synced:
                        out.append(None)
                        continue
                    synced.add(id(copy.opponent_source))
                if callable(method):
                    out.append(method(*method_args, **method_kwargs))
                else:
                    out.append(self.games.call(i, method_name, method_args, method_kwargs))
        finally:
            if method_name == "set_opponent":
                self._share_slots()
        return out

    def set_game_config(
        self, game_kwargs: Mapping[str, Any], indices: VecEnvIndices = None
    ) -> None:
        """Rebuild the chosen copies' games with ``env_fn(**game_kwargs)`` (on top of
        ``env_kwargs``), each at its next episode start, never mid-game; in the workers too.

        The new games are built now (in their workers) and compared with the current ones: a
        configuration that changes an agent's observation or action space raises ``ValueError``
        naming them, and every chosen copy keeps its game. ``info["selfplay"]["config"]`` then
        records ``game_kwargs`` (see :mod:`sp_wrappers.training.env_generator`). Also reached
        through ``env_method("set_game_config", game_kwargs, indices=...)``.

        :param game_kwargs: keyword arguments of ``env_fn`` (JSON-able values), e.g.
            ``{"komi": 5.5}``; ``{}`` rebuilds with ``env_kwargs`` alone.
        :param indices: the copies (default: all).
        """
        self._stage_game_configs(game_kwargs, self._copy_indices(indices))

    def _stage_game_configs(self, game_kwargs: Mapping[str, Any], chosen: list[int]) -> None:
        """:meth:`set_game_config` for the copies ``chosen`` (copy indices), all or none."""
        self._check_open()
        kwargs = check_game_kwargs(game_kwargs)
        staged: list[int] = []
        try:
            for i in chosen:
                self.games.stage_game(i, kwargs)
                staged.append(i)
        except BaseException:
            for i in staged:  # all or nothing
                self.games.unstage_game(i)
                self.copies[i].config.unstage_game()
            raise
        for i in chosen:
            self.copies[i].config.stage_game(kwargs)

    def set_reward_fn(self, fn: RewardFn | None, indices: VecEnvIndices = None) -> None:
        """Map the chosen copies' learner rewards with ``fn(reward, info) -> float`` from each
        copy's next episode start on (``None``: the game's own reward).

        ``fn`` sees a copy of the step's info (``seat``, and ``selfplay`` with the game's outcome
        at the episode's end); only the learner's reward changes, not the info nor the recorded
        outcome. It runs in this process, also with ``num_workers > 0``.

        :param fn: the transform, or ``None``.
        :param indices: the copies (default: all).
        """
        check_reward_fn(fn)
        for i in self._copy_indices(indices):
            self.copies[i].config.stage_reward(fn)

    def _copy_indices(self, indices: VecEnvIndices) -> list[int]:
        """The env copies ``indices`` name (one slot per copy here; a team env maps slots)."""
        return list(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Copies are not Gymnasium envs, so no Gymnasium wrapper wraps them."""
        return [False for _ in self._get_indices(indices)]

    # -- the batched game loop -------------------------------------------------------------------
    def _drive(self, items: list[tuple]) -> None:
        """Run game-side operations, then answer opponents in batches until every copy waits for
        the learner. Episodes that end on the way are recorded and restarted (auto-reset) before
        the batch is formed, so a new game's first opponent move joins the current batch."""
        while items:
            turns: list[tuple[EnvCopy, Status]] = []
            while items:  # restarts (auto-resets, games that ended before the learner moved)
                running, items = items, []
                for item, status in zip(running, self.games.run(running), strict=True):
                    copy = self.copies[item[1]]
                    copy.status = status
                    if status.seat is not None:
                        turns.append((copy, status))
                    elif status.terminated or status.truncated:
                        if copy.phase == PLAY:
                            self._finish_episode(copy, status)
                            items.append(copy.begin_reset(None, None))
                        else:
                            items.append(copy.restart_empty_game())
            items = self._answer(turns)

    def _answer(self, turns: list[tuple[EnvCopy, Status]]) -> list[tuple]:
        """The game operations that play the opponents' answers to ``turns`` (one batch per
        policy: see :class:`~sp_wrappers.envs.vector.batching.OpponentBatches`)."""
        rows = [copy.opponent_row(s.seat, s.observation, s.mask) for copy, s in turns]
        actions = self._batches.answer(rows)
        return [
            (PLAY, copy.index, action, copy.phase == PLAY)
            for (copy, _), action in zip(turns, actions, strict=True)
        ]

    def _finish_episode(self, copy: EnvCopy, status: Status) -> None:
        obs = status.observation
        if obs is None:
            obs = zero_observation(self.observation_space)
        summary = copy.episode_summary(status)
        copy.finished_episodes.add(summary)  # what callbacks drain (see FinishedEpisodes)
        info: dict[str, Any] = {"seat": copy.learner, "selfplay": summary}
        info["TimeLimit.truncated"] = status.truncated and not status.terminated
        info["terminal_observation"] = copy.view.observation(obs)  # the ending episode's view
        reward = copy.config.transform(status.reward, info)
        self._results[copy.index] = (reward, True, info)

    # -- helpers ---------------------------------------------------------------------------------
    def _share_slots(self) -> None:
        """With ``opponent_draw="shared"``, one set of opponent slots per opponent source, shared
        by the copies that draw from it (with ``"per_env"`` each copy keeps its own)."""
        if self.opponent_draw != "shared":
            return
        sources = [copy.opponent_source for copy in self.copies]
        slots = shared_slots(sources, [copy.slots for copy in self.copies])
        for copy, copy_slots in zip(self.copies, slots, strict=True):
            copy.slots = copy_slots

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
            f"opponent_draw={self.opponent_draw!r}, num_workers={self.num_workers})"
        )
