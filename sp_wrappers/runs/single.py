"""A single-learner run from start to finish: :class:`SingleRun`, the :class:`RunConfig` kind of
:func:`sp_wrappers.runs.start`.

:class:`SingleRun` takes a checked :class:`~sp_wrappers.runs.config.RunConfig` (see
:func:`~sp_wrappers.runs.resolve.resolve`), builds the game's vector env, the learner and its
callbacks, learns, evaluates the final learner and writes the run directory (its layout:
:mod:`sp_wrappers.runs.rundir`). It never touches team or league code.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback, ProgressBarCallback

from ..core.run_layout import ARCHIVE_DIR, MAGNET_NAME, MODEL_NAME, PLOTS_DIR, RATINGS_NAME
from ..core.save_util import save_model
from ..core.seats import IllegalActionError
from ..games.registry import game_factory
from ..training.exploitability import EXPLOITABILITY_HISTORY, exploitability_line
from ..training.strength import HISTORY_NAME, PLOT_NAME
from .config import (
    CONFIG_FORMAT_VERSION,
    SINGLE_CONFIG_KIND,
    RunConfig,
    TrainError,
    probe_or_fail,
    random_openings_range,
)
from .models import algo_class, build_model, build_sampler, check_algo_fits
from .ratings_file import RATINGS_FORMAT
from .run import Run, RunResult
from .run_logs import (
    checked_symmetries,
    exploitability_callback,
    progress_logger,
    strength_callback,
    strength_line,
)
from .rundir import write_plots
from .summary import duration, evaluate_final, rate_archive, ratings_json

__all__ = [
    "SingleRun",
    "TrainResult",
    "TrainError",
    "check_algo_fits",
    "make_training_env",
    "learner_games",
    "ProgressBar",
    "ModelCheckpoint",
    "CONFIG_FORMAT_VERSION",
    "model_steps",
    "save_model",
    "magnet_callback",
]


# ------------------------------------------------------------------------------------------------
# The training env and the algorithm checks
# ------------------------------------------------------------------------------------------------


def _opened_game(env_fn: Callable[[], Any], plies: tuple[int, int]) -> Any:
    from ..games.wrappers import RandomOpenings

    return RandomOpenings(env_fn(), plies=plies)


def learner_games(
    env_fn: Callable[[], Any], random_openings: tuple[int, int] | None
) -> Callable[[], Any]:
    """The games the learner trains on: ``env_fn``'s, each started after a random number of
    random legal moves in ``random_openings`` (``(low, high)``; ``None``: as they are). The
    random moves are played inside the game's reset, so the learner learns only its own moves.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> game = learner_games(tictactoe_v3.env, (2, 2))()
    >>> game.reset(seed=0)
    >>> int(game.observe("player_1")["observation"].sum())
    2
    """
    if random_openings is None:
        return env_fn
    return functools.partial(_opened_game, env_fn, random_openings)


def make_training_env(
    env_fn: Callable[[], Any],
    n_envs: int,
    learner: str,
    opponent: Any,
    seed: int,
    draw_reward: float = 0.0,
    opponent_draw: str = "per_env",
    illegal_action: str = "loss",
    symmetries: Any = None,
) -> Any:
    """The SB3 vector env the learner trains on: ``n_envs`` self-play copies of the game.

    The one place that chooses the vector env: a :class:`~sp_wrappers.SelfPlayVecEnv` (opponent
    moves of all copies answered in one batch) in ``VecMonitor``, for SB3's episode statistics,
    and, when ``draw_reward`` is not 0, in :class:`~sp_wrappers.DrawReward` outside the monitor.

    :param env_fn: builds the PettingZoo game.
    :param n_envs: environment copies.
    :param learner: the learner's seat mode or agent name.
    :param opponent: the opponent source (an ``OpponentSampler``) shared by the copies; each copy
        still draws its own opponents.
    :param seed: copy ``i`` is seeded with ``seed + i``.
    :param draw_reward: added to the learner's reward for each drawn game (see ``DrawReward``).
    :param opponent_draw: ``"per_env"`` (each copy draws its own opponents) or ``"shared"`` (one
        line-up for every copy between swaps; see ``SelfPlayVecEnv``).
    :param illegal_action: ``"loss"`` or ``"raise"``: what a learner action its mask forbids does.
    :param symmetries: ``"auto"`` (or symmetries as ``SelfPlayVecEnv`` takes them) plays each
        learner episode in a random symmetric view of the board; ``None``: the real view.
    """
    from ..envs.shaping import DrawReward
    from ..envs.vector.factory import make_selfplay_vec_env

    venv = make_selfplay_vec_env(
        env_fn,
        n_envs=n_envs,
        seed=seed,
        learner=learner,
        opponent=opponent,
        opponent_draw=opponent_draw,
        illegal_action=illegal_action,
        symmetries=symmetries,
    )
    return DrawReward(venv, draw_reward) if draw_reward else venv


# ------------------------------------------------------------------------------------------------
# Callbacks
# ------------------------------------------------------------------------------------------------


class ProgressBar(ProgressBarCallback):
    """SB3's progress bar over this ``learn`` call's learner steps, with the self-play callback's
    win and draw rates, Elo and snapshot count after it (after each rollout).

    SB3 draws its bar with ``tqdm.rich``, which draws nothing until the end when the output is not
    a terminal (a log file, a pipe); this one is plain ``tqdm`` on stderr, so a resumed run shows
    at once the Elo it goes on from, wherever its output goes. SB3's steps and close are kept.

    :param selfplay: the :class:`~sp_wrappers.SelfPlayCallback` whose statistics are shown
        (optional: without one, the bar alone).
    """

    def __init__(self, selfplay: Any = None) -> None:
        super().__init__()
        self.selfplay = selfplay
        #: the statistics last shown (``""`` before the first)
        self.stats = ""

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self.pbar = tqdm(
            total=self.locals["total_timesteps"] - self.model.num_timesteps, file=sys.stderr
        )
        self._on_rollout_end()  # a resumed run shows the Elo it goes on from

    def _on_rollout_end(self) -> None:
        sp = self.selfplay
        if sp is not None:
            stats = {
                "win": f"{sp.win_rate:.2f}",
                "draw": f"{sp.draw_rate:.2f}",
                "elo": f"{sp.elo.rating(sp.learner_id):.0f}",
                "snapshots": len(sp.archive),
            }
            self.stats = " ".join(f"{k}={v}" for k, v in stats.items())
            self.pbar.set_postfix(stats, refresh=True)


class ModelCheckpoint(BaseCallback):
    """Rewrite ``path`` (the run's ``model.zip``) every ``every`` learner steps, atomically, so an
    interrupted run can be resumed from its last checkpoint.

    :param path: the model file.
    :param every: the interval in learner steps.
    :param before_save: called just before each checkpoint is written (the magnet's state, which
        must pair with it: see :meth:`~sp_wrappers.training.magnet.MagnetCallback.save`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        every: int,
        before_save: Sequence[Callable[[], Any]] = (),
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.every = int(every)
        self.before_save = tuple(before_save)
        self._last = 0

    def _on_training_start(self) -> None:
        self._last = self.num_timesteps

    def _on_step(self) -> bool:
        if self.num_timesteps - self._last >= self.every:
            for call in self.before_save:
                call()
            save_model(self.model, self.path)
            self._last = self.num_timesteps
        return True


# ------------------------------------------------------------------------------------------------
# Training
# ------------------------------------------------------------------------------------------------


@dataclass
class TrainResult(RunResult):
    """What a single-learner run produced (:func:`sp_wrappers.runs.start`'s result).

    :param run_dir: the run directory.
    :param config: the run's configuration, as written to ``config.json`` at the end.
    :param steps: learner steps taken by this call; ``total_steps`` counts the whole run.
    :param evaluation: baseline id -> ``MatchResult`` of the final learner.
    :param ratings: the :class:`~sp_wrappers.ratings.archive_ratings.ArchiveRatings` (``None``
        without games).
    :param final_snapshot: the id of the snapshot holding the final learner.
    :param written: the files and folders written, by name.
    :param notes: things skipped and why (no tensorboard, no matplotlib).
    :param strength: the last strength evaluation (``strength.json``'s last entry; ``None``
        without a ladder).
    :param exploitability: the last exploitability measurement (``exploitability.json``'s last
        entry; ``None`` where the game does not fit or measurements were off).
    """

    run_dir: Path
    config: RunConfig
    steps: int
    total_steps: int
    seconds: float
    final_snapshot: str
    evaluation: dict[str, Any] = field(default_factory=dict)
    ratings: Any = None
    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strength: dict[str, Any] | None = None
    exploitability: dict[str, Any] | None = None

    def summary(self) -> str:
        """A few lines: steps and speed, the final rating, the record against each baseline."""
        c = self.config
        rate = self.steps / self.seconds if self.seconds > 0 else math.nan
        lines = [
            f"Trained {c.algo} on {c.game} for {self.steps:,d} steps "
            f"({self.total_steps:,d} in total) in {duration(self.seconds)} ({rate:,.0f} steps/s).",
            f"Run directory: {self.run_dir}  ({', '.join(self.written)})",
        ]
        final = self._final_rating()
        if final is not None:
            lines.append(
                f"Final learner {self.final_snapshot}: rating {final.rating:.0f} "
                f"[{final.low:.0f}, {final.high:.0f}] (Bradley-Terry, Elo scale, "
                f"{self.ratings.anchor or 'mean'} = {self.ratings.anchor_rating:.0f})"
                if self.ratings.anchor
                else f"Final learner {self.final_snapshot}: rating {final.rating:.0f}"
            )
        if self.evaluation:
            first = next(iter(self.evaluation.values()))
            plies = first.opening_plies or 0
            spread = (
                f" from {first.openings} forced openings of {plies} move(s)"
                if plies and first.openings
                else ""
            )
            lines.append(
                f"Final learner (deterministic) against the baselines, {first.n_games} games "
                f"each{spread}, seats alternating:"
            )
            width = max(len(name) for name in self.evaluation)
            for name, result in self.evaluation.items():
                seats = "  ".join(
                    f"{seat} {w}-{d}-{lo}" for seat, (w, d, lo) in result.by_seat().items()
                )
                distinct = (
                    "" if result.distinct_games is None else f"; {result.distinct_games} distinct"
                )
                lines.append(
                    f"  vs {name:<{width}}  {result.wins:4d} W {result.draws:4d} D "
                    f"{result.losses:4d} L   (as {seats}{distinct})"
                )
        if self.strength is not None:
            lines.append(strength_line(self.strength))
        if self.exploitability is not None:
            lines.append(exploitability_line(self.exploitability))
        lines.extend(f"Note: {note}" for note in self.notes)
        return "\n".join(lines)

    def _final_rating(self) -> Any:
        if self.ratings is None:
            return None
        for row in self.ratings.snapshots:
            if row.id == self.final_snapshot and not math.isnan(row.rating):
                return row
        return None


class SingleRun(Run):
    """A single learner against its own snapshots (:class:`RunConfig`): one vector env of
    self-play copies, one model, SB3's ``learn`` with the self-play, checkpoint, strength and
    exploitability callbacks; then the final learner against the baselines and ``ratings.json``.
    """

    kind = SINGLE_CONFIG_KIND

    def check(self) -> None:
        config, run, options = self.config, self.run_dir, self.options
        self.env_fn = game_factory(config.game, config.game_kwargs)
        self.probe = probe_or_fail(self.env_fn, config.game, config.game_kwargs, config.learner)
        probe = self.probe
        check_algo_fits(config.algo, probe.observation_space, probe.action_space, probe.has_masks)
        timesteps, self.venv_seed = options.timesteps, int(config.seed)
        if options.resume:
            if not run.model_path.is_file():
                raise TrainError(
                    f"{run.model_path} does not exist, so there is nothing to resume; start the "
                    "run again without `resume` (into a new `run_dir` directory)."
                )
            already = model_steps(config.algo, run.model_path)
            if timesteps is None:
                timesteps = int(config.timesteps) - already
                if timesteps <= 0:
                    raise TrainError(
                        f"The run in {run.path} already has {already:,d} of its "
                        f"{config.timesteps:,d} steps; pass `timesteps` N to train N more."
                    )
            self.venv_seed += already  # new games, not a replay of the first ones
        self.steps = int(timesteps if timesteps is not None else config.timesteps)
        if self.steps < 1:
            raise TrainError(f"`timesteps` must be at least 1, got {self.steps}.")

    def setup(self) -> None:
        from ..archive.store import SnapshotArchive

        config, run, probe, options = self.config, self.run_dir, self.probe, self.options
        self.archive = SnapshotArchive(
            run.archive_path,
            max_snapshots=config.max_snapshots,
            prune_by=config.prune_by or "spread",
            trusted_modules=self.trusted_modules,
        )
        opponent = build_sampler(
            self.archive,
            config.sampler,
            config.game,
            config.seed,
            probe.action_space,
            probe.has_masks,
        )
        self.venv = make_training_env(
            learner_games(self.env_fn, random_openings_range(config.random_openings)),
            int(config.n_envs),
            config.learner,
            opponent,
            self.venv_seed,
            draw_reward=float(config.draw_reward),
            opponent_draw=config.opponent_draw,
            illegal_action=config.illegal_action,
            symmetries=checked_symmetries(config.symmetries, self.env_fn),
        )
        if options.resume:
            self.model = algo_class(config.algo).load(
                run.model_path, env=self.venv, device=options.device, tensorboard_log=self.tb
            )
        else:
            self.model = build_model(
                config.algo,
                config.hyperparams,
                config.seed,
                self.venv,
                probe.observation_space,
                self.tb,
                options.device,
            )

    def begin(self, entry: dict[str, Any], **changes: Any) -> None:
        from .._version import __version__

        super().begin(
            entry,
            timesteps=int(self.model.num_timesteps) + self.steps,
            sp_wrappers_version=__version__,
            **changes,
        )

    def history_entry(self) -> dict[str, Any]:
        return {
            **super().history_entry(),
            "resumed": bool(self.options.resume),
            "from_step": int(self.model.num_timesteps),
            "steps": self.steps,
            "command": self.options.command,
        }

    def learn(self) -> None:
        from ..training.callbacks import SelfPlayCallback
        from ..training.env_generator import env_generator_callback

        config, run, options = self.config, self.run_dir, self.options
        self.selfplay = SelfPlayCallback(
            self.archive, save_every=int(config.save_every), fit_every=int(config.fit_every)
        )
        self.magnet = magnet_callback(config, run.magnet_path)
        # The checkpoint goes first: a run killed between the two writes of a step then holds
        # model.zip at that step and no snapshot of it, and resumes with its archive steps equal
        # to the learner's. (Snapshot first, the resumed learner would restart one interval
        # behind the archive's newest snapshot and every later archive step would be shifted.)
        # The magnet's state is written just before each checkpoint, paired with it.
        before = (self.magnet.save,) if self.magnet is not None else ()
        callbacks: list[BaseCallback] = [
            ModelCheckpoint(run.model_path, int(config.save_every), before),
            self.selfplay,
        ]
        if self.magnet is not None:
            callbacks.insert(0, self.magnet)
        envgen = env_generator_callback(config.env_generator, run.path)
        self.strength = strength_callback(config, run.path, options.plots, self.notes)
        self.exploit = exploitability_callback(config, run.path, self.archive, self.notes)
        callbacks += [c for c in (envgen, self.strength, self.exploit) if c is not None]
        if options.progress:
            callbacks.append(ProgressBar(self.selfplay))
        from_step = int(self.entry["from_step"])
        logger, self.csv_name = progress_logger(run.path, self.tb, from_step, options.resume)
        self.model.set_logger(logger)
        try:
            self.model.learn(
                self.steps,
                callback=callbacks,
                reset_num_timesteps=not options.resume,
                tb_log_name="run",
                progress_bar=False,
            )
        except IllegalActionError as error:  # --illegal-action raise
            raise TrainError(
                f"{error} Here: `illegal_action` loss, or an algorithm with masks. The snapshots "
                "and matches saved before are intact; `resume` continues from the last checkpoint."
            ) from None
        finally:
            logger.close()
        if self.selfplay.stop_reason:
            raise TrainError(self.selfplay.stop_reason)

    def evaluate(self) -> None:
        config = self.config
        if self.magnet is not None:
            self.magnet.save()
        save_model(self.model, self.run_dir.model_path)
        self.venv.close()
        final = self.archive.latest()
        if final is None or final.step != self.selfplay.archive_step:
            final = self.archive.save(self.model, step=self.selfplay.archive_step, tags=("final",))
        self.final = final
        if self.exploit is not None:
            self.exploit.measure_snapshots()  # the final snapshot too, for --snapshot best
        self.evaluation = evaluate_final(
            self.model,
            final.id,
            self.env_fn,
            self.archive,
            game=config.game,
            n_games=int(config.eval_games),
            seed=int(config.seed),
        )

    def write_results(self) -> list[str]:
        run, strength, exploit = self.run_dir, self.strength, self.exploit
        self.ratings = rate_archive(self.archive)
        written = [MODEL_NAME, f"{ARCHIVE_DIR}/"]
        if self.magnet is not None:
            written.append(MAGNET_NAME)
        if self.ratings is not None:
            rated = ratings_json(self.ratings, self.final.id, self.evaluation)
            if exploit is not None and exploit.last is not None:
                rated["exploitability"] = exploit.last
            RATINGS_FORMAT.write(run.ratings_path, rated)
            written.append(RATINGS_NAME)
        if self.options.plots and self.ratings is not None:
            written += write_plots(run.path, self.archive, self.ratings, self.notes)
        if strength is not None:
            written.append(HISTORY_NAME)
            if strength.plot_path is not None and strength.plot_path.exists():
                written.append(f"{PLOTS_DIR}/{PLOT_NAME}")
        if exploit is not None:
            written.append(EXPLOITABILITY_HISTORY)
        written.append(self.csv_name)
        return written

    def end_entry(self) -> dict[str, Any]:
        return {"final_snapshot": self.final.id}

    def result(self, written: list[str]) -> TrainResult:
        return TrainResult(
            self.run_dir.path,
            self.config,
            self.steps,
            int(self.model.num_timesteps),
            self.seconds,
            self.final.id,
            self.evaluation,
            self.ratings,
            written,
            self.notes,
            self.strength.history["evaluations"][-1] if self.strength is not None else None,
            self.exploit.last if self.exploit is not None else None,
        )


def magnet_callback(config: RunConfig, state_path: Path) -> Any:
    """The run's :class:`~sp_wrappers.training.magnet.MagnetCallback` (``None`` without
    ``magnet``), restoring its state from ``state_path`` when the file exists (a resumed run)."""
    if config.magnet is None:
        return None
    from ..training.magnet import MagnetCallback

    return MagnetCallback.from_settings(config.magnet, state_path=state_path)


def model_steps(algo: str, path: Path) -> int:
    """``num_timesteps`` stored in a saved model, read without building the model."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
        raise TrainError(f"Cannot read {path} ({error}); it is not a saved {algo} model.") from None
    return int(data.get("num_timesteps", 0))
