"""Where callbacks read the games played during ``learn``: the env's buffer of finished episodes.

Every self-play env keeps the ``info["selfplay"]`` summary of each episode it ends until
``env_method("drain_episodes")`` hands it over (see
:class:`~sp_wrappers.envs.selfplay_env.FinishedEpisodes`). Reading games there rather than from
the step's ``infos`` works with every learner (ARS's ``learn`` hands its callbacks no ``infos``),
through SB3's ``VecMonitor``/``VecNormalize`` and ``SubprocVecEnv``'s workers, and gives each game
once. An env without the buffer (a user's own VecEnv) is read from ``infos`` as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["EpisodeFeed", "DRAIN_METHOD"]

#: The env method that hands over the finished episodes' summaries.
DRAIN_METHOD = "drain_episodes"


class EpisodeFeed:
    """The finished episodes of a training env, for one callback (one reader per env: draining
    takes the games out of the env's buffer).

    Call :meth:`start` when training starts (episodes finished before are not this run's games)
    and :meth:`collect` at every step. With a learner that hands its callbacks ``dones`` (every
    SB3 learner but ARS), the env is only asked on steps where an episode ended.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor
    >>> from sp_wrappers import SelfPlayEnv
    >>> venv = VecMonitor(DummyVecEnv([lambda: SelfPlayEnv(tictactoe_v3.env())]))
    >>> feed = EpisodeFeed()
    >>> feed.start(venv)
    >>> _ = venv.reset()
    >>> ended = 0
    >>> while not ended:
    ...     _, _, dones, _ = venv.step([int(venv.env_method("action_masks")[0].argmax())])
    ...     ended = len(feed.collect(venv, {"dones": dones}))
    >>> ended, feed.collect(venv, {})
    (1, [])
    """

    def __init__(self) -> None:
        self.drains: bool | None = None

    def start(self, env: Any) -> None:
        """Find out whether ``env`` keeps finished episodes, and empty its buffer."""
        self.drains = env is not None and _has_buffer(env)
        if self.drains:
            env.env_method(DRAIN_METHOD)

    def collect(self, env: Any, step_locals: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The summaries of the episodes finished since the last call, oldest first.

        :param env: the training env (``callback.training_env``).
        :param step_locals: the learner's locals at this step (``callback.locals``): ``dones``
            skips steps where nothing ended; ``infos`` is read when the env keeps no buffer.
        """
        if self.drains is None:
            self.start(env)
        if not self.drains:
            infos = step_locals.get("infos", ())
            return [
                info["selfplay"]
                for info in infos
                if isinstance(info, dict) and info.get("selfplay") is not None
            ]
        dones = step_locals.get("dones")
        if dones is not None and not np.any(dones):
            return []
        return [summary for batch in env.env_method(DRAIN_METHOD) for summary in batch]


def _has_buffer(env: Any) -> bool:
    """Whether every env of ``env`` (a VecEnv, maybe wrapped) keeps finished episodes."""
    try:
        return bool(env.has_attr(DRAIN_METHOD))
    except Exception:  # noqa: BLE001 - a VecEnv that cannot answer: read infos
        return False
