"""The configuration of one env copy: its game's keyword arguments and its reward transform.

Each copy of the vector env keeps a :class:`CopyConfig`: what it plays under (in effect, and
pending until its next episode start), what ``info["selfplay"]["config"]`` shows and the learner's
transformed reward; the single env holds a :class:`GameConfigurator`, its ``CopyConfig`` and the
next game it builds. A copy's next game is built and checked against the current one's spaces
when it is set, so a configuration that changes them is refused at once. The public side is
:mod:`sp_wrappers.training.env_generator`.

A configuration is recorded as a flat JSON object: the game keyword arguments, plus
``"reward_fn"`` (the transform's name) when a reward transform is set.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "REWARD_KEY",
    "RewardFn",
    "CopyConfig",
    "GameConfigurator",
    "build_candidate",
    "check_game_kwargs",
    "check_reward_fn",
    "check_same_spaces",
    "reward_fn_name",
    "no_env_fn_error",
]

REWARD_KEY = "reward_fn"
RewardFn = Callable[[float, Mapping[str, Any]], float]
_UNSET = object()


def check_game_kwargs(game_kwargs: Any) -> dict[str, Any]:
    """``game_kwargs`` as a plain dict, checked to be recordable (JSON, string keys)."""
    if not isinstance(game_kwargs, Mapping):
        raise TypeError(
            f"game_kwargs must be a mapping of the game constructor's keyword arguments, got "
            f"{type(game_kwargs).__name__}; pass e.g. {{'komi': 7.5}} ({{}} for the defaults)."
        )
    kwargs = dict(game_kwargs)
    for key, value in kwargs.items():
        if not isinstance(key, str):
            raise TypeError(f"game_kwargs keys must be strings, got {key!r}.")
        if key == REWARD_KEY:
            raise ValueError(
                f"game_kwargs may not hold {REWARD_KEY!r}: that key names the reward transform in "
                "a recorded configuration; set the transform with set_reward_fn(fn)."
            )
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise TypeError(
                f"game_kwargs[{key!r}] = {value!r} is not JSON-able; configurations are recorded "
                "in info and in the archive's match history, so pass numbers, strings, booleans, "
                "lists or dicts (build other objects inside env_fn from such a value)."
            ) from None
    return kwargs


def check_reward_fn(fn: Any) -> RewardFn | None:
    """``fn`` if it is ``None`` or callable, else a ``TypeError`` naming the signature."""
    if fn is not None and not callable(fn):
        raise TypeError(
            f"reward_fn must be a function fn(reward, info) -> float (or None for the game's own "
            f"reward), got {type(fn).__name__}."
        )
    return fn


def reward_fn_name(fn: Any) -> str:
    """The name a reward transform is recorded under: ``module:qualname`` for an importable
    function or class, its ``name`` attribute when it has one, else its type's name.

    >>> reward_fn_name(abs), reward_fn_name(lambda r, i: r)
    ('builtins:abs', '<lambda>')
    """
    name = getattr(fn, "name", None)
    if isinstance(name, str) and name:
        return name
    qualname = getattr(fn, "__qualname__", None)
    module = getattr(fn, "__module__", None)
    if isinstance(qualname, str):
        if module and "<" not in qualname:
            return f"{module}:{qualname}"
        return qualname
    return type(fn).__name__


def _differences(old: Any, new: Any) -> list[str]:
    """How ``new``'s agents and spaces differ from ``old``'s, one phrase each."""
    old_agents, new_agents = list(old.possible_agents), list(new.possible_agents)
    if old_agents != new_agents:
        return [f"agents {old_agents} -> {new_agents}"]
    out = []
    for agent in old_agents:
        for kind in ("observation", "action"):
            before = getattr(old, f"{kind}_space")(agent)
            after = getattr(new, f"{kind}_space")(agent)
            if before != after:
                out.append(f"{agent}'s {kind} space {before} -> {after}")
    return out


def check_same_spaces(current: Any, candidate: Any, game_kwargs: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the spaces when ``candidate`` differs from ``current``."""
    differences = _differences(current, candidate)
    if differences:
        raise ValueError(
            f"set_game_config({dict(game_kwargs)}) is refused: it changes the game's spaces "
            f"({'; '.join(differences)}). The learner's network is built for the current spaces, "
            "so a configuration may only change what keeps them (e.g. komi, max_cycles); the copy "
            "keeps its current game. For other spaces build a new env and model."
        )


def build_candidate(
    env_fn: Callable[..., Any],
    game_kwargs: Mapping[str, Any],
    current: Any,
    current_kwargs: Mapping[str, Any] | None,
) -> Any:
    """``env_fn(**game_kwargs)`` as an AEC game with ``current``'s spaces, else ``ValueError``.

    A refused candidate is closed, and when ``current_kwargs`` (what ``current`` was built
    with) is known one game of the current configuration is built and closed again: some
    constructors set process-wide state (PettingZoo's Go sets its module's board size), which the
    refused candidate would otherwise leave behind for the games still playing.
    """
    from ..core.seats import as_aec_env

    candidate = as_aec_env(env_fn(**game_kwargs))
    try:
        check_same_spaces(current, candidate, game_kwargs)
    except BaseException:
        candidate.close()
        if current_kwargs is not None:
            env_fn(**current_kwargs).close()
        raise
    return candidate


