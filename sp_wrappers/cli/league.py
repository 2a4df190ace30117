"""``sp-wrappers league GAME``: an AlphaStar league (or plain self-play) from one command.

This module holds the command (:func:`add_league_parser`, :func:`run_league_command`,
:func:`main_league`), :class:`RecipeModel` (the picklable ``make_model`` built from a game's
recipe) and :class:`LeagueProgress`.

A league run directory holds what a ``train`` run directory holds, for every player::

    config.json     everything that reproduces the run (game, algo, hyperparams, league roles
                    and settings, chunk_steps, seed, timesteps, backend, ...) and its history
    league.json     the league's state (players, roles, steps, frozen pool, payoff table)
    archive/        one SnapshotArchive: every player's snapshots tagged by role and parent
    players/        each learning player's model (SB3 zip) and initial model
    ratings.json    Bradley-Terry ratings of every snapshot and bot on one scale, and each main
                    agent's final record against the game's reference bots
    plots/          league_payoff.png (grouped and coloured by role)
    report.html     one self-contained page on how the league went (sp-wrappers report RUN_DIR)
    tb/<player>/    TensorBoard scalars per player (when tensorboard is installed)

``sp-wrappers league tictactoe_v3 --timesteps 60000`` runs one main agent, one main exploiter
and one league exploiter; ``--resume RUN_DIR --timesteps T`` continues a league to ``T`` total
learner steps (all players together).

>>> import contextlib, io, tempfile
>>> out = tempfile.mkdtemp()
>>> with contextlib.redirect_stdout(io.StringIO()):
...     status = main_league(["tictactoe_v3", "--timesteps", "256", "--chunk-steps", "64",
...                           "--main-exploiters", "1", "--league-exploiters", "0",
...                           "--n-envs", "2", "--hp", "n_steps=32", "--hp", "batch_size=32",
...                           "--eval-games", "2", "--backend", "serial", "--out", out,
...                           "--no-progress", "--no-plots"])
>>> status, sorted(p.name for p in Path(out).iterdir() if p.name != "tb")
(0, ['archive', 'config.json', 'league.json', 'players', 'ratings.json', 'report.html'])
"""

from __future__ import annotations

import argparse
import copy
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.jsonio import write_json
from ..games.registry import GAMES, game_factory
from ..league.backends import BACKENDS
from ..league.builders import ALPHASTAR_DEFAULTS, AlphaStarLeague, SelfPlayLeague
from ..league.faults import DEFAULT_STALL_SECONDS, PlayersDoNotFitError, StallReport
from ..league.runner import League
from ..runs.config import probe_or_fail, read_json_object
from ..runs.models import algo_class, check_algo_fits, policy_kwargs_classes, policy_name
from ..runs.recipes import ALGOS, fit_to_budget, installed_algos, recipe_for
from ..runs.recipes import linear_schedule as _learning_rate
from ..runs.report import report_at_end
from ..runs.rundir import CONFIG_NAME, _slug, _tensorboard_dir
from .common import PROG, CLIError, error_line, user_errors
from .league_summary import evaluate_mains, league_ratings, league_ratings_json, summary
from .run_options import parse_pairs

__all__ = [
    "add_league_parser",
    "run_league_command",
    "main_league",
    "RecipeModel",
    "LeagueProgress",
    "LEAGUE_CONFIG_FORMAT_VERSION",
]

LEAGUE_CONFIG_FORMAT_VERSION = 1


class LeagueError(CLIError):
    """A user error in ``league``: printed on one line, exit status 2."""


