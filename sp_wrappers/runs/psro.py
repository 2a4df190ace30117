"""A PSRO run (:class:`~sp_wrappers.league.psro.PSRO`) as one kind of the pipeline: its recipe,
its configuration and its :class:`~sp_wrappers.runs.run.Run` subclass.

:func:`resolve_psro` turns a game and the user's overrides into a :class:`PSROConfig` (the game's
PSRO recipe where there is one, :data:`PSRO_RECIPES`, else its training recipe's learner with
generic PSRO settings); :func:`sp_wrappers.runs.start` runs it with :class:`PSRORun`, registered
as the kind ``"psro"`` (:data:`~sp_wrappers.runs.kinds.RUN_KINDS`), so that
:class:`~sp_wrappers.runs.rundir.RunDir` and every command that opens a run read its
``config.json`` as a :class:`PSROConfig`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..games.registry import UnknownGameError, game_factory, reference_opponents, same_game
from ..league.psro import PSRO, PSROResult, PSROSettings
from .config import PSRO_CONFIG_KIND, WHEN_SET, JsonConfig, TrainError
from .league import RecipeModel
from .recipes import KUHN_POKER, LEDUC_POKER, recipe_for
from .run import Run, RunResult
from .run_logs import progress_logger
from .rundir import RunDir

__all__ = [
    "PSROConfig",
    "PSRO_RECIPES",
    "PSRORun",
    "PSRORunResult",
    "resolve_psro",
]

#: Per game: PSRO settings and learner hyperparameters over the game's training recipe. A best
#: response should converge fast and end deterministic: no entropy bonus, a larger learning rate
#: and more epochs per rollout than the self-play recipe (on Kuhn the recipe's PPO stalled from
#: the fourth iteration on at copies of members, gain 0.0 of the 0.115 a best response wins;
#: these settings' responses won 0.107 and 0.125 of 0.119 and 0.125: docs/benchmarks.md,
#: "PSRO"). Leduc's settings, measured on 3 seeds of an hour (docs/benchmarks.md): least NashConv
#: 1.09, 1.09 and 0.86 (target 1.0); later responses win a tenth of what a best response would,
#: and training them on until they win a quarter (min_gain=0.25) did worse. A response that does
#: not improve on the mixture trains on, its steps doubled up to three times (8x), before it
#: joins: on Kuhn 20k-step
#: responses stopped finding any gain at an exploitability of 0.056 (seed 0) and the population
#: filled with duds. Doubling from the start again each iteration costs the same steps as keeping
#: the grown budget while a stall lasts, and fewer once it ends.
_ORACLE = {"ent_coef": 0.0, "learning_rate": 1e-3, "n_epochs": 10}
_EXTEND = {"max_doublings": 3, "min_gain": 0.0, "keep_budget": False}
_RESPONSE = {"greedy": True, "warm_start": False, **_EXTEND}
PSRO_RECIPES: dict[str, dict[str, Any]] = {
    KUHN_POKER: {
        "settings": {"steps_per_iteration": 20_000, **_RESPONSE},
        "iterations": 20,
        "hyperparams": dict(_ORACLE),
    },
    LEDUC_POKER: {
        "settings": {"steps_per_iteration": 100_000, **_RESPONSE},
        "iterations": 30,
        "hyperparams": {**_ORACLE, "learning_rate": 5e-4},
    },
}
_GENERIC = {"settings": dict(_EXTEND), "iterations": 8, "hyperparams": {}}
#: The overrides a resumed run takes (the rest is the run's own).
RESUME_OVERRIDES = ("iterations", "seconds")


@dataclass(frozen=True, kw_only=True)
class PSROConfig(JsonConfig):
    """A PSRO run's configuration (``config.json`` with ``"kind": "psro"``).

    :param game: a registered game or ``module:function``.
    :param game_kwargs: the game constructor's keyword arguments.
    :param algo: the oracle's learner (a key of :data:`~sp_wrappers.runs.algos.ALGOS`).
    :param hyperparams: the learner's keyword arguments.
    :param settings: what each iteration does (:class:`~sp_wrappers.league.psro.PSROSettings`;
        its object in ``config.json``).
    :param iterations: iterations to reach (``None``: until ``seconds``).
    :param seconds: the best responses' training time to stop at, in seconds (``None``: until
        ``iterations``).
    :param history: one entry per call on the run.
    :param extra: keys this version does not know, kept as they are.

    >>> config = PSROConfig(game="tictactoe_v3", settings={"steps_per_iteration": 512})
    >>> config.settings.steps_per_iteration, config.greedy, config.to_json()["kind"]
    (512, True, 'psro')
    """

    kind: str = PSRO_CONFIG_KIND
    game: str
    game_kwargs: Mapping[str, Any] = field(default_factory=dict)
    algo: str = "maskable_ppo"
    hyperparams: Mapping[str, Any] = field(default_factory=dict)
    settings: PSROSettings = field(default_factory=PSROSettings)
    iterations: int | None = 8
    seconds: float | None = None
    history: tuple[Mapping[str, Any], ...] = field(default=(), metadata=WHEN_SET)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.settings, Mapping):  # config.json's object
            known = {f.name for f in fields(PSROSettings)}
            unknown = sorted(set(self.settings) - known)
            if unknown:
                raise TrainError(
                    f"Unknown PSRO settings {unknown} in `settings`; this sp_wrappers knows "
                    f"{', '.join(sorted(known))}."
                )
            object.__setattr__(self, "settings", PSROSettings(**self.settings))

    @property
    def greedy(self) -> bool:
        """How the members play: their most likely move (``True``) or their probabilities."""
        return bool(self.settings.greedy)

    # The oracle as a learner's recipe (what ``sp-wrappers exploit`` trains, as for a single run)
    @property
    def n_envs(self) -> int:
        """The env copies the oracle trains on (``settings.n_envs``)."""
        return int(self.settings.n_envs)

    @property
    def learner(self) -> str:
        """The oracle's seat mode (``settings.learner``)."""
        return str(self.settings.learner)

    @property
    def seed(self) -> int:
        """The run's seed (``settings.seed``)."""
        return int(self.settings.seed)

    @property
    def symmetries(self) -> None:
        """PSRO trains on the real view: ``None``."""
        return None

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "settings": asdict(self.settings)}

    @classmethod
    def _writer(cls) -> str:
        return "psro"


