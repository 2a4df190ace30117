"""The learners a run can use: every SB3 and sb3-contrib learner by its command-line name (with
the package and class that provide it), the families that need care (off-policy, discrete-only,
continuous-only), which are installed, and replay settings scaled to a small budget (the user's
own values kept).
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["ALGOS", "OFF_POLICY", "DISCRETE_ONLY", "BOX_ONLY", "installed_algos", "fit_to_budget"]


#: Algorithm names accepted by ``--algo`` -> (module, class): every Stable-Baselines3 and
#: sb3-contrib learner (the sb3-contrib ones need the ``masking`` extra: :func:`installed_algos`).
ALGOS: dict[str, tuple[str, str]] = {
    "ppo": ("stable_baselines3", "PPO"),
    "a2c": ("stable_baselines3", "A2C"),
    "dqn": ("stable_baselines3", "DQN"),
    "sac": ("stable_baselines3", "SAC"),
    "td3": ("stable_baselines3", "TD3"),
    "ddpg": ("stable_baselines3", "DDPG"),
    "maskable_ppo": ("sb3_contrib", "MaskablePPO"),
    "trpo": ("sb3_contrib", "TRPO"),
    "recurrent_ppo": ("sb3_contrib", "RecurrentPPO"),
    "qrdqn": ("sb3_contrib", "QRDQN"),
    "tqc": ("sb3_contrib", "TQC"),
    "crossq": ("sb3_contrib", "CrossQ"),
    "ars": ("sb3_contrib", "ARS"),
}


#: Learners that keep a replay buffer (``buffer_size`` and ``learning_starts`` are fitted to
#: small budgets by :func:`fit_to_budget`).
OFF_POLICY: frozenset[str] = frozenset({"dqn", "qrdqn", "sac", "td3", "ddpg", "tqc", "crossq"})


#: Learners that act only in a ``Discrete`` action space (``maskable_ppo`` also needs masks).
DISCRETE_ONLY: frozenset[str] = frozenset({"dqn", "qrdqn", "maskable_ppo"})


#: Learners that act only in a ``Box`` action space (continuous actions).
BOX_ONLY: frozenset[str] = frozenset({"sac", "td3", "ddpg", "tqc", "crossq"})


def installed_algos() -> list[str]:
    """The keys of :data:`ALGOS` whose package is installed, in :data:`ALGOS`' order.

    >>> installed_algos()[:3]
    ['ppo', 'a2c', 'dqn']
    """
    import importlib.util

    found: dict[str, bool] = {}
    for module, _ in ALGOS.values():
        if module not in found:
            found[module] = importlib.util.find_spec(module) is not None
    return [algo for algo, (module, _) in ALGOS.items() if found[module]]


def fit_to_budget(
    algo: str,
    hyperparams: Mapping[str, Any],
    timesteps: int,
    given: Collection[str] = (),
) -> dict[str, Any]:
    """``hyperparams`` with an off-policy learner's replay settings fitted to a budget.

    A replay buffer larger than the whole run only costs memory (SB3 allocates it at once), and a
    warm-up (``learning_starts``) or a target-network interval (``target_update_interval``) close
    to the budget leaves nothing learned. For the learners of :data:`OFF_POLICY` this caps
    ``buffer_size`` at the budget (at least 10,000), ``learning_starts`` at a tenth of it and
    ``target_update_interval`` at a twentieth of it; keys in ``given`` (the user's own ``--hp``
    values) are left alone, and so is every other learner.

    :param algo: a key of :data:`ALGOS`.
    :param hyperparams: the recipe's keyword arguments.
    :param timesteps: the run's budget in learner steps.
    :param given: keys the user set explicitly.

    >>> from sp_wrappers.runs.recipes import GENERIC
    >>> fit_to_budget("dqn", GENERIC["dqn"].hyperparams, 2_000)["learning_starts"]
    200
    >>> fit_to_budget("dqn", GENERIC["dqn"].hyperparams, 2_000, given={"learning_starts"})[
    ...     "learning_starts"]
    1000
    >>> fit_to_budget("ppo", GENERIC["ppo"].hyperparams, 2_000) == dict(GENERIC["ppo"].hyperparams)
    True
    """
    out = copy.deepcopy(dict(hyperparams))
    if algo not in OFF_POLICY:
        return out
    caps = {
        "buffer_size": max(int(timesteps), 10_000),
        "learning_starts": max(int(timesteps) // 10, 1),
        "target_update_interval": max(int(timesteps) // 20, 1),
    }
    for key, cap in caps.items():
        if key in out and key not in given and isinstance(out[key], int | float):
            out[key] = min(int(out[key]), cap)
    return out
