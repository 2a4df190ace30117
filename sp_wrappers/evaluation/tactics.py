"""One-move tactics: does a player take its immediate wins, block single threats, and avoid
moves that hand the opponent an immediate win?

Scores and ratings say how often a player wins; they do not say why it loses. In the positions a
player meets while playing (the games of :func:`~sp_wrappers.evaluation.openings.play_openings`:
every forced opening in every seat against an opponent), the check plays each legal move on a
copy of the game, and each of the opponent's replies on a copy of that, and reads the result
from the env's rewards, never from a board parser. Any turn-based (AEC) game whose state can be
copied works: PettingZoo's classic games, OpenSpiel games through Shimmy (their pyspiel state is
cloned), a user's game whose objects ``copy.deepcopy`` can copy.

Definitions, for the player ``p`` to move in a position with legal moves ``M`` and its chosen
move ``c`` (the forced moves of the openings are not ``p``'s choices and are not counted):

- a move *wins at once* when it ends the game for its mover (terminated, not truncated) with
  the mover's return strictly above every other agent's;
- ``W(m)``: the opponent's replies that win at once after ``p`` plays ``m`` (empty when ``m``
  ends the game, or when ``p`` moves again); ``m`` is *safe* when ``W(m)`` is empty;
- **immediate wins**: positions where some ``m`` wins at once; *taken* when ``c`` does;
- **single threats**: positions with no winning move for ``p`` in which the opponent holds
  exactly one *threat* and some move is safe. A threat is a reply ``a`` that wins whatever
  else ``p`` does: ``a`` is in ``W(m)`` for every ``m != a`` after which ``a`` is still legal
  (there is at least one such ``m``). Positions with two threats, or whose only block hands
  over another win, are lost whatever ``p`` plays and are left out, so a player that never
  misses a one-move tactic scores 1. *Blocked* when ``c`` is safe;
- **wins handed over**: among positions where ``c`` does not win at once and the legal moves
  split into safe and unsafe ones (the choice mattered: a position whose every move is safe
  cannot hand anything over, one whose every move is unsafe is lost), those where ``c`` is not
  safe.

>>> from pettingzoo.classic import connect_four_v3
>>> from sp_wrappers.core.policies import RandomPolicy
>>> from sp_wrappers.games.baselines import AlphaBetaConnectFourPolicy
>>> depth1 = AlphaBetaConnectFourPolicy(depth=1, tie_break="first")
>>> report = tactics_check(connect_four_v3.env, depth1, RandomPolicy(), openings=[(3, 3), (0, 6)])
>>> report.summary()
'wins taken 4/4 (1.00), single threats blocked 1/1 (1.00), wins handed over 0/2 (0.00)'
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
from gymnasium import spaces

from ..core.seats import as_aec_env, pairwise_outcome
from .errors import LookAheadError
from .openings import OpeningGame, OpeningsResult, legal_actions, legal_openings, play_openings

__all__ = ["TacticsReport", "tactics_check", "game_tactics", "copy_game"]

_ATOMS = (str, int, float, bool, bytes, type(None), np.generic)
_ATOM_TYPES = frozenset((str, int, float, bool, bytes, type(None)))


@dataclass(frozen=True)
class TacticsReport:
    """Counts of one-move tactics in the positions a player met (see the module docstring).

    :param positions: positions where the player chose its move (forced opening moves excluded).
    :param wins_taken: positions where a move won at once and the player's move did.
    :param win_chances: positions where some move won at once.
    :param threats_blocked: single-threat positions where the player's move was safe.
    :param single_threats: positions with no win, one opponent threat and a safe move.
    :param wins_handed: positions counted in ``safe_chances`` where the player's move was unsafe.
    :param safe_chances: positions where the player's move did not win at once and some moves
        were safe, others not.

    >>> report = TacticsReport(positions=40, wins_taken=13, win_chances=20, threats_blocked=3,
    ...                        single_threats=4, wins_handed=1, safe_chances=30)
    >>> report.wins_taken_share, report.threats_blocked_share
    (0.65, 0.75)
    >>> TacticsReport.from_dict(report.as_dict()) == report
    True
    """

    positions: int = 0
    wins_taken: int = 0
    win_chances: int = 0
    threats_blocked: int = 0
    single_threats: int = 0
    wins_handed: int = 0
    safe_chances: int = 0

    @property
    def wins_taken_share(self) -> float:
        """Immediate wins taken / positions with one (NaN when there were none)."""
        return _share(self.wins_taken, self.win_chances)

    @property
    def threats_blocked_share(self) -> float:
        """Single threats blocked / single-threat positions (NaN when there were none)."""
        return _share(self.threats_blocked, self.single_threats)

    @property
    def wins_handed_share(self) -> float:
        """Wins handed over / positions where safe and unsafe moves existed (NaN when none)."""
        return _share(self.wins_handed, self.safe_chances)

    def shares(self) -> dict[str, float]:
        """The three shares by name (``wins_taken``, ``threats_blocked``, ``wins_handed``)."""
        return {
            "wins_taken": self.wins_taken_share,
            "threats_blocked": self.threats_blocked_share,
            "wins_handed": self.wins_handed_share,
        }

    def as_dict(self) -> dict[str, Any]:
        """The counts and the shares (``*_share``; ``None`` for an empty share), JSON-ready."""
        data: dict[str, Any] = asdict(self)
        for name, share in self.shares().items():
            data[f"{name}_share"] = None if math.isnan(share) else share
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TacticsReport:
        """The report :meth:`as_dict` wrote (the shares are recomputed from the counts)."""
        return cls(**{f.name: int(data.get(f.name, 0)) for f in fields(cls)})

    def __add__(self, other: TacticsReport) -> TacticsReport:
        return TacticsReport(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def summary(self) -> str:
        """One line: each share with its counts."""
        return (
            f"wins taken {_fraction(self.wins_taken, self.win_chances)}, single threats blocked "
            f"{_fraction(self.threats_blocked, self.single_threats)}, wins handed over "
            f"{_fraction(self.wins_handed, self.safe_chances)}"
        )


def _share(count: int, total: int) -> float:
    return count / total if total else float("nan")


def _fraction(count: int, total: int) -> str:
    return f"{count}/{total} ({count / total:.2f})" if total else f"{count}/{total}"


# -- copying a game -------------------------------------------------------------------------------
def _layers(game: Any) -> list[Any]:
    """The game and the envs it wraps (PettingZoo wrappers hold theirs in ``env``)."""
    layers, seen = [], set()
    while game is not None and id(game) not in seen and hasattr(game, "__dict__"):
        layers.append(game)
        seen.add(id(game))
        game = vars(game).get("env")
    return layers


def _shared(value: Any) -> bool:
    """Descriptions that moves never change, shared by a copy: spaces, an OpenSpiel game."""
    return isinstance(value, spaces.Space) or (
        type(value).__module__ == "pyspiel" and hasattr(value, "new_initial_state")
    )


def _copy_value(value: Any, memo: dict[int, Any]) -> Any:
    kind = type(value)
    if kind in _ATOM_TYPES:
        return value
    found = memo.get(id(value))
    if found is not None:
        return found
    if isinstance(value, _ATOMS) or _shared(value):
        return value
    if kind is list and all(type(v) in _ATOM_TYPES for v in value):
        return list(value)
    if kind is dict and all(type(v) in _ATOM_TYPES for v in value.values()):
        return dict(value)
    if type(value) is dict and value and all(_shared(v) for v in value.values()):
        return value
    if type(value) is np.ndarray:
        return value.copy()
    if type(value).__module__ == "pyspiel" and hasattr(value, "clone"):
        return value.clone()  # an OpenSpiel state
    return copy.deepcopy(value, memo)


def copy_game(game: Any) -> Any:
    """An independent copy of a PettingZoo AEC game in its current position.

    Each wrapper layer and the innermost env are copied attribute by attribute (PettingZoo's
    classic envs would otherwise be rebuilt fresh from their constructor arguments by
    ``copy.deepcopy``, which pickles them); spaces and OpenSpiel game objects are shared,
    OpenSpiel states cloned, everything else deep-copied.

    :param game: the AEC game.
    :raises LookAheadError: when part of the game cannot be copied.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> game = tictactoe_v3.env()
    >>> game.reset(seed=0)
    >>> game.step(4)
    >>> twin = copy_game(game)
    >>> twin.step(0)
    >>> game.agent_selection, twin.agent_selection
    ('player_2', 'player_1')
    """
    layers = _layers(game)
    shells = []
    memo: dict[int, Any] = {}
    for layer in layers:
        shell = object.__new__(type(layer))
        memo[id(layer)] = shell
        shells.append(shell)
    for layer, shell in zip(layers, shells, strict=True):
        for key, value in vars(layer).items():
            try:
                vars(shell)[key] = _copy_value(value, memo)
            except Exception as error:
                raise LookAheadError(
                    f"{type(layer).__name__} cannot be copied for a one-move look-ahead: its "
                    f"{key!r} ({type(value).__name__}) does not copy ({error}); give that class a "
                    "__deepcopy__ that copies its state (or a clone() method, as OpenSpiel "
                    "states have)."
                ) from None
    return shells[0]


# -- reading positions ----------------------------------------------------------------------------
def _done(game: Any, agent: str) -> bool:
    return bool(game.terminations.get(agent) or game.truncations.get(agent))


def _skip_dead(game: Any) -> None:
    """Play the dead steps of agents whose game is over, as :class:`SeatDriver` does."""
    while game.agents and _done(game, game.agent_selection):
        if all(_done(game, a) for a in game.agents):
            return
        game.step(None)


def _play(game: Any, action: Any, returns: dict[str, float]) -> dict[str, float]:
    """Play ``action`` for the agent to move; the returns after it (``returns`` is not changed)."""
    game.step(action)
    after = dict(returns)
    for agent, reward in game.rewards.items():
        after[agent] = after.get(agent, 0.0) + float(reward)
    return after


def _wins(game: Any, mover: str, returns: dict[str, float]) -> bool:
    """Whether the move just played ended the game for ``mover`` with the lead (see module)."""
    if not game.terminations.get(mover) or not all(_done(game, a) for a in game.agents):
        return False
    return mover in returns and len(returns) > 1 and pairwise_outcome(returns, mover) == 1.0


class _Position:
    """What the player's legal moves lead to, each move and reply played on a copy when first
    asked about (the checks stop at the first answer they need)."""

    def __init__(self, game: Any, player: str, returns: dict[str, float]) -> None:
        self.player = player
        self.winning: set[int] = set()
        #: move -> (the game after it, the opponent to reply, its legal replies, the returns)
        self.after: dict[int, tuple[Any, str | None, list[int], dict[str, float]]] = {}
        self._pairs: dict[tuple[int, int], bool] = {}
        for move in legal_actions(game, player):
            after = copy_game(game)
            totals = _play(after, move, returns)
            if _wins(after, player, totals):
                self.winning.add(move)
                self.after[move] = (after, None, [], totals)
                continue
            _skip_dead(after)
            opponent = after.agent_selection if after.agents else None
            if opponent is None or opponent == player or _done(after, opponent):
                self.after[move] = (after, None, [], totals)
            else:
                self.after[move] = (after, opponent, legal_actions(after, opponent), totals)

    def reply_wins(self, move: int, reply: int) -> bool:
        """Whether the opponent's ``reply`` to ``move`` wins at once."""
        key = (move, reply)
        if key not in self._pairs:
            after, opponent, _, totals = self.after[move]
            game = copy_game(after)
            self._pairs[key] = _wins(game, opponent, _play(game, reply, totals))
        return self._pairs[key]

    def safe(self, move: int) -> bool:
        """Whether no reply to ``move`` wins at once (``W(move)`` is empty)."""
        return not any(self.reply_wins(move, reply) for reply in self.after[move][2])

    def threats(self) -> set[int]:
        """Replies that win whatever else the player does (see the module docstring)."""
        threats = set()
        for reply in sorted({r for _, _, replies, _ in self.after.values() for r in replies}):
            others = [m for m, entry in self.after.items() if m != reply and reply in entry[2]]
            if others and all(self.reply_wins(m, reply) for m in others):
                threats.add(reply)
        return threats


