"""``SelfPlayCallback``: snapshots, latest-weight sync, match records and ratings during ``learn``;
and :func:`match_records`, the archive's match rows of one finished episode.

The callback is what writes the archive during ``learn``: it saves snapshots into the
:class:`~sp_wrappers.SnapshotArchive` (every ``save_every`` steps, once the learner's win rate
clears ``win_rate_threshold`` when one is set), reads every finished episode's
``info["selfplay"]`` (drained from the env's buffer, see :mod:`~sp_wrappers.training.episode_feed`,
so every learner's games count, ARS's too, each once), rates the learner and its opponents online
(Elo, and an OpenSkill rating with its uncertainty; a Bradley-Terry fit over the whole match
history every ``fit_every`` steps), records each match in the archive, plays the games a Nash
sampler's missing payoffs need after each snapshot (:mod:`~sp_wrappers.training.nash_games`),
refreshes the learner's latest weights in every env (in this process or in ``SubprocVecEnv``
workers) and logs ``selfplay/*`` through SB3's logger.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from ..archive.store import CorruptSnapshotError, SnapshotArchive, as_archive
from ..archive.templates import end_run, is_run_template
from ..core.weights import state_arrays
from ..envs.observation_wrappers import check_observation_wrappers
from ..opponents.sampler import LATEST_ID
from ..ratings.attribution import iter_attributed_matches
from ..ratings.bradley_terry import fit_bradley_terry
from ..ratings.elo import EloRatings
from ..ratings.skill import OpenSkillRatings
from .episode_feed import EpisodeFeed, restart_episodes
from .nash_games import NashPayoffGames

__all__ = [
    "SelfPlayCallback",
    "match_records",
]


def match_records(
    summary: Mapping[str, Any], learner_id: str, step: int | None, source: str | None = None
) -> list[dict[str, Any]]:
    """The archive match rows of one finished episode's ``info["selfplay"]`` summary, in the form
    :meth:`~sp_wrappers.SnapshotArchive.record_matches` takes.

    A team game (the summary has ``team``) gives one row per opposing team (``team_a``,
    ``team_b``; teammates are never opponents) scored by the learner's result against that team
    alone (``team_outcomes``, see :func:`~sp_wrappers.core.teams.team_summary`), any other game one
    row per opponent seat (``seat_b``) scored by the learner's result against that seat alone
    (``seat_outcomes``, see :func:`~sp_wrappers.core.seats.seat_outcomes`; summaries without it:
    ``outcome``). Every row carries the game
    configuration the episode was played under (``config``, set by an environment generator;
    ``None`` without one).

    :param summary: ``info["selfplay"]`` of an episode's end.
    :param learner_id: the name the learner is recorded under (``player_a``).
    :param step: the learner step recorded with the rows.
    :param source: the rows' ``source`` (left out: the archive's default, ``"training"``).

    >>> rows = match_records(
    ...     {"outcome": 1.0, "seat": "a_0", "team": "a", "opponent": "b/snapshot-0001",
    ...      "opponent_teams": {"b": "b/snapshot-0001"}, "config": {"max_cycles": 5}},
    ...     "learner", step=64)
    >>> [(r["player_b"], r["score_a"], r["team_a"], r["team_b"], r["config"]) for r in rows]
    [('b/snapshot-0001', 1.0, 'a', 'b', {'max_cycles': 5})]
    """
    outcome = float(summary["outcome"])
    seat = summary.get("seat")
    team = summary.get("team")
    if team is not None:
        by_team = summary.get("opponent_teams") or {None: summary["opponent"]}
        scores = summary.get("team_outcomes") or {}
        pairs = [
            (None, other, opponent, float(scores.get(other, outcome)))
            for other, opponent in by_team.items()
        ]
    else:
        opponents = summary.get("opponents") or {"?": summary["opponent"]}
        scores = summary.get("seat_outcomes") or {}
        pairs = [
            (seat_b, None, opponent, float(scores.get(seat_b, outcome)))
            for seat_b, opponent in opponents.items()
        ]
    rows = []
    for seat_b, team_b, opponent, score in pairs:
        row = dict(
            player_a=learner_id,
            player_b=opponent,
            score_a=score,
            step=step,
            seat_a=seat,
            seat_b=seat_b,
            team_a=team,
            team_b=team_b,
            config=summary.get("config"),
        )
        if source is not None:
            row["source"] = source
        rows.append(row)
    return rows


class SelfPlayCallback(BaseCallback):
    """Runs the self-play loop inside ``model.learn``: save, sync, record, rate, log.

    :param archive: where snapshots and matches go: a :class:`~sp_wrappers.SnapshotArchive` or
        the path of its directory (opened here, created when missing), so the callback can be
        named in a configuration file (RL Baselines3 Zoo's ``callback:``). A path holding
        ``{run}`` (e.g. ``runs/zoo/archive-{run}``) gives every training run its own archive,
        shared with the envs built in the same thread (one per Optuna trial; see
        :mod:`sp_wrappers.archive.templates`).
    :param save_every: save a snapshot every this many learner steps (``model.num_timesteps``).
    :param win_rate_threshold: when set, a due snapshot is only saved once the learner's win rate
        over its last ``win_rate_window`` episodes reaches this value (RLlib's self-play gate).
    :param win_rate_window: episodes in the rolling win/draw rates.
    :param elo_k: the K factor of online Elo.
    :param initial_elo: the learner's rating in a new archive (and a new fixed opponent's). The
        archive keeps the learner's own rating and the fixed opponents' (``random``, reference
        bots; :meth:`~sp_wrappers.SnapshotArchive.player_ratings`), so a resumed run goes on
        from them; ``selfplay/elo`` is logged once when ``learn`` starts, at that rating.

    Beside Elo the callback keeps an online skill rating with its uncertainty for the learner,
    every snapshot and every fixed opponent (``openskill``'s Weng-Lin PlackettLuce model, on the
    Elo scale from ``initial_elo``; see
    :meth:`~sp_wrappers.ratings.skill.OpenSkillRatings.display`), updated from every match
    row a game gives: one per opposing seat of a free-for-all game, one per opposing team of a
    team game. A snapshot starts at the learner's skill and uncertainty; both are stored in its
    ratings (``"skill"``, ``"skill_sigma"``, what pruning by rating ranks by) and logged as
    ``selfplay/skill`` and ``selfplay/skill_sigma``.
    :param sync_latest_every: send the learner's weights to every env's sampler after this many
        rollouts (1 = after every update, as ML-Agents' "latest model"); 0 turns syncing off.
    :param fit_every: run the batch Bradley-Terry fit over the archive's whole match history every
        this many learner steps (0 turns it off); its ratings are logged and stored.
    :param learner_id: the player name the learner's matches are recorded under.
    :param tags: tags stored with every snapshot this callback saves.
    :param nash_games: when the envs draw from an ``OpponentSampler(strategy="nash")``, play up
        to this many evaluation games after each saved snapshot between eligible snapshots that
        never met (:meth:`~sp_wrappers.OpponentSampler.missing_pairs`), recorded in the archive,
        so the Nash mixture rests on measured results; then log the mixture
        (``selfplay/nash_*``) and store it in the archive
        (:meth:`~sp_wrappers.SnapshotArchive.store_mixture`). 0 turns the games off.
    :param nash_games_per_pair: games per missing pair (seats alternate), at least 1.
    :param eval_env_fn: the game's constructor for those games (default: the training env's own
        ``env_fn``, which :class:`~sp_wrappers.SelfPlayEnv` keeps when built from one).
    :param verbose: 1 prints a line per saved snapshot.

    >>> import tempfile
    >>> from sb3_contrib import MaskablePPO
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import OpponentSampler, SelfPlayEnv, SnapshotArchive
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> env = SelfPlayEnv(tictactoe_v3.env(), opponent=OpponentSampler(archive))
    >>> model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0)
    >>> _ = model.learn(256, callback=SelfPlayCallback(archive, save_every=128))
    >>> len(archive) >= 2
    True
    """

    def __init__(
        self,
        archive: SnapshotArchive | str | os.PathLike[str],
        save_every: int = 10_000,
        win_rate_threshold: float | None = None,
        win_rate_window: int = 100,
        elo_k: float = 16.0,
        initial_elo: float = 1200.0,
        sync_latest_every: int = 1,
        fit_every: int = 0,
        learner_id: str = "learner",
        tags: Sequence[str] = (),
        nash_games: int = 20,
        nash_games_per_pair: int = 2,
        eval_env_fn: Callable[[], Any] | None = None,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        self.run_template = os.fspath(archive) if is_run_template(archive) else None
        archive = as_archive(archive, owner="SelfPlayCallback(archive=...)")
        if not isinstance(save_every, int | np.integer) or save_every < 1:
            raise ValueError(f"save_every must be a positive number of steps, got {save_every!r}.")
        if win_rate_threshold is not None and not 0.0 <= win_rate_threshold <= 1.0:
            raise ValueError(
                f"win_rate_threshold must be between 0 and 1 (or None), got {win_rate_threshold!r}."
            )
        if win_rate_window < 1:
            raise ValueError(f"win_rate_window must be at least 1, got {win_rate_window!r}.")
        if sync_latest_every < 0 or fit_every < 0:
            raise ValueError("sync_latest_every and fit_every must be >= 0 (0 turns them off).")
        if int(nash_games) < 0 or int(nash_games_per_pair) < 1:
            raise ValueError(
                f"nash_games must be >= 0 (0 turns the games off) and nash_games_per_pair >= 1, "
                f"got {nash_games!r} and {nash_games_per_pair!r}."
            )
        self.archive = archive
        self.save_every = int(save_every)
        self.win_rate_threshold = win_rate_threshold
        self.elo = EloRatings(k=elo_k, initial_rating=initial_elo)
        #: online skill ratings with their uncertainty (see the class docstring)
        self.skill = OpenSkillRatings(center=initial_elo)
        self.sync_latest_every = int(sync_latest_every)
        self.fit_every = int(fit_every)
        self.learner_id = learner_id
        self.tags = tuple(tags)
        self.outcomes: deque[float] = deque(maxlen=int(win_rate_window))
        self.recent_opponents: deque[str] = deque(maxlen=int(win_rate_window))
        self.stop_reason: str | None = None
        self.snapshots_saved = 0
        self.bt_ratings: dict[str, float] = {}
        self._pending_matches: list[dict[str, Any]] = []
        self._last_save_step = 0
        self._last_fit_step = 0
        self._rollouts = 0
        self.step_offset = 0
        self._sync_version = 0
        self._sync_warned = False
        self.nash = NashPayoffGames(
            self.archive, int(nash_games), int(nash_games_per_pair), eval_env_fn
        )
        self.episodes = EpisodeFeed()

    # -- SB3 hooks -------------------------------------------------------------------------------
    def _on_training_start(self) -> None:
        # VecFrameStack / VecNormalize above the env: the opponents would not see the transform
        check_observation_wrappers(self.training_env)
        # the games come from the env's buffer (episodes finished before learn are not counted)
        self.episodes.start(self.training_env)
        if self.run_template is not None:
            # The envs and this callback share this run's directory; the next run built in this
            # thread (the next Optuna trial) gets a new one.
            end_run(self.run_template)
            if self.verbose:
                print(f"SelfPlayCallback: this run's archive is {self.archive.path}")
        self._check_archive_fits_model()
        self._check_envs_draw_from_this_archive()
        for info in self.archive.snapshots():
            rating = (info.ratings or {}).get("elo")
            if rating is not None:
                self.elo.ratings[info.id] = float(rating)
            self._read_skill(info.id, info.ratings)
        stored = {p: r["elo"] for p, r in self.archive.player_ratings().items() if "elo" in r}
        for player in self._fixed_players(stored):  # fixed opponents keep their ratings
            if player != self.learner_id:  # (the learner's: only when it resumes, below)
                self.elo.ratings[player] = stored[player]
        players = self.archive.player_ratings()
        for player in self._fixed_players(players):
            if player != self.learner_id:
                self._read_skill(player, players[player])
        newest = self.archive.latest()
        if newest is not None:
            # A fresh model resumed on an old archive counts its steps from the archive's newest
            # snapshot, so steps in the archive keep increasing.
            self.step_offset = max(0, newest.step - self.num_timesteps)
        if newest is None or not self._fits_weights_of(newest.id):
            # An empty archive, or one whose newest snapshot has another network shape (a new
            # learner, e.g. the next trial of a hyperparameter search): this learner's first
            # snapshot becomes the template of the opponents' "latest" weights.
            self._save_snapshot()
            self._sync_latest_weights()
            restart_episodes(self.model)  # none against the empty-archive fallback
        else:
            # Resumed: the learner's own stored rating (archives written before it was stored:
            # its newest snapshot's, which has moved since that snapshot was saved).
            self.elo.ratings[self.learner_id] = stored.get(
                self.learner_id, self.elo.rating(newest.id)
            )
            mine = players.get(self.learner_id) or {}
            if not self._read_skill(self.learner_id, mine) and newest.id in self.skill:
                self.skill.set_display(self.learner_id, *self.skill.display(newest.id))
            self._sync_latest_weights()
        self._last_save_step = self.num_timesteps
        self._last_fit_step = self.num_timesteps
        self._log_start()

    def _log_start(self) -> None:
        """Log the rating the learner goes on from, at the step ``learn`` starts at (a resumed
        run's Elo curve continues where the killed one's ended)."""
        self.logger.record(self.elo_key, self.elo.rating(self.learner_id))
        self._log_skill()
        self.logger.dump(self.num_timesteps)

    def _read_skill(self, player: str, ratings: Any) -> bool:
        """Take ``player``'s stored skill and uncertainty, if ``ratings`` has both."""
        ratings = ratings or {}
        skill, sigma = ratings.get("skill"), ratings.get("skill_sigma")
        if isinstance(skill, int | float) and isinstance(sigma, int | float) and sigma > 0:
            self.skill.set_display(player, float(skill), float(sigma))
            return True
        return False

    def _log_skill(self) -> None:
        skill, sigma = self.skill.display(self.learner_id)
        self.logger.record("selfplay/skill", skill)
        self.logger.record("selfplay/skill_sigma", sigma)

    @property
    def elo_key(self) -> str:
        """The logger key of the learner's Elo (``selfplay/elo``)."""
        return "selfplay/elo"

    def _fixed_players(self, names: Any) -> list[str]:
        """Of ``names`` (players with Elo), those whose rating this callback stores as a player
        rating (see :meth:`~sp_wrappers.SnapshotArchive.set_player_ratings`): the learner and the
        opponents that are not snapshots of the archive, ``latest`` excepted."""
        snapshots = {info.id for info in self.archive.snapshots(include_pruned=True)}
        return [n for n in names if n not in snapshots and n != LATEST_ID]

    def _on_step(self) -> bool:
        for summary in self.episodes.collect(self.training_env, self.locals):
            self._record(summary)
        if self.num_timesteps - self._last_save_step >= self.save_every and self._gate_open():
            if not self._save_snapshot():
                return False
        if self.fit_every and self.num_timesteps - self._last_fit_step >= self.fit_every:
            self.fit_ratings()
            self._last_fit_step = self.num_timesteps
        return True

    def _on_rollout_end(self) -> None:
        self._rollouts += 1
        if self.sync_latest_every and self._rollouts % self.sync_latest_every == 0:
            self._sync_latest_weights()
        self._flush_matches()
        self._log()

    def _on_training_end(self) -> None:
        for summary in self.episodes.collect(self.training_env, {}):  # any not yet drained
            self._record(summary)
        self._flush_matches()
        self._store_elo()

    # -- the self-play steps -----------------------------------------------------------------------
    def _record(self, summary: dict[str, Any]) -> None:
        """Count the episode's outcome; rate and record one match per opponent (per opposing
        team in a team game, see :func:`match_records`)."""
        self.outcomes.append(float(summary["outcome"]))
        for match in match_records(summary, self.learner_id, self.archive_step):
            opponent = match["player_b"]
            self.recent_opponents.append(opponent)
            if opponent != LATEST_ID:
                self.elo.update(self.learner_id, opponent, match["score_a"])
                if opponent != self.learner_id:
                    self.skill.update_pair(self.learner_id, opponent, match["score_a"])
            self._pending_matches.append(match)

    def _gate_open(self) -> bool:
        if self.win_rate_threshold is None:
            return True
        return bool(self.outcomes) and self.win_rate >= self.win_rate_threshold

    @property
    def archive_step(self) -> int:
        """The learner step recorded in the archive: ``num_timesteps`` plus, when a fresh model
        resumes an archive, the newest snapshot's step."""
        return int(self.num_timesteps) + self.step_offset

    @property
    def win_rate(self) -> float:
        """The learner's win rate over the rolling window of episodes (draws count as 0)."""
        outcomes = np.asarray(self.outcomes)
        return float((outcomes == 1.0).mean()) if len(outcomes) else 0.0

    @property
    def draw_rate(self) -> float:
        """The learner's draw rate over the rolling window of episodes."""
        outcomes = np.asarray(self.outcomes)
        return float((outcomes == 0.5).mean()) if len(outcomes) else 0.0

    def _save_snapshot(self) -> bool:
        """Save the learner; on a write failure stop training with a message (returns False)."""
        self._flush_matches()
        learner_elo = self.elo.rating(self.learner_id)
        skill, sigma = self.skill.display(self.learner_id)
        try:
            info = self.archive.save(
                self.model,
                step=self.archive_step,
                tags=self.tags,
                rating=learner_elo,
                ratings={"skill": skill, "skill_sigma": sigma},
            )
        except OSError as error:
            self.stop_reason = (
                f"Stopping training: saving a snapshot to {self.archive.path} failed ({error}). "
                "Every snapshot and match saved before is intact; free disk space or fix the "
                "directory's permissions, then resume with the same archive."
            )
            warnings.warn(self.stop_reason, RuntimeWarning, stacklevel=2)
            return False
        self.elo.ratings[info.id] = learner_elo
        self.skill.set_display(info.id, skill, sigma)
        self.snapshots_saved += 1
        self._last_save_step = self.num_timesteps
        self.outcomes.clear()
        if self.verbose:
            print(f"selfplay: saved {info.id} at step {info.step} (elo {learner_elo:.0f})")
        if self.training_env is not None:
            self.nash.after_save(self.training_env, self.logger, self.archive_step)
        return True

    def _sync_latest_weights(self) -> None:
        env = self.training_env
        if env is None:
            return
        self._send_learner_template(env)
        state = state_arrays(self.model.policy)  # as state_dict(), without its walk each time
        self._sync_version += 1
        try:
            env.env_method("sync_latest_weights", self._sync_version, state)
        except AttributeError:
            if not self._sync_warned:
                warnings.warn(
                    "The training env has no sync_latest_weights(); opponents will not see the "
                    "learner's latest weights. Build it from SelfPlayEnv or SelfPlayVecEnv.",
                    stacklevel=2,
                )
                self._sync_warned = True

    def _send_learner_template(self, env: Any) -> None:
        """Give envs whose learner has teammates (``SelfPlayEnv`` with ``teams=``) a copy of the
        learner's policy for them to play, once; later syncs bring its weights up to date."""
        from ..envs.vector.vec_env import SelfPlayVecEnv

        if isinstance(getattr(env, "unwrapped", env), SelfPlayVecEnv):
            return  # its learner plays every agent of its team: no teammates to send it to
        try:
            wants = env.get_attr("wants_learner_template")
        except Exception:  # noqa: BLE001 - envs without teammates have no such attribute
            return
        indices = [i for i, want in enumerate(wants) if want is True]
        if indices:
            env.env_method("set_learner_template", self.model.policy, indices=indices)

    def _flush_matches(self) -> None:
        if not self._pending_matches:
            return
        pending, self._pending_matches = self._pending_matches, []
        try:
            self.archive.record_matches(pending)
        except OSError as error:
            warnings.warn(f"Could not record {len(pending)} matches: {error}", stacklevel=2)
            self._pending_matches = pending + self._pending_matches
        self._store_elo()

    def _store_elo(self) -> None:
        # Only the keys this callback owns, merged into what is stored inside one transaction
        # (update_ratings): `sp-wrappers ratings` storing "bt" meanwhile keeps it, and this
        # write never puts back an "elo" read before another process changed it.
        updates = {}
        for info in self.archive.snapshots():
            if info.id in self.elo.ratings:
                ratings = {"elo": self.elo.ratings[info.id]}
                if info.id in self.bt_ratings:
                    ratings["bt"] = self.bt_ratings[info.id]
                updates[info.id] = ratings
            if info.id in self.skill:
                skill, sigma = self.skill.display(info.id)
                updates.setdefault(info.id, {}).update(skill=skill, skill_sigma=sigma)
        players = {
            name: {"elo": self.elo.ratings[name]} for name in self._fixed_players(self.elo.ratings)
        }
        for name in players:
            if name in self.skill:
                skill, sigma = self.skill.display(name)
                players[name].update(skill=skill, skill_sigma=sigma)
        try:
            if updates:
                self.archive.update_ratings(updates)
            if players:
                self.archive.set_player_ratings(players)
        except OSError as error:
            warnings.warn(f"Could not store ratings: {error}", stacklevel=2)

    def fit_ratings(self) -> Any:
        """Fit Bradley-Terry ratings over the archive's whole match history (and log them)."""
        self._flush_matches()
        snapshots = self.archive.snapshots()
        steps = sorted((info.step, info.id) for info in snapshots)
        # Streamed end to end (archive rows -> attributed games -> the fit's per-pair totals):
        # holding the whole history at once made every fit's peak memory, and with it the
        # trainer's RSS, which keeps its high-water mark, grow with the history.
        history = getattr(self.archive, "iter_matches", self.archive.matches)()
        games = iter_attributed_matches(history, steps, self.learner_id)
        first = next(games, None)
        if first is None:
            return None
        result = fit_bradley_terry(itertools.chain([first], games))
        self.bt_ratings = dict(result.ratings)
        # The newest snapshot that has played carries the learner's line (one saved a moment
        # ago has no games yet).
        rated = [sid for _, sid in reversed(steps) if sid in result.ratings]
        if rated:
            self.logger.record("selfplay/bt_rating", result.ratings[rated[0]])
            self.logger.record("selfplay/bt_std_error", result.std_errors[rated[0]])
        self._store_elo()
        return result

    def _log(self) -> None:
        record = self.logger.record
        record(self.elo_key, self.elo.rating(self.learner_id))
        self._log_skill()
        record("selfplay/win_rate", self.win_rate)
        record("selfplay/draw_rate", self.draw_rate)
        known = [self.elo.ratings[o] for o in self.recent_opponents if o in self.elo.ratings]
        if known:
            record("selfplay/opponent_elo_mean", float(np.mean(known)))
        record("selfplay/archive_size", len(self.archive))
        record("selfplay/snapshots", self.snapshots_saved)

    def _fits_weights_of(self, snapshot_id: str) -> bool:
        """Whether the model's parameters have the names and shapes of the snapshot's."""
        try:
            stored = self.archive.load_state_dict(snapshot_id)
        except CorruptSnapshotError:  # warned; the new snapshot becomes the template
            return False
        mine = self.model.policy.state_dict()
        return set(stored) == set(mine) and all(
            tuple(np.shape(stored[k])) == tuple(mine[k].shape) for k in mine
        )

    def _check_envs_draw_from_this_archive(self) -> None:
        """Warn when the envs' samplers read other archives than the one this callback fills
        (two paths in a config file that were meant to be one): the learner would never meet
        its own snapshots."""
        try:
            sources = self.training_env.get_attr("opponent_source")
        except Exception:  # noqa: BLE001 - an env without samplers: nothing to check
            return
        mine = self.archive.path.resolve()
        theirs = {
            source.archive.path.resolve()
            for source in sources
            if isinstance(getattr(source, "archive", None), SnapshotArchive)
        }
        if theirs and mine not in theirs:
            warnings.warn(
                f"SelfPlayCallback saves snapshots to {mine}, but the envs draw their opponents "
                f"from {', '.join(map(str, sorted(theirs)))}: the learner will not meet its own "
                "snapshots. Point both at the same archive (in an RL Zoo yaml: env_kwargs' "
                "archive and the callback's archive).",
                stacklevel=2,
            )

    def _check_archive_fits_model(self) -> None:
        check = getattr(self.archive, "check_compatible", None)
        if check is not None:
            check(self.model)