def resolve_psro(
    game: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    resume: str | os.PathLike[str] | None = None,
) -> PSROConfig:
    """The configuration of a PSRO run on ``game`` (its PSRO recipe under ``overrides``), or of
    the run in ``resume`` (its stored configuration; only ``iterations`` and ``seconds`` change).

    :param game: a registered game or ``module:function`` (``None`` with ``resume``).
    :param overrides: any :class:`PSROConfig` field (``hyperparams``, merged over the recipe's;
        0.2's ``hp`` too) and any :class:`PSROSettings` field.
    :param resume: a PSRO run directory to continue.

    >>> config = resolve_psro(KUHN_POKER, {"steps_per_iteration": 2048, "iterations": 2})
    >>> config.settings.steps_per_iteration, config.settings.greedy, config.algo
    (2048, True, 'maskable_ppo')
    """
    given = dict(overrides or {})
    if resume is not None:
        return _resumed(RunDir(resume), given)
    if not game:
        raise TrainError("Name the `game` of the PSRO run, or a run to `resume`.")
    try:
        game_factory(game)  # an unknown game refused before anything is printed or written
    except UnknownGameError as error:
        raise TrainError(str(error)) from None
    base = recipe_for(game)
    psro = next((PSRO_RECIPES[n] for n in same_game(game) if n in PSRO_RECIPES), _GENERIC)
    setting_names = {f.name for f in fields(PSROSettings)}
    settings = {"n_envs": base.n_envs, "learner": base.learner, **psro["settings"]}
    settings.update({k: given.pop(k) for k in list(given) if k in setting_names})
    mine = {**dict(given.pop("hp", {}) or {}), **dict(given.pop("hyperparams", {}) or {})}
    hyperparams = {**base.hyperparams, **psro["hyperparams"], **mine}
    seconds = given.pop("seconds", None)
    iterations = given.pop("iterations", None if seconds is not None else psro["iterations"])
    config = PSROConfig(
        game=game,
        game_kwargs=dict(given.pop("game_kwargs", base.game_kwargs) or {}),
        algo=str(given.pop("algo", base.algo)),
        hyperparams=hyperparams,
        settings=PSROSettings(**settings),
        iterations=iterations,
        seconds=seconds,
    )
    if given:
        raise TrainError(f"Unknown PSRO settings {sorted(given)}.")
    return config


def _resumed(run: RunDir, given: dict[str, Any]) -> PSROConfig:
    """The stored configuration of the PSRO run in ``run``, with ``iterations``/``seconds``."""
    changed = sorted(set(given) - set(RESUME_OVERRIDES))
    if changed:
        raise TrainError(
            f"A resumed PSRO run keeps its game and settings ({', '.join(changed)} given): "
            "pass only `iterations` or `seconds` to continue to."
        )
    try:
        config = run.config()
    except TrainError as error:
        config = error
    if not isinstance(config, PSROConfig) or not run.psro_state_path.exists():
        why = config if isinstance(config, TrainError) else "it holds another kind of run"
        raise TrainError(
            f"{run.path} holds no PSRO run to resume ({why}); pass the directory a PSRO run wrote."
        )
    if given:
        config = config.replace(iterations=given.get("iterations"), seconds=given.get("seconds"))
    return config


