"""Environment generators: change each env copy's game and reward as training goes on.

A generator is a function ``generator(step, index, history)`` returning the configuration copy
``index`` plays next: a :class:`GameConfig`, a plain dict of game keyword arguments, or ``None``
to keep the current one. The callback applies it with the envs' ``set_game_config`` and
``set_reward_fn`` (through ``env_method``, so ``VecMonitor`` and other wrappers pass it on);
each copy switches at its next episode start, never mid-game. Unsupervised environment design,
curricula and handicaps (a komi that keeps the learner's win rate near 50%) are such functions.

Each finished episode's ``info["selfplay"]["config"]`` names the configuration it was played
under (the game keyword arguments, plus ``"reward_fn"``: the transform's name); the
:class:`~sp_wrappers.SelfPlayCallback` stores it in the archive's match records, so ratings and
win rates can be split by configuration (``sp-wrappers ratings RUN --config '{"komi": 7.5}'``).
"""

from __future__ import annotations

import os
import pickle
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from ..archive.matches import config_key
from ..core.imports import import_module
from ..core.state_file import AnyValue, Int, List, Map, Obj, Optional, StateFormat, Str
from ..envs.game_config import REWARD_KEY, reward_fn_name
from .env_history import ConfigResult, EnvHistory, GameConfig
from .episode_feed import EpisodeFeed, restart_episodes

__all__ = [
    "EnvGenerator",
    "GameConfig",
    "EnvHistory",
    "ConfigResult",
    "win_rates_by_config",
    "load_generator",
    "env_generator_callback",
    "ENV_GENERATOR_STATE",
    "ENV_GENERATOR_FORMAT",
]

#: The file in a run directory holding each env copy's current configuration.
ENV_GENERATOR_STATE = "env_generator.json"
STATE_FORMAT_VERSION = 1

#: ``env_generator.json``: one reader, one writer (:class:`~sp_wrappers.core.state_file.
#: StateFormat`).
ENV_GENERATOR_FORMAT = StateFormat(
    ENV_GENERATOR_STATE,
    STATE_FORMAT_VERSION,
    Obj(
        {
            "copies": List(
                Optional(
                    Obj(
                        {"game_kwargs": Map(AnyValue())},
                        optional={REWARD_KEY: Optional(Str())},
                    )
                )
            )
        },
        optional={"step": Int(min=0), "generator": Optional(Str())},
    ),
    fix="restore env_generator.json from a backup, or delete it to let the generator choose "
    "every copy's configuration again",
)


Generator = Callable[[int, int, EnvHistory], Any]


