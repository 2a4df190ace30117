"""What an environment generator knows of the past: the learner's recent results.

A generator gives each env copy a configuration (a game's keyword arguments and a reward
transform) and reads, per configuration and per opponent, the learner's recent results (wins,
draws, losses, returns) to choose the next one.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..archive.matches import config_key
from ..envs.game_config import REWARD_KEY, check_game_kwargs, check_reward_fn, reward_fn_name

__all__ = ["ConfigResult", "EnvHistory", "GameConfig"]


@dataclass(frozen=True)
class ConfigResult:
    """One finished learner episode as :class:`EnvHistory` keeps it.

    :param step: the learner step (``model.num_timesteps``) it ended at.
    :param index: the env copy that played it.
    :param opponents: the distinct policy ids the learner faced (each once, however many seats
        or agents of an opposing team it played).
    :param outcome: the learner's outcome (1 win, 0.5 draw, 0 loss).
    """

    step: int
    index: int
    opponents: tuple[str, ...]
    outcome: float


class EnvHistory:
    """The learner's recent results per configuration, bounded: the last ``window`` episodes of
    each configuration, for at most ``max_configs`` configurations (the least recently played
    is dropped first).

    Configurations are given as dicts (``{"komi": 7.5}``, as in ``info["selfplay"]["config"]``;
    ``None`` or ``{}`` is the game's own), or as :class:`GameConfig`.

    :param window: episodes kept per configuration.
    :param max_configs: configurations kept.

    >>> history = EnvHistory(window=3)
    >>> for outcome in (1.0, 0.0, 1.0, 1.0):
    ...     history.record({"komi": 5.5}, {"outcome": outcome, "opponents": {"w": "s-1"}}, 10, 0)
    >>> komi = {"komi": 5.5}
    >>> history.games(komi), history.score(komi), history.total_games(komi)
    (3, 0.6666666666666666, 4)
    >>> history.by_opponent({"komi": 5.5})
    {'s-1': (3, 0.6666666666666666)}
    >>> history.last_played(0), history.current(0), history.configs()
    ({'komi': 5.5}, None, [{'komi': 5.5}])
    """

    def __init__(self, window: int = 100, max_configs: int = 1000) -> None:
        if window < 1 or max_configs < 1:
            raise ValueError(
                f"window and max_configs must be at least 1, got {window} and {max_configs}."
            )
        self.window = int(window)
        self.max_configs = int(max_configs)
        self._results: OrderedDict[str, deque[ConfigResult]] = OrderedDict()
        self._configs: dict[str, dict[str, Any]] = {}
        self._totals: dict[str, int] = {}
        self._current: dict[int, dict[str, Any]] = {}
        self._played: dict[int, dict[str, Any]] = {}

    @staticmethod
    def _key(config: Mapping[str, Any] | GameConfig | None) -> str:
        if isinstance(config, GameConfig):
            config = config.describe()
        return config_key(config or {})

    def record(
        self, config: Mapping[str, Any] | None, summary: Mapping[str, Any], step: int, index: int
    ) -> None:
        """Add one episode (``summary`` is its ``info["selfplay"]``)."""
        key = self._key(config)
        # One entry per distinct opposing policy: three predators on one snapshot (or a team
        # game's opposing team) count one episode against it, not three.
        opponents = (
            summary.get("opponent_teams")
            or summary.get("opponents")
            or {"?": summary.get("opponent", "?")}
        )
        result = ConfigResult(
            int(step),
            int(index),
            tuple(dict.fromkeys(str(o) for o in opponents.values())),
            float(summary["outcome"]),
        )
        results = self._results.get(key)
        if results is None:
            results = self._results[key] = deque(maxlen=self.window)
            self._configs[key] = json.loads(key)
            while len(self._results) > self.max_configs:
                old, _ = self._results.popitem(last=False)
                del self._configs[old], self._totals[old]
        self._results.move_to_end(key)
        results.append(result)
        self._totals[key] = self._totals.get(key, 0) + 1
        self._played[int(index)] = json.loads(key)

    def set_current(self, index: int, config: Mapping[str, Any] | GameConfig | None) -> None:
        """Note the configuration copy ``index`` was given (:class:`EnvGenerator` does)."""
        if isinstance(config, GameConfig):
            config = config.describe()
        self._current[int(index)] = json.loads(self._key(config))

    def configs(self) -> list[dict[str, Any]]:
        """The configurations kept, least recently played first."""
        return [dict(self._configs[key]) for key in self._results]

    def results(
        self, config: Mapping[str, Any] | GameConfig | None, opponent: str | None = None
    ) -> list[ConfigResult]:
        """The kept episodes of ``config`` (those against ``opponent`` only, when given)."""
        results = list(self._results.get(self._key(config), ()))
        if opponent is not None:
            results = [r for r in results if opponent in r.opponents]
        return results

    def games(self, config: Any, opponent: str | None = None) -> int:
        """How many episodes of ``config`` are kept (at most ``window``)."""
        return len(self.results(config, opponent))

    def total_games(self, config: Any) -> int:
        """Every episode of ``config`` recorded (not only the kept ones)."""
        return self._totals.get(self._key(config), 0)

    def score(self, config: Any, opponent: str | None = None) -> float:
        """The learner's mean outcome in the kept episodes (draws count 0.5); ``nan`` if none."""
        results = self.results(config, opponent)
        return float(np.mean([r.outcome for r in results])) if results else math.nan

    def win_rate(self, config: Any, opponent: str | None = None) -> float:
        """The fraction of the kept episodes the learner won; ``nan`` if none."""
        results = self.results(config, opponent)
        return float(np.mean([r.outcome == 1.0 for r in results])) if results else math.nan

    def by_opponent(self, config: Any) -> dict[str, tuple[int, float]]:
        """``opponent id -> (episodes, learner's mean outcome)`` over the kept episodes; an
        episode counts once for each distinct policy the learner faced in it."""
        totals: dict[str, list[float]] = {}
        for result in self.results(config):
            for opponent in result.opponents:
                totals.setdefault(opponent, []).append(result.outcome)
        return {o: (len(v), float(np.mean(v))) for o, v in totals.items()}

    def current(self, index: int) -> dict[str, Any] | None:
        """The configuration copy ``index`` was last given: the one it plays, or will play from
        its next episode start (``None`` before it was given one)."""
        config = self._current.get(int(index))
        return None if config is None else dict(config)

    def last_played(self, index: int) -> dict[str, Any] | None:
        """The configuration of copy ``index``'s last finished episode (``None`` before one)."""
        config = self._played.get(int(index))
        return None if config is None else dict(config)

    def __len__(self) -> int:
        return len(self._results)

    def __contains__(self, config: object) -> bool:
        return self._key(config) in self._results  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.configs())


