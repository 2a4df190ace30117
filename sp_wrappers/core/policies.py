"""Opponent policies: the batched protocol every opponent follows, three ready-made ones, and
the one way to act with a policy.

The protocol is one method, ``act(observations, action_masks, rng) -> actions``, on a *batch*;
the ready-made policies play uniformly over the legal actions, call a user's function (a scripted
bot), or play a frozen copy of a Stable-Baselines3 policy (deterministic or sampled).

Every caller acts through :func:`act_in_games` (the envs, naming each row's game and seat) or a
:class:`PolicyPlayer` (one game at a time: matches, openings, replays, a person's game), so a
policy that keeps a state between moves (RecurrentPPO's LSTM) continues it for the whole game.
A recurrent :class:`SB3Policy` called without ``state_keys`` raises instead of playing every move
from a fresh state.

Observations arrive exactly as the learner would see them for that seat (a stacked ``np.ndarray``
of shape ``(n, *obs_shape)``, or a dict of such arrays for dict observation spaces), masks as a
boolean array of shape ``(n, n_actions)`` or ``None`` when the game has no masks. Randomness comes
from the ``rng`` argument so that a seeded env reproduces its opponents' choices.
"""

from __future__ import annotations

import copy
import itertools
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

__all__ = [
    "Policy",
    "RandomPolicy",
    "CallablePolicy",
    "SB3Policy",
    "is_policy",
    "check_opponent_action",
    "stack_observations",
    "choose_from_scores",
    "act_in_games",
    "PolicyPlayer",
    "frozen_copy",
]

Observations = np.ndarray | dict[str, np.ndarray]


@runtime_checkable
class Policy(Protocol):
    """What an opponent is: anything with a ``policy_id`` and a batched ``act``.

    ``act`` receives ``n`` observations (stacked), their action masks (``(n, n_actions)`` booleans,
    or ``None``) and a numpy ``Generator``, and returns ``n`` actions as an array whose first
    dimension is ``n``. It must only choose legal actions when a mask is given.
    """

    policy_id: str

    def act(
        self, observations: Observations, action_masks: np.ndarray | None, rng: np.random.Generator
    ) -> np.ndarray: ...


def is_policy(obj: Any) -> bool:
    """True when ``obj`` follows the :class:`Policy` protocol (has ``act`` and ``policy_id``)."""
    return callable(getattr(obj, "act", None)) and hasattr(obj, "policy_id")


def stack_observations(observations: list[Any]) -> Observations:
    """Stack single observations (arrays or dicts of arrays) into one batch (a new array, as
    ``np.stack`` gives it)."""
    first = observations[0]
    if isinstance(first, dict):
        return {key: stack_observations([o[key] for o in observations]) for key in first}
    if len(observations) == 1 and type(first) is np.ndarray:  # most opponent groups, each step
        return first[np.newaxis].copy()
    return np.stack(observations)


def _batch_size(observations: Observations) -> int:
    if isinstance(observations, dict):
        return len(next(iter(observations.values())))
    return len(observations)


