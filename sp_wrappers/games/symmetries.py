"""Symmetries of board games: the same position seen mirrored or rotated, actions mapped to match.

Built-in symmetries for tic-tac-toe, Connect Four and Go (the dihedral group of a square board,
the mirror of a rectangular one), and checks that a symmetry fits a game.

A symmetry is a view of the game: an observation function (the real observation -> what the
learner sees) and a permutation of the actions (``permutation[real] == viewed``, its inverse
``inverse_permutation[viewed] == real``). Masks follow the actions: the viewed action ``v`` is
legal exactly when the real action ``inverse_permutation[v]`` is. The game itself never changes;
an env that plays an episode in a view maps what goes out to the learner and what comes back::

    symmetry = symmetries[rng.integers(len(symmetries))]  # once per episode, at reset
    obs_out = symmetry.observation(game_obs)              # reset, step, terminal_observation
    mask_out = symmetry.mask(game_mask)                   # action_masks()
    game_action = symmetry.action_to_game(learner_action) # step(), before the game sees it

Every learner then trains on rotated and mirrored positions (AlphaZero's data augmentation)
without any change to SB3. Built-ins: the 8 symmetries of the square for ``tictactoe_v3`` and
``go_v5`` (any board size; the pass action stays where it is), identity and the left-right mirror
for ``connect_four_v3``. :func:`check_symmetry` plays the real game to refuse a wrong one.

>>> symmetries = symmetries_for("connect_four_v3")
>>> [s.name for s in symmetries]
['identity', 'flip_lr']
>>> mirror = symmetries[1]
>>> mirror.action_to_view(0), mirror.action_to_game(6)
(6, 0)
>>> mirror.mask(np.array([1, 1, 1, 1, 1, 1, 0])).tolist()   # column 6 full: column 0 in the view
[0, 1, 1, 1, 1, 1, 1]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.seats import as_aec_env

__all__ = [
    "Symmetry",
    "board_symmetries",
    "symmetries_for",
    "check_symmetry",
    "check_symmetries",
    "DIHEDRAL_NAMES",
]

ObservationFn = Callable[[np.ndarray], np.ndarray]

_ROWS, _COLUMNS = -3, -2  # board axes of channels-last planes (also of a batch of them)


def _identity(x: np.ndarray) -> np.ndarray:
    return x


def _antitranspose(x: np.ndarray) -> np.ndarray:
    return np.rot90(np.swapaxes(x, _ROWS, _COLUMNS), 2, axes=(_ROWS, _COLUMNS))


# Module-level functions and partials, not lambdas: symmetries travel pickled to env workers.
_ROT = [functools.partial(np.rot90, k=k, axes=(_ROWS, _COLUMNS)) for k in range(4)]
_FLIP_LR = functools.partial(np.flip, axis=_COLUMNS)
_FLIP_UD = functools.partial(np.flip, axis=_ROWS)
_TRANSPOSE = functools.partial(np.swapaxes, axis1=_ROWS, axis2=_COLUMNS)
# name -> (view of the planes, its inverse, whether the board must be square)
_DIHEDRAL: dict[str, tuple[ObservationFn, ObservationFn, bool]] = {
    "identity": (_identity, _identity, False),
    "rot90": (_ROT[1], _ROT[3], True),
    "rot180": (_ROT[2], _ROT[2], False),
    "rot270": (_ROT[3], _ROT[1], True),
    "flip_lr": (_FLIP_LR, _FLIP_LR, False),
    "flip_ud": (_FLIP_UD, _FLIP_UD, False),
    "transpose": (_TRANSPOSE, _TRANSPOSE, True),
    "antitranspose": (_antitranspose, _antitranspose, True),
}
#: The 8 symmetries of the square, as :func:`board_symmetries` names them (rotations
#: anticlockwise, as ``np.rot90`` turns the board's rows and columns).
DIHEDRAL_NAMES = tuple(_DIHEDRAL)


def _as_permutation(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"Symmetry {name!r}: action_permutation must be a 1-D array of integers (entry "
            f"a = the viewed action of real action a), got {array.dtype} of shape {array.shape}."
        )
    if not np.array_equal(np.sort(array), np.arange(len(array))):
        missing = sorted(set(range(len(array))) - set(array.tolist()))[:5]
        raise ValueError(
            f"Symmetry {name!r}: action_permutation is not a bijection of the actions "
            f"0..{len(array) - 1} (never mapped to: {missing}); every viewed action must come "
            "from exactly one real action."
        )
    array = array.astype(np.int64)
    array.setflags(write=False)
    return array


class Symmetry:
    """One symmetric view of a game: observations, masks and actions mapped consistently.

    :param name: names the view in messages and ``info`` (unique among an env's symmetries).
    :param observation_fn: the real observation -> the viewed one (same shape and dtype). It is
        given the ``"observation"`` array (one board, or a batch whose last axes are a board).
    :param action_permutation: ``permutation[a]`` is the viewed action of real action ``a``
        (a bijection of ``0..n_actions-1``).
    :param inverse_observation_fn: the viewed observation -> the real one; needed for
        :meth:`inverse` and checked by :func:`check_symmetry` (``None``: not known).

    Envs with worker processes pickle their symmetries: give module-level functions (or
    ``functools.partial`` of them) rather than lambdas, as the built-ins do.

    >>> flip = Symmetry("flip", lambda x: x[..., ::-1], [2, 1, 0], lambda x: x[..., ::-1])
    >>> flip.observation(np.array([1, 0, 0])).tolist(), flip.action_to_game(0)
    ([0, 0, 1], 2)
    >>> flip.observation({"observation": np.array([5, 6, 7]), "action_mask": np.array([1, 0, 0])})
    {'observation': array([7, 6, 5]), 'action_mask': array([0, 0, 1])}
    >>> Symmetry("broken", lambda x: x, [0, 0, 1])
    Traceback (most recent call last):
    ...
    ValueError: Symmetry 'broken': action_permutation is not a bijection of the actions 0..2 \
(never mapped to: [2]); every viewed action must come from exactly one real action.
    """

    def __init__(
        self,
        name: str,
        observation_fn: ObservationFn,
        action_permutation: Sequence[int] | np.ndarray,
        inverse_observation_fn: ObservationFn | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"A Symmetry needs a non-empty name, got {name!r}.")
        if not callable(observation_fn):
            raise TypeError(f"Symmetry {name!r}: observation_fn must be callable.")
        self.name = name
        self.observation_fn = observation_fn
        self.inverse_observation_fn = inverse_observation_fn
        self.permutation = _as_permutation(action_permutation, name)
        inverse = np.empty_like(self.permutation)
        inverse[self.permutation] = np.arange(len(self.permutation))
        inverse.setflags(write=False)
        self.inverse_permutation = inverse

    @property
    def n_actions(self) -> int:
        return len(self.permutation)

    def observation(self, observation: Any) -> Any:
        """The viewed observation: an array, or PettingZoo's dict with its ``"observation"``
        and ``"action_mask"`` mapped (other keys unchanged). A fresh, contiguous array."""
        if isinstance(observation, dict):
            viewed = dict(observation)
            if "observation" in viewed:
                viewed["observation"] = self.observation(viewed["observation"])
            if "action_mask" in viewed:
                viewed["action_mask"] = self.mask(viewed["action_mask"])
            return viewed
        return np.ascontiguousarray(self.observation_fn(np.asarray(observation)))

    def mask(self, mask: np.ndarray) -> np.ndarray:
        """The viewed mask (or a batch of masks, actions on the last axis)."""
        return np.asarray(mask)[..., self.inverse_permutation]

    def action_to_view(self, action: Any) -> Any:
        """The viewed action of a real action (an int, or an array of them)."""
        mapped = self.permutation[np.asarray(action)]
        return int(mapped) if mapped.ndim == 0 else mapped

    def action_to_game(self, action: Any) -> Any:
        """The real action of a viewed action: what the game must be given."""
        mapped = self.inverse_permutation[np.asarray(action)]
        return int(mapped) if mapped.ndim == 0 else mapped

    def inverse(self) -> Symmetry:
        """The view that undoes this one (needs ``inverse_observation_fn``)."""
        if self.inverse_observation_fn is None:
            raise ValueError(
                f"Symmetry {self.name!r} has no inverse_observation_fn; pass one to build its "
                "inverse."
            )
        return Symmetry(
            f"inverse({self.name})",
            self.inverse_observation_fn,
            self.inverse_permutation,
            self.observation_fn,
        )

    def __repr__(self) -> str:
        return f"Symmetry({self.name!r}, n_actions={self.n_actions})"


def board_symmetries(
    rows: int,
    columns: int,
    actions: str = "cells",
    fixed_actions: int = 0,
    names: Sequence[str] | None = None,
) -> list[Symmetry]:
    """Symmetries of a board game on channels-last planes ``(rows, columns, channels)``.

    :param rows: board rows (the observation's first axis).
    :param columns: board columns (its second axis).
    :param actions: ``"cells"``: action ``r * columns + c`` plays on cell ``(r, c)`` (tic-tac-toe,
        Go); ``"columns"``: action ``c`` plays in column ``c`` (Connect Four).
    :param fixed_actions: actions after the board's that every view leaves in place (Go's pass).
    :param names: which of :data:`DIHEDRAL_NAMES` (default: all 8 on a square board, else
        ``identity``, ``flip_lr``, ``flip_ud`` and ``rot180``). Whether the game really has them is
        for :func:`check_symmetry` to say.

    >>> [s.name for s in board_symmetries(3, 3)]  # doctest: +NORMALIZE_WHITESPACE
    ['identity', 'rot90', 'rot180', 'rot270', 'flip_lr', 'flip_ud', 'transpose', 'antitranspose']
    >>> go = board_symmetries(2, 2, fixed_actions=1, names=["rot90"])[0]
    >>> go.permutation.tolist()   # cells 0 1 / 2 3 turn anticlockwise; pass (4) stays
    [2, 0, 3, 1, 4]
    """
    if actions not in ("cells", "columns"):
        raise ValueError(f"actions must be 'cells' or 'columns', got {actions!r}.")
    square = rows == columns
    if names is None:
        names = [n for n, (_, _, needs_square) in _DIHEDRAL.items() if square or not needs_square]
    unknown = [n for n in names if n not in _DIHEDRAL]
    if unknown:
        raise ValueError(f"Unknown symmetries {unknown}; choose from {list(DIHEDRAL_NAMES)}.")
    # grid[r, c, 0]: the action that plays on cell (r, c) (row-major, as PettingZoo numbers
    # them) or in column c
    grid = np.arange(rows * columns) if actions == "cells" else np.tile(np.arange(columns), rows)
    grid = grid.reshape(rows, columns, 1)
    board_actions = rows * columns if actions == "cells" else columns
    result = []
    for name in names:
        view, undo, needs_square = _DIHEDRAL[name]
        if needs_square and not square:
            raise ValueError(
                f"The symmetry {name!r} needs a square board; this one is {rows}x{columns}."
            )
        viewed = view(grid)[..., 0]  # viewed[r, c]: the real action played there
        if actions == "columns":
            if not np.all(viewed == viewed[:1]):
                raise ValueError(
                    f"The symmetry {name!r} does not map columns to columns; with "
                    "actions='columns' use names such as ['identity', 'flip_lr']."
                )
            inverse = viewed[0]
        else:
            inverse = viewed.ravel()
        inverse = np.concatenate([inverse, board_actions + np.arange(fixed_actions)])
        permutation = np.empty_like(inverse)
        permutation[inverse] = np.arange(len(inverse))
        result.append(Symmetry(name, view, permutation, undo))
    return result


def _game_name(game: Any) -> tuple[str, int | None]:
    """The game's short name (``go_v5``) and, for an env, its board size."""
    if isinstance(game, str):
        tail = game.replace(":", ".").split(".")
        name = tail[-2] if tail[-1] == "env" and len(tail) > 1 else tail[-1]
        return name, None
    game = as_aec_env(game)
    name = str((getattr(game, "metadata", None) or {}).get("name", type(game).__name__))
    space = game.observation_space(game.possible_agents[0])
    space = space["observation"] if hasattr(space, "spaces") else space
    return name, int(space.shape[0])


def symmetries_for(game: Any, game_kwargs: dict[str, Any] | None = None) -> list[Symmetry]:
    """The built-in symmetries of a game, the identity first.

    :param game: a name (``"connect_four_v3"``, or an import path such as
        ``"pettingzoo.classic.go_v5:env"``) or a PettingZoo env of the game.
    :param game_kwargs: the game's keyword arguments (Go's ``board_size``, 19 by default; an env
        gives its own size).
    :raises ValueError: for a game without built-ins, naming the games that have them.

    >>> len(symmetries_for("tictactoe_v3")), len(symmetries_for("go_v5", {"board_size": 9}))
    (8, 8)
    >>> symmetries_for("go_v5", {"board_size": 9})[1].action_to_view(81)   # pass stays pass
    81
    """
    name, size = _game_name(game)
    if name == "tictactoe_v3":
        return board_symmetries(3, 3)
    if name == "connect_four_v3":
        return board_symmetries(6, 7, actions="columns", names=["identity", "flip_lr"])
    if name == "go_v5":
        n = size if size is not None else int((game_kwargs or {}).get("board_size", 19))
        return board_symmetries(n, n, fixed_actions=1)
    raise ValueError(
        f"No built-in symmetries for {name!r}; built-ins exist for tictactoe_v3, connect_four_v3 "
        "and go_v5. Write your own Symmetry (or board_symmetries(...)) and test it with "
        "check_symmetry(env_fn, symmetry)."
    )


def _position(game: Any, agent: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``agent``'s board and boolean mask (from the observation dict or ``info``; or ``None``)."""
    observation = game.observe(agent)
    mask = (game.infos.get(agent) or {}).get("action_mask")
    if isinstance(observation, dict) and "observation" in observation:
        mask = observation.get("action_mask", mask)
        observation = observation["observation"]
    return np.asarray(observation), None if mask is None else np.asarray(mask).astype(bool)


def _compare(symmetry: Symmetry, real: Any, mapped: Any) -> str | None:
    """What differs between the two games' positions (``mapped`` played the viewed moves)."""
    if sorted(real.agents) != sorted(mapped.agents):
        return f"agents {real.agents} in the real game, {mapped.agents} in the mapped one"
    for agent in real.agents:
        (board, mask), (mapped_board, mapped_mask) = (
            _position(real, agent),
            _position(mapped, agent),
        )
        if mask is not None and mapped_mask is not None:
            lost = np.flatnonzero(mask & ~mapped_mask[symmetry.permutation])
            if lost.size:
                a = int(lost[0])
                return (
                    f"{agent}'s legal action {a} maps to {symmetry.permutation[a]}, which is "
                    "illegal in the mapped position"
                )
            if not np.array_equal(symmetry.mask(mask), mapped_mask):
                return f"{agent}'s mapped mask differs from the mask of the mapped position"
        viewed = symmetry.observation(board)
        if viewed.shape != board.shape or viewed.dtype != board.dtype:
            return (
                f"the viewed observation has shape {viewed.shape} and dtype {viewed.dtype}, the "
                f"game's {board.shape} and {board.dtype}"
            )
        if not np.array_equal(viewed, mapped_board):
            return (
                f"{agent}'s mapped observation differs from its observation of the mapped position"
            )
        inverse = symmetry.inverse_observation_fn
        if inverse is not None and not np.array_equal(inverse(viewed), board):
            return f"the inverse view does not give {agent}'s observation back"
        if not np.isclose(float(real.rewards[agent]), float(mapped.rewards[agent])):
            return f"{agent}'s reward is {real.rewards[agent]}, {mapped.rewards[agent]} mapped"
        for flags in ("terminations", "truncations"):
            if bool(getattr(real, flags)[agent]) != bool(getattr(mapped, flags)[agent]):
                return f"{agent}'s {flags[:-1]} differs"
    return None


def _moves(moves: list[int]) -> str:
    if len(moves) <= 12:
        return f"the moves {moves}"
    return f"{len(moves)} moves, the last ones {moves[-10:]}"


def _fixed_start(game: Any) -> Any:
    """``game`` with its random openings turned off, so that a seeded reset of two copies gives
    the same start: each :class:`~sp_wrappers.games.wrappers.RandomOpenings` layer of a fresh copy
    built for the check plays none (the openings are moves of the game, checked as any other)."""
    from .wrappers import RandomOpenings  # imports PettingZoo, as the games the check plays do

    layer, seen = game, 0
    while layer is not None and seen < 64:
        if isinstance(layer, RandomOpenings):
            layer.probability = 0.0
        layer, seen = getattr(layer, "env", getattr(layer, "aec_env", None)), seen + 1
    return game


def _check_on(real: Any, mapped: Any, symmetry: Symmetry, n_positions: int, seed: int) -> Symmetry:
    """:func:`check_symmetry` on two games already built (reset here once per random game)."""
    game_name = (getattr(real, "metadata", None) or {}).get("name", "the game")
    rng = np.random.default_rng(seed)
    position = game_index = 0
    while position < n_positions:
        real.reset(seed=seed + game_index)
        mapped.reset(seed=seed + game_index)
        agent = real.agent_selection
        n_actions = getattr(real.action_space(agent), "n", None)
        if n_actions != symmetry.n_actions:
            raise ValueError(
                f"Symmetry {symmetry.name!r} permutes {symmetry.n_actions} actions; "
                f"{game_name}'s seat {agent!r} has the action space "
                f"{real.action_space(agent)}. Build it for this game's actions."
            )
        moves: list[int] = []
        while position < n_positions:
            problem = _compare(symmetry, real, mapped)
            if problem is not None:
                raise ValueError(
                    f"Symmetry {symmetry.name!r} disagrees with {game_name} at position "
                    f"{position} (game {game_index}, after {_moves(moves)}): {problem}. "
                    "Check that its observation function and its action permutation "
                    "describe the same transformation, or leave it out of symmetries=."
                )
            position += 1
            agent = real.agent_selection
            if not real.agents or real.terminations[agent] or real.truncations[agent]:
                break
            _, mask = _position(real, agent)
            legal = np.flatnonzero(mask) if mask is not None else np.arange(n_actions)
            action = int(rng.choice(legal))
            real.step(action)
            mapped.step(symmetry.action_to_view(action))
            moves.append(action)
        game_index += 1
    return symmetry


def _checked_on_two_copies(
    env_fn: Callable[[], Any], symmetries: Sequence[Symmetry], n_positions: int, seed: int
) -> None:
    """Build the real and the mapped game once each and check every symmetry on them."""
    real = _fixed_start(as_aec_env(env_fn()))
    try:
        mapped = _fixed_start(as_aec_env(env_fn()))
        try:
            for symmetry in symmetries:
                _check_on(real, mapped, symmetry, n_positions, seed)
        finally:
            mapped.close()
    finally:
        real.close()


def check_symmetry(
    env_fn: Callable[[], Any], symmetry: Symmetry, n_positions: int = 200, seed: int = 0
) -> Symmetry:
    """Refuse a symmetry that the game does not have, by playing it.

    Random games are played twice side by side: the real game with random legal moves ``a``,
    and a second game, reset with the same seed, with the viewed moves
    ``symmetry.action_to_view(a)``. For a true symmetry the second game is the first one seen in
    the view, so at every position (the start included, until ``n_positions`` positions) every
    seat's viewed observation must equal its observation of the second game, every legal action
    must map to a legal one, the viewed mask must equal the second game's mask, rewards and
    terminations must agree, and the inverse view (when given) must give the observation back.
    This needs a deterministic game whose start is symmetric, as board games are: a game wrapped
    in :class:`~sp_wrappers.games.wrappers.RandomOpenings` is checked from its fixed start (its
    random openings are moves like the others, and the random games play them). Each of the two
    games is built once and reset for every random game.

    :param env_fn: builds the PettingZoo game (AEC or Parallel).
    :param symmetry: the view to check.
    :param n_positions: positions to compare, over as many games as that takes.
    :param seed: seeds the games' resets and the random moves.
    :return: ``symmetry``, unchanged.
    :raises ValueError: naming the symmetry, the first position where it fails and what failed.

    >>> from pettingzoo.classic import connect_four_v3
    >>> flip_ud = board_symmetries(6, 7, actions="columns", names=["flip_ud"])[0]
    >>> check_symmetry(connect_four_v3.env, flip_ud)
    Traceback (most recent call last):
    ...
    ValueError: Symmetry 'flip_ud' disagrees with connect_four_v3 at position 1 (game 0, after \
the moves [...]): player_0's mapped observation differs from its observation of the mapped \
position. Check that its observation function and its action permutation describe the same \
transformation, or leave it out of symmetries=.
    """
    if n_positions < 1:
        raise ValueError(f"n_positions must be >= 1, got {n_positions}.")
    _checked_on_two_copies(env_fn, [symmetry], n_positions, seed)
    return symmetry


def check_symmetries(
    env_fn: Callable[[], Any],
    symmetries: Sequence[Symmetry],
    n_positions: int = 200,
    seed: int = 0,
) -> list[Symmetry]:
    """:func:`check_symmetry` on each symmetry, and that their names are unique; what an env
    given ``symmetries=`` calls at construction. The game is built twice in all (the real and
    the mapped copy), however many symmetries there are.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> len(check_symmetries(tictactoe_v3.env, symmetries_for("tictactoe_v3"), n_positions=20))
    8
    """
    symmetries = list(symmetries)
    if not symmetries:
        raise ValueError("symmetries is empty; pass None to play every episode unmapped.")
    wrong = [s for s in symmetries if not isinstance(s, Symmetry)]
    if wrong:
        raise TypeError(f"symmetries holds {wrong[0]!r}, not a Symmetry.")
    names = [s.name for s in symmetries]
    doubles = sorted({n for n in names if names.count(n) > 1})
    if doubles:
        raise ValueError(f"Symmetry names must be unique, {doubles} appear twice; rename them.")
    if n_positions < 1:
        raise ValueError(f"n_positions must be >= 1, got {n_positions}.")
    _checked_on_two_copies(env_fn, symmetries, n_positions, seed)
    return symmetries