@dataclass(frozen=True)
class GameConfig:
    """A configuration a generator gives one env copy.

    :param game_kwargs: keyword arguments of the game constructor (JSON-able values); ``{}`` is
        the game the env was built with.
    :param reward_fn: ``fn(reward, info) -> float`` mapping the learner's reward, or ``None`` for
        the game's own reward.

    >>> GameConfig({"komi": 5.5}).describe()
    {'komi': 5.5}
    >>> GameConfig.coerce({"komi": 5.5}) == GameConfig({"komi": 5.5}), GameConfig.coerce(None)
    (True, None)
    """

    game_kwargs: Mapping[str, Any] = field(default_factory=dict)
    reward_fn: Callable[[float, Mapping[str, Any]], float] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "game_kwargs", check_game_kwargs(self.game_kwargs))
        check_reward_fn(self.reward_fn)

    @classmethod
    def coerce(cls, value: Any) -> GameConfig | None:
        """A generator's return value as a ``GameConfig``: itself, a dict of game keyword
        arguments (a callable under ``"reward_fn"`` becomes the reward transform), or ``None``."""
        if value is None or isinstance(value, GameConfig):
            return value
        if isinstance(value, Mapping):
            kwargs = dict(value)
            reward_fn = kwargs.pop(REWARD_KEY, None)
            return cls(kwargs, reward_fn)
        raise TypeError(
            f"An env generator must return a GameConfig, a dict of game keyword arguments or None "
            f"(keep the configuration), got {type(value).__name__}."
        )

    def describe(self) -> dict[str, Any]:
        """The configuration as recorded in ``info["selfplay"]["config"]`` and the archive."""
        config = dict(self.game_kwargs)
        if self.reward_fn is not None:
            config[REWARD_KEY] = reward_fn_name(self.reward_fn)
        return config
