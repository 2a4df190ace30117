"""A league's state and its file, ``league.json``: what a killed league resumes from.

``league.json`` (format in ``docs/formats.md``) records the rounds played, every learning
player's steps, snapshots and resets, the frozen pool, the resets still to apply, the players'
model files, their final snapshots, the schedules' horizon and the driver's random state. The
league writes it atomically at the end of each complete round, and last, so a league killed at
any moment resumes from its last complete round.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.state_file import (
    AnyValue,
    Int,
    List,
    Map,
    Num,
    Obj,
    Optional,
    SnapshotId,
    StateFormat,
    Str,
)
from .builders import FrozenPlayer, LearnerState, PlayerSpec
from .compute import same_shares, shares_changed
from .worker import LeagueSetupError

__all__ = ["LeagueState", "STATE_FORMAT_VERSION", "STATE_NAME", "LEAGUE_FORMAT", "model_file_name"]

#: The version of ``league.json``'s format this sp_wrappers reads and writes.
STATE_FORMAT_VERSION = 1

#: The state file's name in a league directory.
STATE_NAME = "league.json"
#: The folder of a league directory that holds each player's model files.
PLAYERS_DIR = "players"
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}"  # a player's name, as a folder of players/


def model_file_name(player: str, round: int) -> str:
    """A player's model file after ``round``, relative to the league directory.

    >>> model_file_name("main_agent_0", 3)
    'players/main_agent_0/model-00003.zip'
    """
    return f"{PLAYERS_DIR}/{player}/model-{int(round):05d}.zip"


def _check_league(data: Mapping[str, Any], refuse: Callable[[str, str], Exception]) -> None:
    """``league.json``'s fields agree: unique players, model files in each player's own
    folder, resets and final snapshots of known players."""
    names = [p["name"] for p in data["learners"]]
    if len(set(names)) != len(names):
        raise refuse("learners", f"names a player twice: {names}")
    for name, relative in data["model_files"].items():
        match = re.fullmatch(rf"{PLAYERS_DIR}/({_NAME})/model-\d{{5,9}}\.zip", relative)
        if name not in names or match is None or match.group(1) != name:
            raise refuse(
                f"model_files.{name}",
                f"is {relative!r}, not a model file of a player of this league "
                f"({PLAYERS_DIR}/<player>/model-<round>.zip)",
            )
    for field_name in ("pending_resets", "final_snapshots"):
        stray = sorted(set(data.get(field_name) or ()) - set(names))
        if stray:
            raise refuse(field_name, f"names {stray}, not players of this league")


_LEARNER = Obj(
    {
        "name": Str(pattern=_NAME),
        "role": Str(),
        "steps": Int(min=0),
        "last_snapshot_step": Int(min=0),
        "snapshots": List(SnapshotId()),
        "resets": Int(min=0),
    }
)
_FROZEN = Obj({"id": SnapshotId(), "player": Str(), "role": Str(), "step": Int(min=0)})

#: ``league.json``: one reader, one writer (:class:`~sp_wrappers.core.state_file.StateFormat`).
LEAGUE_FORMAT = StateFormat(
    STATE_NAME,
    STATE_FORMAT_VERSION,
    Obj(
        {
            "round": Int(min=0),
            "learners": List(_LEARNER),
            "frozen": List(_FROZEN),
            "pending_resets": List(Str()),
            "model_files": Map(Str()),
            "rng": Map(AnyValue()),
        },
        optional={
            "builder": Str(),
            "chunk_steps": Int(min=1),
            "total_timesteps": Optional(Int(min=0)),
            "compute_shares": Optional(Map(Num(min=0, max=1))),
            "final_snapshots": Map(SnapshotId()),
            "payoff": AnyValue(),
        },
    ),
    fix="restore league.json from a backup (or use the sp_wrappers that wrote it), or start a "
    "new league directory (--out)",
    checks=(_check_league,),
)


@dataclass
class LeagueState:
    """What a league has done so far, read from and written to ``league.json``.

    :class:`~sp_wrappers.league.runner.League` holds one and changes it as rounds end; what
    else the file records (the builder, the chunk size, the compute shares, the payoff table) the
    league hands to :meth:`write`.

    :param path: the state file (``<league directory>/league.json``).
    :param learners: every learning player by name.
    :param rng: the driver's random generator (matchmaking seeds, resets).
    :param frozen: the frozen players in the pool, oldest first.
    :param pending_resets: learning players that restart from their initial model next round.
    :param round: complete rounds so far.
    :param model_files: each player's newest model file, relative to the league directory.
    :param final_snapshots: each player's final snapshot id.
    :param total_timesteps: the learner steps the last run aimed at (the schedules' horizon).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from sp_wrappers.league import LearnerState, PlayerSpec
    >>> path = Path(tempfile.mkdtemp()) / STATE_NAME
    >>> state = LeagueState.new(path, [PlayerSpec("main_agent_0", "main_agent")], seed=0)
    >>> state.round = 3
    >>> state.write(builder="SelfPlayLeague()", chunk_steps=64, shares={"main_agent_0": 1.0},
    ...             payoff={})
    >>> LeagueState.read(path, [PlayerSpec("main_agent_0", "main_agent")],
    ...                  {"main_agent_0": 1.0}).round
    3
    """

    path: Path
    learners: dict[str, LearnerState]
    rng: np.random.Generator
    frozen: list[FrozenPlayer] = field(default_factory=list)
    pending_resets: set[str] = field(default_factory=set)
    round: int = 0
    model_files: dict[str, str] = field(default_factory=dict)
    final_snapshots: dict[str, str] = field(default_factory=dict)
    total_timesteps: int | None = None

    @classmethod
    def new(cls, path: Path, specs: Iterable[PlayerSpec], seed: int) -> LeagueState:
        """The state of a league that has played no round.

        :param path: where ``league.json`` goes.
        :param specs: the builder's learning players.
        :param seed: seeds the driver's random generator.
        """
        learners = {s.name: LearnerState(s.name, s.role) for s in specs}
        return cls(Path(path), learners, np.random.default_rng(seed))

    @staticmethod
    def steps_done(path: Path) -> int | None:
        """The learner steps of all players together that ``league.json`` at ``path`` records
        (``None``: no file there, a new league), read without building the league.

        :raises LeagueSetupError: the file cannot be read; the message names the fix.
        """
        path = Path(path)
        if not path.exists():
            return None
        return sum(p["steps"] for p in LEAGUE_FORMAT.read(path)["learners"])

    @classmethod
    def read(
        cls,
        path: Path,
        specs: Iterable[PlayerSpec],
        shares: Mapping[str, float],
        snapshots: Collection[str] | None = None,
    ) -> LeagueState:
        """The state ``league.json`` at ``path`` holds, checked against the league resuming it.

        :param specs: the learning players the builder asks for (names and roles must match).
        :param shares: the builder's compute shares (must match those the league was run with).
        :param snapshots: every snapshot id the league's archive ever handed out (``None``: not
            checked); the snapshots the file names must be among them.
        :raises StateFileError: the file cannot be read, has another format version, or holds
            a field :data:`LEAGUE_FORMAT` refuses; the message names the field and the fix.
        :raises LeagueSetupError: the file was written for other players or shares.
        """
        path = Path(path)
        state = LEAGUE_FORMAT.read(path, snapshots=snapshots)
        saved = {p["name"]: p["role"] for p in state["learners"]}
        wanted = {s.name: s.role for s in specs}
        if saved != wanted:
            raise LeagueSetupError(
                f"{path.parent} holds a league with players {saved}, but the builder asks for "
                f"{wanted}. Resume with the same builder settings or use a new directory."
            )
        if not same_shares(state.get("compute_shares"), shares):
            raise LeagueSetupError(shares_changed(path.parent, state["compute_shares"], shares))
        rng = np.random.default_rng(0)  # its state is replaced by the saved one
        try:
            rng.bit_generator.state = state["rng"]
        except (TypeError, ValueError, KeyError) as error:
            raise LEAGUE_FORMAT.refuse(path, "rng", f"is not a random state ({error})") from None
        total = state.get("total_timesteps")
        return cls(
            path=path,
            learners={p["name"]: LearnerState.from_json(p) for p in state["learners"]},
            rng=rng,
            frozen=[FrozenPlayer(**f) for f in state["frozen"]],
            pending_resets=set(state["pending_resets"]),
            round=state["round"],
            model_files=dict(state["model_files"]),
            final_snapshots=dict(state.get("final_snapshots", {})),
            total_timesteps=None if total is None else int(total),
        )

    def to_json(
        self,
        builder: str,
        chunk_steps: int,
        shares: Mapping[str, float],
        payoff: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Everything ``league.json`` holds: this state and what the league adds to it.

        :param builder: the builder's ``repr``.
        :param chunk_steps: learner steps per player per round on average.
        :param shares: the compute shares (checked again on resume).
        :param payoff: the payoff table's JSON (for reading; a resumed league rebuilds its table
            from the archive's match history).
        """
        return {
            "round": self.round,
            "builder": builder,
            "chunk_steps": chunk_steps,
            "total_timesteps": self.total_timesteps,
            "compute_shares": dict(shares),
            "learners": [p.to_json() for p in self.learners.values()],
            "frozen": [vars(f) for f in self.frozen],
            "pending_resets": sorted(self.pending_resets),
            "model_files": dict(self.model_files),
            "final_snapshots": dict(self.final_snapshots),
            "rng": self.rng.bit_generator.state,
            "payoff": payoff,
        }

    def write(
        self,
        builder: str,
        chunk_steps: int,
        shares: Mapping[str, float],
        payoff: Mapping[str, Any],
    ) -> None:
        """Write ``league.json`` atomically (arguments as :meth:`to_json`'s)."""
        data = self.to_json(builder, chunk_steps, shares, payoff)
        LEAGUE_FORMAT.write(self.path, data, indent=1, default=int)
