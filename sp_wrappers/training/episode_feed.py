"""Where callbacks read the games played during ``learn``: the env's buffer of finished episodes.

Every self-play env keeps the ``info["selfplay"]`` summary of each episode it ends until
``env_method("drain_episodes")`` hands it over (see
:class:`~sp_wrappers.envs.selfplay_env.FinishedEpisodes`). Reading games there rather than from
the step's ``infos`` works with every learner (ARS's ``learn`` hands its callbacks no ``infos``),
through SB3's ``VecMonitor``/``VecNormalize`` and ``SubprocVecEnv``'s workers, and gives each game
once. An env without the buffer (a user's own VecEnv) is read from ``infos`` as before.

Draining empties the env's buffer, so the callbacks reading one env (the
:class:`~sp_wrappers.SelfPlayCallback` and an
:class:`~sp_wrappers.training.env_generator.EnvGenerator` beside it) share what was drained: each
:class:`EpisodeFeed` reads every game once, whichever of them drained it.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["EpisodeFeed", "DRAIN_METHOD", "restart_episodes"]

#: The env method that hands over the finished episodes' summaries.
DRAIN_METHOD = "drain_episodes"


class _Drained:
    """The episodes drained from one env, ``(env index, summary)``, kept until every
    :class:`EpisodeFeed` reading that env has read them (positions count from the first)."""

    def __init__(self) -> None:
        self.items: list[tuple[int, dict[str, Any]]] = []
        self.first = 0  # the position of items[0]
        self.readers: weakref.WeakSet[EpisodeFeed] = weakref.WeakSet()

    @property
    def end(self) -> int:
        return self.first + len(self.items)

    def drain(self, env: Any) -> None:
        batches = env.env_method(DRAIN_METHOD)
        self.items += [(index, summary) for index, batch in enumerate(batches) for summary in batch]

    def read(self, reader: EpisodeFeed) -> list[tuple[int, dict[str, Any]]]:
        out = self.items[reader.position - self.first :]
        reader.position = self.end
        done = min((r.position for r in self.readers), default=self.end)
        del self.items[: done - self.first]
        self.first = done
        return out


# training env -> what its readers drained from it (the env's buffer empties at each drain)
_DRAINED: weakref.WeakKeyDictionary[Any, _Drained] = weakref.WeakKeyDictionary()


class EpisodeFeed:
    """The finished episodes of a training env, for one callback. Several feeds may read one env
    (say a :class:`~sp_wrappers.SelfPlayCallback` and an ``EnvGenerator``): each gets every game
    once, whichever drained it.

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
        #: the position in the env's drained episodes this feed has read up to
        self.position = 0
        self._drained: _Drained | None = None

    def start(self, env: Any) -> None:
        """Find out whether ``env`` keeps finished episodes, and skip those finished so far."""
        self.drains = env is not None and _has_buffer(env)
        self._drained = None
        if self.drains:
            drained = _DRAINED.get(env)
            if drained is None:
                drained = _DRAINED[env] = _Drained()
            drained.drain(env)
            drained.readers.add(self)
            self.position = drained.end
            drained.read(self)
            self._drained = drained

    def collect(self, env: Any, step_locals: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The summaries of the episodes finished since the last call, oldest first.

        :param env: the training env (``callback.training_env``).
        :param step_locals: the learner's locals at this step (``callback.locals``): ``dones``
            skips steps where nothing ended; ``infos`` is read when the env keeps no buffer.
        """
        return [summary for _, summary in self.collect_indexed(env, step_locals)]

    def collect_indexed(
        self, env: Any, step_locals: Mapping[str, Any]
    ) -> list[tuple[int, dict[str, Any]]]:
        """As :meth:`collect`, each summary with the index of the env (the vector env's slot)
        that finished it: ``(index, summary)``."""
        if self.drains is None:
            self.start(env)
        if not self.drains or self._drained is None:
            infos = step_locals.get("infos", ())
            return [
                (index, info["selfplay"])
                for index, info in enumerate(infos)
                if isinstance(info, dict) and info.get("selfplay") is not None
            ]
        dones = step_locals.get("dones")
        if dones is None or np.any(dones):
            self._drained.drain(env)
        return self._drained.read(self)


def _has_buffer(env: Any) -> bool:
    """Whether every env of ``env`` (a VecEnv, maybe wrapped) keeps finished episodes."""
    try:
        return bool(env.has_attr(DRAIN_METHOD))
    except Exception:  # noqa: BLE001 - a VecEnv that cannot answer: read infos
        return False


def restart_episodes(model: Any) -> None:
    """Start every episode of ``model``'s training env again, so that a change a callback makes
    at training start (the opponents' first weights, the games' configurations) plays from each
    episode's start: SB3 resets the env before callbacks see training start.

    :param model: the SB3 model, during its ``learn`` (``model.get_env()`` is the training env).
    """
    env = model.get_env()
    model._last_obs = env.reset()
    model._last_episode_starts = np.ones((env.num_envs,), dtype=bool)
    if getattr(model, "_vec_normalize_env", None) is not None:
        model._last_original_obs = model._vec_normalize_env.get_original_obs()
