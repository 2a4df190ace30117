"""League builders: which players a league has, whom each plays, when it is snapshotted and reset.

Two builders come with it: :class:`AlphaStarLeague` (main agents, main exploiters, league
exploiters, PFSP) and :class:`SelfPlayLeague` (one learner and its snapshot pool: plain self-play
as a league).

A builder decides; :class:`~sp_wrappers.league.League` acts. Between two chunks of learning the
runner asks, for every learning player:

1. ``opponents(player, league)``: the probability of each opponent for the next chunk (opponent
   ids are learning players' names, whose current weights are frozen for the chunk, or snapshot
   ids). The player's env draws one opponent per episode from it (per game, as AlphaStar does).
2. ``ready_to_snapshot(player, league)``: whether to add its current weights to the league as a
   frozen player (an archive snapshot tagged ``role:...``, ``player:...``, ``parent:...``).
3. after a snapshot, ``reset_after_snapshot(player, league, rng)``: whether to put the player
   back to its initial weights (and optimizer state).

Write your own league by implementing these four methods plus ``players()`` and ``roles``; see
:class:`SelfPlayLeague` for the smallest one.

Compute: a builder may also say how the league's learner steps are shared among its players
with ``compute_shares()`` (``{player name: share}``, shares summing to 1; checked by
:func:`check_compute_shares`). Without it every player learns as many steps as the others. In
AlphaStar the main agents trained throughout while exploiters were reset and restarted;
:class:`AlphaStarLeague` gives its main agents together at least half of the league's learner
steps by default (``main_agents_compute``), or any split by role (``role_compute``); see
:mod:`sp_wrappers.league.compute`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..opponents.sampler import pfsp_weights
from .payoff import PayoffTable

__all__ = [
    "LeagueBuilder",
    "PlayerSpec",
    "LearnerState",
    "FrozenPlayer",
    "LeagueView",
    "AlphaStarLeague",
    "SelfPlayLeague",
    "ALPHASTAR_DEFAULTS",
    "ALPHASTAR_ROLES",
    "remove_monotonic_suffix",
]

ALPHASTAR_ROLES = ("main_agent", "main_exploiter", "league_exploiter")

#: AlphaStar's league settings, from Vinyals et al. (2019), "Grandmaster level in StarCraft II
#: using multi-agent reinforcement learning", Nature 575, Methods "League composition" and the
#: supplementary pseudocode (``MainPlayer``, ``MainExploiter``, ``LeagueExploiter``, ``pfsp``).
#: Step limits are AlphaStar's 2e9 / 4e9 agent steps scaled to board games (same 1:2 ratio).
ALPHASTAR_DEFAULTS: dict[str, Any] = {
    # main agents: 50% PFSP over every frozen player, 15% verification (exploiters' snapshots the
    # main loses to, else its own forgotten snapshots), 35% self-play against the current mains
    "main_pfsp": 0.50,
    "main_verification": 0.15,
    "main_selfplay": 0.35,
    "main_pfsp_weighting": "squared",
    "selfplay_too_strong": 0.3,  # below this win rate, play the opponent's snapshots instead
    "verification_exploiter_cut": 0.3,  # play exploiters' snapshots the main scores below this
    "verification_forgotten_cut": 0.7,  # play own forgotten snapshots scored below this
    # main exploiters: the current mains while they win > 10%, else the mains' snapshots
    "exploiter_min_win_rate": 0.1,
    "exploiter_pfsp_weighting": "variance",
    # league exploiters: PFSP over every frozen player
    "league_exploiter_pfsp_weighting": "linear_capped",
    "league_exploiter_reset_probability": 0.25,
    # snapshots: when the win rate against the intended opponents reaches the threshold, but not
    # before min steps; always after max steps
    "snapshot_win_rate": 0.7,
    "snapshot_min_steps": 50_000,
    "snapshot_max_steps": 100_000,
    # compute: the main agents together learn at least this share of the league's learner steps
    # (more when they are more than that share of the players); the rest is split evenly
    "main_agents_compute": 0.5,
}


@dataclass(frozen=True)
class PlayerSpec:
    """A learning player the builder asks for: its unique ``name`` and its ``role``."""

    name: str
    role: str


@dataclass(frozen=True)
class FrozenPlayer:
    """A snapshot in the league's pool: archive ``id``, the learning ``player`` it was taken
    from (its parent in AlphaStar's terms), that player's ``role`` and the ``step`` it was
    taken at (the player's learner steps)."""

    id: str
    player: str
    role: str
    step: int


@dataclass
class LearnerState:
    """A learning player as the runner tracks it (what builders read).

    :param steps: learner steps taken in total (``model.num_timesteps``; not reset by resets).
    :param last_snapshot_step: ``steps`` at its last snapshot or reset (the start of the
        current "generation").
    :param snapshots: ids of the snapshots taken from it, oldest first.
    :param resets: how many times it was put back to its initial weights.
    """

    name: str
    role: str
    steps: int = 0
    last_snapshot_step: int = 0
    snapshots: list[str] = field(default_factory=list)
    resets: int = 0

    @property
    def steps_since_snapshot(self) -> int:
        return self.steps - self.last_snapshot_step

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "steps": self.steps,
            "last_snapshot_step": self.last_snapshot_step,
            "snapshots": list(self.snapshots),
            "resets": self.resets,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LearnerState:
        return cls(
            name=str(data["name"]),
            role=str(data["role"]),
            steps=int(data["steps"]),
            last_snapshot_step=int(data["last_snapshot_step"]),
            snapshots=[str(s) for s in data["snapshots"]],
            resets=int(data["resets"]),
        )


@dataclass
class LeagueView:
    """What a builder sees: the learning players, the frozen pool and the payoff table."""

    learners: list[LearnerState]
    frozen: list[FrozenPlayer]
    payoff: PayoffTable

    def learners_with_role(self, role: str) -> list[LearnerState]:
        return [p for p in self.learners if p.role == role]

    def frozen_of(self, player: str | None = None, role: str | None = None) -> list[FrozenPlayer]:
        """Frozen players taken from ``player`` and/or from players with ``role``, oldest first."""
        return [
            f
            for f in self.frozen
            if (player is None or f.player == player) and (role is None or f.role == role)
        ]


@runtime_checkable
class LeagueBuilder(Protocol):
    """What :class:`~sp_wrappers.league.League` asks a league design.

    ``roles`` names the roles the builder knows (``make_model`` may be a mapping over them).
    """

    roles: tuple[str, ...]

    def players(self) -> list[PlayerSpec]:
        """The learning players, fixed for the league's life."""
        ...

    def snapshot_at_start(self, player: PlayerSpec) -> bool:
        """Whether the player's initial weights join the pool before training (AlphaStar: the
        main agents' do)."""
        ...

    def opponents(self, player: LearnerState, league: LeagueView) -> dict[str, float]:
        """``{opponent id: probability}`` for the player's next chunk (sums to 1)."""
        ...

    def ready_to_snapshot(self, player: LearnerState, league: LeagueView) -> bool:
        """Whether to add the player's current weights to the pool now."""
        ...

    def reset_after_snapshot(
        self, player: LearnerState, league: LeagueView, rng: np.random.Generator
    ) -> bool:
        """Whether to put the player back to its initial weights after the snapshot just taken."""
        ...


def remove_monotonic_suffix(
    win_rates: Sequence[float], players: Sequence[Any]
) -> tuple[list[float], list[Any]]:
    """AlphaStar's ``remove_monotonic_suffix``: drop the newest snapshots while the win rate
    against them keeps decreasing (the newest are hard because they are new, not forgotten).

    >>> remove_monotonic_suffix([0.9, 0.5, 0.8, 0.6, 0.4], "abcde")
    ([0.9, 0.5, 0.8], ['a', 'b', 'c'])
    """
    rates = list(win_rates)
    for i in range(len(rates) - 1, 0, -1):
        if rates[i - 1] < rates[i]:
            return rates[: i + 1], list(players[: i + 1])
    return [], []


def _mix(into: dict[str, float], weight: float, ids: Sequence[str], probs: Sequence[float]) -> None:
    for opponent, p in zip(ids, probs, strict=True):
        if p > 0 and weight > 0:
            into[opponent] = into.get(opponent, 0.0) + weight * float(p)


def _normalise(distribution: dict[str, float], fallback: str) -> dict[str, float]:
    total = sum(distribution.values())
    if total <= 0:
        return {fallback: 1.0}
    return {k: v / total for k, v in distribution.items()}


class AlphaStarLeague:
    """AlphaStar's league: main agents, main exploiters and league exploiters, matched by PFSP.

    Every default comes from :data:`ALPHASTAR_DEFAULTS` (with its source); any of them can be
    overridden by keyword, e.g. ``AlphaStarLeague(snapshot_max_steps=20_000)``.

    - **main agents** (``main_agent_i``): per game, 50% PFSP (``squared``) over every frozen
      player; 15% verification: the main exploiters' snapshots it scores below 0.3 against
      (PFSP ``squared``), else its own forgotten snapshots (scored below 0.7, newest
      monotonic run dropped), else self-play; 35% self-play against a current main agent (itself
      included), or that agent's snapshots (PFSP ``variance``) when it scores below 0.3.
      Snapshot when it scores above 0.7 against every frozen player, or after the step limit.
      Never reset. Their initial weights join the pool.
    - **main exploiters** (``main_exploiter_i``): a current main agent while it wins more than
      10% against it, else that main's snapshots (PFSP ``variance``). Snapshot when it beats
      every main agent above 0.7 or after the step limit; **reset to the initial weights after
      every snapshot**.
    - **league exploiters** (``league_exploiter_i``): PFSP (``linear_capped``) over every frozen
      player; snapshot like main agents; reset with probability 0.25 after a snapshot.

    Compute: the main agents together learn ``main_agents_compute`` (default 0.5) of the
    league's learner steps, or their share of the players if that is more, split evenly among
    them; the other players split the rest evenly. ``role_compute={role: weight}`` sets the
    split by role instead (weights of the roles that have players, normalised; each role's share
    split evenly among its players).

    :param main_agents: number of main agents (at least 1).
    :param main_exploiters: number of main exploiters.
    :param league_exploiters: number of league exploiters.
    :param role_compute: ``{role: weight}`` of the league's learner steps (``None``: the main
        agents at least ``main_agents_compute``).
    :param settings: overrides of :data:`ALPHASTAR_DEFAULTS`.

    >>> from sp_wrappers.league import AlphaStarLeague, LearnerState, LeagueView, PayoffTable
    >>> builder = AlphaStarLeague(main_agents=1, main_exploiters=1, league_exploiters=0)
    >>> [(p.name, p.role) for p in builder.players()]
    [('main_agent_0', 'main_agent'), ('main_exploiter_0', 'main_exploiter')]
    >>> exploiter = LearnerState("main_exploiter_0", "main_exploiter")
    >>> main = LearnerState("main_agent_0", "main_agent")
    >>> view = LeagueView([main, exploiter], [], PayoffTable())
    >>> builder.opponents(exploiter, view)
    {'main_agent_0': 1.0}
    >>> AlphaStarLeague(main_agents=1, main_exploiters=1, league_exploiters=1).compute_shares()
    {'main_agent_0': 0.5, 'main_exploiter_0': 0.25, 'league_exploiter_0': 0.25}
    """

    roles = ALPHASTAR_ROLES

    def __init__(
        self,
        main_agents: int = 1,
        main_exploiters: int = 1,
        league_exploiters: int = 1,
        role_compute: Mapping[str, float] | None = None,
        **settings: Any,
    ) -> None:
        for what, n in (
            ("main_agents", main_agents),
            ("main_exploiters", main_exploiters),
            ("league_exploiters", league_exploiters),
        ):
            if not isinstance(n, int | np.integer) or n < 0:
                raise ValueError(f"{what} must be a non-negative integer, got {n!r}.")
        if main_agents < 1:
            raise ValueError(
                "An AlphaStar league needs at least one main agent (main_agents >= 1): the "
                "exploiters are defined by the mains they hunt. For one learner use "
                "SelfPlayLeague()."
            )
        unknown = sorted(set(settings) - set(ALPHASTAR_DEFAULTS))
        if unknown:
            raise TypeError(
                f"Unknown AlphaStarLeague settings {unknown}; the known ones are "
                f"{sorted(ALPHASTAR_DEFAULTS)}."
            )
        self.main_agents = int(main_agents)
        self.main_exploiters = int(main_exploiters)
        self.league_exploiters = int(league_exploiters)
        self.settings = {**ALPHASTAR_DEFAULTS, **settings}
        s = self.settings
        branches = s["main_pfsp"] + s["main_verification"] + s["main_selfplay"]
        if abs(branches - 1.0) > 1e-9:
            raise ValueError(
                f"main_pfsp + main_verification + main_selfplay must sum to 1, got {branches:.3f}."
            )
        if s["snapshot_min_steps"] > s["snapshot_max_steps"]:
            raise ValueError("snapshot_min_steps must not exceed snapshot_max_steps.")
        if not 0.0 < float(s["main_agents_compute"]) <= 1.0:
            raise ValueError(
                f"main_agents_compute must be in (0, 1], got {s['main_agents_compute']!r}."
            )
        self.role_compute = None if role_compute is None else dict(role_compute)
        if self.role_compute is not None:
            unknown = sorted(set(self.role_compute) - set(ALPHASTAR_ROLES))
            present = {p.role for p in self.players()}
            bad = [r for r in present if float(self.role_compute.get(r, 0.0)) <= 0]
            if unknown or bad:
                raise ValueError(
                    f"role_compute={self.role_compute} needs a weight > 0 for every role that "
                    f"has players ({sorted(present)}) and only the roles {ALPHASTAR_ROLES}; "
                    f"unknown {unknown}, without weight {sorted(bad)}."
                )

    # -- the protocol ------------------------------------------------------------------------------
    def players(self) -> list[PlayerSpec]:
        counts = (self.main_agents, self.main_exploiters, self.league_exploiters)
        return [
            PlayerSpec(f"{role}_{i}", role)
            for role, n in zip(ALPHASTAR_ROLES, counts, strict=True)
            for i in range(n)
        ]

    def snapshot_at_start(self, player: PlayerSpec) -> bool:
        return player.role == "main_agent"

    def compute_shares(self) -> dict[str, float]:
        """Each player's share of the league's learner steps (see the class docstring)."""
        players = self.players()
        by_role: dict[str, list[str]] = {}
        for p in players:
            by_role.setdefault(p.role, []).append(p.name)
        if self.role_compute is not None:
            weights = {role: float(self.role_compute[role]) for role in by_role}
        else:
            mains = len(by_role["main_agent"])
            main_share = max(float(self.settings["main_agents_compute"]), mains / len(players))
            others = len(players) - mains
            if others == 0:
                main_share = 1.0
            weights = {
                role: main_share if role == "main_agent" else (1 - main_share) * len(names) / others
                for role, names in by_role.items()
            }
        total = sum(weights.values())
        shares = {
            name: weights[role] / total / len(names)
            for role, names in by_role.items()
            for name in names
        }
        return {p.name: shares[p.name] for p in players}

    def opponents(self, player: LearnerState, league: LeagueView) -> dict[str, float]:
        if player.role == "main_agent":
            return self._main_agent(player, league)
        if player.role == "main_exploiter":
            return self._main_exploiter(player, league)
        if player.role == "league_exploiter":
            return self._pfsp_all(player, league, self.settings["league_exploiter_pfsp_weighting"])
        raise ValueError(f"Unknown role {player.role!r}; AlphaStarLeague knows {self.roles}.")

    def ready_to_snapshot(self, player: LearnerState, league: LeagueView) -> bool:
        s = self.settings
        passed = player.steps_since_snapshot
        if passed < s["snapshot_min_steps"]:
            return False
        if passed >= s["snapshot_max_steps"]:
            return True
        if player.role == "main_exploiter":
            intended = [p.name for p in league.learners_with_role("main_agent")]
        else:
            intended = [f.id for f in league.frozen]
        rates = league.payoff.win_rates(player.name, intended)
        return bool(len(rates)) and float(rates.min()) > s["snapshot_win_rate"]

    def reset_after_snapshot(
        self, player: LearnerState, league: LeagueView, rng: np.random.Generator
    ) -> bool:
        if player.role == "main_exploiter":
            return True
        if player.role == "league_exploiter":
            return bool(rng.random() < self.settings["league_exploiter_reset_probability"])
        return False

    # -- matchmaking per role ----------------------------------------------------------------------
    def _pfsp(
        self, player: LearnerState, league: LeagueView, ids: Sequence[str], weighting: str
    ) -> np.ndarray:
        return pfsp_weights(league.payoff.win_rates(player.name, ids), weighting)

    def _pfsp_all(
        self, player: LearnerState, league: LeagueView, weighting: str
    ) -> dict[str, float]:
        ids = [f.id for f in league.frozen]
        if not ids:  # nothing frozen yet: the current main agents
            mains = [p.name for p in league.learners_with_role("main_agent")]
            return {m: 1.0 / len(mains) for m in mains}
        return dict(zip(ids, self._pfsp(player, league, ids, weighting).tolist(), strict=True))

    def _selfplay_branch(self, player: LearnerState, league: LeagueView, opponent: str) -> dict:
        s = self.settings
        if league.payoff.win_rate(player.name, opponent) > s["selfplay_too_strong"]:
            return {opponent: 1.0}
        history = [f.id for f in league.frozen_of(player=opponent)]
        if not history:
            return {opponent: 1.0}
        return dict(zip(history, self._pfsp(player, league, history, "variance"), strict=True))

    def _verification_branch(
        self, player: LearnerState, league: LeagueView, opponent: str
    ) -> dict | None:
        s = self.settings
        exploiters = [f.id for f in league.frozen_of(role="main_exploiter")]
        rates = league.payoff.win_rates(player.name, exploiters)
        if len(rates) and rates.min() < s["verification_exploiter_cut"]:
            return dict(zip(exploiters, pfsp_weights(rates, "squared"), strict=True))
        history = [f.id for f in league.frozen_of(player=opponent)]
        kept_rates, kept = remove_monotonic_suffix(
            league.payoff.win_rates(player.name, history).tolist(), history
        )
        if kept_rates and min(kept_rates) < s["verification_forgotten_cut"]:
            return dict(zip(kept, pfsp_weights(kept_rates, "squared"), strict=True))
        return None

    def _main_agent(self, player: LearnerState, league: LeagueView) -> dict[str, float]:
        s = self.settings
        result: dict[str, float] = {}
        frozen = [f.id for f in league.frozen]
        pfsp_share = s["main_pfsp"] if frozen else 0.0
        if frozen:
            _mix(
                result,
                pfsp_share,
                frozen,
                self._pfsp(player, league, frozen, s["main_pfsp_weighting"]),
            )
        mains = [p.name for p in league.learners_with_role("main_agent")]
        rest = (1.0 - pfsp_share) / len(mains)
        verification = s["main_verification"] / (s["main_verification"] + s["main_selfplay"])
        for opponent in mains:
            selfplay = self._selfplay_branch(player, league, opponent)
            check = self._verification_branch(player, league, opponent) or selfplay
            _mix(result, rest * verification, list(check), list(check.values()))
            _mix(result, rest * (1 - verification), list(selfplay), list(selfplay.values()))
        return _normalise(result, player.name)

    def _main_exploiter(self, player: LearnerState, league: LeagueView) -> dict[str, float]:
        result: dict[str, float] = {}
        mains = [p.name for p in league.learners_with_role("main_agent")]
        for main in mains:
            if league.payoff.win_rate(player.name, main) > self.settings["exploiter_min_win_rate"]:
                choice = {main: 1.0}
            else:
                history = [f.id for f in league.frozen_of(player=main)]
                weights = self._pfsp(
                    player, league, history, self.settings["exploiter_pfsp_weighting"]
                )
                choice = dict(zip(history, weights, strict=True)) if history else {main: 1.0}
            _mix(result, 1.0 / len(mains), list(choice), list(choice.values()))
        return _normalise(result, mains[0])

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.settings.items() if ALPHASTAR_DEFAULTS[k] != v}
        if self.role_compute is not None:
            changed["role_compute"] = self.role_compute
        extra = "".join(f", {k}={v!r}" for k, v in changed.items())
        return (
            f"AlphaStarLeague(main_agents={self.main_agents}, main_exploiters="
            f"{self.main_exploiters}, league_exploiters={self.league_exploiters}{extra})"
        )


class SelfPlayLeague:
    """Plain self-play as a league: one learner (``learner_0``, role ``learner``) against its
    current weights with probability ``latest_ratio`` and otherwise its newest ``window``
    snapshots (uniform, or PFSP with ``pfsp_weighting``); a snapshot every ``save_every`` steps,
    never a reset.

    :param save_every: learner steps between snapshots (checked between chunks).
    :param latest_ratio: probability (0..1) of playing its own current weights.
    :param window: how many of its newest snapshots are eligible (``None``: all).
    :param pfsp_weighting: ``None`` for uniform, else a
        :func:`~sp_wrappers.opponents.sampler.pfsp_weights` weighting.

    >>> from sp_wrappers.league import SelfPlayLeague, LearnerState, LeagueView, FrozenPlayer
    >>> from sp_wrappers.league import PayoffTable
    >>> me = LearnerState("learner_0", "learner")
    >>> pool = [FrozenPlayer("snapshot-0000", "learner_0", "learner", 0)]
    >>> SelfPlayLeague(latest_ratio=0.5).opponents(me, LeagueView([me], pool, PayoffTable()))
    {'learner_0': 0.5, 'snapshot-0000': 0.5}
    """

    roles = ("learner",)

    def __init__(
        self,
        save_every: int = 10_000,
        latest_ratio: float = 0.5,
        window: int | None = 10,
        pfsp_weighting: str | None = None,
    ) -> None:
        if save_every < 1:
            raise ValueError(f"save_every must be a positive number of steps, got {save_every!r}.")
        if not 0.0 <= latest_ratio <= 1.0:
            raise ValueError(f"latest_ratio must be between 0 and 1, got {latest_ratio!r}.")
        if window is not None and window < 1:
            raise ValueError(f"window must be a positive integer or None, got {window!r}.")
        self.save_every = int(save_every)
        self.latest_ratio = float(latest_ratio)
        self.window = window
        self.pfsp_weighting = pfsp_weighting

    def players(self) -> list[PlayerSpec]:
        return [PlayerSpec("learner_0", "learner")]

    def snapshot_at_start(self, player: PlayerSpec) -> bool:
        return True

    def compute_shares(self) -> dict[str, float]:
        """The one learner learns every step."""
        return {"learner_0": 1.0}

    def opponents(self, player: LearnerState, league: LeagueView) -> dict[str, float]:
        ids = [f.id for f in league.frozen_of(player=player.name)]
        if self.window is not None:
            ids = ids[-self.window :]
        if not ids:
            return {player.name: 1.0}
        if self.pfsp_weighting is None:
            weights = np.full(len(ids), 1.0 / len(ids))
        else:
            weights = pfsp_weights(league.payoff.win_rates(player.name, ids), self.pfsp_weighting)
        result = {player.name: self.latest_ratio} if self.latest_ratio > 0 else {}
        _mix(result, 1.0 - self.latest_ratio, ids, weights)
        return result

    def ready_to_snapshot(self, player: LearnerState, league: LeagueView) -> bool:
        return player.steps_since_snapshot >= self.save_every

    def reset_after_snapshot(
        self, player: LearnerState, league: LeagueView, rng: np.random.Generator
    ) -> bool:
        return False

    def __repr__(self) -> str:
        return (
            f"SelfPlayLeague(save_every={self.save_every}, latest_ratio={self.latest_ratio}, "
            f"window={self.window}, pfsp_weighting={self.pfsp_weighting!r})"
        )