class EnvGenerator(BaseCallback):
    """Calls ``generator(step, index, history)`` for each env copy and applies what it returns.

    With ``every="episode"`` (default) the generator is called for a copy when its episode
    ends; with ``every=N`` for every copy each ``N`` learner steps. Either way it is also called
    for every copy at the start of training, and those first configurations are played from the
    first episode on (the envs are reset). A new configuration takes effect at the copy's next
    episode start: SB3's vector envs start the next episode in the same ``step`` that ends one,
    so a configuration chosen when an episode ends is played from the episode after the one
    already started.

    ``index`` counts game copies: with a team learner (``TeamVecEnv(teams=...)``, ``team_size``
    slots per game) every slot of a game shares its configuration.

    The callback keeps :attr:`history` (an :class:`EnvHistory` filled from the episodes'
    ``info["selfplay"]``, read where the games are recorded: the envs' buffers of finished
    episodes, so it fills with every learner, ARS included; see
    :class:`~sp_wrappers.training.episode_feed.EpisodeFeed`) and :attr:`configs` (each copy's
    current :class:`GameConfig`). With ``state_path`` it writes the configurations there whenever
    they change, and when that file exists at the start of training (a resumed run) it applies
    them again instead of asking the generator; a reward transform is found again by its
    ``module:qualname``.

    :param generator: ``generator(step, index, history)`` -> :class:`GameConfig`, a dict of game
        keyword arguments, or ``None`` (keep the copy's configuration).
    :param every: ``"episode"``, or a positive number of learner steps.
    :param window: episodes kept per configuration in :attr:`history`.
    :param max_configs: configurations kept in :attr:`history`.
    :param state_path: the JSON file of the current configurations (see ``docs/formats.md``).
    :param verbose: 1 prints a line per configuration change.

    >>> from sb3_contrib import MaskablePPO
    >>> from pettingzoo.classic import go_v5
    >>> from sp_wrappers import make_selfplay_vec_env
    >>> env = make_selfplay_vec_env(go_v5.env, n_envs=2, seed=0, learner="black_0",
    ...                             env_kwargs={"board_size": 5})
    >>> komi = lambda step, index, history: {"komi": 0.5 + 2 * index}
    >>> model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, seed=0)
    >>> callback = EnvGenerator(komi)
    >>> _ = model.learn(64, callback=callback)
    >>> [c.game_kwargs for c in callback.configs], env.get_attr("game_config")
    ([{'komi': 0.5}, {'komi': 2.5}], [{'komi': 0.5}, {'komi': 2.5}])
    """

    def __init__(
        self,
        generator: Generator,
        every: str | int = "episode",
        window: int = 100,
        max_configs: int = 1000,
        state_path: str | os.PathLike[str] | None = None,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if not callable(generator):
            raise TypeError(
                f"generator must be a function generator(step, index, history), got "
                f"{type(generator).__name__}."
            )
        if every != "episode" and (
            isinstance(every, bool) or not isinstance(every, int | np.integer) or every < 1
        ):
            raise ValueError(
                f"every must be 'episode' or a positive number of learner steps, got {every!r}."
            )
        self.generator = generator
        self.every = every
        self.history = EnvHistory(window, max_configs)
        self.state_path = None if state_path is None else Path(state_path)
        self.configs: list[GameConfig | None] = []
        self._slots = 1
        self._last_call = 0
        self._changed = False
        self._env: Any = None
        self.episodes = EpisodeFeed()

    # -- SB3 hooks -------------------------------------------------------------------------------
    def _on_training_start(self) -> None:
        # A team learner's vec env has team_size slots per game copy (slot g * team_size + k);
        # configurations are per game copy, and only a copy's first slot reports its episode.
        self._slots = max(1, int(getattr(self.training_env, "team_size", 1) or 1))
        n = self.training_env.num_envs // self._slots
        self._last_call = self.num_timesteps
        self.episodes.start(self.training_env)
        if self._env is self.training_env and len(self.configs) == n:
            # learn() called again on the same env (chunked training): the copies keep the
            # configurations they play and their episodes go on, as SB3's own do.
            return
        self._env = self.training_env
        self.configs = [None] * n
        restored = self._restore() if self.state_path is not None else set()
        for index in range(n):
            if index not in restored:
                self._apply(index, self._ask(index))
        if any(config is not None for config in self.configs):
            restart_episodes(self.model)  # the first configurations from the start
        self._save_state()

    def _on_step(self) -> bool:
        ended = self._record(self.episodes.collect_indexed(self.training_env, self.locals))
        if self.every == "episode":
            due = ended
        elif self.num_timesteps - self._last_call >= int(self.every):
            due = list(range(len(self.configs)))
            self._last_call = self.num_timesteps
        else:
            due = []
        for index in due:
            self._apply(index, self._ask(index))
        self._save_state()
        return True

    def _on_training_end(self) -> None:
        self._record(self.episodes.collect_indexed(self.training_env, {}))  # any not yet drained

    def _record(self, episodes: list[tuple[int, dict[str, Any]]]) -> list[int]:
        """Put finished episodes (``(slot, summary)``) into :attr:`history`; their copies."""
        ended = []
        for slot, summary in episodes:
            index = slot // self._slots
            self.history.record(summary.get("config"), summary, self.num_timesteps, index)
            ended.append(index)
        return ended

    def _on_rollout_end(self) -> None:
        in_play = {config_key(c.describe()) for c in self.configs if c is not None}
        self.logger.record("env_generator/configs_in_play", len(in_play))

    # -- applying configurations -----------------------------------------------------------------
    def _ask(self, index: int) -> GameConfig | None:
        value = self.generator(int(self.num_timesteps), index, self.history)
        try:
            return GameConfig.coerce(value)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{_name(self.generator)} for copy {index}: {error}") from None

    def _apply(self, index: int, config: GameConfig | None) -> None:
        """Set copy ``index``'s game and reward transform where they change."""
        if config is None:
            return
        old = self.configs[index]
        env = self.training_env
        new_reward = (old.reward_fn if old is not None else None) is not config.reward_fn
        if new_reward:  # before anything changes
            _check_reaches_workers(env, config.reward_fn)
        if old is None or old.game_kwargs != config.game_kwargs:
            try:
                env.env_method(
                    "set_game_config", dict(config.game_kwargs), indices=[index * self._slots]
                )
            except ValueError as error:
                raise ValueError(
                    f"{_name(self.generator)} gave copy {index} the configuration "
                    f"{config.describe()}: {error}"
                ) from None
        if new_reward:
            env.env_method("set_reward_fn", config.reward_fn, indices=[index * self._slots])
        if old != config:
            self.configs[index] = config
            self.history.set_current(index, config)
            self._changed = True
            if self.verbose:
                step = self.num_timesteps
                print(f"env_generator: copy {index} -> {config.describe()} (step {step})")

    # -- the state file --------------------------------------------------------------------------
    def _save_state(self) -> None:
        if self.state_path is None or not self._changed:
            return
        copies = [
            None
            if c is None
            else {
                "game_kwargs": dict(c.game_kwargs),
                REWARD_KEY: None if c.reward_fn is None else reward_fn_name(c.reward_fn),
            }
            for c in self.configs
        ]
        state = {
            "step": int(self.num_timesteps),
            "generator": _name(self.generator),
            "copies": copies,
        }
        try:
            ENV_GENERATOR_FORMAT.write(self.state_path, state)
            self._changed = False
        except OSError as error:
            warnings.warn(f"Could not write {self.state_path}: {error}", stacklevel=2)

    def _restore(self) -> set[int]:
        """Apply the configurations of an existing state file; the copies it covered."""
        path = self.state_path
        assert path is not None
        if not path.is_file():
            return set()
        copies = ENV_GENERATOR_FORMAT.read(path)["copies"]
        restored = set()
        for index, entry in enumerate(copies[: len(self.configs)]):
            if entry is None:
                continue
            reward_name = entry.get(REWARD_KEY)
            reward_fn = _resolve_reward_fn(reward_name) if reward_name else None
            if reward_name and reward_fn is None:
                warnings.warn(
                    f"{path}: copy {index}'s reward transform {reward_name!r} cannot be imported "
                    "again (a lambda or a nested function?); the copy uses the game's reward "
                    "until the generator gives it one. Define transforms at a module's top level.",
                    stacklevel=2,
                )
            self._apply(index, GameConfig(entry.get("game_kwargs") or {}, reward_fn))
            restored.add(index)
        return restored


def _resolve_reward_fn(name: str) -> Any:
    """The function ``module:qualname`` names, or ``None``."""
    module_name, sep, qualname = name.partition(":")
    if not sep:
        return None
    try:
        target: Any = import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError):
        return None
    return target if callable(target) else None


