"""A PSRO run (:class:`~sp_wrappers.league.psro.PSRO`) from a game's name: its recipe, its run
directory and its report.

:func:`resolve_psro` turns a game and the user's overrides into a :class:`PSROConfig` (the game's
PSRO recipe where there is one, :data:`PSRO_RECIPES`, else its training recipe's learner with
generic PSRO settings); :func:`run_psro` runs it in a run directory that also holds
``config.json`` (so ``sp-wrappers report``, ``exploitability``, ``play`` and ``watch`` find the
game) and ends with ``report.html``. A directory that holds ``psro.json`` is resumed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..core.jsonio import write_json
from ..games.registry import game_factory
from ..league.errors import LeagueSetupError
from ..league.psro import PSRO, PSRO_STATE, PSROResult, PSROSettings
from .league import RecipeModel
from .models import limited_torch_threads
from .recipes import KUHN_POKER, LEDUC_POKER, recipe_for
from .report import report_at_end
from .rundir import CONFIG_NAME

__all__ = ["PSROConfig", "PSRO_RECIPES", "resolve_psro", "run_psro"]

#: Per game: PSRO settings and learner hyperparameters over the game's training recipe. A best
#: response should converge fast and end deterministic: no entropy bonus, a larger learning rate
#: and more epochs per rollout than the self-play recipe (on Kuhn the recipe's PPO stalled from
#: the fourth iteration on at copies of members, gain 0.0 of the 0.115 a best response wins;
#: these settings' responses won 0.107 and 0.125 of 0.119 and 0.125: docs/benchmarks.md,
#: "PSRO"). Leduc's settings are not measured yet.
_ORACLE = {"ent_coef": 0.0, "learning_rate": 1e-3, "n_epochs": 10}
PSRO_RECIPES: dict[str, dict[str, Any]] = {
    KUHN_POKER: {
        "settings": {"steps_per_iteration": 20_000, "greedy": True, "warm_start": False},
        "iterations": 20,
        "hyperparams": dict(_ORACLE),
    },
    LEDUC_POKER: {
        "settings": {"steps_per_iteration": 100_000, "greedy": True, "warm_start": False},
        "iterations": 30,
        "hyperparams": {**_ORACLE, "learning_rate": 5e-4},
    },
}
_GENERIC = {"settings": {}, "iterations": 8, "hyperparams": {}}


@dataclass(frozen=True)
class PSROConfig:
    """A PSRO run's configuration (``config.json`` with ``"kind": "psro"``).

    :param game: a registered game or ``module:function``.
    :param game_kwargs: the game constructor's keyword arguments.
    :param algo: the oracle's learner (a key of :data:`~sp_wrappers.runs.algos.ALGOS`).
    :param hyperparams: the learner's keyword arguments.
    :param settings: what each iteration does (:class:`~sp_wrappers.league.psro.PSROSettings`).
    :param iterations: iterations to reach (``None``: until ``seconds``).
    :param seconds: the best responses' training time to stop at (``None``: until
        ``iterations``).
    """

    game: str
    game_kwargs: dict[str, Any] = field(default_factory=dict)
    algo: str = "maskable_ppo"
    hyperparams: dict[str, Any] = field(default_factory=dict)
    settings: PSROSettings = field(default_factory=PSROSettings)
    iterations: int | None = 8
    seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "psro", **asdict(self)}


def resolve_psro(game: str, overrides: Mapping[str, Any] | None = None) -> PSROConfig:
    """The configuration of a PSRO run on ``game``: its PSRO recipe under ``overrides``.

    :param game: a registered game or ``module:function``.
    :param overrides: any :class:`PSROConfig` field, any :class:`PSROSettings` field, and
        ``hp`` (learner hyperparameters merged over the recipe's).

    >>> config = resolve_psro(KUHN_POKER, {"steps_per_iteration": 2048, "iterations": 2})
    >>> config.settings.steps_per_iteration, config.settings.greedy, config.algo
    (2048, True, 'maskable_ppo')
    """
    given = dict(overrides or {})
    base = recipe_for(game)
    psro = PSRO_RECIPES.get(game, _GENERIC)
    setting_names = {f.name for f in fields(PSROSettings)}
    settings = {"n_envs": base.n_envs, "learner": base.learner, **psro["settings"]}
    settings.update({k: given.pop(k) for k in list(given) if k in setting_names})
    hyperparams = {**base.hyperparams, **psro["hyperparams"], **dict(given.pop("hp", {}) or {})}
    config = PSROConfig(
        game=game,
        game_kwargs=dict(given.pop("game_kwargs", base.game_kwargs) or {}),
        algo=str(given.pop("algo", base.algo)),
        hyperparams=hyperparams,
        settings=PSROSettings(**settings),
        iterations=given.pop("iterations", psro["iterations"]),
        seconds=given.pop("seconds", None),
    )
    if given:
        raise LeagueSetupError(f"Unknown PSRO settings {sorted(given)}.")
    if config.seconds is not None and "iterations" not in (overrides or {}):
        config = replace(config, iterations=None)
    return config


class _Oracle:
    """``make_model(venv, seed)``: a fresh learner of the configuration's algorithm."""

    def __init__(self, algo: str, hyperparams: Mapping[str, Any]) -> None:
        self.algo = algo
        self.hyperparams = dict(hyperparams)

    def __call__(self, venv: Any, seed: int) -> Any:
        return RecipeModel(self.algo, self.hyperparams, seed=seed)(venv)


def run_psro(
    config: PSROConfig | None,
    run_dir: str | os.PathLike[str],
    iterations: int | None = None,
    seconds: float | None = None,
    report: Callable[[str], None] | None = None,
    log_formats: tuple[str, ...] = ("csv",),
    torch_threads: int | None = 1,
) -> PSROResult:
    """Run (or resume) PSRO in ``run_dir`` and write its ``report.html``.

    :param config: the run's configuration; ``None`` resumes ``run_dir`` with its stored one
        (a run directory with ``psro.json`` is always resumed with its stored game and settings).
    :param run_dir: the run directory.
    :param iterations: on resume, the iterations to reach (else the configuration's).
    :param seconds: on resume, the training time to stop at (else the configuration's).
    :param report: called with one line per iteration (``None``: quiet).
    :param log_formats: SB3 logger outputs in ``run_dir`` (``progress.csv``; ``"stdout"``...).
    :param torch_threads: torch threads while training (``None``: torch's default).
    """
    from stable_baselines3.common.logger import configure

    run = Path(run_dir)
    config_path = run / CONFIG_NAME
    if (run / PSRO_STATE).exists() or config is None:
        config = _stored(config_path)
        if iterations is not None or seconds is not None:
            config = replace(config, iterations=iterations, seconds=seconds)
    run.mkdir(parents=True, exist_ok=True)
    write_json(config_path, config.to_json())
    env_fn = game_factory(config.game, config.game_kwargs)
    logger = configure(str(run), list(log_formats))
    psro = PSRO(env_fn, _Oracle(config.algo, config.hyperparams), run, config.settings, logger)
    if report is not None:
        psro.on_iteration = lambda r: report(_line(r))
    try:
        with limited_torch_threads(torch_threads):
            result = psro.run(config.iterations, config.seconds)
    finally:
        psro.archive.close()
        logger.close()
    report_at_end(run, [])
    return result


def _stored(path: Path) -> PSROConfig:
    """The configuration a PSRO run directory stored."""
    try:
        stored = json.loads(path.read_text())
        if stored.get("kind") != "psro":
            raise ValueError("it is not a PSRO run's config.json")
        return PSROConfig(
            **{k: v for k, v in stored.items() if k not in ("kind", "settings")},
            settings=PSROSettings(**stored["settings"]),
        )
    except (OSError, ValueError, TypeError, KeyError) as error:
        raise LeagueSetupError(
            f"{path.parent} holds no PSRO run to resume ({path.name}: {error}); pass the "
            "directory a PSRO run wrote."
        ) from None


def _line(record: Mapping[str, Any]) -> str:
    weights = sorted(record["weights"].items(), key=lambda kv: -kv[1])[:3]
    top = " ".join(f"{k}={v:.2f}" for k, v in weights if v > 0)
    measured = (
        f"exploitability {record['exploitability']:.4f} (NashConv {record['nash_conv']:.4f})"
        if record.get("exploitability") is not None
        else "payoffs sampled"
    )
    return (
        f"iteration {record['iteration']}: {record['steps']:,d} steps, "
        f"{record['train_seconds']:.0f} s; {measured}; {top}"
    )
