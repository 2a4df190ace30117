"""``sp-wrappers train --teams``: one learner per team, trained by ``TeamSelfPlay``.

A team run from start to finish: :class:`TeamRun`, the
:class:`~sp_wrappers.runs.config.TeamRunConfig` kind of :func:`sp_wrappers.runs.start`
(see :func:`~sp_wrappers.runs.resolve.resolve`), deciding which teams share a model, and writing
the run directory (its layout: :mod:`sp_wrappers.runs.rundir`).

``timesteps``, ``save_every`` and ``team_change`` count each team's own learner steps (one step
of every agent of the team: SB3's ``num_timesteps`` of the team's model).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.run_layout import ARCHIVES_DIR, MODELS_DIR, RATINGS_NAME
from ..games.registry import MissingGameError, game_factory
from .config import TEAM_CONFIG_KIND, TeamRunConfig, TrainError
from .models import build_model, check_algo_fits
from .ratings_file import RATINGS_FORMAT
from .report import report_at_end
from .run import Run, RunResult
from .rundir import RunDir
from .summary import duration
from .team_results import evaluate_teams, team_ratings, team_ratings_json

__all__ = [
    "TeamRun",
    "TeamTrainResult",
    "model_groups",
    "TEAM_CONFIG_KIND",
]


# ------------------------------------------------------------------------------------------------
# Which teams share a model
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _TeamProbe:
    """What one copy of the game tells about its teams before training."""

    teams: dict[str, tuple[str, ...]]
    observation_spaces: dict[str, Any]
    action_spaces: dict[str, Any]
    has_masks: dict[str, bool]


def _probe_teams(env_fn: Callable[[], Any], spec: Any, game: str, kwargs: Mapping[str, Any]):
    """The teams of the game under ``spec`` and each team's spaces, as its learner sees them."""
    try:
        game_env = env_fn()
    except MissingGameError as error:
        raise TrainError(str(error)) from None
    except Exception as error:
        raise TrainError(
            f"Cannot build the game {game!r} with game_kwargs {dict(kwargs)}: "
            f"{type(error).__name__}: {error}"
        ) from None
    from ..core.teams import TeamLayout
    from ..envs.selfplay_env import SelfPlayEnv

    try:
        layout = TeamLayout.from_spec(spec, list(game_env.possible_agents))
    except (ValueError, TypeError, KeyError) as error:
        game_env.close()
        raise TrainError(f"`teams`: {error}") from None
    game_env.close()
    observation_spaces, action_spaces, has_masks = {}, {}, {}
    for team in layout.names:
        game_env = env_fn()
        try:
            env = SelfPlayEnv(game_env, learner=team, teams=spec)
        except ValueError as error:  # e.g. a team whose agents' spaces differ
            game_env.close()
            raise TrainError(f"`teams`: {error}") from None
        try:
            env.reset(seed=0)
            observation_spaces[team] = env.observation_space
            action_spaces[team] = env.action_space
            has_masks[team] = env.driver.learner_mask() is not None
        finally:
            env.close()
    return _TeamProbe(dict(layout.teams), observation_spaces, action_spaces, has_masks)


def model_groups(
    observation_spaces: Mapping[str, Any],
    action_spaces: Mapping[str, Any],
    shared: bool | None = None,
    sizes: Mapping[str, int] | None = None,
) -> dict[str, list[str]]:
    """Which teams each model plays: ``{model name: [team, ...]}``.

    One model per distinct pair of spaces: a model named ``"shared"`` for every team when all
    the teams' spaces (and sizes) agree (a symmetric game such as 2-v-2 Quadrapong;
    :class:`TeamSelfPlay` then gives the learner a random team each episode against its own
    snapshots), else one model per team, named after it. ``TeamSelfPlay`` trains either one
    model for every team or one per team, so in a game of three teams or more where only some
    teams' spaces agree, every team gets its own model.

    :param observation_spaces: each team's observation space (team order is kept).
    :param action_spaces: each team's action space.
    :param shared: ``True``: one model for every team, refused when the spaces differ;
        ``False``: one model per team even when the spaces agree (the teams then take turns, as
        ML-Agents' ghost trainer); ``None``: as above.
    :param sizes: each team's number of agents (optional): one model plays a random team each
        episode only when the teams are of one size.
    :raises TrainError: ``shared=True`` with teams whose spaces or sizes differ.

    >>> from gymnasium import spaces
    >>> obs = {"adversary": spaces.Box(0, 1, (16,)), "agent": spaces.Box(0, 1, (14,))}
    >>> act = dict.fromkeys(obs, spaces.Discrete(5))
    >>> model_groups(obs, act)
    {'adversary': ['adversary'], 'agent': ['agent']}
    >>> same = dict.fromkeys(["red", "blue"], spaces.Box(0, 1, (8,)))
    >>> model_groups(same, dict.fromkeys(same, spaces.Discrete(3)))
    {'shared': ['red', 'blue']}
    >>> model_groups(same, dict.fromkeys(same, spaces.Discrete(3)), shared=False)
    {'red': ['red'], 'blue': ['blue']}
    """
    teams = list(observation_spaces)
    first = teams[0]
    differing = [
        team
        for team in teams[1:]
        if observation_spaces[team] != observation_spaces[first]
        or action_spaces[team] != action_spaces[first]
        or (sizes is not None and sizes[team] != sizes[first])
    ]
    if shared and differing:
        described = "; ".join(
            f"{team}: observations {observation_spaces[team]}, actions {action_spaces[team]}"
            + (f", {sizes[team]} agent(s)" if sizes is not None else "")
            for team in [first, *differing]
        )
        raise TrainError(
            f"`shared` trains one model for every team, but the teams' spaces"
            f"{' or sizes' if sizes is not None else ''} differ ({described}); drop `shared` to "
            "train one model per team."
        )
    if shared is False or differing:
        return {team: [team] for team in teams}
    return {"shared": teams}


