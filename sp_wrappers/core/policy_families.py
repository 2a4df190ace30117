"""How each family of Stable-Baselines3 policy turns observations into an opponent's actions.

:class:`~sp_wrappers.core.policies.SB3Policy` asks this module which family a policy belongs to,
for the scores a mask is applied to (logits or Q-values), for the actions of a ``Box`` policy
(drawn with the env's generator), and whether a family can play a seat at all (refused with what
to use instead).

One place for every family SB3 and sb3-contrib ship:

============== ============================================ ===============================
family          learners                                     how it plays a masked game
============== ============================================ ===============================
actor_critic    PPO, A2C, TRPO, MaskablePPO                  masked logits, sampled or argmax
recurrent       RecurrentPPO                                 the same, with an LSTM state per
                                                             seat and episode
q_network       DQN, QRDQN                                   the greedy legal action (mean of
                                                             the quantiles for QRDQN)
actor           SAC, TD3, DDPG, TQC, CrossQ                  ``Box`` actions only (no masks)
ars             ARS (linear and MLP policies)                the greedy legal action
unknown         any other ``BasePolicy`` subclass            ``policy.predict`` (the slow path)
============== ============================================ ===============================
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = [
    "FAMILIES",
    "constructor_keywords",
    "policy_family",
    "discrete_scores",
    "continuous_actions",
    "to_env_actions",
    "check_family_plays",
    "note_slow_path",
    "constructor_parameters",
]

#: family -> (the learners that use it, how it plays)
FAMILIES: dict[str, tuple[str, str]] = {
    "actor_critic": ("PPO, A2C, TRPO, MaskablePPO", "masked logits, sampled or argmax"),
    "recurrent": ("RecurrentPPO", "masked logits, with an LSTM state per seat and episode"),
    "q_network": ("DQN, QRDQN", "the greedy legal action under the mask"),
    "actor": ("SAC, TD3, DDPG, TQC, CrossQ", "Box actions (squashed or deterministic)"),
    "ars": ("ARS", "the greedy legal action under the mask"),
    "unknown": ("a policy class of its own", "policy.predict, the slow path"),
}

# (module, class name) -> family; a user's subclass of one of these belongs to its family
_CLASSES = (
    ("sb3_contrib.common.recurrent.policies", "RecurrentActorCriticPolicy", "recurrent"),
    ("stable_baselines3.common.policies", "ActorCriticPolicy", "actor_critic"),
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy", "actor_critic"),
    ("stable_baselines3.dqn.policies", "DQNPolicy", "q_network"),
    ("sb3_contrib.qrdqn.policies", "QRDQNPolicy", "q_network"),
    ("stable_baselines3.sac.policies", "SACPolicy", "actor"),
    ("stable_baselines3.td3.policies", "TD3Policy", "actor"),
    ("sb3_contrib.tqc.policies", "TQCPolicy", "actor"),
    ("sb3_contrib.crossq.policies", "CrossQPolicy", "actor"),
    ("sb3_contrib.ars.policies", "ARSPolicy", "ars"),
)
_NOTED: set[type] = set()


def _known_classes() -> list[tuple[type, str]]:
    import importlib

    known = []
    for module_name, class_name, family in _CLASSES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # sb3-contrib not installed: its families do not exist here
            continue
        known.append((getattr(module, class_name), family))
    return known


def policy_family(policy: Any) -> str:
    """The family of an SB3 policy (a key of :data:`FAMILIES`).

    >>> import gymnasium as gym
    >>> from stable_baselines3 import DQN, PPO
    >>> policy_family(PPO("MlpPolicy", gym.make("CartPole-v1")).policy)
    'actor_critic'
    >>> policy_family(DQN("MlpPolicy", gym.make("CartPole-v1")).policy)
    'q_network'
    """
    for cls, family in _known_classes():
        if isinstance(policy, cls):
            return family
    return "unknown"


def note_slow_path(policy: Any) -> None:
    """Warn once per policy class that it is answered through ``policy.predict``."""
    cls = type(policy)
    if cls in _NOTED:
        return
    _NOTED.add(cls)
    warnings.warn(
        f"{cls.__module__}.{cls.__qualname__} belongs to no policy family sp_wrappers knows "
        f"(known: {', '.join(FAMILIES[f][0] for f in FAMILIES if f != 'unknown')}), so its "
        "opponents act through policy.predict (the slow path: one call per batch, no fast "
        "path); where the game has masks, an illegal prediction is replaced by a random "
        "legal action. Subclass one of SB3's policies to get the fast path and masked choices.",
        RuntimeWarning,
        stacklevel=3,
    )


def discrete_scores(policy: Any, family: str, obs_tensor: Any) -> Any:
    """The scores a mask is applied to for a ``Discrete`` policy: logits (actor-critic), Q-values
    (DQN; the mean over quantiles for QRDQN) or the action net's outputs (ARS). ``None`` when the
    family has none (recurrent policies: see ``SB3Policy``)."""
    if family == "q_network":
        quantile_net = getattr(policy, "quantile_net", None)
        if quantile_net is not None:
            return quantile_net(obs_tensor).mean(dim=1)
        return policy.q_net(obs_tensor)
    if family == "ars":
        features = policy.extract_features(obs_tensor, policy.features_extractor)
        return policy.action_net(features)
    if family == "actor_critic":
        inner = getattr(policy.get_distribution(obs_tensor), "distribution", None)
        return getattr(inner, "logits", None)
    return None


def _normal(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    if rng is None:
        return np.zeros(shape)
    return rng.standard_normal(shape)


def continuous_actions(
    policy: Any, family: str, obs_tensor: Any, deterministic: bool, rng: Any
) -> np.ndarray:
    """Actions of a ``Box`` policy in the policy's own range (before :func:`to_env_actions`).

    Gaussian policies (PPO and A2C without gSDE, SAC, TQC, CrossQ) draw their noise from ``rng``
    (the env's generator), so seeded envs reproduce their opponents; TD3 and DDPG actors are
    deterministic; anything else samples through the policy's own ``_predict``."""
    import torch

    if family == "actor":
        actor = policy.actor
        if hasattr(actor, "get_action_dist_params") and not getattr(actor, "use_sde", False):
            mean, log_std, _ = actor.get_action_dist_params(obs_tensor)
            mean = mean.cpu().numpy().astype(np.float64)
            if not deterministic:
                std = np.exp(log_std.cpu().numpy().astype(np.float64))
                mean = mean + std * _normal(rng, mean.shape)
            return np.tanh(mean)
        return policy._predict(obs_tensor, deterministic=deterministic).cpu().numpy()
    if family == "actor_critic" and not getattr(policy, "use_sde", False):
        inner = getattr(policy.get_distribution(obs_tensor), "distribution", None)
        if isinstance(inner, torch.distributions.Normal):
            mean = inner.mean.cpu().numpy().astype(np.float64)
            if deterministic:
                return mean
            std = inner.stddev.cpu().numpy().astype(np.float64)
            return mean + std * _normal(rng, mean.shape)
    return policy._predict(obs_tensor, deterministic=deterministic).cpu().numpy()


def to_env_actions(policy: Any, actions: np.ndarray) -> np.ndarray:
    """What SB3's ``BasePolicy.predict`` does after the network: ``Box`` actions are unscaled from
    ``[-1, 1]`` (squashed policies) or clipped to the space; others are reshaped."""
    space = policy.action_space
    actions = np.asarray(actions).reshape((-1, *space.shape))
    if isinstance(space, spaces.Box):
        if policy.squash_output:
            actions = policy.unscale_action(actions)
        actions = np.clip(actions, space.low, space.high).astype(space.dtype)
    return actions


def check_family_plays(policy: Any, action_space: spaces.Space, seat: str) -> None:
    """Raise a ``ValueError`` naming the family and what to use instead when ``policy`` (an SB3
    policy) cannot play a seat with ``action_space``: a ``Box``-action actor (SAC, TD3, DDPG,
    TQC, CrossQ) in a game of ``Discrete`` moves (the games with action masks), or the reverse."""
    family = policy_family(policy)
    mine = policy.action_space
    if isinstance(mine, spaces.Box) and isinstance(action_space, spaces.Discrete):
        learners = FAMILIES[family][0] if family != "unknown" else type(policy).__name__
        raise ValueError(
            f"Seat {seat!r} plays Discrete moves ({action_space}), but this opponent's policy "
            f"belongs to the {family!r} family ({learners}), with Box actions {mine}: it cannot "
            "choose a move, let alone a legal one under the game's action mask. Use a learner "
            "with Discrete actions for this game (PPO, MaskablePPO, DQN, QRDQN, A2C, TRPO, ARS "
            "or RecurrentPPO)."
        )
    if isinstance(mine, spaces.Discrete) and isinstance(action_space, spaces.Box):
        raise ValueError(
            f"Seat {seat!r} plays Box actions ({action_space}), but this opponent's policy "
            f"({type(policy).__name__}) chooses Discrete moves {mine}. Use a learner with Box "
            "actions for this game (SAC, TD3, DDPG, TQC, CrossQ, or PPO/A2C)."
        )


def constructor_keywords(cls: type) -> set[str] | None:
    """The keyword arguments ``cls(...)`` takes, ``None`` when it takes ``**kwargs``."""
    import inspect

    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameters = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            return None
        var_keyword = False
        for parameter in parameters:
            if parameter.kind is parameter.VAR_KEYWORD:
                var_keyword = True
            elif parameter.kind is not parameter.VAR_POSITIONAL:
                names.add(parameter.name)
        if not var_keyword:
            return names - {"self"}
    return None


def constructor_parameters(policy: Any) -> dict[str, Any]:
    """The arguments that rebuild ``policy`` with ``type(policy)(**arguments)``.

    SB3's ``_get_constructor_parameters`` leaves some out for some families (the LSTM sizes of
    recurrent policies, ``with_bias`` and ``squash_output`` of ARS) and, for ARS's linear policy,
    names arguments its constructor does not take (``net_arch``, ``activation_fn``): this adds
    the first and drops the second.
    """
    params = dict(policy._get_constructor_parameters())
    if hasattr(policy, "share_features_extractor"):
        params["share_features_extractor"] = bool(policy.share_features_extractor)
    lstm = getattr(policy, "lstm_actor", None)
    if lstm is not None and hasattr(lstm, "hidden_size"):
        params.setdefault("lstm_hidden_size", int(lstm.hidden_size))
        params.setdefault("n_lstm_layers", int(lstm.num_layers))
        for name in ("shared_lstm", "enable_critic_lstm", "lstm_kwargs"):
            if hasattr(policy, name):
                params.setdefault(name, getattr(policy, name))
    if policy_family(policy) == "ars":
        import torch

        linears = [m for m in policy.action_net if isinstance(m, torch.nn.Linear)]
        params["with_bias"] = bool(linears and linears[0].bias is not None)
        if isinstance(policy.action_space, spaces.Box):
            params["squash_output"] = bool(policy.squash_output)
    takes = constructor_keywords(type(policy))
    if takes is not None:
        params = {k: v for k, v in params.items() if k in takes}
    return params
