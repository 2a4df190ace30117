"""The per-team pieces of :class:`~sp_wrappers.TeamSelfPlay`: its sampler, its callback, its files.

Each piece owns its own state and is handed what it needs by the run:

- the arithmetic of fair opponent swaps between teams of different sizes (ML-Agents'
  ``swap_steps``), and the same interval in the unit the env's swap schedule counts;
- :class:`TeamSampler`, an :class:`~sp_wrappers.OpponentSampler` over one team's archive whose
  policies carry the team's name (``"prey/snapshot-0003"``, ``"prey/latest"``), so that the
  snapshots of two teams (both numbered from ``snapshot-0000``) never share a name in the other
  team's Elo table and match history. Its ``latest`` is the frozen team's current model (sent by
  ``TeamSelfPlay`` at each team change, never by the learning team's callback), and it counts its
  draws, so swaps can be checked;
- :class:`TeamCallback`, a :class:`~sp_wrappers.SelfPlayCallback` for one team: snapshots into the
  team's archive at its own ``save_every`` (the interval runs on across team changes), one match
  record per opposing team and episode (with ``team_a``/``team_b``), Elo against the other teams'
  snapshots, kept in the run's table of team Elo, and ``selfplay/<team>/...`` keys in SB3's logger;
- every team's recorded games as games between snapshots of the teams, for one Bradley-Terry fit
  over all the archives;
- the versioned ``team_selfplay.json`` of a run directory (written atomically) and the models'
  checkpoints (SB3's ``save``).
"""

from __future__ import annotations

import bisect
import copy
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..archive.store import SnapshotArchive
from ..core.policies import Policy
from ..core.run_layout import MODELS_DIR
from ..core.state_file import Bool, Int, List, Map, Num, Obj, Optional, StateFormat, Str
from ..opponents.sampler import LATEST_ID, OpponentSampler
from ..ratings.attribution import attribute_learner_matches
from .callbacks import SelfPlayCallback

__all__ = [
    "swap_steps",
    "env_swap_every",
    "TeamSampler",
    "TeamCallback",
    "STATE_NAME",
    "STATE_FORMAT_VERSION",
    "LEARNER_ID",
    "write_state",
    "read_state",
    "check_state",
    "TEAM_STATE_FORMAT",
    "load_checkpoint",
    "team_player",
    "team_games",
]

STATE_NAME = "team_selfplay.json"
STATE_FORMAT_VERSION = 1
#: The name the learning team's current model goes by in its archive's match records.
LEARNER_ID = "learner"


def team_player(team: str, player: str) -> str:
    """The name a team's snapshot (or ``latest``) goes by outside its own archive.

    >>> team_player("prey", "snapshot-0003")
    'prey/snapshot-0003'
    """
    return f"{team}/{player}"


def swap_steps(team_change: int, swaps: int, num_agents: int, num_opponent_agents: int) -> int:
    """ML-Agents' ``swap_steps`` for a team: swaps counted in the frozen team's own steps.

    ``(num_agents / num_opponent_agents) * (team_change / swaps)``, rounded, at least 1. A frozen
    team of ``num_agents`` agents takes ``num_agents / num_opponent_agents`` steps for each step
    of the learning team (``num_opponent_agents`` agents), so over ``team_change`` learner steps
    it sees ``swaps`` swaps, whatever the sizes of the two teams.

    :param team_change: learner steps (summed over the learning team's agents) per team change.
    :param swaps: opponent swaps the frozen team should see per team change.
    :param num_agents: agents of the frozen team (the team whose ``swap_steps`` this is).
    :param num_opponent_agents: agents of the learning team.

    >>> swap_steps(200_000, 4, num_agents=1, num_opponent_agents=2)  # ML-Agents' 2-v-1 example
    25000
    >>> swap_steps(200_000, 4, num_agents=2, num_opponent_agents=1)
    100000
    """
    for name, value in (
        ("team_change", team_change),
        ("swaps", swaps),
        ("num_agents", num_agents),
        ("num_opponent_agents", num_opponent_agents),
    ):
        if not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return max(1, round(num_agents / num_opponent_agents * team_change / swaps))


