"""One env copy of the vector env as the main process sees it: what a ``SelfPlayEnv`` holds
besides the game.

A copy owns its learner seat, its opponents and their swap schedule, its random stream, its game
configuration and the summary of its episodes (kept until ``drain_episodes`` hands them over);
``get_attr``/``env_method`` on the vector env reach it first (``action_masks``,
``sync_latest_weights``, ``drain_episodes``, ``learner_seats``, ``opponent_source``,
``np_random``, ...). It is handed what it shares with the other copies (:class:`CopySettings`)
and where opponents run (:class:`OpponentPlacement`), and describes each game-side operation it
wants as an operation tuple the env sends to the games; it never sees the env. What depends on
who the learner is (a seat or a team: line-ups, summaries, masks) it asks the env's seating
(:mod:`sp_wrappers.envs.seating`).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.seats import OutcomeFn
from ..game_config import CopyConfig, RewardFn, check_reward_fn
from ..seating import LearnerSeat
from ..selfplay_env import (
    MAX_EMPTY_GAMES,
    FinishedEpisodes,
    GameSeeds,
    SeatChooser,
    pop_learner_seat,
    wrapper_generator,
)
from ..symmetric_view import EpisodeView
from .batching import OpponentRow
from .game_workers import PLAY, RESET, Status

__all__ = ["CopySettings", "EnvCopy", "OpponentPlacement"]


@dataclass(frozen=True)
class CopySettings:
    """What every copy of one vector env shares, fixed when the env is built."""

    #: who the learner is (a seat, or a team): seats, spaces, line-ups and outcomes
    seating: LearnerSeat
    #: ``learner=`` as given (an agent, ``"random"``, ``"alternate"``, a team)
    learner_mode: str
    outcome_fn: OutcomeFn | None
    render_mode: str | None
    metadata: dict[str, Any]
    #: the checked symmetries the learner's episodes are played in (``None``: none)
    symmetries: Any = None


class OpponentPlacement:
    """Moves SB3-backed opponents to the device that answers them, once per policy object.

    :param device: a torch device (``"cpu"``, ``"cuda"``), or ``None`` to leave opponents where
        they are.

    >>> from gymnasium import spaces
    >>> from sp_wrappers.core.policies import RandomPolicy
    >>> placement = OpponentPlacement("cpu")
    >>> placement.place(RandomPolicy(spaces.Discrete(3)))  # nothing to move
    """

    def __init__(self, device: str | None) -> None:
        self.device = device
        self._placed: weakref.WeakSet[Any] = weakref.WeakSet()

    def place(self, policy: Any) -> None:
        """Move ``policy``'s network to ``device`` (SB3-backed policies; others are left)."""
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


