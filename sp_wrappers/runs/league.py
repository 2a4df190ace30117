"""A league run from start to finish: :class:`LeagueConfig`, its resolver and :func:`run_league`.

:func:`resolve_league` builds a league's configuration from a game and the user's overrides (the
game's recipe, then the overrides) or reads the one of a league to continue;
:func:`run_league` runs it: an AlphaStar league (main agents, main exploiters, league
exploiters matched by PFSP) or plain self-play, in this process, in worker processes or on a Ray
cluster, then evaluates and rates the main agents and writes the run directory::

    config.json     everything that reproduces the run (game, algo, hyperparams, league roles
                    and settings, chunk_steps, seed, timesteps, ...) and its history
    league.json     the league's state (players, roles, steps, frozen pool, payoff table)
    archive/        one SnapshotArchive: every player's snapshots tagged by role and parent
    players/        each learning player's model (SB3 zip) and initial model
    ratings.json    Bradley-Terry ratings of every snapshot and bot on one scale, and each main
                    agent's final record against the game's reference bots
    plots/          league_payoff.png (grouped and coloured by role)
    report.html     one self-contained page on how the league went (sp-wrappers report RUN_DIR)
    tb/<player>/    TensorBoard scalars per player (when tensorboard is installed)

>>> config = resolve_league("tictactoe_v3", {"timesteps": 256, "main_exploiters": 0})
>>> config.league["kind"], config.league["main_exploiters"], config.chunk_steps
('alphastar', 0, 4096)
>>> LeagueConfig.from_json(config.to_json()) == config
True
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.jsonio import write_json
from ..games.registry import game_factory
from ..league.builders import ALPHASTAR_DEFAULTS, AlphaStarLeague, SelfPlayLeague
from ..league.errors import LeagueSetupError
from ..league.faults import DEFAULT_STALL_SECONDS, PlayersDoNotFitError, StallReport
from ..league.runner import League
from ..league.state import STATE_NAME, LeagueState
from .config import (
    LEAGUE_CONFIG_FORMAT_VERSION,
    LeagueConfig,
    LeagueError,
    probe_or_fail,
    read_json_object,
)
from .league_summary import evaluate_mains, league_ratings, league_ratings_json, summary
from .models import algo_class, check_algo_fits, policy_kwargs_classes, policy_name
from .recipes import ALGOS, fit_to_budget, recipe_for
from .recipes import linear_schedule as learning_rate_schedule
from .report import report_at_end
from .rundir import CONFIG_NAME, run_trusted_modules, slug, tensorboard_dir

__all__ = [
    "LEAGUE_CONFIG_FORMAT_VERSION",
    "LEAGUE_OVERRIDES",
    "LeagueConfig",
    "LeagueError",
    "LeagueProgress",
    "RecipeModel",
    "resolve_league",
    "run_league",
]

#: The AlphaStar settings a user may override (the others keep ALPHASTAR_DEFAULTS).
_SETTINGS = ("snapshot_min_steps", "snapshot_max_steps", "snapshot_win_rate", "main_agents_compute")


#: How the command line names chunk_steps and the budget in a line on rounded chunks.
_CHUNK_OPTIONS = ("--chunk-steps ", "--timesteps ")


#: Every key a league's overrides may have: the configuration's own settings, and its roles'.
LEAGUE_OVERRIDES = frozenset(
    {f.name for f in dataclasses.fields(LeagueConfig)}
    - {"format_version", "command", "kind", "game", "league", "history", "extra"}
    | {"selfplay", "main_agents", "main_exploiters", "league_exploiters", "save_every", *_SETTINGS}
)


def resolve_league(
    game: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    resume: str | Path | None = None,
) -> LeagueConfig:
    """The configuration of a new league of ``game`` (its recipe, then ``overrides``), or of the
    league in ``resume`` (``overrides``' ``timesteps``, the total to reach, and ``eval_games``
    replace its own).

    :param game: a registered game or ``module:function``.
    :param overrides: the user's choices (keys of :data:`LEAGUE_OVERRIDES`).
    :param resume: a league's run directory.
    :raises LeagueError: a bad option or run directory, with the fix.
    """
    given = dict(overrides or {})
    unknown = sorted(set(given) - LEAGUE_OVERRIDES)
    if unknown:
        raise LeagueError(
            f"Unknown settings {', '.join(unknown)}; choose from "
            f"{', '.join(sorted(LEAGUE_OVERRIDES))}."
        )
    if resume is not None:
        run = Path(resume)
        stored = read_json_object(
            run / CONFIG_NAME, "--resume needs a run directory written by league"
        )
        if stored.get("command") != "league":
            raise LeagueError(f"{run} holds a train run, not a league; use sp-wrappers train.")
        config = LeagueConfig.from_json(stored, run / CONFIG_NAME)
        for key in ("timesteps", "eval_games"):  # this call's budget and end-of-run games
            if given.get(key) is not None:
                config = config.replace(**{key: int(given[key])})
        return config
    if game is None:
        raise LeagueError("Name the game: sp-wrappers league GAME (e.g. tictactoe_v3).")
    algo = given.get("algo")
    try:
        recipe = recipe_for(game, algo)
    except KeyError:
        raise LeagueError(
            f"Unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}."
        ) from None
    hp = dict(given.get("hyperparams") or {})
    algo = algo or recipe.algo
    budget = int(given.get("timesteps") or recipe.timesteps)
    settings = {key: given[key] for key in _SETTINGS if given.get(key) is not None}
    if "snapshot_max_steps" in settings and "snapshot_min_steps" not in settings:
        settings["snapshot_min_steps"] = min(
            ALPHASTAR_DEFAULTS["snapshot_min_steps"], settings["snapshot_max_steps"]
        )
    league = {
        "kind": "selfplay" if given.get("selfplay") else "alphastar",
        "main_agents": given.get("main_agents", 1),
        "main_exploiters": given.get("main_exploiters", 1),
        "league_exploiters": given.get("league_exploiters", 1),
        "settings": settings,
        "save_every": int(given.get("save_every") or recipe.save_every),
        "latest_ratio": float(recipe.sampler.get("latest_ratio", 0.5)),
    }
    eval_games = given.get("eval_games")
    return LeagueConfig(
        game=game,
        game_kwargs={**recipe.game_kwargs, **(given.get("game_kwargs") or {})},
        algo=algo,
        hyperparams={**fit_to_budget(algo, recipe.hyperparams, budget, hp), **hp},
        league=league,
        chunk_steps=int(given.get("chunk_steps") or 4096),
        n_envs=int(given.get("n_envs") or recipe.n_envs),
        seed=int(given.get("seed") or 0),
        timesteps=budget,
        max_frozen=given.get("max_frozen"),
        eval_games=int(eval_games if eval_games is not None else recipe.eval_games),
    )


class RecipeModel:
    """``make_model`` for a league: the algorithm and hyperparameters of a run's config.

    Picklable (a class, not a closure), so process and Ray players can build it.

    :param algo: a key of :data:`~sp_wrappers.runs.recipes.ALGOS`.
    :param hyperparams: the algorithm's keyword arguments (``learning_rate`` may be
        ``"lin_<rate>"``).
    :param seed: the model's seed.
    :param device: torch device.

    >>> RecipeModel("ppo", {"n_steps": 64}).algo
    'ppo'
    """

    def __init__(
        self, algo: str, hyperparams: Mapping[str, Any], seed: int = 0, device: str = "cpu"
    ) -> None:
        self.algo = algo
        self.hyperparams = dict(hyperparams)
        self.seed = seed
        self.device = device

    def __call__(self, env: Any) -> Any:
        cls = algo_class(self.algo)
        hp = copy.deepcopy(self.hyperparams)  # A2C, QRDQN add classes to their policy_kwargs
        if "learning_rate" in hp:
            hp["learning_rate"] = learning_rate_schedule(hp["learning_rate"])
        if isinstance(hp.get("policy_kwargs"), Mapping):  # "module:Class" -> the class
            hp["policy_kwargs"] = policy_kwargs_classes(hp["policy_kwargs"])
        try:
            return cls(
                policy_name(env.observation_space, self.algo),
                env,
                seed=self.seed,
                device=self.device,
                verbose=0,
                **hp,
            )
        except TypeError as error:
            raise LeagueError(
                f"Bad hyperparameters for {cls.__name__}: {error} (check the --hp options)."
            ) from None


class LeagueProgress:
    """After each round: one line per player to ``report`` and TensorBoard scalars per player.

    :param total: the learner steps the run goes to (all players together).
    :param tb_dir: where ``tb/<player>/`` go (``None``: no TensorBoard).
    :param report: where the lines go (``None``: nowhere; TensorBoard still gets the scalars).
    """

    def __init__(
        self,
        total: int,
        tb_dir: str | None = None,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.total = total
        self.tb_dir = tb_dir
        self.report = report
        self._writers: dict[str, Any] = {}

    def _writer(self, name: str) -> Any:
        if self.tb_dir is None:
            return None
        if name not in self._writers:
            from torch.utils.tensorboard import SummaryWriter

            self._writers[name] = SummaryWriter(str(Path(self.tb_dir) / name))
        return self._writers[name]

    def __call__(self, league: League, results: Mapping[str, Any]) -> None:
        if self.report is not None:
            self.report(self.round_line(league))
        for name, result in results.items():
            learner = league.learners[name]
            outcomes = [m["score_a"] for m in result.matches]
            score = sum(outcomes) / len(outcomes) if outcomes else float("nan")
            learned = league.round_steps.get(name, 0)  # players learn their compute share
            rate = learned / result.learn_seconds if learned and result.learn_seconds else 0.0
            if self.report is not None:
                played = (
                    f"score {score:5.2f} over {len(outcomes):4d} games  {rate:7.0f} steps/s"
                    if learned
                    else "sat this round out (ahead of its compute share)"
                )
                self.report(
                    f"  {name:<20} {learner.role:<16} steps {learner.steps:>10,d}  snapshots "
                    f"{len(learner.snapshots):3d}  resets {learner.resets:2d}  {played}"
                )
            if not learned:
                continue
            writer = self._writer(name)
            if writer is not None:
                writer.add_scalar("league/score", score, learner.steps)
                writer.add_scalar("league/games", len(outcomes), learner.steps)
                writer.add_scalar("league/snapshots", len(learner.snapshots), learner.steps)
                writer.add_scalar("league/resets", learner.resets, learner.steps)
                writer.add_scalar("league/frozen_pool", len(league.frozen), learner.steps)
                writer.add_scalar("time/steps_per_second", rate, learner.steps)
                writer.flush()

    def round_line(self, league: League) -> str:
        """The round's first line: the league's steps against the steps the run ends at (its
        budget rounded up to whole rollouts, :attr:`League.target_steps`)."""
        done = league.total_steps()
        total = getattr(league, "target_steps", None) or self.total
        steps = (
            f"{done:,d}/{total:,d} steps"
            if done <= total
            else f"{done:,d} steps, past the {total:,d} asked (players learn whole "
            "rollouts, longer than their chunks)"
        )
        return f"round {league.round}: {steps}, {len(league.frozen)} frozen players"

    def close(self) -> None:
        """Close the TensorBoard writers."""
        for writer in self._writers.values():
            writer.close()


def _builder(config: LeagueConfig) -> Any:
    league = config.league
    if league["kind"] == "selfplay":
        return SelfPlayLeague(
            save_every=int(league["save_every"]), latest_ratio=float(league["latest_ratio"])
        )
    try:
        return AlphaStarLeague(
            int(league["main_agents"]),
            int(league["main_exploiters"]),
            int(league["league_exploiters"]),
            **league["settings"],
        )
    except (TypeError, ValueError) as error:
        raise LeagueError(str(error)) from None


def _remove_new(run_dir: Path, kept: set[Path], existed: bool) -> None:
    """Remove what a failed start wrote in ``run_dir``: everything but ``kept`` (and the folder
    itself when it did not exist)."""
    import shutil

    if not existed:
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    for path in set(run_dir.iterdir()) - kept:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _ended(run_dir: Path) -> bool:
    """Whether the league in ``run_dir`` finished its end of run (its evaluation and
    ``ratings.json`` for the final snapshots ``league.json`` names): a league killed after its
    last round but before that end resumes to finish it instead of being refused."""
    try:
        state = json.loads((run_dir / STATE_NAME).read_text())
        ratings = json.loads((run_dir / "ratings.json").read_text())
    except (OSError, ValueError):
        return False
    final = state.get("final_snapshots") if isinstance(state, dict) else None
    return bool(final) and isinstance(ratings, dict) and ratings.get("final_snapshots") == final


def run_league(
    config: LeagueConfig | Mapping[str, Any],
    run_dir: str | Path | None = None,
    backend: str = "process",
    address: str | None = None,
    num_cpus: float | None = None,
    num_gpus: float = 0,
    plots: bool = True,
    torch_threads: int | None = 1,
    device: str = "cpu",
    command: str | None = None,
    stall_seconds: float | None = DEFAULT_STALL_SECONDS,
    html_report: bool = True,
    report: Callable[[str], None] | None = None,
    warn: Callable[[str], None] | None = None,
    trusted_modules: Sequence[str] = (),
) -> str:
    """Run (or continue) the league of ``config`` in ``run_dir``; returns the summary text.

    :param config: the league's configuration (:func:`resolve_league`) or its ``config.json``.
    :param run_dir: the run directory (default: ``runs/league-<game>``); a league already there
        is continued up to ``config.timesteps`` (when it has done that many steps already:
        :class:`LeagueError`, and nothing is written).
    :param backend: ``serial``, ``process`` or ``ray``.
    :param report: where the per-round lines go (``None``: nowhere).
    :param warn: where a stalled round and a lost worker are reported (``None``: nowhere).
    :param trusted_modules: modules whose classes the players' policies may name, on top of those
        the configuration names (see :func:`~sp_wrappers.runs.rundir.run_trusted_modules`).

    A round that makes no progress for ``stall_seconds`` is reported to ``warn``; a Ray cluster
    too small for the players, or a Ray ``address`` with no cluster, stops the run before
    training with an error naming the fix (``--num-cpus`` / ``--num-gpus``, ``ray start
    --head``), and a new league's directory is left as it was found, so the corrected command
    starts there. Chunks and a budget rounded to whole rollouts are one line to ``warn``, as are
    the league's warnings (a learner that learned far more than its chunk). With
    ``html_report`` the run ends by writing ``report.html``
    (:func:`~sp_wrappers.runs.report.report_at_end`); a page that cannot be written is a note.
    """
    if not isinstance(config, LeagueConfig):
        config = LeagueConfig.from_json(config)
    run_dir = Path(run_dir if run_dir is not None else f"runs/league-{slug(config.game)}")
    done = LeagueState.steps_done(run_dir / STATE_NAME)
    if done is not None and int(config.timesteps) <= done and _ended(run_dir):
        # before anything is written: no evaluation games again, no config.json going back
        raise LeagueError(
            f"The league in {run_dir} already has {done:,d} learner steps (all players "
            f"together), and --timesteps {int(config.timesteps):,d} asks for no more; pass "
            f"--timesteps with a total above {done:,d} to go on."
        )
    env_fn = game_factory(config.game, config.game_kwargs)
    probe = probe_or_fail(env_fn, config.game, config.game_kwargs, "random")
    check_algo_fits(config.algo, probe.observation_space, probe.action_space, probe.has_masks)
    # What a start that fails before training must remove, so that the corrected command can
    # start the league here: everything this call creates in a directory that held no league.
    fresh = not (run_dir / CONFIG_NAME).exists() and not (run_dir / "league.json").exists()
    existed = run_dir.exists()
    kept = set(run_dir.iterdir()) if existed else set()
    run_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    tb = tensorboard_dir(run_dir, notes)
    reporter = LeagueProgress(int(config.timesteps), tb, report)

    def on_stall(stall: StallReport) -> None:
        if warn is not None:
            warn(str(stall))

    league = League(
        env_fn,
        _builder(config),
        RecipeModel(config.algo, config.hyperparams, int(config.seed), device),
        run_dir,
        chunk_steps=int(config.chunk_steps),
        n_envs=int(config.n_envs),
        seed=int(config.seed),
        max_frozen=config.max_frozen,
        torch_threads=torch_threads,
        trusted_modules=run_trusted_modules(config, trusted_modules),
        on_round=reporter,
        on_stall=on_stall,
        on_chunks=None if warn is None else lambda fit: warn(fit.line(*_CHUNK_OPTIONS)),
    )
    entry = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "from_step": league.total_steps(),
        "backend": backend,
        "command": command,
    }
    config = config.replace(history=(*config.history, entry))
    write_json(run_dir / CONFIG_NAME, config.to_json())
    try:
        with warnings.catch_warnings():
            if warn is not None:  # the league's warnings (a chunk far overshot): a line
                warnings.showwarning = lambda message, *_, **__: warn(str(message))
            result = league.run(
                int(config.timesteps),
                backend=backend,
                address=address,
                num_cpus=num_cpus,
                num_gpus=num_gpus,
                stall_seconds=stall_seconds,
            )
    except LeagueSetupError as error:  # before training: nothing may block the retry
        reporter.close()
        if fresh:
            _remove_new(run_dir, kept, existed)
        if isinstance(error, PlayersDoNotFitError):
            flag = "--num-cpus " if error.resource == "CPU" else "--num-gpus "
            raise LeagueError(str(error.for_flag(flag))) from None
        raise
    finally:
        reporter.close()
    for lost in result.lost_workers:
        if warn is not None:
            warn(f"lost a worker and retried the round: {lost}")
    evaluation = evaluate_mains(
        league, env_fn, config.game, int(config.eval_games), int(config.seed)
    )
    ratings = league_ratings(league)
    written = [CONFIG_NAME, "league.json", "archive/", "players/"]
    if ratings is not None:
        write_json(run_dir / "ratings.json", league_ratings_json(ratings, league, evaluation))
        written.append("ratings.json")
    if plots:
        try:
            from ..league.plots import plot_league_payoff

            (run_dir / "plots").mkdir(exist_ok=True)
            plot_league_payoff(league.archive, run_dir / "plots" / "league_payoff.png")
            written.append("plots/")
        except ImportError as error:
            notes.append(f"no plots: {error}")
    if tb is not None:
        written.append("tb/")
    entry = {
        **entry,
        "seconds": round(result.seconds, 1),
        "final_snapshots": dict(league.final_snapshots),
    }
    config = config.replace(history=(*config.history[:-1], entry))
    write_json(run_dir / CONFIG_NAME, config.to_json())
    if html_report:
        written += report_at_end(run_dir, notes)
    text = summary(league, result, ratings, evaluation, written)
    return "\n".join([text, *(f"Note: {note}" for note in notes)])
