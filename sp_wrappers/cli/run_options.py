"""The options of the commands that start runs (``train``, ``league``, ``psro``), generated
from the run settings' declarations, and turned back into what the library takes.

Every run setting is declared once, as a field with a :class:`~sp_wrappers.core.settings.Setting`
(:func:`~sp_wrappers.runs.config.declared_settings`): :func:`add_run_arguments` makes one
``--option`` per setting the command's kinds of run take (its help, type, choices and group
from the declaration), and :func:`run_settings` turns the options the user gave into the
overrides :func:`~sp_wrappers.runs.resolve.resolve` takes and the
:class:`~sp_wrappers.runs.options.RunOptions` of the call. A new setting is a new option with no
edit here. The parsed arguments are never changed.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.settings import declared
from ..runs.config import TrainError, declared_settings
from ..runs.options import RUNNING, RunOptions
from ..runs.rundir import slug
from .common import PROG

__all__ = [
    "add_run_arguments",
    "run_settings",
    "command_line",
    "parse_pairs",
    "resume_dir",
]


def parse_pairs(pairs: Sequence[str] | None, option: str) -> dict[str, Any]:
    """``["a=1", "b=[64, 64]", "c=tanh"]`` -> ``{"a": 1, "b": [64, 64], "c": "tanh"}``.

    >>> parse_pairs(["n_steps=64", "policy_kwargs={\\"net_arch\\": [8]}"], "--hp")
    {'n_steps': 64, 'policy_kwargs': {'net_arch': [8]}}
    """
    result: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise TrainError(
                f"{option} takes KEY=VALUE (VALUE in JSON, or a plain string), got {pair!r}."
            )
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        result[key.strip()] = value
    return result


def _declared(kinds: Sequence[str]) -> dict[str, Any]:
    """The settings the kinds of run take, each key once (the first kind's declaration)."""
    found: dict[str, Any] = {}
    for kind in kinds:
        for key, value in declared_settings(kind).items():
            found.setdefault(key, value)
    return found


def add_run_arguments(
    parser: argparse.ArgumentParser, kinds: Sequence[str], game_help: str, resume_help: str
) -> None:
    """Add ``GAME``, ``--out``, ``--resume`` and one option per declared setting of ``kinds``
    to ``parser``, in the declarations' groups; an option the user does not give is absent from
    the parsed arguments (:func:`run_settings` takes only those given).

    :param kinds: the kinds of run the command starts (``("single", "teams")`` for train).
    :param game_help: the help of the ``GAME`` argument.
    :param resume_help: the help of ``--resume``.
    """
    parser.add_argument("game", nargs="?", metavar="GAME", help=game_help)
    groups: dict[str, Any] = {}
    for key, (what, default) in _declared(kinds).items():
        name = what.option(key)
        if name is None:
            continue
        if what.group not in groups:
            groups[what.group] = parser.add_argument_group(what.group)
        options: dict[str, Any] = {"dest": key, "help": what.text(), "default": argparse.SUPPRESS}
        if what.type is bool:  # --no-x for a default that is on, else --x / --no-x
            options["action"] = "store_false" if default is True else argparse.BooleanOptionalAction
        elif what.type in (dict, list):  # repeatable: KEY=VALUE pairs, or plain values
            options.update(action="append", metavar=what.metavar)
        else:
            options.update(type=what.type or str, metavar=what.metavar, choices=what.allowed())
        groups[what.group].add_argument(f"--{name}", **options)
    running = groups.get(RUNNING) or parser
    running.add_argument(
        "--out", "-o", default=None, metavar="RUN_DIR", help="the run directory to write"
    )
    running.add_argument(
        "--resume", nargs="?", const=True, default=None, metavar="RUN_DIR", help=resume_help
    )


def run_settings(
    args: argparse.Namespace, kinds: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings among ``args`` that the user gave: the overrides (keyed by the
    configurations' fields; ``KEY=VALUE`` options read as JSON) and the keyword arguments of
    :class:`~sp_wrappers.runs.options.RunOptions`.

    >>> from sp_wrappers.cli.app import build_parser
    >>> args = build_parser().parse_args(["train", "tictactoe_v3", "--window", "3", "--hp",
    ...     "n_steps=64", "--threads", "2", "--no-progress"])
    >>> run_settings(args, ("single", "teams"))
    ({'hyperparams': {'n_steps': 64}, 'window': 3}, {'progress': False, 'torch_threads': 2})
    """
    settings = _declared(kinds)
    options_keys = set(declared(RunOptions))
    overrides: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for key, value in sorted(vars(args).items()):
        if key not in settings:
            continue
        what = settings[key][0]
        if what.type is dict:
            value = parse_pairs(value, f"--{what.option(key)}")
        elif what.type is list:
            value = tuple(value)
        (options if key in options_keys else overrides)[key] = value
    return overrides, options


def resume_dir(args: argparse.Namespace) -> Path | None:
    """The run directory ``--resume`` names: ``--resume RUN_DIR``, else ``--out``, else
    ``runs/GAME``; ``None`` for a new run."""
    if not args.resume:
        return None
    if isinstance(args.resume, str):
        return Path(args.resume)
    if args.out is None and args.game is None:
        raise TrainError("--resume needs the run directory: --resume RUN_DIR.")
    return Path(args.out or f"runs/{slug(args.game or '')}")


def command_line(command: str, argv: Sequence[str] | None) -> str:
    """The command line to record in ``config.json``'s history."""
    words = [PROG, command, *argv] if argv is not None else [PROG, *sys.argv[1:]]
    return shlex.join(words)
