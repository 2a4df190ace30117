"""A league's state file, ``league.json``: what a killed league resumes from.

This module holds :class:`LeagueStateFile`, the base of :class:`~sp_wrappers.league.runner.League`
that reads ``league.json`` (format version, players, rounds, compute shares, the schedules'
horizon), writes it atomically at the end of each complete round, and describes it
(``state_json``). The format is in ``docs/formats.md``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .builders import FrozenPlayer, LearnerState
from .compute import same_shares, shares_changed
from .worker import LeagueSetupError

__all__ = ["LeagueStateFile", "STATE_FORMAT_VERSION", "STATE_NAME", "atomic_write"]


class LeagueStateFile:
    """The part of :class:`League` described in the module docstring."""

    def _load_state(self) -> None:
        path = self.root / STATE_NAME
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise LeagueSetupError(
                f"Cannot read {path}: {error}. Restore the file or start a new league directory."
            ) from error
        if state.get("format_version") != STATE_FORMAT_VERSION:
            raise LeagueSetupError(
                f"{path} has format version {state.get('format_version')!r}, this sp_wrappers "
                f"reads {STATE_FORMAT_VERSION}. Use the version that wrote it or a new directory."
            )
        saved = {p["name"]: p["role"] for p in state["learners"]}
        wanted = {s.name: s.role for s in self.specs}
        if saved != wanted:
            raise LeagueSetupError(
                f"{self.root} holds a league with players {saved}, but the builder asks for "
                f"{wanted}. Resume with the same builder settings or use a new directory."
            )
        if not same_shares(state.get("compute_shares"), self.shares):
            raise LeagueSetupError(shares_changed(self.root, state["compute_shares"], self.shares))
        self.learners = {p["name"]: LearnerState.from_json(p) for p in state["learners"]}
        self.frozen = [FrozenPlayer(**f) for f in state["frozen"]]
        self.pending_resets = set(state["pending_resets"])
        self.round = int(state["round"])
        self.model_files = dict(state["model_files"])
        self.final_snapshots = dict(state.get("final_snapshots", {}))
        total = state.get("total_timesteps")
        self.total_timesteps = None if total is None else int(total)
        self.rng.bit_generator.state = state["rng"]

    def state_json(self) -> dict[str, Any]:
        """Everything ``league.json`` holds (see the module docstring)."""
        return {
            "format_version": STATE_FORMAT_VERSION,
            "round": self.round,
            "builder": repr(self.builder),
            "chunk_steps": self.chunk_steps,
            "total_timesteps": self.total_timesteps,
            "compute_shares": dict(self.shares),
            "learners": [p.to_json() for p in self.learners.values()],
            "frozen": [vars(f) for f in self.frozen],
            "pending_resets": sorted(self.pending_resets),
            "model_files": dict(self.model_files),
            "final_snapshots": dict(self.final_snapshots),
            "rng": self.rng.bit_generator.state,
            "payoff": self.payoff.to_json(),
        }

    def _write_state(self) -> None:
        data = json.dumps(self.state_json(), indent=1, default=int).encode()
        atomic_write(self.root / STATE_NAME, data)


STATE_FORMAT_VERSION = 1


STATE_NAME = "league.json"


def atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
