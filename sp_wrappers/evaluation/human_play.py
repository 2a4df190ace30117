"""A person plays a policy move by move, through text streams.

:func:`play_session` plays one game between a person, reading moves from a text stream, and a
policy; ``sp-wrappers play`` (:mod:`sp_wrappers.cli.play`) runs it on a snapshot of a run.

The policy plays as in evaluation: the observation of its seat as training gave it, its actions
masked to the legal ones. Moves are read and written in the game's notation
(:mod:`sp_wrappers.games.notation`). A move that cannot be read or is not legal asks again,
naming the legal moves; Ctrl-C, the end of input or ``quit`` stop the game. A finished game
becomes one match row (:meth:`PlayOutcome.match_record`: ``player_a="human"``,
``source="play"``), which the ratings list with the players, on the snapshots' scale.
"""

from __future__ import annotations

import copy
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..archive.matches import HUMAN, PLAY_SOURCE
from .errors import PlayError, UnplayableGameError

__all__ = [
    "play_session",
    "PlayOutcome",
    "check_turn_based",
    "default_deterministic",
    "resolve_seat",
    "check_policy_spaces",
    "PlayError",
    "UnplayableGameError",
    "HUMAN",
    "PLAY_SOURCE",
]

#: Registered games played in real time, and the packages of such games.
REAL_TIME_GAMES = frozenset({"pong_v3", "quadrapong_v4", "simple_tag_v3"})
REAL_TIME_PACKAGES = ("pettingzoo.atari", "pettingzoo.butterfly", "pettingzoo.mpe", "mpe2")
_LIST_AT_MOST = 40  # legal moves listed before each move; more are listed on "?"
_PROG = "sp-wrappers"  # the command named in messages (this layer does not import the CLI)


def _refuse(name: str, why: str) -> UnplayableGameError:
    return UnplayableGameError(
        f"`{_PROG} play` is for turn-based games with action masks (tic-tac-toe, Connect Four, "
        f"chess, Go, hold'em, Kuhn and Leduc poker, ...); {name} {why}. Watch a snapshot play "
        f"it instead with `{_PROG} watch RUN_DIR`."
    )


def check_turn_based(name: str | None, game: Any = None) -> None:
    """Refuse a game a person cannot play move by move: Atari and MPE games by name (before
    building them), then a built ``game`` that is not an AEC env with a discrete action mask
    for every seat (in its observation, or OpenSpiel's legal moves in ``info["action_mask"]``
    for an OpenSpiel game such as Kuhn or Leduc poker).

    :raises UnplayableGameError: with a message pointing to ``sp-wrappers watch``.

    >>> check_turn_based("tictactoe_v3")
    >>> check_turn_based("boxing_v2")  # PettingZoo's Atari Boxing, by its name
    Traceback (most recent call last):
    ...
    sp_wrappers.evaluation.errors.UnplayableGameError: `sp-wrappers play` is for turn-based ...
    >>> check_turn_based("pong_v3")
    Traceback (most recent call last):
    ...
    sp_wrappers.evaluation.errors.UnplayableGameError: `sp-wrappers play` is for turn-based ...
    """
    label = name or type(game).__name__
    from ..games.registry import game_import_path

    module = (name and game_import_path(name) or name or "").partition(":")[0]
    if name in REAL_TIME_GAMES or module.startswith(REAL_TIME_PACKAGES):
        raise _refuse(label, "is played in real time, frame by frame")
    if game is None:
        return
    from gymnasium import spaces
    from pettingzoo.utils.env import AECEnv

    from ..core.seats import is_masked_dict_space
    from ..games.information import is_openspiel_game

    if not isinstance(game, AECEnv):
        raise _refuse(label, "is a parallel game: every agent moves at once")
    masks_in_info = is_openspiel_game(game)  # OpenSpiel's legal moves, in info["action_mask"]
    for seat in game.possible_agents:
        masked = masks_in_info or is_masked_dict_space(game.observation_space(seat))
        if not masked or not isinstance(game.action_space(seat), spaces.Discrete):
            raise _refuse(label, f"gives seat {seat!r} no action mask over discrete moves")


def default_deterministic(env_fn: Any) -> bool:
    """Whether a snapshot plays the game ``env_fn`` builds by its most likely move when neither
    ``--deterministic`` nor ``--sample`` is given: in games of perfect information (board
    games), yes; in games whose equilibria are mixed (hidden information, simultaneous moves:
    :func:`~sp_wrappers.games.information.mixed_equilibria`) it samples, since a poker bot that
    always makes its most likely move is read by its opponent.

    >>> from pettingzoo.classic import texas_holdem_v4, tictactoe_v3
    >>> default_deterministic(tictactoe_v3.env), default_deterministic(texas_holdem_v4.env)
    (True, False)
    """
    from ..games.information import mixed_equilibria

    env = env_fn()
    try:
        return not mixed_equilibria(env)
    finally:
        env.close()


