"""Building the SB3 model and the opponent sampler of a run, shared by single-learner, team and
league runs: algorithm names to classes, the check that an algorithm fits the game's spaces and
masks (with the fix named), policy names and classes in ``policy_kwargs``, torch's threads.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from ..core.extras import require
from ..games.registry import reference_opponents
from .config import TrainError
from .recipes import ALGOS, BOX_ONLY, DISCRETE_ONLY, installed_algos, linear_schedule
from .rundir import POLICY_CLASS_KWARGS

__all__ = [
    "algo_class",
    "build_model",
    "build_sampler",
    "check_algo_fits",
    "policy_name",
    "policy_kwargs_classes",
    "limited_torch_threads",
]


def policy_kwargs_classes(policy_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``policy_kwargs`` with each class named by its import path (``"module:Class"``, as a
    recipe, ``config.json`` and ``--hp`` hold it) imported.

    >>> kwargs = policy_kwargs_classes({"features_extractor_class":
    ...                                 "sp_wrappers.core.networks:BoardExtractor"})
    >>> kwargs["features_extractor_class"].__name__
    'BoardExtractor'
    >>> policy_kwargs_classes({"features_extractor_class": "BoardExtractor"})
    Traceback (most recent call last):
    ...
    sp_wrappers.runs.config.TrainError: policy_kwargs' features_extractor_class must be an ...
    """
    resolved = dict(policy_kwargs)
    for key in POLICY_CLASS_KWARGS:
        name = resolved.get(key)
        if not isinstance(name, str):
            continue
        module_name, _, qualname = name.partition(":")
        fix = (
            f"policy_kwargs' {key} must be an import path 'module:Class', e.g. "
            f"'sp_wrappers.core.networks:BoardExtractor', got {name!r} (check the `hyperparams` "
            "policy_kwargs option)."
        )
        if not module_name or not qualname:
            raise TrainError(fix)
        try:
            target: Any = importlib.import_module(module_name)
            for part in qualname.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError) as error:
            raise TrainError(f"{fix[:-1]}: {error}.") from None
        if not isinstance(target, type):
            raise TrainError(fix)
        resolved[key] = target
    return resolved


def algo_class(algo: str) -> type:
    module, name = ALGOS[algo]
    return getattr(require(module, "masking", f"`algo` {algo}"), name)


def _choices(action_space: Any, has_masks: bool) -> str:
    """The installed learners that act in ``action_space``, for an error message."""
    from gymnasium import spaces

    fits = []
    for algo in installed_algos():
        if algo in BOX_ONLY and not isinstance(action_space, spaces.Box):
            continue
        if algo in DISCRETE_ONLY and not isinstance(action_space, spaces.Discrete):
            continue
        if algo == "maskable_ppo" and not has_masks:
            continue
        if algo == "ars" and not isinstance(action_space, spaces.Box | spaces.Discrete):
            continue
        fits.append(algo)
    return ", ".join(fits) if fits else "ppo"


def check_algo_fits(algo: str, observation_space: Any, action_space: Any, has_masks: bool) -> None:
    """Raise :class:`TrainError` when ``algo`` cannot train on these spaces, naming the
    installed learners that can.

    Q-network learners (``dqn``, ``qrdqn``) need a ``Discrete`` action space; the
    continuous-action ones (``sac``, ``td3``, ``ddpg``, ``tqc``, ``crossq``) a ``Box``;
    ``maskable_ppo`` a discrete space and action masks; ``ars`` a ``Box`` or ``Discrete`` one.

    >>> from gymnasium import spaces
    >>> check_algo_fits("dqn", spaces.Box(0, 1, (3,)), spaces.Box(-1, 1, (2,)), False)
    Traceback (most recent call last):
    ...
    sp_wrappers.runs.config.TrainError: `algo` dqn needs a Discrete action space, but the learner's
    \
is Box(-1.0, 1.0, (2,), float32); choose one of ppo, a2c, sac, td3, ddpg, trpo, recurrent_ppo, tqc,
    \
crossq, ars.
    >>> check_algo_fits("sac", spaces.Box(0, 1, (3,)), spaces.Box(-1, 1, (2,)), False)
    """
    from gymnasium import spaces

    if algo not in ALGOS:
        raise TrainError(f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}.")
    supported_obs = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
    obs_ok = isinstance(observation_space, supported_obs) or (
        isinstance(observation_space, spaces.Dict)
        and all(isinstance(s, supported_obs) for s in observation_space.spaces.values())
    )
    if not obs_ok:
        raise TrainError(
            f"Stable-Baselines3 cannot learn from the observation space {observation_space}; "
            "flatten it with a SuperSuit wrapper in the game constructor."
        )
    if algo in ("crossq", "ars") and isinstance(observation_space, spaces.Dict):
        raise TrainError(
            f"`algo` {algo} has no policy for the dict observation space {observation_space}; "
            "flatten it with a SuperSuit wrapper in the game constructor, or choose "
            f"{_choices(action_space, has_masks)}."
        )
    discrete = isinstance(action_space, spaces.Discrete)
    if algo in ("dqn", "qrdqn") and not discrete:
        raise TrainError(
            f"`algo` {algo} needs a Discrete action space, but the learner's is {action_space}; "
            f"choose one of {_choices(action_space, has_masks)}."
        )
    if algo in BOX_ONLY and not isinstance(action_space, spaces.Box):
        raise TrainError(
            f"`algo` {algo} needs a Box action space (continuous actions), but the learner's is "
            f"{action_space}; choose one of {_choices(action_space, has_masks)} (or the game's "
            "continuous version, e.g. `game_kwargs` continuous_actions=true for MPE games)."
        )
    if algo == "ars" and not isinstance(action_space, spaces.Box | spaces.Discrete):
        raise TrainError(
            f"`algo` ars needs a Box or Discrete action space, but the learner's is "
            f"{action_space}; choose one of {_choices(action_space, has_masks)}."
        )
    if algo == "maskable_ppo":
        if not isinstance(
            action_space, spaces.Discrete | spaces.MultiDiscrete | spaces.MultiBinary
        ):
            raise TrainError(
                f"`algo` maskable_ppo needs a discrete action space, but the learner's is "
                f"{action_space}; choose one of {_choices(action_space, has_masks)}."
            )
        if not has_masks:
            raise TrainError(
                "`algo` maskable_ppo needs action masks, but this game provides none (no "
                "'action_mask' in its observations or infos); choose one of "
                f"{_choices(action_space, has_masks)}."
            )
    if algo in ("ppo", "a2c", "trpo", "recurrent_ppo") and not isinstance(
        action_space, spaces.Discrete | spaces.MultiDiscrete | spaces.MultiBinary | spaces.Box
    ):
        raise TrainError(f"`algo` {algo} cannot act in the action space {action_space}.")


