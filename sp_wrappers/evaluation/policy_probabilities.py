"""What a policy would play, as probabilities: the input of exact evaluation (exploitability).

:func:`action_probabilities` turns any opponent a toolkit user holds (a Stable-Baselines3 model
or policy, an :class:`~sp_wrappers.SB3Policy` such as a snapshot from
:meth:`SnapshotArchive.load_policy <sp_wrappers.SnapshotArchive.load_policy>`, a
:class:`~sp_wrappers.RandomPolicy`, or any :class:`~sp_wrappers.Policy`) into the probability of
each action on a batch of observations, masked to the legal actions and renormalised:

- actor-critic policies (PPO, A2C, TRPO, MaskablePPO): the softmax of their masked logits, or
  the one most likely legal action when the policy is deterministic;
- Q-networks (DQN, QRDQN), ARS and other SB3 policies: their greedy legal action;
- ``RandomPolicy``: uniform over the legal actions;
- any other policy with an ``action_probabilities(observations, action_masks)`` method: its own
  answer; without one, the action its ``act`` returns with ``rng=None`` (taken as deterministic,
  e.g. :class:`~sp_wrappers.games.baselines.PerfectTicTacToePolicy` playing its first best move).

:func:`as_mixture` reads a policy or a weighted list of policies into ``[(policy, weight)]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ..core.errors import SpWrappersError
from ..core.policies import RandomPolicy, SB3Policy, is_policy
from ..opponents.mixture import MixturePolicy

__all__ = ["action_probabilities", "as_mixture", "as_scored_policy", "UnscorablePolicyError"]


class UnscorablePolicyError(SpWrappersError, ValueError):
    """A policy whose action probabilities cannot be read (memory, continuous actions)."""


def as_scored_policy(policy: Any, deterministic: bool | None = None) -> Any:
    """``policy`` ready for :func:`action_probabilities`: an SB3 model or ``BasePolicy`` becomes an
    :class:`SB3Policy` sharing its weights (sampled unless ``deterministic``); an ``SB3Policy``
    keeps its own ``deterministic`` unless one is given."""
    if is_policy(policy) and not isinstance(policy, SB3Policy):
        return policy
    if not isinstance(policy, SB3Policy):
        try:
            policy = SB3Policy(policy, deterministic=bool(deterministic), copy_weights=False)
        except TypeError:
            raise UnscorablePolicyError(
                f"Expected a policy (an SB3 model or policy, an SB3Policy such as a snapshot from "
                f"archive.load_policy, RandomPolicy or any Policy), got {type(policy).__name__}."
            ) from None
        return policy
    if deterministic is not None and policy.deterministic != deterministic:
        clone = object.__new__(type(policy))
        clone.__dict__.update(policy.__dict__)
        clone.deterministic = deterministic
        return clone
    return policy


def as_mixture(
    policy_or_mixture: Any, deterministic: bool | None = None
) -> list[tuple[Any, float]]:
    """``[(policy, weight)]`` with weights summing to 1, from one policy, a list of ``(policy,
    weight)`` pairs or a mapping ``{policy: weight}``. A
    :class:`~sp_wrappers.opponents.mixture.MixturePolicy` (one member drawn per game) is read as
    its members, each weighted by its share of the mixture's weight.

    >>> from sp_wrappers import RandomPolicy
    >>> [w for _, w in as_mixture([(RandomPolicy(), 1), (RandomPolicy(), 3)])]
    [0.25, 0.75]
    """
    if isinstance(policy_or_mixture, Mapping):
        pairs = list(policy_or_mixture.items())
    elif isinstance(policy_or_mixture, Sequence) and not isinstance(policy_or_mixture, str):
        pairs = list(policy_or_mixture)
        if not all(isinstance(p, tuple | list) and len(p) == 2 for p in pairs):
            raise UnscorablePolicyError(
                "A mixture is a list of (policy, weight) pairs, e.g. [(snapshot_a, 0.7), "
                f"(snapshot_b, 0.3)]; got {policy_or_mixture!r}."
            )
    else:
        pairs = [(policy_or_mixture, 1.0)]
    weights = np.array([float(w) for _, w in pairs], dtype=np.float64)
    if not len(pairs) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise UnscorablePolicyError(
            f"A mixture needs at least one policy and finite weights of 0 or more, got {weights}."
        )
    if weights.sum() <= 0:
        raise UnscorablePolicyError("A mixture's weights sum to 0: give some policy a weight.")
    weights = weights / weights.sum()
    out: list[tuple[Any, float]] = []
    for (p, _), w in zip(pairs, weights, strict=True):
        if isinstance(p, MixturePolicy):  # drawn per game: reach-weighted members
            out.extend(
                (member, float(w) * share) for member, share in as_mixture(p.pairs(), deterministic)
            )
        else:
            out.append((as_scored_policy(p, deterministic), float(w)))
    return out


def _one_hot(actions: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((len(actions), n))
    out[np.arange(len(actions)), np.asarray(actions, dtype=np.int64).reshape(-1)] = 1.0
    return out


def _masked_softmax(scores: np.ndarray, masks: np.ndarray) -> np.ndarray:
    scores = np.where(masks, scores, -np.inf)
    scores = scores - scores.max(axis=1, keepdims=True)
    exp = np.where(masks, np.exp(scores), 0.0)
    return exp / exp.sum(axis=1, keepdims=True)


def _sb3_probabilities(policy: SB3Policy, observations: Any, masks: np.ndarray) -> np.ndarray:
    import torch

    from ..core.policy_families import discrete_scores

    if not isinstance(policy.action_space, spaces.Discrete):
        raise UnscorablePolicyError(
            f"Policy {policy.policy_id!r} has {policy.action_space} actions; exact evaluation "
            "needs Discrete actions (a probability per move)."
        )
    if policy.family == "recurrent":
        raise UnscorablePolicyError(
            f"Policy {policy.policy_id!r} is recurrent (RecurrentPPO): its moves depend on its "
            "memory of the game, not only on what it observes, so they cannot be read per "
            "position. Evaluate a feed-forward policy (MaskablePPO, PPO, DQN...)."
        )
    n = masks.shape[1]
    if policy.family == "unknown":
        actions, _ = policy.policy.predict(observations, deterministic=True)
        return _one_hot(np.asarray(actions), n)
    with torch.no_grad():
        obs_tensor, _ = policy.policy.obs_to_tensor(observations)
        scores = discrete_scores(policy.policy, policy.family, obs_tensor)
    scores = scores.cpu().numpy().astype(np.float64)
    if policy.deterministic or policy.family in ("q_network", "ars"):
        return _one_hot(np.where(masks, scores, -np.inf).argmax(axis=1), n)
    return _masked_softmax(scores, masks)


def action_probabilities(policy: Any, observations: Any, action_masks: Any) -> np.ndarray:
    """The probability of each action, ``(n, n_actions)``, for a batch of ``n`` observations (as
    the seat's player would receive them) and their ``(n, n_actions)`` boolean masks: 0 on every
    illegal action, each row summing to 1. See the module docstring for each kind of policy.

    >>> import numpy as np
    >>> from sp_wrappers import RandomPolicy
    >>> action_probabilities(RandomPolicy(), np.zeros((1, 2)), np.array([[True, False, True]]))
    array([[0.5, 0. , 0.5]])
    """
    masks = np.asarray(action_masks, dtype=bool)
    if masks.ndim != 2 or not masks.any(axis=1).all():
        raise ValueError(
            "action_probabilities needs (n, n_actions) masks with a legal action in each row."
        )
    if isinstance(policy, SB3Policy):
        probabilities = _sb3_probabilities(policy, observations, masks)
    elif isinstance(policy, RandomPolicy):
        probabilities = masks / masks.sum(axis=1, keepdims=True)
    elif callable(getattr(policy, "action_probabilities", None)):
        probabilities = np.asarray(policy.action_probabilities(observations, masks), np.float64)
    else:
        actions = np.asarray(policy.act(observations, masks, None)).reshape(-1)
        probabilities = _one_hot(actions, masks.shape[1])
    probabilities = np.where(masks, probabilities, 0.0)
    total = probabilities.sum(axis=1, keepdims=True)
    if np.any(total <= 0):
        name = getattr(policy, "policy_id", type(policy).__name__)
        raise UnscorablePolicyError(
            f"Policy {name!r} put no probability on any legal action of an observation; it must "
            "respect the action mask."
        )
    return probabilities / total
