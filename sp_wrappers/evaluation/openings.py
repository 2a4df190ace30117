"""Games from forced openings: every game starts with given moves, then the players take over.

A deterministic learner against a bot whose ties are rare replays the same few games however many
seeds it is given, so "50 wins in 100 games" may be one won game and one drawn game, each repeated
fifty times. Forcing the first moves spreads the games over the openings of the game (the 49
two-move openings of Connect Four, the 9 first moves of tic-tac-toe) and makes the spread
measurable: results per seat and per opening, the number of distinct games played, and an interval
that resamples openings rather than games.

>>> from pettingzoo.classic import tictactoe_v3
>>> from sp_wrappers.core.policies import RandomPolicy
>>> openings = legal_openings(tictactoe_v3.env, plies=1)
>>> len(openings), openings[:3]
(9, [(0,), (1,), (2,)])
>>> result = play_openings(tictactoe_v3.env, RandomPolicy(), RandomPolicy(policy_id="r2"), openings)
>>> result.n_games, sorted(result.by_seat()), result.games[0].moves[0]
(18, ['player_1', 'player_2'], 0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.policies import Observations, PolicyPlayer, act_in_games, stack_observations
from ..core.seats import as_aec_env, seat_spaces
from ..envs.selfplay_env import SelfPlayEnv
from .match import MatchResult, as_policy, with_action_space

__all__ = [
    "legal_openings",
    "legal_actions",
    "play_openings",
    "OpeningsResult",
    "OpeningGame",
    "ForcedOpening",
    "spread_match",
]


def legal_actions(game: Any, agent: str) -> list[int]:
    """The legal actions of ``agent`` in an AEC game: its action mask (in the observation or in
    ``info``), else every action of its ``Discrete`` space."""
    obs = game.observe(agent)
    if isinstance(obs, dict) and "action_mask" in obs:
        return [int(a) for a in np.flatnonzero(obs["action_mask"])]
    mask = (game.infos.get(agent) or {}).get("action_mask")
    if mask is not None:
        return [int(a) for a in np.flatnonzero(mask)]
    space = game.action_space(agent)
    if not hasattr(space, "n"):
        raise TypeError(
            f"Openings are sequences of discrete actions; seat {agent!r} has {space}. "
            "Pass the openings yourself or use plies=0."
        )
    return list(range(int(space.n)))


def legal_openings(env_fn: Callable[[], Any], plies: int) -> list[tuple[int, ...]]:
    """Every sequence of ``plies`` legal moves from the start of a turn-based game.

    Sequences that end the game before their last move are left out. The game is replayed from
    ``reset(seed=0)`` for every prefix, so this suits games with a handful of plies and a small
    branching factor (``7 ** 2`` openings of Connect Four, not chess).

    :param env_fn: builds the PettingZoo game (AEC or Parallel).
    :param plies: moves per opening, counting both players' (0 gives ``[()]``).
    """
    if plies < 0:
        raise ValueError(f"plies must be >= 0, got {plies}.")
    openings: list[tuple[int, ...]] = [()]
    for _ in range(plies):
        longer = []
        for opening in openings:
            game = as_aec_env(env_fn())
            game.reset(seed=0)
            for action in opening:
                game.step(action)
            agent = game.agent_selection
            if not game.agents or game.terminations[agent] or game.truncations[agent]:
                game.close()
                continue
            longer.extend(opening + (a,) for a in legal_actions(game, agent))
            game.close()
        openings = longer
    return openings


class _Script:
    """The opening being forced and every move played so far in the current game."""

    def __init__(self, opening: Sequence[int]) -> None:
        self.opening = tuple(int(a) for a in opening)
        self.moves: list[Any] = []


class ForcedOpening:
    """A policy that plays a shared opening's next move while it lasts, then its own.

    Both players of a game wrap their policies around the same script, so the moves of the
    opening go to whichever seat is to move at each ply; every move either plays (forced or
    chosen) is appended to ``script.moves``. Meant for turn-based games where each ``act`` call
    is one move of one seat (a batch of one), as in :class:`~sp_wrappers.SelfPlayEnv`.

    A policy that keeps a state between moves (``recurrent``, e.g. RecurrentPPO) gets the
    caller's ``state_keys``, and sees the observations of the forced moves of its seat too (its
    choice is overruled), so its memory holds the whole game as if it had played them.

    :param policy: the policy that plays once the opening is over.
    :param script: the shared opening (make one per game with :meth:`pair`).

    >>> from sp_wrappers.core.policies import RandomPolicy
    >>> a, b = ForcedOpening.pair(RandomPolicy(), RandomPolicy(), opening=(4, 0))
    >>> rng = np.random.default_rng(0)
    >>> board, masks = np.zeros((1, 3, 3, 2)), np.ones((1, 9), dtype=bool)
    >>> int(a.act(board, masks, rng)[0]), int(b.act(board, masks, rng)[0]), a.script.moves
    (4, 0, [4, 0])
    """

    def __init__(self, policy: Any, script: _Script) -> None:
        self.policy = policy
        self.script = script
        self.policy_id = policy.policy_id

    @classmethod
    def pair(
        cls, policy_a: Any, policy_b: Any, opening: Sequence[int]
    ) -> tuple[ForcedOpening, ForcedOpening]:
        """Both players of one game, sharing a fresh script of ``opening``."""
        script = _Script(opening)
        return cls(policy_a, script), cls(policy_b, script)

    @property
    def recurrent(self) -> bool:
        """Whether the wrapped policy keeps a state between moves (callers pass ``state_keys``)."""
        return bool(getattr(self.policy, "recurrent", False))

    def act(
        self,
        observations: Observations,
        action_masks: np.ndarray | None,
        rng: np.random.Generator | None,
        state_keys: Sequence[Hashable] | None = None,
    ) -> np.ndarray:
        """The opening's next move (batch of one), or the wrapped policy's actions after it.

        :param state_keys: passed on to a recurrent wrapped policy (see :func:`act_in_games`).
        """
        ply = len(self.script.moves)
        if ply < len(self.script.opening):
            action = self.script.opening[ply]
            if action_masks is not None:
                masks = np.asarray(action_masks)
                if masks.shape[0] != 1:
                    raise ValueError(
                        f"A forced opening plays one game at a time; got a batch of "
                        f"{masks.shape[0]} observations. Play each game in its own env."
                    )
                if not masks[0, action]:
                    raise ValueError(
                        f"Opening {self.script.opening} plays the illegal action {action} at ply "
                        f"{ply}; build openings with legal_openings()."
                    )
            actions = np.array([action], dtype=np.int64)
            if self.recurrent and state_keys is not None:  # the memory sees the forced move
                act_in_games(self.policy, observations, action_masks, rng, state_keys)
        elif state_keys is None:  # a recurrent policy refuses this: it needs its state
            actions = np.asarray(self.policy.act(observations, action_masks, rng))
        else:
            actions = np.asarray(
                act_in_games(self.policy, observations, action_masks, rng, state_keys)
            )
        first = actions[0]
        self.script.moves.append(int(first) if np.ndim(first) == 0 else tuple(first.tolist()))
        return actions

    def __repr__(self) -> str:
        return f"ForcedOpening({self.policy!r}, opening={self.script.opening})"


@dataclass(frozen=True)
class OpeningGame:
    """One game played from a forced opening, from player ``a``'s side.

    :param opening: the forced moves.
    :param seat: ``a``'s seat.
    :param repeat: the repetition index (0 when each opening is played once per seat).
    :param outcome: ``a``'s outcome: 1 win, 0.5 draw, 0 loss.
    :param return_a: ``a``'s return (the sum of its rewards: chips, points).
    :param return_b: the opponent's return.
    :param moves: every move of the game, both players', the opening included.
    """

    opening: tuple[int, ...]
    seat: str
    repeat: int
    outcome: float
    return_a: float
    return_b: float
    moves: tuple[Any, ...]


def _wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


@dataclass
class OpeningsResult:
    """Every game of :func:`play_openings`, with the summaries a strength report needs.

    >>> games = [OpeningGame((0,), "x", 0, 1.0, 1.0, -1.0, (0, 1)),
    ...          OpeningGame((0,), "o", 0, 0.5, 0.0, 0.0, (0, 2)),
    ...          OpeningGame((1,), "x", 0, 1.0, 1.0, -1.0, (1, 2))]
    >>> result = OpeningsResult("a", "b", games)
    >>> result.wdl(), result.by_seat(), result.distinct_games()
    ((2, 1, 0), {'o': (0, 1, 0), 'x': (2, 0, 0)}, 3)
    """

    player_a: str
    player_b: str
    games: list[OpeningGame] = field(default_factory=list)

    @property
    def n_games(self) -> int:
        return len(self.games)

    def wdl(self, games: Sequence[OpeningGame] | None = None) -> tuple[int, int, int]:
        """Wins, draws and losses of ``a``."""
        games = self.games if games is None else games
        counts = Counter(g.outcome for g in games)
        return counts[1.0], len(games) - counts[1.0] - counts[0.0], counts[0.0]

    def by_seat(self) -> dict[str, tuple[int, int, int]]:
        """``seat -> (wins, draws, losses)`` of ``a``."""
        seats = sorted({g.seat for g in self.games})
        return {s: self.wdl([g for g in self.games if g.seat == s]) for s in seats}

    def by_opening(self) -> dict[tuple[int, ...], tuple[int, int, int]]:
        """``opening -> (wins, draws, losses)`` of ``a`` (both seats together)."""
        openings = dict.fromkeys(g.opening for g in self.games)
        return {o: self.wdl([g for g in self.games if g.opening == o]) for o in openings}

    def distinct_games(self) -> int:
        """How many different games (move sequences) were played."""
        return len({g.moves for g in self.games})

    @property
    def score(self) -> float:
        """``a``'s mean outcome."""
        return float(np.mean([g.outcome for g in self.games])) if self.games else float("nan")

    @property
    def mean_return(self) -> float:
        """``a``'s mean return per game (chips, points)."""
        return float(np.mean([g.return_a for g in self.games])) if self.games else float("nan")

    def win_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Wilson interval of ``a``'s win rate, treating games as independent."""
        z = {0.9: 1.645, 0.95: 1.96, 0.99: 2.576}.get(level)
        if z is None:
            raise ValueError(f"level must be 0.9, 0.95 or 0.99, got {level}.")
        return _wilson(self.wdl()[0], self.n_games, z)

    def bootstrap(
        self, statistic: str = "win", level: float = 0.95, n_boot: int = 2000, seed: int = 0
    ) -> tuple[float, float]:
        """Percentile interval of a rate, resampling whole openings (both seats, every repeat).

        With a single opening (ordinary seeded games, ``openings=[()]``) the games themselves are
        resampled.

        :param statistic: ``"win"`` (win rate), ``"score"`` (mean outcome) or ``"return"``.
        :param level: the interval's coverage.
        :param n_boot: bootstrap resamples.
        :param seed: seeds the resampling.
        """
        values = {
            "win": lambda g: float(g.outcome == 1.0),
            "score": lambda g: g.outcome,
            "return": lambda g: g.return_a,
        }
        if statistic not in values:
            raise ValueError(f"statistic must be one of {sorted(values)}, got {statistic!r}.")
        if not self.games:
            return float("nan"), float("nan")
        by_opening = len({g.opening for g in self.games}) > 1
        groups: dict[Any, list[float]] = {}
        for index, g in enumerate(self.games):
            groups.setdefault(g.opening if by_opening else index, []).append(values[statistic](g))
        sums = np.array([sum(v) for v in groups.values()])
        counts = np.array([len(v) for v in groups.values()])
        rng = np.random.default_rng(seed)
        picks = rng.integers(len(sums), size=(n_boot, len(sums)))
        rates = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
        tail = (1.0 - level) / 2
        low, high = np.quantile(rates, [tail, 1.0 - tail])
        return float(low), float(high)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary (no per-game list)."""
        wins, draws, losses = self.wdl()
        return {
            "games": self.n_games,
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "score": self.score,
            "mean_return": self.mean_return,
            "by_seat": {seat: list(wdl) for seat, wdl in self.by_seat().items()},
            "openings": len({g.opening for g in self.games}),
            "distinct_games": self.distinct_games(),
            "win_rate_ci95_bootstrap_openings": list(self.bootstrap("win")),
            "score_ci95_bootstrap_openings": list(self.bootstrap("score")),
            "win_rate_ci95_wilson": list(self.win_interval()),
            "by_opening": {
                seat: {
                    " ".join(map(str, o)) or "-": list(wdl)
                    for o, wdl in OpeningsResult(
                        self.player_a, self.player_b, [g for g in self.games if g.seat == seat]
                    )
                    .by_opening()
                    .items()
                }
                for seat in self.by_seat()
            },
        }


def play_openings(
    env_fn: Callable[[], Any],
    policy_a: Any,
    policy_b: Any,
    openings: Sequence[Sequence[int]],
    seats: Sequence[str] | None = None,
    repeats: int = 1,
    seed: int = 0,
) -> OpeningsResult:
    """Play every opening from every seat of ``a`` (``repeats`` times each); ``b`` takes the rest.

    Game ``i`` (counting over openings, then seats, then repeats) is reset with ``seed + i``;
    the opening's moves are played by force (:class:`ForcedOpening`), whichever seat is to move,
    then each player chooses its own. ``openings=[()]`` with ``repeats=n`` plays ``n`` ordinary
    games per seat.

    :param env_fn: builds the PettingZoo game.
    :param policy_a: a policy or an SB3 model (played deterministically).
    :param policy_b: likewise.
    :param openings: sequences of actions (:func:`legal_openings`).
    :param seats: ``a``'s seats (default: every seat).
    :param repeats: games per opening and seat.
    :param seed: the first game's reset seed.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}.")
    a = as_policy(policy_a, "a")
    b = as_policy(policy_b, "b")
    game = as_aec_env(env_fn())
    _, action_space = seat_spaces(game, game.possible_agents[0], keep_dict_obs=False)
    a = with_action_space(a, action_space)
    b = with_action_space(b, action_space)
    current: list[ForcedOpening] = [ForcedOpening(b, _Script(()))]
    env = SelfPlayEnv(game, learner="random", opponent=lambda: current[0])
    seats = list(seats or env.learner_seats)
    unknown = set(seats) - set(env.learner_seats)
    if unknown:
        env.close()
        raise ValueError(f"Unknown seats {sorted(unknown)}; the game has {env.learner_seats}.")
    if getattr(a, "deterministic", False) and not getattr(a, "recurrent", False):
        env.close()  # a network playing greedily: its forward passes batched across games
        return _play_batched(env_fn, a, b, openings, seats, repeats, seed)
    result = OpeningsResult(a.policy_id, b.policy_id)
    index = 0
    try:
        for opening in openings:
            for seat in seats:
                for repeat in range(repeats):
                    forced_a, forced_b = ForcedOpening.pair(a, b, opening)
                    player_a = PolicyPlayer(forced_a)  # a fresh state for every game
                    current[0] = forced_b
                    obs, _ = env.reset(seed=seed + index, options={"learner_seat": seat})
                    index += 1
                    done = False
                    while not done:
                        mask = env.driver.learner_mask()
                        masks = None if mask is None else mask[None]
                        batch = stack_observations([obs])
                        action = player_a.act(batch, masks, env.np_random)[0]
                        obs, _, terminated, truncated, info = env.step(action)
                        done = terminated or truncated
                    summary = info["selfplay"]
                    returns = summary["returns"]
                    others = [r for s, r in returns.items() if s != summary["seat"]]
                    result.games.append(
                        OpeningGame(
                            opening=tuple(int(x) for x in opening),
                            seat=summary["seat"],
                            repeat=repeat,
                            outcome=float(summary["outcome"]),
                            return_a=float(summary["return"]),
                            return_b=float(np.mean(others)) if others else 0.0,
                            moves=tuple(forced_a.script.moves),
                        )
                    )
    finally:
        env.close()
    return result


