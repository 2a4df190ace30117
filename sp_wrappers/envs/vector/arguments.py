"""This module holds the argument checks of :class:`~sp_wrappers.SelfPlayVecEnv`'s constructor
(private): ``_check_env_fn`` (a game constructor, not an instance), ``_per_copy_opponents`` (one
opponent per copy) and ``_WithKwargs`` (``env_fn`` with ``env_kwargs``, picklable for workers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.policies import is_policy

__all__: list[str] = []


class _WithKwargs:
    """``env_fn(**env_kwargs)`` as a picklable zero-argument callable."""

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.fn, self.kwargs = fn, kwargs

    def __call__(self, **overrides: Any) -> Any:
        return self.fn(**{**self.kwargs, **overrides})


def _check_env_fn(env_fn: Any) -> None:
    from pettingzoo.utils.env import AECEnv, ParallelEnv

    if isinstance(env_fn, AECEnv | ParallelEnv):
        raise TypeError(
            f"SelfPlayVecEnv needs a function that builds the game (one per copy), got an env "
            f"instance ({type(env_fn).__name__}). Pass the constructor, e.g. tictactoe_v3.env, or "
            "lambda: pong_v3.env(obs_type='ram')."
        )
    if not callable(env_fn):
        raise TypeError(
            f"env_fn must be a function returning a PettingZoo env, got {type(env_fn).__name__}."
        )


def _per_copy_opponents(opponent: Any, n_envs: int) -> list[Any]:
    if isinstance(opponent, list | tuple) and not is_policy(opponent):
        if len(opponent) != n_envs:
            raise ValueError(
                f"opponent is a list of {len(opponent)} entries but n_envs={n_envs}; pass one "
                "opponent (shared by every copy) or exactly one per copy."
            )
        return list(opponent)
    return [opponent] * n_envs