class RandomPolicy:
    """Plays a uniformly random action, and only legal ones when the game gives masks.

    :param action_space: the action space to play in when there is no mask. ``None`` (the
        default) plays in the space of the seat it is given: ``SelfPlayEnv``, ``SelfPlayVecEnv``
        and ``play_match`` hand each seat :meth:`in_space` of that seat's action space.
    :param policy_id: the name reported in ``info["selfplay"]["opponent"]``.

    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> policy = RandomPolicy(spaces.Discrete(3))
    >>> masks = np.array([[False, True, False], [True, False, False]])
    >>> policy.act(np.zeros((2, 4)), masks, np.random.default_rng(0)).tolist()
    [1, 0]
    >>> in_pong = RandomPolicy().in_space(spaces.Discrete(6))  # a game without masks
    >>> in_pong.act(np.zeros((2, 128)), None, np.random.default_rng(0)).shape
    (2,)
    """

    def __init__(self, action_space: spaces.Space | None = None, policy_id: str = "random") -> None:
        self.action_space = action_space
        self.policy_id = policy_id
        self._in_spaces: list[tuple[spaces.Space, RandomPolicy]] = []

    def in_space(self, action_space: spaces.Space) -> RandomPolicy:
        """This policy playing in ``action_space``: itself when it was built with a space, else a
        copy (one per distinct space, reused, so every env copy of a seat shares one policy)."""
        if self.action_space is not None:
            return self
        known = self.__dict__.setdefault("_in_spaces", [])
        for space, policy in known:
            if space == action_space:
                return policy
        policy = copy.copy(self)
        policy.action_space = action_space
        policy._in_spaces = []
        known.append((action_space, policy))
        return policy

    def act(
        self, observations: Observations, action_masks: np.ndarray | None, rng: np.random.Generator
    ) -> np.ndarray:
        n = _batch_size(observations)
        if action_masks is not None:
            masks = np.asarray(action_masks, dtype=bool)
            # Gumbel-free trick: a random score per legal action, pick the largest.
            scores = rng.random(masks.shape)
            scores[~masks] = -1.0
            start = self.action_space.start if isinstance(self.action_space, spaces.Discrete) else 0
            return start + scores.argmax(axis=1)
        if self.action_space is None:
            raise ValueError(
                "RandomPolicy got no action mask and has no action_space; pass "
                "RandomPolicy(action_space), or use RandomPolicy().in_space(action_space) (the "
                "envs and play_match do this for each seat)."
            )
        space = self.action_space
        if isinstance(space, spaces.Discrete):
            return space.start + rng.integers(0, space.n, size=n)
        if isinstance(space, spaces.MultiDiscrete):
            return space.start + (rng.random((n, *space.nvec.shape)) * space.nvec).astype(np.int64)
        if isinstance(space, spaces.MultiBinary):
            return rng.integers(0, 2, size=(n, *np.atleast_1d(space.n)), dtype=np.int8)
        if isinstance(space, spaces.Box):
            low = np.where(np.isfinite(space.low), space.low, -1.0)
            high = np.where(np.isfinite(space.high), space.high, 1.0)
            return rng.uniform(low, high, size=(n, *space.shape)).astype(space.dtype)
        raise TypeError(f"RandomPolicy does not support action space {space!r}.")

    def __repr__(self) -> str:
        return f"RandomPolicy(policy_id={self.policy_id!r})"


