"""Payoffs between policies of a two-player zero-sum game: exact where the game can be walked,
estimated from games (with their intervals) elsewhere.

A population of policies that each play both seats (PSRO's members) meets as a symmetric game:
``matrix[i, j]`` is what policy ``i`` wins per game against policy ``j``, averaged over the two
seats (so ``matrix[j, i] == -matrix[i, j]``).

- :class:`ExactPayoffs`: OpenSpiel games through
  :func:`~sp_wrappers.games.adapters.openspiel_env` and PettingZoo games with a
  :class:`~sp_wrappers.evaluation.state_models.StateModel` (built in for ``tictactoe_v3``). The
  game tree is walked once; each policy's probabilities are read at every decision point once
  (fed the observation the env gives, as :func:`~sp_wrappers.evaluation.exploitability.
  exploitability` does), and adding a policy walks the tree once per seat against every policy
  already there (the values of all pairs in one vectorised pass).
- :class:`SampledPayoffs`: any two-seat game, from ``games_per_pair`` games per pair through
  :func:`~sp_wrappers.evaluation.match.play_match`; :attr:`SampledPayoffs.half_width` holds each
  cell's 95% interval (normal approximation on the per-game returns).

>>> from sp_wrappers import RandomPolicy
>>> from sp_wrappers.games.adapters import openspiel_env
>>> payoffs = ExactPayoffs(openspiel_env("kuhn_poker"))
>>> payoffs.add(RandomPolicy()), payoffs.add(RandomPolicy())
(0, 1)
>>> payoffs.matrix.shape, float(abs(payoffs.matrix).max())   # two uniform players: even
((2, 2), 0.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .exploitability import GameNotWalkableError, exploitability_method
from .match import play_match
from .openspiel_policy import find_openspiel_adapter
from .policy_probabilities import action_probabilities, as_scored_policy
from .state_models import StateModel, state_model_for

__all__ = ["ExactPayoffs", "SampledPayoffs", "GameNotWalkableError"]


class _GameTree:
    """Every history of a two-player game, numbered parent before child: who moves (``-1``
    chance, ``-2`` terminal), the decision point's row in the policies' tables, the children with
    their chance probabilities, and seat 0's return at terminals."""

    def __init__(self) -> None:
        self.mover: list[int] = []
        self.row: list[int] = []
        self.children: list[list[tuple[int, int, float]]] = []  # (action, child, chance p)
        self.returns: list[float] = []
        self.order: list[int] | None = None  # children first; None: the reverse numbering

    def add(self, mover: int, row: int, seat0_return: float = 0.0) -> int:
        self.mover.append(mover)
        self.row.append(row)
        self.children.append([])
        self.returns.append(seat0_return)
        return len(self.mover) - 1

    def values(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Seat 0's expected return with ``first[k]`` in seat 0 and ``second[k]`` in seat 1 (each
        ``(K, rows, actions)``, or ``(1, rows, actions)`` broadcast): a ``(K,)`` array."""
        k = max(len(first), len(second))
        values = np.zeros((len(self.mover), k))
        order = range(len(self.mover) - 1, -1, -1) if self.order is None else self.order
        for node in order:
            mover = self.mover[node]
            if mover == -2:
                values[node] = self.returns[node]
                continue
            total = np.zeros(k)
            row = self.row[node]
            for action, child, p in self.children[node]:
                if mover == -1:
                    total += p * values[child]
                else:
                    total += (first if mover == 0 else second)[:, row, action] * values[child]
            values[node] = total
        return values[0]


_Points = tuple[list[list[Any]], list[list[int]], int]


def _openspiel_tree(adapter: Any) -> tuple[_GameTree, _Points]:
    """The tree of an OpenSpiel game, and each seat's decision points (information states: one
    state each) with their rows in the policies' tables."""
    game = adapter.openspiel_game
    tree = _GameTree()
    rows: dict[str, int] = {}
    points: list[list[Any]] = [[], []]
    point_rows: list[list[int]] = [[], []]

    def row_of(state: Any, player: int) -> int:
        key = state.information_state_string(player)
        if key not in rows:
            rows[key] = len(rows)
            points[player].append(state)
            point_rows[player].append(rows[key])
        return rows[key]

    root = game.new_initial_state()
    stack = [(root, -1, 0, 0.0)]  # (state, parent, action, chance probability)
    while stack:
        state, parent, action, p = stack.pop()
        if state.is_terminal():
            node = tree.add(-2, -1, float(state.returns()[0]))
        elif state.is_chance_node():
            node = tree.add(-1, -1)
            stack.extend((state.child(a), node, a, q) for a, q in state.chance_outcomes())
        else:
            player = state.current_player()
            node = tree.add(player, row_of(state, player))
            stack.extend((state.child(a), node, a, 0.0) for a in state.legal_actions())
        if parent >= 0:
            tree.children[parent].append((int(action), node, float(p)))
    return tree, (points, point_rows, len(rows))