def policy_name(observation_space: Any, algo: str = "ppo") -> str:
    """The SB3 policy alias of ``algo`` for ``observation_space`` (``MlpPolicy``,
    ``CnnPolicy``, ``MultiInputPolicy``; the ``Lstm`` ones for ``recurrent_ppo``).

    >>> from gymnasium import spaces
    >>> policy_name(spaces.Box(0, 1, (3,)), "recurrent_ppo")
    'MlpLstmPolicy'
    """
    from gymnasium import spaces
    from stable_baselines3.common.preprocessing import is_image_space

    if isinstance(observation_space, spaces.Dict):
        kind = "MultiInput"
    elif isinstance(observation_space, spaces.Box) and is_image_space(observation_space):
        kind = "Cnn"
    else:
        kind = "Mlp"
    if algo in ("crossq", "ars"):  # their only network is an MLP (ARS also has LinearPolicy)
        kind = "Mlp"
    return f"{kind}LstmPolicy" if algo == "recurrent_ppo" else f"{kind}Policy"


@contextlib.contextmanager
def limited_torch_threads(n: int | None) -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def build_sampler(
    archive: Any,
    sampler: Mapping[str, Any],
    game: str,
    seed: int,
    action_space: Any,
    has_masks: bool,
) -> Any:
    """The run's :class:`~sp_wrappers.OpponentSampler` over ``archive`` from its ``sampler``
    settings, with the random and reference-bot shares of ``game``."""
    from ..core.policies import RandomPolicy
    from ..opponents.sampler import OpponentSampler

    s = sampler
    random_policy = RandomPolicy(None if has_masks else action_space)
    fixed = [(random_policy, float(s["random_ratio"]))] if s["random_ratio"] > 0 else []
    if s["reference_ratio"] > 0:
        bots = reference_opponents(game)[1:]
        fixed += [(bot, float(s["reference_ratio"]) / len(bots)) for bot in bots]
    try:
        return OpponentSampler(
            archive,
            window=s["window"],
            latest_ratio=float(s["latest_ratio"]),
            swap_every=int(s["swap_every"]),
            swap_unit=s["swap_unit"],
            strategy=s["strategy"],
            fixed_opponents=fixed,
            deterministic=bool(s["deterministic"]),
            fallback=random_policy,
            seed=int(seed),
        )
    except ValueError as error:
        raise TrainError(str(error)) from None


def build_model(
    algo: str,
    hyperparams: Mapping[str, Any],
    seed: int,
    venv: Any,
    observation_space: Any,
    tb: str | None,
    device: str,
) -> Any:
    """A fresh ``algo`` model with ``hyperparams`` on ``venv`` (a bad setting becomes a
    :class:`TrainError` naming the option); single-learner and team runs both use it."""
    cls = algo_class(algo)
    # a deep copy: some learners (A2C, QRDQN) add classes to the policy_kwargs they are given,
    # which would then reach config.json
    hp = copy.deepcopy(dict(hyperparams))
    if "learning_rate" in hp:
        hp["learning_rate"] = linear_schedule(hp["learning_rate"])
    if isinstance(hp.get("policy_kwargs"), Mapping):
        hp["policy_kwargs"] = policy_kwargs_classes(hp["policy_kwargs"])
    try:
        return cls(
            policy_name(observation_space, algo),
            venv,
            seed=int(seed),
            tensorboard_log=tb,
            device=device,
            verbose=0,
            **hp,
        )
    except TypeError as error:
        raise TrainError(
            f"Bad hyperparameters for {cls.__name__}: {error} (check the `hyperparams` options)."
        ) from None
    except (ValueError, AssertionError) as error:
        raise TrainError(f"{cls.__name__} rejected the settings: {error}") from None
