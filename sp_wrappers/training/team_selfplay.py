"""``TeamSelfPlay``: asymmetric self-play, one learning team at a time, as ML-Agents' ghost trainer.

Each team of a game (``teams=``: a mapping ``{team: [agent, ...]}`` or ``"prefix"``, see
:class:`~sp_wrappers.core.teams.TeamLayout`) has its own SB3 model, built by the caller on
:func:`make_team_vec_env` (a :class:`~sp_wrappers.SelfPlayVecEnv` whose learner is that team: one
slot per agent of the team in every game copy, parameter sharing), and its own
:class:`~sp_wrappers.SnapshotArchive`. :meth:`TeamSelfPlay.learn` trains one team at a time:

- the learning team trains for ``team_change`` of its own learner steps (``model.learn(...,
  reset_num_timesteps=False)``, so each model keeps its optimiser state and step count), then the
  next team (in the order of ``teams``) learns;
- every other team plays frozen: each of its games draws one of its snapshots, or (with
  probability ``latest_ratio``) its current model, from its archive (``window``, ``strategy``,
  ``swap_every``/``swap_unit`` per team, as :class:`~sp_wrappers.OpponentSampler`);
- swaps are fair: with ``swap_unit="steps"`` a swap is counted in the frozen team's own steps,
  and by default every team sees ``swaps_per_team_change`` swaps per team change, whatever the
  team sizes (ML-Agents' ``swap_steps = (num_agents / num_opponent_agents) * (team_change /
  swaps)``, see :func:`swap_steps`; :meth:`TeamSelfPlay.swap_every_steps` shows the result).
  Each game copy keeps its own schedule, and a new draw takes effect at the copy's next episode
  start; the steps an episode runs past a due swap count towards the next swap, so the number
  of swaps over a run stays exact whatever the episode lengths (rounded to whole episodes);
  :attr:`TeamSelfPlay.turns` records the draws each frozen team made in each turn;
- each team's :class:`~sp_wrappers.SelfPlayCallback` saves the team's snapshots every
  ``save_every`` of its learner steps (the interval runs on across team changes); Elo is per team,
  rated against the other teams' snapshots and current models (stored in each archive), and
  SB3's logger gets ``selfplay/<team>/elo``, ``win_rate``, ``draw_rate``, ``archive_size``,
  ``snapshots``, ``opponent_elo_mean`` for the learning team, ``selfplay/<team>/elo`` and
  ``archive_size`` for the frozen ones, and ``selfplay/learning_team`` (the team's index);
- match records in each team's archive name the learner ``learner`` and the opponents
  ``<team>/<snapshot id>`` (or ``<team>/latest``), with ``team_a``/``team_b``;
- at every team change (and at the end of ``learn``) a Bradley-Terry fit over every team's
  archive rates every snapshot of every team on one scale with intervals
  (:meth:`TeamSelfPlay.ratings`; stored in each archive as ``bt``, ``bt_low``, ``bt_high``).

Symmetric team games (every team with the same spaces, e.g. 2-v-2) can instead train one model
for every team: pass that one model as ``models`` (not a mapping) and build it on
``make_team_vec_env(env_fn, teams, "random", ...)``. Each episode then gives the learner a random
team against the other team's snapshots from one archive (plain self-play with teams: no team
change, the learner's latest weights play as ``latest``); its logs use the team name
``"shared"``.

Resume: with ``run_dir``, each model is saved there with SB3's ``save``
(``models/<team>.zip``, optimiser state included) before each of its snapshots, at each team
change and at the end of ``learn``, and ``team_selfplay.json`` (format 1, written atomically
after each snapshot and team change) holds the learning team, the step where its turn began,
each team's Elo, save interval and draw count, the finished turns and the schedules' horizon
(``schedule_timesteps``: every SB3 schedule runs once over the whole run, see
:meth:`TeamSelfPlay.learn`).
``TeamSelfPlay(..., run_dir=run_dir, resume=True)`` with freshly built models (the same code that
started the run) continues with the same learning team, step counts, archives and ratings;
``learn(total_timesteps)`` counts the learner steps of every team together since the run began,
so a resumed run only trains what is left (like ML-Agents' ``max_steps``).

With ``simple_tag_v3`` (three predators, ``adversary_0..2``, against one prey, ``agent_0``)::

    from mpe2 import simple_tag_v3
    env_fn = lambda: simple_tag_v3.parallel_env(max_cycles=25)
    models = {team: PPO("MlpPolicy", make_team_vec_env(env_fn, "prefix", team, n_envs=8))
              for team in ("adversary", "agent")}
    run = TeamSelfPlay(env_fn, "prefix", models, team_change=50_000, save_every=10_000,
                       run_dir="runs/tag", resume=True)
    run.learn(1_000_000)

A two-team game with a team per seat, on a tiny budget:

>>> import tempfile
>>> from pettingzoo.classic import rps_v2
>>> from stable_baselines3 import PPO
>>> teams = {"red": ["player_0"], "blue": ["player_1"]}
>>> models = {team: PPO("MlpPolicy", make_team_vec_env(rps_v2.env, teams, team, n_envs=1),
...                     n_steps=32, batch_size=32, n_epochs=1, seed=0)
...           for team in teams}
>>> run = TeamSelfPlay(rps_v2.env, teams, models, archives={t: tempfile.mkdtemp() for t in teams},
...                    team_change=64, save_every=64, seed=0).learn(128)
>>> run.learning_team, run.team_changes, [turn["team"] for turn in run.turns]
('red', 2, ['red', 'blue'])
>>> sorted(run.ratings())
['blue', 'red']
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..archive.store import SnapshotArchive
from ..core.run_layout import MODELS_DIR
from ..core.save_util import save_model
from ..opponents.sampler import STRATEGIES, OpponentSampler
from ..opponents.slots import SWAP_UNITS
from ..ratings.bradley_terry import fit_bradley_terry
from ..ratings.skill import fit_team_ratings
from .schedules import BudgetSchedules
from .team_parts import (
    STATE_NAME,
    TeamCallback,
    TeamSampler,
    check_state,
    env_swap_every,
    load_checkpoint,
    read_state,
    swap_steps,
    team_games,
    team_player,
    write_state,
)
from .team_setup import SHARED, TeamSetup, make_team_vec_env

__all__ = ["TeamSelfPlay", "make_team_vec_env", "swap_steps", "SHARED", "STATE_NAME"]


class TeamSelfPlay:
    """Asymmetric self-play over the teams of a PettingZoo game (see the module docstring).

    :param env_fn: a function returning a fresh PettingZoo env (the game the models' envs play).
    :param teams: ``"prefix"`` (agents grouped by name without the trailing ``_N``) or a mapping
        ``{team: [agent, ...]}``; the team order is the order in which teams learn.
    :param models: ``{team: SB3 model}``, each built on ``make_team_vec_env(env_fn, teams, team,
        ...)``; or one model for every team of a symmetric game (built with ``team="random"``).
    :param archives: ``{team: SnapshotArchive or directory}``, one archive per team (one for the
        shared model: a single archive, or ``{"shared": ...}``). ``None`` puts them in
        ``run_dir/archives/<team>``.
    :param team_change: learner steps of the learning team before the next team learns.
    :param save_every: learner steps between snapshots of a team (int, or ``{team: int}``);
        default ``team_change // 2``.
    :param window: the newest snapshots a frozen team draws from (``None``: all), or per team.
    :param latest_ratio: probability that a frozen team plays its current model rather than a
        snapshot (ML-Agents' ``play_against_latest_model_ratio``), or per team.
    :param swap_every: keep a frozen team's draw for this many of its own steps
        (``swap_unit="steps"``) or episodes; ``None`` (default) computes the fair interval from
        ``swaps_per_team_change``. An int or ``{team: int}``.
    :param swap_unit: ``"steps"`` or ``"episodes"``.
    :param strategy: ``"uniform"`` or ``"pfsp"``, or per team.
    :param swaps_per_team_change: the swaps each frozen team sees per team change (game copy by
        game copy) when ``swap_every`` is ``None`` and ``swap_unit="steps"``.
    :param run_dir: where the state file and the model checkpoints go (needed to resume).
    :param resume: continue the run in ``run_dir`` when it holds a state file (start fresh
        otherwise); ``False`` refuses a ``run_dir`` that already holds one.
    :param seed: seeds the samplers' draws; a resumed run also reseeds each model's env with
        ``seed + its steps`` (new games, not a replay of the first ones).
    :param elo_k: K factor of the online Elo.
    :param initial_elo: every team's Elo before its first game (ML-Agents' ``initial_elo``).
    :param sampler_kwargs: other :class:`~sp_wrappers.OpponentSampler` arguments for every team's
        sampler (``fixed_opponents``, ``deterministic``, ``pfsp_weighting``, ...).
    :param verbose: 1 prints a line with every team's Elo at every team change.

    After :meth:`learn`: :attr:`learning_team`, :attr:`team_changes`, :attr:`team_elo` (each
    team's online Elo), :attr:`turns` (one entry per finished turn: ``team``, ``start_step``,
    ``end_step`` and ``swaps``, the draws each frozen team made in it), :attr:`bt_result` (the last
    Bradley-Terry fit) and :meth:`ratings`.
    """

    def __init__(
        self,
        env_fn: Callable[..., Any],
        teams: Any,
        models: Mapping[str, Any] | Any,
        archives: Mapping[str, SnapshotArchive | str | os.PathLike[str]]
        | SnapshotArchive
        | str
        | os.PathLike[str]
        | None = None,
        team_change: int = 20_000,
        save_every: int | Mapping[str, int] | None = None,
        window: int | None | Mapping[str, int | None] = 10,
        latest_ratio: float | Mapping[str, float] = 0.5,
        swap_every: int | Mapping[str, int] | None = None,
        swap_unit: str = "steps",
        strategy: str | Mapping[str, str] = "uniform",
        swaps_per_team_change: int = 4,
        run_dir: str | os.PathLike[str] | None = None,
        resume: bool = False,
        seed: int | None = None,
        elo_k: float = 16.0,
        initial_elo: float = 1200.0,
        sampler_kwargs: Mapping[str, Any] | None = None,
        verbose: int = 0,
    ) -> None:
        if not isinstance(team_change, int | np.integer) or team_change < 1:
            raise ValueError(
                f"team_change must be a positive number of learner steps, got {team_change!r}; "
                "pass e.g. team_change=20_000 (several save_every intervals, so that each turn "
                "adds snapshots for the other teams to meet)."
            )
        if swap_unit not in SWAP_UNITS:
            raise ValueError(f"swap_unit must be one of {SWAP_UNITS}, got {swap_unit!r}.")
        if not isinstance(swaps_per_team_change, int | np.integer) or swaps_per_team_change < 1:
            raise ValueError(
                f"swaps_per_team_change must be a positive integer, got {swaps_per_team_change!r}."
            )
        self.seed = seed
        self.team_change = int(team_change)
        self.swap_unit = swap_unit
        self.swaps_per_team_change = int(swaps_per_team_change)
        self.verbose = verbose
        self.run_dir = None if run_dir is None else Path(run_dir)
        #: the run's teams, models and archives, resolved and checked (the run reads them there)
        setup = self.setup = TeamSetup(env_fn, teams, models, archives, self.run_dir)
        self.env_fn, self.teams_spec, self.layout = setup.env_fn, setup.teams_spec, setup.layout
        self.shared, self.team_names = setup.shared, setup.team_names
        self.models, self.archives = setup.models, setup.archives
        per_team = setup.per_team
        knobs = dict(window=window, latest_ratio=latest_ratio, strategy=strategy)
        knobs_per_team = {k: per_team(v, k) for k, v in knobs.items()}
        for team, value in knobs_per_team["strategy"].items():
            if value not in STRATEGIES:
                raise ValueError(f"strategy for team {team!r} must be one of {STRATEGIES}.")
        self.save_every = per_team(
            save_every if save_every is not None else max(1, self.team_change // 2), "save_every"
        )
        self._swap_every = None if swap_every is None else per_team(swap_every, "swap_every")
        rng = np.random.default_rng(seed)
        seeds = {team: int(rng.integers(2**31)) for team in self.team_names}
        reserved = {"archive", "seed", "swap_unit", "swap_every", "learner_id", *knobs_per_team}
        clash = sorted(reserved & set(sampler_kwargs or {}))
        if clash:
            raise ValueError(
                f"sampler_kwargs may not set {clash}: pass them to TeamSelfPlay itself (window, "
                "latest_ratio, strategy, swap_every, swap_unit, seed) or leave them to it."
            )
        self.samplers: dict[str, OpponentSampler] = {}
        for team in self.team_names:
            kwargs = {k: knobs_per_team[k][team] for k in knobs_per_team}
            kwargs.update(sampler_kwargs or {})
            if self.shared:  # plain self-play: swap_every counts the learner's slot steps
                every = int(self._swap_every[team]) if self._swap_every else 1
                self.samplers[team] = OpponentSampler(
                    self.archives[team],
                    swap_unit=swap_unit,
                    swap_every=every,
                    seed=seeds[team],
                    **kwargs,
                )
            else:
                self.samplers[team] = TeamSampler(
                    team, self.archives[team], swap_unit=swap_unit, seed=seeds[team], **kwargs
                )
        #: each team's online Elo (its callback updates its own and the frozen teams' entries)
        self.team_elo: dict[str, float] = {team: float(initial_elo) for team in self.team_names}
        self.callbacks = {
            team: TeamCallback(
                team,
                self.archives[team],
                shared=self.shared,
                team_elo=self.team_elo,
                opponent_archives=self.setup.opponent_archives(team),
                team_index=index,
                checkpoint=partial(self.checkpoint, team),
                snapshot_saved=self.write_state,
                save_every=self.save_every[team],
                elo_k=elo_k,
                initial_elo=initial_elo,
            )
            for index, team in enumerate(self.team_names)
        }
        self.learning_team = self.team_names[0]
        self.team_changes = 0
        self.turn_start_step = 0
        self.bt_result: Any = None
        self.schedule_timesteps: int | None = None
        self.turns: list[dict[str, Any]] = []
        self._draws_at_turn_start = self._draws()
        self._started = False
        state_path = self.state_path
        if state_path is not None and state_path.exists():
            if not resume:
                raise ValueError(
                    f"{state_path} holds a TeamSelfPlay run. Pass resume=True to continue it, or "
                    "choose a new run_dir."
                )
            self._restore(read_state(state_path))
        self.setup.wire_envs(self.samplers)
        self.check_rollouts()

    def check_rollouts(self) -> None:
        """Refuse a ``team_change`` shorter than a team model's rollout (called by ``__init__``;
        see :meth:`~sp_wrappers.training.team_setup.TeamSetup.check_rollouts`).

        :raises TeamChangeError: naming the team, both numbers and a ``team_change`` that fits.
        """
        self.setup.check_rollouts(self.team_change)

    # -- the loop ----------------------------------------------------------------------------------
    @property
    def total_steps(self) -> int:
        """The learner steps of every team together (each model's ``num_timesteps``)."""
        return sum(int(model.num_timesteps) for model in self.models.values())

    @property
    def state_path(self) -> Path | None:
        """``run_dir / "team_selfplay.json"`` (``None`` without a run directory)."""
        return None if self.run_dir is None else self.run_dir / STATE_NAME

    def learn(
        self,
        total_timesteps: int,
        callback: Any = None,
        log_interval: int = 1,
        schedule_timesteps: int | None = None,
    ) -> TeamSelfPlay:
        """Train until the learner steps of every team together reach ``total_timesteps``
        (counted since the run began: a resumed run trains what is left).

        Every SB3 schedule of every model (learning rate, clip range, exploration...) runs once
        over the whole run, not over each team's turn: each team's schedules reach their end
        at the step count the team will have when the run reaches ``schedule_timesteps``
        (:meth:`schedule_budgets`; see :class:`~sp_wrappers.training.schedules.BudgetSchedules`).

        :param total_timesteps: learner steps summed over every team's model.
        :param callback: more SB3 callbacks for the learning team's ``learn`` calls, beside its
            self-play callback: one callback (or list) for every team, or ``{team: callback}``.
        :param log_interval: SB3's ``log_interval`` (in rollouts for on-policy learners).
        :param schedule_timesteps: the learner steps of every team together (since the run
            began) over which the schedules run; default: ``total_timesteps``, or the value an
            earlier call (or the resumed run's state file) used when that is larger. Pass the
            run's whole budget when you call ``learn`` in pieces.
        """
        if not isinstance(total_timesteps, int | np.integer) or total_timesteps < 1:
            raise ValueError(
                f"total_timesteps must be a positive integer, got {total_timesteps!r}."
            )
        if schedule_timesteps is None:
            schedule_timesteps = max(int(total_timesteps), self.schedule_timesteps or 0)
        elif not isinstance(schedule_timesteps, int | np.integer) or schedule_timesteps < 1:
            raise ValueError(
                f"schedule_timesteps must be a positive integer, got {schedule_timesteps!r}."
            )
        self.schedule_timesteps = int(schedule_timesteps)
        extra = self.setup.per_team(callback, "callback") if callback is not None else {}
        self._start()
        while self.total_steps < total_timesteps:
            team = self.learning_team
            model = self.models[team]
            left_in_turn = self.turn_start_step + self.team_change - int(model.num_timesteps)
            if not self.shared and left_in_turn <= 0:
                self._change_team()
                continue
            steps = int(total_timesteps - self.total_steps)
            if not self.shared:
                steps = min(steps, left_in_turn)
            self._begin_turn(team)
            callback = self.callbacks[team]
            before = int(model.num_timesteps)
            budget = self.schedule_budgets(self.schedule_timesteps)[team]
            callbacks: list[Any] = [callback, BudgetSchedules(max(budget, 1))]
            more = extra.get(team)
            if more is not None:
                callbacks += list(more) if isinstance(more, list | tuple) else [more]
            model.learn(
                steps,
                callback=callbacks,
                reset_num_timesteps=False,
                log_interval=log_interval,
                tb_log_name=f"team_{team}",
            )
            if callback.stop_reason:
                raise RuntimeError(callback.stop_reason)
            if int(model.num_timesteps) <= before:
                raise RuntimeError(
                    f"The model of team {team!r} took no step in learn(); check its env (it must "
                    "be the make_team_vec_env it was built on)."
                )
            self.checkpoint(team)
            if self.shared:
                self.fit_ratings()
                self.write_state()
        if not self.shared and self.turn_start_step + self.team_change <= int(
            self.models[self.learning_team].num_timesteps
        ):
            self._change_team()
        self.fit_ratings()
        self.write_state()
        return self

    def schedule_budgets(self, total_timesteps: int) -> dict[str, int]:
        """Each team's ``num_timesteps`` when the learner steps of every team together reach
        ``total_timesteps``, turn by turn from where the run is now (each turn ``team_change`` of
        the learning team's steps): the horizon of each team's schedules.

        :param total_timesteps: learner steps summed over every team's model.
        """
        steps = {t: int(m.num_timesteps) for t, m in self.models.items()}
        team, start = self.learning_team, self.turn_start_step
        while sum(steps.values()) < total_timesteps:
            left = start + self.team_change - steps[team]
            if not self.shared and left <= 0:
                team = self.team_names[(self.team_names.index(team) + 1) % len(self.team_names)]
                start = steps[team]
                continue
            more = int(total_timesteps) - sum(steps.values())
            steps[team] += more if self.shared else min(more, left)
        return steps

    def _start(self) -> None:
        """First snapshot of every team with an empty archive (the other teams' first opponent)."""
        if self._started:
            return
        self._started = True
        for team in self.team_names:
            archive = self.archives[team]
            if archive.latest() is None:
                model = self.models[team]
                archive.save(model, step=int(model.num_timesteps), tags=(f"team:{team}",))
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        self.write_state()

    def _begin_turn(self, team: str) -> None:
        """Set the frozen teams' samplers for this team's turn: their latest weights, the fair
        swap interval and the archive PFSP reads."""
        if self.shared:
            return
        learner_agents = len(self.layout.teams[team])
        n_games = self.setup.n_games(team)
        for frozen, sampler in self.samplers.items():
            if frozen == team:
                continue
            assert isinstance(sampler, TeamSampler)
            sampler.set_latest(self.models[frozen])
            sampler.scores_archive = self.archives[team]
            sampler.swap_every = self._env_swap_every(frozen, learner_agents, n_games)

    def _env_swap_every(self, frozen: str, learner_agents: int, n_games: int) -> int:
        if self.swap_unit == "episodes":
            return int(self._swap_every[frozen]) if self._swap_every else 1
        steps = self.swap_every_steps(frozen, learner_agents)
        if self._swap_every is not None:  # given per game copy in the frozen team's steps
            return steps
        return env_swap_every(steps, n_games)

    def swap_every_steps(self, frozen: str, learner_agents: int | None = None) -> int:
        """The swap interval of a frozen team in its own steps: ``swap_every`` when given (per
        game copy), else ML-Agents' fair ``swap_steps`` (all game copies together) against a
        learning team of ``learner_agents`` agents (default: the team that learns now)."""
        if self._swap_every is not None:
            return int(self._swap_every[frozen])
        if learner_agents is None:
            learner_agents = len(self.layout.teams[self.learning_team])
        return swap_steps(
            self.team_change,
            self.swaps_per_team_change,
            num_agents=len(self.layout.teams[frozen]),
            num_opponent_agents=learner_agents,
        )

    def change_team(self) -> None:
        """End the learning team's turn now (before ``team_change`` of its steps): the next team
        learns from the next :meth:`learn` call. A run that gives every team its own budget calls
        it when the learning team has had its budget and another team has not."""
        if not self.shared:
            self._change_team()

    def _change_team(self) -> None:
        team = self.learning_team
        self.checkpoint(team)
        self.fit_ratings()
        drawn = self._draws()
        self.turns.append(
            {
                "team": team,
                "start_step": self.turn_start_step,
                "end_step": int(self.models[team].num_timesteps),
                "swaps": {
                    t: drawn[t] - self._draws_at_turn_start.get(t, 0) for t in drawn if t != team
                },
            }
        )
        self._draws_at_turn_start = drawn
        index = self.team_names.index(team)
        self.learning_team = self.team_names[(index + 1) % len(self.team_names)]
        self.turn_start_step = int(self.models[self.learning_team].num_timesteps)
        self.team_changes += 1
        self.write_state()
        if self.verbose:
            elo = ", ".join(f"{t} {e:.0f}" for t, e in self.team_elo.items())
            print(f"team change {self.team_changes}: {self.learning_team!r} learns; elo {elo}")

    # -- ratings -----------------------------------------------------------------------------------
    def opponent_archives(self, team: str) -> dict[str, SnapshotArchive]:
        """The archives of the teams ``team`` plays against (none for the shared model)."""
        return self.setup.opponent_archives(team)

    def team_index(self, team: str) -> int:
        """The position of ``team`` in the learning order (logged as ``selfplay/learning_team``)."""
        return self.team_names.index(team)

    def fit_ratings(self) -> Any:
        """Fit Bradley-Terry ratings over every team's archive on one scale, and OpenSkill skill
        ratings (:func:`~sp_wrappers.ratings.skill.fit_team_ratings`, the games in the archives'
        order); store each snapshot's ``bt``, ``bt_low``, ``bt_high`` and ``openskill``,
        ``openskill_low``, ``openskill_high`` (Elo scale, 95% intervals; ``skill`` stays the
        online rating pruning ranks by) in its archive. Returns the
        Bradley-Terry fit (``None`` without games). Players are named ``<team>/<snapshot id>``."""
        games = list(team_games(self.archives, self.shared))
        if not games:
            return None
        result = fit_bradley_terry(games)
        self.bt_result = result
        # a score of 1 ranks a first, 0 second, 0.5 ties them (ranks: lower is better)
        skill = fit_team_ratings(([[a], [b]], [1.0 - score, score]) for a, b, score in games)
        for team, archive in self.archives.items():
            updates = {}
            for info in archive.snapshots():
                name = team_player(team, info.id)
                if name in result.ratings:
                    low, high = result.intervals[name]
                    updates[info.id] = {
                        "bt": result.ratings[name],
                        "bt_low": low,
                        "bt_high": high,
                    }
                if name in skill.ratings:
                    low, high = skill.intervals[name]
                    updates.setdefault(info.id, {}).update(
                        {
                            "openskill": skill.ratings[name],
                            "openskill_low": low,
                            "openskill_high": high,
                        }
                    )
            if updates:
                archive.update_ratings(updates)  # keeps the other keys, read inside the lock
        return result

    def ratings(self) -> dict[str, dict[str, Any]]:
        """Each team's ratings: ``elo`` (its current model's online Elo), and per snapshot its
        Elo, its Bradley-Terry rating with interval (``bt``, ``bt_low``, ``bt_high``) and its
        OpenSkill rating with interval (``openskill``, ``openskill_low``, ``openskill_high``)
        from the last fit. Also written to each archive's snapshot ratings."""
        out: dict[str, dict[str, Any]] = {}
        for team in self.team_names:
            snapshots = {info.id: dict(info.ratings or {}) for info in self.archives[team]}
            out[team] = {"elo": self.team_elo[team], "snapshots": snapshots}
        return out

    # -- state file and checkpoints ----------------------------------------------------------------
    def checkpoint(self, team: str) -> None:
        """Save ``team``'s model to ``run_dir/models/<team>.zip`` (no-op without ``run_dir``)."""
        if self.run_dir is not None:
            save_model(self.models[team], self.run_dir / MODELS_DIR / f"{team}.zip")

    def write_state(self) -> None:
        """Write ``team_selfplay.json`` atomically (no-op without ``run_dir``)."""
        path = self.state_path
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        write_state(path, self._state())

    def _draws(self) -> dict[str, int]:
        """How many opponents each team's sampler has drawn so far."""
        return {t: int(getattr(s, "draws", 0)) for t, s in self.samplers.items()}

    def _state(self) -> dict[str, Any]:
        """What ``team_selfplay.json`` holds about the run (see :meth:`_restore`)."""
        return {
            "teams": {t: list(agents) for t, agents in self.layout.teams.items()},
            "shared": self.shared,
            "learning_team": self.learning_team,
            "team_changes": self.team_changes,
            "turn_start_step": self.turn_start_step,
            "team_change": self.team_change,
            "steps": {t: int(m.num_timesteps) for t, m in self.models.items()},
            "elo": dict(self.team_elo),
            "last_save_step": {t: int(c.resume_save_step or 0) for t, c in self.callbacks.items()},
            "archives": {t: str(a.path) for t, a in self.archives.items()},
            "models": {t: f"{MODELS_DIR}/{t}.zip" for t in self.team_names},
            "swap_draws": self._draws(),
            "draws_at_turn_start": self._draws_at_turn_start,
            "turns": self.turns,
            "schedule_timesteps": self.schedule_timesteps,
        }

    def _restore(self, state: dict[str, Any]) -> None:
        """Put the run back where its state file and model checkpoints left it (checked first)."""
        assert self.run_dir is not None and self.state_path is not None
        check_state(state, self.state_path, self.layout.teams, self.shared, self.archives)
        for team in self.team_names:
            path = self.run_dir / MODELS_DIR / f"{team}.zip"
            if path.exists():
                load_checkpoint(self.models[team], path)
        if self.seed is not None:  # new games and draws, not a replay of the first ones
            for team, model in self.models.items():
                model.get_env().seed(int(self.seed) + int(model.num_timesteps))
                sampler = self.samplers[team]
                sampler.rng = np.random.default_rng([int(self.seed), self.total_steps])
        self.learning_team = str(state["learning_team"])
        self.team_changes = int(state["team_changes"])
        self.turn_start_step = int(state["turn_start_step"])
        self.team_elo.update({t: float(e) for t, e in state["elo"].items()})  # (the callbacks')
        for team, step in state.get("last_save_step", {}).items():
            if team in self.callbacks:
                self.callbacks[team].resume_save_step = int(step)
        for team, drawn in state.get("swap_draws", {}).items():
            if team in self.samplers and hasattr(self.samplers[team], "draws"):
                self.samplers[team].draws = int(drawn)
        self._draws_at_turn_start = {
            t: int(n) for t, n in state.get("draws_at_turn_start", {}).items()
        }
        self.turns = list(state.get("turns", []))
        horizon = state.get("schedule_timesteps")
        self.schedule_timesteps = None if horizon is None else int(horizon)
        if int(state.get("team_change", self.team_change)) != self.team_change:
            warnings.warn(
                f"Resuming with team_change={self.team_change} (the run used "
                f"{state.get('team_change')}); the current turn ends by the new value.",
                stacklevel=3,
            )
        self._started = False

    def __repr__(self) -> str:
        return (
            f"TeamSelfPlay(teams={self.team_names}, learning_team={self.learning_team!r}, "
            f"team_change={self.team_change}, steps={self.total_steps})"
        )
