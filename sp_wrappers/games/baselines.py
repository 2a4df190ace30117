"""Reference opponents for PettingZoo classic games: search bots following the ``Policy`` protocol.

This module holds:

- :class:`PerfectTicTacToePolicy`, exact minimax for ``tictactoe_v3`` (never loses).
- :class:`AlphaBetaConnectFourPolicy`, depth-limited negamax with alpha-beta pruning and a
  heuristic evaluation for ``connect_four_v3``.

Both take observations exactly as an opponent seat receives them: the ``"observation"`` part of
PettingZoo's dict observation, stacked into a batch (``(n, 3, 3, 2)`` for tic-tac-toe,
``(n, 6, 7, 2)`` for Connect Four; channel 0 holds the acting player's own marks, channel 1 the
opponent's), and boolean masks of shape ``(n, 9)`` / ``(n, 7)``. Frames stacked in the game
(:class:`~sp_wrappers.games.frame_stack.StackedObservations`, ``(n, 6, 7, 2 * k)``) are read from
the newest frame, so the bots play a ``frame_stack`` game as well. A dict batch
``{"observation": ..., "action_mask": ...}`` is accepted too; its ``"action_mask"`` is used when
``action_masks`` is ``None``. Among equally good moves they choose with the ``rng`` they are
given, so a seeded env reproduces their games and a learner cannot beat them by memorising a
single line.
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np

from sp_wrappers.core.policies import Observations

__all__ = ["PerfectTicTacToePolicy", "AlphaBetaConnectFourPolicy", "bot_name"]


def bot_name(name: str) -> str:
    """A reference player's one name: ``alphabeta-d<depth>`` for Connect Four's alpha-beta
    player (what its ``policy_id`` says in results, Gymnasium ids and the command line), with
    the older spelling ``alphabeta<depth>`` accepted as an alias; other names are unchanged.

    >>> bot_name("alphabeta1"), bot_name("alphabeta-d2"), bot_name("minimax")
    ('alphabeta-d1', 'alphabeta-d2', 'minimax')
    """
    text = name.strip()
    if text.startswith("alphabeta") and text[len("alphabeta") :].isdigit():
        return f"alphabeta-d{text[len('alphabeta') :]}"
    return text


TieBreak = Literal["random", "first"]


def _split_batch(
    observations: Observations,
    action_masks: np.ndarray | None,
    board_shape: tuple[int, ...],
    n_actions: int,
    game: str,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Boards ``(n, *board_shape)`` and boolean masks ``(n, n_actions)`` (or ``None``)."""
    if isinstance(observations, dict):
        if "observation" not in observations:
            raise ValueError(
                f"A dict observation for {game} needs an 'observation' key (PettingZoo's layout), "
                f"got keys {sorted(observations)}."
            )
        if action_masks is None:
            action_masks = observations.get("action_mask")
        observations = observations["observation"]
    boards = np.asarray(observations)
    channels = board_shape[-1]
    if (  # frames stacked by StackedObservations: the bots play on the newest one
        boards.ndim == len(board_shape) + 1
        and boards.shape[1:-1] == board_shape[:-1]
        and boards.shape[-1] > channels
        and boards.shape[-1] % channels == 0
    ):
        boards = boards[..., -channels:]
    if boards.shape[1:] != board_shape:
        hint = " Add a batch dimension: obs[None]." if boards.shape == board_shape else ""
        expected = ", ".join(map(str, board_shape))
        raise ValueError(
            f"Expected a batch of {game} observations of shape (n, {expected}), "
            f"got shape {boards.shape}.{hint}"
        )
    masks = None
    if action_masks is not None:
        masks = np.asarray(action_masks).astype(bool, copy=False)
        if masks.shape != (len(boards), n_actions):
            raise ValueError(
                f"Expected {game} action masks of shape ({len(boards)}, {n_actions}), "
                f"got {masks.shape}."
            )
    return boards, masks


def _pick(candidates: list[int], tie_break: TieBreak, rng: np.random.Generator | None) -> int:
    if len(candidates) == 1 or tie_break == "first" or rng is None:
        return candidates[0]
    return candidates[int(rng.integers(len(candidates)))]


