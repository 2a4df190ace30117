"""Card games' notation: each hand is shown to its owner only.

This module holds the notations of PettingZoo's RLCard poker games (:class:`LimitHoldemNotation`,
:class:`NoLimitHoldemNotation`, :class:`LeducHoldemNotation`: the hands read from the env's RLCard
game) and of OpenSpiel games played through Shimmy's adapter (:class:`OpenSpielNotation`: moves in
OpenSpiel's own words, Kuhn and Leduc poker's cards drawn for their owner).
:func:`~sp_wrappers.games.notation.notation_for` picks them.
"""

from __future__ import annotations

from typing import Any

from .information import is_openspiel_game
from .notation_base import Notation

__all__ = [
    "LimitHoldemNotation",
    "NoLimitHoldemNotation",
    "LeducHoldemNotation",
    "OpenSpielNotation",
    "is_openspiel_game",
]


def _card(text: str) -> str:
    """RLCard's ``"HQ"`` (suit, rank) as ``"Qh"``."""
    return f"{text[1:]}{text[:1].lower()}"


class _HoldemNotation(Notation):
    """Shared by the RLCard poker games: the names of PettingZoo's action table, and the table
    (the public cards, the chips, and each hand for its owner)."""

    example = "call"
    names: tuple[str, ...] = ()
    aliases: dict[str, int] = {}

    def _state(self, env: Any, seat: str) -> dict[str, Any]:
        raw = env.unwrapped
        return raw.env.game.get_state(raw.possible_agents.index(seat))

    def describe(self, action: int, env: Any) -> str:
        return self.names[int(action)]

    def read(self, text: str, env: Any) -> int | None:
        word = "".join(c for c in text.lower() if c.isalnum())
        return self.aliases.get(word)

    def board(self, env: Any, viewer: str | None = None) -> str:
        raw = env.unwrapped
        first = self._state(env, raw.possible_agents[0])
        shared = first.get("public_cards", [first.get("public_card")])  # Leduc: one card
        public = " ".join(_card(c) for c in shared if c) or "(none yet)"
        chips = ", ".join(
            f"{a} {c}" for a, c in zip(raw.possible_agents, first["all_chips"], strict=True)
        )
        lines = [f"Board: {public}", f"Chips in the pot: {chips}"]
        for seat in raw.possible_agents:
            if viewer is None or seat == viewer:
                cards = self._state(env, seat)["hand"]
                hand = " ".join(_card(c) for c in ([cards] if isinstance(cards, str) else cards))
                lines.append(f"{'Your' if seat == viewer else seat} hand: {hand}")
        return "\n".join(lines)


class LimitHoldemNotation(_HoldemNotation):
    """Limit Texas hold'em (``texas_holdem_v4``): ``call``, ``raise``, ``fold``, ``check``
    (PettingZoo's actions 0 to 3).

    >>> from pettingzoo.classic import texas_holdem_v4
    >>> env = texas_holdem_v4.env()
    >>> env.reset(seed=0)
    >>> mask = env.observe(env.agent_selection)["action_mask"]
    >>> LimitHoldemNotation().legal_moves(env, mask), LimitHoldemNotation().parse("Fold", env, mask)
    (['call', 'raise', 'fold'], 2)
    """

    names = ("call", "raise", "fold", "check")
    aliases = {"call": 0, "raise": 1, "bet": 1, "fold": 2, "check": 3}


class NoLimitHoldemNotation(_HoldemNotation):
    """No-limit Texas hold'em (``texas_holdem_no_limit_v6``): ``fold``, ``check``/``call``,
    ``raise-half-pot``, ``raise-pot``, ``all-in`` (PettingZoo's actions 0 to 4).

    >>> from pettingzoo.classic import texas_holdem_no_limit_v6
    >>> env = texas_holdem_no_limit_v6.env()
    >>> env.reset(seed=0)
    >>> mask = env.observe(env.agent_selection)["action_mask"]
    >>> NoLimitHoldemNotation().parse("all in", env, mask), NoLimitHoldemNotation().describe(1, env)
    (4, 'call')
    """

    names = ("fold", "check", "raise-half-pot", "raise-pot", "all-in")
    aliases = {
        "fold": 0,
        "check": 1,
        "call": 1,
        "raisehalfpot": 2,
        "halfpot": 2,
        "raisepot": 3,
        "pot": 3,
        "allin": 4,
    }

    def describe(self, action: int, env: Any) -> str:
        if int(action) == 1:  # check when nothing is owed, else call
            state = self._state(env, env.unwrapped.agent_selection)
            return "call" if max(state["all_chips"]) > state["my_chips"] else "check"
        return self.names[int(action)]


