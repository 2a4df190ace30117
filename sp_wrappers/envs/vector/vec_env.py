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

from ...core.policies import is_policy
from ...core.seats import OutcomeFn, check_illegal_action_mode
from ...opponents.slots import OPPONENT_DRAWS
from ..game_config import RewardFn, check_game_kwargs, check_reward_fn
from ..seating import LearnerSeat
from ..selfplay_env import learner_action
from ..symmetric_view import resolve_symmetries
from .arguments import WithKwargs, check_env_fn, per_copy_opponents
from .batching import OpponentBatches
from .env_copy import CopySettings, EnvCopy, OpponentPlacement
from .game_workers import PLAY, Games, Status, WorkerGames

__all__ = ["SelfPlayVecEnv", "seating_for"]


def seating_for(teams: Any) -> type[LearnerSeat]:
    """The seating of a vector env's learner: one seat, or (``teams``) a whole team with one slot
    per agent (:class:`~sp_wrappers.envs.vector.team_seating.LearnerTeam`, loaded only then)."""
    if teams is None:
        return LearnerSeat
    from .team_seating import LearnerTeam

    return LearnerTeam


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

    #: The learner's teams: ``None`` here (the learner plays one seat); a
    #: :class:`~sp_wrappers.envs.vector.team_vec_env.TeamVecEnv` sets its ``teams=``.
    teams: Any = None

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
        symmetries: Any = None,
    ) -> None:
        check_env_fn(env_fn)
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
        seating_type = seating_for(self.teams)
        seating_type.check_symmetries(symmetries)  # before any game is built
        self.symmetries = resolve_symmetries(symmetries, env_fn)
        self.env_fn = env_fn  # the game's constructor, for evaluation games (SelfPlayCallback)
        self.num_workers = num_workers
        self.device = device
        self.closed = False
        self.games: Games | WorkerGames
        driver = seating_type.driver_type
        if num_workers:
            self.games = WorkerGames(
                env_fn, n_envs, num_workers, keep_dict_obs, start_method, driver
            )
        else:
            self.games = Games(env_fn, n_envs, keep_dict_obs, driver)
        try:
            self._setup(seating_type, n_envs, learner, opponents, keep_dict_obs, outcome_fn)
        except BaseException:
            self.games.close()
            raise

    def _setup(
        self,
        seating_type: type[LearnerSeat],
        n_envs: int,
        learner: str,
        opponents: list[Any],
        keep_dict_obs: bool,
        outcome_fn: OutcomeFn | None,
    ) -> None:
        """Everything that needs the game: the seating (the learner's seats and spaces), the
        copies and the opponent batches."""
        spec = self.game_spec = self.games.spec()
        self.keep_dict_obs = keep_dict_obs
        self.outcome_fn = outcome_fn
        self.learner_mode = learner
        #: who the learner is: a seat, or a whole team (see :mod:`sp_wrappers.envs.seating`)
        self.seating = seating_type.build(spec, learner, keep_dict_obs, self.teams)
        self.layout = self.seating.layout
        self.learner_seats = self.seating.learner_seats
        # one slot per agent the learner plays in each copy (several with a learner team)
        self.n_games, self.team_size = n_envs, self.seating.team_size
        observation_space = self.observation_space = self.seating.observation_space
        action_space = self.action_space = self.seating.action_space
        self._batches = OpponentBatches(spec, keep_dict_obs)
        self._placement = OpponentPlacement(self.device)
        settings = CopySettings(
            seating=self.seating,
            learner_mode=learner,
            outcome_fn=outcome_fn,
            render_mode=spec.render_mode,
            metadata=spec.metadata,
            symmetries=self.symmetries,
        )
        self.copies = [EnvCopy(i, opponents[i], settings, self._placement) for i in range(n_envs)]
        if self.opponent_draw == "shared":  # one source (and so one line-up) for every copy
            for copy in self.copies:
                copy.opponent_source = self.copies[0].opponent_source
        self._share_slots()
        self._actions: np.ndarray | None = None
        VecEnv.__init__(self, n_envs * self.team_size, observation_space, action_space)

    @property
    def learner_teams(self) -> list[str] | None:
        """The teams the learner may play (``None`` without teams)."""
        return self.seating.learner_teams

    # -- VecEnv API ------------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Reset every copy (with the seeds/options set by ``seed``/``set_options``, then none;
        copy ``g`` of a learner team takes those of its first slot)."""
        self._check_open()
        size = self.team_size
        items = [
            copy.begin_reset(self._seeds[g * size], self._options[g * size])
            for g, copy in enumerate(self.copies)
        ]
        self._drive(items)
        for g, copy in enumerate(self.copies):
            for k, info in enumerate(self.seating.slot_infos(copy.learner)):
                self.reset_infos[g * size + k] = info
        self._reset_seeds()
        self._reset_options()
        return self._stack(self.seating.observations(self.copies))

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        self._check_open()
        actions, self._actions = self._actions, None
        if actions is None:
            raise RuntimeError("step_wait() called without step_async(actions).")
        if len(actions) != self.num_envs:
            raise ValueError(
                f"Got {len(actions)} actions for {self.num_envs} envs ({self.n_games} games x "
                f"{self.team_size} learner slots); pass one action per env."
            )
        for copy in self.copies:
            if copy.status is None or copy.status.seat is not None:
                raise RuntimeError("step() called before reset(); call reset() first.")
        start = None
        if self.illegal_action == "raise":  # ("loss" is applied by each game's driver)
            start = int(getattr(self.action_space, "start", 0))
        per_copy = self.seating.copy_actions(self._learner_actions(actions), self.copies, start)
        self._results: list[list[tuple[float, dict[str, Any]]] | None] = [None] * self.n_games
        self._drive([copy.begin_step(a) for copy, a in zip(self.copies, per_copy, strict=True)])
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = []
        size, seating = self.team_size, self.seating
        for g, copy in enumerate(self.copies):
            slots = self._results[g]
            if slots is None:  # the episode goes on
                slots = seating.ongoing(copy)
            else:
                dones[g * size : (g + 1) * size] = True
                for k, info in enumerate(seating.slot_infos(copy.learner)):
                    self.reset_infos[g * size + k] = info
            for k, (reward, info) in enumerate(slots):
                rewards[g * size + k] = reward
                infos.append(info)
        self._results = []
        return self._stack(seating.observations(self.copies)), rewards, dones, infos

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
        """Every slot's legal learner actions, shape ``(num_envs, n_actions)``."""
        masks = np.stack([copy.action_masks() for copy in self.copies])
        return masks.reshape(self.num_envs, -1)  # a learner team's copy has a row per slot

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
        """Each slot's game frame (the slots of one copy share it)."""
        if self.render_mode != "rgb_array":
            warnings.warn(
                f"The render mode is {self.render_mode}, but get_images() needs 'rgb_array'.",
                stacklevel=2,
            )
            return [None] * self.num_envs
        frames = [self.games.call(g, "render", (), {}) for g in range(self.n_games)]
        return [frames[i // self.team_size] for i in range(self.num_envs)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each slot's copy (the copy's own, else the PettingZoo game's)."""
        games, unique = self._games_of(indices)
        values = {}
        for g in unique:
            copy = self.copies[g]
            if hasattr(copy, attr_name) and not attr_name.startswith("_"):
                values[g] = getattr(copy, attr_name)
            else:
                values[g] = self.games.get_attr(g, attr_name)
        return [values[g] for g in games]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute on each slot's copy (where the copy has it), else on the PettingZoo
        game; ``opponent_source`` is ``env_method("set_opponent", value)`` (one source for them
        all)."""
        _, unique = self._games_of(indices)
        if attr_name == "opponent_source":
            value = self.seating.shared_opponent(value)
            try:
                for g in unique:
                    self.copies[g].set_opponent(value)
            finally:
                self._share_slots()
            return
        for g in unique:
            copy = self.copies[g]
            if hasattr(copy, attr_name) and not attr_name.startswith("_"):
                setattr(copy, attr_name, value)
            else:
                self.games.set_attr(g, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each slot's copy once (its own, else the PettingZoo game's; the
        result is repeated for a learner team's slots of one copy).

        ``action_masks`` gives each slot its own mask (what ``MaskablePPO`` asks for);
        ``drain_episodes`` gives a copy's games to its first slot asked, so each game is drained
        once; ``sync_latest_weights`` reaches each distinct opponent source once (a sampler
        shared by every copy is synced once per call); ``set_game_config`` is
        :meth:`set_game_config` for each chosen copy; ``set_opponent`` regroups the copies that
        share draws afterwards.
        """
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        games, chosen = self._games_of(indices)
        if method_name == "set_game_config":  # built where the games live (maybe in workers)
            for i in chosen:
                self._stage_game_configs(*method_args, chosen=[i], **method_kwargs)
            return [None] * len(games)
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
        values = dict(zip(chosen, out, strict=True))
        if method_name == "drain_episodes":
            return [values.pop(g, []) for g in games]
        return [values[g] for g in games]

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
        """The game copies of the slots in ``indices``, once each."""
        return self._games_of(indices)[1]

    def _games_of(self, indices: VecEnvIndices) -> tuple[list[int], list[int]]:
        """The game copy of each slot in ``indices`` (a learner team has several slots per
        copy), and those copies once each."""
        games = [i // self.team_size for i in self._get_indices(indices)]
        return games, list(dict.fromkeys(games))

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
        actions = self.seating.answer(turns, self._batches)
        return [
            (PLAY, copy.index, action, copy.phase == PLAY)
            for (copy, _), action in zip(turns, actions, strict=True)
        ]

    def _finish_episode(self, copy: EnvCopy, status: Status) -> None:
        summary = copy.episode_summary(status)
        copy.finished_episodes.add(summary)  # once per game (see FinishedEpisodes)
        finished = self.seating.finished(copy, status, summary, self.observation_space)
        self._results[copy.index] = finished

    # -- helpers ---------------------------------------------------------------------------------
    def _share_slots(self) -> None:
        """With ``opponent_draw="shared"``, one set of opponent slots per opponent source, shared
        by the copies that draw from it (with ``"per_env"`` each copy keeps its own)."""
        if self.opponent_draw == "shared":
            self.seating.share_slots(self.copies)

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
        fields = [f"n_envs={self.n_games}", *self.seating.describe(self.learner_mode)]
        fields += [f"opponent_draw={self.opponent_draw!r}", f"num_workers={self.num_workers}"]
        return f"SelfPlayVecEnv({', '.join(fields)})"
