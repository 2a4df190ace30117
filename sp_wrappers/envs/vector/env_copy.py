"""This module holds ``_EnvCopy``: the main-process side of one env copy of a
:class:`~sp_wrappers.SelfPlayVecEnv` (its learner seat, opponents, random stream, game
configuration and episode results), which ``get_attr``/``env_method`` reach first. The team
vector env subclasses it (``_team_vec_env._TeamCopy``).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.policies import RandomPolicy
from ...core.seats import episode_outcome, seat_outcomes
from ...opponents.slots import OpponentSlots, as_opponent_source
from ..game_config import CopyConfig, RewardFn, check_reward_fn
from ..selfplay_env import (
    _MAX_EMPTY_GAMES,
    GameSeeds,
    SeatChooser,
    pop_learner_seat,
    wrapper_generator,
)
from ..symmetric_view import EpisodeView
from .game_workers import _PLAY, _RESET, _Status

if TYPE_CHECKING:
    from .vec_env import SelfPlayVecEnv

__all__: list[str] = []


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
        self._init_opponents(owner, opponent)
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
        self.games_started = 0  # with the copy and the seat: a recurrent opponent's state key
        self.config = CopyConfig()
        self.view = EpisodeView(getattr(owner, "symmetries", None))

    def _init_opponents(self, owner: SelfPlayVecEnv, opponent: Any) -> None:
        self._default_opponents: dict[str, RandomPolicy] | None = None
        if opponent is None:
            self._default_opponents = owner._default_opponents
            opponent = self._default_opponents[self.learner_seats[0]]
        self.opponent_source = as_opponent_source(opponent)
        self.slots = OpponentSlots(self.opponent_source)

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
        return self.view.mask(mask)

    def learner_observation(self) -> Any:
        """The learner's current observation, in the episode's view."""
        return self.view.observation(self.status.observation)

    def sync_latest_weights(self, version: int, state: Mapping[str, Any]) -> None:
        """Give this copy's opponent source the learner's newest weights."""
        sync = getattr(self.opponent_source, "sync_latest_weights", None)
        if sync is not None:
            sync(version, state)
            self._owner._place(getattr(self.opponent_source, "latest", None))

    def set_opponent(self, opponent: Any) -> None:
        """Play ``opponent`` in this copy's opponent seats from its next episode start on (see
        :meth:`SelfPlayEnv.set_opponent <sp_wrappers.SelfPlayEnv.set_opponent>`). With
        ``opponent_draw="shared"`` the copies given one source keep sharing its draws."""
        self.opponent_source = as_opponent_source(opponent)
        self.slots = OpponentSlots(self.opponent_source)
        self._default_opponents = None
        self._owner._share_slots()

    def set_game_config(self, game_kwargs: Mapping[str, Any]) -> None:
        """This copy's part of :meth:`SelfPlayVecEnv.set_game_config` (``env_method``'s way in)."""
        self._owner._stage_game_configs(game_kwargs, [self.index])

    def set_reward_fn(self, fn: RewardFn | None) -> None:
        """This copy's part of :meth:`SelfPlayVecEnv.set_reward_fn` (``env_method``'s way in)."""
        self.config.stage_reward(check_reward_fn(fn))

    @property
    def game_config(self) -> dict[str, Any] | None:
        """The configuration this copy's episode plays under (``None``: never configured)."""
        return self.config.describe()

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
            "seat_outcomes": seat_outcomes(
                returns, self.learner, opponents, self.outcome_fn, status.illegal_action
            ),
            "return": returns.get(self.learner, 0.0),
            "returns": dict(returns),
            "length": status.length,
        }
        if status.illegal_action is not None:
            summary["illegal_action"] = status.illegal_action
        if self.config.configured:
            summary["config"] = self.config.describe()
        return self.view.record(summary)

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
        self.config.start_episode()  # the game side switches games at this reset too
        self.view.draw(self.np_random)  # (in SelfPlayEnv.reset's order of draws)
        return self.start_game()

    def start_game(self) -> tuple:
        """Draw the seat and line-up of a new game; the game-side reset operation to run."""
        owner = self._owner
        self.phase = _RESET
        self.games_started += 1  # recurrent opponents start a fresh state in each game
        seat = self._forced_seat or self.seat_chooser.next(self.np_random)
        self.learner = seat
        opponent_seats = [a for a in owner.game_spec.possible_agents if a != seat]
        lineup = self.slots.start_episode(len(opponent_seats), self.np_random)
        if self._default_opponents is not None:
            lineup = [self._default_opponents[a] for a in opponent_seats]
        lineup_by_seat = dict(zip(opponent_seats, lineup, strict=True))
        self.seat_policies = self.slots.bind_lineup(lineup_by_seat, owner._opponent_spaces)
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
# The vector env
# ------------------------------------------------------------------------------------------------