def _check_reaches_workers(venv: Any, fn: Any) -> None:
    """Raise a clear error when ``fn`` must travel to SB3 worker processes and cannot pickle.

    ``SubprocVecEnv`` sends ``env_method`` arguments by pickle; :class:`~sp_wrappers.SelfPlayVecEnv`
    applies reward transforms in the main process, also with ``num_workers > 0``.
    """
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnvWrapper

    while isinstance(venv, VecEnvWrapper):
        venv = venv.venv
    if fn is None or not isinstance(venv, SubprocVecEnv):
        return
    try:
        pickle.dumps(fn)
    except Exception as error:  # noqa: BLE001 - pickling fails in many ways
        raise TypeError(
            f"The reward transform {reward_fn_name(fn)} cannot be pickled ({error}), but the "
            "training env is a SubprocVecEnv, which sends it to its worker processes by pickle. "
            "Define it with def at a module's top level (not a lambda or a nested function), or "
            "train on SelfPlayVecEnv(num_workers=k), which applies reward transforms in the main "
            "process."
        ) from None


def _name(fn: Any) -> str:
    return reward_fn_name(fn)


def load_generator(spec: str) -> Generator:
    """The generator function an import path ``module:function`` names (``--env-generator``).

    >>> load_generator("nowhere:gen")
    Traceback (most recent call last):
    ...
    ValueError: Cannot import 'nowhere' for --env-generator 'nowhere:gen' (No module named \
'nowhere'); pass module:function of an importable module (run from its folder or set PYTHONPATH).
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(
            f"--env-generator takes module:function, got {spec!r} (e.g. "
            "examples.env_generator:komi_curriculum)."
        )
    try:
        target: Any = import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"Cannot import {module_name!r} for --env-generator {spec!r} ({error}); pass "
            "module:function of an importable module (run from its folder or set PYTHONPATH)."
        ) from None
    for part in attribute.split("."):
        target = getattr(target, part, None)
    if not callable(target):
        raise ValueError(f"--env-generator {spec!r}: {module_name} has no function {attribute!r}.")
    return target


def env_generator_callback(spec: str | None, run_dir: Path, verbose: int = 0) -> Any:
    """The :class:`EnvGenerator` of ``sp-wrappers train --env-generator``, its state in
    ``run_dir`` (``None`` without a generator)."""
    if not spec:
        return None
    return EnvGenerator(
        load_generator(spec), state_path=run_dir / ENV_GENERATOR_STATE, verbose=verbose
    )


def win_rates_by_config(
    archive: Any, player: str = "learner", source: str | None = None
) -> dict[str, dict[str, Any]]:
    """``player``'s record in an archive's match history, per configuration.

    Keys are the configurations' canonical JSON texts
    (:func:`sp_wrappers.archive.matches.config_key`); each value holds ``config`` (the dict),
    ``games``, ``wins``, ``draws``, ``losses``, ``win_rate`` and ``score`` (mean outcome, draws
    0.5). Games recorded without a configuration count under ``{}``.

    :param archive: a :class:`~sp_wrappers.SnapshotArchive` or the path of one.
    :param player: the player whose games count (the learner's name in training records).
    :param source: only games of this source (``"training"``, ``"evaluation"``...).
    """
    from ..archive.store import as_archive

    archive = as_archive(archive, create=False, owner="win_rates_by_config(archive=...)")
    rows: dict[str, dict[str, Any]] = {}
    for match in archive.iter_matches(player, source):
        if match.player_a == player:
            score = float(match.score_a)
        elif match.player_b == player:
            score = 1.0 - float(match.score_a)
        else:
            continue
        config = getattr(match, "config", None) or {}
        row = rows.setdefault(
            config_key(config or {}),
            {"config": dict(config), "games": 0, "wins": 0, "draws": 0, "losses": 0, "total": 0.0},
        )
        row["games"] += 1
        row["total"] += score
        row["wins" if score == 1.0 else "losses" if score == 0.0 else "draws"] += 1
    for row in rows.values():
        row["win_rate"] = row["wins"] / row["games"]
        row["score"] = row.pop("total") / row["games"]
    return rows
