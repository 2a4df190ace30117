"""The fast path for frozen SB3 opponents in the vector env: their answers without torch's overhead.

``SB3Policy`` opponents over actor-critic networks (PPO, A2C, MaskablePPO), DQN's Q-networks and
SAC's (or TQC's) squashed-Gaussian actors, all on flat ``Box`` observations, are answered without
building torch distributions: SB3's standard MLP runs in numpy on views of the weights (a
:class:`NumpyPlan`), actor-critic networks off that path through their own torch modules, each
kind of network checked once against ``SB3Policy.act``. Random draws (sampled logits, a sampled
actor's Gaussian noise) still come row by row from each env copy's own generator, and
:func:`batch_key` says which opponents may share one forward pass.
:class:`~sp_wrappers.envs.vector.batching.OpponentBatches` is its user.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.policies import SB3Policy, choose_from_scores
from .row_generators import RowGenerators

__all__ = ["FastSB3", "NumpyPlan", "RowGenerators", "UNKNOWN", "batch_key", "scoring_of"]


#: :meth:`FastSB3.known_route`'s answer for a network whose route must be asked for
UNKNOWN = object()


class NumpyPlan(list):
    """A frozen SB3 network as numpy steps on views of its torch weights, in order:
    ``("linear", W.T, b, weight, bias)``, ``("tanh",)`` and ``("relu",)``. The views follow
    in-place weight loads (the sampler's latest weights); :attr:`tensors` are the torch weights
    they are views of, to notice a module moved or its weights replaced.

    :param steps: the layers after the observation is flattened (as ``FlattenExtractor``).
    :param scoring: what the network gives (:func:`scoring_of`): logits (``"once"``,
        ``"twice"``) or Q-values (``"q"``) from the last step, or ``"gaussian"``: the steps end at
        a squashed-Gaussian actor's latent and :attr:`head` holds its two output layers.
    :param n_outputs: the number of actions (``Discrete``) or the action's size (``Box``).
    :param head: for ``"gaussian"``: ``(mu W.T, mu b, log_std W.T, log_std b, log_std min,
        log_std max)``.
    :param tensors: the torch weights behind every view.
    :param space: the network's action space as ``repr`` gives it (plans of one scoring, size
        and space may be answered together).
    """

    def __init__(
        self,
        steps: list[tuple],
        scoring: str,
        n_outputs: int,
        head: tuple | None = None,
        tensors: Sequence[Any] = (),
        space: str = "",
    ) -> None:
        super().__init__(steps)
        self.scoring = scoring
        self.n_outputs = n_outputs
        self.head = head
        self.tensors = list(tensors)
        self.space = space


class FastSB3:
    """Answers for ``SB3Policy`` opponents over actor-critic networks (PPO, A2C, MaskablePPO),
    DQN's Q-networks and SAC's (TQC's) squashed-Gaussian actors on flat observations, without
    the per-call overhead of torch.

    It computes the same logits, Q-values or Gaussian means and log-stds (in numpy for SB3's
    standard MLP on CPU; actor-critic networks otherwise with their own torch modules) and turns
    them into actions exactly as ``SB3Policy.act`` does, drawing the same random numbers from the
    same generator. Each network class, with its spaces, is checked once against
    ``SB3Policy.act`` (same actions, ``Box`` actions to float rounding; same random draws); one
    that differs, and every other kind of policy, goes through ``policy.act`` (one batched call
    per policy per step).
    """

    def __init__(self) -> None:
        self._verified: dict[tuple, bool] = {}
        self._kinds: weakref.WeakKeyDictionary[Any, tuple] = weakref.WeakKeyDictionary()
        self._plans: weakref.WeakKeyDictionary[Any, tuple] = weakref.WeakKeyDictionary()
        # id(network) -> (weak reference, its first weight's address or None, route): each
        # step's lookup in one plain dict (the caches above cost a weak reference per lookup)
        self._routes: dict[int, tuple[Any, int | None, Any]] = {}

    def _numpy_plan(self, network: Any, device: Any) -> NumpyPlan | None:
        """For SB3's standard MLP on CPU (flatten, Linear/Tanh/ReLU layers, then the output
        layer or a squashed-Gaussian actor's two heads): its :class:`NumpyPlan`. ``None`` for
        anything else (actor-critic networks then take the torch path)."""
        try:
            cached = self._plans.get(network)
        except TypeError:
            return None
        if cached is not None:
            pointer, plan = cached
            # moving a module (``.to``) gives every weight new storage; loads copy in place
            if plan is None or plan.tensors[0].data_ptr() == pointer:
                return plan
        plan = _build_numpy_plan(network, device)
        self._plans[network] = (None if plan is None else plan.tensors[0].data_ptr(), plan)
        return plan

    def route(self, policy: Any, obs: Any, masks: np.ndarray | None) -> Any:
        """How to answer for ``policy``: its :class:`NumpyPlan`, ``"torch"``, or ``None`` for
        ``policy.act``. The first use of each kind of network is checked against its own act;
        the answer is kept for the network while it lives and its weights keep their storage."""
        if type(policy) is not SB3Policy or not isinstance(obs, np.ndarray):
            return None
        network = policy.policy
        known = self.known_route(policy)
        if known is not UNKNOWN:
            return known
        route = self._route(policy, obs, masks)
        try:
            reference = weakref.ref(network, self._forget)
        except TypeError:
            return route
        pointer = route.tensors[0].data_ptr() if isinstance(route, NumpyPlan) else None
        self._routes[id(network)] = (reference, pointer, route)
        return route

    def known_route(self, policy: Any) -> Any:
        """What :meth:`route` answered for ``policy``'s network (on array observations), while
        it still holds; :data:`UNKNOWN` when it must be asked with observations (a network not
        seen yet, or weights given new storage since)."""
        if type(policy) is not SB3Policy:
            return None
        network = policy.policy
        cached = self._routes.get(id(network))
        if cached is not None and cached[0]() is network:
            if cached[1] is None or cached[2].tensors[0].data_ptr() == cached[1]:
                return cached[2]
        return UNKNOWN

    def _forget(self, reference: Any) -> None:
        """A network's route is dropped with the network (its id may be reused)."""
        for key, entry in list(self._routes.items()):
            if entry[0] is reference:
                del self._routes[key]

    def _route(self, policy: Any, obs: np.ndarray, masks: np.ndarray | None) -> Any:
        """:meth:`route` without its cache of answers."""
        network = policy.policy
        kind = self._kind(network)
        if kind is None:
            return None
        plan = self._numpy_plan(network, policy.device)
        if plan is None and kind[-1] in ("q", "gaussian"):
            return None  # Q-networks and actors off the numpy path: SB3Policy.act, one call
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
        spaces (one class may act in a Discrete seat and a Box one) and its
        :func:`scoring_of`, or ``None`` when the fast path does not apply to this network."""
        try:
            cached = self._kinds.get(network)
        except TypeError:
            return None
        if cached is None:
            applies = self._applies(network)
            kind = (
                type(network),
                repr(network.action_space),
                repr(network.observation_space),
                scoring_of(network),
            )
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
    def sample_merged(
        parts: list[tuple], scoring: str, masks: np.ndarray | None = None
    ) -> np.ndarray:
        """Actions for several numpy-plan groups at once, in the order of their rows.

        ``parts`` holds ``(plan, observations, masks, deterministic, generators, members)`` per
        group. Each group's logits come from its own plan; normalising, then masking and sampling
        (``choose_from_scores``, as everywhere) run once over all rows. Row by row these are the
        same operations, and the same random draws from each row's generator, as
        :meth:`act_with_plan`, so every row gets the same action as ``SB3Policy.act`` would give it
        alone. ``scoring`` (:func:`scoring_of`) is shared by all the groups: Q-values are taken
        greedily as they are. ``masks``, when given, are all the rows' masks at once (the
        groups' own are then not joined again). Squashed-Gaussian plans go to
        :meth:`squash_merged`.
        """
        blocks = [_numpy_logits(part[0], part[1]) for part in parts]
        logits = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
        scores = _normalised(logits, scoring)
        if scoring != "q":  # Q-values are only compared: float32 picks the same argmax
            scores = scores.astype(np.float64)
        if masks is None and any(part[2] is not None for part in parts):
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
    def squash_merged(parts: list[tuple]) -> np.ndarray:
        """Actions for several squashed-Gaussian groups acting in one action space, in the
        order of their rows: ``parts`` as for :meth:`sample_merged`, with the policy last
        (``(plan, observations, masks, deterministic, generators, members, policy)``). Each
        group's mean and log-std come from its own plan; the noise of every sampled row is drawn
        from that row's generator, and squashing and rescaling run once over all rows, which
        row by row is what :meth:`act_with_plan` does for each group alone."""
        generators = [g for part in parts if not part[3] for g in part[4]]
        rng = None
        if generators:
            rng = generators[0] if len(generators) == 1 else RowGenerators(generators)
        groups = [(part[0], part[1], part[3]) for part in parts]
        return _squashed_gaussian_actions(groups, rng, parts[0][6].policy)

    @staticmethod
    def _applies(network: Any) -> bool:
        """Actor-critic networks (not recurrent ones) and DQN's Q-networks with Discrete actions,
        and SAC's or TQC's squashed-Gaussian actors (without gSDE) with Box actions, on flat Box
        observations; every other family answers through ``SB3Policy.act`` (one batched call per
        policy per step)."""
        from stable_baselines3.common.preprocessing import is_image_space

        from ...core.policy_families import policy_family

        family = policy_family(network)
        space = network.observation_space
        flat = isinstance(space, spaces.Box) and not is_image_space(space)
        discrete = isinstance(network.action_space, spaces.Discrete)
        if family == "q_network":  # DQN's QNetwork; QRDQN's quantiles take SB3Policy.act
            q_net = getattr(network, "q_net", None)
            return flat and discrete and q_net is not None and hasattr(q_net, "q_net")
        if family == "actor":  # SAC, TQC; TD3's and DDPG's actors, CrossQ's, take the act path
            return flat and isinstance(network.action_space, spaces.Box) and _squashed(network)
        if family != "actor_critic":
            return False
        return (
            flat
            and discrete
            and all(
                hasattr(network, name)
                for name in ("mlp_extractor", "action_net", "pi_features_extractor")
            )
        )

    def _agrees(
        self, policy: Any, obs: np.ndarray, masks: np.ndarray | None, plan: NumpyPlan | None
    ) -> bool:
        try:
            expected_rng, fast_rng = np.random.default_rng(7), np.random.default_rng(7)
            expected = np.asarray(policy.act(obs, masks, expected_rng))
            fast = self.act_with_plan(policy, obs, masks, fast_rng, plan)
        except Exception:  # noqa: BLE001 - any surprise: keep the general path
            return False
        if expected_rng.bit_generator.state != fast_rng.bit_generator.state:
            return False
        if plan is not None and plan.scoring == "gaussian":
            return _close_actions(expected, fast, policy.action_space)
        return np.array_equal(expected, fast)

    def act_with_plan(
        self,
        policy: Any,
        obs: np.ndarray,
        masks: np.ndarray | None,
        rng: Any,
        plan: NumpyPlan | None,
    ) -> np.ndarray:
        """The policy's actions on the route :meth:`route` chose: its numpy ``plan``, or
        ``None`` for the network's own torch modules (actor-critic networks only)."""
        import torch

        network = policy.policy
        if plan is not None:
            if plan.scoring == "gaussian":
                return _squashed_gaussian_actions([(plan, obs, policy.deterministic)], rng, network)
            scores = _normalised(_numpy_logits(plan, obs), plan.scoring)
            if plan.scoring == "q":  # only compared: float32 picks the same argmax as float64
                return choose_from_scores(scores, masks, True, None)
            scores = scores.astype(np.float64)
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


#: (module, class) of the squashed-Gaussian actors whose ``get_action_dist_params`` the numpy
#: plan computes: ``latent_pi``, then ``mu`` and ``log_std`` clamped to the module's bounds
_SQUASHED_ACTORS = (
    ("stable_baselines3.sac.policies", "Actor"),
    ("sb3_contrib.tqc.policies", "Actor"),
)


def _squashed(network: Any) -> bool:
    """Whether ``network.actor`` is SAC's or TQC's own squashed-Gaussian actor without gSDE
    (the branch of ``continuous_actions`` that draws its noise from the env's generator)."""
    actor = getattr(network, "actor", None)
    if actor is None or getattr(actor, "use_sde", True) or not network.squash_output:
        return False
    method = getattr(type(actor), "get_action_dist_params", None)
    owner = (getattr(method, "__module__", None), getattr(method, "__qualname__", ""))
    return any(
        owner == (module, f"{name}.get_action_dist_params") for module, name in _SQUASHED_ACTORS
    )


def _build_numpy_plan(network: Any, device: Any) -> NumpyPlan | None:
    import torch
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

    if torch.device(device).type != "cpu":
        return None
    scoring = scoring_of(network)
    heads: list[Any] = []
    if scoring == "q":  # DQN: features (flatten), then the q_net Sequential
        q_net = network.q_net
        if type(q_net.features_extractor) is not FlattenExtractor:
            return None
        if type(q_net.q_net) is not torch.nn.Sequential:
            return None
        layers = list(q_net.q_net)
    elif scoring == "gaussian":  # SAC/TQC actor: flatten, latent_pi, then mu and log_std
        actor = network.actor
        if type(actor.features_extractor) is not FlattenExtractor:
            return None
        if type(actor.latent_pi) is not torch.nn.Sequential:
            return None
        layers, heads = list(actor.latent_pi), [actor.mu, actor.log_std]
    else:
        if type(network.pi_features_extractor) is not FlattenExtractor:
            return None
        extractor = network.mlp_extractor
        if type(extractor) is not MlpExtractor:
            return None
        if type(extractor.policy_net) is not torch.nn.Sequential:
            return None
        layers = [*extractor.policy_net, network.action_net]
    steps: list[tuple] = []
    for layer in layers:
        if _is_linear(layer):
            weight, bias = layer.weight, layer.bias  # kept to notice weights moved or replaced
            steps.append(("linear", weight.detach().numpy().T, bias.detach().numpy(), weight, bias))
        elif type(layer) is torch.nn.Tanh:
            steps.append(("tanh",))
        elif type(layer) is torch.nn.ReLU:
            steps.append(("relu",))
        else:
            return None
    if steps and steps[0][0] != "linear":  # the activations work in place on a layer's output
        return None
    tensors = [t for step in steps for t in step[3:]]
    if scoring == "gaussian":
        if not all(_is_linear(layer) for layer in heads):
            return None
        mu, log_std = heads
        bounds = sys.modules[type(network.actor).__module__]  # its LOG_STD_MIN, LOG_STD_MAX
        head = (
            mu.weight.detach().numpy().T,
            mu.bias.detach().numpy(),
            log_std.weight.detach().numpy().T,
            log_std.bias.detach().numpy(),
            bounds.LOG_STD_MIN,
            bounds.LOG_STD_MAX,
        )
        tensors += [mu.weight, mu.bias, log_std.weight, log_std.bias]
        n_outputs = int(mu.bias.shape[0])
        return NumpyPlan(steps, scoring, n_outputs, head, tensors, repr(network.action_space))
    if not steps or steps[-1][0] != "linear":
        return None
    n_outputs = int(steps[-1][2].shape[0])
    return NumpyPlan(steps, scoring, n_outputs, None, tensors, repr(network.action_space))


def _is_linear(layer: Any) -> bool:
    import torch

    return type(layer) is torch.nn.Linear and layer.bias is not None


def _numpy_logits(plan: list[tuple], obs: np.ndarray) -> np.ndarray:
    """The plan's steps in float32 numpy (an actor's logits, Q-values, or a Gaussian actor's
    latent): a few microseconds where torch's per-call overhead costs tens (numbers agree with
    torch's to float rounding)."""
    x = obs
    if type(x) is not np.ndarray or x.dtype != np.float32 or x.ndim != 2:
        x = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
    for step in plan:
        if step[0] == "linear":
            weight_t = step[1]
            x = x @ weight_t if weight_t.size < _ROW_BY_ROW_WEIGHTS else _linear(x, weight_t)
            x += step[2]
        elif step[0] == "tanh":
            np.tanh(x, out=x)
        else:
            np.maximum(x, 0.0, out=x)
    return x


#: layers with at least this many weights take a few rows one row at a time (``gemv``): BLAS's
#: matrix product of a few rows (``gemm``) costs several row products there and, from
#: ``rows * weights > 2 ** 18``, starts threads (milliseconds on a busy machine)
_ROW_BY_ROW_WEIGHTS = 16384
_ROW_BY_ROW_ROWS = 16


def _linear(x: np.ndarray, weight_t: np.ndarray) -> np.ndarray:
    """``x @ weight_t`` for float32 rows; a wide layer's few rows one by one (the same sums,
    to float rounding, at a fraction of the cost)."""
    rows = len(x)
    if rows < 2 or rows > _ROW_BY_ROW_ROWS or weight_t.size < _ROW_BY_ROW_WEIGHTS:
        return x @ weight_t
    out = np.empty((rows, weight_t.shape[1]), dtype=np.result_type(x, weight_t))
    for i in range(rows):
        np.matmul(x[i], weight_t, out=out[i])
    return out


def _squashed_gaussian_actions(
    groups: list[tuple[NumpyPlan, np.ndarray, bool]], rng: Any, network: Any
) -> np.ndarray:
    """Squashed-Gaussian actors' actions as ``SB3Policy.act`` takes them (``continuous_actions``,
    then ``to_env_actions``), for one or several groups ``(plan, observations, deterministic)``
    acting in one action space (``network``'s), in the order of their rows: each group's mean,
    plus, for a sampled group, ``exp(log_std)`` times a standard normal, squashed by ``tanh`` and
    rescaled to the action space. ``rng`` draws the sampled rows' noise in one call of shape
    ``(rows, size)`` (a :class:`RowGenerators` over their generators, or the one generator of a
    lone group; ``None``: no noise), as ``SB3Policy.act`` draws it for each group alone. Every
    step after the layers is elementwise, so several groups give each row what its own call
    would."""
    from ...core.policy_families import to_env_actions

    means, log_stds = [], []
    for plan, obs, _ in groups:
        mu_weight, mu_bias, std_weight, std_bias, low, high = plan.head  # type: ignore[misc]
        latent = _numpy_logits(plan, obs)
        mean = _linear(latent, mu_weight)
        mean += mu_bias
        log_std = _linear(latent, std_weight)
        log_std += std_bias
        np.clip(log_std, low, high, out=log_std)  # as torch.clamp(log_std, LOG_STD_MIN, ..MAX)
        means.append(mean)
        log_stds.append(log_std)
    actions = (means[0] if len(means) == 1 else np.concatenate(means)).astype(np.float64)
    sampled = [not deterministic for _, _, deterministic in groups]
    if any(sampled):
        log_std = log_stds[0] if len(log_stds) == 1 else np.concatenate(log_stds)
        rows = None
        if not all(sampled):
            rows = np.repeat(sampled, [len(mean) for mean in means])
            log_std = log_std[rows]
        std = np.exp(log_std.astype(np.float64))
        noise = np.zeros(std.shape) if rng is None else rng.standard_normal(std.shape)
        if rows is None:
            actions = actions + std * noise
        else:
            actions[rows] = actions[rows] + std * noise
    return to_env_actions(network, np.tanh(actions))


def _close_actions(expected: np.ndarray, fast: np.ndarray, space: spaces.Space) -> bool:
    """``Box`` actions equal to float rounding: within a millionth of the space's width (numpy's
    and torch's float32 matrix products may round differently; a wrong formula is far off)."""
    if expected.shape != fast.shape or expected.dtype != fast.dtype:
        return False
    width = np.asarray(space.high, np.float64) - np.asarray(space.low, np.float64)
    scale = np.where(np.isfinite(width), np.maximum(width, 1.0), 1.0)
    return bool(np.all(np.abs(expected.astype(np.float64) - fast) <= 1e-6 * scale))


def _logsumexp(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=-1, keepdims=True)
    return np.log(np.exp(x - top).sum(axis=-1, keepdims=True)) + top


def _normalises_twice(network: Any) -> bool:
    dist = getattr(network, "action_dist", None)
    return type(dist).__module__.startswith("sb3_contrib")


def scoring_of(network: Any) -> str:
    """What a network's outputs are: ``"q"`` (Q-values, taken greedily as they are),
    ``"gaussian"`` (a squashed-Gaussian actor's mean and log-std: SAC, TQC), ``"twice"``
    (sb3-contrib's MaskableCategorical normalises the logits twice) or ``"once"`` (torch's
    Categorical)."""
    if getattr(network, "q_net", None) is not None and not hasattr(network, "action_net"):
        return "q"
    if isinstance(network.action_space, spaces.Box) and _squashed(network):
        return "gaussian"
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
