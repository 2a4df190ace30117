"""Opponent policies: the batched protocol every opponent follows, and three ready-made ones.

This module holds:

- :class:`Policy`, the protocol: ``act(observations, action_masks, rng) -> actions`` on a *batch*.
- :class:`RandomPolicy`, uniform over legal actions (mask-aware).
- :class:`CallablePolicy`, wraps a user function such as a scripted bot.
- :class:`SB3Policy`, a frozen copy of a Stable-Baselines3 policy (deterministic or sampled).
- :func:`is_policy`, :func:`check_opponent_action`, helpers shared by the envs.

Observations arrive exactly as the learner would see them for that seat (a stacked ``np.ndarray``
of shape ``(n, *obs_shape)``, or a dict of such arrays for dict observation spaces), masks as a
boolean array of shape ``(n, n_actions)`` or ``None`` when the game has no masks. Randomness comes
from the ``rng`` argument so that a seeded env reproduces its opponents' choices.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
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
    """Stack single observations (arrays or dicts of arrays) into one batch."""
    first = observations[0]
    if isinstance(first, dict):
        return {key: np.stack([o[key] for o in observations]) for key in first}
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
    """A frozen copy of a Stable-Baselines3 policy, acting on batches with masks applied.

    The weights are copied at construction (to CPU by default), so later training of the source
    model does not change this opponent until :meth:`load_state_dict` is called. Masks are applied
    to the action logits of discrete policies (PPO, A2C, MaskablePPO) and to Q-values (DQN), so
    the opponent never picks an illegal action, even when it was trained without masks.

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
    """

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

        source = getattr(policy, "policy", policy)
        if not isinstance(source, BasePolicy):
            raise TypeError(
                f"SB3Policy needs a Stable-Baselines3 model or policy, got {type(policy).__name__}."
            )
        self.policy = _frozen_copy(source) if copy_weights else source
        self.policy.to(device)
        self.policy.set_training_mode(False)
        self.deterministic = deterministic
        self.policy_id = policy_id
        self.device = device

    @property
    def observation_space(self) -> spaces.Space:
        return self.policy.observation_space

    @property
    def action_space(self) -> spaces.Space:
        return self.policy.action_space

    def state_dict(self) -> dict[str, np.ndarray]:
        """The weights as numpy arrays (what the archive and worker processes exchange)."""
        return {k: v.detach().cpu().numpy() for k, v in self.policy.state_dict().items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replace the weights (numpy arrays or tensors), e.g. with the learner's latest ones."""
        import torch

        self.policy.load_state_dict(
            {k: torch.as_tensor(np.asarray(v)) for k, v in state.items()}, strict=True
        )

    def act(
        self, observations: Observations, action_masks: np.ndarray | None, rng: np.random.Generator
    ) -> np.ndarray:
        import torch

        policy = self.policy
        with torch.no_grad():
            obs_tensor, _ = policy.obs_to_tensor(observations)
            logits = self._discrete_scores(obs_tensor)
            if logits is None:
                actions = policy._predict(obs_tensor, deterministic=self.deterministic)
                actions = actions.cpu().numpy()
                if isinstance(self.action_space, spaces.Box):
                    actions = np.clip(actions, self.action_space.low, self.action_space.high)
                return actions.reshape((-1, *self.action_space.shape))
        scores = logits.cpu().numpy().astype(np.float64)
        return choose_from_scores(scores, action_masks, self.deterministic, rng)

    def _discrete_scores(self, obs_tensor: Any) -> Any:
        """Logits (actor-critic) or Q-values (DQN) for Discrete action spaces, else None."""
        if not isinstance(self.action_space, spaces.Discrete):
            return None
        policy = self.policy
        q_net = getattr(policy, "q_net", None)
        if q_net is not None:  # DQN: act greedily on Q-values (or sample a softmax when asked)
            return q_net(obs_tensor)
        if hasattr(policy, "get_distribution"):
            distribution = policy.get_distribution(obs_tensor)
            inner = getattr(distribution, "distribution", None)
            if inner is not None and hasattr(inner, "logits"):
                return inner.logits
        return None

    def __repr__(self) -> str:
        mode = "deterministic" if self.deterministic else "sampled"
        return f"SB3Policy({self.policy_id!r}, {mode})"


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


def _frozen_copy(policy: Any) -> Any:
    """An independent copy of an SB3 policy, for inference.

    A plain ``copy.deepcopy`` fails on a policy that has trained: actor-critic policies keep their
    last action distribution, whose logits are non-leaf tensors that torch refuses to deepcopy.
    So the policy is rebuilt from its constructor parameters (as SB3's own ``BasePolicy.load``
    does) and given a copy of the weights; deepcopy is the fallback for policies that cannot be
    rebuilt that way.
    """
    try:
        clone = type(policy)(**policy._get_constructor_parameters())
    except (TypeError, ValueError, KeyError, AttributeError, NotImplementedError):
        return copy.deepcopy(policy)
    clone.load_state_dict(policy.state_dict())
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
