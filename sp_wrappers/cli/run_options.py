"""The options of ``sp-wrappers train`` as what the library takes: an overrides mapping.

The command line parses its arguments, then hands :func:`~sp_wrappers.runs.resolve.resolve_run`
the options the user gave (:func:`train_overrides`), the run to resume (:func:`resume_dir`) and
the config file; it never changes the parsed arguments.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from ..runs.config import TrainError
from ..runs.resolve import OVERRIDES
from ..runs.rundir import slug
from .common import PROG

__all__ = ["command_line", "given_settings", "parse_pairs", "resume_dir", "train_overrides"]


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


def given_settings(
    args: argparse.Namespace, keys: Collection[str], unset: tuple[Any, ...] = (None,)
) -> dict[str, Any]:
    """The settings named ``keys`` among ``args`` that the user gave (those not ``unset``), and
    ``--hp`` and ``--game-kwarg`` as the configuration names them (``hyperparams``,
    ``game_kwargs``)."""
    given = {
        key: value
        for key, value in vars(args).items()
        if key in keys and not any(value is u for u in unset)
    }
    if args.hp is not None:
        given["hyperparams"] = parse_pairs(args.hp, "--hp")
    if args.game_kwarg is not None:
        given["game_kwargs"] = parse_pairs(args.game_kwarg, "--game-kwarg")
    return given


def train_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The run settings among ``args`` that the user gave (see :func:`given_settings`;
    ``--deterministic-opponents`` -> ``deterministic``)."""
    given = given_settings(args, OVERRIDES)
    if args.deterministic_opponents is not None:
        given["deterministic"] = args.deterministic_opponents
    return given


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