class RecipeModel:
    """``make_model`` for a league: the algorithm and hyperparameters of a run's config.

    Picklable (a class, not a closure), so process and Ray players can build it.

    :param algo: a key of :data:`~sp_wrappers.runs.recipes.ALGOS`.
    :param hyperparams: the algorithm's keyword arguments (``learning_rate`` may be
        ``"lin_<rate>"``).
    :param seed: the model's seed.
    :param device: torch device.
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
            hp["learning_rate"] = _learning_rate(hp["learning_rate"])
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
    """Prints one line per player after each round and writes TensorBoard scalars per player.

    :param total: the learner steps the run goes to (all players together).
    :param tb_dir: where ``tb/<player>/`` go (``None``: no TensorBoard).
    :param quiet: print nothing (still logs to TensorBoard).
    """

    def __init__(self, total: int, tb_dir: str | None = None, quiet: bool = False) -> None:
        self.total = total
        self.tb_dir = tb_dir
        self.quiet = quiet
        self._writers: dict[str, Any] = {}
        self._steps: dict[str, int] = {}  # each player's steps after the previous round

    def _writer(self, name: str) -> Any:
        if self.tb_dir is None:
            return None
        if name not in self._writers:
            from torch.utils.tensorboard import SummaryWriter

            self._writers[name] = SummaryWriter(str(Path(self.tb_dir) / name))
        return self._writers[name]

    def __call__(self, league: League, results: Mapping[str, Any]) -> None:
        done = league.total_steps()
        if not self.quiet:
            print(
                f"round {league.round}: {done:,d}/{self.total:,d} steps, "
                f"{len(league.frozen)} frozen players",
                flush=True,
            )
        for name, result in results.items():
            learner = league.learners[name]
            outcomes = [m["score_a"] for m in result.matches]
            score = sum(outcomes) / len(outcomes) if outcomes else float("nan")
            learned = result.steps - self._steps.get(name, result.steps - league.chunk_steps)
            self._steps[name] = result.steps  # (players learn their compute share, not a chunk)
            rate = (learned / result.learn_seconds) if result.learn_seconds else 0.0
            if not self.quiet:
                print(
                    f"  {name:<20} {learner.role:<16} steps {learner.steps:>10,d}  score "
                    f"{score:5.2f} over {len(outcomes):4d} games  snapshots "
                    f"{len(learner.snapshots):3d}  resets {learner.resets:2d}  {rate:7.0f} steps/s",
                    flush=True,
                )
            writer = self._writer(name)
            if writer is not None:
                writer.add_scalar("league/score", score, learner.steps)
                writer.add_scalar("league/games", len(outcomes), learner.steps)
                writer.add_scalar("league/snapshots", len(learner.snapshots), learner.steps)
                writer.add_scalar("league/resets", learner.resets, learner.steps)
                writer.add_scalar("league/frozen_pool", len(league.frozen), learner.steps)
                writer.add_scalar("time/steps_per_second", rate, learner.steps)
                writer.flush()

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()


def _print_stall(report: StallReport) -> None:
    print(f"{PROG} league: {report}", file=sys.stderr, flush=True)


def _builder(config: Mapping[str, Any]) -> Any:
    league = config["league"]
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


def new_league_config(args: argparse.Namespace) -> dict[str, Any]:
    """A league run's config from the command line (the game's recipe, then the options)."""
    if args.game is None:
        raise LeagueError("Name the game: sp-wrappers league GAME (e.g. tictactoe_v3).")
    try:
        recipe = recipe_for(args.game, args.algo)
    except KeyError:
        raise LeagueError(
            f"Unknown algorithm {args.algo!r}; choose one of {', '.join(ALGOS)}."
        ) from None
    given = parse_pairs(args.hp, "--hp")
    algo = args.algo or recipe.algo
    budget = int(args.timesteps or recipe.timesteps)
    hyperparams = {**fit_to_budget(algo, recipe.hyperparams, budget, given), **given}
    settings = {
        key: value
        for key, value in (
            ("snapshot_min_steps", args.snapshot_min_steps),
            ("snapshot_max_steps", args.snapshot_max_steps),
            ("snapshot_win_rate", args.snapshot_win_rate),
            ("main_agents_compute", args.main_agents_compute),
        )
        if value is not None
    }
    chunk = int(args.chunk_steps)
    if "snapshot_max_steps" in settings and "snapshot_min_steps" not in settings:
        settings["snapshot_min_steps"] = min(
            ALPHASTAR_DEFAULTS["snapshot_min_steps"], settings["snapshot_max_steps"]
        )
    league = {
        "kind": "selfplay" if args.selfplay else "alphastar",
        "main_agents": args.main_agents,
        "main_exploiters": args.main_exploiters,
        "league_exploiters": args.league_exploiters,
        "settings": settings,
        "save_every": int(args.save_every or recipe.save_every),
        "latest_ratio": float(recipe.sampler.get("latest_ratio", 0.5)),
    }
    return {
        "format_version": LEAGUE_CONFIG_FORMAT_VERSION,
        "command": "league",
        "game": args.game,
        "game_kwargs": {**recipe.game_kwargs, **parse_pairs(args.game_kwarg, "--game-kwarg")},
        "algo": algo,
        "hyperparams": hyperparams,
        "league": league,
        "chunk_steps": chunk,
        "n_envs": int(args.n_envs or recipe.n_envs),
        "seed": int(args.seed),
        "timesteps": int(args.timesteps or recipe.timesteps),
        "max_frozen": args.max_frozen,
        "eval_games": int(args.eval_games if args.eval_games is not None else recipe.eval_games),
    }


def run_league(
    config: dict[str, Any],
    run_dir: Path,
    backend: str = "process",
    address: str | None = None,
    num_cpus: float | None = None,
    num_gpus: float = 0,
    progress: bool = True,
    plots: bool = True,
    torch_threads: int | None = 1,
    device: str = "cpu",
    command: str | None = None,
    stall_seconds: float | None = DEFAULT_STALL_SECONDS,
    html_report: bool = True,
) -> str:
    """Run (or continue) the league of ``config`` in ``run_dir``; returns the summary text.

    A round that makes no progress for ``stall_seconds`` is reported on stderr (also without
    progress output); a Ray cluster too small for the players stops the run before training
    with an error naming ``--num-cpus`` / ``--num-gpus``. With ``html_report`` the run ends by
    writing ``report.html`` (:func:`~sp_wrappers.runs.report.report_at_end`); a page that
    cannot be written is a note.
    """
    env_fn = game_factory(config["game"], config["game_kwargs"])
    probe = probe_or_fail(env_fn, config["game"], config["game_kwargs"], "random")
    check_algo_fits(config["algo"], probe.observation_space, probe.action_space, probe.has_masks)
    run_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    tb = _tensorboard_dir(run_dir, notes)
    reporter = LeagueProgress(int(config["timesteps"]), tb, quiet=not progress)
    league = League(
        env_fn,
        _builder(config),
        RecipeModel(config["algo"], config["hyperparams"], int(config["seed"]), device),
        run_dir,
        chunk_steps=int(config["chunk_steps"]),
        n_envs=int(config["n_envs"]),
        seed=int(config["seed"]),
        max_frozen=config.get("max_frozen"),
        torch_threads=torch_threads,
        on_round=reporter,
        on_stall=_print_stall,
    )
    config.setdefault("history", []).append(
        {
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "from_step": league.total_steps(),
            "backend": backend,
            "command": command,
        }
    )
    write_json(run_dir / CONFIG_NAME, config)
    try:
        result = league.run(
            int(config["timesteps"]),
            backend=backend,
            address=address,
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            stall_seconds=stall_seconds,
        )
    except PlayersDoNotFitError as error:
        flag = "--num-cpus " if error.resource == "CPU" else "--num-gpus "
        raise LeagueError(str(error.for_flag(flag))) from None
    finally:
        reporter.close()
    for lost in result.lost_workers:
        print(f"{PROG} league: lost a worker and retried the round: {lost}", file=sys.stderr)
    evaluation = evaluate_mains(league, env_fn, config)
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
    config["history"][-1]["seconds"] = round(result.seconds, 1)
    config["history"][-1]["final_snapshots"] = dict(league.final_snapshots)
    write_json(run_dir / CONFIG_NAME, config)
    if html_report:
        written += report_at_end(run_dir, notes)
    text = summary(league, result, ratings, evaluation, written)
    return "\n".join([text, *(f"Note: {note}" for note in notes)])


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "game", nargs="?", metavar="GAME", help=f"{', '.join(GAMES)} or module:function"
    )
    roles = parser.add_argument_group("league")
    roles.add_argument("--main-agents", type=int, default=1, metavar="N", help="(default: 1)")
    roles.add_argument("--main-exploiters", type=int, default=1, metavar="N", help="(default: 1)")
    roles.add_argument("--league-exploiters", type=int, default=1, metavar="N", help="(default: 1)")
    roles.add_argument(
        "--selfplay",
        action="store_true",
        help="plain self-play instead: one learner and its snapshot pool",
    )
    roles.add_argument(
        "--snapshot-min-steps",
        type=int,
        default=None,
        metavar="N",
        help=f"(default: {ALPHASTAR_DEFAULTS['snapshot_min_steps']:,d})",
    )
    roles.add_argument(
        "--snapshot-max-steps",
        type=int,
        default=None,
        metavar="N",
        help=f"(default: {ALPHASTAR_DEFAULTS['snapshot_max_steps']:,d})",
    )
    roles.add_argument(
        "--snapshot-win-rate",
        type=float,
        default=None,
        metavar="P",
        help=f"(default: {ALPHASTAR_DEFAULTS['snapshot_win_rate']})",
    )
    roles.add_argument(
        "--main-agents-compute",
        type=float,
        default=None,
        metavar="P",
        help="the main agents' share of the league's learner steps, at least (default: "
        f"{ALPHASTAR_DEFAULTS['main_agents_compute']}; the other players split the rest)",
    )
    roles.add_argument(
        "--save-every", type=int, default=None, metavar="N", help="--selfplay snapshot interval"
    )
    roles.add_argument(
        "--max-frozen",
        type=int,
        default=None,
        metavar="N",
        help="cap on frozen players in matchmaking (default: no cap)",
    )
    training = parser.add_argument_group("training")
    training.add_argument(
        "--timesteps",
        type=int,
        default=None,
        metavar="T",
        help="learner steps of all players together (default: the recipe's)",
    )
    training.add_argument(
        "--chunk-steps",
        type=int,
        default=4096,
        metavar="N",
        help="steps each player learns between league updates (default: 4096)",
    )
    training.add_argument(
        "--algo",
        choices=installed_algos(),
        default=None,
        help="every player's learner, any installed one (see sp-wrappers train --help)",
    )
    training.add_argument("--hp", action="append", metavar="KEY=VALUE", help="hyperparameter")
    training.add_argument("--game-kwarg", action="append", metavar="KEY=VALUE")
    training.add_argument("--n-envs", type=int, default=None, metavar="N")
    training.add_argument("--seed", type=int, default=0)
    training.add_argument("--eval-games", type=int, default=None, metavar="N")
    training.add_argument("--device", default="cpu")
    training.add_argument("--threads", type=int, default=1, metavar="N", help="torch threads")
    running = parser.add_argument_group("running")
    running.add_argument("--backend", choices=BACKENDS, default="process")
    running.add_argument("--address", default=None, help="Ray cluster address (--backend ray)")
    running.add_argument(
        "--num-cpus",
        type=float,
        default=None,
        help="Ray CPUs per player (default: 1, or an equal share when the cluster has fewer)",
    )
    running.add_argument("--num-gpus", type=float, default=0, help="Ray GPUs per player")
    running.add_argument("--out", default=None, metavar="DIR", help="(default: runs/league-GAME)")
    running.add_argument("--resume", default=None, metavar="RUN_DIR", help="continue a league")
    running.add_argument(
        "--stall-seconds",
        type=float,
        default=DEFAULT_STALL_SECONDS,
        metavar="S",
        help="report on stderr a round in which no player finishes for S seconds "
        f"(default: {DEFAULT_STALL_SECONDS:g})",
    )
    running.add_argument("--no-progress", action="store_true")
    running.add_argument("--no-plots", action="store_true")
    running.add_argument(
        "--no-report", action="store_true", help="do not write report.html at the end"
    )
    parser.set_defaults(func=run_league_command)
    return parser


def add_league_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``league`` on the ``sp-wrappers`` parser."""
    parser = subparsers.add_parser(
        "league",
        help="train a league (AlphaStar roles, PFSP) of SB3 learners",
        description="Train main agents, main exploiters and league exploiters matched by PFSP, "
        "in parallel processes or on a Ray cluster; write a run directory like train's.",
    )
    return _configure(parser)


