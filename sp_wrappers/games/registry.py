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
    "PETTINGZOO_EXTRAS",
    "OPENSPIEL_PREFIX",
    "OPENSPIEL_CONSTRUCTORS",
    "LIST_COMMAND",
    "pettingzoo_games",
    "openspiel_games",
    "game_import_path",
    "same_game",
    "game_names",
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


#: How to install what each PettingZoo family's environments need (the ``sisl`` games need
#: Box2D and pymunk, which no extra of this package installs).
PETTINGZOO_EXTRAS: dict[str, str] = {
    "classic": 'pip install "sp-wrappers[games]"',
    "atari": 'pip install "sp-wrappers[games]"',
    "butterfly": 'pip install "sp-wrappers[butterfly]"',
    "sisl": 'pip install "pettingzoo[sisl]"',
}
#: The prefix that names an OpenSpiel game whatever other game has its name
#: (``openspiel:kuhn_poker``); OpenSpiel's own names work without it.
OPENSPIEL_PREFIX = "openspiel:"
#: OpenSpiel games with a constructor of their own (the observation each needs,
#: :mod:`sp_wrappers.games.openspiel_games`); every other OpenSpiel name is
#: :func:`~sp_wrappers.games.adapters.openspiel_env` with Shimmy's observation.
OPENSPIEL_CONSTRUCTORS: dict[str, str] = {
    "kuhn_poker": "sp_wrappers.games.openspiel_games:kuhn_poker",
    "leduc_poker": "sp_wrappers.games.openspiel_games:leduc_poker",
}
#: Where the whole lists of game names are printed (the error of an unknown name points here).
LIST_COMMAND = "sp-wrappers games"
_OPENSPIEL_EXAMPLES = ("kuhn_poker", "leduc_poker", "liars_dice")


@functools.cache
def pettingzoo_games() -> dict[str, str]:
    """Every PettingZoo environment by its own name (``chess_v6``), with the ``module:function``
    that builds it: the ``<family>/<name>_v<N>`` modules that ``pettingzoo.utils.all_modules``
    lists, found as files (that table imports every environment, and fails without every
    extra; this imports none, not even PettingZoo).

    >>> pettingzoo_games()["chess_v6"]
    'pettingzoo.classic.chess_v6:env'
    """
    import importlib.util
    import re

    spec = importlib.util.find_spec("pettingzoo")
    found: dict[str, str] = {}
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        for family in PETTINGZOO_EXTRAS:
            try:
                files = os.listdir(os.path.join(root, family))
            except OSError:
                continue
            for file in files:
                match = re.fullmatch(r"([a-z0-9_]+_v[0-9]+)\.py", file)
                if match:
                    found[match[1]] = f"pettingzoo.{family}.{match[1]}:env"
    return dict(sorted(found.items()))


@functools.cache
def openspiel_games() -> tuple[str, ...]:
    """OpenSpiel's game names (``pyspiel.registered_names()``, its Python games registered
    first, so that the list is the same whatever was imported before); empty without OpenSpiel.

    >>> "liars_dice" in openspiel_games() and "python_kuhn_poker" in openspiel_games()
    True
    """
    try:
        import pyspiel
    except ImportError:
        return ()
    try:
        import open_spiel.python.games  # noqa: F401  (registers the python_* games)
    except ImportError:  # a build without them: the C++ games alone
        pass
    return tuple(sorted(pyspiel.registered_names()))


def game_import_path(name: str) -> str | None:
    """The ``module:function`` that a PettingZoo or OpenSpiel game name stands for, where one
    does (recipes tuned for an import path serve the short name too), else ``None``.

    >>> game_import_path("go_v5"), game_import_path("kuhn_poker")
    ('pettingzoo.classic.go_v5:env', 'sp_wrappers.games.openspiel_games:kuhn_poker')
    """
    if name in GAMES or ":" in name and not name.startswith(OPENSPIEL_PREFIX):
        return None
    bare = name.removeprefix(OPENSPIEL_PREFIX)
    if bare == name and name in pettingzoo_games():
        return pettingzoo_games()[name]
    return OPENSPIEL_CONSTRUCTORS.get(bare)


def same_game(name: str) -> tuple[str, ...]:
    """``name`` and the import path it stands for (:func:`game_import_path`), to look a game
    up in a table keyed by either.

    >>> same_game("kuhn_poker")
    ('kuhn_poker', 'sp_wrappers.games.openspiel_games:kuhn_poker')
    """
    path = game_import_path(name)
    return (name,) if path is None else (name, path)


def game_names() -> dict[str, list[str]]:
    """Every game name the commands take, by source: ``"registered"``, ``"pettingzoo"`` and
    ``"openspiel"`` (empty without OpenSpiel); ``sp-wrappers games`` prints them.

    >>> names = game_names()
    >>> "tictactoe_v3" in names["registered"], "chess_v6" in names["pettingzoo"]
    (True, True)
    """
    return {
        "registered": list(GAMES),
        "pettingzoo": list(pettingzoo_games()),
        "openspiel": list(openspiel_games()),
    }