def _score(position: _Position, chosen: int, legal: bool) -> TacticsReport:
    """The counts one position adds (``legal``: whether the chosen move was legal)."""
    took = legal and chosen in position.winning
    if took:
        return TacticsReport(positions=1, wins_taken=1, win_chances=1)
    chosen_safe = legal and position.safe(chosen)
    safe_exists = chosen_safe or any(position.safe(m) for m in position.after)
    single = not position.winning and safe_exists and len(position.threats()) == 1
    choice = safe_exists and (not chosen_safe or not all(position.safe(m) for m in position.after))
    return TacticsReport(
        positions=1,
        win_chances=int(bool(position.winning)),
        threats_blocked=int(single and chosen_safe),
        single_threats=int(single),
        wins_handed=int(choice and not chosen_safe),
        safe_chances=int(choice),
    )


def _same_position(game: Any, twin: Any, agent: str) -> bool:
    mine, theirs = game.observe(agent), twin.observe(agent)
    if isinstance(mine, dict):
        return mine.keys() == theirs.keys() and all(
            np.array_equal(mine[k], theirs[k]) for k in mine
        )
    return bool(np.array_equal(mine, theirs))


def _replay(env_fn: Callable[[], Any], record: OpeningGame, seed: int) -> TacticsReport:
    """Replay one game from its reset seed and score every position where its player chose."""
    game = as_aec_env(env_fn())
    report = TacticsReport()
    checked = False
    try:
        game.reset(seed=seed)
        returns = {agent: 0.0 for agent in game.agents}
        for ply, move in enumerate(record.moves):
            _skip_dead(game)
            if not game.agents or _done(game, game.agent_selection):
                raise LookAheadError(
                    f"Replaying a game of {record.moves} from reset(seed={seed}) ended after "
                    f"{ply} moves; the game must replay the same from the same seed (pass the "
                    "env_fn and seed the games were played with)."
                )
            agent = game.agent_selection
            legal = legal_actions(game, agent)
            if agent == record.seat and ply >= len(record.opening):
                if not checked:
                    if not _same_position(game, copy_game(game), agent):
                        raise LookAheadError(
                            f"A copy of {type(game.unwrapped).__name__} does not hold the "
                            "position it was copied from; give the env a __deepcopy__ that "
                            "copies its state."
                        )
                    checked = True
                chosen_legal = move in legal
                report += _score(_Position(game, agent, returns), move, chosen_legal)
                if not chosen_legal:  # the player's illegal move ended its game
                    break
            elif move not in legal:
                raise LookAheadError(
                    f"Move {move} at ply {ply} of {record.moves} is illegal when the game is "
                    f"replayed from reset(seed={seed}); pass the env_fn and seed the games were "
                    "played with."
                )
            returns = _play(game, move, returns)
    finally:
        game.close()
    return report


