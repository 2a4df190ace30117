"""``sp-wrappers train GAME``: the command line of single-learner and team runs.

The command parses its arguments, turns the options given into overrides, resolves the run once
(:func:`~sp_wrappers.runs.resolve.resolve`: a single learner or teams), starts it with
:func:`sp_wrappers.runs.start` and prints its summary. The arguments are never changed after
parsing.

Run ``sp-wrappers train tictactoe_v3``; ``sp-wrappers train --resume runs/tictactoe_v3
--timesteps 200000`` adds 200k steps to that run with the same archive.

>>> import contextlib, io, os, tempfile
>>> out = tempfile.mkdtemp()
>>> with contextlib.redirect_stdout(io.StringIO()):
...     status = main_train(["tictactoe_v3", "--timesteps", "256", "--n-envs", "2",
...                          "--hp", "n_steps=64", "--hp", "batch_size=64", "--save-every", "128",
...                          "--eval-games", "2", "--out", out, "--no-progress", "--no-plots"])
>>> written = set(os.listdir(out))  # and tb/ when tensorboard is installed
>>> status, sorted(written & {"archive", "config.json", "model.zip", "ratings.json"})
(0, ['archive', 'config.json', 'model.zip', 'ratings.json'])
>>> main_train(["chess"])  # one line on stderr naming the registered games
2
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..core.seats import ILLEGAL_ACTION_MODES
from ..games.registry import GAMES
from ..opponents.sampler import STRATEGIES
from ..opponents.slots import OPPONENT_DRAWS, SWAP_UNITS
from ..runs.config import TeamRunConfig
from ..runs.recipes import installed_algos
from ..runs.resolve import resolve
from ..runs.rundir import CONFIG_NAME, RunDir
from .common import add_trust_option, flag_names, say_trust
from .run_options import command_line, resume_dir, train_overrides
from .team_train import team_run_banner

__all__ = ["add_train_parser", "build_train_parser", "run_train_command", "main_train"]

# ------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------


def _configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    games = ", ".join(GAMES)
    parser.add_argument(
        "game",
        nargs="?",
        metavar="GAME",
        help=f"a registered game ({games}) or an import path module:function to a PettingZoo "
        "env constructor; optional with --resume or --config",
    )
    parser.add_argument(
        "--algo",
        choices=installed_algos(),
        default=None,
        help="the learner, any installed Stable-Baselines3 / sb3-contrib one: on-policy ppo, "
        "a2c, trpo, maskable_ppo (needs masks), recurrent_ppo (LSTM); off-policy dqn, qrdqn "
        "(discrete actions), sac, td3, ddpg, tqc, crossq (continuous actions); ars "
        "(default: the game's recipe; maskable_ppo when the game has action masks, else ppo)",
    )
    parser.add_argument(
        "--timesteps",
        type=int,
        default=None,
        metavar="N",
        help="learner steps, per team in a team run (default: the recipe's; with --resume: "
        "the steps still missing, or N more)",
    )
    parser.add_argument(
        "--n-envs",
        type=int,
        default=None,
        metavar="N",
        help="game copies stepped together (default: the recipe's)",
    )
    sampler = parser.add_argument_group("opponent sampler (defaults: the game's recipe)")
    sampler.add_argument(
        "--window",
        type=int,
        default=None,
        metavar="N",
        help="draw from the newest N snapshots (0: all)",
    )
    sampler.add_argument(
        "--latest-ratio",
        type=float,
        default=None,
        metavar="P",
        help="share of the games left after --random-ratio and --reference-ratio (the fixed "
        "opponents, drawn first) played against the learner's latest weights, the rest against "
        "snapshots: --random-ratio 0.2 --latest-ratio 0.5 plays the latest weights in 40%% of "
        "games (ML-Agents' play_against_latest_model_ratio, which has no fixed opponents)",
    )
    sampler.add_argument(
        "--swap-every",
        type=int,
        default=None,
        metavar="N",
        help="keep an opponent for N swap units",
    )
    sampler.add_argument("--swap-unit", choices=SWAP_UNITS, default=None)
    sampler.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=None,
        help="uniform over the window, or prioritized fictitious self-play",
    )
    sampler.add_argument(
        "--random-ratio",
        type=float,
        default=None,
        metavar="P",
        help="probability of a RandomPolicy opponent, of all games",
    )
    sampler.add_argument(
        "--reference-ratio",
        type=float,
        default=None,
        metavar="P",
        help="probability of one of the game's reference bots (minimax; alpha-beta depths 1 "
        "and 2, split evenly) as the opponent; the run is then no longer pure self-play",
    )
    parser.add_argument(
        "--draw-reward",
        type=float,
        default=None,
        metavar="R",
        help="added to the learner's reward for a drawn game (negative: contempt for draws, "
        "so it plays for wins); default: the recipe's, usually 0",
    )
    sampler.add_argument(
        "--opponent-draw",
        choices=OPPONENT_DRAWS,
        default=None,
        help="per_env (default): each env copy draws its own opponents, so a rollout mixes "
        "them; shared: one line-up for every copy between swaps (ML-Agents' ghost trainer, one "
        "forward pass for all copies)",
    )
    parser.add_argument(
        "--illegal-action",
        choices=ILLEGAL_ACTION_MODES,
        default=None,
        help="what a learner action its mask forbids does: loss (default; the episode ends as a "
        "loss) or raise (stop with an error naming the action)",
    )
    sampler.add_argument(
        "--deterministic-opponents",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="snapshot opponents take their most likely action",
    )
    parser.add_argument(
        "--env-generator",
        default=None,
        metavar="MODULE:FUNCTION",
        help="an environment generator: FUNCTION(step, index, history) returns each env copy's "
        "game configuration (game keyword arguments, e.g. a komi) at its episode starts; kept "
        "in config.json, the current configurations in env_generator.json (see the how-to)",
    )
    parser.add_argument(
        "--learner",
        default=None,
        metavar="SEAT",
        help="learner seat: random (default), alternate, or an agent name",
    )
    teams = parser.add_argument_group(
        "teams (one learner per team, TeamSelfPlay; default: the game's recipe, e.g. "
        "simple_tag_v3 and quadrapong_v4)"
    )
    teams.add_argument(
        "--teams",
        default=None,
        metavar="SPEC",
        help="group the agents into teams and train one learner per team: 'prefix' (agent "
        "names without the trailing _N: adversary_0..2 -> adversary) or a JSON mapping "
        '\'{"red": ["first_0", "third_0"], "blue": ["second_0", "fourth_0"]}\'',
    )
    teams.add_argument(
        "--team-change",
        type=int,
        default=None,
        metavar="N",
        help="learner steps of the learning team before the next team learns (the recipe's, "
        "else about a tenth of --timesteps, a multiple of every team's rollout)",
    )
    teams.add_argument(
        "--shared",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="--shared: one model plays every team (refused when their spaces differ); "
        "--no-shared: one model per team; default: one model per distinct observation/action "
        "space (teams whose spaces agree share one)",
    )
    parser.add_argument(
        "--save-every",
        type=int,
        default=None,
        metavar="N",
        help="snapshot (and model.zip checkpoint) interval in learner steps",
    )
    parser.add_argument(
        "--max-snapshots",
        type=int,
        default=None,
        metavar="N",
        help="keep at most N snapshots in the archive: the first, the newest N/2 and an even "
        "spread of the rest; older ones are pruned (their games stay in the match history). "
        "Default (0): keep all",
    )
    parser.add_argument(
        "--prune-by",
        choices=("spread", "rating"),
        default=None,
        help="which snapshots --max-snapshots keeps beside the first and the newest N/2: "
        "'spread' (default) an even spread over the run; 'rating' the strongest, ranked by the "
        "lower end of their skill rating's interval (one lucky game keeps none)",
    )
    parser.add_argument(
        "--fit-every",
        type=int,
        default=None,
        metavar="N",
        help="refit the Bradley-Terry ratings over the whole match history every N learner "
        "steps and store them in the archive as 'bt' (default: 0: off; ratings.json is fitted "
        "at the end of the run either way)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed (default: 0)")
    parser.add_argument(
        "--hp",
        action="append",
        metavar="KEY=VALUE",
        help="an algorithm hyperparameter (JSON value), repeatable, e.g. "
        "--hp ent_coef=0.0 --hp 'policy_kwargs={\"net_arch\": [64, 64]}'",
    )
    parser.add_argument(
        "--game-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="a keyword argument of the game constructor (JSON value), repeatable",
    )
    parser.add_argument(
        "--eval-games",
        type=int,
        default=None,
        metavar="N",
        help="end-of-run games against each baseline (default: the recipe's)",
    )
    parser.add_argument(
        "--out",
        "-o",
        default=None,
        metavar="RUN_DIR",
        help="the run directory (default: runs/GAME)",
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const=True,
        default=None,
        metavar="RUN_DIR",
        help="continue the run in RUN_DIR (or --out) from its config.json, model.zip and archive",
    )
    parser.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="start a new run from a run's config.json (options override it)",
    )
    parser.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="torch CPU threads (default: 1, fastest for small networks)",
    )
    parser.add_argument(
        "--strength-every",
        type=int,
        default=None,
        metavar="N",
        help="games with reference players (tictactoe_v3, connect_four_v3): play the learner "
        "against the game's ladder from forced openings every N learner steps, logging "
        "eval/<opponent>/score and eval/rating (TensorBoard, progress.csv) and writing "
        "strength.json and plots/strength.png; 0: off (default: the recipe's, else a tenth of "
        "the run)",
    )
    parser.add_argument(
        "--exploitability-every",
        type=int,
        default=None,
        metavar="STEPS",
        help="games small enough to walk (tictactoe_v3; Kuhn and Leduc poker through "
        "openspiel_env): measure the exact exploitability of the learner, of the archive's Nash "
        "mixture and of each snapshot every STEPS learner steps, logging eval/exploitability "
        "and eval/nash_conv and writing exploitability.json; 0: off (default: a tenth of runs "
        "of at least 20,000 steps)",
    )
    parser.add_argument(
        "--magnet",
        default=None,
        metavar="kl=ETA,refresh=N[,unit=updates|steps][,average=K]",
        help="on-policy learners (ppo, maskable_ppo, a2c, trpo): subtract ETA * (log pi(a|s) - "
        "log magnet(a|s)) from each step's reward and make the magnet the current policy every "
        "N updates (unit=steps: learner steps), or the mixture of the K newest; self-play that "
        "settles in poker instead of cycling (R-NaD, MMD). none: off (default: the recipe's)",
    )
    parser.add_argument(
        "--strength-plies",
        type=int,
        default=None,
        metavar="N",
        help="forced opening moves of the strength evaluations, every legal sequence of N moves "
        "in both seats (default: the game's: 1 for tic-tac-toe, 9 openings; 2 for Connect Four, "
        "49)",
    )
    parser.add_argument(
        "--symmetries",
        default=None,
        metavar="auto|none|GAME",
        help="play each learner episode in a random symmetric view of the board (auto: the "
        "game's built-ins: the 8 of the square for tic-tac-toe and Go, the mirror for Connect "
        "Four; checked against the game first); none: the real view (default: the recipe's)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-plots", action="store_true", help="do not write plots/")
    parser.add_argument(
        "--no-report",
        action="store_true",
        help="do not write report.html at the end (sp-wrappers report RUN_DIR writes it later)",
    )
    add_trust_option(parser)
    parser.set_defaults(func=run_train_command, on_interrupt="continue with --resume")
    return parser


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``train`` command to an ``argparse`` subparsers object (``sp-wrappers``'s).

    Its ``func`` takes the parsed arguments and returns the exit status; user errors raise
    the library's user errors, which ``sp-wrappers`` prints on one line, status 2.
    """
    parser = subparsers.add_parser(
        "train",
        help="train a learner by self-play on a PettingZoo game",
        description="Train a self-play learner with the game's tuned recipe, then rate it and "
        "write the run directory: model.zip, archive/, config.json, ratings.json, plots/, tb/, "
        "report.html.",
    )
    return _configure_parser(parser)


