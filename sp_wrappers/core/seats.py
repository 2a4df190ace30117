"""Driving one PettingZoo game around a learner seat: turn order, rewards, masks, outcome.

This module holds:

- :func:`as_aec_env`, which accepts an AEC or Parallel PettingZoo env (wrapped or not) and returns
  an AEC env, converting with PettingZoo's own ``parallel_to_aec``.
- :class:`SeatDriver`, a small state machine over one AEC game. ``next_turn()`` advances the game
  (dead steps included) and returns the opponent seat that must act next, or ``None`` when it is the
  learner's turn or the learner's episode is over. Callers answer opponent turns with ``play()``:
  the single env one at a time, the vector env in batches across game copies.
- :func:`pairwise_outcome`, the default outcome (1 win, 0.5 draw, 0 loss) from final returns,
  :func:`episode_outcome`, which scores an episode lost to an illegal learner action as 0, and
  :func:`seat_outcomes`, the learner's result against each opponent seat alone (what a match
  record per seat holds in a game of more than two players).
- :class:`IllegalActionError` and :data:`ILLEGAL_ACTION_MODES`, the one rule for illegal learner
  actions: wherever the learner seat's legal actions are known (a mask in the observation dict or
  in ``info["action_mask"]``), an illegal learner action never reaches the game. By default
  (``"loss"``) the learner's episode ends as a loss: it receives the game's illegal-move reward
  (the value of PettingZoo's ``TerminateIllegalWrapper`` when the game has one, else -1, what
  PettingZoo's classic games give), its outcome is 0 and ``info["selfplay"]["illegal_action"]``
  holds the action. ``"raise"`` raises :class:`IllegalActionError` naming the action and the legal
  ones. Illegal opponent actions are always errors (``check_opponent_action``).
- :func:`conform_observation`, which returns an observation in the form its space promises
  (``Discrete``: a numpy integer, not a 0-d array; ``Box``: an array of the space's dtype).

Rewards follow PettingZoo's own ``aec_to_parallel`` convention: after every live step, each agent's
entry in ``game.rewards`` is added to its return; dead steps add nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = [
    "as_aec_env",
    "SeatDriver",
    "OpponentTurn",
    "pairwise_outcome",
    "episode_outcome",
    "seat_outcomes",
    "seat_spaces",
    "conform_observation",
    "IllegalActionError",
    "ILLEGAL_ACTION_MODES",
    "check_illegal_action_mode",
    "check_learner_action",
    "is_illegal",
]

OutcomeFn = Callable[[Mapping[str, float], str], float]

#: What happens when the learner picks an action its mask forbids.
ILLEGAL_ACTION_MODES = ("loss", "raise")
#: The illegal-move reward of games that do not declare one (PettingZoo's classic games use -1).
DEFAULT_ILLEGAL_REWARD = -1.0


class IllegalActionError(ValueError):
    """The learner chose an action its seat's action mask forbids (with ``illegal_action="raise"``).

    >>> try:
    ...     check_learner_action(3, np.array([True, False, True, False]), "player_1")
    ... except IllegalActionError as error:
    ...     print(str(error).split(". ")[0])
    The learner in seat 'player_1' chose illegal action 3; legal actions were [0, 2]
    """


def check_illegal_action_mode(mode: str) -> str:
    """Return ``mode`` if it is one of :data:`ILLEGAL_ACTION_MODES`, else raise a ``ValueError``."""
    if mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(
            f"illegal_action={mode!r} is not a known rule; use 'loss' (end the learner's episode "
            "as a loss, as PettingZoo's classic games do) or 'raise'."
        )
    return mode


def is_illegal(action: Any, mask: np.ndarray | None, start: int) -> bool:
    """Whether ``mask`` (``None``: unknown) forbids the integer ``action`` of a ``Discrete``
    space starting at ``start``."""
    if mask is None or not isinstance(action, int | np.integer):
        return False
    index = int(action) - start
    return 0 <= index < len(mask) and not mask[index]


def check_learner_action(action: Any, mask: np.ndarray | None, seat: str, start: int = 0) -> None:
    """Raise :class:`IllegalActionError` if ``mask`` (bool, or ``None`` when unknown) forbids
    the integer ``action`` of a ``Discrete`` space starting at ``start``."""
    if is_illegal(action, mask, start):
        legal = (np.flatnonzero(mask) + start).tolist()
        raise IllegalActionError(
            f"The learner in seat {seat!r} chose illegal action {int(action)}; legal actions were "
            f"{legal}. Train with masks (MaskablePPO reads env.action_masks()) or build the env "
            "with illegal_action='loss' to end such episodes as losses."
        )


def game_illegal_reward(game: Any) -> float:
    """The reward the game gives for an illegal move: the value of PettingZoo's
    ``TerminateIllegalWrapper`` around it (classic games have one), else -1.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> game_illegal_reward(tictactoe_v3.env())
    -1.0
    """
    env = game
    for _ in range(64):  # wrapper chains are short; stop on a cycle
        value = getattr(env, "_illegal_value", None)
        if isinstance(value, int | float | np.number):
            return float(value)
        inner = getattr(env, "env", None)
        if inner is None or inner is env:
            break
        env = inner
    return DEFAULT_ILLEGAL_REWARD


def as_aec_env(env: Any) -> Any:
    """Return ``env`` as a PettingZoo ``AECEnv``; raise a clear error for anything else."""
    from pettingzoo.utils.env import AECEnv, ParallelEnv

    if isinstance(env, AECEnv):
        game = env
    elif isinstance(env, ParallelEnv):
        from pettingzoo.utils.conversions import parallel_to_aec

        game = parallel_to_aec(env)
    else:
        hint = ""
        if hasattr(env, "step") and hasattr(env, "reset") and not hasattr(env, "possible_agents"):
            hint = " It looks like a single-agent Gymnasium env; train on it with SB3 directly."
        raise TypeError(
            f"Expected a PettingZoo AECEnv or ParallelEnv, got {type(env).__name__}.{hint} "
            "Pass a game such as pettingzoo.classic.tictactoe_v3.env()."
        )
    _warn_about_shimmy_truncation(game)
    agents = list(getattr(game, "possible_agents", []))
    if len(agents) < 2:
        raise ValueError(
            f"{type(env).__name__} has {len(agents)} agent(s) ({agents}); self-play needs a game "
            "with at least two seats. For single-agent games use the Gymnasium env with SB3 "
            "directly."
        )
    return game


def _warn_about_shimmy_truncation(game: Any) -> None:
    """Shimmy 2.0's OpenSpiel adapter truncates games with chance events early (it counts every
    card dealt against the game's maximum number of moves): apply the fix ``openspiel_env``
    applies (:func:`~sp_wrappers.core.openspiel.fix_shimmy_truncation`) and say so."""
    from .openspiel import fix_shimmy_truncation

    if not fix_shimmy_truncation(game):
        return
    warnings.warn(
        f"Shimmy's OpenSpielCompatibilityV0 truncates {game.game_name!r} early: it counts chance "
        "events (cards dealt, dice rolled) against the game's maximum number of moves. "
        "sp_wrappers applied openspiel_env's fix to this env (its games now end only when "
        f"OpenSpiel says so); build it with sp_wrappers.openspiel_env({game.game_name!r}) to "
        "have the fix without this warning.",
        stacklevel=4,
    )


def pairwise_outcome(returns: Mapping[str, float], learner: str) -> float:
    """The learner's mean score against each other seat: 1 if ahead, 0.5 if level, 0 if behind.

    >>> pairwise_outcome({"a": 1.0, "b": -1.0}, "a")
    1.0
    >>> pairwise_outcome({"a": 0.0, "b": 0.0, "c": 1.0}, "a")
    0.25
    """
    mine = returns[learner]
    others = [r for seat, r in returns.items() if seat != learner]
    if not others:
        return 0.5
    return sum(1.0 if mine > r else 0.5 if mine == r else 0.0 for r in others) / len(others)


_TURN_STATE = frozenset(
    ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos")
)


def _turn_state_holder(game: Any) -> Any:
    """The object whose attributes ``game.agents``, ``agent_selection``, ``rewards``,
    ``terminations``, ``truncations`` and ``infos`` resolve to.

    PettingZoo's own AEC wrappers (order enforcing, out-of-bounds checks, illegal-move
    termination) keep no turn state: each forwards those reads to the env it wraps, one
    ``__getattr__`` per layer, which costs more than a classic game's move bookkeeping. Reading
    from the innermost env gives the same objects. Any other wrapper (SuperSuit's, a user's) may
    keep its own, so the search stops there, as it does at a layer holding such an attribute.
    """
    holder = game
    while type(holder) in _forwarding_wrappers() and not _TURN_STATE & vars(holder).keys():
        holder = holder.env
    return holder


_FORWARDING: tuple[type, ...] = ()


def _forwarding_wrappers() -> tuple[type, ...]:
    global _FORWARDING
    if not _FORWARDING:
        from pettingzoo.utils import wrappers

        _FORWARDING = (
            wrappers.OrderEnforcingWrapper,
            wrappers.AssertOutOfBoundsWrapper,
            wrappers.TerminateIllegalWrapper,
            wrappers.ClipOutOfBoundsWrapper,
            wrappers.CaptureStdoutWrapper,
        )
    return _FORWARDING


def episode_outcome(
    returns: Mapping[str, float],
    learner: str,
    outcome_fn: OutcomeFn | None = None,
    illegal_action: Any = None,
) -> float:
    """The learner's outcome: 0 when its episode ended on an illegal action, else
    ``outcome_fn(returns, learner)`` (default :func:`pairwise_outcome`)."""
    if illegal_action is not None:
        return 0.0
    return float((outcome_fn or pairwise_outcome)(dict(returns), learner))


def seat_outcomes(
    returns: Mapping[str, float],
    learner: str,
    seats: Any,
    outcome_fn: OutcomeFn | None = None,
    illegal_action: Any = None,
) -> dict[str, float]:
    """The learner's result against each opponent seat alone: ``{seat: score}`` (1 win, 0.5
    draw, 0 loss), from the learner's and that seat's returns, so that in a free-for-all the seat
    that finished ahead of the learner is a loss and the one behind it a win (their mean is
    :func:`pairwise_outcome`). ``outcome_fn`` is called with the two seats' returns only;
    an episode lost to an illegal learner action is a loss against every seat.

    :param returns: each seat's return over the episode.
    :param learner: the learner's seat.
    :param seats: the opponent seats to score.
    :param outcome_fn: ``fn(returns, learner_seat) -> float`` in [0, 1]; default
        :func:`pairwise_outcome`.
    :param illegal_action: the illegal action that ended the learner's episode (``None``: none).

    >>> seat_outcomes({"a": 0.0, "b": 1.0, "c": -1.0}, "a", ["b", "c"])
    {'b': 0.0, 'c': 1.0}
    """
    mine = returns.get(learner, 0.0)
    return {
        seat: episode_outcome(
            {learner: mine, seat: returns.get(seat, 0.0)}, learner, outcome_fn, illegal_action
        )
        for seat in seats
        if seat != learner
    }


def conform_observation(obs: Any, space: spaces.Space) -> Any:
    """``obs`` in the form ``space`` promises: games may hand back a 0-d array for a ``Discrete``
    observation (PettingZoo's rock-paper-scissors does) or another dtype than the space's.

    >>> conform_observation(np.array(3), spaces.Discrete(4))
    np.int64(3)
    >>> conform_observation(np.zeros(2), spaces.Box(0, 1, (2,), np.float32)).dtype
    dtype('float32')
    """
    if isinstance(space, spaces.Discrete):
        if type(obs) is np.int64:
            return obs
        value = np.asarray(obs)
        if value.size == 1 and np.issubdtype(value.dtype, np.integer):
            return np.int64(value.reshape(()))
        return obs
    if isinstance(space, spaces.Box | spaces.MultiBinary | spaces.MultiDiscrete):
        if isinstance(obs, np.ndarray) and obs.dtype == space.dtype:
            return obs
        if isinstance(obs, np.ndarray | list | tuple | np.number | int | float):
            return np.asarray(obs, dtype=space.dtype)
        return obs
    if isinstance(space, spaces.Dict) and isinstance(obs, Mapping):
        return {
            key: conform_observation(value, space.spaces[key]) if key in space.spaces else value
            for key, value in obs.items()
        }
    return obs


def _is_masked_dict_space(space: spaces.Space) -> bool:
    return isinstance(space, spaces.Dict) and "action_mask" in space.spaces


def seat_spaces(game: Any, seat: str, keep_dict_obs: bool) -> tuple[spaces.Space, spaces.Space]:
    """The (observation, action) spaces a policy in ``seat`` sees."""
    obs_space = game.observation_space(seat)
    if _is_masked_dict_space(obs_space) and not keep_dict_obs:
        if "observation" not in obs_space.spaces:
            raise ValueError(
                f"Seat {seat!r} has a dict observation with 'action_mask' but no 'observation' "
                "key; pass keep_dict_obs=True to give the learner the whole dict."
            )
        obs_space = obs_space["observation"]
    return obs_space, game.action_space(seat)


@dataclass
class OpponentTurn:
    """An opponent seat that must act now, with what it observes."""

    seat: str
    observation: Any
    action_mask: np.ndarray | None


class SeatDriver:
    """Runs one AEC game so that a learner seat sees only its own turns.

    :param game: a PettingZoo ``AECEnv`` (see :func:`as_aec_env`).
    :param keep_dict_obs: give policies PettingZoo's whole ``{"observation", "action_mask"}`` dict
        instead of its ``"observation"`` part.
    :param illegal_action: what a learner action that the learner's known mask forbids does:
        ``"loss"`` ends the learner's episode as a loss without playing it (see
        :attr:`illegal_action_played`), ``"raise"`` raises :class:`IllegalActionError`.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> driver = SeatDriver(tictactoe_v3.env())
    >>> driver.reset("player_2", seed=0)
    >>> turn = driver.next_turn()          # player_1 moves first
    >>> turn.seat, int(turn.action_mask.sum())
    ('player_1', 9)
    >>> driver.play(4)
    >>> driver.next_turn() is None           # now the learner's turn
    True
    >>> int(driver.learner_mask().sum())
    8
    >>> driver.play(4)                       # taken: the learner's episode ends as a loss
    >>> driver.terminated, driver.illegal_action_played, driver.pop_reward()
    (True, 4, -1.0)
    """

    def __init__(
        self, game: Any, keep_dict_obs: bool = False, illegal_action: str = "loss"
    ) -> None:
        self.game = game
        self._state = _turn_state_holder(game)  # where turn state is read (see that function)
        self.keep_dict_obs = keep_dict_obs
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.illegal_reward = game_illegal_reward(game)
        self.possible_agents: list[str] = list(game.possible_agents)
        self._masked_dict = {
            a: _is_masked_dict_space(game.observation_space(a)) for a in self.possible_agents
        }
        self._n_actions = {
            a: game.action_space(a).n if isinstance(game.action_space(a), spaces.Discrete) else None
            for a in self.possible_agents
        }
        self._action_start = {
            a: int(game.action_space(a).start) if self._n_actions[a] is not None else 0
            for a in self.possible_agents
        }
        self._obs_spaces = {a: seat_spaces(game, a, keep_dict_obs)[0] for a in self.possible_agents}
        self.learner: str = self.possible_agents[0]
        self.returns: dict[str, float] = {}
        self.pending_reward = 0.0
        self.learner_steps = 0
        self.terminated = False
        self.truncated = False
        self._acting: str | None = None  # the agent next_turn() saw acting (play() reuses it)
        #: The learner's illegal action that ended its episode (``illegal_action="loss"``), or None.
        self.illegal_action_played: Any = None
        self._learner_raw: Any = None  # the learner's raw observation this turn (for its mask)

    # -- lifecycle -------------------------------------------------------------------------------
    def reset(self, learner: str, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game with ``learner`` in its seat."""
        self.game.reset(seed=seed, options=options)
        self._state = _turn_state_holder(self.game)
        self._acting = None
        self.learner = learner
        self.returns = {a: 0.0 for a in self.game.agents}
        self.pending_reward = 0.0
        self.learner_steps = 0
        self.terminated = False
        self.truncated = False
        self.illegal_action_played = None
        self._learner_raw = None

    @property
    def learner_done(self) -> bool:
        """Whether the learner's episode has ended (terminated or truncated)."""
        return self.terminated or self.truncated

    # -- turn order ------------------------------------------------------------------------------
    def next_turn(self) -> OpponentTurn | None:
        """Advance through dead steps; return the opponent that must act, or ``None``.

        ``None`` means either it is the learner's turn or the learner's episode is over
        (see :attr:`learner_done`).
        """
        game, state = self.game, self._state
        while True:
            if self.learner_done:
                return None
            if self.learner not in state.agents:
                # The learner left without a dead step (non-standard env) or the game emptied.
                self.terminated = True
                return None
            agent = state.agent_selection
            if state.terminations[agent] or state.truncations[agent]:
                learner = self.learner
                ended = state.terminations.get(learner) or state.truncations.get(learner)
                if agent == learner or ended:
                    # over for the learner: others' dead steps would add nothing to its episode
                    self.terminated = bool(state.terminations.get(learner))
                    self.truncated = not self.terminated
                    return None
                self._learner_raw = None
                game.step(None)
                continue
            self._acting = agent
            if agent == self.learner:
                return None
            obs = game.observe(agent)
            return OpponentTurn(agent, self._policy_obs(agent, obs), self._mask(agent, obs))

    def play(self, action: Any) -> None:
        """Play ``action`` for the agent whose turn it is (a live step) and collect rewards.

        A learner action that the learner's known mask forbids is not played: see
        ``illegal_action``.
        """
        game = self.game
        acting = self._acting if self._acting is not None else self._state.agent_selection
        self._acting = None
        if acting == self.learner and self._n_actions[acting] is not None:
            mask = self.learner_mask()
            start = self._action_start[acting]
            if is_illegal(action, mask, start):
                if self.illegal_action == "raise":
                    check_learner_action(action, mask, acting, start)
                self._end_on_illegal(action)
                return
        self._learner_raw = None
        game.step(action)
        for agent, reward in self._state.rewards.items():
            if agent in self.returns:
                self.returns[agent] += float(reward)
            else:
                self.returns[agent] = float(reward)
            if agent == self.learner:
                self.pending_reward += float(reward)
        if acting == self.learner:
            self.learner_steps += 1

    def _end_on_illegal(self, action: Any) -> None:
        """End the learner's episode as a loss for an illegal action (the game never sees it)."""
        reward = self.illegal_reward
        self.returns[self.learner] = self.returns.get(self.learner, 0.0) + reward
        self.pending_reward += reward
        self.learner_steps += 1
        self.terminated = True
        self.illegal_action_played = int(action)

    def pop_reward(self) -> float:
        """The learner's reward since its previous action, and reset the tally."""
        reward, self.pending_reward = self.pending_reward, 0.0
        return reward

    # -- what the learner sees -------------------------------------------------------------------
    def learner_observation(self) -> Any:
        """The learner's observation, processed as policies see it and in the form its space
        promises (see :func:`conform_observation`)."""
        raw = self._observe_learner()
        return conform_observation(
            self._policy_obs(self.learner, raw), self._obs_spaces[self.learner]
        )

    def learner_view(self) -> tuple[Any, np.ndarray | None]:
        """The learner's observation (as :meth:`learner_observation` gives it) and action mask,
        from one ``observe`` call."""
        raw = self._observe_learner()
        obs = conform_observation(
            self._policy_obs(self.learner, raw), self._obs_spaces[self.learner]
        )
        return obs, self._mask(self.learner, raw)

    def learner_mask(self) -> np.ndarray | None:
        """The learner's current action mask (bool), or ``None`` if the game has no masks."""
        if self._masked_dict[self.learner]:
            return np.asarray(self._observe_learner()["action_mask"], dtype=bool)
        return self._mask(self.learner, None)

    def outcome(self, outcome_fn: OutcomeFn | None = None) -> float:
        """The learner's outcome from the returns so far (call at episode end); 0 when the
        episode ended on an illegal learner action."""
        return episode_outcome(self.returns, self.learner, outcome_fn, self.illegal_action_played)

    def _observe_learner(self) -> Any:
        """``game.observe(learner)``, once per learner turn (observation and mask share it)."""
        if self._learner_raw is None:
            self._learner_raw = self.game.observe(self.learner)
        return self._learner_raw

    # -- helpers ---------------------------------------------------------------------------------
    def _policy_obs(self, agent: str, obs: Any) -> Any:
        if self._masked_dict[agent] and not self.keep_dict_obs:
            return obs["observation"]
        return obs

    def _mask(self, agent: str, obs: Any) -> np.ndarray | None:
        if self._masked_dict[agent]:
            if obs is None:
                obs = self.game.observe(agent)
            return np.asarray(obs["action_mask"], dtype=bool)
        infos = self._state.infos.get(agent) or {}
        mask = infos.get("action_mask")
        return None if mask is None else np.asarray(mask, dtype=bool)

    def all_actions_mask(self, agent: str) -> np.ndarray | None:
        """A mask allowing every action of a Discrete seat (for games with no masks)."""
        n = self._n_actions[agent]
        return None if n is None else np.ones(n, dtype=bool)