def _check_tie_break(tie_break: str) -> TieBreak:
    if tie_break not in ("random", "first"):
        raise ValueError(f"tie_break must be 'random' or 'first', got {tie_break!r}.")
    return tie_break  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Tic-tac-toe: exact minimax over bitboards, memoised (5,478 reachable positions).
#
# PettingZoo's board keeps ``squares[0..8]`` and observes ``squares.reshape(3, 3)``, so action
# ``a`` is cell ``observation[a // 3, a % 3]``; bit ``a`` of our bitboards is that cell.
# --------------------------------------------------------------------------------------------

_TTT_LINES = tuple(
    sum(1 << i for i in line)
    for line in (
        (0, 1, 2),
        (3, 4, 5),
        (6, 7, 8),
        (0, 3, 6),
        (1, 4, 7),
        (2, 5, 8),
        (0, 4, 8),
        (2, 4, 6),
    )
)
_TTT_FULL = (1 << 9) - 1
_TTT_WEIGHTS = 1 << np.arange(9, dtype=np.int64)


def _ttt_has_line(bits: int) -> bool:
    return any(bits & line == line for line in _TTT_LINES)


@functools.cache
def _ttt_value(own: int, opp: int) -> int:
    """Exact value for the player to move (``own``): ``1 + empty cells`` after a win, 0 a draw.

    Counting the empty cells left makes faster wins worth more and slower losses cost less.
    """
    empty = _TTT_FULL & ~(own | opp)
    if _ttt_has_line(opp):
        return -(1 + empty.bit_count())
    if not empty:
        return 0
    return max(-_ttt_value(opp, own | (1 << a)) for a in range(9) if empty >> a & 1)


@functools.cache
def _ttt_move_values(own: int, opp: int) -> tuple[int | None, ...]:
    """Value of each action for the player to move; ``None`` for occupied cells."""
    empty = _TTT_FULL & ~(own | opp)
    return tuple(-_ttt_value(opp, own | (1 << a)) if empty >> a & 1 else None for a in range(9))