class ExactPayoffs:
    """The exact payoff matrix of a growing population of policies in a walkable game.

    :param game: the PettingZoo game the policies play (an ``openspiel_env`` env, or a game with
        a built-in state model such as ``tictactoe_v3.env()``), or a :class:`StateModel`.
    :param deterministic: read each policy's most likely legal move (greedy play); ``None`` keeps
        an ``SB3Policy``'s own setting.
    :raises GameNotWalkableError: the game cannot be walked; the message names why.
    """

    def __init__(self, game: Any, deterministic: bool | None = None) -> None:
        self.method = exploitability_method(game)
        self.deterministic = deterministic
        self.matrix = np.zeros((0, 0))
        self._tables: list[np.ndarray] = []
        adapter = find_openspiel_adapter(game) if self.method == "openspiel" else None
        if adapter is not None:
            self.tree, (points, rows, self.n_rows) = _openspiel_tree(adapter)
            self.n_actions = adapter.openspiel_game.num_distinct_actions()
            self._observe = lambda state, seat: adapter.observation_of(state, seat)
            self._legal = lambda state, seat: state.legal_actions(seat)
        else:
            model = game if isinstance(game, StateModel) else state_model_for(game.unwrapped)
            self.tree, (points, rows, self.n_rows) = _model_tree(model)
            self.n_actions = model.n_actions
            self._observe = model.observation
            self._legal = lambda state, seat: model.legal_actions(state)
        self._points, self._rows = points, rows

    def _table(self, policy: Any) -> np.ndarray:
        """The policy's probabilities at every decision point: ``(rows, actions)``."""
        scored = as_scored_policy(policy, self.deterministic)
        table = np.zeros((self.n_rows, self.n_actions))
        for seat in (0, 1):
            states = self._points[seat]
            if not states:
                continue
            obs = np.stack([np.asarray(_plain(self._observe(s, seat))) for s in states])
            masks = np.zeros((len(states), self.n_actions), dtype=bool)
            for i, s in enumerate(states):
                masks[i, list(self._legal(s, seat))] = True
            table[self._rows[seat]] = action_probabilities(scored, obs, masks)
        return table

    def _values(self, table: np.ndarray, tables: list[np.ndarray]) -> np.ndarray:
        """What the policy of ``table`` wins per game against each of ``tables`` (seats
        averaged), in one walk per seat."""
        others = np.stack(tables)
        new = table[None]
        as_first = self.tree.values(new, others)  # the new policy in seat 0, each in seat 1
        as_second = self.tree.values(others, new)  # each in seat 0, the new policy in seat 1
        return (as_first - as_second) / 2.0

    def row(self, policy: Any) -> np.ndarray:
        """What ``policy`` wins per game against each policy there, exactly, without adding it
        (PSRO asks whether a best response improves on the mixture before it joins).

        >>> from sp_wrappers import RandomPolicy
        >>> from sp_wrappers.games.adapters import openspiel_env
        >>> payoffs = ExactPayoffs(openspiel_env("kuhn_poker"))
        >>> payoffs.add(RandomPolicy())
        0
        >>> payoffs.row(RandomPolicy()).tolist(), len(payoffs)
        ([0.0], 1)
        """
        if not self._tables:
            return np.zeros(0)
        return self._values(self._table(policy), self._tables)

    def add(self, policy: Any) -> int:
        """Add a policy; its payoffs against every policy already there (and itself) are
        computed now, in one walk per seat. Returns its index in :attr:`matrix`."""
        table = self._table(policy)
        row = self._values(table, [*self._tables, table])
        n = len(self._tables)
        matrix = np.zeros((n + 1, n + 1))
        matrix[:n, :n] = self.matrix
        matrix[n, :] = row
        matrix[:, n] = -row
        matrix[n, n] = 0.0
        self.matrix = matrix
        self._tables.append(table)
        return n

    def __len__(self) -> int:
        return len(self._tables)


