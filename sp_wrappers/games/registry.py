"""The game registry: names the ``train`` command knows, each with its reference opponents.

Each registered game has a spec (how to build it, its teams, its reference opponents); a name
that is not registered may be an import path ``module:function``; a registered game whose package
is missing names the extra to install.

A game is named either by a registered name (``tictactoe_v3``, ``connect_four_v3``,
``texas_holdem_v4``, ``pong_v3`` on RAM observations; the team games ``simple_tag_v3`` from
``mpe2`` and ``quadrapong_v4`` on RAM observations, each with its :attr:`GameSpec.teams`) or by
an import path ``module:function`` to any PettingZoo environment constructor
(``pettingzoo.classic.go_v5:env``). When the attribute is a module with an ``env`` function
(``pettingzoo.classic:rps_v2``), that ``env`` is used. Keyword arguments (``game_kwargs`` in a
run's ``config.json``) go to the constructor, except ``frame_stack=k``, which every game takes:
each agent observes its own last ``k`` observations (frame stacking inside the game, so the
opponents see stacks too).

``pong_v3`` and ``quadrapong_v4`` observe the Atari's 128 RAM bytes scaled to ``[0, 1]``
(``float32``, byte / 255, see :class:`~sp_wrappers.games.wrappers.ScaledObservations`): raw 0-255
bytes would feed a network inputs two orders of magnitude larger than its initialisation
expects. Pass ``scale_observations=False`` (a game keyword argument) for the raw ``uint8``
bytes. ``frame_skip=k`` holds each action for ``k`` frames and sums the rewards (the usual Atari
setting is 4; the Pong recipes use it), so a decision spans more of the game. ROMs come from the
installed ``ale_py`` package's ``roms`` folder: nothing is downloaded.

>>> sorted(GAMES)  # doctest: +NORMALIZE_WHITESPACE
['connect_four_v3', 'pong_v3', 'quadrapong_v4', 'simple_tag_v3', 'texas_holdem_v4',
 'tictactoe_v3']
>>> GAMES["simple_tag_v3"].teams, sorted(GAMES["quadrapong_v4"].teams)
('prefix', ['first_third', 'second_fourth'])
>>> make_game("tictactoe_v3").possible_agents
['player_1', 'player_2']
>>> make_game("pettingzoo.classic.connect_four_v3:env").metadata["name"]
'connect_four_v3'
>>> [p.policy_id for p in reference_opponents("tictactoe_v3")]
['random', 'minimax']
>>> [p.policy_id for p in reference_opponents("connect_four_v3")]
['random', 'alphabeta-d1', 'alphabeta-d2']
>>> list(BOTS), make_bot("alphabeta2").policy_id
(['random', 'minimax', 'alphabeta-d1', 'alphabeta-d2', 'alphabeta-d4'], 'alphabeta-d2')
>>> make_game("pong_v3", max_cycles=10).observation_space("first_0")
Box(0.0, 1.0, (128,), float32)
"""

from __future__ import annotations

import functools
import importlib
import os
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.extras import install_hint
from .errors import MissingGameError, UnknownBotError, UnknownGameError

__all__ = [
    "GameSpec",
    "GAMES",
    "UnknownGameError",
    "MissingGameError",
    "QUADRAPONG_TEAMS",
    "resolve_game",
    "make_game",
    "game_factory",
    "reference_opponents",
    "BOTS",
    "make_bot",
    "FRAME_STACK",
]


def _classic(module: str, **kwargs: Any) -> Any:
    return importlib.import_module(f"pettingzoo.classic.{module}").env(**kwargs)


def _atari_ram(
    module: str, scale_observations: bool = True, frame_skip: int = 1, **kwargs: Any
) -> Any:
    """A PettingZoo Atari game (``pettingzoo.atari.<module>``) on the 128-byte RAM, ROMs from
    ``ale_py``'s folder (nothing is downloaded); observations scaled to [0, 1] ``float32`` unless
    ``scale_observations=False``; each action held for ``frame_skip`` frames (rewards summed)
    when it is above 1."""
    from pettingzoo.utils.conversions import parallel_to_aec

    from .wrappers import RepeatedActions, ScaledObservations

    game = importlib.import_module(f"pettingzoo.atari.{module}")
    if int(frame_skip) != frame_skip or frame_skip < 1:
        raise ValueError(
            f"frame_skip must be an integer >= 1 (frames per action), got {frame_skip!r}."
        )
    kwargs.setdefault("obs_type", "ram")
    if "auto_rom_install_path" not in kwargs:
        try:
            import ale_py

            kwargs["auto_rom_install_path"] = os.path.join(os.path.dirname(ale_py.__file__), "roms")
        except ImportError:  # pragma: no cover - ale-py comes with pettingzoo[atari]
            pass
    if frame_skip > 1:
        parallel = game.raw_env(**kwargs).env  # the ParallelAtariEnv under the AEC adapter
        env = parallel_to_aec(RepeatedActions(parallel, int(frame_skip)))
    else:
        env = game.env(**kwargs)
    return ScaledObservations(env) if scale_observations else env


