"""Replays: one match between two players, recorded move by move.

This module holds :func:`play_replay` (play one match and record it), :class:`Replay` and
:class:`Move` (what it records), :func:`resolve_snapshot` (``"latest"``, ``"best"`` or an id) and
:func:`parse_opening`. :mod:`sp_wrappers.evaluation.replay_video` writes a replay as a GIF or MP4.

A *move* is one action of one seat in a turn-based game (tic-tac-toe, Connect Four, hold'em) and
one step of every seat together in a game PettingZoo declares parallelizable (Atari, MPE), which
is played through PettingZoo's own ``aec_to_parallel``. With ``record_frames`` the game is
rendered once after every move, so ``replay.frames[i]`` shows the game after move ``i + 1``
(``replay.start_frame`` before the first); a tic-tac-toe or Connect Four replay keeps its final
board (``replay.final_board``), where videos find the winning line. Build the game with
``render_mode="rgb_array"`` to record frames; without them a turn-based game is still readable
as text (:meth:`Replay.text`).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..archive.records import SnapshotInfo
from ..core.policies import (
    Policy,
    PolicyPlayer,
    RandomPolicy,
    check_opponent_action,
    stack_observations,
)
from ..core.seats import conform_observation, seat_spaces
from ..games.lines import board_cells
from ..games.notation import IndexNotation, Notation, notation_for
from .match import as_policy
from .openings import ForcedOpening

__all__ = [
    "Replay",
    "Move",
    "play_replay",
    "resolve_snapshot",
    "parse_opening",
]


@dataclass(frozen=True)
class Move:
    """One move of a replay.

    :param ply: the move's number, from 1.
    :param actions: ``seat -> action`` (one seat in a turn-based game, every live seat in a
        simultaneous one).
    :param text: the move in words (``"player_1 snapshot-0004: 5"``), in the game's notation
        (:mod:`sp_wrappers.games.notation`, as ``sp-wrappers play`` reads it).
    :param returns: every seat's return after the move.
    :param forced: the move was played by a forced opening.
    :param board: the board as text after the move (tic-tac-toe and Connect Four), else ``None``.
    :param move: the move alone in the game's notation (``"5"``), or ``None``.

    >>> Move(1, {"player_0": 3}, "player_0 random: 4", {"player_0": 0.0}).actions
    {'player_0': 3}
    """

    ply: int
    actions: dict[str, Any]
    text: str
    returns: dict[str, float]
    forced: bool = False
    board: str | None = None
    move: str | None = None


@dataclass
class Replay:
    """One recorded match between ``player_a`` (in ``seats_a``) and ``player_b`` (the others).

    ``final_board`` is the last position's board as PettingZoo holds it, one int per cell
    (:func:`~sp_wrappers.games.lines.board_cells`; tic-tac-toe and Connect Four, else ``None``).

    >>> replay = Replay("tictactoe_v3", "a", "b", {"player_1": "a", "player_2": "b"},
    ...                 ("player_1",), returns={"player_1": 1.0, "player_2": -1.0})
    >>> replay.outcome_a, replay.result
    (1.0, 'a (as player_1) wins')
    """

    game: str
    player_a: str
    player_b: str
    players: dict[str, str]  # seat -> player name
    seats_a: tuple[str, ...]
    moves: list[Move] = field(default_factory=list)
    frames: list[np.ndarray] = field(default_factory=list, repr=False)
    start_frame: np.ndarray | None = field(default=None, repr=False)
    returns: dict[str, float] = field(default_factory=dict)
    turn_based: bool = True
    finished: bool = True
    opening: tuple[int, ...] = ()
    seed: int = 0
    final_board: tuple[int, ...] | None = None

    @property
    def seats_b(self) -> tuple[str, ...]:
        return tuple(seat for seat in self.players if seat not in self.seats_a)

    def _side_return(self, seats: Sequence[str]) -> float:
        return float(np.mean([self.returns.get(s, 0.0) for s in seats])) if seats else 0.0

    @property
    def outcome_a(self) -> float:
        """``a``'s outcome from the returns: 1 ahead, 0.5 level, 0 behind."""
        mine, theirs = self._side_return(self.seats_a), self._side_return(self.seats_b)
        return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0

    def label(self, side: str) -> str:
        """``"NAME (as SEAT)"`` of side ``"a"`` or ``"b"``."""
        name, seats = (
            (self.player_a, self.seats_a) if side == "a" else (self.player_b, self.seats_b)
        )
        return f"{name} (as {', '.join(seats)})"

    @property
    def title(self) -> str:
        return f"{self.label('a')} vs {self.label('b')}"

    @property
    def result(self) -> str:
        """The result in words; a match cut short by ``max_moves`` says so. A simultaneous game
        adds the score: the sides' returns, or the points the screen shows where a seat loses
        points (:meth:`points`: Pong's ``1 : 0``, not its returns ``1 : -1``).

        >>> replay = Replay("pong_v3", "a", "b", {"first_0": "a", "second_0": "b"}, ("first_0",),
        ...                 turn_based=False, returns={"first_0": 1.0, "second_0": -1.0})
        >>> replay.moves = [Move(1, {}, "", {"first_0": 1.0, "second_0": -1.0})]
        >>> replay.result
        'a (as first_0) wins 1 : 0'
        """
        if self.turn_based:
            score = ""
        else:
            points = self.points()
            if points is None:
                mine, theirs = self._side_return(self.seats_a), self._side_return(self.seats_b)
            else:
                final = points[-1]
                mine, theirs = (
                    float(np.mean([final.get(seat, 0.0) for seat in seats])) if seats else 0.0
                    for seats in (self.seats_a, self.seats_b)
                )
            score = f" {mine:g} : {theirs:g}"
        if self.outcome_a == 0.5:
            text = "draw" + score
        else:
            winner = "a" if self.outcome_a == 1.0 else "b"
            text = f"{self.label(winner)} {'wins' if self.finished else 'leads'}{score}"
        if not self.finished:
            text += f" (stopped after {len(self.moves)} moves)"
        return text

    def points(self) -> list[dict[str, float]] | None:
        """Each seat's points after each move of a simultaneous game whose rewards go down as
        well as up (Pong: +1 to the seat that scores, -1 to the one that misses): the sum of its
        rewards above 0, what the screen counts; ``None`` for a turn-based game or one with no
        lost points (its returns are its points)."""
        if self.turn_based or not self.moves:
            return None
        rows: list[dict[str, float]] = []
        before = dict.fromkeys(self.moves[0].returns, 0.0)
        points = dict(before)
        lost = False
        for move in self.moves:
            for seat, total in move.returns.items():
                change = float(total) - before.get(seat, 0.0)
                points[seat] = points.get(seat, 0.0) + max(0.0, change)
                lost = lost or change < 0
                before[seat] = float(total)
            rows.append(dict(points))
        return rows if lost else None

    def text(self) -> str:
        """The match move by move (turn-based games), with the board where it can be drawn."""
        if not self.turn_based:
            raise ValueError(
                f"{self.game} is played simultaneously, move by move it is only numbers; write it "
                "as a video with sp_wrappers.evaluation.replay_video.write_replay "
                "(sp-wrappers watch --out)."
            )
        lines = [f"{self.game}: {self.title}"]
        if self.opening:
            forced = [m.move or str(next(iter(m.actions.values()))) for m in self.moves if m.forced]
            lines.append(f"forced opening: {' '.join(forced)}")
        for move in self.moves:
            lines.append(f"{move.ply:3d}. {move.text}{'  (opening)' if move.forced else ''}")
            if move.board:
                lines.extend("     " + row for row in move.board.splitlines())
        lines.append(f"result: {self.result}")
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Players
# ------------------------------------------------------------------------------------------------


