"""``SelfPlayEnv``: a PettingZoo game as a single-agent Gymnasium env against frozen opponents.

The env drives the game around the learner's seat and plays every other seat with an opponent
policy. Its episode-start rules (learner seats, seeds, the wrapper's random stream) are shared
with the vector env, so a seeded vector-env copy replays the same games.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..core.seats import (
    OutcomeFn,
    SeatDriver,
    as_aec_env,
    check_illegal_action_mode,
)
from .game_config import GameConfigurator, RewardFn
from .seating import LEARNER_SEAT_MODES, LearnerSeat, resolve_learner_seats, zero_observation
from .symmetric_view import EpisodeView, instance_factory, resolve_symmetries

__all__ = [
    "SelfPlayEnv",
    "LEARNER_SEAT_MODES",
    "resolve_learner_seats",
    "learner_action",
    "wrapper_generator",
    "pop_learner_seat",
    "SeatChooser",
    "GameSeeds",
    "FinishedEpisodes",
    "MAX_EMPTY_GAMES",
    "MAX_UNDRAINED_EPISODES",
    "zero_observation",
]

#: Games in a row that may end before the learner's first turn before a reset gives up.
MAX_EMPTY_GAMES = 100
#: Finished-episode summaries an env keeps until they are drained; older ones are dropped, so an
#: env that nobody drains (an evaluation env) holds a bounded number.
MAX_UNDRAINED_EPISODES = 1000
_WRAPPER_STREAM = 0x5E1F  # spawn key of the wrapper's own random stream (see ``reset``)
_GAME_SEED_STREAM = 0x5EED  # spawn key of the stream of the game's per-episode seeds


def wrapper_generator(seed: int) -> np.random.Generator:
    """The generator of the wrapper's own draws (learner seat, opponents' random choices).

    The game gets ``seed`` itself. Games commonly seed their own generator exactly as Gymnasium
    does (``np.random.default_rng(seed)``), so the wrapper takes an independent stream derived from
    the same seed; otherwise random opponents would replay the game's hidden draws (e.g. the deal).
    """
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(_WRAPPER_STREAM,)))
    )


class GameSeeds:
    """The seed each game reset gets, so that ``reset(seed=s)`` fixes every later episode too.

    A seeded reset gives the game ``s`` itself. Later unseeded resets give it a seed drawn from a
    stream derived from ``s`` (independent of the wrapper's own draws), not ``None``: adapters
    such as Shimmy's OpenSpiel wrapper draw fresh entropy for their chance events (deals, dice) on
    every ``reset(seed=None)``, so without this a seeded env would replay only its first deal.
    Before any seeded reset the game gets ``None`` (its own randomness).

    >>> seeds = GameSeeds()
    >>> seeds.next(None) is None, seeds.next(7)
    (True, 7)
    >>> a = [seeds.next(None) for _ in range(3)]
    >>> _ = seeds.next(7)
    >>> a == [seeds.next(None) for _ in range(3)]
    True
    """

    def __init__(self) -> None:
        self._stream: np.random.Generator | None = None

    def next(self, seed: int | None) -> int | None:
        """The game seed of the next reset (``seed`` is the one passed to the env's reset)."""
        if seed is not None:
            self._stream = np.random.Generator(
                np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(_GAME_SEED_STREAM,)))
            )
            return seed
        if self._stream is None:
            return None
        return int(self._stream.integers(2**31 - 1))


