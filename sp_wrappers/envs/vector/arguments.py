"""The argument checks of the vector env's constructor, before any game is built.

A game constructor is refused when an instance was passed instead, ``opponent`` becomes one entry
per copy, and ``env_kwargs`` are bound to ``env_fn`` in a form the worker processes can unpickle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.policies import is_policy

__all__ = ["WithKwargs", "check_env_fn", "per_copy_opponents"]


class WithKwargs:
    """``env_fn(**env_kwargs)`` as a picklable zero-argument callable (for the workers)."""

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.fn, self.kwargs = fn, kwargs

    def __call__(self, **overrides: Any) -> Any:
        return self.fn(**{**self.kwargs, **overrides})


def check_env_fn(env_fn: Any) -> None:
    """Refuse a game instance (or anything but a callable) where a game constructor belongs."""
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


def per_copy_opponents(opponent: Any, n_envs: int) -> list[Any]:
    """One ``opponent`` entry per copy (a list names each copy's; anything else is shared)."""
    if isinstance(opponent, list | tuple) and not is_policy(opponent):
        if len(opponent) != n_envs:
            raise ValueError(
                f"opponent is a list of {len(opponent)} entries but n_envs={n_envs}; pass one "
                "opponent (shared by every copy) or exactly one per copy."
            )
        return list(opponent)
    return [opponent] * n_envs