class CallablePolicy:
    """Wraps a plain function (a scripted bot, a heuristic) as an opponent.

    By default ``fn(observation, action_mask)`` is called once per observation with single,
    unbatched arguments (``action_mask`` is ``None`` for games without masks) and returns one
    action. With ``batched=True`` it receives the whole batch and returns a batch of actions.

    :param fn: the function.
    :param policy_id: the name reported in ``info["selfplay"]["opponent"]``.
    :param batched: whether ``fn`` takes and returns batches.
    :param needs_rng: pass the env's ``np.random.Generator`` as a third argument ``rng``.

    >>> import numpy as np
    >>> first_legal = CallablePolicy(lambda obs, mask: int(np.flatnonzero(mask)[0]), "first-legal")
    >>> first_legal.act(np.zeros((1, 2)), np.array([[False, True, True]]), None).tolist()
    [1]
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        policy_id: str | None = None,
        batched: bool = False,
        needs_rng: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"CallablePolicy needs a callable, got {type(fn).__name__}.")
        self.fn = fn
        self.policy_id = policy_id or getattr(fn, "__name__", "callable")
        self.batched = batched
        self.needs_rng = needs_rng

    def act(
        self, observations: Observations, action_masks: np.ndarray | None, rng: np.random.Generator
    ) -> np.ndarray:
        extra = (rng,) if self.needs_rng else ()
        if self.batched:
            return np.asarray(self.fn(observations, action_masks, *extra))
        n = _batch_size(observations)
        actions = []
        for i in range(n):
            obs = (
                {k: v[i] for k, v in observations.items()}
                if isinstance(observations, dict)
                else observations[i]
            )
            mask = None if action_masks is None else action_masks[i]
            actions.append(self.fn(obs, mask, *extra))
        return np.asarray(actions)

    def __repr__(self) -> str:
        return f"CallablePolicy({self.policy_id!r})"


class SB3Policy:
    """A frozen copy of a Stable-Baselines3 policy of any family, acting on batches with masks.

    The weights are copied at construction (to CPU by default), so later training of the source
    model does not change this opponent until :meth:`load_state_dict` is called. Every policy
    family SB3 and sb3-contrib ship plays (see :mod:`sp_wrappers.core.policy_families`), and
    never an illegal move when the game gives masks:

    - actor-critic (PPO, A2C, TRPO, MaskablePPO): masked logits, sampled or argmax;
    - recurrent (RecurrentPPO): the same, with an LSTM state per player and episode (the envs
      pass ``state_keys``; other callers act through a :class:`PolicyPlayer`; a call without
      them raises, rather than playing every move from a fresh state);
    - Q-networks (DQN, QRDQN) and ARS: the greedy legal action (``deterministic`` is ignored,
      as SB3's own ``predict`` does for them);
    - ``Box`` actors (SAC, TD3, DDPG, TQC, CrossQ; also PPO and A2C on ``Box`` actions): the
      action in the seat's range, with the Gaussian noise of a sampled action drawn from ``rng``;
    - any other ``BasePolicy`` subclass: ``policy.predict`` (a one-time note says it is the slow
      path), an illegal prediction replaced by a random legal action.

    :param policy: an SB3 ``BasePolicy`` or a model (``model.policy`` is taken).
    :param deterministic: take the most likely action instead of sampling.
    :param policy_id: the name reported in ``info["selfplay"]["opponent"]``.
    :param device: torch device for inference.
    :param copy_weights: copy the policy (default); ``False`` shares the given module.

    >>> from stable_baselines3 import PPO
    >>> import gymnasium as gym
    >>> model = PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=16, batch_size=16)
    >>> frozen = SB3Policy(model, deterministic=True, policy_id="cartpole-v0")
    >>> frozen.act(np.zeros((3, 4), dtype=np.float32), None, np.random.default_rng(0)).shape
    (3,)
    >>> frozen.family
    'actor_critic'
    """

    #: how many LSTM states a recurrent opponent keeps (one per player and episode)
    MAX_STATES = 4096

    def __init__(
        self,
        policy: Any,
        deterministic: bool = False,
        policy_id: str = "sb3",
        device: str = "cpu",
        copy_weights: bool = True,
    ) -> None:
        import torch  # noqa: F401  (imported lazily: keeps `import sp_wrappers` light)
        from stable_baselines3.common.policies import BasePolicy

        from .policy_families import policy_family

        source = getattr(policy, "policy", policy)
        if not isinstance(source, BasePolicy):
            raise TypeError(
                f"SB3Policy needs a Stable-Baselines3 model or policy, got {type(policy).__name__}."
            )
        self.policy = frozen_copy(source) if copy_weights else source
        self.policy.to(device)
        self.policy.set_training_mode(False)
        self.deterministic = deterministic
        self.policy_id = policy_id
        self.device = device
        self.family = policy_family(self.policy)
        self._states: OrderedDict[Any, Any] = OrderedDict()

    @property
    def recurrent(self) -> bool:
        """Whether the policy keeps a state between moves: callers then pass ``state_keys``."""
        return self.family == "recurrent"

    @property
    def observation_space(self) -> spaces.Space:
        return self.policy.observation_space

    @property
    def action_space(self) -> spaces.Space:
        return self.policy.action_space

    def state_dict(self) -> dict[str, np.ndarray]:
        """The weights as numpy arrays (what the archive and worker processes exchange)."""
        return {k: v.detach().cpu().numpy() for k, v in self.policy.state_dict().items()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the weights (numpy arrays or tensors), e.g. with the learner's latest ones.

        The weights are copied in place, as torch's ``load_state_dict`` does (numpy views of them,
        such as the vector env's fast path keeps, follow). Where the policy's modules use torch's
        own loading (no load hooks, no ``_load_from_state_dict`` of their own) and ``state`` has
        exactly the policy's keys and shapes, the copy skips torch's walk over the modules (a
        sampler's latest weights are loaded after every rollout: every step, for SAC); anything
        else, mismatches included, goes through ``torch.nn.Module.load_state_dict(strict=True)``,
        which raises as it always did.
        """
        import torch

        tensors = {k: torch.as_tensor(np.asarray(v)) for k, v in state.items()}
        targets = self._load_targets()
        if targets is not None and targets.keys() == tensors.keys():
            if all(t.shape == tensors[k].shape for k, (t, _, _) in targets.items()):
                with torch.no_grad():
                    for key, (target, _, _) in targets.items():
                        target.copy_(tensors[key])
                return
        self.policy.load_state_dict(tensors, strict=True)

    def _load_targets(self) -> dict[str, tuple[Any, dict[str, Any], str]] | None:
        """``state_dict`` key -> (the parameter or buffer, its module's dict, its name there) for
        the in-place load, or ``None`` where torch's own ``load_state_dict`` must do it. Cached
        per module object; an entry whose module holds another tensor under its name now (a
        parameter replaced) rebuilds the cache."""
        cached = self.__dict__.get("_load_cache")
        if cached is not None and cached[0] is self.policy:
            targets = cached[1]
            if targets is None or all(
                owner.get(name) is tensor for tensor, owner, name in targets.values()
            ):
                return targets
        targets = _in_place_targets(self.policy)
        self.__dict__["_load_cache"] = (self.policy, targets)
        return targets

    def act(
        self,
        observations: Observations,
        action_masks: np.ndarray | None,
        rng: np.random.Generator,
        state_keys: Sequence[Hashable] | None = None,
    ) -> np.ndarray:
        """One action per observation row (see the class docstring for each family).

        :param state_keys: for recurrent policies, one key per row naming the player and its
            episode (e.g. ``(env_id, episode_number, seat)``): a key seen before continues its
            LSTM state, a new key starts from a fresh one. Required for recurrent policies (act
            through :func:`act_in_games` or a :class:`PolicyPlayer`); other families ignore it.
        :raises ValueError: a recurrent policy called without ``state_keys``.
        """
        import torch

        from .policy_families import continuous_actions, discrete_scores, to_env_actions

        if state_keys is None and self.recurrent:
            raise ValueError(
                f"SB3Policy {self.policy_id!r} is recurrent (RecurrentPPO): each move depends on "
                "its LSTM state, and act() got no state_keys, so it would play every move from a "
                "fresh state. Act through PolicyPlayer(policy) (one game at a time: reset() at "
                "each game's start) or act_in_games(..., state_keys=[one key per game and seat])."
            )
        if self.family == "unknown":
            return self._act_predict(observations, action_masks, rng)
        policy = self.policy
        discrete = isinstance(self.action_space, spaces.Discrete)
        with torch.no_grad():
            obs_tensor, _ = policy.obs_to_tensor(observations)
            if self.family == "recurrent":
                distribution = self._recurrent_distribution(obs_tensor, state_keys)
                inner = getattr(distribution, "distribution", None)
                if discrete and hasattr(inner, "logits"):
                    scores = inner.logits.cpu().numpy().astype(np.float64)
                    return choose_from_scores(scores, action_masks, self.deterministic, rng)
                actions = distribution.get_actions(deterministic=self.deterministic)
                return to_env_actions(policy, actions.cpu().numpy())
            scores = discrete_scores(policy, self.family, obs_tensor) if discrete else None
            if scores is None:
                actions = continuous_actions(
                    policy, self.family, obs_tensor, self.deterministic, rng
                )
                return to_env_actions(policy, actions)
        greedy = self.deterministic or self.family in ("q_network", "ars")
        scores = scores.cpu().numpy().astype(np.float64)
        return choose_from_scores(scores, action_masks, greedy, rng)

    def _recurrent_distribution(self, obs_tensor: Any, keys: Sequence[Hashable] | None) -> Any:
        """The action distribution of a recurrent policy, each row continuing its key's state."""
        import torch

        policy = self.policy
        first = next(iter(obs_tensor.values())) if isinstance(obs_tensor, dict) else obs_tensor
        n = int(first.shape[0])
        layers, size = policy.lstm_actor.num_layers, policy.lstm_actor.hidden_size
        zero = torch.zeros((layers, size), device=first.device)
        keys = list(keys) if keys is not None else [None] * n
        if len(keys) != n:
            raise ValueError(f"state_keys has {len(keys)} keys for {n} observations.")
        known = [self._states.get(k) if k is not None else None for k in keys]
        hidden = torch.stack([zero if s is None else s[0] for s in known], dim=1)
        cell = torch.stack([zero if s is None else s[1] for s in known], dim=1)
        starts = torch.zeros(n, device=hidden.device)
        distribution, (new_h, new_c) = policy.get_distribution(obs_tensor, (hidden, cell), starts)
        for i, key in enumerate(keys):
            if key is None:
                continue
            self._states[key] = (new_h[:, i].clone(), new_c[:, i].clone())
            self._states.move_to_end(key)
        while len(self._states) > self.MAX_STATES:
            self._states.popitem(last=False)
        return distribution

    def _act_predict(
        self, observations: Observations, action_masks: np.ndarray | None, rng: Any
    ) -> np.ndarray:
        """A policy of no known family: SB3's public ``predict``, masks enforced afterwards."""
        from .policy_families import note_slow_path

        note_slow_path(self.policy)
        try:
            actions, _ = self.policy.predict(observations, deterministic=self.deterministic)
        except Exception as error:  # noqa: BLE001 - name the policy, not torch's internals
            raise TypeError(
                f"Opponent {self.policy_id!r}: {type(self.policy).__name__}.predict() failed on a "
                f"batch of observations ({type(error).__name__}: {error}). sp_wrappers answers "
                "policies of unknown families through SB3's public predict(observation, "
                "deterministic=...); make it accept a batch, or subclass one of SB3's policies "
                "(ActorCriticPolicy, DQNPolicy, SACPolicy, ...)."
            ) from error
        actions = np.asarray(actions)
        space = self.action_space
        if action_masks is not None and isinstance(space, spaces.Discrete):
            masks = np.asarray(action_masks, dtype=bool)
            actions = actions.reshape(-1).astype(np.int64)
            rows = np.arange(len(actions))
            inside = (actions >= 0) & (actions < masks.shape[1])
            legal = inside & masks[rows, np.clip(actions, 0, masks.shape[1] - 1)]
            if not legal.all():
                noise = rng.random(masks.shape) if rng is not None else np.ones(masks.shape)
                fallback = np.where(masks, noise, -1.0).argmax(axis=1)
                actions = np.where(legal, actions, fallback)
        return actions

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_states"] = OrderedDict()  # LSTM states stay with the process that made them
        state.pop("_load_cache", None)  # rebuilt on the other side, for its own modules
        return state

    def __copy__(self) -> SB3Policy:
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._states = OrderedDict()  # a copy plays other games: its own LSTM states
        return clone

    def __repr__(self) -> str:
        mode = "deterministic" if self.deterministic else "sampled"
        return f"SB3Policy({self.policy_id!r}, {mode})"