class _Oracle:
    """``make_model(venv, seed)``: a fresh learner of the configuration's algorithm."""

    def __init__(self, algo: str, hyperparams: Mapping[str, Any], device: str = "cpu") -> None:
        self.algo = algo
        self.hyperparams = dict(hyperparams)
        self.device = device

    def __call__(self, venv: Any, seed: int) -> Any:
        return RecipeModel(self.algo, self.hyperparams, seed=seed, device=self.device)(venv)


@dataclass
class PSRORunResult(RunResult):
    """What a PSRO run produced (:class:`PSRORun`).

    :param run_dir: the run directory.
    :param config: the run's configuration, as written to ``config.json`` at the end.
    :param seconds: wall-clock time of this call's iterations, in seconds.
    :param psro: the population, the last meta-weights and every iteration's record.
    :param written: the files and folders written, by name.
    :param notes: things skipped and why.
    """

    run_dir: Path
    config: PSROConfig
    seconds: float
    psro: PSROResult
    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The iterations, the last mixture's exploitability and the least exploitable one."""
        result = self.psro
        lines = [f"PSRO in {self.run_dir}: {result.iterations} iteration(s), "
                 f"{len(result.members)} member(s), {self.seconds:.0f} s."]  # fmt: skip
        if result.best is not None:
            best = result.best
            lines.append(
                f"least exploitable: iteration {best['iteration']}, exploitability "
                f"{best['exploitability']:.4f} (NashConv {best['nash_conv']:.4f})"
            )
        lines += [f"Note: {note}" for note in self.notes]
        return "\n".join(lines)


class PSRORun(Run):
    """A PSRO run (:class:`PSROConfig`): :class:`~sp_wrappers.league.psro.PSRO` in the run
    directory, which holds ``archive/`` (the members and meta-weights), ``psro.json`` (every
    iteration), ``progress.csv`` (and ``tb/``) with ``psro/*``, ``config.json`` and
    ``report.html``. A new run refuses a directory that holds a run; ``options.resume``
    continues the PSRO run there to the configuration's ``iterations`` or ``seconds``.
    """

    kind = PSRO_CONFIG_KIND

    def check(self) -> None:
        run, config = self.run_dir, self.config
        if self.options.timesteps is not None:
            raise TrainError(
                "A PSRO run counts iterations, not `timesteps`; pass `iterations` or `seconds` "
                "(and `steps_per_iteration` for each best response)."
            )
        if config.iterations is None and config.seconds is None:
            raise TrainError("A PSRO run needs `iterations` or `seconds` to stop at.")
        started = run.exists() or run.psro_state_path.exists()
        if self.options.resume and not run.psro_state_path.exists():
            raise TrainError(
                f"{run.path} holds no PSRO run to resume; pass the directory a PSRO run wrote."
            )
        if started and not self.options.resume:
            RunDir.new(run.path)  # refuses, saying how to continue it
        self.env_fn = game_factory(config.game, config.game_kwargs)

    def setup(self) -> None:
        path = self.run_dir.path
        oracle = _Oracle(self.config.algo, self.config.hyperparams, self.options.device)
        reference = reference_opponents(self.config.game)[1:]  # the bots after RandomPolicy
        self.psro = PSRO(self.env_fn, oracle, path, self.config.settings, reference=reference)
        self.psro.on_iteration = lambda record: self.say(_line(record))
        # a resume writes progress-<steps>.csv beside the earlier rows (as a single run does)
        resume = self.options.resume
        self.logger, self.progress = progress_logger(path, self.tb, self.psro.steps, resume)
        self.psro.logger = self.logger

    def history_entry(self) -> dict[str, Any]:
        return {
            **super().history_entry(),
            "from_iteration": max(0, len(self.psro.history) - 1),
            "command": self.options.command,
        }

    def learn(self) -> None:
        try:
            self.outcome = self.psro.run(self.config.iterations, self.config.seconds)
        finally:
            self.psro.archive.close()
            self.logger.close()

    def write_results(self) -> list[str]:
        run = self.run_dir
        return [run.psro_state_path.name, f"{run.archive_path.name}/", self.progress]

    def end_entry(self) -> dict[str, Any]:
        return {"iterations": self.outcome.iterations}

    def result(self, written: list[str]) -> PSRORunResult:
        return PSRORunResult(
            self.run_dir.path, self.config, self.seconds, self.outcome, written, self.notes
        )


def _line(record: Mapping[str, Any]) -> str:
    weights = sorted(record["weights"].items(), key=lambda kv: -kv[1])[:3]
    top = " ".join(f"{k}={v:.2f}" for k, v in weights if v > 0)
    measured = (
        f"exploitability {record['exploitability']:.4f} (NashConv {record['nash_conv']:.4f})"
        if record.get("exploitability") is not None
        else "payoffs sampled"
    )
    doubled = (
        f" (response doubled {record['doublings']}x to {record['response_steps']:,d} steps)"
        if record.get("doublings")
        else ""
    )
    return (
        f"iteration {record['iteration']}: {record['steps']:,d} steps, "
        f"{record['train_seconds']:.0f} s{doubled}; {measured}; {top}"
    )