class PerfectTicTacToePolicy:
    """Perfect tic-tac-toe (``tictactoe_v3``) by exact minimax: it never loses.

    Scores are depth-aware: it takes the fastest win, and when it cannot avoid a loss (only
    possible from a position it did not reach itself) it delays it. All minimax values are
    memoised by board, so after the first call (a few ms to solve the game) each move costs
    microseconds. Among equally good moves it picks at random with ``rng`` (``tie_break="random"``)
    or the lowest action (``"first"``, also used when ``rng`` is ``None``).

    :param policy_id: the name reported in ``info["selfplay"]["opponent"]``.
    :param tie_break: ``"random"`` or ``"first"``, how to choose among equally good moves.

    >>> import numpy as np
    >>> board = np.zeros((1, 3, 3, 2), dtype=np.int8)
    >>> board[0, 0, :2, 0] = 1          # our marks on actions 0 and 1
    >>> board[0, 1, :2, 1] = 1          # theirs on actions 3 and 4
    >>> masks = board.reshape(1, 9, 2).sum(axis=2) == 0
    >>> policy = PerfectTicTacToePolicy()
    >>> policy.act(board, masks, np.random.default_rng(0)).tolist()   # completes the top row
    [2]
    >>> policy.action_values(board, masks)[0, [2, 5]].tolist()         # win now vs. a draw
    [5.0, 0.0]
    """

    def __init__(self, policy_id: str = "minimax", tie_break: TieBreak = "random") -> None:
        self.policy_id = policy_id
        self.tie_break = _check_tie_break(tie_break)

    def _bitboards(
        self, observations: Observations, action_masks: np.ndarray | None
    ) -> tuple[list[int], list[int], np.ndarray]:
        boards, masks = _split_batch(observations, action_masks, (3, 3, 2), 9, "tictactoe_v3")
        flat = boards.reshape(len(boards), 9, 2).astype(np.int64, copy=False) != 0
        own, opp = flat[:, :, 0], flat[:, :, 1]
        if np.any(own & opp):
            row = int(np.flatnonzero((own & opp).any(axis=1))[0])
            raise ValueError(
                f"tictactoe_v3 observation {row} marks a cell for both players; channel 0 must "
                "hold the acting player's marks and channel 1 the opponent's."
            )
        if masks is None:
            masks = ~(own | opp)
        return (own @ _TTT_WEIGHTS).tolist(), (opp @ _TTT_WEIGHTS).tolist(), masks

    def action_values(
        self, observations: Observations, action_masks: np.ndarray | None = None
    ) -> np.ndarray:
        """Exact minimax value of every action, ``(n, 9)`` floats, ``-inf`` where illegal.

        A win is worth ``1 + empty cells left`` after it, a draw 0, a loss the negative; the
        optimal actions are those with the row's maximum. Useful to grade a learner's moves.

        :param observations: a batch ``(n, 3, 3, 2)``, or a dict with ``"observation"``.
        :param action_masks: ``(n, 9)`` booleans; empty cells are legal when ``None``.
        """
        own, opp, masks = self._bitboards(observations, action_masks)
        values = np.full((len(own), 9), -np.inf)
        for i, (mine, theirs) in enumerate(zip(own, opp, strict=True)):
            for a, value in enumerate(_ttt_move_values(mine, theirs)):
                if value is not None and masks[i, a]:
                    values[i, a] = value
        return values

    def act(
        self,
        observations: Observations,
        action_masks: np.ndarray | None,
        rng: np.random.Generator | None,
    ) -> np.ndarray:
        """One optimal action per observation.

        :param observations: a batch ``(n, 3, 3, 2)``, or a dict with ``"observation"``.
        :param action_masks: ``(n, 9)`` booleans; empty cells are legal when ``None``.
        :param rng: breaks ties between equally good moves.
        """
        own, opp, masks = self._bitboards(observations, action_masks)
        actions = np.empty(len(own), dtype=np.int64)
        for i, (mine, theirs) in enumerate(zip(own, opp, strict=True)):
            values = _ttt_move_values(mine, theirs)
            legal = [a for a in range(9) if masks[i, a] and values[a] is not None]
            if not legal:
                raise ValueError(
                    f"tictactoe_v3 observation {i} has no legal move (full board or all-False "
                    "mask); ask an opponent to act only for the seat whose turn it is."
                )
            best = max(values[a] for a in legal)
            actions[i] = _pick([a for a in legal if values[a] == best], self.tie_break, rng)
        return actions

    def __repr__(self) -> str:
        return f"PerfectTicTacToePolicy(policy_id={self.policy_id!r}, tie_break={self.tie_break!r})"


# --------------------------------------------------------------------------------------------
# Connect Four: negamax + alpha-beta on bitboards.
#
# PettingZoo observes ``board.reshape(6, 7)`` with row 0 at the top (pieces fall to row 5) and
# action ``c`` drops a piece in column ``c``. Our bitboards use 7 bits per column (6 cells from the
# bottom up plus an always-empty sentinel): bit ``7 * c + h`` is column ``c``, height ``h``, so
# observation cell ``[r, c]`` is bit ``7 * c + 5 - r``. The sentinel row stops the shifts in
# ``_c4_has_four`` / ``_c4_winning_cells`` from wrapping between columns.
# --------------------------------------------------------------------------------------------

_C4_ROWS, _C4_COLS = 6, 7
_C4_BOTTOM = tuple(1 << (7 * c) for c in range(_C4_COLS))
_C4_COLUMN = tuple(((1 << _C4_ROWS) - 1) << (7 * c) for c in range(_C4_COLS))
_C4_BOARD = sum(_C4_COLUMN)
_C4_BOTTOM_ROW = sum(_C4_BOTTOM)
_C4_CENTER = _C4_COLUMN[3]
_C4_ORDER = (3, 2, 4, 1, 5, 0, 6)  # centre first: better moves first means more cut-offs
_C4_WEIGHTS = np.array(
    [[1 << (7 * c + _C4_ROWS - 1 - r) for c in range(_C4_COLS)] for r in range(_C4_ROWS)],
    dtype=np.int64,
)