def _current(holder: list[Any]) -> Callable[[], Any]:
    """An env's opponent: whatever ``holder`` holds (this game's side of ``b``)."""
    return lambda: holder[0]


#: Games a batched :func:`play_openings` plays at once (one env each).
_BATCH_GAMES = 64


def _play_batched(
    env_fn: Callable[[], Any],
    a: Any,
    b: Any,
    openings: Sequence[Sequence[int]],
    seats: Sequence[str],
    repeats: int,
    seed: int,
) -> OpeningsResult:
    """:func:`play_openings` for a deterministic ``a`` (greedy: no random draws), up to
    64 games at once, each in its own env: one ``a.act`` call per ply for every
    game whose opening is over, as the vectorised envs batch their opponents. The games, their
    seeds and their order are those of the game-by-game loop."""
    jobs = [
        (tuple(int(x) for x in opening), seat, repeat)
        for opening in openings
        for seat in seats
        for repeat in range(repeats)
    ]
    games: list[OpeningGame | None] = [None] * len(jobs)
    holders: list[list[Any]] = []
    envs: list[SelfPlayEnv] = []
    # slot -> (job index, a's side of the game's script, its observation)
    active: dict[int, tuple[int, ForcedOpening, Any]] = {}
    upcoming = iter(range(len(jobs)))

    def start(slot: int) -> None:
        job = next(upcoming, None)
        if job is None:
            active.pop(slot, None)
            return
        opening, seat, _ = jobs[job]
        forced_a, forced_b = ForcedOpening.pair(a, b, opening)
        holders[slot][0] = forced_b
        obs, _ = envs[slot].reset(seed=seed + job, options={"learner_seat": seat})
        active[slot] = (job, forced_a, obs)

    try:
        for slot in range(min(_BATCH_GAMES, len(jobs))):
            holders.append([None])
            envs.append(
                SelfPlayEnv(as_aec_env(env_fn()), learner="random", opponent=_current(holders[-1]))
            )
            start(slot)
        while active:
            actions: dict[int, Any] = {}
            chosen = []
            for slot, (_, forced_a, obs) in active.items():
                mask = envs[slot].driver.learner_mask()
                if len(forced_a.script.moves) < len(forced_a.script.opening):
                    masks = None if mask is None else mask[None]
                    stacked = stack_observations([obs])
                    actions[slot] = forced_a.act(stacked, masks, envs[slot].np_random)[0]
                else:
                    chosen.append((slot, mask))
            if chosen:
                masks = None if chosen[0][1] is None else np.stack([m for _, m in chosen])
                stacked = stack_observations([active[slot][2] for slot, _ in chosen])
                picked = np.asarray(a.act(stacked, masks, envs[chosen[0][0]].np_random))
                for (slot, _), action in zip(chosen, picked, strict=True):
                    active[slot][1].script.moves.append(
                        int(action) if np.ndim(action) == 0 else tuple(action.tolist())
                    )
                    actions[slot] = action
            for slot, action in actions.items():
                job, forced_a, _ = active[slot]
                obs, _, terminated, truncated, info = envs[slot].step(action)
                if not (terminated or truncated):
                    active[slot] = (job, forced_a, obs)
                    continue
                summary = info["selfplay"]
                others = [r for s, r in summary["returns"].items() if s != summary["seat"]]
                games[job] = OpeningGame(
                    opening=jobs[job][0],
                    seat=summary["seat"],
                    repeat=jobs[job][2],
                    outcome=float(summary["outcome"]),
                    return_a=float(summary["return"]),
                    return_b=float(np.mean(others)) if others else 0.0,
                    moves=tuple(forced_a.script.moves),
                )
                start(slot)
    finally:
        for env in envs:
            env.close()
    result = OpeningsResult(a.policy_id, b.policy_id)
    result.games.extend(game for game in games if game is not None)
    return result