def _model_tree(model: StateModel) -> tuple[_GameTree, _Points]:
    """The states of a perfect-information game (a DAG: transpositions share a node), and each
    seat's decision points (one state per row; seat 1's rows after seat 0's)."""
    tree = _GameTree()
    points: list[list[Any]] = [[], []]
    node_of: dict[Any, int] = {}
    stack = [model.initial_state()]
    while stack:
        state = stack.pop()
        if state in node_of:
            continue
        returns = model.returns(state)
        if returns is not None:
            node_of[state] = tree.add(-2, -1, float(returns[0]))
            continue
        seat = int(model.to_move(state))
        node_of[state] = tree.add(seat, len(points[seat]))
        points[seat].append(state)
        stack.extend(model.apply(state, a) for a in model.legal_actions(state))
    for state, node in node_of.items():
        if tree.mover[node] >= 0:
            for a in model.legal_actions(state):
                tree.children[node].append((int(a), node_of[model.apply(state, a)], 0.0))
    seat_rows = len(points[0])
    for node, mover in enumerate(tree.mover):
        if mover == 1:
            tree.row[node] += seat_rows
    tree.order = _children_first(tree)
    point_rows = [list(range(seat_rows)), [seat_rows + i for i in range(len(points[1]))]]
    return tree, (points, point_rows, seat_rows + len(points[1]))


def _children_first(tree: _GameTree) -> list[int]:
    """The nodes of a DAG in an order where every child comes before its parents."""
    order: list[int] = []
    done = [False] * len(tree.mover)
    stack = [(0, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if done[node]:
            continue
        done[node] = True
        stack.append((node, True))
        stack.extend((c, False) for _, c, _ in tree.children[node] if not done[c])
    return order


def _plain(observation: Any) -> Any:
    """The env's observation as the policy reads it (the ``observation`` of a dict with a mask)."""
    if isinstance(observation, dict) and "observation" in observation:
        return observation["observation"]
    return observation


class SampledPayoffs:
    """The payoff matrix of a growing population, estimated from games between every pair.

    :param env_fn: builds the PettingZoo game (two seats).
    :param games_per_pair: games per pair, seats alternating (at least 2).
    :param seed: game ``i`` of a pair is reset with ``seed + i``.
    """

    def __init__(self, env_fn: Callable[[], Any], games_per_pair: int = 100, seed: int = 0):
        if games_per_pair < 2:
            raise ValueError(f"games_per_pair must be at least 2, got {games_per_pair}.")
        self.env_fn = env_fn
        self.games_per_pair = int(games_per_pair)
        self.seed = int(seed)
        self.method = "sampled"
        self.matrix = np.zeros((0, 0))
        self.half_width = np.zeros((0, 0))
        self._policies: list[Any] = []

    def _pair(self, policy: Any, other: Any) -> tuple[float, float]:
        """``policy``'s mean return per game against ``other`` and its 95% half-width."""
        result = play_match(self.env_fn, policy, other, self.games_per_pair, seed=self.seed)
        returns = np.asarray([2.0 * outcome - 1.0 for _, outcome in result.games])
        half = 1.96 * float(returns.std(ddof=1)) / np.sqrt(len(returns))
        return float(returns.mean()), half

    def row(self, policy: Any, among: Iterable[int] | None = None) -> np.ndarray:
        """What ``policy`` wins per game against each policy there (estimated from
        ``games_per_pair`` games each), without adding it.

        :param among: the indices to play (``None``: all); the others' entries are 0.
        """
        row = np.zeros(len(self._policies))
        for j in range(len(self._policies)) if among is None else among:
            row[j] = self._pair(policy, self._policies[j])[0]
        return row

    def add(self, policy: Any) -> int:
        """Add a policy and play its games against every policy already there; returns its
        index."""
        n = len(self._policies)
        matrix = np.zeros((n + 1, n + 1))
        width = np.zeros((n + 1, n + 1))
        matrix[:n, :n], width[:n, :n] = self.matrix, self.half_width
        for j, other in enumerate(self._policies):
            mean, half = self._pair(policy, other)
            matrix[n, j], matrix[j, n] = mean, -mean
            width[n, j] = width[j, n] = half
        self.matrix, self.half_width = matrix, width
        self._policies.append(policy)
        return n

    def restore(self, policy: Any) -> None:
        """Take back a policy whose payoffs are already in :attr:`matrix` (a resumed run)."""
        self._policies.append(policy)

    def __len__(self) -> int:
        return len(self._policies)