def env_swap_every(frozen_steps: int, n_games: int) -> int:
    """A swap interval in the frozen team's own steps over all game copies together (as
    ML-Agents counts "ghost steps") as the env's ``swap_every``, which a team env counts per game
    copy in that team's own agent steps (``opponent={team: source}``). (With
    ``opponent_draw="shared"`` the copies count together and swap ``n_games`` times as rarely
    each, the same in total.)

    >>> env_swap_every(32, n_games=2)  # the prey (one agent) swaps every 16 game steps per copy
    16
    """
    return max(1, round(frozen_steps / n_games))


class TeamSampler(OpponentSampler):
    """An :class:`~sp_wrappers.OpponentSampler` over one team's archive, for the other teams.

    Differs from its base in three ways: policies drawn carry the team's name
    (:func:`team_player`); ``latest`` is this team's own current model, sent by
    :meth:`set_latest` (the learning team's callback cannot overwrite it); and PFSP reads the
    learning team's win rates from the learning team's archive (``scores_archive``), where the
    matches against this team's snapshots are recorded.

    :param team: the team whose snapshots this sampler draws.
    :param archive: that team's archive.
    :param kwargs: :class:`~sp_wrappers.OpponentSampler`'s other arguments.
    """

    #: Count the steps an episode runs past a due swap towards the next swap (see
    #: ``OpponentSlots``): a swap waits for an episode start, and without this the team whose
    #: interval fits its episode length worse would see fewer swaps per team change.
    exact_swap_rate = True

    def __init__(self, team: str, archive: SnapshotArchive, **kwargs: Any) -> None:
        super().__init__(archive, **kwargs)
        self.team = team
        self.draws = 0
        self.scores_archive: SnapshotArchive | None = None
        self._named: OrderedDict[tuple[int, bool, str], Policy] = OrderedDict()
        self._latest_version = 0
        self._drawing = False

    def draw(self, rng: np.random.Generator | None = None) -> Policy:
        """Draw as the base sampler does; the policy comes back under the team's name."""
        if self._drawing:  # the base sampler drawing again after a corrupt snapshot
            return super().draw(rng)
        self._drawing = True
        try:
            policy = super().draw(rng)
        finally:
            self._drawing = False
        self.draws += 1
        return self._with_team_name(policy)

    def sync_latest_weights(self, version: int, state: Mapping[str, Any]) -> None:
        """Ignored: the learning team's weights are not this team's latest (see
        :meth:`set_latest`)."""

    def set_latest(self, model: Any) -> None:
        """Make this team's current model weights its ``latest`` (at each team change)."""
        if self.archive.latest() is None:
            return
        self._latest_version += 1
        state = {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}
        OpponentSampler.sync_latest_weights(self, self._latest_version, state)

    def snapshot_probabilities(self, ids: Any = None) -> np.ndarray:
        """As the base sampler's, with PFSP win rates from ``scores_archive``."""
        ids = self.eligible_ids() if ids is None else list(ids)
        if self.strategy != "pfsp" or not ids or self.scores_archive is None:
            return super().snapshot_probabilities(ids)
        from ..opponents.sampler import pfsp_weights

        scores = self.scores_archive.scores_against(self.learner_id, decay=self.pfsp_decay)
        named = [team_player(self.team, i) for i in ids]
        win_rates = [scores[n][0] if n in scores else 0.5 for n in named]
        return pfsp_weights(win_rates, self.pfsp_weighting, self.pfsp_exponent)

    def _with_team_name(self, policy: Policy) -> Policy:
        """A shallow copy of ``policy`` named ``<team>/<id>``: it shares the network (so batching
        and the archive's cache work as before); copies are kept, bounded, one per policy."""
        if not hasattr(policy, "policy_id") or "/" in str(policy.policy_id):
            return policy
        network = getattr(policy, "policy", policy)
        key = (id(network), bool(getattr(policy, "deterministic", False)), policy.policy_id)
        named = self._named.get(key)
        if named is None:
            named = copy.copy(policy)
            named.policy_id = team_player(self.team, policy.policy_id)
            self._named[key] = named
            while len(self._named) > max(2 * self.archive.cache_size, 8):
                self._named.popitem(last=False)
        else:
            self._named.move_to_end(key)
        return named

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_named"] = OrderedDict()
        return state


