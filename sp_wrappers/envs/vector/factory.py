"""The factory of self-play vector envs, as SB3's ``make_vec_env`` and Gymnasium's ``make_vec``.

One call builds a :class:`~sp_wrappers.SelfPlayVecEnv`, or a
:class:`~sp_wrappers.envs.vector.team_vec_env.TeamVecEnv` (the same env with a learner team's
seating) when the learner is a team (``teams=...``), seeded and wrapped in ``VecMonitor``. The
team env's module loads only then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .vec_env import SelfPlayVecEnv

__all__ = ["make_selfplay_vec_env"]


def make_selfplay_vec_env(
    env_fn: Callable[..., Any] | str,
    n_envs: int = 8,
    seed: int | None = None,
    monitor: bool = True,
    teams: Any = None,
    **kwargs: Any,
) -> VecEnv:
    """A :class:`SelfPlayVecEnv` (a :class:`TeamVecEnv` with ``teams``), seeded and (by default)
    wrapped in ``VecMonitor``.

    The SB3-style shortcut (like ``make_vec_env``): ``VecMonitor`` gives the ``rollout/ep_rew_mean``
    and ``ep_len_mean`` lines of SB3's logger.

    :param env_fn: a function returning a fresh PettingZoo env (see :class:`SelfPlayVecEnv`), or
        one of the Gymnasium ids of :mod:`sp_wrappers.envs.registration`
        (``"sp_wrappers/Pong-v0"``): then ``kwargs`` are the id's ``gymnasium.make`` keyword
        arguments (``archive``, the sampler's knobs, the game's own) plus ``num_workers``,
        ``device`` and ``start_method``.
    :param n_envs: number of game copies.
    :param seed: copy ``i`` is reset with seed ``seed + i`` at the first reset; ``None`` leaves it
        unseeded.
    :param monitor: wrap the result in ``VecMonitor``.
    :param teams: ``None`` (every agent its own team), ``"prefix"`` or ``{team: [agent, ...]}``:
        then the learner is a team and the env a :class:`TeamVecEnv`, one slot per team agent.
    :param kwargs: any other :class:`SelfPlayVecEnv` argument (``learner``, ``opponent``,
        ``num_workers``, ...).

    >>> from pettingzoo.classic import connect_four_v3
    >>> env = make_selfplay_vec_env(connect_four_v3.env, n_envs=2, seed=0)
    >>> env.reset().shape
    (2, 6, 7, 2)
    >>> env.close()
    """
    from stable_baselines3.common.vec_env import VecMonitor

    if isinstance(env_fn, str):
        from ..registration import vec_env_arguments

        env_fn, kwargs = vec_env_arguments(env_fn, kwargs)
    env: VecEnv
    if teams is not None:
        from .team_vec_env import TeamVecEnv

        env = TeamVecEnv(env_fn, n_envs=n_envs, teams=teams, **kwargs)
    else:
        env = SelfPlayVecEnv(env_fn, n_envs=n_envs, **kwargs)
    if seed is not None:
        env.seed(seed)
    if monitor:
        env = VecMonitor(env)
    return env
