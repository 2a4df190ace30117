"""``League``: learning players trained chunk by chunk against the opponents a builder chooses.

A league directory holds::

    league.json                   players, roles, step counts, frozen pool, pending resets, the
                                  driver's random state, round (format in STATE_FORMAT_VERSION)
    archive/                      one SnapshotArchive for every player: snapshots tagged
                                  role:<role>, parent:<player>, previous:<snapshot id>|none
                                  (plus initial / final); every game in its match history
    players/<name>/initial.zip    the player's initial model (what resets return to)
    players/<name>/model-<round>.zip   its model (SB3 zip, optimizer included) after that round

One round: the driver asks the builder for every learning player's opponent probabilities, sends
each player (through the backend) a :class:`~sp_wrappers.league.worker.ChunkPlan` with the weights
of opponents it has not seen at their current version, the players learn ``chunk_steps`` steps
each on average (split by the builder's compute shares and rounded to whole rollouts,
:mod:`sp_wrappers.league.compute`), at once, and the results come back; a player whose worker
died meanwhile gets a new worker from the last complete round and plays its chunk again
(:func:`~sp_wrappers.league.rounds.play_round`).
Then the driver saves the snapshots the builder asks for (tagged ``round:<n>``), schedules resets,
writes the model files, records the round's games in one transaction and finally writes
``league.json``. A league killed at any moment resumes from its last complete round: what the
archive holds beyond ``league.json`` is discarded first
(:func:`~sp_wrappers.league.rounds.unfinished_round`).
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..archive.policy_spec import spec_classes
from ..archive.store import SnapshotArchive
from ..core.run_layout import ARCHIVE_DIR
from ..core.save_util import atomic_write
from .builders import FrozenPlayer, LeagueBuilder, LeagueView, LearnerState, PlayerSpec
from .compute import ChunkFit, OnChunks, league_compute_shares, warn_chunks
from .faults import DEFAULT_STALL_SECONDS, LeagueStalledWarning, OnStall, StallReport
from .payoff import DEFAULT_DECAY, DEFAULT_MIN_GAMES, PayoffTable
from .pool import check_players_fit, prune_frozen
from .rounds import (
    DEFAULT_MAX_RETRIES,
    check_rounds,
    play_round,
    round_tag,
    unfinished_round,
    with_weights,
)
from .state import PLAYERS_DIR, STATE_FORMAT_VERSION, STATE_NAME, LeagueState, model_file_name
from .worker import ChunkPlan, ChunkResult, LeagueSetupError

__all__ = [
    "League",
    "LeagueResult",
    "STATE_FORMAT_VERSION",
    "STATE_NAME",
]

#: Where a resume moves the model files ``league.json`` does not name (never deleted).
ORPHANED_DIR = "orphaned"
_REQUIRED = (
    "roles",
    "players",
    "snapshot_at_start",
    "opponents",
    "ready_to_snapshot",
    "reset_after_snapshot",
)


@dataclass
class LeagueResult:
    """What :meth:`League.run` did: per-player steps, snapshots and resets, the rounds played,
    each player's learner steps per second (learning time only, over this run) and its compute
    share (the fraction of the league's learner steps planned for it)."""

    root: Path
    rounds: int
    learners: list[LearnerState]
    frozen: list[FrozenPlayer]
    final_snapshots: dict[str, str]
    steps_per_second: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    lost_workers: list[str] = field(default_factory=list)
    shares: dict[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"league in {self.root}: {self.rounds} rounds, {len(self.frozen)} frozen players"]
        total = sum(p.steps for p in self.learners) or 1
        for p in self.learners:
            rate = self.steps_per_second.get(p.name, float("nan"))
            share = self.shares.get(p.name, float("nan"))
            lines.append(
                f"  {p.name:<20} {p.role:<17} steps {p.steps:>9} ({p.steps / total:.0%} of the "
                f"league's, share {share:.0%})  snapshots {len(p.snapshots):>3}  resets "
                f"{p.resets:>2}  {rate:8.0f} steps/s"
            )
        return "\n".join(lines)


def _warn_stalled(report: StallReport) -> None:
    warnings.warn(str(report), LeagueStalledWarning, stacklevel=2)


class League:
    """A league of SB3 learners trained in chunks, matched by a :class:`LeagueBuilder`.

    The league holds its :class:`~sp_wrappers.league.state.LeagueState` (what ``league.json``
    records: rounds, learning players, the frozen pool, resets, model files, the driver's random
    state; its fields are the league's attributes of the same names), its
    :class:`~sp_wrappers.archive.store.SnapshotArchive` and its
    :class:`~sp_wrappers.league.payoff.PayoffTable`.

    :param env_fn: returns a fresh two-player PettingZoo env (picklable for ``process``/``ray``:
        a module-level function or ``functools.partial``; lambdas travel by cloudpickle).
    :param builder: the league design, e.g. :class:`~sp_wrappers.league.AlphaStarLeague` or
        :class:`~sp_wrappers.league.SelfPlayLeague`.
    :param make_model: ``make_model(vec_env)`` returns a fresh SB3 model (any algorithm,
        MaskablePPO included) on that env; or ``{role: make_model}`` for one per role.
    :param root: the league directory (created; an existing league there is resumed).
    :param chunk_steps: learner steps per player per round on average: a round's
        ``chunk_steps * players`` steps are split by the builder's ``compute_shares()`` (equal
        without it; :class:`~sp_wrappers.league.AlphaStarLeague` gives its main agents at least
        half), so that each player's total stays its share of the league's. The round is
        rounded to the nearest one in which every player learns whole rollouts
        (``n_steps x n_envs`` of an on-policy learner) in its share, and a run's budget up to
        whole such steps (:class:`~sp_wrappers.league.compute.ChunkFit`; ``on_chunks`` hears
        of it).
    :param n_envs: game copies per player.
    :param seed: seeds matchmaking draws, resets and the players' envs.
    :param max_frozen: at most this many frozen players stay in the pool (older ones drop out of
        matchmaking, keeping each player's first snapshot, its newest and a spread over time and
        over players; their files and games stay in the archive). ``None`` keeps all.
    :param decay: the payoff table's decay per game (see :mod:`~sp_wrappers.league.payoff`).
    :param min_games: games a pair needs before PFSP trusts its win rate.
    :param torch_threads: torch threads in each player.
    :param vec_env_kwargs: more :class:`~sp_wrappers.SelfPlayVecEnv` arguments for each player.
    :param magnet: every learning player learns with a magnet regulariser of these settings
        (:class:`~sp_wrappers.training.magnet.MagnetSettings`); a resumed league starts each
        player's magnet afresh from its weights. ``None``: none.
    :param trusted_modules: module prefixes whose classes the players' policies may name, on top
        of SB3's, sb3-contrib's, torch's and sp_wrappers' (a custom features extractor:
        ``["mymod."]``; see :class:`~sp_wrappers.SnapshotArchive`). The classes the players'
        own models use (``make_model`` built them in this run) are trusted without it, as a
        learner's own saves are; a resumed league's older snapshots that name other classes
        need it.
    :param on_round: called with ``(league, results)`` after each round (progress display;
        :attr:`round_steps` then holds what each player learned in it).
    :param on_stall: receives a :class:`~sp_wrappers.league.faults.StallReport` when a round
        makes no progress for ``stall_seconds`` (default: a
        :class:`~sp_wrappers.league.faults.LeagueStalledWarning`).
    :param on_chunks: receives the run's :class:`~sp_wrappers.league.compute.ChunkFit` once at
        the start of a run whose chunks or budget were rounded to whole rollouts (default: a
        :class:`~sp_wrappers.league.compute.LeagueChunksWarning`).

    >>> import tempfile
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sb3_contrib import MaskablePPO
    >>> from sp_wrappers.league import League, SelfPlayLeague
    >>> league = League(tictactoe_v3.env, SelfPlayLeague(save_every=64),
    ...                 lambda env: MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32),
    ...                 tempfile.mkdtemp(), chunk_steps=64, n_envs=2, seed=0)
    >>> result = league.run(128, backend="serial")
    >>> result.rounds, [len(p.snapshots) for p in result.learners]
    (2, [3])
    """

    def __init__(
        self,
        env_fn: Callable[[], Any],
        builder: LeagueBuilder,
        make_model: Callable[[Any], Any] | Mapping[str, Callable[[Any], Any]],
        root: str | os.PathLike[str],
        chunk_steps: int = 2048,
        n_envs: int = 4,
        seed: int = 0,
        max_frozen: int | None = None,
        decay: float = DEFAULT_DECAY,
        min_games: int = DEFAULT_MIN_GAMES,
        torch_threads: int | None = 1,
        vec_env_kwargs: Mapping[str, Any] | None = None,
        magnet: Mapping[str, Any] | None = None,
        trusted_modules: Sequence[str] = (),
        on_round: Callable[[League, dict[str, ChunkResult]], None] | None = None,
        on_stall: OnStall | None = None,
        on_chunks: OnChunks | None = None,
    ) -> None:
        missing = [name for name in _REQUIRED if not hasattr(builder, name)]
        if missing:
            raise TypeError(
                f"{type(builder).__name__} is not a LeagueBuilder: it lacks {missing}. Implement "
                "the LeagueBuilder protocol (see sp_wrappers.league.builders) or use "
                "AlphaStarLeague / SelfPlayLeague."
            )
        specs = list(builder.players())
        if not specs:
            raise LeagueSetupError(
                f"{builder!r} has no learning players. Ask for at least one (e.g. "
                "AlphaStarLeague(main_agents=1))."
            )
        roles = tuple(builder.roles)
        for spec in specs:
            if spec.role not in roles:
                raise LeagueSetupError(
                    f"Player {spec.name!r} has unknown role {spec.role!r}; {type(builder).__name__}"
                    f" knows the roles {roles}. Use one of them or add it to the builder's roles."
                )
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            raise LeagueSetupError(f"Player names must be unique, got {names}.")
        if isinstance(make_model, Mapping):
            unknown = sorted(set(make_model) - set(roles))
            if unknown:
                raise LeagueSetupError(
                    f"make_model names unknown roles {unknown}; the builder's roles are {roles}."
                )
            absent = sorted({s.role for s in specs} - set(make_model))
            if absent:
                raise LeagueSetupError(f"make_model has no entry for the roles {absent}.")
        elif not callable(make_model):
            raise TypeError("make_model must be a callable make_model(env) or {role: callable}.")
        if chunk_steps < 1 or n_envs < 1:
            raise ValueError("chunk_steps and n_envs must be positive.")
        if max_frozen is not None and max_frozen < 1:
            raise ValueError(f"max_frozen must be a positive integer or None, got {max_frozen!r}.")
        self.env_fn = env_fn
        self.builder = builder
        self.make_model = make_model
        self.root = Path(root)
        self.chunk_steps = int(chunk_steps)
        self.n_envs = int(n_envs)
        self.seed = int(seed)
        self.max_frozen = max_frozen
        self.torch_threads = torch_threads
        self.vec_env_kwargs = dict(vec_env_kwargs or {})
        self.magnet = None if magnet is None else dict(magnet)
        self.on_round = on_round
        #: each learning player's learner steps in the last round (0: it sat the round out,
        #: ahead of its compute share), for the progress display
        self.round_steps: dict[str, int] = {}
        self.on_stall = on_stall if on_stall is not None else _warn_stalled
        self.on_chunks = on_chunks if on_chunks is not None else warn_chunks
        #: each player's rollout in learner steps (1: none to finish), from its worker
        self.rollouts: dict[str, int] = {}
        #: how the current run's rounds fit the rollouts (``None`` before a run)
        self.fit: ChunkFit | None = None
        self.specs = specs
        try:
            self.shares = league_compute_shares(builder, specs)
        except ValueError as error:
            raise LeagueSetupError(str(error)) from None
        self.root.mkdir(parents=True, exist_ok=True)
        self.archive = SnapshotArchive(self.root / ARCHIVE_DIR, trusted_modules=trusted_modules)
        self.payoff = PayoffTable(decay=decay, min_games=min_games)
        state_path = self.root / STATE_NAME
        self.resumed = state_path.exists()
        every = {info.id: info for info in self.archive.snapshots(include_pruned=True)}
        self.state = (
            LeagueState.read(state_path, specs, self.shares, snapshots=every)
            if self.resumed
            else LeagueState.new(state_path, specs, seed)
        )
        if self.resumed:
            check_rounds(state_path, self.state, every)
        self._weights: dict[str, dict[str, np.ndarray]] = {}
        self._initial_weights: dict[str, dict[str, np.ndarray]] = {}
        self._versions: dict[str, str] = {}
        self._specs: dict[str, dict[str, Any]] = {}
        # the classes of the learners' own policies (built by make_model in this run): trusted
        # for the snapshots and opponents rebuilt from their specs, as a learner's own saves are
        self._own_classes: tuple[str, ...] = ()
        self._policies: dict[str, Any] = {}
        self._sent: dict[str, dict[str, str]] = {name: {} for name in names}
        # What a round cut short left in the archive, league.json never took in: discard it.
        snapshots, matches = unfinished_round(
            self.archive, self.round, self.learners, self.frozen, self.final_snapshots
        )
        self.discarded = self.archive.discard(snapshots, matches)
        # Model files league.json does not name (a round cut short, a crash before the old
        # ones were removed): moved aside, never deleted on the word of the state file.
        kept = set(self.model_files.values())
        for path in sorted((self.root / PLAYERS_DIR).glob("*/model-*.zip")):
            relative = path.relative_to(self.root).as_posix()
            if relative not in kept and not path.is_symlink():
                aside = self.root / ORPHANED_DIR / relative
                aside.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, aside)
        # The payoff table from the archive's match history, as the rounds recorded it.
        self.payoff.add(
            (m.player_a, m.player_b, m.score_a) for m in self.archive.iter_matches(source="league")
        )

    # -- state -------------------------------------------------------------------------------------
    @property
    def learners(self) -> dict[str, LearnerState]:
        """Every learning player by name (the state's)."""
        return self.state.learners

    @learners.setter
    def learners(self, value: dict[str, LearnerState]) -> None:
        self.state.learners = value

    @property
    def frozen(self) -> list[FrozenPlayer]:
        """The frozen players in the pool, oldest first (the state's)."""
        return self.state.frozen

    @frozen.setter
    def frozen(self, value: list[FrozenPlayer]) -> None:
        self.state.frozen = value

    @property
    def pending_resets(self) -> set[str]:
        """Learning players that restart from their initial model next round (the state's)."""
        return self.state.pending_resets

    @pending_resets.setter
    def pending_resets(self, value: set[str]) -> None:
        self.state.pending_resets = value

    @property
    def round(self) -> int:
        """Complete rounds so far (the state's)."""
        return self.state.round

    @round.setter
    def round(self, value: int) -> None:
        self.state.round = value

    @property
    def model_files(self) -> dict[str, str]:
        """Each player's newest model file, relative to :attr:`root` (the state's)."""
        return self.state.model_files

    @model_files.setter
    def model_files(self, value: dict[str, str]) -> None:
        self.state.model_files = value

    @property
    def final_snapshots(self) -> dict[str, str]:
        """Each player's final snapshot id (the state's)."""
        return self.state.final_snapshots

    @final_snapshots.setter
    def final_snapshots(self, value: dict[str, str]) -> None:
        self.state.final_snapshots = value

    @property
    def total_timesteps(self) -> int | None:
        """The learner steps the last :meth:`run` aimed at, the schedules' horizon (the
        state's)."""
        return self.state.total_timesteps

    @total_timesteps.setter
    def total_timesteps(self, value: int | None) -> None:
        self.state.total_timesteps = value

    @property
    def rng(self) -> np.random.Generator:
        """The driver's random generator: matchmaking seeds and resets (the state's)."""
        return self.state.rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self.state.rng = value

    def state_json(self) -> dict[str, Any]:
        """Everything ``league.json`` holds (see :class:`~sp_wrappers.league.state.LeagueState`)."""
        return self.state.to_json(**self._state_extras())

    def _state_extras(self) -> dict[str, Any]:
        return dict(
            builder=repr(self.builder),
            chunk_steps=self.chunk_steps,
            shares=self.shares,
            payoff=self.payoff.to_json(),
        )

    def _write_state(self) -> None:
        self.state.write(**self._state_extras())

    def _player_dir(self, name: str) -> Path:
        return self.root / PLAYERS_DIR / name

    def view(self) -> LeagueView:
        """What the builder decides from (a copy-free view; do not mutate)."""
        return LeagueView(list(self.learners.values()), list(self.frozen), self.payoff)

    # -- workers -----------------------------------------------------------------------------------
    def _worker_kwargs(self, spec: PlayerSpec, index: int) -> dict[str, Any]:
        make_model = (
            self.make_model[spec.role] if isinstance(self.make_model, Mapping) else self.make_model
        )
        kwargs: dict[str, Any] = dict(
            name=spec.name,
            env_fn=self.env_fn,
            make_model=make_model,
            n_envs=self.n_envs,
            seed=self.seed * 1000 + 100 * index + self.round,
            steps=self.learners[spec.name].steps,
            torch_threads=self.torch_threads,
            vec_env_kwargs=self.vec_env_kwargs,
            trusted_modules=self.archive.trusted_modules,
            magnet=self.magnet,
        )
        directory = self._player_dir(spec.name)
        if (directory / "initial.zip").exists():
            kwargs["initial_zip"] = (directory / "initial.zip").read_bytes()
        model_file = self.model_files.get(spec.name)
        if model_file:
            kwargs["model_zip"] = (self.root / model_file).read_bytes()
        return kwargs

    def _policy(self, name: str) -> Any:
        from ..archive.policy_spec import build_policy

        if name not in self._policies:
            trusted = self.archive.trusted_modules
            self._policies[name] = build_policy(
                self._specs[name], trusted, device="cpu", trusted_classes=self._own_classes
            )
        return self._policies[name]

    def _save_snapshot(self, learner: LearnerState, tags: Sequence[str], round: int) -> str:
        import torch

        policy = self._policy(learner.name)
        state = {k: torch.from_numpy(np.array(v)) for k, v in self._weights[learner.name].items()}
        policy.load_state_dict(state)
        previous = learner.snapshots[-1] if learner.snapshots else "none"
        info = self.archive.save(
            policy,
            step=learner.steps,
            tags=[
                f"role:{learner.role}",
                f"parent:{learner.name}",
                f"previous:{previous}",
                round_tag(round),
                *tags,
            ],
        )
        return info.id

    def _snapshot_into_pool(
        self, learner: LearnerState, round: int, tags: Sequence[str] = ()
    ) -> str:
        snapshot_id = self._save_snapshot(learner, tags, round)
        learner.snapshots.append(snapshot_id)
        learner.last_snapshot_step = learner.steps
        self.frozen.append(FrozenPlayer(snapshot_id, learner.name, learner.role, learner.steps))
        return snapshot_id

    def _prune_pool(self) -> list[str]:
        """Drop frozen players beyond ``max_frozen`` from matchmaking, keeping a spread."""
        return prune_frozen(self.frozen, self.max_frozen)

    def _weights_for(self, opponent: str) -> tuple[str, dict[str, Any], dict[str, np.ndarray]]:
        if opponent in self.learners:
            return self._versions[opponent], self._specs[opponent], self._weights[opponent]
        info = self.archive.get(opponent)
        state = {k: v.numpy() for k, v in self.archive.load_state_dict(opponent).items()}
        return opponent, info.policy_spec, state

    def chunk_fit(self, total_timesteps: int) -> ChunkFit:
        """How a run to ``total_timesteps`` fits the players' rollouts from here (known once the
        run's workers have described their models; before, as if no player had a rollout)."""
        return ChunkFit(
            self.chunk_steps,
            dict(self.shares),
            dict(self.rollouts),
            int(total_timesteps),
            self.total_steps(),
        )

    @property
    def target_steps(self) -> int | None:
        """The league's learner steps at the end of the current run: its budget rounded up to
        whole rollouts in the compute shares (:attr:`ChunkFit.target`); ``None`` before a run."""
        return None if self.fit is None else self.fit.target

    def schedule_steps(self, total_timesteps: int) -> dict[str, int]:
        """Each player's ``num_timesteps`` at the end of a run to ``total_timesteps`` (all players
        together), the horizon of its SB3 schedules: its share of the steps the run ends at
        (:meth:`chunk_fit`'s target: ``total_timesteps`` rounded up to whole rollouts in the
        compute shares), never below its steps now.

        :param total_timesteps: learner steps of every learning player together.
        """
        final_total = self.chunk_fit(total_timesteps).target
        equal = 1.0 / max(1, len(self.learners))
        # The compute shares keep each player's total at its share of the league's steps.
        return {
            name: max(learner.steps, round(self.shares.get(name, equal) * final_total))
            for name, learner in self.learners.items()
        }

    def _plans(self) -> dict[str, ChunkPlan]:
        view = self.view()
        horizons = (
            self.schedule_steps(self.total_timesteps) if self.total_timesteps is not None else {}
        )
        known = set(self.learners) | {f.id for f in self.frozen}
        fit = self.fit if self.fit is not None else self.chunk_fit(self.total_steps() + 1)
        steps = fit.plan({name: p.steps for name, p in self.learners.items()})
        plans = {}
        for name, learner in self.learners.items():
            probabilities = {
                str(k): float(v) for k, v in self.builder.opponents(learner, view).items() if v > 0
            }
            unknown = sorted(set(probabilities) - known)
            total = sum(probabilities.values())
            if unknown or not probabilities or abs(total - 1.0) > 1e-6:
                raise ValueError(
                    f"{type(self.builder).__name__}.opponents({name!r}) returned {probabilities}: "
                    f"it must give probabilities summing to 1 over known players "
                    f"(unknown: {unknown}; learning players and frozen ids are known)."
                )
            weights = {}
            for opponent in probabilities:
                version = self._versions[opponent] if opponent in self.learners else opponent
                if self._sent[name].get(opponent) != version:
                    weights[opponent] = self._weights_for(opponent)
                    self._sent[name][opponent] = version
            plans[name] = ChunkPlan(
                steps=steps[name],
                opponents=probabilities,
                weights=weights,
                reset=name in self.pending_resets,
                seed=int(self.rng.integers(2**31)),
                schedule_steps=horizons.get(name),
                trusted_classes=self._own_classes,
            )
        return plans

    def _absorb(self, results: Mapping[str, ChunkResult]) -> None:
        """Take in a round's games and weights, the builder's snapshots and resets; the games
        reach the archive in one transaction just before ``league.json``."""
        games = []
        for name in self.learners:  # fixed order: the payoff table is the same on every backend
            result = results[name]
            games += result.matches
            self.payoff.add(result.matches)
            learner = self.learners[name]
            learner.steps = result.steps
            self._weights[name] = result.weights
            self._versions[name] = f"{name}@{learner.steps}.{learner.resets}"
            if name in self.pending_resets:
                self.pending_resets.discard(name)
        view = self.view()
        for name, learner in self.learners.items():
            if not self.builder.ready_to_snapshot(learner, view):
                continue
            self._snapshot_into_pool(learner, self.round + 1)
            if self.builder.reset_after_snapshot(learner, self.view(), self.rng):
                learner.resets += 1
                self.pending_resets.add(name)
                # Until its next chunk ends, others face what it restarts from.
                self._weights[name] = self._initial_weights[name]
                self._versions[name] = f"{name}@{learner.steps}.{learner.resets}"
        self._prune_pool()
        self.round += 1
        directory_files = {}
        for name, result in results.items():
            relative = model_file_name(name, self.round)
            atomic_write(self.root / relative, result.model_zip)
            directory_files[name] = relative
        old = dict(self.model_files)
        self.model_files.update(directory_files)
        self.archive.record_matches(games)
        self._write_state()
        for name, relative in old.items():
            if relative != self.model_files.get(name):
                (self.root / relative).unlink(missing_ok=True)

    # -- the run -----------------------------------------------------------------------------------
    def _final_step(self, name: str) -> int | None:
        final = self.final_snapshots.get(name)
        if final is None or final not in self.archive:
            return None
        return self.archive.get(final).step

    def frozen_step(self, learner: LearnerState) -> int | None:
        """The step of the learner's newest snapshot in the pool (``None`` without one)."""
        steps = [f.step for f in self.frozen if f.id in set(learner.snapshots[-1:])]
        return steps[0] if steps else None

    def total_steps(self) -> int:
        """Learner steps taken by all learning players together."""
        return sum(p.steps for p in self.learners.values())

    def run(
        self,
        total_timesteps: int,
        backend: str = "process",
        address: str | None = None,
        num_cpus: float | None = None,
        num_gpus: float = 0,
        actor_options: Mapping[str, Mapping[str, Any]] | None = None,
        stall_seconds: float | None = DEFAULT_STALL_SECONDS,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> LeagueResult:
        """Train until the learning players have taken ``total_timesteps`` learner steps together
        (a resumed league counts the steps it took before), then snapshot every player's final
        weights (tag ``final``, outside the pool). Each round's chunks are whole rollouts in the
        compute shares, and the run goes to ``total_timesteps`` rounded up to such rounds
        (:class:`~sp_wrappers.league.compute.ChunkFit`, told once to ``on_chunks`` when it
        rounded anything). Every SB3 schedule of a player (a ``"lin_..."``
        learning rate, a clip range) runs once over the player's share of ``total_timesteps``
        (:meth:`schedule_steps`), not over each chunk; a resumed league continues the curve.

        :param backend: ``"process"`` (one process per player on this machine), ``"ray"`` (one
            Ray actor per player) or ``"serial"`` (all in this process, one after the other).
        :param address: Ray only: the cluster to connect to (``"auto"``, ``"ray://..."``).
        :param num_cpus: Ray only: CPUs per player's actor; ``None``: one each, or an equal share
            of the cluster's CPUs when it has fewer than one per player. A number the cluster
            cannot hold for every player at once raises
            :class:`~sp_wrappers.league.faults.PlayersDoNotFitError` before training.
        :param num_gpus: Ray only: GPUs per player's actor.
        :param actor_options: Ray only: per player name, more actor options (``resources``...).
        :param stall_seconds: a round in which no player finishes for this long (seconds) is
            reported to ``on_stall``: which players are waiting and why; ``None``: never.
        :param max_retries: ``process`` and ``ray``: new workers per round for players whose
            worker died (a killed process, a lost node) before the run stops; the league
            directory then holds the last complete round, ready to resume.
        """
        from .backends import make_backend

        options: dict[str, Any] = {}
        if backend == "ray":
            options = dict(
                address=address, num_cpus=num_cpus, num_gpus=num_gpus, actor_options=actor_options
            )
        elif address is not None or actor_options or num_gpus or num_cpus is not None:
            raise ValueError(
                "address, num_cpus, num_gpus and actor_options only apply to backend='ray'; "
                "remove them "
                f"or pass backend='ray' (got backend={backend!r})."
            )
        start = time.perf_counter()
        self.total_timesteps = int(total_timesteps)
        workers = {s.name: self._worker_kwargs(s, i) for i, s in enumerate(self.specs)}
        pool = make_backend(backend, workers, **options)
        index = {s.name: i for i, s in enumerate(self.specs)}
        lost: list[str] = []
        learn_seconds: dict[str, float] = {name: 0.0 for name in self.learners}
        learned_steps: dict[str, int] = {name: 0 for name in self.learners}
        warned = False
        try:
            self._start(pool.describe(stall_seconds=stall_seconds, on_stall=self.on_stall))
            self.fit = self.chunk_fit(total_timesteps)
            if self.fit.rounded and self.total_steps() < total_timesteps:
                self.on_chunks(self.fit)
            while self.total_steps() < total_timesteps:
                before = {name: p.steps for name, p in self.learners.items()}
                plans = self._plans()
                results = play_round(
                    pool,
                    plans,
                    lambda name: self._worker_kwargs(self.specs[index[name]], index[name]),
                    self._full_plan,
                    self.round + 1,
                    max_retries=max_retries,
                    stall_seconds=stall_seconds,
                    on_stall=self.on_stall,
                    on_lost=lambda name, why, attempt: lost.append(f"{name}: {why}"),
                )
                self._absorb(results)
                self.round_steps = {
                    name: result.steps - before[name] for name, result in results.items()
                }
                for name, result in results.items():
                    learn_seconds[name] += result.learn_seconds
                    learned_steps[name] += result.steps - before[name]
                    planned = plans[name].steps
                    if result.steps - before[name] >= planned + self.chunk_steps and not warned:
                        warned = True
                        warnings.warn(
                            f"{name} learned {result.steps - before[name]} steps in a chunk of "
                            f"{planned}: its learner learns more steps at a time than its "
                            "chunk (whole episodes or iterations), so the compute shares hold "
                            "only loosely. Raise chunk_steps.",
                            stacklevel=2,
                        )
                if self.on_round is not None:
                    self.on_round(self, results)
        finally:
            pool.close()
        for name, learner in self.learners.items():
            newest = self.frozen_step(learner)
            if name in self.pending_resets or newest == learner.steps:
                # its last weights are its newest pool snapshot (taken at this very step)
                self.final_snapshots[name] = learner.snapshots[-1]
            elif self._final_step(name) == learner.steps:  # a resumed run that took no step
                continue
            elif name in self._weights and learner.steps > 0:
                self.final_snapshots[name] = self._save_snapshot(learner, ["final"], self.round)
        self._write_state()
        rates = {
            name: learned_steps[name] / seconds
            for name, seconds in learn_seconds.items()
            if seconds > 0
        }
        return LeagueResult(
            self.root,
            self.round,
            list(self.learners.values()),
            list(self.frozen),
            dict(self.final_snapshots),
            rates,
            time.perf_counter() - start,
            lost,
            dict(self.shares),
        )

    def _full_plan(self, name: str, plan: ChunkPlan) -> ChunkPlan:
        """``plan`` with the weights of every opponent, for a new worker that holds none."""
        return with_weights(plan, {o: self._weights_for(o) for o in plan.opponents})

    def _start(self, described: Mapping[str, Mapping[str, Any]]) -> None:
        """Take in the players' first description; a new league saves initial models/snapshots."""
        for spec in self.specs:
            info = described[spec.name]
            self._specs[spec.name] = info["spec"]
            self.rollouts[spec.name] = max(1, int(info.get("rollout") or 1))
            self._weights[spec.name] = info["weights"]
            self._initial_weights[spec.name] = info["initial_weights"]
            learner = self.learners[spec.name]
            self._versions[spec.name] = f"{spec.name}@{learner.steps}.{learner.resets}"
            directory = self._player_dir(spec.name)
            if not (directory / "initial.zip").exists():
                directory.mkdir(parents=True, exist_ok=True)
                atomic_write(directory / "initial.zip", info["initial_zip"])
        self._own_classes = tuple(sorted(set().union(*map(spec_classes, self._specs.values()))))
        self._sent = {name: {} for name in self.learners}
        if self.resumed:
            return
        check_players_fit(self._specs)
        for spec in self.specs:
            if self.builder.snapshot_at_start(spec):
                self._snapshot_into_pool(self.learners[spec.name], 0, ["initial"])
        self._write_state()
        self.resumed = True