class FinishedEpisodes:
    """The summaries (``info["selfplay"]``) of an env's finished episodes, kept until drained.

    Every self-play env (``SelfPlayEnv``, each copy of ``SelfPlayVecEnv`` and of a learner team's
    env) adds the summary of each episode it ends, and ``env_method("drain_episodes")`` hands them
    over once: that is how :class:`~sp_wrappers.SelfPlayCallback` and the league's players read
    their games, with every learner (ARS's ``learn`` gives its callbacks no ``infos``) and through
    every VecEnv wrapper and worker process. At most ``maxlen`` undrained summaries are kept (the
    oldest go first).

    :param maxlen: the most summaries kept between two drains.

    >>> episodes = FinishedEpisodes(maxlen=2)
    >>> for n in range(3):
    ...     episodes.add({"outcome": n / 2})
    >>> episodes.drain(), episodes.drain()
    ([{'outcome': 0.5}, {'outcome': 1.0}], [])
    """

    def __init__(self, maxlen: int = MAX_UNDRAINED_EPISODES) -> None:
        self._summaries: deque[dict[str, Any]] = deque(maxlen=int(maxlen))

    def add(self, summary: dict[str, Any]) -> None:
        """Keep one finished episode's summary."""
        self._summaries.append(summary)

    def drain(self) -> list[dict[str, Any]]:
        """The summaries kept since the last drain, oldest first; the buffer is then empty."""
        out = list(self._summaries)
        self._summaries.clear()
        return out

    def __len__(self) -> int:
        return len(self._summaries)


def pop_learner_seat(options: dict[str, Any], learner_seats: list[str]) -> str | None:
    """Take ``options["learner_seat"]`` (a forced seat for this episode) out of ``options``."""
    forced = options.pop("learner_seat", None)
    if forced is not None and forced not in learner_seats:
        raise ValueError(
            f"options['learner_seat']={forced!r} is not a seat this env's learner may take "
            f"({learner_seats}); build the env with learner='random' to use any seat."
        )
    return forced


class SeatChooser:
    """Which seat the learner takes each episode: the only one, in turn (``"alternate"``), or
    drawn uniformly (``"random"``) with the env's generator."""

    def __init__(self, learner_seats: list[str], mode: str) -> None:
        self.seats = list(learner_seats)
        self.mode = mode
        self.index = 0

    def restart(self) -> None:
        """Start the alternation again (on a seeded reset)."""
        self.index = 0

    def next(self, rng: np.random.Generator) -> str:
        if len(self.seats) == 1:
            return self.seats[0]
        if self.mode == "alternate":
            seat = self.seats[self.index % len(self.seats)]
            self.index += 1
            return seat
        return self.seats[int(rng.integers(len(self.seats)))]


def learner_action(action: Any, space: spaces.Space) -> Any:
    """Check a learner action against its space; return it in the form the game expects."""
    if isinstance(space, spaces.Discrete):
        value = np.asarray(action)
        if value.size == 1 and np.issubdtype(value.dtype, np.integer):
            a = int(value.reshape(()))
            if space.start <= a < space.start + space.n:
                return a
    else:
        arr = np.asarray(action, dtype=space.dtype)
        if arr.size == int(np.prod(space.shape)):
            arr = arr.reshape(space.shape)
            if space.contains(arr):
                return arr
    raise ValueError(
        f"Learner action {action!r} is outside the learner's action space {space}. "
        "Check that the model was built on this env (model = PPO(..., env=selfplay_env))."
    )


