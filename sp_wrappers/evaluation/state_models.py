"""State models of PettingZoo games: the rules as pure functions, so a game tree can be walked.

A PettingZoo env is a mutable object that plays one game at a time; an exact evaluation
(:func:`~sp_wrappers.evaluation.exploitability.exploitability`) needs every position, reached any
way. A :class:`StateModel` gives the same rules on hashable states, with the observation and the
action mask that the env itself would give each player there (checked against the env on live
games by the tests). :class:`TicTacToeModel` models ``tictactoe_v3``; :func:`state_model_for`
finds the model of a game, and a user can hand ``exploitability`` a model of their own.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["StateModel", "TicTacToeModel", "state_model_for"]


@runtime_checkable
class StateModel(Protocol):
    """The rules of a two-player, turn-based, perfect-information game on hashable states.

    ``players`` are the PettingZoo agent names, in seat order; ``returns`` gives each seat's
    final return (in that order) at a terminal state and ``None`` elsewhere; ``observation``
    is exactly what the env's ``observe(players[seat])`` returns at that state.
    """

    name: str
    players: tuple[str, str]
    n_actions: int

    def initial_state(self) -> Hashable: ...

    def to_move(self, state: Hashable) -> int: ...

    def legal_actions(self, state: Hashable) -> Sequence[int]: ...

    def apply(self, state: Hashable, action: int) -> Hashable: ...

    def returns(self, state: Hashable) -> tuple[float, float] | None: ...

    def observation(self, state: Hashable, seat: int) -> Any: ...

    def describe(self, state: Hashable) -> str: ...


_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class TicTacToeModel:
    """``tictactoe_v3`` as a state model. A state is PettingZoo's ``board.squares`` as a tuple
    (0 empty, 1 ``player_1``'s mark, 2 ``player_2``'s); ``player_1`` moves first; a win is worth
    +1 to the winner and -1 to the loser, a draw 0. :meth:`describe` draws the board as the
    observation lays it out (row ``r``, column ``c`` is action ``3 * r + c``), X for ``player_1``.

    >>> model = TicTacToeModel()
    >>> state = model.apply(model.apply(model.initial_state(), 4), 0)
    >>> model.to_move(state), list(model.legal_actions(state))[:3]
    (0, [1, 2, 3])
    >>> model.observation(state, 0)["observation"][1, 1].tolist()   # the centre is ours
    [1, 0]
    >>> print(model.describe(state))
    O . .
    . X .
    . . .
    """

    name = "tictactoe_v3"
    players = ("player_1", "player_2")
    n_actions = 9

    def initial_state(self) -> tuple[int, ...]:
        return (0,) * 9

    def to_move(self, state: tuple[int, ...]) -> int:
        return sum(1 for s in state if s) % 2

    def legal_actions(self, state: tuple[int, ...]) -> list[int]:
        return [i for i, s in enumerate(state) if s == 0]

    def apply(self, state: tuple[int, ...], action: int) -> tuple[int, ...]:
        if state[action]:
            raise ValueError(f"tictactoe_v3: square {action} of {state} is taken.")
        board = list(state)
        board[action] = self.to_move(state) + 1
        return tuple(board)

    def returns(self, state: tuple[int, ...]) -> tuple[float, float] | None:
        for a, b, c in _LINES:
            if state[a] and state[a] == state[b] == state[c]:
                return (1.0, -1.0) if state[a] == 1 else (-1.0, 1.0)
        if all(state):
            return (0.0, 0.0)
        return None

    def observation(self, state: tuple[int, ...], seat: int) -> dict[str, np.ndarray]:
        board = np.array(state).reshape(3, 3)
        observation = np.empty((3, 3, 2), dtype=np.int8)
        observation[:, :, 0] = np.equal(board, seat + 1)
        observation[:, :, 1] = np.equal(board, 2 - seat)
        mask = np.zeros(9, dtype=np.int8)
        if self.returns(state) is None and self.to_move(state) == seat:
            mask[self.legal_actions(state)] = 1
        return {"observation": observation, "action_mask": mask}

    def describe(self, state: tuple[int, ...]) -> str:
        marks = [".XO"[s] for s in state]
        return "\n".join(" ".join(marks[r * 3 : r * 3 + 3]) for r in range(3))


_MODELS = {"tictactoe_v3": TicTacToeModel}


def state_model_for(game: Any) -> StateModel | None:
    """The state model of a PettingZoo game (by its ``metadata["name"]``), or ``None``."""
    name = (getattr(game, "metadata", None) or {}).get("name")
    model = _MODELS.get(name) if isinstance(name, str) else None
    return None if model is None else model()