class EnvCopy:
    """One env copy as the main process sees it (see the module docstring).

    :param index: the copy's index in its vector env.
    :param opponent: what the copy's opponents are drawn from (as ``SelfPlayEnv``'s ``opponent``;
        ``None`` plays random opponents).
    :param settings: what the copies share.
    :param placement: where the copy's opponents run.
    """

    def __init__(
        self, index: int, opponent: Any, settings: CopySettings, placement: OpponentPlacement
    ) -> None:
        self.index = index
        self.settings = settings
        self.seating = seating = settings.seating
        self.learner_mode = settings.learner_mode
        self.learner_seats = seating.learner_seats
        self.observation_space = seating.observation_space
        self.action_space = seating.action_space
        self.keep_dict_obs = seating.keep_dict_obs
        self.outcome_fn = settings.outcome_fn
        self.render_mode = settings.render_mode
        self.metadata = dict(settings.metadata)
        self.placement = placement
        self._init_opponents(opponent, random_when_none=True)
        self.seat_policies: dict[str, Any] = {}
        self.learner = self.learner_seats[0]
        self._np_random: np.random.Generator | None = None
        self.seat_chooser = SeatChooser(seating.chooser_seats, self.learner_mode)
        # the episode being started or played
        self.phase = RESET
        self.status: Status | None = None
        self._forced_seat: str | None = None
        self._reset_options: dict | None = None
        self._game_seed: int | None = None
        self._game_seeds = GameSeeds()
        self._empty_games = 0
        self.games_started = 0  # with the copy and the seat: a recurrent opponent's state key
        self.config = CopyConfig()
        self.view = EpisodeView(settings.symmetries)
        self.finished_episodes = FinishedEpisodes()

    def _init_opponents(self, opponent: Any, random_when_none: bool = False) -> None:
        #: ``opponent`` as given (copies given the same one share draws under ``"shared"``)
        self.opponent = opponent
        self.slots, self._default_opponents = self.seating.opponent_slots(
            opponent, random_when_none
        )
        self.opponent_source = self.slots.source

    @property
    def np_random(self) -> np.random.Generator:
        """This copy's generator: learner seats, opponent draws, opponents' random choices."""
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    # -- SelfPlayEnv's hooks, per copy -------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """The learner's current legal actions (one row per slot of a learner team)."""
        return self.seating.copy_masks(self.status, self.view)

    def drain_episodes(self) -> list[dict[str, Any]]:
        """The ``info["selfplay"]`` of every episode this copy finished since the last call
        (see :class:`~sp_wrappers.envs.selfplay_env.FinishedEpisodes`)."""
        return self.finished_episodes.drain()

    def sync_latest_weights(self, version: int, state: Mapping[str, Any]) -> None:
        """Give this copy's opponent source the learner's newest weights (a learner team's
        per-team mapping keeps the other teams' own)."""
        source = self.opponent_source
        if self.seating.sync_latest_weights(self.slots, source, version, state):
            self.placement.place(getattr(source, "latest", None))

    def set_opponent(self, opponent: Any) -> None:
        """Play ``opponent`` in this copy's opponent seats from its next episode start on (see
        :meth:`SelfPlayEnv.set_opponent <sp_wrappers.SelfPlayEnv.set_opponent>`; a learner team
        takes ``{team: source}`` too). With ``opponent_draw="shared"`` the vector env then
        regroups the copies that share a source."""
        self._init_opponents(opponent)

    def set_reward_fn(self, fn: RewardFn | None) -> None:
        """This copy's part of :meth:`SelfPlayVecEnv.set_reward_fn` (``env_method``'s way in)."""
        self.config.stage_reward(check_reward_fn(fn))

    @property
    def game_config(self) -> dict[str, Any] | None:
        """The configuration this copy's episode plays under (``None``: never configured)."""
        return self.config.describe()

    def episode_summary(self, status: Status) -> dict[str, Any]:
        """What ``info["selfplay"]`` holds at the end of the learner's episode."""
        returns, illegal = status.returns or {}, status.illegal_action
        summary = self.seating.summary(
            self.learner, returns, self.seat_policies, self.outcome_fn, illegal
        )
        summary["length"] = status.length
        if self.config.configured:
            summary["config"] = self.config.describe()
        return self.view.record(summary)

    # -- the episode's life cycle (mirrors SelfPlayEnv.reset / step) -------------------------------
    def begin_reset(self, seed: int | None, options: dict | None) -> tuple:
        """Start a new episode (``seed`` reseeds the copy); the game-side reset operation."""
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
        self.phase = RESET
        self.games_started += 1  # recurrent opponents start a fresh state in each game
        seat = self._forced_seat or self.seat_chooser.next(self.np_random)
        self.learner = seat
        self.seat_policies = self.seating.lineup(
            seat, self.slots, self.np_random, self._default_opponents
        )
        for policy in self.seat_policies.values():
            self.placement.place(policy)
        learner = self.seating.game_learner(seat)
        return (RESET, self.index, learner, self._game_seed, self._reset_options)

    def opponent_row(self, seat: str, observation: Any, mask: np.ndarray | None) -> OpponentRow:
        """The opponent turn of ``seat`` in this copy's game, for the opponent batches."""
        return OpponentRow(
            self.seat_policies[seat],
            seat,
            observation,
            mask,
            self.np_random,
            (id(self), self.games_started, seat),
        )

    def restart_empty_game(self) -> tuple:
        """The game ended before the learner's first turn: play another (as SelfPlayEnv does)."""
        self._empty_games += 1
        if self._empty_games >= MAX_EMPTY_GAMES:
            raise RuntimeError(
                f"{MAX_EMPTY_GAMES} games in a row ended before seat {self.learner!r} could act; "
                "check the game's turn order or pick another learner seat."
            )
        self._game_seed = self._game_seeds.next(None)
        return self.start_game()

    def begin_step(self, action: Any) -> tuple:
        """The game-side operation that plays the learner's ``action`` (a learner team's: one
        per team agent)."""
        self.phase = PLAY
        self.slots.count_step()
        return (PLAY, self.index, self.seating.game_action(action), True)
