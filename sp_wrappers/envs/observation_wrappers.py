"""Observation wrappers above a self-play env, which the opponents would not see.

A wrapper above :class:`~sp_wrappers.SelfPlayVecEnv` (``VecFrameStack``, ``VecNormalize``) or above
:class:`~sp_wrappers.SelfPlayEnv` (a Gymnasium ``ObservationWrapper``) changes what the learner
sees, but the opponents play inside the env, on the game's own observations. A snapshot of the
learner, or its latest weights, would then act on observations it was never trained on: with
frame stacking the shapes differ and the run stops; with normalisation it runs and the opponents
play badly without a word. So :class:`~sp_wrappers.SelfPlayCallback` and
:class:`~sp_wrappers.TeamSelfPlay` refuse such a stack before the first step, naming what works:
the transform inside the game (a PettingZoo wrapper in ``env_fn``, e.g.
:class:`~sp_wrappers.games.frame_stack.StackedObservations`), where every seat gets it, or
``VecNormalize(venv, norm_obs=False)`` for reward normalisation alone.

Wrappers that leave the observations as they are pass: ``VecMonitor``, ``VecCheckNan``,
``VecNormalize(norm_obs=False)``, ``VecTransposeImage`` (SB3 adds it for image observations and
transposes the opponents' observations the same way inside their policies) and
:class:`~sp_wrappers.DrawReward`.
"""

from __future__ import annotations

from typing import Any

from .errors import ObservationWrapperError

__all__ = ["check_observation_wrappers", "ObservationWrapperError"]

_STACK_FIX = (
    "Stack frames in the game instead, so that every seat (the learner's and each opponent's) "
    "keeps its own stack: env_fn=lambda: StackedObservations(game(), n_stack) "
    "(from sp_wrappers.games.frame_stack import StackedObservations), and no VecFrameStack."
)
_NORMALIZE_FIX = (
    "Normalise only the rewards: VecNormalize(venv, norm_obs=False, norm_reward=True); scale the "
    "observations in the game instead (a PettingZoo wrapper in env_fn, e.g. "
    "sp_wrappers.games.wrappers.ScaledObservations for byte observations), where every seat sees "
    "the same scaling."
)


def _is_selfplay(env: Any) -> bool:
    from .selfplay_env import SelfPlayEnv
    from .vector.vec_env import SelfPlayVecEnv

    return isinstance(env, SelfPlayVecEnv | SelfPlayEnv)


def _problem(wrapper: Any, inner: Any) -> str | None:
    """Why ``wrapper`` (above ``inner``) hides a transform from the opponents, or ``None``."""
    from stable_baselines3.common.vec_env import VecFrameStack, VecNormalize, VecTransposeImage

    name = type(wrapper).__name__
    if isinstance(wrapper, VecNormalize):
        if not getattr(wrapper, "norm_obs", False):
            return None
        return (
            f"{name} normalises the learner's observations with its running statistics, but the "
            "opponents (this run's snapshots and latest weights) are given the game's raw "
            f"observations, which they were never trained on. {_NORMALIZE_FIX}"
        )
    if isinstance(wrapper, VecFrameStack):
        return (
            f"{name} stacks the learner's observations ({inner.observation_space} -> "
            f"{wrapper.observation_space}), but the opponents (this run's snapshots and latest "
            "weights) are given one frame of the game's observation, which does not fit their "
            f"networks. {_STACK_FIX}"
        )
    if isinstance(wrapper, VecTransposeImage):
        return None
    import gymnasium

    if isinstance(wrapper, gymnasium.ObservationWrapper) or (
        wrapper.observation_space != inner.observation_space
    ):
        return (
            f"{name} changes the learner's observations ({inner.observation_space} -> "
            f"{wrapper.observation_space}), but the opponents (this run's snapshots and latest "
            "weights) are given the game's own observations. Apply the transform in the game "
            "instead (a PettingZoo wrapper in env_fn), where every seat gets it."
        )
    return None


def check_observation_wrappers(env: Any) -> None:
    """Refuse observation wrappers between the learner and a self-play env.

    Walks ``env``'s SB3 VecEnv wrappers (``.venv``) down to a
    :class:`~sp_wrappers.SelfPlayVecEnv`, or to a ``DummyVecEnv`` and then each
    :class:`~sp_wrappers.SelfPlayEnv`'s Gymnasium wrappers (``.env``). Envs that are no self-play
    env (and ``SubprocVecEnv`` copies, which cannot be inspected) pass.

    :param env: the learner's env (``model.get_env()``).
    :raises ObservationWrapperError: naming the wrapper and what to use instead.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from stable_baselines3.common.vec_env import VecFrameStack, VecNormalize
    >>> from sp_wrappers import SelfPlayVecEnv
    >>> venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=1)
    >>> check_observation_wrappers(VecNormalize(venv, norm_obs=False))   # rewards only: fine
    >>> check_observation_wrappers(VecFrameStack(venv, 4))
    Traceback (most recent call last):
    ...
    sp_wrappers.envs.errors.ObservationWrapperError: VecFrameStack stacks the ...
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, VecEnvWrapper

    chain: list[Any] = []
    current = env
    while isinstance(current, VecEnvWrapper):
        chain.append(current)
        current = current.venv
    if isinstance(current, DummyVecEnv):
        import gymnasium

        inner = current.envs[0] if current.envs else None
        while isinstance(inner, gymnasium.Wrapper):
            problem = _problem(inner, inner.env)
            if problem is not None and _is_selfplay(inner.unwrapped):
                raise ObservationWrapperError(problem)
            inner = inner.env
        if not _is_selfplay(inner):
            return
    elif not _is_selfplay(current):
        return
    below = [*chain[1:], current] if chain else []
    for wrapper, inner in zip(chain, below, strict=True):
        problem = _problem(wrapper, inner)
        if problem is not None:
            raise ObservationWrapperError(problem)
