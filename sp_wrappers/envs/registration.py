"""Gymnasium ids for the registered games: self-play envs from ``gymnasium.make`` and config files.

This module holds :data:`ENV_IDS` (game name -> Gymnasium id), :data:`NAMESPACE`,
:data:`SAMPLER_KNOBS`, :func:`register_envs`, :func:`make_env` (the ids' entry point),
:func:`reference_bot`, :func:`env_game` and :func:`vec_env_arguments`.

``import sp_wrappers`` registers one id per game of :data:`sp_wrappers.games.registry.GAMES`, so
tools that build envs with ``gymnasium.make(id, **env_kwargs)`` (SB3's ``make_vec_env``, RL
Baselines3 Zoo with ``--gym-packages sp_wrappers``) reach self-play without a training script.
Registration stores string entry points only: it imports neither torch, nor SB3, nor the game.

The keyword arguments of ``gymnasium.make(id, ...)`` are those of :func:`make_env`:

- ``learner``: the learner's seat, ``"random"`` (default) or ``"alternate"``; in a team game
  (``simple_tag_v3``, ``quadrapong_v4``) a team name (``SimpleTag``'s default is
  ``"adversary"``: its teams' spaces differ, so ``"random"`` cannot choose between them);
- ``teams``: how the agents form teams (default: the game's
  :attr:`~sp_wrappers.games.registry.GameSpec.teams`);
- ``archive``: the path of a snapshot archive. With it, the opponents are drawn from the archive by
  an :class:`~sp_wrappers.OpponentSampler` built from the sampler's knobs (``window``,
  ``latest_ratio``, ``swap_every``, ``swap_unit``, ``strategy``, ``pfsp_weighting``, ``pfsp_decay``,
  ``deterministic``) plus ``fixed_opponents`` (reference bots by name with their probability);
- ``opponent``: without an archive, one fixed opponent: a reference bot by name (``"random"``,
  the default; ``"minimax"`` for tic-tac-toe; ``"alphabeta-d1"``, ``"alphabeta-d2"``, ... for
  Connect Four) or a policy object. An env whose opponent is a reference bot makes the episode
  reward the learner's record against it (1 win, 0 draw, -1 loss in the classic games): the
  evaluation env of RL Zoo's ``EvalCallback`` and of its Optuna search;
- any other keyword: the game's own (``render_mode``, Pong's ``max_cycles``, ...).

>>> import gymnasium as gym
>>> import sp_wrappers
>>> sorted(ENV_IDS.values())  # doctest: +NORMALIZE_WHITESPACE
['sp_wrappers/ConnectFour-v0', 'sp_wrappers/Pong-v0', 'sp_wrappers/Quadrapong-v0',
 'sp_wrappers/SimpleTag-v0', 'sp_wrappers/TexasHoldem-v0', 'sp_wrappers/TicTacToe-v0']
>>> env = gym.make("sp_wrappers/TicTacToe-v0", opponent="minimax")
>>> env.observation_space.shape, env.action_space
((3, 3, 2), Discrete(9))
>>> env.unwrapped.slots.source.policy.policy_id
'minimax'
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium

from ..core.errors import SpWrappersError
from ..games.registry import GAMES, game_factory, reference_opponents
from ..opponents.sampler import PFSP_DECAY

if TYPE_CHECKING:  # pragma: no cover
    from ..archive.store import SnapshotArchive
    from ..core.policies import Policy
    from .selfplay_env import SelfPlayEnv

__all__ = [
    "ENV_IDS",
    "NAMESPACE",
    "SAMPLER_KNOBS",
    "register_envs",
    "make_env",
    "reference_bot",
    "env_game",
    "vec_env_arguments",
    "SamplerSettingError",
]

NAMESPACE = "sp_wrappers"
ENTRY_POINT = "sp_wrappers.envs.registration:make_env"
#: The 0.1 entry point, still stored in users' Gymnasium registries and RL Zoo files.
LEGACY_ENTRY_POINT = "sp_wrappers.registration:make_env"
# Names whose words are not separated by "_" in the PettingZoo name.
_TITLES = {"tictactoe_v3": "TicTacToe"}


def _env_id(game: str) -> str:
    base = game.rsplit("_v", 1)[0]
    title = _TITLES.get(game) or "".join(word.capitalize() for word in base.split("_"))
    return f"{NAMESPACE}/{title}-v0"


ENV_IDS: dict[str, str] = {game: _env_id(game) for game in GAMES}
"""The Gymnasium id of each registered game (``"connect_four_v3"`` ->
``"sp_wrappers/ConnectFour-v0"``)."""

#: The sampler's knobs an id accepts, with the defaults of :class:`~sp_wrappers.OpponentSampler`.
SAMPLER_KNOBS: dict[str, Any] = {
    "window": 10,
    "latest_ratio": 0.5,
    "swap_every": 1,
    "swap_unit": "episodes",
    "strategy": "uniform",
    "pfsp_weighting": "hard",
    "pfsp_decay": PFSP_DECAY,
    "deterministic": False,
    "fixed_opponents": None,
}
#: Keyword arguments an id sets besides its game: the learner of a team game whose teams' spaces
#: differ (``learner="random"`` cannot choose between them).
ID_DEFAULTS: dict[str, dict[str, Any]] = {"simple_tag_v3": {"learner": "adversary"}}
# SelfPlayVecEnv arguments that a single env has no use for.
_VEC_ONLY = ("num_workers", "device", "start_method")


class _NotGiven:
    """The default of a sampler setting of :func:`make_env` that the caller left out (so a
    setting passed without an archive is refused even when it equals the sampler's default)."""

    def __repr__(self) -> str:
        return "<the sampler's default>"


# The value of a sampler setting that was not passed.
_NOT_GIVEN = _NotGiven()


class SamplerSettingError(SpWrappersError, ValueError):
    """A sampler setting (``window=``, ``latest_ratio=``, ...) given without an archive to draw
    opponents from; without one it would be ignored."""


def register_envs() -> list[str]:
    """Register the ids of :data:`ENV_IDS` with Gymnasium (ids already registered are kept).

    Called by ``import sp_wrappers``; returns the ids registered by this call.
    """
    registered = []
    for game, env_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            kwargs = {"game": game, **ID_DEFAULTS.get(game, {})}
            gymnasium.register(env_id, entry_point=ENTRY_POINT, kwargs=kwargs)
            registered.append(env_id)
    return registered


def reference_bot(game: str, name: str, action_space: Any = None) -> Policy:
    """The reference opponent of ``game`` called ``name``.

    :param game: a registered game name (``"connect_four_v3"``).
    :param name: ``"random"``, one of the game's reference bots (``"minimax"``,
        ``"alphabeta-d1"``, ``"alphabeta-d2"``) or, for Connect Four, ``"alphabeta-d<depth>"``.
    :param action_space: the seat's action space, for ``RandomPolicy`` in games without masks.
    :raises ValueError: an unknown name, naming the known ones.

    >>> reference_bot("connect_four_v3", "alphabeta-d4").depth
    4
    """
    from ..core.policies import RandomPolicy
    from ..games.baselines import bot_name

    name = bot_name(name)  # alphabeta1 is alphabeta-d1
    if name == "random":
        return RandomPolicy(action_space)
    bots = {bot.policy_id: bot for bot in reference_opponents(game)[1:]}
    if name in bots:
        return bots[name]
    depth = name.removeprefix("alphabeta-d")
    if game == "connect_four_v3" and depth.isdigit() and int(depth) >= 1:
        from ..games.baselines import AlphaBetaConnectFourPolicy

        return AlphaBetaConnectFourPolicy(depth=int(depth))
    known = ["random", *bots] + (["alphabeta-d<depth>"] if game == "connect_four_v3" else [])
    raise ValueError(
        f"Unknown opponent {name!r} for {game}; use one of {known}, or pass archive=PATH to play "
        "against the snapshots of an archive."
    )


def env_game(env_id: str) -> str:
    """The game name behind one of our Gymnasium ids; raises ``ValueError`` for other ids."""
    try:
        spec = gymnasium.spec(env_id)
    except gymnasium.error.Error as error:
        raise ValueError(
            f"{env_id!r} is not a registered Gymnasium id ({error}); use one of "
            f"{sorted(ENV_IDS.values())} (registered by `import sp_wrappers`)."
        ) from None
    if spec.entry_point not in (ENTRY_POINT, LEGACY_ENTRY_POINT):
        raise ValueError(
            f"{env_id!r} is not a self-play id of sp_wrappers; use one of "
            f"{sorted(ENV_IDS.values())}, or pass a function building the PettingZoo game."
        )
    return str(spec.kwargs["game"])


def _opponent_source(
    game: str,
    action_space_fn: Callable[[], Any],
    archive: SnapshotArchive | str | os.PathLike[str] | None,
    opponent: Any,
    knobs: Mapping[str, Any],
) -> Any:
    """What ``SelfPlayEnv(opponent=...)`` gets: a sampler over the archive, or a fixed opponent.

    ``action_space_fn()`` gives the learner seat's action space (built only when needed: for
    ``RandomPolicy`` in the sampler's mix of a game without masks).
    """
    given = sorted(
        k for k, v in knobs.items() if v is not _NOT_GIVEN and (v or k != "fixed_opponents")
    )
    if archive is None:
        if given:
            raise SamplerSettingError(
                f"{', '.join(f'{k}={knobs[k]!r}' for k in given)} "
                f"{'applies' if len(given) == 1 else 'apply'} only to opponents drawn from an "
                "archive, and there is none; pass archive='runs/NAME/archive' as well, or leave "
                f"{'it' if len(given) == 1 else 'them'} out."
            )
        if opponent is None or isinstance(opponent, str):
            return None if opponent in (None, "random") else reference_bot(game, opponent)
        return opponent
    if opponent is not None:
        raise ValueError(
            f"Pass either archive= (opponents drawn from its snapshots) or opponent= (one fixed "
            f"opponent), not both; got opponent={opponent!r}. To mix a reference bot into the "
            "archive's opponents, use fixed_opponents={'random': 0.1}."
        )
    from ..opponents.sampler import OpponentSampler

    action_space = action_space_fn()
    knobs = {k: SAMPLER_KNOBS[k] if v is _NOT_GIVEN else v for k, v in knobs.items()}
    fixed = knobs["fixed_opponents"] or {}
    pairs: Sequence[Any] = list(fixed.items()) if isinstance(fixed, Mapping) else list(fixed)
    fixed_opponents = [
        (reference_bot(game, bot, action_space) if isinstance(bot, str) else bot, float(p))
        for bot, p in pairs
    ]
    from ..core.policies import RandomPolicy

    sampler_knobs = {k: v for k, v in knobs.items() if k != "fixed_opponents"}
    return OpponentSampler(
        archive,
        fixed_opponents=fixed_opponents,
        fallback=RandomPolicy(action_space),
        **sampler_knobs,
    )


def _parse(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Split an id's keyword arguments into (opponent arguments, env arguments, game kwargs)."""
    kwargs = dict(kwargs)
    opponent_args = {k: kwargs.pop(k, None) for k in ("archive", "opponent")}
    opponent_args["knobs"] = {k: kwargs.pop(k, _NOT_GIVEN) for k in SAMPLER_KNOBS}
    env_keys = ("learner", "teams", "keep_dict_obs", "outcome_fn", *_VEC_ONLY)
    env_args = {k: kwargs.pop(k) for k in env_keys if k in kwargs}
    env_args.setdefault("learner", "random")
    if env_args.get("teams") is None:
        env_args.pop("teams", None)
    game_kwargs = {**(kwargs.pop("env_kwargs", None) or {}), **kwargs}
    if game_kwargs.get("render_mode", 0) is None:  # Gymnasium's default; not every game takes it
        del game_kwargs["render_mode"]
    return opponent_args, env_args, game_kwargs


def _default_teams(game: str, env_args: dict[str, Any]) -> None:
    """A registered team game's own teams, unless ``teams=`` was given."""
    spec = GAMES.get(game)
    if spec is not None and spec.teams is not None:
        env_args.setdefault("teams", spec.teams)


def _learner_action_space(game: Any, learner: str) -> Any:
    seats = list(game.possible_agents)
    return game.action_space(learner if learner in seats else seats[0])


def make_env(
    game: str,
    learner: str = "random",
    archive: SnapshotArchive | str | os.PathLike[str] | None = None,
    opponent: str | Policy | None = None,
    fixed_opponents: Mapping[str, float] | Sequence[tuple[Any, float]] | None = None,
    window: int | None | _NotGiven = _NOT_GIVEN,
    latest_ratio: float | _NotGiven = _NOT_GIVEN,
    swap_every: int | _NotGiven = _NOT_GIVEN,
    swap_unit: str | _NotGiven = _NOT_GIVEN,
    strategy: str | _NotGiven = _NOT_GIVEN,
    pfsp_weighting: str | _NotGiven = _NOT_GIVEN,
    pfsp_decay: float | _NotGiven = _NOT_GIVEN,
    deterministic: bool | _NotGiven = _NOT_GIVEN,
    keep_dict_obs: bool = False,
    teams: Any = None,
    **game_kwargs: Any,
) -> SelfPlayEnv:
    """The entry point of the Gymnasium ids: a :class:`~sp_wrappers.SelfPlayEnv` of ``game``.

    :param game: the registered game (set by the id).
    :param learner: the learner's seat: an agent name, ``"random"`` or ``"alternate"``.
    :param archive: a snapshot archive or the path of its directory (created when missing): the
        opponents are drawn from its snapshots by an :class:`~sp_wrappers.OpponentSampler`.
        Train with :class:`~sp_wrappers.SelfPlayCallback` on the same archive.
    :param opponent: without ``archive``: the fixed opponent, a reference bot name (see
        :func:`reference_bot`; default ``"random"``) or a policy.
    :param fixed_opponents: with ``archive``: reference bots always in the mix, by name with
        their probability (``{"random": 0.1, "alphabeta-d2": 0.25}``) or as (policy,
        probability) pairs.
    :param window: with ``archive``: the sampler's window (newest snapshots eligible). This and
        the other sampler settings default to :class:`~sp_wrappers.OpponentSampler`'s; passed
        without ``archive`` they are refused (:class:`SamplerSettingError`), never ignored.
    :param latest_ratio: with ``archive``: probability of facing the learner's latest weights.
    :param swap_every: with ``archive``: draw a new opponent every this many ``swap_unit``.
    :param swap_unit: with ``archive``: ``"episodes"`` or ``"steps"`` (learner steps).
    :param strategy: with ``archive``: ``"uniform"`` or ``"pfsp"``.
    :param pfsp_weighting: with ``archive``: ``"hard"`` or ``"variance"``.
    :param pfsp_decay: with ``archive``: how fast old results fade from PFSP win rates (see
        :class:`~sp_wrappers.OpponentSampler`).
    :param deterministic: with ``archive``: snapshot opponents take their most likely action.
    :param keep_dict_obs: give the learner the game's ``{"observation", "action_mask"}`` dict.
    :param teams: ``SelfPlayEnv``'s ``teams=``; ``None`` (default): the game's own teams
        (:attr:`~sp_wrappers.games.registry.GameSpec.teams`; none for the two-player games).
    :param game_kwargs: the game's own keyword arguments (``render_mode``, ``max_cycles``, ...).
    :raises SamplerSettingError: a sampler setting without an archive.
    :raises ValueError: both ``archive`` and ``opponent``, or an
        unknown bot name.
    :raises TypeError: ``archive`` is neither an archive nor a path.
    """
    from .selfplay_env import SelfPlayEnv

    opponent_args, env_args, game_kwargs = _parse(
        dict(
            archive=archive,
            opponent=opponent,
            fixed_opponents=fixed_opponents,
            window=window,
            latest_ratio=latest_ratio,
            swap_every=swap_every,
            swap_unit=swap_unit,
            strategy=strategy,
            pfsp_weighting=pfsp_weighting,
            pfsp_decay=pfsp_decay,
            deterministic=deterministic,
            learner=learner,
            keep_dict_obs=keep_dict_obs,
            teams=teams,
            **game_kwargs,
        )
    )
    unknown = sorted(set(env_args) & set(_VEC_ONLY))
    if unknown:
        raise TypeError(
            f"{', '.join(unknown)} only apply to the batched env; use "
            "sp_wrappers.make_selfplay_vec_env(id, n_envs, ...) for them."
        )
    _default_teams(game, env_args)
    built = game_factory(game, game_kwargs)()
    try:
        env_args["opponent"] = _opponent_source(
            game, lambda: _learner_action_space(built, learner), **opponent_args
        )
        return SelfPlayEnv(built, **env_args)
    except BaseException:
        built.close()
        raise


def vec_env_arguments(
    env_id: str, kwargs: Mapping[str, Any]
) -> tuple[Callable[[], Any], dict[str, Any]]:
    """``(env_fn, SelfPlayVecEnv arguments)`` for one of our ids and ``gymnasium.make``-style
    keyword arguments (used by :func:`~sp_wrappers.make_selfplay_vec_env` given an id).

    >>> env_fn, args = vec_env_arguments("sp_wrappers/ConnectFour-v0", {"num_workers": 0})
    >>> env_fn().metadata["name"], sorted(args)
    ('connect_four_v3', ['learner', 'num_workers', 'opponent'])
    """
    game = env_game(env_id)
    spec_kwargs = {k: v for k, v in gymnasium.spec(env_id).kwargs.items() if k != "game"}
    opponent_args, env_args, game_kwargs = _parse({**spec_kwargs, **kwargs})
    _default_teams(game, env_args)
    env_fn = game_factory(game, game_kwargs)

    def action_space() -> Any:
        probe = env_fn()
        try:
            return _learner_action_space(probe, env_args["learner"])
        finally:
            probe.close()

    env_args["opponent"] = _opponent_source(game, action_space, **opponent_args)
    return env_fn, env_args