def _in_place_targets(module: Any) -> dict[str, tuple[Any, dict[str, Any], str]] | None:
    """The tensors ``module.state_dict()`` names, found as torch's ``state_dict`` walks the
    modules (shared modules under each of their names), or ``None`` when some module loads in a
    way of its own (hooks, an overridden ``_load_from_state_dict``) or the walk does not give
    ``state_dict``'s keys."""
    import torch

    base = torch.nn.Module
    targets: dict[str, tuple[Any, dict[str, Any], str]] = {}
    stack = [("", module)]
    while stack:
        prefix, current = stack.pop()
        if (
            type(current)._load_from_state_dict is not base._load_from_state_dict
            or current._load_state_dict_pre_hooks
            or current._load_state_dict_post_hooks
            or current._state_dict_hooks
            or current._state_dict_pre_hooks
        ):
            return None
        for name, param in current._parameters.items():
            if param is not None:
                targets[prefix + name] = (param, current._parameters, name)
        for name, buffer in current._buffers.items():
            if buffer is not None and name not in current._non_persistent_buffers_set:
                targets[prefix + name] = (buffer, current._buffers, name)
        for name, child in current._modules.items():
            if child is not None:
                stack.append((f"{prefix}{name}.", child))
    if targets.keys() != module.state_dict(keep_vars=True).keys():
        return None
    return targets