def _c4_lines() -> tuple[int, ...]:
    """The 69 four-cell windows, as bitmasks."""
    lines = []
    for c in range(_C4_COLS):
        for h in range(_C4_ROWS):
            for dc, dh in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(c + k * dc, h + k * dh) for k in range(4)]
                if all(0 <= cc < _C4_COLS and 0 <= hh < _C4_ROWS for cc, hh in cells):
                    lines.append(sum(1 << (7 * cc + hh) for cc, hh in cells))
    return tuple(lines)


_C4_LINES = _c4_lines()

_WIN = 1_000_000  # a win found with d plies of search left scores _WIN + d (sooner is better)
_INF = 10 * _WIN
# Heuristic weights: a window holding k pieces of one side and none of the other.
_C4_WINDOW_SCORE = (0, 0, 2, 8, 0)
_C4_CENTER_SCORE = 3


def _c4_has_four(bits: int) -> bool:
    for shift in (1, 7, 6, 8):  # vertical, horizontal, and the two diagonals
        pairs = bits & (bits >> shift)
        if pairs & (pairs >> (2 * shift)):
            return True
    return False


def _c4_winning_cells(bits: int, occupied: int) -> int:
    """Empty cells (playable or not) where a piece would complete four for ``bits``."""
    cells = (bits << 1) & (bits << 2) & (bits << 3)  # vertical: only from below
    for s in (7, 6, 8):
        pair = (bits << s) & (bits << 2 * s)
        cells |= pair & (bits << 3 * s)
        cells |= pair & (bits >> s)
        pair = (bits >> s) & (bits >> 2 * s)
        cells |= pair & (bits << s)
        cells |= pair & (bits >> 3 * s)
    return cells & (_C4_BOARD ^ occupied)


def _c4_evaluate(cur: int, opp: int) -> int:
    """Heuristic score for the player to move (``cur``), who has no immediate win."""
    occupied = cur | opp
    playable = (occupied + _C4_BOTTOM_ROW) & _C4_BOARD
    threats = _c4_winning_cells(opp, occupied) & playable
    if threats & (threats - 1):  # two immediate threats: only one can be blocked
        return -_WIN // 2
    score = _C4_CENTER_SCORE * ((cur & _C4_CENTER).bit_count() - (opp & _C4_CENTER).bit_count())
    window = _C4_WINDOW_SCORE
    for line in _C4_LINES:
        mine = cur & line
        theirs = opp & line
        if not theirs:
            score += window[mine.bit_count()]
        elif not mine:
            score -= window[theirs.bit_count()]
    return score


def _c4_negamax(cur: int, opp: int, depth: int, alpha: int, beta: int) -> int:
    """Fail-soft negamax value of the position for ``cur``, the player to move."""
    occupied = cur | opp
    if occupied == _C4_BOARD:
        return 0
    playable = (occupied + _C4_BOTTOM_ROW) & _C4_BOARD
    if _c4_winning_cells(cur, occupied) & playable:
        return _WIN + depth
    if depth == 0:
        return _c4_evaluate(cur, opp)
    threats = _c4_winning_cells(opp, occupied) & playable
    if threats & (threats - 1):  # cannot block both: the opponent wins on its next move
        return -(_WIN + depth - 1)
    best = -_INF
    for c in _C4_ORDER:
        move = playable & _C4_COLUMN[c]
        if not move or (threats and not move & threats):  # full column, or fails to block
            continue
        value = -_c4_negamax(opp, cur | move, depth - 1, -beta, -alpha)
        if value > best:
            best = value
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    return best