def spread_match(
    env_fn: Callable[[], Any],
    policy_a: Any,
    policy_b: Any,
    n_games: int,
    plies: int,
    seed: int = 0,
) -> MatchResult:
    """``n_games`` games of ``a`` against ``b`` spread over the game's forced openings of
    ``plies`` moves, seats alternating, as a :class:`~sp_wrappers.evaluation.match.MatchResult`
    with ``distinct_games``, ``openings`` and ``opening_plies`` filled in.

    The openings (:func:`legal_openings`) are shuffled with ``seed`` and taken in turn, each from
    every seat of ``a``; with more games than openings times seats they come round again (a
    deterministic pair then replays the same games: ``distinct_games`` says how many there were).
    ``plies=0`` plays ordinary games reset with seeds ``seed``, ``seed + 1``, ...

    :param env_fn: builds the PettingZoo game.
    :param policy_a: a policy or an SB3 model (played deterministically).
    :param policy_b: likewise.
    :param n_games: games to play.
    :param plies: forced opening moves (both players' moves count).
    :param seed: shuffles the openings and seeds the games.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers.games.baselines import PerfectTicTacToePolicy
    >>> perfect = PerfectTicTacToePolicy()
    >>> result = spread_match(tictactoe_v3.env, perfect, perfect, n_games=18, plies=1)
    >>> result.n_games, result.openings, result.distinct_games, result.draws
    (18, 9, 18, 18)
    """
    if n_games < 1:
        raise ValueError(f"n_games must be at least 1, got {n_games}.")
    openings = legal_openings(env_fn, plies)
    agents = list(as_aec_env(env_fn()).possible_agents)
    n_seats = len(agents)
    order = np.random.default_rng(seed).permutation(len(openings))
    rounds = -(-n_games // n_seats)  # (opening, every seat) pairs needed
    chosen = [openings[order[i % len(openings)]] for i in range(rounds)]
    played = play_openings(env_fn, policy_a, policy_b, chosen, seed=seed)
    games = played.games[:n_games]
    result = MatchResult(played.player_a, played.player_b)
    for game in games:
        result.games.append((game.seat, game.outcome))
        result.opponent_seats.append(next(a for a in agents if a != game.seat))
        if game.outcome == 1.0:
            result.wins += 1
        elif game.outcome == 0.0:
            result.losses += 1
        else:
            result.draws += 1
    result.distinct_games = len({g.moves for g in games})
    result.openings = len({g.opening for g in games})
    result.opening_plies = plies
    return result