def resolve_snapshot(archive: Any, which: str) -> str:
    """The snapshot id that ``which`` names: ``"latest"``, ``"best"`` (the highest Bradley-Terry
    rating over the match history, else the highest stored Elo) or an id of the archive.

    >>> import tempfile
    >>> from sp_wrappers.archive.store import SnapshotArchive
    >>> resolve_snapshot(SnapshotArchive(tempfile.mkdtemp()), "latest")
    Traceback (most recent call last):
    ...
    ValueError: The archive ... has no snapshots yet; train first (sp-wrappers train).
    """
    snapshots = archive.snapshots()
    if not snapshots:
        raise ValueError(
            f"The archive {archive.path} has no snapshots yet; train first (sp-wrappers train)."
        )
    if which == "latest":
        return snapshots[-1].id
    if which == "best":
        from ..ratings.archive_ratings import archive_ratings

        try:
            rated = [s for s in archive_ratings(archive).snapshots if np.isfinite(s.rating)]
        except ValueError:  # no games yet
            rated = []
        if rated:
            return max(rated, key=lambda s: (s.rating, s.step)).id
        by_elo = [s for s in snapshots if "elo" in s.ratings]
        if by_elo:
            return max(by_elo, key=lambda s: (s.ratings["elo"], s.step)).id
        raise ValueError(
            f"No snapshot of {archive.path} has a rating yet, so none is 'best'; name one by id "
            f"({snapshots[0].id} ... {snapshots[-1].id}) or use 'latest'."
        )
    archive.get(which)  # a KeyError naming the known ids
    return which