@dataclass
class PlayOutcome:
    """How a game between a person and a policy went.

    :param opponent: the policy's ``policy_id`` (the snapshot id).
    :param human_seat: the person's seat; ``opponent_seats`` are the policy's.
    :param finished: whether the game reached its end (else ``stopped`` says why).
    :param score: the person's result, 1 win, 0.5 draw, 0 loss (the mean against each other
        seat); ``None`` when the game did not finish.
    :param moves: ``(seat, move)`` in the order played, moves in the game's notation.

    >>> outcome = PlayOutcome("snapshot-0003", "player_1", ["player_2"], finished=True, score=1.0)
    >>> record = outcome.match_record()
    >>> record["player_a"], record["player_b"], record["score_a"], record["source"]
    ('human', 'snapshot-0003', 1.0, 'play')
    """

    opponent: str
    human_seat: str
    opponent_seats: list[str]
    finished: bool = False
    stopped: str | None = None
    score: float | None = None
    returns: dict[str, float] = field(default_factory=dict)
    moves: list[tuple[str, str]] = field(default_factory=list)

    def match_record(self, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """The finished game as :meth:`~sp_wrappers.SnapshotArchive.record_match` takes it."""
        if not self.finished or self.score is None:
            raise ValueError("Only a finished game can be recorded; this one stopped early.")
        return dict(
            player_a=HUMAN,
            player_b=self.opponent,
            score_a=self.score,
            seat_a=self.human_seat,
            seat_b=self.opponent_seats[0] if self.opponent_seats else None,
            source=PLAY_SOURCE,
            config=config,
        )


def resolve_seat(seat: str | int, env: Any, notation: Any, rng: np.random.Generator) -> str:
    """An agent from its name, its index, what the game calls it (``white``, ``X``) or
    ``random``."""
    agents, text = list(env.possible_agents), str(seat)
    labels = {notation.seat_label(env, a).lower(): a for a in agents}
    labels.pop("", None)
    if text == "random":
        return agents[int(rng.integers(len(agents)))]
    if text.isdigit() and int(text) < len(agents):
        return agents[int(text)]
    if text in agents or text.lower() in labels:
        return text if text in agents else labels[text.lower()]
    names = ", ".join([f"{i} ({a})" for i, a in enumerate(agents)] + list(labels))
    raise PlayError(f"No seat {text!r} in this game; choose random or one of {names}.")


def check_policy_spaces(policy: Any, game: Any, seats: list[str]) -> None:
    """The policy must have been trained on the spaces of the seats it takes."""
    from ..archive.spaces import spaces_match
    from ..archive.store import IncompatibleSnapshotError
    from ..core.seats import seat_spaces

    trained = getattr(policy, "observation_space", None), getattr(policy, "action_space", None)
    if trained[0] is None or trained[1] is None:
        return
    for seat in seats:
        here = seat_spaces(game, seat, keep_dict_obs=False)
        if not (spaces_match(trained[0], here[0]) and spaces_match(trained[1], here[1])):
            raise IncompatibleSnapshotError(
                f"{policy.policy_id} was trained on observations {trained[0]} and actions "
                f"{trained[1]}, but seat {seat} of this game has {here[0]} and {here[1]}. Play "
                "it on the game it was trained on (--game, --game-kwarg)."
            )


class _Console:
    """The person's side: text out, moves in (echoed when the input is not a terminal)."""

    def __init__(self, input_stream: IO[str], output_stream: IO[str]) -> None:
        self.input, self.output = input_stream, output_stream
        isatty = getattr(input_stream, "isatty", None)
        self.echo = not (callable(isatty) and isatty())
        self.last_board = ""

    def say(self, text: str = "", end: str = "\n") -> None:
        self.output.write(text + end)
        self.output.flush()

    def board(self, text: str) -> None:
        """Draw a board, unless it is the very text drawn last (a final board shown twice)."""
        if text and text != self.last_board:
            self.say(text)
        self.last_board = text

    def moves(self, moves: list[str]) -> None:
        self.say("\n".join(textwrap.wrap(", ".join(moves), 78, initial_indent="Legal moves: ")))

    def human_move(self, notation: Any, game: Any, mask: np.ndarray) -> int | str:
        """The person's legal move, or why there is none (``"end of input"``, ``"quit"``)."""
        from ..games.notation import MoveError

        moves = notation.legal_moves(game, mask)
        if len(moves) <= _LIST_AT_MOST:
            self.moves(moves)
        else:
            self.say(f"{len(moves)} legal moves; ? lists them.")
        while True:
            self.say("Your move: ", end="")
            line = self.input.readline()
            if not line:
                self.say()
                return "end of input"
            if self.echo:  # a transcript of piped input reads like a terminal session
                self.say(line.rstrip("\n"))
            text = line.strip()
            if text.lower() in ("quit", "exit"):
                return "quit"
            if text in ("?", "help", "moves"):
                self.moves(moves)
            elif text:
                try:
                    return notation.parse(text, game, mask)
                except MoveError as error:
                    self.say(f"{error} Try again.")


def _build(game: str | Callable[[], Any] | Any) -> Any:
    """The AEC env of a game name, a function building it or the env itself (checked)."""
    from ..core.seats import as_aec_env
    from ..games.registry import game_factory

    name = game if isinstance(game, str) else None
    env = game_factory(game)() if name else (game if hasattr(game, "possible_agents") else game())
    check_turn_based(name or (getattr(env, "metadata", None) or {}).get("name"), env)
    return as_aec_env(env)


def play_session(
    game: str | Callable[[], Any] | Any,
    policy: Any,
    human_seat: str | int = "random",
    deterministic: bool | None = None,
    input_stream: IO[str] | None = None,
    output_stream: IO[str] | None = None,
    notation: Any = None,
    seed: int | None = None,
) -> PlayOutcome:
    """Play one game: a person, through text streams, against ``policy`` in every other seat.

    The board is drawn after every move, the legal moves are listed before each of the
    person's, the policy's moves are shown, and the result is printed at the end. Bad input
    asks again; Ctrl-C, the end of input and ``quit`` end the session with ``finished=False``.

    :param game: a registered game name or ``module:function``, a zero-argument function
        building the PettingZoo env, or the env itself.
    :param policy: the opponent (a :class:`~sp_wrappers.Policy`, e.g. a loaded snapshot).
    :param human_seat: the person's agent name, its index in ``possible_agents``, what the
        game calls the side (``"white"``, ``"X"``) or ``"random"``.
    :param deterministic: set the policy's ``deterministic`` (on a copy); ``None`` keeps it.
    :param input_stream: where moves are read, one a line (default ``sys.stdin``).
    :param output_stream: where the game is written (default ``sys.stdout``).
    :param notation: a :class:`~sp_wrappers.games.notation.Notation` (default: the game's).
    :param seed: seeds the game, the random seat and the policy's sampling.

    >>> import io
    >>> from sp_wrappers import RandomPolicy
    >>> moves = io.StringIO("5\\n1\\n2\\n3\\n4\\n6\\n7\\n8\\n9\\n" * 2)  # tried in turn
    >>> outcome = play_session("tictactoe_v3", RandomPolicy(), 0, input_stream=moves,
    ...                        output_stream=io.StringIO(), seed=0)
    >>> outcome.finished, outcome.human_seat, outcome.moves[0]
    (True, 'player_1', ('player_1', '5'))
    """
    from ..core.policies import PolicyPlayer, check_opponent_action, stack_observations
    from ..core.seats import SeatDriver
    from ..games.notation import notation_for

    console = _Console(input_stream or sys.stdin, output_stream or sys.stdout)
    env = _build(game)
    rng = np.random.default_rng(seed)
    notation = notation or notation_for(env)
    seat = resolve_seat(human_seat, env, notation, rng)
    outcome = PlayOutcome(policy.policy_id, seat, [a for a in env.possible_agents if a != seat])
    if deterministic is not None and hasattr(policy, "deterministic"):
        policy = copy.copy(policy)
        policy.deterministic = deterministic
    check_policy_spaces(policy, env, outcome.opponent_seats)
    player = PolicyPlayer(policy)  # keeps a recurrent policy's state through the game
    driver = SeatDriver(env, keep_dict_obs=False, illegal_action="raise")
    driver.reset(seat, seed=seed)
    label = notation.seat_label(env, seat)
    mode = {True: " (deterministic: its most likely move)", False: " (sampling its moves)"}
    console.say(
        f"You play {seat}{f' ({label})' if label else ''} against {policy.policy_id}"
        f"{mode.get(getattr(policy, 'deterministic', None), '')}. Type a move, ? for the legal "
        "moves, quit to stop."
    )
    console.board(notation.board(env, viewer=seat))
    try:
        while (turn := driver.next_turn()) is not None or not driver.learner_done:
            if turn is not None:  # the policy's move, masked to the legal ones
                masks = None if turn.action_mask is None else turn.action_mask[None]
                batch = stack_observations([turn.observation])
                chosen = player.act(batch, masks, rng, seats=[turn.seat])[0]
                space = env.action_space(turn.seat)
                action = check_opponent_action(policy, chosen, space, turn.action_mask, turn.seat)
                mover = turn.seat
                console.say(f"{policy.policy_id} ({mover}) plays {notation.describe(action, env)}")
            else:
                action = console.human_move(notation, env, driver.learner_mask())
                if isinstance(action, str):
                    outcome.stopped = action
                    console.say("The game was stopped before its end.")
                    return outcome
                mover = seat
            outcome.moves.append((mover, notation.describe(action, env)))
            driver.play(action)
            console.board(notation.board(env, viewer=seat))
    except KeyboardInterrupt:
        outcome.stopped = "interrupted"
        console.say("\nInterrupted: the game was stopped before its end.")
        return outcome
    outcome.finished, outcome.score = True, float(driver.outcome())
    outcome.returns = dict(driver.returns)
    console.say("Game over.")
    console.board(notation.board(env))  # hidden cards shown
    verdict = {1.0: "You win.", 0.5: "Draw.", 0.0: f"{policy.policy_id} wins."}
    returns = ", ".join(f"{a} {r:g}" for a, r in outcome.returns.items())
    console.say(f"{verdict.get(outcome.score, f'Your score: {outcome.score:g}.')} ({returns})")
    return outcome
