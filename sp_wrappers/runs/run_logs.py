"""The logs a single-learner run writes besides its archive: SB3's logger with TensorBoard and
``progress.csv``, the strength evaluations of a game with reference players (and their line in
the run's summary), the exact exploitability of a game small enough to walk, and the check of
``symmetries``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.run_layout import PROGRESS_NAME
from ..games.registry import GAMES, game_factory
from ..training.exploitability import ExploitabilityCallback, exploitability_fits
from ..training.strength import StrengthCallback
from .config import RunConfig, TrainError

__all__ = [
    "progress_logger",
    "strength_callback",
    "strength_line",
    "exploitability_callback",
    "EXPLOITABILITY_FRACTION",
    "EXPLOITABILITY_MIN_RUN",
    "checked_symmetries",
    "STRENGTH_FRACTION",
    "STRENGTH_MIN_RUN",
]

#: Without ``strength_every``, a run is evaluated against its ladder every this fraction of its
#: learner steps (plus at its start and end): cheap next to training (a Connect Four
#: evaluation, 3 x 98 games against alpha-beta, takes seconds to tens of seconds; the ladder's
#: own games, once per run, about as long).
STRENGTH_FRACTION = 0.1
#: ... and not at all when the run is shorter than this many learner steps (a smoke run would
#: spend most of its time on the ladder); ``strength_every`` set evaluates any run.
STRENGTH_MIN_RUN = 50_000


def progress_logger(run: Path, tb: str | None, from_step: int, resume: bool) -> tuple[Any, str]:
    """SB3's logger for one ``learn`` call of a run: what SB3 itself would set up (TensorBoard
    in ``tb/run_N`` when ``tb`` is given, continued on a resume) plus every record in a CSV file.

    :param run: the run directory.
    :param tb: the TensorBoard folder (``None``: no TensorBoard).
    :param from_step: the learner's steps before this call; a call that does not start the run
        writes ``progress-<from_step>.csv``, so a resume keeps the earlier rows.
    :param resume: whether this call continues the run (the same TensorBoard run folder).
    :return: the logger and the CSV file's name.
    """
    from stable_baselines3.common.logger import CSVOutputFormat
    from stable_baselines3.common.utils import configure_logger

    logger = configure_logger(0, tb, "run", reset_num_timesteps=not resume)
    name = PROGRESS_NAME if from_step == 0 else f"progress-{from_step}.csv"
    logger.output_formats.append(CSVOutputFormat(str(run / name)))
    return logger, name


def strength_callback(
    config: RunConfig, run: Path, plots: bool, notes: list[str]
) -> StrengthCallback | None:
    """The strength evaluations of a run, or ``None`` (``strength_every`` 0, or a game without
    reference players; then ``notes`` says so when the config asked for them).

    :param config: the run's :class:`~sp_wrappers.runs.config.RunConfig`: ``game``,
        ``game_kwargs``, ``timesteps`` (the whole run's)
        ``strength_every`` (learner steps; ``None``: :data:`STRENGTH_FRACTION` of the run) and
        ``strength_plies`` (forced opening moves; ``None``: the game's).
    :param run: the run directory (``strength.json``, ``plots/strength.png``).
    :param plots: draw ``plots/strength.png``.
    :param notes: the run's notes.
    """
    every = config.strength_every
    if every == 0:
        return None
    spec = GAMES.get(config.game)
    if spec is None or not spec.references:
        if every is not None:
            notes.append(
                f"no strength evaluations: {config.game} has no reference players (the "
                "registered games with some: "
                f"{', '.join(name for name, s in GAMES.items() if s.references)})"
            )
        return None
    if every is None:
        if int(config.timesteps) < STRENGTH_MIN_RUN:
            notes.append(
                f"no strength evaluations: runs shorter than {STRENGTH_MIN_RUN:,d} steps skip "
                "them unless asked (`strength_every` N)"
            )
            return None
        every = max(1, round(int(config.timesteps) * STRENGTH_FRACTION))
    kwargs: dict[str, Any] = {}
    if config.strength_plies is not None:
        kwargs["opening_plies"] = int(config.strength_plies)
    return StrengthCallback.for_game(
        config.game,
        config.game_kwargs,
        eval_every=int(every),
        run_dir=run,
        plots=plots,
        **kwargs,
    )


#: Without ``exploitability_every``, a game that fits is measured every this fraction of the run
#: (plus at its start and end); a measurement costs milliseconds (Kuhn poker) to a second or two
#: (Leduc poker, greedy tic-tac-toe) per policy measured.
EXPLOITABILITY_FRACTION = 0.1
#: ... and not at all in runs shorter than this many learner steps (a smoke run);
#: ``exploitability_every`` set measures any run.
EXPLOITABILITY_MIN_RUN = 20_000


def exploitability_callback(
    config: RunConfig, run: Path, archive: Any, notes: list[str]
) -> ExploitabilityCallback | None:
    """The exact exploitability measurements of a run, or ``None`` (``exploitability_every`` 0,
    a short run without it, or a game that does not fit; ``notes`` says so when the config
    asked for them).

    A game fits when :func:`~sp_wrappers.evaluation.exploitability.exploitability_method` accepts
    it: tic-tac-toe, and two-player zero-sum OpenSpiel games through ``openspiel_env`` (Kuhn
    poker, Leduc poker).

    :param config: the run's configuration: ``game``, ``game_kwargs``, ``timesteps`` (the whole
        run's) and ``exploitability_every`` (learner steps; ``None``:
        :data:`EXPLOITABILITY_FRACTION` of runs of at least :data:`EXPLOITABILITY_MIN_RUN`).
    :param run: the run directory (``exploitability.json``).
    :param archive: the run's archive (its Nash mixture and snapshots are measured too).
    :param notes: the run's notes.
    """
    every = config.exploitability_every
    if every == 0:
        return None
    if every is None and int(config.timesteps) < EXPLOITABILITY_MIN_RUN:
        return None  # (a game that fits gets a note below only when asked)
    env_fn = game_factory(config.game, config.game_kwargs)
    problem = exploitability_fits(env_fn)
    if problem is not None:
        if every is not None:
            notes.append(f"no exploitability measurements: {problem}")
        return None
    if every is None:
        every = max(1, round(int(config.timesteps) * EXPLOITABILITY_FRACTION))
    return ExploitabilityCallback(env_fn, archive, every=int(every), run_dir=run)


def checked_symmetries(symmetries: Any, env_fn: Callable[[], Any]) -> Any:
    """A run's ``symmetries`` checked against its game (``None`` stays ``None``); a wrong one is
    a :class:`~sp_wrappers.runs.config.TrainError` that names the ``--symmetries`` option."""
    if symmetries is None:
        return None
    from ..envs.symmetric_view import resolve_symmetries

    try:
        return resolve_symmetries(symmetries, env_fn)
    except (TypeError, ValueError) as error:
        raise TrainError(
            f"`symmetries` {symmetries}: {error} Pass `symmetries` none to train without them."
        ) from None


def strength_line(record: Mapping[str, Any]) -> str:
    """One line of a strength evaluation (``strength.json``'s entry) for the run's summary.

    >>> print(strength_line({"step": 5000, "scores": {"random": 0.75, "minimax": 0.5},
    ...                "wdl": {"random": [12, 3, 3], "minimax": [0, 18, 0]},
    ...                "rating": 1404.2, "rating_interval": [1210.0, 1598.4]}))
    Strength at step 5,000 from forced openings: random 12-3-3 (0.75), minimax 0-18-0 (0.50); \
rating 1404 [1210, 1598] on the ladder's scale
    """
    rungs = ", ".join(
        f"{rung} {'-'.join(map(str, record['wdl'][rung]))} ({score:.2f})"
        for rung, score in record["scores"].items()
    )
    low, high = record["rating_interval"]
    return (
        f"Strength at step {record['step']:,d} from forced openings: {rungs}; rating "
        f"{record['rating']:.0f} [{low:.0f}, {high:.0f}] on the ladder's scale"
    )