def _unknown(name: str) -> UnknownGameError:
    import difflib

    pettingzoo, openspiel = list(pettingzoo_games()), list(openspiel_games())
    typed = [n if not _clashes(n) else OPENSPIEL_PREFIX + n for n in openspiel]
    candidates = [*GAMES, *pettingzoo, *typed]
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    spiel = (
        f"OpenSpiel's {len(openspiel)} games by their names ({', '.join(_OPENSPIEL_EXAMPLES)}, "
        f"...; {OPENSPIEL_PREFIX}NAME where a name clashes)"
        if openspiel
        else f"OpenSpiel's games ({', '.join(_OPENSPIEL_EXAMPLES)}, ...: pip install "
        '"sp-wrappers[openspiel]")'
    )
    return UnknownGameError(
        f"Unknown game {name!r}{hint}; use a registered game ({', '.join(GAMES)}), one of "
        f"PettingZoo's {len(pettingzoo)} environments by its name (chess_v6, go_v5, ...), "
        f"{spiel}, or an import path 'module:function' to a PettingZoo env constructor; "
        f"`{LIST_COMMAND}` lists every name."
    )


def _missing(name: str, error: BaseException, install: str) -> MissingGameError:
    what = getattr(error, "name", None) or str(error).splitlines()[0]
    return MissingGameError(f"The game {name} needs {what}, which is not installed: {install}.")


def _pettingzoo_constructor(name: str, path: str) -> Callable[..., Any]:
    module_name, _, attribute = path.partition(":")
    install = PETTINGZOO_EXTRAS.get(module_name.split(".")[1], 'pip install "pettingzoo[all]"')
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:  # the family's extra (Box2D, chess, pymunk...) is missing
        if getattr(error, "name", None) == "pyspiel":
            install = 'pip install "sp-wrappers[openspiel]"'
        raise _missing(name, error, install) from None
    return getattr(module, attribute)


def _clashes(name: str) -> list[str]:
    """The other games an OpenSpiel name could mean (``chess``: PettingZoo's ``chess_v6``)."""
    others = dict.fromkeys([*GAMES, *pettingzoo_games()])
    return [o for o in others if o.rpartition("_v")[0].replace("_", "") == name.replace("_", "")]


def _openspiel_constructor(name: str) -> Callable[..., Any]:
    try:
        import pyspiel  # noqa: F401
        import shimmy  # noqa: F401 - the adapter
    except ImportError as error:
        raise _missing(name, error, 'pip install "sp-wrappers[openspiel]"') from None
    if name in OPENSPIEL_CONSTRUCTORS:
        return _import_constructor(OPENSPIEL_CONSTRUCTORS[name])
    if name not in openspiel_games():
        raise _unknown(OPENSPIEL_PREFIX + name)
    from .adapters import openspiel_env

    return functools.partial(openspiel_env, name)


def _import_constructor(path: str) -> Callable[..., Any]:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise _unknown(path)
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
    """The constructor of the game called ``name``: a registered game, a PettingZoo
    environment by its own name (``chess_v6``), an OpenSpiel game by its OpenSpiel name
    (``kuhn_poker``, or ``openspiel:kuhn_poker`` whatever else has the name) or an import path
    ``module:function``.

    :raises UnknownGameError: no such game; the message names what is accepted.
    :raises MissingGameError: the game's package is missing; the message has the install line.

    >>> resolve_game("chess_v6").__module__
    'pettingzoo.classic.chess.chess'
    >>> resolve_game("chess")
    Traceback (most recent call last):
    ...
    sp_wrappers.games.errors.UnknownGameError: Game 'chess' is OpenSpiel's chess and also \
chess_v6: name the one you mean (chess_v6 or openspiel:chess).
    >>> resolve_game("chess_v9")
    Traceback (most recent call last):
    ...
    sp_wrappers.games.errors.UnknownGameError: Unknown game 'chess_v9' (did you mean chess_v6...
    """
    spec = GAMES.get(name)
    if spec is not None:
        return spec.factory
    if name.startswith(OPENSPIEL_PREFIX):
        return _openspiel_constructor(name.removeprefix(OPENSPIEL_PREFIX))
    if ":" in name:
        return _import_constructor(name)
    path = pettingzoo_games().get(name)
    if path is not None:
        return _pettingzoo_constructor(name, path)
    if name in OPENSPIEL_CONSTRUCTORS or name in _OPENSPIEL_EXAMPLES or name in openspiel_games():
        clashes = _clashes(name)
        if clashes:
            raise UnknownGameError(
                f"Game {name!r} is OpenSpiel's {name} and also {' and '.join(clashes)}: name "
                f"the one you mean ({', '.join(clashes)} or {OPENSPIEL_PREFIX}{name})."
            )
        return _openspiel_constructor(name)
    raise _unknown(name)


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
