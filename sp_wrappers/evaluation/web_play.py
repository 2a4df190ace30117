"""Play a policy, or step through a replay, in a web page served on this machine.

:class:`WebPlay` is one person's games against a snapshot, driven by JSON messages (a move, the
policy's reply, undo, a new game with another snapshot, seat or mode); :class:`WebReplay` is a
recorded match to step through. :class:`WebServer` serves either with the standard library's
``ThreadingHTTPServer``: the page (``web_play.html``, one self-contained file: inline script and
style, nothing fetched from elsewhere) at ``/`` and the JSON messages at ``/api``; anything else
is refused, a bad message gets status 400 and a message saying why.

Beside the board the page shows what the policy thinks: its probabilities over the legal moves
(:func:`~sp_wrappers.evaluation.policy_probabilities.action_probabilities`, a heat map on the
board) and its value estimate where the policy has one (actor-critic learners). In a game where
the players see different things (:func:`~sp_wrappers.games.information.hidden_information`:
hold'em, Kuhn and Leduc poker) nothing computed from the policy's own observation (its cards)
reaches the page until the game is over: on the person's turns the page shows the policy's view
of the person's seat (computed from the person's own observation), after its moves only the move
played; a frame that draws every hand is shown only at the end. In games whose equilibria are
mixed (:func:`~sp_wrappers.games.information.mixed_equilibria`) the policy samples its moves by
default, and the page says which it does. Moves are in the
game's notation (:mod:`sp_wrappers.games.notation`): tic-tac-toe cells 1-9 by row, Connect Four
columns 1-7, Go coordinates, chess UCI. Tic-tac-toe, Connect Four, Go and chess are drawn as
boards; any other turn-based game with action masks as its own ``rgb_array`` frame with the list
of legal moves.

The policy acts through a :class:`~sp_wrappers.core.policies.PolicyPlayer`, so a recurrent policy
keeps its state through the game (undo replays the game to rebuild it). The archive is only read,
except that with ``record=True`` a finished game is stored as one match against ``"human"``,
exactly as ``sp-wrappers play --record`` stores it.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

import numpy as np

from .human_play import (
    HUMAN,
    PlayOutcome,
    check_policy_spaces,
    check_turn_based,
    default_deterministic,
    resolve_seat,
)
from .replay import Replay
from .web_board import board_view

__all__ = ["WebPlay", "WebReplay", "WebServer", "board_view"]

#: The largest request body the server reads, in bytes.
MAX_REQUEST_BYTES = 64 * 1024
_PROG = "sp-wrappers"


#: What the page says in a game with hidden information while the game is on.
HIDDEN_NOTE = (
    "The players see different things here: what it thinks of its own moves comes from its "
    "cards, so its probabilities and value are shown when the game is over."
)


class _BadRequest(ValueError):
    """A message the server refuses (status 400 with this text)."""


# ------------------------------------------------------------------------------------------------
# What the policy thinks
# ------------------------------------------------------------------------------------------------


def _value(policy: Any, observation: Any) -> float | None:
    """An actor-critic policy's value estimate of ``observation`` (its own seat's view)."""
    inner = getattr(policy, "policy", None)
    if getattr(policy, "family", None) != "actor_critic" or not hasattr(inner, "predict_values"):
        return None
    import torch

    from ..core.policies import stack_observations

    with torch.no_grad():
        tensor, _ = inner.obs_to_tensor(stack_observations([observation]))
        return float(inner.predict_values(tensor).reshape(-1)[0])


class _Thinker:
    """Reads a policy's probabilities over the legal moves and its value on one position."""

    def __init__(self, policy: Any) -> None:
        from .policy_probabilities import UnscorablePolicyError, as_scored_policy

        self.policy = policy
        self.note = ""
        try:
            self.scored = as_scored_policy(policy, deterministic=False)  # the distribution
        except UnscorablePolicyError as error:
            self.scored, self.note = None, str(error)
        if getattr(policy, "recurrent", False):
            self.scored = None
            self.note = (
                f"{policy.policy_id} is recurrent: its moves depend on its memory of the game, so "
                "its probabilities are not shown."
            )

    def think(self, observation: Any, mask: np.ndarray) -> dict[str, Any] | None:
        """``{"probabilities": {action: p}, "value": v or None}``, or ``None`` (see ``note``)."""
        if self.scored is None:
            return None
        from ..core.policies import stack_observations
        from .policy_probabilities import UnscorablePolicyError, action_probabilities

        try:
            rows = action_probabilities(self.scored, stack_observations([observation]), mask[None])
        except UnscorablePolicyError as error:
            self.scored, self.note = None, str(error)
            return None
        legal = np.flatnonzero(mask)
        probabilities = {int(a): float(rows[0][a]) for a in legal}
        return {"probabilities": probabilities, "value": _value(self.policy, observation)}