def _pong_ram(scale_observations: bool = True, frame_skip: int = 1, **kwargs: Any) -> Any:
    """PettingZoo's two-player Pong on the RAM (see :func:`_atari_ram`)."""
    return _atari_ram("pong_v3", scale_observations, frame_skip, **kwargs)


def _quadrapong_ram(scale_observations: bool = True, frame_skip: int = 1, **kwargs: Any) -> Any:
    """PettingZoo's four-player Quadrapong (two teams of two) on the RAM (see
    :func:`_atari_ram`)."""
    return _atari_ram("quadrapong_v4", scale_observations, frame_skip, **kwargs)


def _mpe(module: str, **kwargs: Any) -> Any:
    """A game of the ``mpe2`` package (the Multi-Particle Environments, discrete actions)."""
    try:
        game = importlib.import_module(f"mpe2.{module}")
    except ImportError as error:
        if error.name is not None and error.name != "mpe2" and not error.name.startswith("mpe2."):
            raise
        raise MissingGameError(
            f"The game {module} needs the mpe2 package, which is not installed: "
            f"{install_hint('mpe')}."
        ) from None
    return game.env(**kwargs)


def _random() -> Any:
    from ..core.policies import RandomPolicy

    return RandomPolicy()


def _minimax() -> Any:
    from .baselines import PerfectTicTacToePolicy

    return PerfectTicTacToePolicy()


def _alphabeta(depth: int) -> Any:
    from .baselines import AlphaBetaConnectFourPolicy

    return AlphaBetaConnectFourPolicy(depth=depth)


@dataclass(frozen=True)
class GameSpec:
    """A registered game.

    :param name: the registry name (also PettingZoo's ``metadata["name"]``).
    :param factory: ``factory(**game_kwargs)`` builds the PettingZoo env.
    :param description: one line for ``--help`` and error messages.
    :param references: zero-argument factories of the game's reference opponents besides
        ``RandomPolicy`` (the end-of-run evaluation plays them all).
    :param quick_kwargs: game keyword arguments that make an episode short (smoke tests).
    :param teams: how the game's agents form teams, as ``SelfPlayEnv(teams=...)`` takes it:
        ``None`` (every agent its own side: the two-player games), ``"prefix"`` (agents grouped
        by their name without the trailing ``_N``) or a mapping ``{team: [agent, ...]}``.
        ``sp-wrappers train`` trains one learner per team (``TeamSelfPlay``) when it is set.
    :param opening_plies: forced opening moves of the end-of-run evaluation (every sequence of
        that many legal moves, from both seats, as ``benchmarks/strength.py`` plays them): a
        deterministic learner against a deterministic bot otherwise replays a few games over and
        over. 0 for games whose chance or length already varies the games.
    """

    name: str
    factory: Callable[..., Any]
    description: str
    references: tuple[Callable[[], Any], ...] = ()
    quick_kwargs: Mapping[str, Any] = field(default_factory=dict)
    teams: str | Mapping[str, Sequence[str]] | None = None
    opening_plies: int = 0


#: Quadrapong's teams, as PettingZoo's documentation of ``quadrapong_v4`` assigns them.
QUADRAPONG_TEAMS: dict[str, tuple[str, ...]] = {
    "first_third": ("first_0", "third_0"),
    "second_fourth": ("second_0", "fourth_0"),
}

#: Registered games by name.
GAMES: dict[str, GameSpec] = {
    spec.name: spec
    for spec in (
        GameSpec(
            "tictactoe_v3",
            functools.partial(_classic, "tictactoe_v3"),
            "tic-tac-toe (PettingZoo classic), action masks; reference: perfect minimax",
            (_minimax,),
            opening_plies=1,
        ),
        GameSpec(
            "connect_four_v3",
            functools.partial(_classic, "connect_four_v3"),
            "Connect Four (PettingZoo classic), action masks; references: alpha-beta depths 1, 2",
            (functools.partial(_alphabeta, 1), functools.partial(_alphabeta, 2)),
            opening_plies=2,
        ),
        GameSpec(
            "texas_holdem_v4",
            functools.partial(_classic, "texas_holdem_v4"),
            "limit Texas hold'em (PettingZoo classic), action masks",
        ),
        GameSpec(
            "pong_v3",
            _pong_ram,
            "two-player Atari Pong on RAM observations scaled to [0, 1] (PettingZoo atari), "
            "no masks",
            quick_kwargs={"max_cycles": 60},
        ),
        GameSpec(
            "simple_tag_v3",
            functools.partial(_mpe, "simple_tag_v3", continuous_actions=False, max_cycles=25),
            "predator-prey (mpe2's MPE): three adversaries chase one faster agent, discrete "
            "actions, 25 steps per episode; teams adversary and agent (needs sp-wrappers[mpe])",
            quick_kwargs={"max_cycles": 10},
            teams="prefix",
        ),
        GameSpec(
            "quadrapong_v4",
            _quadrapong_ram,
            "four-player Atari Quadrapong, two teams of two (first_0 and third_0 against "
            "second_0 and fourth_0, as PettingZoo's documentation assigns them), RAM "
            "observations scaled to [0, 1], no masks",
            quick_kwargs={"max_cycles": 60},
            teams=QUADRAPONG_TEAMS,
        ),
    )
}


