"""``sp-wrappers train --teams``: one learner per team, trained by ``TeamSelfPlay``.

A team run from start to finish: :func:`train_teams` runs a
:class:`~sp_wrappers.runs.config.TeamRunConfig` (see :func:`~sp_wrappers.runs.resolve.resolve_run`),
deciding which teams share a model, and writes the run directory.

A team run directory holds::

    config.json          everything that reproduces the run ("teams", "team_change", "models",
                         per-team "timesteps", ...); `sp-wrappers train --config` replays it
    models/<name>.zip    one SB3 model per entry of config.json's "models" (a team, or "shared" when
                         one model plays every team), rewritten at every team change
    archives/<team>/     each team's SnapshotArchive: its snapshots and match history
    team_selfplay.json   TeamSelfPlay's state: the learning team, step counts, Elo per team
    ratings.json         per team: Elo, Bradley-Terry ratings of its snapshots against the
                         other teams' snapshots, and the final learner against random teams
    report-<team>.html   one self-contained page per team archive (sp-wrappers report
                         RUN_DIR/archives/<team> rewrites it)
    tb/                  TensorBoard logs, one folder per model (when tensorboard is installed)

``timesteps``, ``save_every`` and ``team_change`` count each team's own learner steps (one step
of every agent of the team: SB3's ``num_timesteps`` of the team's model).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.jsonio import write_json
from ..games.registry import MissingGameError, game_factory
from .config import TEAM_CONFIG_KIND, TeamRunConfig, TrainError
from .models import build_model, check_algo_fits, limited_torch_threads
from .report import report_at_end
from .rundir import CONFIG_NAME, tensorboard_dir
from .summary import duration

__all__ = [
    "train_teams",
    "TeamTrainResult",
    "model_groups",
    "TEAM_CONFIG_KIND",
]

MODELS_DIR = "models"
ARCHIVES_DIR = "archives"
RATINGS_NAME = "ratings.json"
TEAM_RATINGS_FORMAT_VERSION = 1


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
        raise TrainError(f"--teams: {error}") from None
    game_env.close()
    observation_spaces, action_spaces, has_masks = {}, {}, {}
    for team in layout.names:
        game_env = env_fn()
        try:
            env = SelfPlayEnv(game_env, learner=team, teams=spec)
        except ValueError as error:  # e.g. a team whose agents' spaces differ
            game_env.close()
            raise TrainError(f"--teams: {error}") from None
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
            f"--shared trains one model for every team, but the teams' spaces"
            f"{' or sizes' if sizes is not None else ''} differ ({described}); drop --shared to "
            "train one model per team."
        )
    if shared is False or differing:
        return {team: [team] for team in teams}
    return {"shared": teams}


# ------------------------------------------------------------------------------------------------
# Training
# ------------------------------------------------------------------------------------------------


@dataclass
class TeamTrainResult:
    """What :func:`train_teams` produced.

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