def _analysis_json(
    thought: dict[str, Any] | None, env: Any, notation: Any, seat: str, chosen: int | None = None
) -> dict[str, Any] | None:
    """A thought as the page reads it: moves in the game's notation, most likely first."""
    if thought is None:
        return None
    moves = [
        {"move": notation.describe(a, env), "p": round(p, 6)}
        for a, p in sorted(thought["probabilities"].items(), key=lambda item: -item[1])
    ]
    value = thought["value"]
    return {
        "seat": seat,
        "moves": moves,
        "value": None if value is None else round(value, 4),
        "chosen": None if chosen is None else notation.describe(chosen, env),
    }


# ------------------------------------------------------------------------------------------------
# One person's games against a policy
# ------------------------------------------------------------------------------------------------


class _Game:
    """One game in progress: the env, the seat driver, the moves played (for undo)."""

    def __init__(
        self,
        env_fn: Callable[[], Any],
        policy: Any,
        seat: str | int,
        seed: int | None,
        rng: np.random.Generator,
    ) -> None:
        from ..core.policies import PolicyPlayer
        from ..core.seats import as_aec_env
        from ..games.information import hidden_information
        from ..games.notation import notation_for

        self.env_fn, self.policy, self.seed, self.rng = env_fn, policy, seed, rng
        env = env_fn()
        check_turn_based((getattr(env, "metadata", None) or {}).get("name"), env)
        self.env = as_aec_env(env)
        self.notation = notation_for(self.env)
        self.hidden = hidden_information(self.env)  # the policy's view is private until the end
        self.seat = resolve_seat(seat, self.env, self.notation, rng)
        opponents = [a for a in self.env.possible_agents if a != self.seat]
        check_policy_spaces(policy, self.env, opponents)
        self.outcome = PlayOutcome(policy.policy_id, self.seat, opponents)
        self.player = PolicyPlayer(policy)
        self.thinker = _Thinker(policy)
        self.actions: list[tuple[str, int]] = []  # (seat, action) from the start
        self.replies: dict[int, dict[str, Any]] = {}  # ply -> what the policy thought there
        self.recorded = ""
        self._cache: tuple[int, Any] | None = None
        self._restart()

    def _restart(self) -> None:
        from ..core.seats import SeatDriver

        self.driver = SeatDriver(self.env, keep_dict_obs=False, illegal_action="raise")
        self.driver.reset(self.seat, seed=self.seed)
        self.player.reset()
        self.turn = self.driver.next_turn()

    @property
    def over(self) -> bool:
        return self.turn is None and self.driver.learner_done

    @property
    def human_to_move(self) -> bool:
        return self.turn is None and not self.driver.learner_done

    def human_mask(self) -> np.ndarray:
        return np.asarray(self.driver.learner_mask(), dtype=bool)

    def _play(self, seat: str, action: int) -> None:
        self.actions.append((seat, action))
        self.outcome.moves.append((seat, self.notation.describe(action, self.env)))
        self.driver.play(action)
        self.turn = self.driver.next_turn()
        self._cache = None
        if self.over:
            self.outcome.finished, self.outcome.score = True, float(self.driver.outcome())
            self.outcome.returns = dict(self.driver.returns)

    def move(self, text: Any) -> None:
        """The person's move, in the game's notation; refused unless it is legal now."""
        from ..games.notation import MoveError

        if self.over:
            raise _BadRequest("The game is over; start a new game.")
        if not self.human_to_move:
            raise _BadRequest(f"It is {self.policy.policy_id}'s move; wait for its reply.")
        if not isinstance(text, str) or not text.strip() or len(text) > 32:
            raise _BadRequest(f"A move is a short text in the game's notation, got {text!r}.")
        try:
            action = self.notation.parse(text, self.env, self.human_mask())
        except MoveError as error:
            raise _BadRequest(f"{error}") from None
        self._play(self.seat, action)

    def thought(self) -> dict[str, Any] | None:
        """What the policy thinks of the current position, from the side to move (its own on
        its turn; the person's seat on theirs, when the policy can observe that seat)."""
        if self._cache is not None and self._cache[0] == len(self.actions):
            return self._cache[1]
        thought = None
        if self.turn is not None and self.turn.action_mask is not None:
            thought = self.thinker.think(self.turn.observation, self.turn.action_mask)
        elif self.human_to_move and self.outcome.opponent_seats:
            try:
                check_policy_spaces(self.policy, self.env, [self.seat])
            except ValueError:
                thought = None  # trained on other spaces than the person's seat
            else:
                observation, mask = self.driver.learner_view()
                if mask is not None:
                    thought = self.thinker.think(observation, np.asarray(mask, dtype=bool))
        self._cache = (len(self.actions), thought)
        return thought

    def reply(self) -> None:
        """The policy's move, masked to the legal ones."""
        from ..core.policies import check_opponent_action, stack_observations

        if self.turn is None:
            raise _BadRequest("It is not the policy's move.")
        turn = self.turn
        thought = self.thought()
        masks = None if turn.action_mask is None else turn.action_mask[None]
        batch = stack_observations([turn.observation])
        chosen = self.player.act(batch, masks, self.rng, seats=[turn.seat])[0]
        space = self.env.action_space(turn.seat)
        action = check_opponent_action(self.policy, chosen, space, turn.action_mask, turn.seat)
        ply = len(self.actions)
        self.replies[ply] = _analysis_json(thought, self.env, self.notation, turn.seat, action) or {
            "seat": turn.seat,
            "moves": [],
            "value": None,
            "chosen": self.notation.describe(action, self.env),
        }
        self._play(turn.seat, action)

    def undo(self) -> None:
        """Take back the person's last move and the replies after it (the game is replayed
        from the start, so a recurrent policy's state is rebuilt as it was)."""
        from ..core.policies import stack_observations

        if self.recorded:
            raise _BadRequest("This game is recorded in the archive; start a new game.")
        if self.hidden:  # the same deal again, after its cards or its replies were seen
            raise _BadRequest(
                "Moves cannot be taken back in a game with hidden information: the same deal "
                "played again would show its cards; start a new game."
            )
        mine = [i for i, (seat, _) in enumerate(self.actions) if seat == self.seat]
        if not mine:
            raise _BadRequest("Nothing to undo: you have not moved yet.")
        kept = self.actions[: mine[-1]]
        self.actions, self.outcome.moves = [], []
        self.outcome.finished, self.outcome.score, self.outcome.returns = False, None, {}
        self.replies = {ply: r for ply, r in self.replies.items() if ply < len(kept)}
        self._restart()
        for seat, action in kept:
            if self.turn is not None and self.player.recurrent:  # its memory of the game
                turn = self.turn
                masks = None if turn.action_mask is None else turn.action_mask[None]
                self.player.act(stack_observations([turn.observation]), masks, None, [turn.seat])
            self._play(seat, action)

    def state(self) -> dict[str, Any]:
        env, notation = self.env, self.notation
        private = self.hidden and not self.over  # what the policy computes from its own cards
        thought = self.thought()
        if private and not self.human_to_move:
            thought = None  # its own view of its own turn
        probabilities = thought["probabilities"] if thought else None
        if self.human_to_move:
            mask = self.human_mask()
        else:
            mask = None  # nothing is clickable while the policy moves or after the end
        to_move = self.seat if self.human_to_move else (self.turn.seat if self.turn else None)
        legal = [] if mask is None else notation.legal_moves(env, mask)
        last = max(self.replies) if self.replies else None
        last_reply = self.replies.get(last) if last is not None else None
        if private and last_reply is not None:  # the move is public; why it was chosen is not
            last_reply = {**last_reply, "moves": [], "value": None}
        result = None
        if self.over:
            verdict = {1.0: "You win.", 0.5: "Draw.", 0.0: f"{self.policy.policy_id} wins."}
            score = self.outcome.score
            result = verdict.get(score, f"Your score: {score:g}.")  # type: ignore[arg-type]
        label = notation.seat_label(env, self.seat)
        return {
            "mode": "play",
            "opponent": self.policy.policy_id,
            "deterministic": bool(getattr(self.policy, "deterministic", True)),
            "hidden_information": self.hidden,
            "hidden_note": HIDDEN_NOTE if private else "",
            "seat": self.seat,
            "seat_label": label,
            "seats": list(env.possible_agents),
            "to_move": to_move,
            "your_turn": self.human_to_move,
            "waiting": self.turn is not None,
            "over": self.over,
            "result": result,
            "recorded": self.recorded,
            "board": board_view(
                env,
                notation,
                mask,
                probabilities,
                viewer=None if self.over else self.seat,
                hidden=self.hidden,
            ),
            "legal": legal,
            "moves": [{"seat": s, "move": m} for s, m in self.outcome.moves],
            "analysis": _analysis_json(thought, env, notation, to_move or ""),
            "analysis_note": self.thinker.note,
            "last_reply": last_reply,
            "can_undo": any(seat == self.seat for seat, _ in self.actions)
            and not (self.recorded or self.hidden),
        }