def _import_constructor(path: str) -> Callable[..., Any]:
    registered = ", ".join(GAMES)
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise UnknownGameError(
            f"Unknown game {path!r}; use one of {registered} or an import path "
            "'module:function' to a PettingZoo env constructor (e.g. pettingzoo.classic.go_v5:env)."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UnknownGameError(
            f"Cannot import {module_name!r} for game {path!r}: {error}."
        ) from None
    target: Any = module
    for part in attribute.split("."):
        target = getattr(target, part, None)
    if isinstance(target, types.ModuleType) and callable(getattr(target, "env", None)):
        target = target.env
    if not callable(target):
        raise UnknownGameError(f"Game {path!r}: {module_name} has no callable {attribute!r}.")
    return target


def resolve_game(name: str) -> Callable[..., Any]:
    """The constructor of a registered game or of an import path; raises
    :class:`UnknownGameError` naming the registered games.

    >>> resolve_game("chess")
    Traceback (most recent call last):
    ...
    sp_wrappers.games.errors.UnknownGameError: Unknown game 'chess'; use one of tictactoe_v3, \
connect_four_v3, texas_holdem_v4, pong_v3, simple_tag_v3, quadrapong_v4 or an import path \
'module:function' to a PettingZoo env constructor (e.g. pettingzoo.classic.go_v5:env).
    """
    spec = GAMES.get(name)
    return spec.factory if spec is not None else _import_constructor(name)


#: The game keyword argument that every game takes: ``frame_stack=k`` gives every agent its own
#: stack of its last ``k`` observations
#: (:class:`~sp_wrappers.games.frame_stack.StackedObservations`), so the learner's seat and every
#: opponent's see the same stacked observations.
FRAME_STACK = "frame_stack"


def make_game(name: str, **kwargs: Any) -> Any:
    """Build the PettingZoo env called ``name`` with the game's keyword arguments
    (``frame_stack=k``, taken by every game, stacks each agent's last ``k`` observations).

    >>> make_game("connect_four_v3", frame_stack=2).observation_space("player_0")["observation"]
    Box(0, 1, (6, 7, 4), int8)
    """
    n_stack = kwargs.pop(FRAME_STACK, None)
    game = resolve_game(name)(**kwargs)
    if n_stack is None or n_stack == 1:
        return game
    if not isinstance(n_stack, int) or isinstance(n_stack, bool) or n_stack < 1:
        raise ValueError(
            f"frame_stack must be a positive number of observations, got {n_stack!r} "
            "(e.g. --game-kwarg frame_stack=4)."
        )
    from .frame_stack import StackedObservations

    return StackedObservations(game, n_stack)


def game_factory(name: str, kwargs: Mapping[str, Any] | None = None) -> Callable[[], Any]:
    """A picklable zero-argument function building the game (for worker processes).

    >>> import pickle
    >>> pickle.loads(pickle.dumps(game_factory("connect_four_v3")))().metadata["name"]
    'connect_four_v3'
    """
    resolve_game(name)  # fail here, with a clear message, rather than in a worker
    return functools.partial(make_game, name, **dict(kwargs or {}))


def reference_opponents(name: str) -> list[Any]:
    """``RandomPolicy`` followed by the game's reference bots (none for unregistered games)."""
    spec = GAMES.get(name)
    return [_random()] + [make() for make in (spec.references if spec else ())]


#: The reference players by name (``--baseline``, ``sp-wrappers watch --a``): a zero-argument
#: factory and the registered game it plays (``None``: any game).
BOTS: dict[str, tuple[Callable[[], Any], str | None]] = {
    "random": (_random, None),
    "minimax": (_minimax, "tictactoe_v3"),
    **{
        f"alphabeta-d{depth}": (functools.partial(_alphabeta, depth), "connect_four_v3")
        for depth in (1, 2, 4)
    },
}


def make_bot(name: str, game: str | None = None) -> Any:
    """The reference player called ``name`` (a key of :data:`BOTS`; ``alphabeta<depth>``, the
    older spelling, is ``alphabeta-d<depth>``).

    :param name: the player's name.
    :param game: the game it is to play: a registered game it does not play is refused.
    :raises UnknownBotError: no such player, or it does not play ``game``.
    """
    from .baselines import bot_name

    entry = BOTS.get(bot_name(name))
    if entry is None:
        raise UnknownBotError(f"Unknown baseline {name!r}; choose from {', '.join(BOTS)}.")
    factory, plays = entry
    if plays is not None and game in GAMES and game != plays:
        raise UnknownBotError(f"Baseline {name!r} plays {plays} only, but the game is {game}.")
    return factory()