def train_teams(
    config: TeamRunConfig | Mapping[str, Any],
    run_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    timesteps: int | None = None,
    progress: bool = True,
    device: str = "cpu",
    torch_threads: int | None = 1,
    command: str | None = None,
    report: Callable[[str], None] | None = print,
    html_report: bool = True,
    trusted_modules: Sequence[str] = (),
) -> TeamTrainResult:
    """Train one learner per team with :class:`~sp_wrappers.training.team_selfplay.TeamSelfPlay` and
    write the run directory (see the module docstring).

    :param config: the run's configuration (:func:`~sp_wrappers.runs.resolve.resolve_run`), or
        the content of a team run's ``config.json``.
    :param run_dir: where the run lives (default: ``runs/<game>``).
    :param resume: continue the run in ``run_dir`` (its models, archives and
        ``team_selfplay.json``: the same learning team, step counts and Elo).
    :param timesteps: learner steps per team for this call (default: ``config.timesteps``
        for a new run, the steps still missing to reach it when resuming).
    :param progress: print one line per team change (team, steps, Elo, win rate, snapshots).
    :param device: torch device of the learners.
    :param torch_threads: torch CPU threads while training (``None`` leaves torch's setting).
    :param command: the command line, recorded in ``config.json``'s history.
    :param report: where progress lines go (``None``: nowhere).
    :param html_report: write one page per team at the end, ``report-<team>.html`` (see
        :func:`~sp_wrappers.runs.report.report_at_end`; a page that cannot be written is a note).
    :param trusted_modules: modules whose classes the teams' snapshots may name, on top of those
        the run's configuration names (see :func:`~sp_wrappers.runs.rundir.run_trusted_modules`).
    """
    from ..archive.store import SnapshotArchive
    from ..training.team_selfplay import STATE_NAME, TeamSelfPlay
    from ..training.team_setup import (
        TeamChangeError,
        fitting_team_change,
        make_team_vec_env,
        rollout_sizes,
    )

    if not isinstance(config, TeamRunConfig):
        config = TeamRunConfig.from_json(config)
    from .rundir import run_trusted_modules, slug

    run = Path(run_dir if run_dir is not None else f"runs/{slug(config.game)}")
    trust = run_trusted_modules(config, trusted_modules)
    notes: list[str] = []
    env_fn = game_factory(config.game, config.game_kwargs)
    probe = _probe_teams(env_fn, config.teams, config.game, config.game_kwargs)
    sizes = {team: len(agents) for team, agents in probe.teams.items()}
    groups = model_groups(probe.observation_spaces, probe.action_spaces, config.shared, sizes)
    if resume and config.models not in (None, groups):
        raise TrainError(
            f"{run / CONFIG_NAME} trains the models {config.models}, but the game now gives "
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
    config = config.replace(models=groups)
    if resume and not (run / STATE_NAME).is_file():
        raise TrainError(
            f"{run / STATE_NAME} does not exist, so there is nothing to resume; start the run "
            "again without --resume (into a new --out directory)."
        )
    if not resume and (run / STATE_NAME).exists():
        raise TrainError(
            f"{run} already holds a TeamSelfPlay run ({STATE_NAME}); continue it with --resume "
            f"{run}, or pass another --out."
        )
    run.mkdir(parents=True, exist_ok=True)
    tb = tensorboard_dir(run, notes)
    already = _saved_steps(run, groups) if resume else dict.fromkeys(groups, 0)
    if timesteps is None:
        timesteps = int(config.timesteps) - min(already.values()) if resume else None
        if timesteps is not None and timesteps <= 0:
            raise TrainError(
                f"The run in {run} already has {_steps(already)} of its "
                f"{config.timesteps:,d} steps per team; pass --timesteps N to train N more."
            )
    steps = int(timesteps if timesteps is not None else config.timesteps)
    if steps < 1:
        raise TrainError(f"--timesteps must be at least 1, got {steps}.")
    venv_seed = int(config.seed) + sum(already.values())  # new games on resume
    with limited_torch_threads(torch_threads):
        models: dict[str, Any] = {}
        for index, (name, teams) in enumerate(groups.items()):
            learner = "random" if name == "shared" else name
            venv = make_team_vec_env(
                env_fn, config.teams, learner, int(config.n_envs), seed=venv_seed
            )
            models[name] = build_model(
                config.algo,
                config.hyperparams,
                int(config.seed) + index,
                venv,
                probe.observation_spaces[teams[0]],
                tb,
                device,
            )
        if config.team_change is None:  # none asked for: about a tenth of the budget, fitting
            rollouts = rollout_sizes({} if "shared" in models else models)  # every rollout
            config = config.replace(
                team_change=fitting_team_change(max(1, steps // 10), rollouts, budget=steps)
            )
        s = config.sampler
        try:
            selfplay = TeamSelfPlay(
                env_fn,
                config.teams,
                models["shared"] if "shared" in models else models,
                team_change=int(config.team_change),
                save_every=int(config.save_every),
                window=s["window"],
                latest_ratio=float(s["latest_ratio"]),
                swap_every=s["swap_every"],
                swap_unit=s["swap_unit"],
                strategy=s["strategy"],
                run_dir=run,
                resume=resume,
                seed=int(config.seed),
                # the run's archives (run_dir/archives/<team>), trusting the run's modules
                archives={
                    name: SnapshotArchive(run / ARCHIVES_DIR / name, trusted_modules=trust)
                    for name in models
                }
                if trust
                else None,
            )
        except TeamChangeError as error:
            raise TrainError(str(error.for_flag("--team-change "))) from None
        except ValueError as error:
            raise TrainError(str(error)) from None
        start_steps = {name: int(model.num_timesteps) for name, model in models.items()}
        from .._version import __version__

        entry = {
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "resumed": bool(resume),
            "from_steps": start_steps,
            "steps": steps,
            "command": command,
        }
        config = config.replace(
            timesteps=min(start_steps.values()) + steps,
            history=(*config.history, entry),
            sp_wrappers_version=__version__,
        )
        write_json(run / CONFIG_NAME, config.to_json())
        goals = {name: start_steps[name] + steps for name in models}
        started = time.perf_counter()
        _learn_to_goals(selfplay, goals, report if (progress and report is not None) else None)
        seconds = time.perf_counter() - started
        idle = [name for name, model in models.items() if int(model.num_timesteps) == 0]
        if idle:
            raise TrainError(
                f"The run in {run} ended with team(s) {', '.join(idle)} at 0 learner steps; "
                "resume it with --resume to train them."
            )
        # TeamSelfPlay saved each model to models/<name>.zip after its last learn call
        evaluation = _evaluate_teams(
            selfplay, env_fn, config, probe, progress=progress and report is not None
        )
        for venv in {id(m.get_env()): m.get_env() for m in models.values()}.values():
            venv.close()
    ratings = _team_ratings(selfplay)
    write_json(run / RATINGS_NAME, _team_ratings_json(ratings, evaluation, config))
    written = [CONFIG_NAME, f"{MODELS_DIR}/", f"{ARCHIVES_DIR}/", STATE_NAME, RATINGS_NAME]
    if tb is not None:
        written.append("tb/")
    entry = {**entry, "seconds": round(seconds, 1)}
    config = config.replace(history=(*config.history[:-1], entry))
    write_json(run / CONFIG_NAME, config.to_json())
    if html_report:
        archives = {team: archive.path for team, archive in selfplay.archives.items()}
        written += report_at_end(run, notes, team_archives=archives)
    return TeamTrainResult(
        run,
        config,
        {name: int(models[name].num_timesteps) - start_steps[name] for name in models},
        {name: int(models[name].num_timesteps) for name in models},
        seconds,
        ratings,
        evaluation,
        written,
        notes,
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


def _model_path(run: Path, name: str) -> Path:
    return run / MODELS_DIR / f"{name}.zip"


def _saved_steps(run: Path, groups: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Each model's ``num_timesteps`` as saved in ``models/<name>.zip`` (0 when missing)."""
    import zipfile

    out = {}
    for name in groups:
        path = _model_path(run, name)
        try:
            with zipfile.ZipFile(path) as archive:
                out[name] = int(json.loads(archive.read("data")).get("num_timesteps", 0))
        except FileNotFoundError:
            out[name] = 0
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
            raise TrainError(f"Cannot read {path} ({error}); it is not a saved model.") from None
    return out


def _evaluate_teams(
    selfplay: Any,
    env_fn: Callable[[], Any],
    config: TeamRunConfig,
    probe: _TeamProbe,
    progress: bool = False,
) -> dict[str, dict[str, Any]]:
    """Each team's final model (sampling its actions, as it trained) against random teams, and
    random play in its place against the same random teams (the baseline of its team return);
    with ``progress``, a tqdm bar over the games (long episodes take minutes)."""
    from tqdm.auto import tqdm

    n_games = int(config.eval_games)
    if n_games == 0:
        return {}
    results = {}
    bar = tqdm(
        total=2 * n_games * len(probe.teams),
        desc="final games against random teams",
        unit="game",
        disable=not progress,
        leave=False,
    )
    for index, team in enumerate(probe.teams):
        model = selfplay.models.get(team, selfplay.models.get("shared"))
        seed = int(config.seed) + 10_000 * (index + 1)
        bar.set_postfix_str(team)
        trained = _play_against_random(model, env_fn, config.teams, team, n_games, seed, bar.update)
        baseline = _play_against_random(None, env_fn, config.teams, team, n_games, seed, bar.update)
        results[team] = {
            "games": trained["games"],
            "wins": trained["wins"],
            "draws": trained["draws"],
            "losses": trained["losses"],
            "mean_team_return": trained["mean_team_return"],
            "random_team_return": baseline["mean_team_return"],
            "learner": "sampled actions",
            "opponents": "random",
        }
    bar.close()
    return results


def _play_against_random(
    model: Any,
    env_fn: Callable[[], Any],
    teams: Any,
    team: str,
    n_games: int,
    seed: int,
    on_game: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """``n_games`` episodes of ``team`` (``model``, or uniform random actions when ``None``)
    against random teams: wins, draws, losses (team against team) and the mean team return;
    ``on_game()`` after each."""
    import numpy as np

    from ..training.team_setup import make_team_vec_env

    n_envs = max(1, min(4, n_games))
    venv = make_team_vec_env(env_fn, teams, team, n_envs, seed=seed, monitor=False)
    team_size = venv.num_envs // n_envs
    space = venv.action_space
    space.seed(seed)
    outcomes: list[float] = []
    returns: list[float] = []
    state, starts = None, np.ones(venv.num_envs, dtype=bool)  # a recurrent model's memory
    try:
        obs = venv.reset()
        while len(outcomes) < n_games:
            if model is None:
                actions = np.stack([space.sample() for _ in range(venv.num_envs)])
            else:
                actions, state = model.predict(obs, state, starts, deterministic=False)
            obs, _, dones, infos = venv.step(actions)
            starts = dones
            for slot, (done, info) in enumerate(zip(dones, infos, strict=True)):
                summary = info.get("selfplay") if done else None
                if summary is None or slot % team_size != 0 or len(outcomes) >= n_games:
                    continue  # one record per game copy: its team's first slot
                outcomes.append(float(summary["outcome"]))
                returns.append(float(summary.get("team_return", summary.get("return", 0.0))))
                if on_game is not None:
                    on_game()
    finally:
        venv.close()
    return {
        "games": len(outcomes),
        "wins": sum(o == 1.0 for o in outcomes),
        "draws": sum(o == 0.5 for o in outcomes),
        "losses": sum(o == 0.0 for o in outcomes),
        "mean_team_return": float(np.mean(returns)) if returns else math.nan,
    }


def _team_ratings(selfplay: Any) -> dict[str, dict[str, Any]]:
    """``TeamSelfPlay.ratings()`` with each team's newest snapshot's Bradley-Terry rating."""
    ratings = selfplay.ratings()
    for team, entry in ratings.items():
        newest = selfplay.archives[team].latest()
        row = entry["snapshots"].get(newest.id, {}) if newest is not None else {}
        entry["latest_snapshot"] = (
            {
                "id": newest.id,
                "step": newest.step,
                "rating": row.get("bt"),
                "low": row.get("bt_low"),
                "high": row.get("bt_high"),
            }
            if newest is not None
            else None
        )
    return ratings


def _team_ratings_json(
    ratings: Mapping[str, Any], evaluation: Mapping[str, Any], config: TeamRunConfig
) -> dict[str, Any]:
    return {
        "format_version": TEAM_RATINGS_FORMAT_VERSION,
        "kind": TEAM_CONFIG_KIND,
        "method": "elo: each team's online Elo against the other teams' snapshots; bt: "
        "Bradley-Terry over every team's archive on one scale (Elo scale), 95% intervals",
        "models": dict(config.models or {}),
        "teams": {
            team: {
                "elo": entry["elo"],
                "latest_snapshot": entry["latest_snapshot"],
                "snapshots": entry["snapshots"],
            }
            for team, entry in ratings.items()
        },
        "evaluation": dict(evaluation),
    }


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
