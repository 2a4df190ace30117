"""A league run from start to finish: :class:`LeagueRun`, :class:`RecipeModel`,
:class:`LeagueProgress`.

:func:`~sp_wrappers.runs.resolve.resolve` (``kind="league"``; :func:`resolve_league`) builds a
league's :class:`~sp_wrappers.runs.config.LeagueConfig` from a game and the user's overrides or
reads the one of a league to continue; :func:`sp_wrappers.runs.start` runs it with
:class:`LeagueRun`: an AlphaStar league (main agents, main exploiters, league exploiters matched
by PFSP) or plain self-play, in this process, in worker processes or on a Ray cluster, then
evaluates and rates the main agents and writes the run directory (its layout:
:mod:`sp_wrappers.runs.rundir`).

>>> config = resolve_league("tictactoe_v3", {"timesteps": 256, "main_exploiters": 0})
>>> config.league["kind"], config.league["main_exploiters"], config.chunk_steps
('alphastar', 0, 4096)
>>> LeagueConfig.from_json(config.to_json()) == config
True
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.run_layout import ARCHIVE_DIR, PLOTS_DIR, RATINGS_NAME
from ..core.state_file import StateFileError
from ..games.registry import game_factory
from ..league.builders import AlphaStarLeague, SelfPlayLeague
from ..league.errors import LeagueSetupError
from ..league.faults import PlayersDoNotFitError, StallReport
from ..league.runner import PLAYERS_DIR, League
from ..league.state import LEAGUE_FORMAT, STATE_NAME, LeagueState
from .config import (
    LEAGUE_CONFIG_FORMAT_VERSION,
    LEAGUE_CONFIG_KIND,
    LeagueConfig,
    LeagueError,
    probe_or_fail,
)
from .league_summary import evaluate_mains, league_ratings, league_ratings_json, summary
from .models import algo_class, check_algo_fits, policy_kwargs_classes, policy_name
from .ratings_file import RATINGS_FORMAT
from .recipes import linear_schedule as learning_rate_schedule
from .resolve import LEAGUE_OVERRIDES, resolve_league
from .run import Run, RunResult
from .run_logs import checked_symmetries
from .rundir import RunDir

__all__ = [
    "LEAGUE_CONFIG_FORMAT_VERSION",
    "LEAGUE_OVERRIDES",
    "LeagueConfig",
    "LeagueError",
    "LeagueProgress",
    "LeagueResult",
    "LeagueRun",
    "RecipeModel",
    "resolve_league",
]

#: How the command line names chunk_steps and the budget in a line on rounded chunks.
_CHUNK_OPTIONS = ("`chunk_steps` ", "`timesteps` ")


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
                f"Bad hyperparameters for {cls.__name__}: {error} (check `hyperparams`)."
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


def _ended(run_dir: RunDir) -> bool:
    """Whether the league in ``run_dir`` finished its end of run (its evaluation and
    ``ratings.json`` for the final snapshots ``league.json`` names): a league killed after its
    last round but before that end resumes to finish it instead of being refused."""
    if not run_dir.ratings_path.is_file():
        return False
    try:
        final = LEAGUE_FORMAT.read(run_dir.path / STATE_NAME).get("final_snapshots")
        ratings = RATINGS_FORMAT.read(run_dir.ratings_path)
    except StateFileError:  # a league.json the league then refuses; a ratings.json rewritten
        return False
    return bool(final) and ratings.get("final_snapshots") == final


@dataclass
class LeagueResult(RunResult):
    """What a league run produced (:class:`LeagueRun`).

    :param run_dir: the run directory.
    :param config: the league's configuration, as written to ``config.json`` at the end.
    :param seconds: wall-clock time of this call's rounds.
    :param text: the league's summary: each main agent's rating and record.
    :param written: the files and folders written, by name.
    :param notes: things skipped and why.
    """

    run_dir: Path
    config: LeagueConfig
    seconds: float
    text: str
    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The league's summary and its notes."""
        return "\n".join([self.text, *(f"Note: {note}" for note in self.notes)])


