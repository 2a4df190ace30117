"""The fast path for frozen SB3 opponents in the vector env: their answers without torch's overhead.

``SB3Policy`` opponents over actor-critic networks (PPO, A2C, MaskablePPO) and DQN's Q-networks on
flat observations are answered without building torch distributions: SB3's standard MLP runs in
numpy on views of the weights, anything else through the network's own torch modules, each kind
of network checked once against ``SB3Policy.act``. Batched random draws still come row by row
from each env copy's own generator, and :func:`batch_key` says which opponents may share one
forward pass. :class:`~sp_wrappers.envs.vector.batching.OpponentBatches` is its user.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.policies import SB3Policy, choose_from_scores

__all__ = ["FastSB3", "RowGenerators", "batch_key", "scoring_of"]


class RowGenerators:
    """A stand-in for ``np.random.Generator`` whose row ``i`` of a batched draw comes from
    generator ``i``, exactly as if that env's policy had been called alone with ``n = 1``.

    Draws whose ``size`` has the batch as its first dimension (``random``, ``integers``,
    ``uniform``, ``normal``, ... as every policy here uses them) are split by row; any other draw
    comes from the first row's generator.
    """

    _SIZE_POSITION = {
        "random": 0,
        "standard_normal": 0,
        "standard_exponential": 0,
        "standard_gamma": 1,
        "exponential": 1,
        "choice": 1,
        "integers": 2,
        "uniform": 2,
        "normal": 2,
        "gumbel": 2,
        "logistic": 2,
        "beta": 2,
        "binomial": 2,
    }

    def __init__(self, generators: Sequence[np.random.Generator]) -> None:
        self._generators = list(generators)

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """The common case (every policy here draws this way), without the generic dispatch."""
        shape = (size,) if isinstance(size, int | np.integer) else size
        if out is not None or not shape or shape[0] != len(self._generators):
            return self._generators[0].random(size, dtype, out)
        rows = np.empty(shape, dtype)  # each row filled in place by its own generator
        if len(shape) == 1:
            for i, generator in enumerate(self._generators):
                rows[i] = generator.random(dtype=dtype)
        else:
            for generator, row in zip(self._generators, rows, strict=True):
                generator.random(dtype=dtype, out=row)
        return rows

    def __getattr__(self, name: str) -> Any:
        first = getattr(self._generators[0], name)
        position = self._SIZE_POSITION.get(name)
        if position is None or not callable(first):
            return first
        n = len(self._generators)

        def draw(*args: Any, **kwargs: Any) -> Any:
            in_kwargs = "size" in kwargs
            if in_kwargs:
                size = kwargs["size"]
            else:
                size = args[position] if len(args) > position else None
            shape = (size,) if isinstance(size, int | np.integer) else size
            if shape is None or len(shape) == 0 or shape[0] != n:
                return first(*args, **kwargs)
            row = (1, *tuple(shape)[1:])
            rows = []
            for generator in self._generators:
                method = getattr(generator, name)
                if in_kwargs:
                    rows.append(method(*args, **{**kwargs, "size": row}))
                else:
                    rows.append(method(*args[:position], row, *args[position + 1 :], **kwargs))
            return np.concatenate(rows, axis=0)

        return draw


class FastSB3:
    """Answers for ``SB3Policy`` opponents over actor-critic networks (PPO, A2C, MaskablePPO) on
    flat observations, without the per-call overhead of building torch distributions.

    It computes the same logits (in numpy for SB3's standard MLP on CPU, else with the network's
    own torch modules), normalised the same way, and samples exactly as ``SB3Policy.act`` does.
    Each network class, with its spaces, is checked once against ``SB3Policy.act`` (same
    actions, same random draws); one that differs, and every other kind of policy, goes through
    ``policy.act`` (one batched call per policy per step).
    """

    def __init__(self) -> None:
        self._verified: dict[tuple, bool] = {}
        self._kinds: weakref.WeakKeyDictionary[Any, tuple] = weakref.WeakKeyDictionary()
        self._plans: weakref.WeakKeyDictionary[Any, tuple] = weakref.WeakKeyDictionary()

    def _numpy_plan(self, network: Any, device: Any) -> list[tuple] | None:
        """For SB3's standard MLP actor on CPU (flatten, Linear/Tanh/ReLU layers, Linear head):
        the layers as numpy views of the weights, which follow in-place weight updates (the
        sampler's latest weights). ``None`` for anything else, which takes the torch path."""
        try:
            cached = self._plans.get(network)
        except TypeError:
            return None
        if cached is not None:
            tensors, pointers, plan = cached
            # moving a module (``.to``) gives every weight new storage; loads copy in place
            if not tensors or tensors[0].data_ptr() == pointers[0]:
                return plan
        plan = _build_numpy_plan(network, device)
        tensors = [t for step in (plan or ()) for t in step[3:]]
        self._plans[network] = (tensors, [t.data_ptr() for t in tensors], plan)
        return plan

    def route(self, policy: Any, obs: Any, masks: np.ndarray | None) -> Any:
        """How to answer for ``policy``: its numpy plan (a list), ``"torch"``, or ``None`` for
        ``policy.act``. The first use of each kind of network is checked against its own act."""
        if type(policy) is not SB3Policy or not isinstance(obs, np.ndarray):
            return None
        network = policy.policy
        kind = self._kind(network)
        if kind is None:
            return None
        plan = self._numpy_plan(network, policy.device)
        if plan is None and scoring_of(network) == "q":
            return None  # Q-networks off the numpy path: SB3Policy.act, one batched call
        key = (kind, plan is not None)
        verified = self._verified.get(key)
        if verified is None:
            verified = self._agrees(policy, obs, masks, plan)
            self._verified[key] = verified
        if not verified:
            return None
        return "torch" if plan is None else plan

    def _kind(self, network: Any) -> tuple | None:
        """What the checks are cached by: the network class with its action and observation
        spaces (one class may act in a Discrete seat and a Box one), or ``None`` when the fast
        path does not apply to this network at all."""
        try:
            cached = self._kinds.get(network)
        except TypeError:
            return None
        if cached is None:
            applies = self._applies(network)
            kind = (type(network), repr(network.action_space), repr(network.observation_space))
            cached = (kind if applies else None,)
            self._kinds[network] = cached
        return cached[0]

    def act(self, policy: Any, obs: Any, masks: np.ndarray | None, rng: Any) -> np.ndarray | None:
        """The policy's actions, or ``None`` when the fast path does not apply."""
        route = self.route(policy, obs, masks)
        if route is None:
            return None
        return self.act_with_plan(policy, obs, masks, rng, None if route == "torch" else route)

    @staticmethod
    def sample_merged(parts: list[tuple], scoring: str) -> np.ndarray:
        """Actions for several numpy-plan groups at once, in the order of their rows.

        ``parts`` holds ``(plan, observations, masks, deterministic, generators, members)`` per
        group. Each group's logits come from its own plan; normalising, then masking and sampling
        (``choose_from_scores``, as everywhere) run once over all rows. Row by row these are the
        same operations, and the same random draws from each row's generator, as
        :meth:`act_with_plan`, so every row gets the same action as ``SB3Policy.act`` would give it
        alone. ``scoring`` (:func:`scoring_of`) is shared by all the groups: Q-values are taken
        greedily as they are.
        """
        blocks = [_numpy_logits(part[0], part[1]) for part in parts]
        logits = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
        scores = _normalised(logits, scoring).astype(np.float64)
        masks = None
        if any(part[2] is not None for part in parts):
            filled = [
                np.ones(b.shape, dtype=bool) if p[2] is None else p[2]
                for b, p in zip(blocks, parts, strict=True)
            ]
            masks = filled[0] if len(filled) == 1 else np.concatenate(filled)
        greedy = scoring == "q"  # Q-networks: the greedy legal action, sampled or not
        generators = [g for part in parts if not (part[3] or greedy) for g in part[4]]
        rng = None
        if generators:
            rng = generators[0] if len(generators) == 1 else RowGenerators(generators)
        if not generators or len(generators) == len(scores):  # all rows argmax, or all sampled
            return choose_from_scores(scores, masks, rng is None, rng)
        actions = choose_from_scores(scores, masks, True, None)
        sampled = np.repeat([not (p[3] or greedy) for p in parts], [len(b) for b in blocks])
        row_masks = None if masks is None else masks[sampled]
        actions[sampled] = choose_from_scores(scores[sampled], row_masks, False, rng)
        return actions

    @staticmethod
    def _applies(network: Any) -> bool:
        """Actor-critic networks (not recurrent ones) and DQN's Q-networks with Discrete actions
        on flat Box observations; every other family answers through ``SB3Policy.act`` (one
        batched call per policy per step)."""
        from stable_baselines3.common.preprocessing import is_image_space

        from ...core.policy_families import policy_family

        family = policy_family(network)
        space = network.observation_space
        flat = (
            isinstance(network.action_space, spaces.Discrete)
            and isinstance(space, spaces.Box)
            and not is_image_space(space)
        )
        if family == "q_network":  # DQN's QNetwork; QRDQN's quantiles take SB3Policy.act
            q_net = getattr(network, "q_net", None)
            return flat and q_net is not None and hasattr(q_net, "q_net")
        if family != "actor_critic":
            return False
        return flat and all(
            hasattr(network, name)
            for name in ("mlp_extractor", "action_net", "pi_features_extractor")
        )

    def _agrees(
        self, policy: Any, obs: np.ndarray, masks: np.ndarray | None, plan: list[tuple] | None
    ) -> bool:
        try:
            expected_rng, fast_rng = np.random.default_rng(7), np.random.default_rng(7)
            expected = np.asarray(policy.act(obs, masks, expected_rng))
            fast = self.act_with_plan(policy, obs, masks, fast_rng, plan)
        except Exception:  # noqa: BLE001 - any surprise: keep the general path
            return False
        return (
            np.array_equal(expected, fast)
            and expected_rng.bit_generator.state == fast_rng.bit_generator.state
        )

    def act_with_plan(
        self,
        policy: Any,
        obs: np.ndarray,
        masks: np.ndarray | None,
        rng: Any,
        plan: list[tuple] | None,
    ) -> np.ndarray:
        """The policy's actions on the route :meth:`route` chose: its numpy ``plan``, or
        ``None`` for the network's own torch modules."""
        import torch

        network = policy.policy
        scoring = scoring_of(network)
        if plan is not None:
            scores = _normalised(_numpy_logits(plan, obs), scoring).astype(np.float64)
            if scoring == "q":
                return choose_from_scores(scores, masks, True, None)
        else:
            with torch.no_grad():
                logits = _actor_logits(network, obs, policy.device)
                logits = logits - logits.logsumexp(dim=-1, keepdim=True)
                if _normalises_twice(network):
                    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            scores = logits.cpu().numpy().astype(np.float64)
        return choose_from_scores(scores, masks, policy.deterministic, rng)


def _actor_logits(network: Any, obs: np.ndarray, device: Any) -> Any:
    """``action_net(mlp_extractor.forward_actor(features))`` with the fewest torch calls: the
    standard flatten extractor and MLP are run layer by layer (same operations, same numbers)."""
    import torch
    from stable_baselines3.common.policies import BaseModel
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

    space = network.observation_space
    extractor = network.pi_features_extractor
    if type(extractor) is FlattenExtractor:  # preprocess_obs on a Box is .float(), then flatten
        flat = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
        features = torch.from_numpy(np.ascontiguousarray(flat)).to(device)
    else:
        tensor = torch.as_tensor(obs.reshape((-1, *space.shape)), device=device)
        features = BaseModel.extract_features(network, tensor, extractor)
    extractor = network.mlp_extractor
    if type(extractor) is MlpExtractor and type(extractor.policy_net) is torch.nn.Sequential:
        for layer in extractor.policy_net:
            features = layer.forward(features)
    else:
        features = extractor.forward_actor(features)
    return network.action_net.forward(features)


def _build_numpy_plan(network: Any, device: Any) -> list[tuple] | None:
    import torch
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

    if torch.device(device).type != "cpu":
        return None
    if scoring_of(network) == "q":  # DQN: features (flatten), then the q_net Sequential
        q_net = network.q_net
        if type(q_net.features_extractor) is not FlattenExtractor:
            return None
        if type(q_net.q_net) is not torch.nn.Sequential:
            return None
        layers = list(q_net.q_net)
    else:
        if type(network.pi_features_extractor) is not FlattenExtractor:
            return None
        extractor = network.mlp_extractor
        if type(extractor) is not MlpExtractor:
            return None
        if type(extractor.policy_net) is not torch.nn.Sequential:
            return None
        layers = [*extractor.policy_net, network.action_net]
    plan: list[tuple] = []
    for layer in layers:
        if type(layer) is torch.nn.Linear and layer.bias is not None:
            weight, bias = layer.weight, layer.bias  # kept to notice weights moved or replaced
            plan.append(("linear", weight.detach().numpy().T, bias.detach().numpy(), weight, bias))
        elif type(layer) is torch.nn.Tanh:
            plan.append(("tanh",))
        elif type(layer) is torch.nn.ReLU:
            plan.append(("relu",))
        else:
            return None
    if not plan or plan[-1][0] != "linear":
        return None
    return plan


def _numpy_logits(plan: list[tuple], obs: np.ndarray) -> np.ndarray:
    """The actor's logits in float32 numpy: a few microseconds where torch's per-call overhead
    costs tens (numbers agree with torch's to float rounding)."""
    x = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
    for step in plan:
        if step[0] == "linear":
            x = x @ step[1]
            x += step[2]
        elif step[0] == "tanh":
            np.tanh(x, out=x)
        else:
            np.maximum(x, 0.0, out=x)
    return x


def _logsumexp(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=-1, keepdims=True)
    return np.log(np.exp(x - top).sum(axis=-1, keepdims=True)) + top


def _normalises_twice(network: Any) -> bool:
    dist = getattr(network, "action_dist", None)
    return type(dist).__module__.startswith("sb3_contrib")


def scoring_of(network: Any) -> str:
    """How a network's outputs become scores: ``"q"`` (Q-values, taken greedily as they are),
    ``"twice"`` (sb3-contrib's MaskableCategorical normalises the logits twice) or ``"once"``
    (torch's Categorical)."""
    if getattr(network, "q_net", None) is not None and not hasattr(network, "action_net"):
        return "q"
    return "twice" if _normalises_twice(network) else "once"


def _normalised(logits: np.ndarray, scoring: str) -> np.ndarray:
    if scoring == "q":
        return logits
    logits = logits - _logsumexp(logits)  # as torch's Categorical
    if scoring == "twice":  # sb3-contrib's MaskableCategorical normalises again
        logits = logits - _logsumexp(logits)
    return logits


def batch_key(policy: Any) -> tuple:
    """Policies with equal keys answer as one: the same object, or SB3 wrappers around the same
    network acting the same way (the archive hands out such copies for ``deterministic``)."""
    network = getattr(policy, "policy", None)
    if network is not None and hasattr(policy, "deterministic") and hasattr(network, "forward"):
        return ("network", id(network), type(policy), bool(policy.deterministic))
    return ("object", id(policy))