def no_env_fn_error(owner: str) -> TypeError:
    return TypeError(
        f"{owner} cannot rebuild its game: it was given a game instance and no constructor. "
        "Pass the constructor, e.g. SelfPlayEnv(go_v5.env) or "
        "SelfPlayEnv(go_v5.env(), env_fn=go_v5.env); set_game_config then calls "
        "env_fn(**game_kwargs)."
    )


class CopyConfig:
    """What one env copy plays under: the game keyword arguments and the reward transform in
    effect, and those set to take effect at its next episode start (``start_episode``)."""

    def __init__(self) -> None:
        self.game_kwargs: dict[str, Any] | None = None  # None: the game it was built with
        self.reward_fn: RewardFn | None = None
        self.configured = False  # set_game_config or set_reward_fn was called once
        self._next_kwargs: Any = _UNSET
        self._next_reward: Any = _UNSET

    def stage_game(self, game_kwargs: dict[str, Any]) -> None:
        self._next_kwargs = dict(game_kwargs)

    def unstage_game(self) -> None:
        self._next_kwargs = _UNSET

    def stage_reward(self, fn: RewardFn | None) -> None:
        self._next_reward = fn

    @property
    def pending(self) -> bool:
        return self._next_kwargs is not _UNSET or self._next_reward is not _UNSET

    def start_episode(self) -> None:
        """Put what was set since the last episode start into effect."""
        if self._next_kwargs is not _UNSET:
            self.game_kwargs, self._next_kwargs = self._next_kwargs, _UNSET
            self.configured = True
        if self._next_reward is not _UNSET:
            self.reward_fn, self._next_reward = self._next_reward, _UNSET
            self.configured = True

    def describe(self) -> dict[str, Any] | None:
        """The recorded configuration (``None`` for a copy never configured)."""
        if not self.configured:
            return None
        config = dict(self.game_kwargs or {})
        if self.reward_fn is not None:
            config[REWARD_KEY] = reward_fn_name(self.reward_fn)
        return config

    def transform(self, reward: float, info: Mapping[str, Any]) -> float:
        """The learner's reward after the transform (``reward`` itself without one). The
        transform sees a copy of ``info``, so it cannot change what the learner and the
        callbacks read."""
        fn = self.reward_fn
        if fn is None:
            return reward
        view = dict(info)
        if isinstance(view.get("selfplay"), dict):
            view["selfplay"] = dict(view["selfplay"])
        value = fn(float(reward), view)
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"The reward transform {reward_fn_name(fn)} returned {value!r}; "
                "fn(reward, info) must return a number."
            ) from None


def _check_single_index(indices: Any) -> None:
    if indices not in (None, 0, [0], (0,)):
        raise IndexError(
            f"indices={indices!r}: a SelfPlayEnv is one env (index 0); use SelfPlayVecEnv or "
            "venv.env_method(..., indices=[...]) for several copies."
        )


class GameConfigurator:
    """The configuration of a :class:`~sp_wrappers.SelfPlayEnv`'s game: what it plays under
    (its :class:`CopyConfig`) and the next game, built from ``env_fn`` and checked against the
    current one's spaces when a configuration is set, which the env switches to at its next
    episode start (:meth:`start_episode`). The env holds one and hands it its current game.

    :param env_fn: the game's constructor (``None``: a game instance without one, which
        :meth:`set_game_config` refuses).
    :param built_by_env_fn: whether the current game is ``env_fn()`` (so its configuration,
        ``{}``, is known).

    >>> from pettingzoo.classic import go_v5
    >>> configurator = GameConfigurator(go_v5.env, built_by_env_fn=True)
    >>> game = go_v5.env()
    >>> configurator.set_game_config({"komi": 5.5}, None, game)
    >>> configurator.config.describe(), configurator.start_episode() is not None
    (None, True)
    >>> configurator.config.describe()
    {'komi': 5.5}
    """

    def __init__(self, env_fn: Callable[..., Any] | None, built_by_env_fn: bool) -> None:
        self.env_fn = env_fn
        self.config = CopyConfig()
        self._built_by_env_fn = built_by_env_fn
        self._next_game: Any = None

    def set_game_config(self, game_kwargs: Mapping[str, Any], indices: Any, game: Any) -> None:
        """Build ``env_fn(**game_kwargs)`` now, checked against ``game`` (the env's current
        one), to play from the next episode start on; see ``SelfPlayEnv.set_game_config``."""
        _check_single_index(indices)
        kwargs = check_game_kwargs(game_kwargs)
        if self.env_fn is None:
            raise no_env_fn_error("This SelfPlayEnv")
        current = self.config.game_kwargs
        if current is None and self._built_by_env_fn:
            current = {}
        candidate = build_candidate(self.env_fn, kwargs, game, current)
        self.close()
        self._next_game = candidate
        self.config.stage_game(kwargs)

    def set_reward_fn(self, fn: RewardFn | None, indices: Any) -> None:
        """Map the learner's reward with ``fn`` from the next episode start on."""
        _check_single_index(indices)
        self.config.stage_reward(check_reward_fn(fn))

    def start_episode(self) -> Any:
        """At an episode start: put what was set since the last into effect; the game to play
        from now on when a configuration built one (the env closes its old game), else ``None``."""
        game, self._next_game = self._next_game, None
        self.config.start_episode()
        return game

    def close(self) -> None:
        """Close the next game, if one is waiting."""
        if self._next_game is not None:
            self._next_game.close()
            self._next_game = None
