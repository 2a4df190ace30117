"""The symmetric views of the self-play envs: what ``symmetries=`` accepts (checked against the
game), and the symmetry each episode is played in, with the mapping of what crosses between the
game and the learner.

:class:`~sp_wrappers.SelfPlayEnv` and :class:`~sp_wrappers.SelfPlayVecEnv` given
``symmetries=`` draw one symmetry per episode (per env copy) with the env's generator at reset,
then map everything the learner sees (the observation of ``reset`` and ``step``, the
``terminal_observation`` of the episode that ends, ``action_masks()``) into that view, and every
learner action back to the game's (before the illegal-action check). The game itself, its
opponents and their observations never change, so an episode played in a view is the same game
as the unmapped moves played on the real board: AlphaZero's augmentation by the board's
symmetries, for any on-policy learner, without a change to SB3.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.seats import as_aec_env
from ..games.symmetries import Symmetry, check_symmetries, symmetries_for

__all__ = ["resolve_symmetries", "EpisodeView", "SYMMETRY_CHECK_POSITIONS", "instance_factory"]

#: Positions of random games on which the envs check each symmetry at construction.
SYMMETRY_CHECK_POSITIONS = 50

_FORMS = (
    "symmetries= takes 'auto' (the game's built-in symmetries), a game name with built-ins "
    "('tictactoe_v3', 'connect_four_v3', 'go_v5'), or a list of sp_wrappers.games.symmetries."
    "Symmetry objects"
)


def _board_rows(game: Any) -> int | None:
    space = game.observation_space(game.possible_agents[0])
    space = space["observation"] if hasattr(space, "spaces") else space
    shape = getattr(space, "shape", None)
    return int(shape[0]) if shape else None


def resolve_symmetries(
    symmetries: Any,
    env_fn: Callable[[], Any],
    n_positions: int = SYMMETRY_CHECK_POSITIONS,
) -> list[Symmetry] | None:
    """The symmetries an env plays its episodes in, each checked against the game.

    :param symmetries: ``None`` (no views), ``"auto"`` (the built-ins of the game ``env_fn``
        builds, by its ``metadata["name"]``), a game name of
        :func:`~sp_wrappers.games.symmetries.symmetries_for` (for a game whose metadata names it
        otherwise; Go's board size comes from the game), or a sequence of
        :class:`~sp_wrappers.games.symmetries.Symmetry`.
    :param env_fn: builds the game (zero arguments); the check plays it.
    :param n_positions: positions of random games each symmetry is checked on
        (:func:`~sp_wrappers.games.symmetries.check_symmetry`).
    :return: the checked symmetries (``None`` for ``None``).
    :raises ValueError: for a symmetry the game does not have, naming it and the first position
        where it fails; for a game without built-ins.

    >>> from pettingzoo.classic import connect_four_v3
    >>> [s.name for s in resolve_symmetries("auto", connect_four_v3.env)]
    ['identity', 'flip_lr']
    """
    if symmetries is None:
        return None
    if isinstance(symmetries, str):
        game = as_aec_env(env_fn())
        try:
            if symmetries == "auto":
                symmetries = symmetries_for(game)
            else:
                rows = _board_rows(game)
                symmetries = symmetries_for(
                    symmetries, {} if rows is None else {"board_size": rows}
                )
        finally:
            game.close()
    elif isinstance(symmetries, Symmetry):
        symmetries = [symmetries]
    elif not isinstance(symmetries, Sequence):
        raise TypeError(f"{_FORMS}; got {type(symmetries).__name__}.")
    return check_symmetries(env_fn, symmetries, n_positions=n_positions)


def instance_factory(game: Any) -> Callable[[], Any]:
    """A constructor of fresh copies of a game instance (for the check when an env was given a
    game rather than its constructor); an error that says what to pass when it cannot copy."""
    try:
        copy.deepcopy(game)
    except Exception as error:  # noqa: BLE001 - any failure means: ask for the constructor
        raise TypeError(
            f"symmetries= needs to build fresh games to check the symmetries, and this game "
            f"cannot be copied ({type(error).__name__}: {error}). Pass its constructor instead, "
            "e.g. SelfPlayEnv(connect_four_v3.env, symmetries='auto'), or env_fn=."
        ) from None
    return lambda: copy.deepcopy(game)


class EpisodeView:
    """The symmetry one env (or env copy) plays its current episode in.

    :param symmetries: the checked symmetries (:func:`resolve_symmetries`); ``None`` maps
        nothing. With one symmetry every episode is played in it (no random draw).

    >>> from sp_wrappers.games.symmetries import symmetries_for
    >>> view = EpisodeView(symmetries_for("connect_four_v3"))
    >>> names = {view.draw(np.random.default_rng(seed)).name for seed in range(20)}
    >>> sorted(names)
    ['flip_lr', 'identity']
    >>> view.current = view.symmetries[1]
    >>> view.action_to_game(0), view.mask(np.array([0, 1, 1, 1, 1, 1, 1])).tolist()
    (6, [1, 1, 1, 1, 1, 1, 0])
    """

    def __init__(self, symmetries: Sequence[Symmetry] | None) -> None:
        self.symmetries = None if symmetries is None else list(symmetries)
        self.current: Symmetry | None = (
            None if not self.symmetries or len(self.symmetries) > 1 else self.symmetries[0]
        )

    @property
    def active(self) -> bool:
        return self.symmetries is not None

    @property
    def name(self) -> str | None:
        """The current episode's symmetry (``None`` without symmetries)."""
        return None if self.current is None else self.current.name

    def draw(self, rng: np.random.Generator) -> Symmetry | None:
        """Draw the next episode's symmetry (uniformly; no draw when there is only one)."""
        if self.symmetries is not None and len(self.symmetries) > 1:
            self.current = self.symmetries[int(rng.integers(len(self.symmetries)))]
        return self.current

    def observation(self, observation: Any) -> Any:
        """What the learner sees of a game observation (``None`` stays ``None``)."""
        if self.current is None or observation is None:
            return observation
        return self.current.observation(observation)

    def mask(self, mask: np.ndarray | None) -> np.ndarray | None:
        """The learner's mask in the view."""
        if self.current is None or mask is None:
            return mask
        return self.current.mask(mask)

    def action_to_game(self, action: Any) -> Any:
        """The game's action for a learner action in the view."""
        if self.current is None:
            return action
        return self.current.action_to_game(action)

    def record(self, summary: dict[str, Any]) -> dict[str, Any]:
        """Add ``symmetry`` (the episode's view) to an ``info["selfplay"]`` summary."""
        if self.current is not None:
            summary["symmetry"] = self.current.name
        return summary