# ------------------------------------------------------------------------------------------------
# Training
# ------------------------------------------------------------------------------------------------


@dataclass
class TeamTrainResult(RunResult):
    """What a team run produced (:func:`sp_wrappers.runs.start`'s result).

    :param run_dir: the run directory.
    :param config: the run's configuration, as written to ``config.json`` at the end.
    :param steps: learner steps taken by this call, per team.
    :param total_steps: each team's learner steps over the whole run.
    :param seconds: wall-clock time of this call's training.
    :param ratings: per team: its Elo and its latest snapshot's Bradley-Terry rating (see
        ``ratings.json``).
    :param evaluation: per team: the final learner against random teams (games, wins, draws,
        losses, mean team return).
    :param written: the files and folders written, by name.
    :param notes: things skipped and why.
    """

    run_dir: Path
    config: TeamRunConfig
    steps: dict[str, int]
    total_steps: dict[str, int]
    seconds: float
    ratings: dict[str, dict[str, Any]] = field(default_factory=dict)
    evaluation: dict[str, dict[str, Any]] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines: steps and speed, each team's rating and record against random teams."""
        c = self.config
        done = sum(self.steps.values())
        rate = done / self.seconds if self.seconds > 0 else math.nan
        models = c.models or {name: [name] for name in self.total_steps}
        who = (
            f"one {c.algo} model for the teams {', '.join(models['shared'])}"
            if "shared" in models
            else f"{c.algo} for the teams {', '.join(self.total_steps)}"
        )
        lines = [
            f"Trained {who} on {c.game}: {_steps(self.steps)} learner steps "
            f"({_steps(self.total_steps)} in total) in {duration(self.seconds)} "
            f"({rate:,.0f} steps/s over all teams).",
            f"Run directory: {self.run_dir}  ({', '.join(self.written)})",
        ]
        width = max(len(team) for team in [*self.total_steps, *self.evaluation])
        for team in self.total_steps:
            r = self.ratings.get(team, {})
            line = f"  {team:<{width}}  Elo {r.get('elo', math.nan):7.1f}"
            bt = r.get("latest_snapshot")
            if bt and bt.get("rating") is not None:
                line += (
                    f"  latest snapshot {bt['id']}: {bt['rating']:.0f} "
                    f"[{bt['low']:.0f}, {bt['high']:.0f}] (Bradley-Terry against the other "
                    "teams' snapshots)"
                )
            lines.append(line)
        if self.evaluation:
            lines.append("Final learners (sampling their actions) against random teams:")
            for team, e in self.evaluation.items():
                lines.append(
                    f"  {team:<{width}}  {e['wins']:4d} W {e['draws']:4d} D {e['losses']:4d} L "
                    f"in {e['games']} games, mean team return {e['mean_team_return']:+.2f} "
                    f"(random teams against each other: {e['random_team_return']:+.2f})"
                )
        lines.extend(f"Note: {note}" for note in self.notes)
        return "\n".join(lines)


def _steps(steps: Mapping[str, int]) -> str:
    return " / ".join(f"{n:,d}" for n in steps.values())