def _as_player(player: Any, archive: Any, deterministic: bool) -> Policy:
    if isinstance(player, SnapshotInfo):
        player = player.id
    if isinstance(player, str) and archive is not None:
        player = resolve_snapshot(archive, player)  # "latest", "best"
    return as_policy(player, "sb3", archive, deterministic)


def parse_opening(text: str | None, env_fn: Callable[[], Any] | None = None) -> tuple[int, ...]:
    """A forced opening a person typed, as PettingZoo action indices.

    With ``env_fn`` the moves are in the game's notation, the one ``sp-wrappers play`` reads
    (tic-tac-toe cells 1-9 row by row, Connect Four columns 1-7; see
    :func:`~sp_wrappers.games.notation.parse_moves`) and each is checked legal; without it, they
    are action indices.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> parse_opening("5,1", tictactoe_v3.env), parse_opening("3 4"), parse_opening(None)
    ((4, 0), (3, 4), ())
    """
    if not text:
        return ()
    if env_fn is not None:
        from ..core.seats import as_aec_env
        from ..games.notation import parse_moves

        env = env_fn()
        try:
            return parse_moves(text, as_aec_env(env))
        finally:
            env.close()
    try:
        return tuple(int(part) for part in text.replace(",", " ").split())
    except ValueError:
        raise ValueError(
            f"An opening is a list of action indices such as '3,4', got {text!r}."
        ) from None


# ------------------------------------------------------------------------------------------------
# Playing
# ------------------------------------------------------------------------------------------------


def _move_text(notation: Notation, game: Any, action: Any) -> str:
    """``action`` in the game's notation (``"action N"`` in a game without one)."""
    if isinstance(notation, IndexNotation):
        return f"action {action}"
    return notation.describe(int(action), game)


def _frame(game: Any) -> np.ndarray:
    # a game whose render() prints its state (Shimmy's OpenSpiel games print a Kuhn deal as
    # "1 0") must not write to the caller's output: a report or a benchmark's lines
    with contextlib.redirect_stdout(io.StringIO()):
        frame = game.render()
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] not in (3, 4):
        raise ValueError(
            f"The game gave no rgb_array frame (render() returned {type(frame).__name__}); build "
            "it with render_mode='rgb_array', or play without frames (record_frames=False)."
        )
    return np.ascontiguousarray(frame[:, :, :3], dtype=np.uint8)