def act_in_games(
    policy: Policy,
    observations: Observations,
    action_masks: np.ndarray | None,
    rng: Any,
    state_keys: Sequence[Hashable],
) -> np.ndarray:
    """``policy.act``, with ``state_keys`` (one per row: the game and seat it plays) passed to
    policies that keep a state between moves (``policy.recurrent``, e.g. a RecurrentPPO
    :class:`SB3Policy`). What the envs call for every opponent move; callers that play one game
    at a time use a :class:`PolicyPlayer`, which calls this with keys of its own."""
    if getattr(policy, "recurrent", False):
        return policy.act(observations, action_masks, rng, state_keys=state_keys)
    return policy.act(observations, action_masks, rng)


_PLAYER_NUMBERS = itertools.count()


class PolicyPlayer:
    """A policy playing games one after another, one move at a time: the way to act with a
    policy outside the envs (matches, forced openings, replays, a person's game).

    A policy that keeps a state between moves (``policy.recurrent``: a RecurrentPPO
    :class:`SB3Policy`) continues the state of the current game and seat at every :meth:`act`;
    :meth:`reset` at a game's start begins fresh states. Other policies are simply called. Two
    players of one policy (both seats of a self-play game) keep separate states.

    :param policy: the policy that chooses the moves.

    >>> player = PolicyPlayer(RandomPolicy())
    >>> player.reset()  # a new game
    >>> player.act(np.zeros((1, 9)), np.eye(9, dtype=bool)[[4]], np.random.default_rng(0))
    array([4])
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.number = next(_PLAYER_NUMBERS)
        self.game = 0

    @property
    def recurrent(self) -> bool:
        """Whether the policy keeps a state between moves."""
        return bool(getattr(self.policy, "recurrent", False))

    def reset(self) -> None:
        """A new game starts: the next moves begin from fresh states."""
        self.game += 1

    def act(
        self,
        observations: Observations,
        action_masks: np.ndarray | None,
        rng: Any,
        seats: Sequence[Hashable] | None = None,
    ) -> np.ndarray:
        """The policy's actions for this game's observations (one row per seat it plays).

        :param seats: who plays each row within the game (e.g. the seat's name), so a policy
            playing several seats keeps one state per seat; default: the row's position.
        """
        rows = range(_batch_size(observations)) if seats is None else seats
        keys = [("player", self.number, self.game, seat) for seat in rows]
        return act_in_games(self.policy, observations, action_masks, rng, keys)

    def __repr__(self) -> str:
        return f"PolicyPlayer({self.policy!r}, game={self.game})"


def choose_from_scores(
    scores: np.ndarray, masks: np.ndarray | None, deterministic: bool, rng: Any
) -> np.ndarray:
    """One action per row of ``scores`` (logits or Q-values), never a masked one: the argmax, or
    a sample from ``softmax(scores)`` drawn with ``rng`` (Gumbel-max, so reproducible per env).

    >>> choose_from_scores(np.array([[0.0, 5.0, 1.0]]), np.array([[True, False, True]]), True, None)
    array([2])
    """
    if masks is not None:
        scores = np.where(np.asarray(masks, dtype=bool), scores, -np.inf)
    if deterministic or rng is None:
        return scores.argmax(axis=1)
    gumbel = -np.log(-np.log(rng.random(scores.shape).clip(1e-300, 1.0)))
    return (scores + gumbel).argmax(axis=1)


def frozen_copy(policy: Any) -> Any:
    """An independent copy of an SB3 policy, for inference.

    A plain ``copy.deepcopy`` fails on a policy that has trained: actor-critic policies keep their
    last action distribution, whose logits are non-leaf tensors that torch refuses to deepcopy.
    So the policy is rebuilt from its constructor parameters (as SB3's own ``BasePolicy.load``
    does) and given a copy of the weights; deepcopy is the fallback for policies that cannot be
    rebuilt that way.
    """
    from .policy_families import constructor_parameters

    try:
        clone = type(policy)(**constructor_parameters(policy))
        clone.load_state_dict(policy.state_dict())
    except Exception:  # noqa: BLE001 - a class that cannot be rebuilt this way: deepcopy
        return copy.deepcopy(policy)
    return clone


def check_opponent_action(
    policy: Policy, action: Any, action_space: spaces.Space, mask: np.ndarray | None, seat: str
) -> Any:
    """Validate one opponent action; return it in the form the game expects.

    Raises a ``ValueError`` naming the opponent, the seat and the action when the action is out
    of the seat's action space or illegal under the current mask.
    """
    if isinstance(action_space, spaces.Discrete):
        value = np.asarray(action)
        if value.size != 1 or not np.issubdtype(value.dtype, np.integer):
            raise ValueError(
                f"Opponent {policy.policy_id!r} in seat {seat!r} returned {action!r}, "
                f"which is not an integer action of {action_space}. Its act() must return one "
                "integer per observation."
            )
        action = int(value.reshape(()))
        if not action_space.contains(action):
            raise ValueError(
                f"Opponent {policy.policy_id!r} in seat {seat!r} returned action {action}, "
                f"outside the seat's action space {action_space}."
            )
        if mask is not None and not mask[action - action_space.start]:
            legal = (np.flatnonzero(mask) + action_space.start).tolist()
            raise ValueError(
                f"Opponent {policy.policy_id!r} in seat {seat!r} chose illegal action {action}; "
                f"legal actions were {legal}. Opponents must respect the action mask."
            )
        return action
    action = np.asarray(action, dtype=action_space.dtype).reshape(action_space.shape)
    if not action_space.contains(action):
        raise ValueError(
            f"Opponent {policy.policy_id!r} in seat {seat!r} returned action {action!r}, "
            f"outside the seat's action space {action_space}."
        )
    return action