class WebPlay:
    """A person's games against a snapshot of an archive, one JSON message at a time.

    Messages (``{"type": ...}``): ``"state"``; ``"move"`` with ``"move"`` in the game's notation;
    ``"reply"`` (the policy plays its move); ``"undo"``; ``"new"`` with optional ``"snapshot"``,
    ``"seat"`` and ``"deterministic"``. Each answers ``{"state": ...}``; a message that cannot be
    carried out raises ``ValueError`` with the reason (the server's 400).

    :param open_archive: opens the archive (read for each new game; written only to record).
    :param env_fn: builds the PettingZoo game.
    :param snapshot: ``"latest"``, ``"best"`` or a snapshot id, as ``choose`` reads it.
    :param seat: the person's seat (an index, agent name, the side's name, or ``"random"``).
    :param deterministic: the snapshot takes its most likely move (``True``) or samples
        (``False``); ``None``: samples in games whose equilibria are mixed (hidden information,
        simultaneous moves: :func:`~sp_wrappers.evaluation.human_play.default_deterministic`),
        else its most likely move. The state's ``mode`` says which it does.
    :param record: store each finished game as a match of ``"human"`` against the snapshot.
    :param record_config: the game's configuration stored with a recorded match.
    :param seed: seeds the game, the random seat and the sampling.
    :param choose: ``(archive, which) -> snapshot id or info``, or a choice with
        ``load(archive, deterministic)`` for a mixture (default:
        :func:`~sp_wrappers.evaluation.replay.resolve_snapshot`).
    :param policy: play this policy instead of the archive's snapshots (``snapshot`` is then
        ignored; the archive is still where ``record`` writes).

    >>> import tempfile
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import RandomPolicy, SnapshotArchive
    >>> path = tempfile.mkdtemp()
    >>> web = WebPlay(lambda: SnapshotArchive(path), tictactoe_v3.env, policy=RandomPolicy(),
    ...               seat=0, seed=0)
    >>> state = web.handle({"type": "move", "move": "5"})["state"]
    >>> state["waiting"], web.handle({"type": "reply"})["state"]["your_turn"]
    (True, True)
    """

    def __init__(
        self,
        open_archive: Callable[[], Any],
        env_fn: Callable[[], Any],
        snapshot: str = "latest",
        seat: str | int = "random",
        deterministic: bool | None = None,
        record: bool = False,
        record_config: dict[str, Any] | None = None,
        seed: int | None = None,
        choose: Callable[[Any, str], Any] | None = None,
        policy: Any = None,
    ) -> None:
        from .replay import resolve_snapshot

        self.open_archive, self.env_fn = open_archive, env_fn
        self.record, self.record_config = record, record_config
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.choose = choose or resolve_snapshot
        self.lock = threading.Lock()
        #: whether the policy takes its most likely move when no one chose (see ``deterministic``)
        self.default_deterministic = default_deterministic(env_fn)
        self.options = {"snapshot": snapshot, "seat": seat, "deterministic": deterministic}
        self._fixed_policy = policy
        self._policies: dict[tuple[str, bool], Any] = {}
        self.snapshots: list[str] = []
        self.game = self._new_game()

    def _policy(self, snapshot: str, deterministic: bool) -> Any:
        if self._fixed_policy is not None:
            policy = copy.copy(self._fixed_policy)
            if hasattr(policy, "deterministic"):
                policy.deterministic = deterministic
            return policy
        with self._archive() as archive:
            self.snapshots = [info.id for info in archive.snapshots()]
            chosen = self.choose(archive, snapshot)
            if hasattr(chosen, "load"):  # a mixture (``nash``): the choice loads its members
                wanted = (getattr(chosen, "label", snapshot), tuple(chosen.weights.items()))
                if (wanted, deterministic) not in self._policies:
                    self._policies[wanted, deterministic] = chosen.load(archive, deterministic)
                return self._policies[wanted, deterministic]
            wanted = getattr(chosen, "id", chosen)
            if (wanted, deterministic) not in self._policies:
                self._policies[wanted, deterministic] = archive.load_policy(
                    wanted, deterministic=deterministic
                )
        return self._policies[wanted, deterministic]

    @contextmanager
    def _archive(self) -> Iterator[Any]:
        archive = self.open_archive()
        try:
            yield archive
        finally:
            archive.close()

    def _new_game(self) -> _Game:
        options = self.options
        chosen = options["deterministic"]
        deterministic = self.default_deterministic if chosen is None else bool(chosen)
        policy = self._policy(str(options["snapshot"]), deterministic)
        return _Game(self.env_fn, policy, options["seat"], self.seed, self.rng)

    def _mode(self) -> str:
        """Which moves the policy plays, in words, and why when it is the default."""
        deterministic = bool(getattr(self.game.policy, "deterministic", True))
        said = "It plays its most likely move" if deterministic else "It samples its moves"
        if self.options["deterministic"] is not None:
            return f"{said}, as chosen."
        if deterministic:
            return f"{said}: the default in games of perfect information."
        return (
            f"{said} from its probabilities: the default in games with hidden information or "
            "simultaneous moves, where a most likely move would be predictable."
        )

    def handle(self, message: Any) -> dict[str, Any]:
        """Carry out one message; ``{"state": ...}`` after it."""
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise _BadRequest('A message is a JSON object with a "type", e.g. {"type": "state"}.')
        kind = message["type"]
        with self.lock:
            if kind == "state":
                pass
            elif kind == "move":
                self.game.move(message.get("move"))
            elif kind == "reply":
                self.game.reply()
            elif kind == "undo":
                self.game.undo()
            elif kind == "new":
                self._start_new(message)
            else:
                raise _BadRequest(
                    f"Unknown message type {kind!r}; this page sends state, move, reply, undo "
                    "and new."
                )
            self._record_if_finished()
            state = self.game.state()
            state["snapshots"] = ["latest", "best", *self.snapshots]
            state["snapshot"] = self.options["snapshot"]
            state["record"] = self.record
            state["mode_note"] = self._mode()
            return {"state": state}

    def _start_new(self, message: dict[str, Any]) -> None:
        options = dict(self.options)
        for key, kinds in (("snapshot", (str,)), ("seat", (str, int)), ("deterministic", (bool,))):
            if key in message:
                if not isinstance(message[key], kinds) or isinstance(message[key], bool) != (
                    key == "deterministic"
                ):
                    raise _BadRequest(f"{key!r} has the wrong type: {message[key]!r}.")
                options[key] = message[key]
        if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", str(options["snapshot"])):
            raise _BadRequest(f"No snapshot {options['snapshot']!r}.")
        previous, self.options = self.options, options
        try:
            self.game = self._new_game()
        except Exception:
            self.options = previous
            raise

    def _record_if_finished(self) -> None:
        game = self.game
        if not (self.record and game.over and game.outcome.finished and not game.recorded):
            return
        with self._archive() as archive:
            archive.record_match(**game.outcome.match_record(self.record_config))
            game.recorded = (
                f"Recorded the game in {archive.path} as {HUMAN!r} against "
                f"{game.policy.policy_id}; `{_PROG} ratings` rates you on the snapshots' scale."
            )


