"""``DrawReward``: a vector-env wrapper that changes what a drawn game is worth to the learner.

Board games score a draw 0, halfway between a loss (-1) and a win (+1). A learner that has found a
safe drawing line against a stronger opponent then has little reason to leave it: each deviation it
tries risks a whole point for a rare win. Chess engines call the remedy *contempt*: value a draw
below 0, so lines that keep winning chances are preferred to a sure draw. ``DrawReward`` adds
``draw_reward`` to the learner's reward on the last step of every game that ends drawn.

A game counts as drawn when ``info["selfplay"]["outcome"]`` is 0.5 at the end of an episode that
the game terminated (one cut short by a time limit is left as it is). Every env of this package
reports that outcome (:class:`~sp_wrappers.SelfPlayEnv`, :class:`~sp_wrappers.SelfPlayVecEnv`).
Wrap *outside* ``VecMonitor`` so that ``rollout/ep_rew_mean`` keeps reporting the game's own
rewards.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

__all__ = ["DrawReward"]


class DrawReward(VecEnvWrapper):
    """Add ``draw_reward`` to the learner's reward at the end of each drawn game.

    :param venv: a vector env whose final-step infos carry ``info["selfplay"]["outcome"]``
        (every env of this package does).
    :param draw_reward: added to the reward of a drawn game's last step; negative values
        (contempt) make the learner prefer lines that keep winning chances. Between -1 and 1.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import make_selfplay_vec_env
    >>> env = DrawReward(make_selfplay_vec_env(tictactoe_v3.env, n_envs=2, seed=0), -0.5)
    >>> env.draw_reward, env.draws
    (-0.5, 0)
    >>> env.close()
    """

    def __init__(self, venv: VecEnv, draw_reward: float) -> None:
        value = float(draw_reward)
        if not math.isfinite(value) or not -1.0 <= value <= 1.0:
            raise ValueError(
                f"draw_reward must be between -1 and 1 (a win is worth 1), got {draw_reward!r}."
            )
        super().__init__(venv)
        self.draw_reward = value
        #: drawn games seen so far (the reward was changed for each of them)
        self.draws = 0

    def reset(self) -> Any:
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        for index in np.flatnonzero(dones):
            info = infos[index]
            summary = info.get("selfplay")
            if summary is None:
                raise ValueError(
                    "DrawReward needs info['selfplay']['outcome'] at the end of each episode; "
                    "wrap an env of sp_wrappers (SelfPlayEnv or SelfPlayVecEnv)."
                )
            if summary["outcome"] == 0.5 and not info.get("TimeLimit.truncated", False):
                rewards[index] += self.draw_reward
                self.draws += 1
        return observations, rewards, dones, infos