def game_tactics(env_fn: Callable[[], Any], played: OpeningsResult, seed: int = 0) -> TacticsReport:
    """The tactics of player ``a`` in games already played by :func:`play_openings`.

    Game ``i`` of ``played`` is replayed from ``reset(seed=seed + i)``, as ``play_openings``
    played it, so pass the same ``env_fn`` and ``seed``.

    :param env_fn: builds the PettingZoo game (AEC or Parallel).
    :param played: the games (``play_openings(env_fn, a, b, openings, seed=seed)``).
    :param seed: the first game's reset seed.
    """
    report = TacticsReport()
    for index, record in enumerate(played.games):
        report += _replay(env_fn, record, seed + index)
    return report


def tactics_check(
    env_fn: Callable[[], Any],
    policy: Any,
    opponent: Any,
    openings: Sequence[Sequence[int]] | None = None,
    plies: int = 1,
    seats: Sequence[str] | None = None,
    repeats: int = 1,
    seed: int = 0,
) -> TacticsReport:
    """Play ``policy`` against ``opponent`` from every opening in every seat and count its
    one-move tactics (see the module docstring for the definitions).

    :param env_fn: builds the PettingZoo game; its state must copy (:func:`copy_game`).
    :param policy: the player checked: a policy or an SB3 model (played deterministically).
    :param opponent: the player it meets, likewise.
    :param openings: forced openings (default: every legal sequence of ``plies`` moves).
    :param plies: moves per opening when ``openings`` is not given (Connect Four: 2 gives 49).
    :param seats: the checked player's seats (default: every seat).
    :param repeats: games per opening and seat.
    :param seed: the first game's reset seed.
    :raises LookAheadError: when the game cannot be copied.
    """
    if openings is None:
        openings = legal_openings(env_fn, plies)
    played = play_openings(env_fn, policy, opponent, openings, seats, repeats, seed)
    return game_tactics(env_fn, played, seed)