# ------------------------------------------------------------------------------------------------
# A replay to step through
# ------------------------------------------------------------------------------------------------


class WebReplay:
    """A recorded match (:class:`~sp_wrappers.evaluation.replay.Replay` of a turn-based game),
    position by position, with what the player to move thought of each position.

    Messages: ``{"type": "state"}`` and ``{"type": "goto", "ply": n}`` (0 is the start, the
    number of moves the end).

    :param env_fn: builds the game the replay was played on (it is replayed move by move).
    :param replay: the match.
    :param policies: ``seat -> policy`` that played it (for the probabilities; a seat missing or
        a policy whose probabilities cannot be read shows none).

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import RandomPolicy, play_replay
    >>> replay = play_replay(tictactoe_v3.env, RandomPolicy(), RandomPolicy(), record_frames=False)
    >>> web = WebReplay(tictactoe_v3.env, replay, {s: RandomPolicy() for s in replay.players})
    >>> web.handle({"type": "goto", "ply": 1})["state"]["ply"]
    1
    """

    def __init__(self, env_fn: Callable[[], Any], replay: Replay, policies: dict[str, Any]) -> None:
        from ..core.seats import as_aec_env, conform_observation, seat_spaces
        from ..games.notation import notation_for

        if not replay.turn_based:
            raise ValueError(
                f"{replay.game} is played simultaneously; step through it as a video instead "
                f"(`{_PROG} watch RUN_DIR --out match.gif`)."
            )
        self.replay = replay
        env = as_aec_env(env_fn())
        notation = notation_for(env)
        env.reset(seed=replay.seed)
        thinkers = {seat: _Thinker(p) for seat, p in policies.items()}
        self.positions: list[dict[str, Any]] = []
        moves = iter(replay.moves)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            move = next(moves, None)
            if move is None:
                break
            action = int(move.actions[agent])
            mask = (getattr(env, "infos", None) or {}).get(agent, {}).get("action_mask")
            if isinstance(observation, dict) and "action_mask" in observation:
                mask = observation["action_mask"]
                observation = observation["observation"]
            mask = None if mask is None else np.asarray(mask, dtype=bool)
            obs = conform_observation(observation, seat_spaces(env, agent, keep_dict_obs=False)[0])
            thought = None
            if agent in thinkers and mask is not None:  # none for a recurrent policy (its note)
                thought = thinkers[agent].think(obs, mask)
            self.positions.append(self._position(env, notation, agent, thought, action, move.text))
            env.step(action)
        self.positions.append(self._position(env, notation, None, None, None, replay.result))
        env.close()
        self.notes = sorted({t.note for t in thinkers.values() if t.note})
        self.lock = threading.Lock()
        self.ply = 0

    def _position(
        self,
        env: Any,
        notation: Any,
        agent: str | None,
        thought: Any,
        action: int | None,
        text: str,
    ) -> dict[str, Any]:
        probabilities = thought["probabilities"] if thought else None
        board = board_view(env, notation, None, probabilities)
        chosen = None if action is None else notation.describe(action, env)
        return {
            "to_move": agent,
            "player": self.replay.players.get(agent or "", ""),
            "board": board,
            "next": text,
            "chosen": chosen,
            "analysis": _analysis_json(thought, env, notation, agent or "", action),
        }

    def handle(self, message: Any) -> dict[str, Any]:
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise _BadRequest('A message is a JSON object with a "type", e.g. {"type": "state"}.')
        with self.lock:
            if message["type"] == "goto":
                ply = message.get("ply")
                if not isinstance(ply, int) or isinstance(ply, bool):
                    raise _BadRequest(f"goto needs an integer ply, got {ply!r}.")
                self.ply = min(max(ply, 0), len(self.positions) - 1)
            elif message["type"] != "state":
                raise _BadRequest(
                    f"Unknown message type {message['type']!r}; a replay answers state and goto."
                )
            position = self.positions[self.ply]
            return {
                "state": {
                    "mode": "replay",
                    "title": f"{self.replay.game}: {self.replay.title}",
                    "result": self.replay.result,
                    "ply": self.ply,
                    "last": len(self.positions) - 1,
                    "moves": [m.text for m in self.replay.moves],
                    "analysis_note": " ".join(self.notes),
                    **position,
                }
            }


