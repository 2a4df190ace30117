"""The league's payoff table: decayed win rates between every pair of players.

A player is a learning player (named ``main_agent_0``, ...: its games count for its *current*
weights, as AlphaStar's active players) or a frozen snapshot (its archive id). Each game between
``a`` and ``b`` first multiplies the pair's counts by ``decay`` and then adds the game, exactly as
AlphaStar's ``Payoff.update`` (Vinyals et al. 2019, supplementary pseudocode); the win rate is
``(wins + draws / 2) / games`` over those decayed counts. Until a pair has ``min_games`` games
(undecayed), :meth:`PayoffTable.win_rate` answers the prior 0.5 so that PFSP does not chase a
rate it cannot trust yet (DI-engine's ``min_win_rate_games``).

Defaults, and why: ``decay=0.99`` (AlphaStar and DI-engine): a learning player keeps changing,
so a game 100 games ago weighs ``0.99**100 = 0.37`` of the newest; frozen-vs-frozen pairs do not
change, but the league only matches learners, so every pair has one moving side.
``min_games=8`` (DI-engine): with fewer games the standard error of a rate near 0.5 is above
0.18, too wide to tell a 0.3 opponent (AlphaStar's "too strong" cut) from an even one.

The table is rebuilt from the archive's match history on resume (:meth:`from_matches`) and then
fed the new games of each round (:meth:`add`), so it never rereads the whole history per round.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..opponents.sampler import PFSP_DECAY

__all__ = ["PayoffTable", "DEFAULT_DECAY", "DEFAULT_MIN_GAMES"]

DEFAULT_DECAY = PFSP_DECAY  # 0.99: the same fading as OpponentSampler's PFSP win rates
DEFAULT_MIN_GAMES = 8


class PayoffTable:
    """Decayed win/draw/loss counts per ordered pair of players.

    :param decay: the factor the pair's counts are multiplied by before each new game (0..1];
        1 keeps plain counts.
    :param min_games: games (undecayed) a pair needs before :meth:`win_rate` trusts its rate;
        below it the rate is ``prior``.
    :param prior: the rate of a pair with too few games (AlphaStar: 0.5).

    >>> table = PayoffTable(decay=1.0, min_games=2)
    >>> table.add([("main_agent_0", "snapshot-0000", 1.0), ("main_agent_0", "snapshot-0000", 0.5)])
    >>> a, b = "main_agent_0", "snapshot-0000"
    >>> table.win_rate(a, b), table.games(b, a)
    (0.75, 2)
    >>> table.win_rate("snapshot-0000", "main_agent_0")
    0.25
    >>> table.win_rate("main_agent_0", "snapshot-0001")  # no games yet: the prior
    0.5
    """

    def __init__(
        self, decay: float = DEFAULT_DECAY, min_games: int = DEFAULT_MIN_GAMES, prior: float = 0.5
    ) -> None:
        if not 0.0 < float(decay) <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {decay!r} (1 keeps plain counts).")
        if int(min_games) < 0:
            raise ValueError(f"min_games must be >= 0, got {min_games!r}.")
        if not 0.0 <= float(prior) <= 1.0:
            raise ValueError(f"prior must be between 0 and 1, got {prior!r}.")
        self.decay = float(decay)
        self.min_games = int(min_games)
        self.prior = float(prior)
        # (a, b) -> [decayed score of a, decayed games, raw games]; kept for a < b only
        self._pairs: dict[tuple[str, str], list[float]] = {}

    @classmethod
    def from_matches(cls, matches: Iterable[Any], **kwargs: Any) -> PayoffTable:
        """A table from match records (``player_a``, ``player_b``, ``score_a``) in game order, e.g.
        ``archive.matches()``."""
        table = cls(**kwargs)
        table.add((m.player_a, m.player_b, m.score_a) for m in matches)
        return table

    def add(self, games: Iterable[tuple[str, str, float] | Mapping[str, Any]]) -> None:
        """Add games in the order they were played: ``(a, b, score_a)`` tuples or match dicts.
        Games of a player against itself carry no information and are skipped."""
        for game in games:
            if isinstance(game, Mapping):
                a, b, score = game["player_a"], game["player_b"], game["score_a"]
            else:
                a, b, score = game
            a, b, score = str(a), str(b), float(score)
            if a == b:
                continue
            if not 0.0 <= score <= 1.0:
                raise ValueError(f"score_a must be between 0 and 1, got {score} for {a} vs {b}.")
            if b < a:
                a, b, score = b, a, 1.0 - score
            counts = self._pairs.setdefault((a, b), [0.0, 0.0, 0.0])
            counts[0] = counts[0] * self.decay + score
            counts[1] = counts[1] * self.decay + 1.0
            counts[2] += 1.0

    def games(self, a: str, b: str) -> int:
        """Games played between ``a`` and ``b`` (undecayed)."""
        key = (a, b) if a < b else (b, a)
        counts = self._pairs.get(key)
        return 0 if counts is None else int(counts[2])

    def raw_win_rate(self, a: str, b: str) -> float | None:
        """``a``'s decayed score against ``b`` ignoring ``min_games`` (``None`` with no games)."""
        if a == b:
            return 0.5
        key = (a, b) if a < b else (b, a)
        counts = self._pairs.get(key)
        if counts is None or counts[1] <= 0:
            return None
        rate = counts[0] / counts[1]
        return rate if a < b else 1.0 - rate

    def win_rate(self, a: str, b: str) -> float:
        """``a``'s decayed score against ``b`` (wins + draws / 2), or ``prior`` below
        ``min_games``. A player against itself is 0.5."""
        if a == b:
            return 0.5
        if self.games(a, b) < max(self.min_games, 1):
            return self.prior
        rate = self.raw_win_rate(a, b)
        return self.prior if rate is None else float(rate)

    def win_rates(self, a: str, opponents: Sequence[str]) -> np.ndarray:
        """:meth:`win_rate` of ``a`` against each of ``opponents``."""
        return np.array([self.win_rate(a, o) for o in opponents], dtype=np.float64)

    def players(self) -> list[str]:
        """Every player that has played at least one game, sorted."""
        return sorted({p for pair in self._pairs for p in pair})

    def matrix(self, players: Sequence[str]) -> np.ndarray:
        """``M[i, j]`` = ``players[i]``'s raw win rate against ``players[j]`` (``nan`` without
        games; 0.5 on the diagonal)."""
        n = len(players)
        result = np.full((n, n), np.nan)
        for i, a in enumerate(players):
            for j, b in enumerate(players):
                rate = self.raw_win_rate(a, b)
                result[i, j] = np.nan if rate is None else rate
        return result

    def to_json(self) -> dict[str, Any]:
        """The table as JSON (for ``league.json`` and plots)."""
        return {
            "decay": self.decay,
            "min_games": self.min_games,
            "prior": self.prior,
            "pairs": [[a, b, *counts] for (a, b), counts in sorted(self._pairs.items())],
        }

    def __repr__(self) -> str:
        return (
            f"PayoffTable(decay={self.decay}, min_games={self.min_games}, pairs={len(self._pairs)})"
        )