class AlphaBetaConnectFourPolicy:
    """Connect Four (``connect_four_v3``) by depth-limited negamax with alpha-beta pruning.

    The search looks ``depth`` moves ahead (its own move counts as one), always spots a move that
    wins at once and, at the horizon, a move after which the opponent wins at once or holds two
    threats. Quiet positions are scored by a heuristic: +8 / +2 for every four-cell window holding
    three / two of the mover's pieces and none of the opponent's (the same subtracted for the
    opponent) and +3 per piece in the centre column. Moves are searched centre first; among the
    best moves one is chosen with ``rng`` (``tie_break="random"``) or the most central one
    (``"first"``, also used when ``rng`` is ``None``). Pure Python on 49-bit bitboards.

    :param depth: search depth in plies, at least 1 (1, 2 and 4 are typical; the time per move
        grows about fourfold per extra ply).
    :param policy_id: the name reported in ``info["selfplay"]["opponent"]``; defaults to
        ``"alphabeta-d{depth}"``.
    :param tie_break: ``"random"`` or ``"first"``, how to choose among equally good moves.

    >>> import numpy as np
    >>> board = np.zeros((1, 6, 7, 2), dtype=np.int8)
    >>> board[0, 5, 0:3, 0] = 1           # our three pieces on the bottom row, columns 0-2
    >>> board[0, 4, 0:3, 1] = 1           # theirs stacked on top of them
    >>> masks = np.ones((1, 7), dtype=bool)
    >>> AlphaBetaConnectFourPolicy(depth=1).act(board, masks, np.random.default_rng(0)).tolist()
    [3]
    """

    def __init__(
        self, depth: int = 2, policy_id: str | None = None, tie_break: TieBreak = "random"
    ) -> None:
        if int(depth) != depth or depth < 1:
            raise ValueError(f"depth must be an integer >= 1 (plies), got {depth!r}.")
        self.depth = int(depth)
        self.policy_id = policy_id if policy_id is not None else f"alphabeta-d{self.depth}"
        self.tie_break = _check_tie_break(tie_break)

    def act(
        self,
        observations: Observations,
        action_masks: np.ndarray | None,
        rng: np.random.Generator | None,
    ) -> np.ndarray:
        """One action (a column, 0..6) per observation.

        :param observations: a batch ``(n, 6, 7, 2)``, or a dict with ``"observation"``.
        :param action_masks: ``(n, 7)`` booleans; non-full columns are legal when ``None``.
        :param rng: breaks ties between equally good moves.
        """
        boards, masks = _split_batch(observations, action_masks, (6, 7, 2), 7, "connect_four_v3")
        planes = boards.astype(np.int64, copy=False) != 0
        if np.any(planes[..., 0] & planes[..., 1]):
            raise ValueError(
                "A connect_four_v3 observation marks a cell for both players; channel 0 must hold "
                "the acting player's pieces and channel 1 the opponent's."
            )
        own = (planes[..., 0] * _C4_WEIGHTS).sum(axis=(1, 2)).tolist()
        opp = (planes[..., 1] * _C4_WEIGHTS).sum(axis=(1, 2)).tolist()
        actions = np.empty(len(own), dtype=np.int64)
        for i, (cur, other) in enumerate(zip(own, opp, strict=True)):
            legal = None if masks is None else masks[i]
            actions[i] = self._choose(cur, other, legal, i, rng)
        return actions

    def _choose(
        self,
        cur: int,
        opp: int,
        legal: np.ndarray | None,
        row: int,
        rng: np.random.Generator | None,
    ) -> int:
        occupied = cur | opp
        for c in range(_C4_COLS):
            column = occupied & _C4_COLUMN[c]
            if column & (column + _C4_BOTTOM[c]):  # not a solid stack from the bottom up
                raise ValueError(
                    f"connect_four_v3 observation {row} has a floating piece in column {c}; "
                    "row 0 of the observation is the top of the board, row 5 the bottom."
                )
        playable = (occupied + _C4_BOTTOM_ROW) & _C4_BOARD
        moves = [c for c in _C4_ORDER if playable & _C4_COLUMN[c] and (legal is None or legal[c])]
        if not moves:
            raise ValueError(
                f"connect_four_v3 observation {row} has no legal move (full board or all-False "
                "mask); ask an opponent to act only for the seat whose turn it is."
            )
        best, candidates = -_INF, []
        for c in moves:
            move = playable & _C4_COLUMN[c]
            if _c4_has_four(cur | move):
                value = _WIN + self.depth
            else:
                # Window (best - 1, inf): exact for moves at least as good as the best so far.
                value = -_c4_negamax(opp, cur | move, self.depth - 1, -_INF, 1 - best)
            if value > best:
                best, candidates = value, [c]
            elif value == best:
                candidates.append(c)
        return _pick(candidates, self.tie_break, rng)

    def __repr__(self) -> str:
        return (
            f"AlphaBetaConnectFourPolicy(depth={self.depth}, policy_id={self.policy_id!r}, "
            f"tie_break={self.tie_break!r})"
        )