# ------------------------------------------------------------------------------------------------
# The server
# ------------------------------------------------------------------------------------------------


def _page() -> tuple[bytes, str]:
    """The page's bytes and its Content-Security-Policy (the inline script allowed by hash)."""
    text = resources.files(__package__).joinpath("web_play.html").read_text(encoding="utf-8")
    script = re.search(r"<script>(.*?)</script>", text, re.S)
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    csp = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'"
    )
    return text.encode("utf-8"), csp


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "sp-wrappers"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal shows the URL
        return

    def _send(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _host_ok(self) -> bool:
        """Only requests addressed to this server by its own name (no DNS rebinding)."""
        allowed = self.server.allowed_hosts
        return allowed is None or self.headers.get("Host", "") in allowed

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if not self._host_ok():
            self._json(403, {"error": "Unknown Host header; open the URL the server printed."})
        elif self.path.split("?")[0] in ("/", "/index.html"):
            page, csp = self.server.page
            self._send(200, page, "text/html; charset=utf-8", {"Content-Security-Policy": csp})
        else:
            self._json(404, {"error": f"No page {self.path[:80]!r} here; open /."})

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok():
            return self._json(
                403, {"error": "Unknown Host header; open the URL the server printed."}
            )
        if self.path != "/api":
            return self._json(404, {"error": "Messages go to /api."})
        if self.headers.get_content_type() != "application/json":
            return self._json(415, {"error": "Send the message as application/json."})
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self._json(411, {"error": "A message needs its Content-Length."})
        if not 0 < length <= MAX_REQUEST_BYTES:
            return self._json(413, {"error": f"A message is 1 to {MAX_REQUEST_BYTES} bytes."})
        body = self.rfile.read(length)
        try:
            message = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return self._json(400, {"error": f"The message is not JSON: {error}."})
        from ..core.errors import SpWrappersError

        try:
            answer = self.server.app.handle(message)
        except (_BadRequest, SpWrappersError, ValueError, KeyError) as error:
            text = error.args[0] if isinstance(error, KeyError) and error.args else error
            return self._json(400, {"error": str(text)})
        self._json(200, answer)


class _Server(ThreadingHTTPServer):
    # each request's thread is joined on close (HTTP/1.0: one request per connection), so no
    # thread is still in a forward pass while the interpreter exits (an abort after Ctrl-C)
    daemon_threads = False
    block_on_close = True
    app: Any
    page: tuple[bytes, str]
    allowed_hosts: set[str] | None


class WebServer:
    """Serves a :class:`WebPlay` or :class:`WebReplay` over HTTP: the page at ``/``, the JSON
    messages at ``/api``.

    :param app: what answers the messages.
    :param host: the address to listen on (default loopback: only this machine can connect).
    :param port: the TCP port; 0 picks a free one (``url`` says which).

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import RandomPolicy, play_replay
    >>> replay = play_replay(tictactoe_v3.env, RandomPolicy(), RandomPolicy(), record_frames=False)
    >>> with WebServer(WebReplay(tictactoe_v3.env, replay, {}), port=0) as server:
    ...     server.url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self.httpd = _Server((host, port), _Handler)
        self.httpd.app = app
        self.httpd.page = _page()
        self.host = host
        self.port = int(self.httpd.server_address[1])
        loopback = {"127.0.0.1", "localhost", "::1"}
        if host in loopback:
            names = {"127.0.0.1", "localhost", "[::1]"}
            self.httpd.allowed_hosts = {f"{name}:{self.port}" for name in names}
        else:
            self.httpd.allowed_hosts = None  # served to a network on request: any name
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        shown = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{shown}:{self.port}/"

    def serve_forever(self) -> None:
        """Serve until :meth:`close`, or until Ctrl-C: the server is closed (each request's
        thread joined) and the ``KeyboardInterrupt`` goes on to the caller, so a command ends
        with Ctrl-C's status (130) whether or not a move was played."""
        try:
            self.httpd.serve_forever(poll_interval=0.2)
        finally:
            self.httpd.server_close()

    def start(self) -> WebServer:
        """Serve from a background thread (tests, notebooks); :meth:`close` stops it."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.1,), daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> WebServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()