class _Seat:
    """One seat's policy and what it needs to act: spaces, mask, observation form."""

    def __init__(self, game: Any, seat: str, policy: Policy) -> None:
        self.seat = seat
        self.obs_space, self.action_space = seat_spaces(game, seat, keep_dict_obs=False)
        inner = policy.policy if isinstance(policy, ForcedOpening) else policy
        if isinstance(inner, RandomPolicy):  # a game without masks: play in the seat's space
            inner = inner.in_space(self.action_space)
            if isinstance(policy, ForcedOpening):
                policy.policy = inner
            else:
                policy = inner
        expected = getattr(getattr(inner, "observation_space", None), "shape", None)
        if expected is not None and expected != self.obs_space.shape:
            raise ValueError(
                f"{policy.policy_id} expects observations of shape {expected}, but seat {seat!r} "
                f"of this game gives {self.obs_space.shape}; play it on the game its run was "
                "trained on (config.json's game and game_kwargs, or --game)."
            )
        self.policy = policy
        self.player = PolicyPlayer(policy)  # one game: a recurrent policy keeps its state

    def act(self, obs: Any, info: Mapping[str, Any] | None, rng: np.random.Generator) -> Any:
        mask = None
        if isinstance(obs, dict) and "action_mask" in obs:
            mask = np.asarray(obs["action_mask"], dtype=bool)
            obs = obs.get("observation")
        elif info and info.get("action_mask") is not None:
            mask = np.asarray(info["action_mask"], dtype=bool)
        batch = stack_observations([conform_observation(obs, self.obs_space)])
        action = self.player.act(batch, None if mask is None else mask[None], rng)[0]
        return check_opponent_action(self.policy, action, self.action_space, mask, self.seat)


def _add_rewards(returns: dict[str, float], rewards: Mapping[str, Any]) -> None:
    for seat, reward in rewards.items():
        returns[seat] = returns.get(seat, 0.0) + float(reward)


def _is_simultaneous(env: Any) -> bool:
    from pettingzoo.utils.env import ParallelEnv

    return isinstance(env, ParallelEnv) or bool(env.metadata.get("is_parallelizable", False))


def play_replay(
    env_fn: Callable[[], Any],
    player_a: Any,
    player_b: Any,
    archive: Any = None,
    seat: str | Sequence[str] | None = None,
    opening: Sequence[int] = (),
    seed: int = 0,
    max_moves: int | None = None,
    deterministic: bool = False,
    record_frames: bool = True,
) -> Replay:
    """Play one match between two players and record it move by move.

    :param env_fn: builds the PettingZoo game (AEC or Parallel); with ``record_frames`` it must
        render ``rgb_array`` frames (``render_mode="rgb_array"``).
    :param player_a: a policy, an SB3 model, or with ``archive`` a snapshot id, ``"latest"`` or
        ``"best"`` (see :func:`resolve_snapshot`).
    :param player_b: likewise; it takes every seat ``a`` does not.
    :param archive: a :class:`~sp_wrappers.SnapshotArchive` to load snapshots from.
    :param seat: ``a``'s seat or seats (default: the game's first seat, which moves first).
    :param opening: forced first moves (action indices, both players'), turn-based games only.
    :param seed: the game's reset seed and the players' random generator's seed.
    :param max_moves: stop after this many moves (the replay is then marked unfinished); a bound
        for long real-time games such as Atari Pong.
    :param deterministic: snapshots take their most likely action instead of sampling.
    :param record_frames: render the game after every move.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers.games.baselines import PerfectTicTacToePolicy
    >>> replay = play_replay(lambda: tictactoe_v3.env(render_mode="rgb_array"),
    ...                      PerfectTicTacToePolicy(), RandomPolicy(), opening=(4,))
    >>> len(replay.frames) == len(replay.moves), replay.moves[0].text, replay.outcome_a > 0
    (True, 'player_1 minimax: 5', True)
    """
    if max_moves is not None and max_moves < 1:
        raise ValueError(f"max_moves must be at least 1 (or None), got {max_moves}.")
    if archive is not None:
        from ..archive.store import as_archive

        archive = as_archive(archive, create=False, owner="play_replay(archive=...)")
    policy_a = _as_player(player_a, archive, deterministic)
    policy_b = _as_player(player_b, archive, deterministic)
    env = env_fn()
    simultaneous = _is_simultaneous(env)
    if simultaneous and opening:
        env.close()
        raise ValueError(
            f"{env.metadata.get('name', 'This game')} is played simultaneously; forced openings "
            "are for turn-based games. Drop the opening."
        )
    agents = list(env.possible_agents)
    seats_a = (agents[0],) if seat is None else (seat,) if isinstance(seat, str) else tuple(seat)
    unknown = sorted(set(seats_a) - set(agents))
    if unknown or len(seats_a) == len(agents):
        env.close()
        raise ValueError(
            f"Seats {list(seats_a)} for player a do not fit the game's seats {agents}; give it "
            "one or more of them and leave at least one to player b."
        )
    if opening:
        policy_a, policy_b = ForcedOpening.pair(policy_a, policy_b, opening)
    replay = Replay(
        game=str(env.metadata.get("name", type(env.unwrapped).__name__)),
        player_a=policy_a.policy_id,
        player_b=policy_b.policy_id,
        players={s: policy_a.policy_id if s in seats_a else policy_b.policy_id for s in agents},
        seats_a=seats_a,
        turn_based=not simultaneous,
        opening=tuple(int(a) for a in opening),
        seed=int(seed),
    )
    play = _play_simultaneous if simultaneous else _play_turns
    try:
        play(
            env,
            {s: policy_a if s in seats_a else policy_b for s in agents},
            replay,
            max_moves,
            record_frames,
        )
    finally:
        env.close()
    return replay