class LeducHoldemNotation(LimitHoldemNotation):
    """PettingZoo's Leduc hold'em (``leduc_holdem_v4``, RLCard's): ``call``, ``raise``,
    ``fold``, ``check`` as in limit hold'em; one card in each hand, one on the board.

    >>> from pettingzoo.classic import leduc_holdem_v4
    >>> env = leduc_holdem_v4.env()
    >>> env.reset(seed=0)
    >>> print(LeducHoldemNotation().board(env, viewer="player_0"))
    Board: (none yet)
    Chips in the pot: player_0 1, player_1 2
    Your hand: Js
    """


#: OpenSpiel's card ranks, lowest first (Kuhn poker's three cards, Leduc poker's three ranks).
RANKS = "JQKA23456789"


class OpenSpielNotation(Notation):
    """An OpenSpiel game through Shimmy's adapter: moves in OpenSpiel's own words, lower case
    (Kuhn poker's ``pass`` and ``bet``, Leduc poker's ``fold``, ``call`` and ``raise``), the
    board from OpenSpiel's state. Kuhn and Leduc poker show each card to its owner only (Kuhn's
    cards J, Q, K; Leduc's Js, Jh, Qs, Qh, Ks, Kh); other games show what OpenSpiel's observation
    string gives the viewer (everything when there is no viewer).

    >>> from sp_wrappers.games.adapters import openspiel_env
    >>> env = openspiel_env("kuhn_poker")
    >>> env.reset(seed=1)
    >>> kuhn = OpenSpielNotation()
    >>> kuhn.legal_moves(env, env.infos["player_0"]["action_mask"])
    ['pass', 'bet']
    >>> print(kuhn.board(env, viewer="player_0"))
    Your card: Q
    Pot: 2
    """

    example = "call"

    @staticmethod
    def _state(env: Any) -> Any:
        return env.unwrapped.game_state

    @staticmethod
    def _player(env: Any, seat: str | None = None) -> int:
        raw = env.unwrapped
        return raw.possible_agents.index(seat or raw.agent_selection)

    def describe(self, action: int, env: Any) -> str:
        return self._state(env).action_to_string(self._player(env), int(action)).lower()

    def read(self, text: str, env: Any) -> int | None:
        state, player = self._state(env), self._player(env)
        names = {
            state.action_to_string(player, a).lower(): a
            for a in range(state.get_game().num_distinct_actions())
        }
        return names.get(text.lower(), int(text) if text.isdigit() else None)

    def board(self, env: Any, viewer: str | None = None) -> str:
        state = self._state(env)
        game = state.get_game()
        name = game.get_type().short_name
        if name in ("kuhn_poker", "leduc_poker"):
            return self._poker_board(env, state, name, viewer)
        hidden = "IMPERFECT" in str(game.get_type().information)
        if viewer is None or not hidden or state.is_terminal():
            return str(state)
        player = self._player(env, viewer)
        if game.get_type().provides_observation_string:
            return state.observation_string(player)
        return state.information_state_string(player)

    def _poker_board(self, env: Any, state: Any, name: str, viewer: str | None) -> str:
        """Kuhn and Leduc poker: the cards dealt (the private ones to their owner), the pot."""
        agents = env.unwrapped.possible_agents
        dealt = [step.action for step in state.full_history() if step.player < 0]
        private, public = dealt[: len(agents)], dealt[len(agents) :]

        def card(number: int) -> str:
            return RANKS[number] if name == "kuhn_poker" else RANKS[number // 2] + "sh"[number % 2]

        lines = []
        if name == "leduc_poker":
            lines.append(f"Board: {' '.join(card(c) for c in public) or '(none yet)'}")
        for seat, number in zip(agents, private, strict=False):
            if viewer is None or seat == viewer:
                lines.append(f"{'Your' if seat == viewer else seat} card: {card(number)}")
        if name == "kuhn_poker":
            bets = [s.action for s in state.full_history() if s.player >= 0].count(1)
            lines.append(f"Pot: {len(agents) + bets}")
        else:  # OpenSpiel's own account of the pot and each player's money (public)
            lines += [line for line in str(state).splitlines() if line.startswith(("Pot", "Money"))]
        return "\n".join(lines)