def build_train_parser() -> argparse.ArgumentParser:
    """The ``train`` command's parser: the ``sp-wrappers`` parser's own (kept from 0.2)."""
    from .app import build_parser

    return build_parser().command_parser("train")


def run_train_command(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    """The ``train`` command: resolve the run once, start it, print the summary; returns 0.

    :param args: the parsed arguments (never changed).
    :param argv: the command's arguments, recorded in ``config.json``'s history (default:
        ``sys.argv``).
    """
    from ..runs.run import RunOptions, start  # torch and SB3: imported once a run starts

    resume_path = resume_dir(args)
    overrides = train_overrides(args)
    config = resolve(args.game, overrides, resume=resume_path, config_file=args.config)
    resume = resume_path is not None
    if resume:
        run = RunDir(resume_path)
    else:
        run = RunDir.new(args.out or RunDir.default_for(config).path)
    if isinstance(config, TeamRunConfig):
        print(team_run_banner(config, run.path, resume), flush=True)
    else:
        source = CONFIG_NAME if resume else config.recipe
        print(
            f"{'Resuming' if resume else 'Training'} {config.algo} on {config.game} ({source}) "
            f"into {run.path}",
            flush=True,
        )
    trust = tuple(args.trust_module or ())
    if resume:  # a new run's snapshots are its own learner's, trusted as they are saved
        say_trust(config, trust, run.config_path)
    options = RunOptions(
        resume=resume,
        timesteps=overrides.get("timesteps") if resume else None,  # on --resume: N more steps
        progress=not args.no_progress,
        plots=not args.no_plots,
        html_report=not args.no_report,
        device=args.device,
        torch_threads=args.threads,
        command=command_line("train", argv),
        trusted_modules=trust,
        report=print,
    )
    print(flag_names(start(config, run, options).summary()), flush=True)
    return 0


def main_train(argv: Sequence[str] | None = None) -> int:
    """``sp-wrappers train ARGV`` (kept from 0.2): :func:`sp_wrappers.cli.main` runs it; the
    exit status is returned (2 on a user error), ``--help`` and usage errors included."""
    from .app import run_command

    return run_command("train", argv)