class LeagueRun(Run):
    """A league (:class:`LeagueConfig`): an AlphaStar league (main agents, main exploiters,
    league exploiters matched by PFSP) or plain self-play, run in rounds by
    :class:`~sp_wrappers.league.runner.League` in this process, in worker processes or on a Ray
    cluster; then each main agent against the reference bots and ``ratings.json``.

    ``options.timesteps`` is the total the league goes to (all players together). A round that
    makes no progress for ``options.stall_seconds`` is reported to ``options.warn``; a Ray
    cluster too small for the players, or a Ray ``address`` with no cluster, stops the run before
    training with an error naming the fix, and a new league's directory is left as it was found,
    so the corrected command starts there. Chunks and a budget rounded to whole rollouts are one
    line to ``warn``, as are the league's warnings (a learner that learned far more than its
    chunk).
    """

    kind = LEAGUE_CONFIG_KIND

    def check(self) -> None:
        config, run = self.config, self.run_dir
        done = LeagueState.steps_done(run.path / STATE_NAME)
        if done is not None and int(config.timesteps) <= done and _ended(run):
            # before anything is written: no evaluation games again, no config.json going back
            raise LeagueError(
                f"The league in {run.path} already has {done:,d} learner steps (all players "
                f"together), and `timesteps` {int(config.timesteps):,d} asks for no more; pass "
                f"`timesteps` with a total above {done:,d} to go on."
            )
        self.env_fn = game_factory(config.game, config.game_kwargs)
        probe = probe_or_fail(self.env_fn, config.game, config.game_kwargs, "random")
        check_algo_fits(config.algo, probe.observation_space, probe.action_space, probe.has_masks)
        # What a start that fails before training must remove, so that the corrected command can
        # start the league here: everything this call creates in a directory that held no league.
        self.fresh = not run.exists() and not (run.path / STATE_NAME).exists()
        self.existed = run.path.exists()
        self.kept = set(run.path.iterdir()) if self.existed else set()

    def threads(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()  # each player sets its own (options.torch_threads)

    def setup(self) -> None:
        config, options = self.config, self.options
        self.reporter = LeagueProgress(int(config.timesteps), self.tb, options.report)
        warn = options.warn

        def on_stall(stall: StallReport) -> None:
            if warn is not None:
                warn(str(stall))

        self.league = League(
            self.env_fn,
            _builder(config),
            RecipeModel(config.algo, config.hyperparams, int(config.seed), options.device),
            self.run_dir.path,
            chunk_steps=int(config.chunk_steps),
            n_envs=int(config.n_envs),
            seed=int(config.seed),
            max_frozen=config.max_frozen,
            torch_threads=options.torch_threads,
            trusted_modules=self.trusted_modules,
            on_round=self.reporter,
            on_stall=on_stall,
            on_chunks=None if warn is None else lambda fit: warn(fit.line(*_CHUNK_OPTIONS)),
            vec_env_kwargs=self.vec_env_kwargs(),
            magnet=config.magnet,
        )

    def vec_env_kwargs(self) -> dict[str, Any]:
        """Every player's extra ``SelfPlayVecEnv`` arguments: the run's symmetries, checked
        against the game here, once, so a wrong one fails before any player trains (the players'
        envs, in this process or a worker's, check the name again as they build)."""
        symmetries = self.config.symmetries
        if symmetries is None:
            return {}
        checked_symmetries(symmetries, self.env_fn)
        return {"symmetries": symmetries}

    def history_entry(self) -> dict[str, Any]:
        return {
            **super().history_entry(),
            "from_step": self.league.total_steps(),
            "backend": self.options.backend,
            "command": self.options.command,
        }

    def learn(self) -> None:
        options, warn = self.options, self.options.warn
        try:
            with warnings.catch_warnings():
                if warn is not None:  # the league's warnings (a chunk far overshot): a line
                    warnings.showwarning = lambda message, *_, **__: warn(str(message))
                self.outcome = self.league.run(
                    int(self.config.timesteps),
                    backend=options.backend,
                    address=options.address,
                    num_cpus=options.num_cpus,
                    num_gpus=options.num_gpus,
                    stall_seconds=options.stall_seconds,
                )
        except LeagueSetupError as error:  # before training: nothing may block the retry
            self.reporter.close()
            if self.fresh:
                _remove_new(self.run_dir.path, self.kept, self.existed)
            if isinstance(error, PlayersDoNotFitError):
                flag = "`num_cpus` " if error.resource == "CPU" else "`num_gpus` "
                raise LeagueError(str(error.for_flag(flag))) from None
            raise
        finally:
            self.reporter.close()
        for lost in self.outcome.lost_workers:
            if warn is not None:
                warn(f"lost a worker and retried the round: {lost}")

    def evaluate(self) -> None:
        config = self.config
        self.evaluation = evaluate_mains(
            self.league, self.env_fn, config.game, int(config.eval_games), int(config.seed)
        )

    def write_results(self) -> list[str]:
        run, league = self.run_dir, self.league
        self.ratings = league_ratings(league)
        written = [STATE_NAME, f"{ARCHIVE_DIR}/", f"{PLAYERS_DIR}/"]
        if self.ratings is not None:
            rated = league_ratings_json(self.ratings, league, self.evaluation)
            RATINGS_FORMAT.write(run.ratings_path, rated)
            written.append(RATINGS_NAME)
        if self.options.plots:
            try:
                from ..league.plots import plot_league_payoff

                run.plots_path.mkdir(exist_ok=True)
                plot_league_payoff(league.archive, run.plots_path / "league_payoff.png")
                written.append(f"{PLOTS_DIR}/")
            except ImportError as error:
                self.notes.append(f"no plots: {error}")
        return written

    def end_entry(self) -> dict[str, Any]:
        return {
            "seconds": round(self.outcome.seconds, 1),
            "final_snapshots": dict(self.league.final_snapshots),
        }

    def result(self, written: list[str]) -> LeagueResult:
        text = summary(self.league, self.outcome, self.ratings, self.evaluation, written)
        return LeagueResult(
            self.run_dir.path, self.config, self.outcome.seconds, text, written, self.notes
        )