def run_league_command(args: argparse.Namespace) -> int:
    """The ``league`` command; returns 0."""
    if args.resume:
        run = Path(args.resume)
        config = read_json_object(
            run / CONFIG_NAME, "--resume needs a run directory written by league"
        )
        if config.get("command") != "league":
            raise LeagueError(f"{run} holds a train run, not a league; use sp-wrappers train.")
        if args.timesteps is not None:
            config["timesteps"] = int(args.timesteps)
    else:
        config = new_league_config(args)
        run = Path(args.out or f"runs/league-{_slug(config['game'])}")
        if (run / CONFIG_NAME).exists():
            raise LeagueError(
                f"{run} already holds a run; continue it with --resume {run}, or pass --out."
            )
    ray_only = {"--address": args.address, "--num-cpus": args.num_cpus, "--num-gpus": args.num_gpus}
    given = [flag for flag, value in ray_only.items() if value]
    if given and args.backend != "ray":
        raise LeagueError(f"{', '.join(given)} only apply to --backend ray; drop them or add it.")
    argv = getattr(args, "_argv", None)
    command = shlex.join([PROG, "league", *argv]) if argv else shlex.join([PROG, *sys.argv[1:]])
    if not args.no_progress:
        print(f"League on {config['game']} ({config['algo']}) into {run}", flush=True)
    text = run_league(
        config,
        run,
        backend=args.backend,
        address=args.address,
        num_cpus=args.num_cpus,
        num_gpus=args.num_gpus,
        progress=not args.no_progress,
        plots=not args.no_plots,
        html_report=not args.no_report,
        torch_threads=args.threads,
        device=args.device,
        command=command,
        stall_seconds=args.stall_seconds,
    )
    print(text, flush=True)
    return 0


def main_league(argv: Sequence[str] | None = None) -> int:
    """Run ``sp-wrappers league`` with ``argv``; return the exit status (2 on a user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _configure(argparse.ArgumentParser(prog=f"{PROG} league"))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    args._argv = argv
    try:
        return int(args.func(args) or 0)
    except user_errors() as error:
        print(error_line(f"{PROG} league", error), file=sys.stderr)
        return 2
    except ImportError as error:
        if "pip install" in str(error):
            print(f"{PROG} league: error: {error}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main_league())