class TeamRun(Run):
    """One learner per team (:class:`TeamRunConfig`), trained by
    :class:`~sp_wrappers.training.team_selfplay.TeamSelfPlay`: a vector env and a model per
    group of teams that share one, the teams taking turns; then each team's final learner
    against random teams and ``ratings.json`` per team."""

    kind = TEAM_CONFIG_KIND

    def check(self) -> None:
        from ..training.team_selfplay import STATE_NAME

        config, run, options = self.config, self.run_dir, self.options
        self.env_fn = game_factory(config.game, config.game_kwargs)
        probe = self.probe = _probe_teams(
            self.env_fn, config.teams, config.game, config.game_kwargs
        )
        sizes = {team: len(agents) for team, agents in probe.teams.items()}
        groups = model_groups(probe.observation_spaces, probe.action_spaces, config.shared, sizes)
        if options.resume and config.models not in (None, groups):
            raise TrainError(
                f"{run.config_path} trains the models {config.models}, but the game now gives "
                f"{groups}; resume with the game version that wrote the run, or start a new run."
            )
        for teams in groups.values():
            team = teams[0]
            check_algo_fits(
                config.algo,
                probe.observation_spaces[team],
                probe.action_spaces[team],
                probe.has_masks[team],
            )
        self.config = config.replace(models=groups)
        state = run.path / STATE_NAME
        if options.resume and not state.is_file():
            raise TrainError(
                f"{state} does not exist, so there is nothing to resume; start the run again "
                "without `resume` (into a new `run_dir` directory)."
            )
        if not options.resume and state.exists():
            raise TrainError(
                f"{run.path} already holds a TeamSelfPlay run ({STATE_NAME}); continue it with "
                f"`resume` {run.path}, or pass another `run_dir`."
            )
        already = _saved_steps(run, groups) if options.resume else dict.fromkeys(groups, 0)
        timesteps = options.timesteps
        if timesteps is None and options.resume:
            timesteps = int(config.timesteps) - min(already.values())
            if timesteps <= 0:
                raise TrainError(
                    f"The run in {run.path} already has {_steps(already)} of its "
                    f"{config.timesteps:,d} steps per team; pass `timesteps` N to train N more."
                )
        self.steps = int(timesteps if timesteps is not None else config.timesteps)
        if self.steps < 1:
            raise TrainError(f"`timesteps` must be at least 1, got {self.steps}.")
        self.venv_seed = int(config.seed) + sum(already.values())  # new games on resume

    def setup(self) -> None:
        from ..archive.store import SnapshotArchive
        from ..training.team_selfplay import TeamSelfPlay
        from ..training.team_setup import (
            TeamChangeError,
            fitting_team_change,
            make_team_vec_env,
            rollout_sizes,
        )

        config, run, options = self.config, self.run_dir, self.options
        models: dict[str, Any] = {}
        for index, (name, teams) in enumerate(config.models.items()):
            learner = "random" if name == "shared" else name
            venv = make_team_vec_env(
                self.env_fn, config.teams, learner, int(config.n_envs), seed=self.venv_seed
            )
            models[name] = build_model(
                config.algo,
                config.hyperparams,
                int(config.seed) + index,
                venv,
                self.probe.observation_spaces[teams[0]],
                self.tb,
                options.device,
            )
        self.models = models
        if config.team_change is None:  # none asked for: about a tenth of the budget, fitting
            rollouts = rollout_sizes({} if "shared" in models else models)  # every rollout
            self.config = config = config.replace(
                team_change=fitting_team_change(
                    max(1, self.steps // 10), rollouts, budget=self.steps
                )
            )
        s, trust = config.sampler, self.trusted_modules
        archives = {name: run.team_archive_path(name) for name in models}
        try:
            self.selfplay = TeamSelfPlay(
                self.env_fn,
                config.teams,
                models["shared"] if "shared" in models else models,
                team_change=int(config.team_change),
                save_every=int(config.save_every),
                window=s["window"],
                latest_ratio=float(s["latest_ratio"]),
                swap_every=s["swap_every"],
                swap_unit=s["swap_unit"],
                strategy=s["strategy"],
                run_dir=run.path,
                resume=options.resume,
                seed=int(config.seed),
                # the run's archives (RunDir: archives/<team>), trusting the run's modules
                archives={
                    name: SnapshotArchive(path, trusted_modules=trust) if trust else path
                    for name, path in archives.items()
                },
            )
        except TeamChangeError as error:
            raise TrainError(str(error.for_flag("`team_change` "))) from None
        except ValueError as error:
            raise TrainError(str(error)) from None
        self.start_steps = {name: int(model.num_timesteps) for name, model in models.items()}

    def history_entry(self) -> dict[str, Any]:
        return {
            **super().history_entry(),
            "resumed": bool(self.options.resume),
            "from_steps": self.start_steps,
            "steps": self.steps,
            "command": self.options.command,
        }

    def begin(self, entry: dict[str, Any], **changes: Any) -> None:
        from .._version import __version__

        super().begin(
            entry,
            timesteps=min(self.start_steps.values()) + self.steps,
            sp_wrappers_version=__version__,
            **changes,
        )

    def learn(self) -> None:
        goals = {name: self.start_steps[name] + self.steps for name in self.models}
        say = self.say if self.options.progress and self.options.report is not None else None
        _learn_to_goals(self.selfplay, goals, say)

    def evaluate(self) -> None:
        idle = [name for name, model in self.models.items() if int(model.num_timesteps) == 0]
        if idle:
            raise TrainError(
                f"The run in {self.run_dir.path} ended with team(s) {', '.join(idle)} at 0 "
                "learner steps; resume it with `resume` to train them."
            )
        # TeamSelfPlay saved each model to models/<name>.zip after its last learn call
        progress = self.options.progress and self.options.report is not None
        self.evaluation = evaluate_teams(
            self.selfplay, self.env_fn, self.config, list(self.probe.teams), progress=progress
        )
        for venv in {id(m.get_env()): m.get_env() for m in self.models.values()}.values():
            venv.close()

    def write_results(self) -> list[str]:
        from ..training.team_selfplay import STATE_NAME

        self.ratings = team_ratings(self.selfplay)
        rated = team_ratings_json(self.ratings, self.evaluation, self.config)
        RATINGS_FORMAT.write(self.run_dir.ratings_path, rated)
        return [f"{MODELS_DIR}/", f"{ARCHIVES_DIR}/", STATE_NAME, RATINGS_NAME]

    def write_report(self) -> list[str]:
        archives = {team: archive.path for team, archive in self.selfplay.archives.items()}
        return report_at_end(self.run_dir.path, self.notes, team_archives=archives)

    def result(self, written: list[str]) -> TeamTrainResult:
        models = self.models
        return TeamTrainResult(
            self.run_dir.path,
            self.config,
            {name: int(models[name].num_timesteps) - self.start_steps[name] for name in models},
            {name: int(models[name].num_timesteps) for name in models},
            self.seconds,
            self.ratings,
            self.evaluation,
            written,
            self.notes,
        )


def _learn_to_goals(
    selfplay: Any, goals: Mapping[str, int], say: Callable[[str], None] | None
) -> None:
    """Train until every model has ``goals[name]`` learner steps: the teams take turns of
    ``team_change`` steps, and a team that has its budget ends its turn early so that the teams
    still short of theirs learn (no team is left at its start because another took the budget).
    With ``say``, one progress line per turn (per ``team_change`` steps of a shared model)."""
    schedule = sum(goals.values())
    while True:
        behind = {
            name: goal - int(selfplay.models[name].num_timesteps)
            for name, goal in goals.items()
            if int(selfplay.models[name].num_timesteps) < goal
        }
        if not behind:
            return
        learning = selfplay.learning_team
        if learning not in behind:
            selfplay.change_team()
            continue
        chunk = behind[learning] if say is None else min(behind[learning], selfplay.team_change)
        selfplay.learn(selfplay.total_steps + chunk, schedule_timesteps=schedule)
        if say is not None:
            say(_progress_line(selfplay, learning))


def _saved_steps(run: RunDir, groups: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Each model's ``num_timesteps`` as saved in ``models/<name>.zip`` (0 when missing)."""
    import zipfile

    out = {}
    for name in groups:
        path = run.team_model_path(name)
        try:
            with zipfile.ZipFile(path) as archive:
                out[name] = int(json.loads(archive.read("data")).get("num_timesteps", 0))
        except FileNotFoundError:
            out[name] = 0
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
            raise TrainError(f"Cannot read {path} ({error}); it is not a saved model.") from None
    return out


def _progress_line(selfplay: Any, learned: str) -> str:
    """One line after a turn: who learned, then each team's steps, Elo, recent win rate and
    snapshots."""
    parts = []
    for team in selfplay.team_names:
        callback = selfplay.callbacks[team]
        parts.append(
            f"{team} {int(selfplay.models[team].num_timesteps):,d} steps, Elo "
            f"{selfplay.team_elo[team]:.0f}, win rate {callback.win_rate:.2f}, "
            f"{len(selfplay.archives[team])} snapshots"
        )
    head = (
        f"{learned} learned (team changes: {selfplay.team_changes})"
        if len(selfplay.team_names) > 1
        else f"{selfplay.total_steps:,d} steps"
    )
    return f"{head} | " + " | ".join(parts)