class SelfPlayEnv(gym.Env):
    """A PettingZoo game seen from one seat, every other seat played by opponent policies.

    Observation and action spaces are those of the learner's seat. Opponents act until it is the
    learner's turn again; the learner's reward for a step is everything it received since its
    previous action; when the learner's episode ends (also on an opponent's move or when its agent
    leaves the game early) ``info["selfplay"]`` holds ``opponent`` (id), ``opponents`` (seat → id),
    ``outcome`` (1 win, 0.5 draw, 0 loss), ``seat``, ``seat_outcomes`` (opponent seat → the
    learner's result against that seat alone, what each match record holds: in a game of more
    than two players the seat that finished ahead of the learner is a loss, see
    :func:`~sp_wrappers.core.seats.seat_outcomes`), ``return``, ``returns`` and ``length``, plus
    ``illegal_action`` (the action) when the episode ended on an illegal learner action.

    Illegal learner actions: wherever the seat's legal actions are known (``"action_mask"`` in the
    observation dict or in the game's ``info``), the wrapper checks the learner's action before the
    game sees it. By default an illegal action ends the learner's episode as a loss, as in
    PettingZoo's classic games: the game's illegal-move reward (that of PettingZoo's
    ``TerminateIllegalWrapper`` when the game has one, else -1), outcome 0, ``terminated``.
    Opponents' illegal actions are always errors.

    Seeding: ``reset(seed=s)`` seeds the game with ``s`` and later unseeded resets with seeds
    drawn from ``s`` (see :class:`GameSeeds`), so games that take a seed in ``reset`` replay their
    chance events (deals, dice) and pass Gymnasium's determinism checks.

    :param env: a PettingZoo ``AECEnv`` or ``ParallelEnv`` (also wrapped by SuperSuit), or a
        constructor returning one (then also the ``env_fn`` of :meth:`set_game_config`).
    :param learner: the learner's agent name, ``"random"`` (a seat drawn each episode) or
        ``"alternate"`` (seats taken in turn, episode by episode).
    :param opponent: a policy for every opponent seat, a callable returning one per episode (called
        with the env's ``np.random.Generator`` if it takes an argument), or an ``OpponentSampler``.
        Defaults to :class:`~sp_wrappers.RandomPolicy`.
    :param keep_dict_obs: give the learner PettingZoo's ``{"observation", "action_mask"}`` dict
        instead of its ``"observation"`` part.
    :param outcome_fn: ``fn(returns, learner_seat) -> float`` in [0, 1]; defaults to comparing the
        learner's final return with each other seat's.
    :param illegal_action: ``"loss"`` (default) ends the learner's episode as a loss on an action
        its mask forbids; ``"raise"`` raises :class:`~sp_wrappers.IllegalActionError` naming the
        action and the legal ones.
    :param env_fn: the game's constructor, for :meth:`set_game_config` when ``env`` is an
        instance (``env_fn(**game_kwargs)`` builds the next game).
    :param teams: ``None`` (every agent its own team), ``"prefix"`` or ``{team: [agent, ...]}``
        (see :class:`~sp_wrappers.TeamLayout`). With teams, ``learner`` may be a team name (the
        learner acts for the team's first agent) or an agent name (that agent), and
        ``"random"``/``"alternate"`` change team between episodes; ``opponent`` may be
        ``{team: source}`` with one entry per opposing team. Every opposing team plays one policy
        per episode (drawn once for the team). The learner's teammates play the learner's latest
        weights (sent by :class:`~sp_wrappers.SelfPlayCallback`; a random policy until they
        arrive): this env has one slot, so the learner acts for one agent of its team. To learn
        from every agent of a team, use :class:`~sp_wrappers.SelfPlayVecEnv` with ``teams=``.
        ``info["selfplay"]`` then also holds ``team``, ``team_return`` (the sum of the team's
        agents' returns), ``team_returns``, ``opponent_teams`` (team -> policy id) and
        ``team_outcomes`` (team -> the learner team's result against that team alone, what its
        match records and Elo use); the ``outcome`` is the team's against the other teams'
        returns (:func:`~sp_wrappers.team_outcome`) unless ``outcome_fn`` is given, and
        ``opponents`` never lists teammates.
    :param symmetries: play each episode in a symmetric view of the board drawn at reset
        (AlphaZero's augmentation): ``"auto"`` (the game's built-ins: tic-tac-toe and Go the 8
        symmetries of the square, Connect Four the left-right mirror), a game name with
        built-ins, or a list of :class:`~sp_wrappers.games.symmetries.Symmetry`. Observations,
        ``action_masks()`` and actions are mapped; the game and its opponents are not. Each
        symmetry is checked against the game at construction (a wrong one raises ``ValueError``
        naming it); ``info["selfplay"]["symmetry"]`` names the episode's view. Not with ``teams``.

    ``reset(options={"learner_seat": name})`` puts the learner in a given seat for one episode
    (with teams: any agent of the learner's teams); other options go to the game's own ``reset``.

    ``set_game_config(game_kwargs)`` / ``set_reward_fn(fn)`` change the game and the learner's
    reward from the next episode start on (see :mod:`sp_wrappers.training.env_generator`); the
    episode's ``info["selfplay"]["config"]`` then records the configuration.

    Each finished episode's ``info["selfplay"]`` is also kept until :meth:`drain_episodes` hands
    it over (see :class:`FinishedEpisodes`): callbacks read games there, with every learner.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> env = SelfPlayEnv(tictactoe_v3.env(), learner="player_1")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, int(env.action_masks().sum())
    ((3, 3, 2), 9)
    >>> done = False
    >>> while not done:
    ...     action = int(np.flatnonzero(env.action_masks())[0])
    ...     obs, reward, terminated, truncated, info = env.step(action)
    ...     done = terminated or truncated
    >>> sorted(info["selfplay"])
    ['length', 'opponent', 'opponents', 'outcome', 'return', 'returns', 'seat', 'seat_outcomes']
    >>> env.drain_episodes() == [info["selfplay"]], env.drain_episodes()
    (True, [])
    """

    def __init__(
        self,
        env: Any,
        learner: str = "random",
        opponent: Any = None,
        keep_dict_obs: bool = False,
        outcome_fn: OutcomeFn | None = None,
        illegal_action: str = "loss",
        env_fn: Callable[..., Any] | None = None,
        teams: Any = None,
        symmetries: Any = None,
    ) -> None:
        built_by_env_fn = callable(env) and not hasattr(env, "possible_agents")
        if built_by_env_fn:  # a constructor
            env_fn, env = env, env()
        #: the game's configuration and the next game it builds (``set_game_config``)
        self.configurator = GameConfigurator(env_fn, built_by_env_fn)
        game = as_aec_env(env)
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.game = game
        self.keep_dict_obs = keep_dict_obs
        self.outcome_fn = outcome_fn
        self.learner_mode = learner
        #: who the learner is: one seat, or one agent of a team (see :mod:`.seating`)
        self.seating = self._seating(game, learner, keep_dict_obs, teams)
        self.layout = self.seating.layout
        self.learner_seats = self.seating.learner_seats
        self.observation_space = self.seating.observation_space
        self.action_space = self.seating.action_space
        self.driver = SeatDriver(game, keep_dict_obs, illegal_action)
        self._games_started = 0
        self.slots, self._default_opponents = self.seating.opponent_slots(
            opponent, random_when_none=True
        )
        self._opponent_source = self.slots.source
        self.render_mode = getattr(game, "render_mode", None)
        self.metadata = dict(getattr(game, "metadata", {}) or {})
        self.seat_chooser = SeatChooser(self.seating.chooser_seats, learner)
        self._seat_policies: dict[str, Any] = {}
        self._game_seeds = GameSeeds()
        self._last_obs: Any = None
        self.finished_episodes = FinishedEpisodes()
        self.seating.check_symmetries(symmetries)
        self.view = EpisodeView(
            resolve_symmetries(symmetries, self._symmetry_env_fn(env, env_fn))
            if symmetries is not None
            else None
        )

    @staticmethod
    def _seating(game: Any, learner: str, keep_dict_obs: bool, teams: Any) -> LearnerSeat:
        """One learner seat, or (``teams``) one agent of a learner team: the team seating loads
        only then."""
        if teams is None:
            return LearnerSeat(game, learner, keep_dict_obs)
        from .team_seating import SeatInTeam

        return SeatInTeam(game, learner, keep_dict_obs, teams)

    @property
    def learner_teams(self) -> list[str] | None:
        """The teams the learner may play (``None`` without teams)."""
        return self.seating.learner_teams

    @property
    def env_fn(self) -> Callable[..., Any] | None:
        """The game's constructor (``None`` when given a game instance and no ``env_fn``)."""
        return self.configurator.env_fn

    @property
    def config(self) -> Any:
        """What the episode plays under (the configurator's
        :class:`~sp_wrappers.envs.game_config.CopyConfig`)."""
        return self.configurator.config

    # -- Gymnasium API -----------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._np_random = wrapper_generator(seed)
            self.seat_chooser.restart()
        options = dict(options or {})
        forced_seat = pop_learner_seat(options, self.learner_seats)
        game_seed = self._game_seeds.next(seed)
        next_game = self.configurator.start_episode()
        if next_game is not None:
            self.game.close()
            self.game = next_game
            self.driver = SeatDriver(next_game, self.keep_dict_obs, self.illegal_action)
        self.view.draw(self.np_random)
        for _ in range(MAX_EMPTY_GAMES):
            seat = forced_seat or self.seat_chooser.next(self.np_random)
            self.driver.reset(seat, seed=game_seed, options=options or None)
            self._games_started += 1  # recurrent opponents start a fresh state in each game
            self._seat_policies = self.seating.lineup(
                seat, self.slots, self.np_random, self._default_opponents
            )
            self._play_opponents()
            if not self.driver.learner_done:
                obs = self.view.observation(self.driver.learner_observation())
                return self._fresh(obs), self.seating.info(self.driver.learner)
            # the game ended before the learner's first turn: play another
            game_seed = self._game_seeds.next(None)
        raise RuntimeError(
            f"{MAX_EMPTY_GAMES} games in a row ended before seat {self.driver.learner!r} could "
            "act; check the game's turn order or pick another learner seat."
        )

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        driver = self.driver
        if driver.learner_done:
            raise RuntimeError("step() called after the episode ended; call reset() first.")
        driver.play(self.view.action_to_game(learner_action(action, self.action_space)))
        self.slots.count_step()
        self._play_opponents()
        reward = driver.pop_reward()
        info = self.seating.info(driver.learner)
        if driver.learner_done:
            info["selfplay"] = self.episode_summary()
            self.finished_episodes.add(info["selfplay"])
            obs = self._final_observation()
        else:
            obs = driver.learner_observation()
        reward = self.config.transform(reward, info)
        obs = self._fresh(self.view.observation(obs))
        return obs, reward, driver.terminated, driver.truncated, info

    def render(self) -> Any:
        """Render the game (the PettingZoo env's own ``render``)."""
        return self.game.render()

    def close(self) -> None:
        self.game.close()
        self.configurator.close()

    # -- the game's configuration (see :mod:`sp_wrappers.training.env_generator`) ---------------
    def set_game_config(self, game_kwargs: Mapping[str, Any], indices: Any = None) -> None:
        """Play ``env_fn(**game_kwargs)`` from the next episode start on (never mid-game).

        The next game is built now and compared with the current one: a configuration that
        changes an agent's observation or action space raises ``ValueError`` naming them, and
        the env keeps its game. ``info["selfplay"]["config"]`` then records ``game_kwargs``
        (see :mod:`sp_wrappers.training.env_generator`).

        :param game_kwargs: keyword arguments of ``env_fn`` (JSON-able values), e.g.
            ``{"komi": 5.5}``; ``{}`` rebuilds the game with the constructor's defaults.
        :param indices: ``None`` or ``0`` (one env; there for symmetry with the vector env).
        """
        self.configurator.set_game_config(game_kwargs, indices, self.game)

    def set_reward_fn(self, fn: RewardFn | None, indices: Any = None) -> None:
        """Map the learner's reward with ``fn(reward, info) -> float`` from the next episode
        start on (``None``: the game's own reward). ``fn`` sees a copy of the step's info
        (``seat``, and ``selfplay`` with the game's outcome at the episode's end); only the
        learner's reward changes.

        :param fn: the transform, or ``None``.
        :param indices: ``None`` or ``0`` (one env).
        """
        self.configurator.set_reward_fn(fn, indices)

    @property
    def game_config(self) -> dict[str, Any] | None:
        """The configuration the current episode plays under, as recorded in
        ``info["selfplay"]["config"]`` (``None``: never configured)."""
        return self.config.describe()

    # -- SB3 / sb3-contrib hooks -------------------------------------------------------------------
    def drain_episodes(self) -> list[dict[str, Any]]:
        """The ``info["selfplay"]`` of every episode finished since the last call, oldest first
        (reached through ``venv.env_method("drain_episodes")``; see :class:`FinishedEpisodes`)."""
        return self.finished_episodes.drain()

    def action_masks(self) -> np.ndarray:
        """The learner's current legal actions (all ``True`` for games without masks)."""
        mask = self.driver.learner_mask()
        if mask is None:
            mask = self.driver.all_actions_mask(self.driver.learner)
            if mask is None:
                raise TypeError("action_masks() needs a Discrete action space.")
        return self.view.mask(mask)

    def sync_latest_weights(self, version: int, state: Mapping[str, Any]) -> None:
        """Give the opponent source (and the learner's teammates) the learner's newest weights
        (called by the callback)."""
        self.seating.sync_latest_weights(self.slots, self.opponent_source, version, state)

    @property
    def wants_learner_template(self) -> bool:
        """Whether the learner's teammates wait for :meth:`set_learner_template`."""
        return self.seating.wants_template

    def set_learner_template(self, policy: Any) -> None:
        """Let the learner's teammates play a frozen copy of ``policy`` (the learner's SB3 model
        or policy), kept at the latest weights by :meth:`sync_latest_weights`. The callback calls
        it at its first weight sync; call it yourself when training without the callback."""
        self.seating.set_template(policy)

    def set_opponent(self, opponent: Any) -> None:
        """Play ``opponent`` (a policy, a callable or a sampler, as in the constructor) in every
        opponent seat from the next episode start on; the episode in progress keeps its line-up.

        Reached through ``venv.env_method("set_opponent", policy, indices=[...])``, which is how
        callbacks such as :class:`~sp_wrappers.KOpponentRollouts` assign opponents per env copy.
        """
        self.slots, self._default_opponents = self.seating.opponent_slots(opponent)
        self._opponent_source = self.slots.source

    @property
    def opponent_source(self) -> Any:
        """Where the opponents come from (what ``opponent`` became: an object with ``draw``).
        Setting it, e.g. ``venv.set_attr("opponent_source", x)``, is :meth:`set_opponent`."""
        return self._opponent_source

    @opponent_source.setter
    def opponent_source(self, opponent: Any) -> None:
        self.set_opponent(opponent)

    # -- helpers -----------------------------------------------------------------------------------
    def episode_summary(self) -> dict[str, Any]:
        """What ``info["selfplay"]`` holds at the end of the learner's episode."""
        driver = self.driver
        policies, illegal = self._seat_policies, driver.illegal_action_played
        summary = self.seating.summary(
            driver.learner, driver.returns, policies, self.outcome_fn, illegal
        )
        summary["length"] = driver.learner_steps
        if self.config.configured:
            summary["config"] = self.config.describe()
        return self.view.record(summary)

    def _symmetry_env_fn(self, env: Any, env_fn: Callable[..., Any] | None) -> Callable[[], Any]:
        """A constructor of fresh games for the symmetry check."""
        return env_fn if env_fn is not None else instance_factory(env)

    def _play_opponents(self) -> None:
        driver, play = self.driver, self.seating.play_turn
        game = (id(self), self._games_started)  # with the seat: a recurrent opponent's state key
        while (turn := driver.next_turn()) is not None:
            play(driver, turn, self._seat_policies, self.np_random, game)

    def _fresh(self, obs: Any) -> Any:
        """``obs``, copied if the game handed back the very object it gave last time (Shimmy's
        OpenSpiel wrapper does at the end of a game): callers keep what they are given."""
        if obs is self._last_obs and isinstance(obs, np.ndarray | dict):
            obs = copy.deepcopy(obs)
        self._last_obs = obs
        return obs

    def _final_observation(self) -> Any:
        try:
            return self.driver.learner_observation()
        except (KeyError, AttributeError):  # the learner's agent was removed from the game
            return zero_observation(self.observation_space)