def _play_turns(
    env: Any,
    policies: dict[str, Policy],
    replay: Replay,
    max_moves: int | None,
    record_frames: bool,
) -> None:
    from ..core.seats import as_aec_env

    game = as_aec_env(env)
    notation = notation_for(game)
    game.reset(seed=replay.seed)
    rng = np.random.default_rng(replay.seed)
    seats = {s: _Seat(game, s, p) for s, p in policies.items()}
    replay.returns = {s: 0.0 for s in game.possible_agents}
    if record_frames:
        replay.start_frame = _frame(game)
    replay.final_board = board_cells(game)
    for agent in game.agent_iter():
        obs, _, terminated, truncated, info = game.last()
        if terminated or truncated:
            game.step(None)
            continue
        if max_moves is not None and len(replay.moves) >= max_moves:
            replay.finished = False
            break
        action = seats[agent].act(obs, info, rng)
        move = _move_text(notation, game, action)  # named in the position it is played from
        game.step(action)
        _add_rewards(replay.returns, game.rewards)
        ply = len(replay.moves) + 1
        if record_frames:
            replay.frames.append(_frame(game))
        replay.moves.append(
            Move(
                ply=ply,
                actions={agent: action},
                text=f"{agent} {replay.players[agent]}: {move}",
                returns=dict(replay.returns),
                forced=ply <= len(replay.opening),
                board=notation.board(game) or None,
                move=move,
            )
        )
        replay.final_board = board_cells(game)


def _play_simultaneous(
    env: Any,
    policies: dict[str, Policy],
    replay: Replay,
    max_moves: int | None,
    record_frames: bool,
) -> None:
    from pettingzoo.utils.conversions import aec_to_parallel
    from pettingzoo.utils.env import ParallelEnv

    game = env if isinstance(env, ParallelEnv) else aec_to_parallel(env)
    observations, infos = game.reset(seed=replay.seed)
    rng = np.random.default_rng(replay.seed)
    seats = {s: _Seat(game, s, p) for s, p in policies.items()}
    replay.returns = {s: 0.0 for s in game.possible_agents}
    if record_frames:
        replay.start_frame = _frame(game)
    while game.agents:
        if max_moves is not None and len(replay.moves) >= max_moves:
            replay.finished = False
            break
        actions = {s: seats[s].act(observations[s], infos.get(s), rng) for s in game.agents}
        observations, rewards, _, _, infos = game.step(actions)
        _add_rewards(replay.returns, rewards)
        if record_frames:
            replay.frames.append(_frame(game))
        ply = len(replay.moves) + 1
        score = " : ".join(f"{replay.returns[s]:g}" for s in replay.returns)
        replay.moves.append(Move(ply, dict(actions), f"score {score}", dict(replay.returns)))