class TeamCallback(SelfPlayCallback):
    """A :class:`~sp_wrappers.SelfPlayCallback` for one team of a :class:`~sp_wrappers.TeamSelfPlay`
    run, handed what it needs of the run.

    :param team: the team this callback trains (``"shared"`` for one model over every team).
    :param archive: the team's archive.
    :param shared: one model for every team: the opponents are its own snapshots, so the
        learner's latest weights go to the sampler as in plain self-play.
    :param team_elo: the run's table of each team's Elo (what ``team_selfplay.json`` stores):
        read at the start of each turn, updated at every snapshot and at the end of the turn.
    :param opponent_archives: ``{team: archive}`` of the teams this team plays (none when
        ``shared``): their snapshots' Elo is read and written there.
    :param team_index: the team's position in the learning order (``selfplay/learning_team``).
    :param checkpoint: saves the team's model; called before each of its snapshots.
    :param snapshot_saved: called after each snapshot, once the Elo is published (the run
        writes its state file).
    :param kwargs: :class:`~sp_wrappers.SelfPlayCallback`'s other arguments.
    """

    def __init__(
        self,
        team: str,
        archive: SnapshotArchive,
        shared: bool = False,
        *,
        team_elo: dict[str, float],
        opponent_archives: Mapping[str, SnapshotArchive] | None = None,
        team_index: int = 0,
        checkpoint: Callable[[], None] | None = None,
        snapshot_saved: Callable[[], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            archive,
            sync_latest_every=1 if shared else 0,
            fit_every=0,
            learner_id=LEARNER_ID,
            tags=(f"team:{team}",),
            **kwargs,
        )
        self.team = team
        self.shared = shared
        self.team_elo = team_elo
        self.opponent_archives = dict(opponent_archives or {})
        self.team_index = team_index
        self._checkpoint = checkpoint
        self._snapshot_saved = snapshot_saved
        self.resume_save_step: int | None = None

    # -- SB3 hooks -------------------------------------------------------------------------------
    def _on_training_start(self) -> None:
        saved_at = self.resume_save_step
        super()._on_training_start()
        # the save interval runs on across team changes (and across a resume)
        if saved_at is not None:
            self._last_save_step = saved_at
        self.elo.ratings[self.learner_id] = self.team_elo[self.team]
        for team, archive in self.opponent_archives.items():
            for info in archive.snapshots():
                rating = (info.ratings or {}).get("elo")
                if rating is not None:
                    self.elo.ratings[team_player(team, info.id)] = float(rating)
            self.elo.ratings[team_player(team, LATEST_ID)] = self.team_elo[team]
        super()._log_start()

    def _log_start(self) -> None:
        pass  # logged at the end of _on_training_start, once the team's Elo is set

    @property
    def elo_key(self) -> str:
        """The logger key of the team's Elo (``selfplay/<team>/elo``)."""
        return f"selfplay/{self.team}/elo"

    def _fixed_players(self, names: Any) -> list[str]:
        # team_selfplay.json holds the teams' Elo; the opponents are other teams' snapshots
        return []

    def _on_training_end(self) -> None:
        super()._on_training_end()
        self.resume_save_step = self._last_save_step
        self.publish_elo()

    def publish_elo(self) -> None:
        """Hand the Elo this callback computes to the run: this team's and the frozen teams'
        entries of ``team_elo`` (what ``team_selfplay.json`` stores) and the Elo of the frozen
        teams' snapshots in their archives. Called at every snapshot and at the end of each turn,
        so a run killed after a snapshot resumes with the Elo of that snapshot."""
        self.team_elo[self.team] = self.elo.rating(self.learner_id)
        if self.shared:
            return
        for team, archive in self.opponent_archives.items():
            latest = team_player(team, LATEST_ID)
            if latest in self.elo.ratings:
                self.team_elo[team] = self.elo.ratings[latest]
            updates = {}
            for info in archive.snapshots():
                name = team_player(team, info.id)
                if name in self.elo.ratings:
                    updates[info.id] = {"elo": self.elo.ratings[name]}
            if updates:
                archive.update_ratings(updates)  # keeps the other keys, read inside the lock

    def _save_snapshot(self) -> bool:
        # the checkpoint first (as `sp-wrappers train`): a run killed between the two writes
        # resumes with its archive steps equal to the learner's
        if self._checkpoint is not None:
            self._checkpoint()
        saved = super()._save_snapshot()
        if saved:
            self.resume_save_step = self._last_save_step
            self.publish_elo()
            if self._snapshot_saved is not None:
                self._snapshot_saved()
        return saved

    def _sync_latest_weights(self) -> None:
        if self.shared:
            super()._sync_latest_weights()
        # otherwise the opponents are other teams: their latest is their own model (set by
        # TeamSelfPlay at each team change), never this learner's weights

    def _check_envs_draw_from_this_archive(self) -> None:
        if self.shared:
            super()._check_envs_draw_from_this_archive()
        # otherwise the envs draw from the other teams' archives, by design

    def _log(self) -> None:
        record = self.logger.record
        prefix = f"selfplay/{self.team}"
        record(self.elo_key, self.elo.rating(self.learner_id))
        record(f"{prefix}/win_rate", self.win_rate)
        record(f"{prefix}/draw_rate", self.draw_rate)
        record(f"{prefix}/archive_size", len(self.archive))
        record(f"{prefix}/snapshots", self.snapshots_saved)
        known = [self.elo.ratings[o] for o in self.recent_opponents if o in self.elo.ratings]
        if known:
            record(f"{prefix}/opponent_elo_mean", float(np.mean(known)))
        if not self.shared:
            for team, archive in self.opponent_archives.items():
                latest = team_player(team, LATEST_ID)
                record(f"selfplay/{team}/elo", self.elo.ratings.get(latest, 0.0))
                record(f"selfplay/{team}/archive_size", len(archive))
        record("selfplay/learning_team", self.team_index)


def team_games(
    archives: Mapping[str, SnapshotArchive], shared: bool = False
) -> Iterator[tuple[str, str, float]]:
    """Every game recorded in the teams' archives as ``(team/snapshot, team/snapshot, score_a)``.

    The learner is credited to its team's newest snapshot saved at or before the game's step (the
    snapshot it grew from, as :func:`~sp_wrappers.ratings.attribution.attribute_learner_matches`
    does); a frozen team's ``latest`` (its model, frozen during the other team's turn) to its newest
    snapshot saved before the game. With one shared model (one archive) the games are those of
    plain self-play, credited the same way.
    """
    listings = {
        team: [(info.step, info.wall_time, info.id) for info in archive.snapshots()]
        for team, archive in archives.items()
    }
    for team, archive in archives.items():
        steps = [(step, sid) for step, _, sid in listings[team]]
        keys = [step for step, _ in steps]
        for match in archive.iter_matches():
            if shared:
                for a, b, score in attribute_learner_matches([match], steps, LEARNER_ID):
                    yield team_player(team, a), team_player(team, b), score
                continue
            other, slash, sid = str(match.player_b).partition("/")
            if not slash or match.player_a != LEARNER_ID or other not in listings:
                continue
            if sid == LATEST_ID:
                known = [s for _, wall, s in listings[other] if wall <= match.wall_time]
                if not known:
                    continue
                sid = known[-1]
            step = match.step if match.step is not None else (keys[-1] if keys else 0)
            index = bisect.bisect_right(keys, step) - 1
            if index >= 0:
                mine = steps[index][1]
                yield team_player(team, mine), team_player(other, sid), float(match.score_a)


def _check_team_state(data: Mapping[str, Any], refuse: Callable[[str, str], Exception]) -> None:
    """``team_selfplay.json``'s fields name only its own teams."""
    teams = set(data["teams"])
    if data["learning_team"] not in teams:
        raise refuse("learning_team", f"is {data['learning_team']!r}, not one of {sorted(teams)}")
    for name in ("elo", "steps", "last_save_step", "swap_draws", "draws_at_turn_start", "models"):
        stray = sorted(set(data.get(name) or {}) - teams)
        if stray:
            raise refuse(name, f"names {stray}, not teams of this run")
    for team, relative in (data.get("models") or {}).items():
        if relative != f"{MODELS_DIR}/{team}.zip":
            raise refuse(f"models.{team}", f"is {relative!r}, not {MODELS_DIR}/{team}.zip")
    for index, turn in enumerate(data.get("turns") or []):
        if turn["team"] not in teams or turn["end_step"] < turn["start_step"]:
            raise refuse(f"turns[{index}]", "is not a turn of a team of this run")


_STEPS = Map(Int(min=0))

#: ``team_selfplay.json``: one reader, one writer (:class:`~sp_wrappers.core.state_file.
#: StateFormat`); 0.2's files, which also carried ``"format": "sp_wrappers.training.
#: team_selfplay"``, read the same.
TEAM_STATE_FORMAT = StateFormat(
    STATE_NAME,
    STATE_FORMAT_VERSION,
    Obj(
        {
            "teams": Map(List(Str())),
            "shared": Bool(),
            "learning_team": Str(),
            "team_changes": Int(min=0),
            "turn_start_step": Int(min=0),
            "elo": Map(Num()),
        },
        optional={
            "team_change": Int(min=1),
            "steps": _STEPS,
            "last_save_step": _STEPS,
            "archives": Map(Str()),
            "models": Map(Str()),
            "swap_draws": _STEPS,
            "draws_at_turn_start": _STEPS,
            "turns": List(
                Obj(
                    {"team": Str(), "start_step": Int(min=0), "end_step": Int(min=0)},
                    optional={"swaps": _STEPS},
                )
            ),
            "schedule_timesteps": Optional(Int(min=0)),
        },
    ),
    fix="restore team_selfplay.json from a backup, or delete it to start the run again from "
    "its archives and models",
    checks=(_check_team_state,),
)


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    """Write ``team_selfplay.json`` atomically (:data:`TEAM_STATE_FORMAT`)."""
    TEAM_STATE_FORMAT.write(path, state, sort_keys=True)


def read_state(path: Path) -> dict[str, Any]:
    """Read and check ``team_selfplay.json`` (:data:`TEAM_STATE_FORMAT`).

    :raises StateFileError: (a ``ValueError``) naming the file, the field and the fix.
    """
    return TEAM_STATE_FORMAT.read(path)


def check_state(
    state: Mapping[str, Any],
    path: Path,
    teams: Mapping[str, Any],
    shared: bool,
    archives: Mapping[str, SnapshotArchive],
) -> None:
    """Refuse a state file that another run wrote: other teams, another sharing, other archives.

    :param state: the state file's contents (:func:`read_state`).
    :param path: the file, for the errors.
    :param teams: the resuming run's ``{team: agents}``.
    :param shared: whether the resuming run has one model for every team.
    :param archives: the resuming run's ``{team: archive}``.
    """
    teams = {t: list(a) for t, a in teams.items()}
    if state.get("teams") != teams or bool(state.get("shared")) != shared:
        raise ValueError(
            f"{path} is a run with teams {state.get('teams')} "
            f"(shared={state.get('shared')}), not {teams} (shared={shared}). Resume it "
            "with the same teams and models, or choose a new run_dir."
        )
    given = {t: str(a.path.resolve()) for t, a in archives.items()}
    stored = {t: str(Path(p).resolve()) for t, p in state.get("archives", {}).items()}
    if stored and stored != given:
        raise ValueError(
            f"{path} is a run with the archives {stored}, but this TeamSelfPlay "
            f"was given {given}. Resume with the run's archives (or archives=None to use "
            "run_dir/archives), or choose a new run_dir."
        )


def load_checkpoint(model: Any, path: Path) -> None:
    """Load a model saved with SB3's ``save`` into ``model``: weights, optimiser state and step
    count."""
    from stable_baselines3.common.save_util import load_from_zip_file

    data, params, _ = load_from_zip_file(path, device=model.device)
    model.set_parameters(params, exact_match=True, device=model.device)
    model.num_timesteps = int(data.get("num_timesteps", 0))
    model._n_updates = int(data.get("_n_updates", 0))
