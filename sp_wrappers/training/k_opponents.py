"""k-opponent rollouts: each update plays k archive snapshots and learns from its outcome vector.

At the start of every rollout the callback draws ``k`` distinct opponents from the archive (the
newest ``window`` snapshots, uniformly or by PFSP, plus the learner's own weights with probability
``latest_ratio``) and gives opponent ``j`` to the ``j``-th block of ``n_envs / k`` env copies for
the whole rollout. At the end of the rollout it builds the outcome vector (the learner's mean
outcome and mean return against each opponent, over the rollout's finished episodes against it),
asks ``reward_fn(record, history)`` for a reward, writes that reward into SB3's rollout buffer as a
sparse reward at the last step of every finished episode, and recomputes returns and advantages
with SB3's own ``compute_returns_and_advantage``. PPO, A2C and MaskablePPO then learn from it::

    PPO/A2C collect_rollouts:  on_rollout_start ─► draw k opponents ─► env_method("set_opponent")
                               on_step (n_steps) ─► note each finished episode (buffer row, env)
                               compute_returns_and_advantage (SB3)
                               on_rollout_end ─► outcome vector ─► reward_fn ─► rewrite rewards
                                                ─► compute_returns_and_advantage again
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from ..archive.store import as_archive
from ..core.state_file import Int, List, Num, Obj, Optional, SnapshotId, StateFormat
from ..opponents.sampler import LATEST_ID, PFSP_DECAY, OpponentSampler

__all__ = [
    "KOpponentRollouts",
    "KOpponentRecord",
    "EpisodeResult",
    "novelty_reward",
    "REWARD_MODES",
    "HISTORY_FORMAT_VERSION",
    "K_HISTORY_FORMAT",
]

REWARD_MODES = ("replace", "add")
HISTORY_FORMAT_VERSION = 1
HISTORY_NAME = "k_opponent_history.json"


def _check_records(data: Mapping[str, Any], refuse: Callable[[str, str], Exception]) -> None:
    """Each record holds one opponent, outcome, return and count per slot."""
    for index, record in enumerate(data["records"]):
        lengths = {len(record[key]) for key in ("opponents", "outcomes", "returns", "counts")}
        if len(lengths) != 1:
            raise refuse(
                f"records[{index}]",
                "holds opponents, outcomes, returns and counts of different lengths",
            )


#: ``k_opponent_history.json``: one reader, one writer (:class:`~sp_wrappers.core.state_file.
#: StateFormat`).
K_HISTORY_FORMAT = StateFormat(
    HISTORY_NAME,
    HISTORY_FORMAT_VERSION,
    Obj(
        {
            "k": Int(min=1),
            "records": List(
                Obj(
                    {
                        "rollout": Int(min=0),
                        "step": Int(min=0),
                        "opponents": List(SnapshotId(also=(LATEST_ID,))),
                        "outcomes": List(Optional(Num(min=0, max=1))),
                        "returns": List(Optional(Num())),
                        "counts": List(Int(min=0)),
                    }
                )
            ),
        }
    ),
    fix="restore it from a backup, delete it to start a new history, or pass history_path to "
    "use another file",
    checks=(_check_records,),
)

RewardFn = Callable[["KOpponentRecord", Sequence["KOpponentRecord"]], Any]


@dataclass(frozen=True)
class EpisodeResult:
    """One learner episode that finished during the rollout.

    :param row: the rollout-buffer row (step index within the rollout) of its last step.
    :param env: the env copy it was played in.
    :param opponent: the opponent's id as ``info["selfplay"]["opponent"]`` reported it.
    :param slot: which of the ``k`` opponents it counts for, or ``None`` when it was played against
        another opponent (an episode begun before the rollout's opponents took over).
    :param outcome: 1 win, 0.5 draw, 0 loss.
    :param game_return: the learner's return from the game.
    :param counted: whether it counts towards the outcome vector. On a team vector env every
        teammate's slot finishes its own episode (and gets the rollout's reward), but a game
        counts once: only its first slot, which carries the match record, is counted.
    """

    row: int
    env: int
    opponent: str
    slot: int | None
    outcome: float
    game_return: float
    counted: bool = True


@dataclass
class KOpponentRecord:
    """What one rollout against ``k`` opponents gave: read by ``reward_fn`` and other callbacks.

    ``outcomes[j]`` and ``returns[j]`` are the learner's mean outcome and mean return against
    ``opponents[j]`` over ``counts[j]`` finished episodes; they are ``nan`` (and ``missing[j]`` is
    true) when no episode against that opponent finished in the rollout.
    """

    rollout: int
    step: int
    opponents: list[str]
    outcomes: np.ndarray
    returns: np.ndarray
    counts: np.ndarray
    episodes: list[EpisodeResult] = field(default_factory=list)
    reward: float | np.ndarray | None = None

    @property
    def missing(self) -> np.ndarray:
        """Which opponents had no finished episode (their entries are ``nan``)."""
        return self.counts == 0

    @property
    def episode_returns(self) -> np.ndarray:
        """Every finished episode's own game return, in rollout order (one per ``episodes``)."""
        return np.array([e.game_return for e in self.episodes], dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        """The part kept in the saved history (no per-episode rows)."""
        return {
            "rollout": self.rollout,
            "step": self.step,
            "opponents": list(self.opponents),
            "outcomes": [_json_float(v) for v in self.outcomes],
            "returns": [_json_float(v) for v in self.returns],
            "counts": [int(c) for c in self.counts],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KOpponentRecord:
        def floats(key: str) -> np.ndarray:
            return np.array([np.nan if v is None else float(v) for v in data[key]], np.float64)

        return cls(
            rollout=int(data["rollout"]),
            step=int(data["step"]),
            opponents=[str(o) for o in data["opponents"]],
            outcomes=floats("outcomes"),
            returns=floats("returns"),
            counts=np.array([int(c) for c in data["counts"]], dtype=np.int64),
        )


def _team_size(venv: Any) -> int:
    """Slots per game copy of ``venv`` (a team vector env's ``team_size``, through wrappers)."""
    try:
        size = venv.team_size  # VecEnvWrapper (VecMonitor, VecNormalize) forwards it
    except AttributeError:
        return 1
    return max(int(size), 1) if isinstance(size, int | np.integer) else 1


def _json_float(value: float) -> float | None:
    return None if not math.isfinite(float(value)) else float(value)


def novelty_reward(k_nearest: int = 5, by: str = "opponent", scale: float = 1.0) -> RewardFn:
    """A ``reward_fn`` that pays for results unlike earlier ones (novelty search).

    The reward of a rollout is ``scale`` times the mean distance from its outcome vector to the
    ``k_nearest`` nearest outcome vectors of earlier rollouts (0 when there is no earlier one to
    compare with). Distances are root-mean-square differences over the entries both vectors have:

    - ``by="opponent"``: entries are matched by opponent id, so rollouts that drew different
      snapshots compare over the opponents they share (rollouts sharing none are skipped);
    - ``by="slot"``: entries are compared position by position (use it when every rollout plays
      the same k opponents, e.g. ``window=k`` and ``latest_ratio=0``).

    :param k_nearest: how many nearest earlier vectors to average over.
    :param by: ``"opponent"`` or ``"slot"``.
    :param scale: multiplies the distance.

    >>> import numpy as np
    >>> def rec(o):
    ...     return KOpponentRecord(0, 0, ["a", "b"], np.array(o, float), np.zeros(2), np.ones(2))
    >>> reward = novelty_reward(k_nearest=1)
    >>> reward(rec([1.0, 0.0]), [])
    0.0
    >>> reward(rec([1.0, 0.0]), [rec([0.0, 0.0]), rec([1.0, 1.0])])
    0.7071067811865476
    """
    if k_nearest < 1:
        raise ValueError(f"k_nearest must be at least 1, got {k_nearest!r}.")
    if by not in ("opponent", "slot"):
        raise ValueError(f"by must be 'opponent' or 'slot', got {by!r}.")

    def distance(a: KOpponentRecord, b: KOpponentRecord) -> float | None:
        if by == "slot":
            if len(a.outcomes) != len(b.outcomes):
                return None
            x, y = a.outcomes, b.outcomes
        else:
            shared = [o for o in a.opponents if o in b.opponents]
            x = np.array([a.outcomes[a.opponents.index(o)] for o in shared])
            y = np.array([b.outcomes[b.opponents.index(o)] for o in shared])
        both = np.isfinite(x) & np.isfinite(y)
        if not both.any():
            return None
        return float(np.sqrt(np.mean((x[both] - y[both]) ** 2)))

    def reward(record: KOpponentRecord, history: Sequence[KOpponentRecord]) -> float:
        distances = sorted(d for d in (distance(record, h) for h in history) if d is not None)
        if not distances:
            return 0.0
        return scale * float(np.mean(distances[:k_nearest]))

    reward.__name__ = f"novelty_reward(k_nearest={k_nearest}, by={by!r})"
    return reward


class KOpponentRollouts(BaseCallback):
    """Play every rollout against ``k`` snapshots and learn from a reward made of the results.

    Use it with a :class:`~sp_wrappers.SelfPlayVecEnv` (or any VecEnv of ``SelfPlayEnv``) whose
    ``n_envs`` (game copies) is a multiple of ``k``, an on-policy learner (PPO, A2C, MaskablePPO)
    and, usually,
    a :class:`~sp_wrappers.SelfPlayCallback` on the same archive, which saves the snapshots and
    records every game in the archive's match history as usual. Opponents change at each env
    copy's next episode start, so episodes begun before the rollout finish against their old
    opponent: they get the rollout's reward but do not count towards the outcome vector.
    On a team vector env (``make_selfplay_vec_env(..., teams=...)``, one slot per teammate) each
    opponent's block is whole game copies, every teammate's slot gets the reward of its game's
    episode, and each game counts once in the outcome vector.

    :param archive: the :class:`~sp_wrappers.SnapshotArchive` (or its directory) to draw from.
    :param k: opponents per rollout (distinct snapshots, drawn without replacement).
    :param reward_fn: ``reward_fn(record, history)`` returning one number for the rollout or one
        per finished episode (``len(record.episodes)``), e.g. :func:`novelty_reward`.
    :param mode: ``"replace"`` the game's rewards (only value bootstrapping of truncated episodes
        is kept) or ``"add"`` the new reward to them.
    :param window: draw from the newest ``window`` snapshots (``None``: all).
    :param latest_ratio: probability that one of the k opponents is the learner's own weights at
        the rollout's start (as ``OpponentSampler``'s latest model).
    :param strategy: ``"uniform"`` or ``"pfsp"`` over the window (as ``OpponentSampler``).
    :param pfsp_weighting: ``"hard"`` or ``"variance"``.
    :param pfsp_decay: how fast old results fade from PFSP win rates (as ``OpponentSampler``).
    :param learner_id: the learner's name in the match history (for PFSP win rates).
    :param history_size: how many earlier rollouts ``history`` keeps (oldest dropped first).
    :param history_path: JSON file the history is saved to after every rollout and read from at
        construction, so a resumed run keeps it (default: ``k_opponent_history.json`` in the
        archive directory); ``False`` keeps it in memory only.
    :param deterministic: whether snapshot opponents take their most likely action.
    :param seed: seeds the opponent draws.
    :param verbose: 1 prints each rollout's outcome vector.

    After every rollout ``last_record`` holds the :class:`KOpponentRecord` (also appended to
    ``history``) and ``kopp/*`` keys go to SB3's logger.

    >>> import tempfile
    >>> from sb3_contrib import MaskablePPO
    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers import SelfPlayVecEnv, SnapshotArchive
    >>> archive = SnapshotArchive(tempfile.mkdtemp())
    >>> venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4)
    >>> model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, seed=0)
    >>> for step in (0, 1):
    ...     _ = archive.save(model, step=step)
    >>> kopp = KOpponentRollouts(archive, k=2, reward_fn=novelty_reward(), latest_ratio=0.0)
    >>> _ = model.learn(256, callback=kopp)
    >>> sorted(kopp.last_record.opponents), len(kopp.history)
    (['snapshot-0000', 'snapshot-0001'], 2)
    """

    def __init__(
        self,
        archive: Any,
        k: int,
        reward_fn: RewardFn,
        mode: str = "replace",
        window: int | None = None,
        latest_ratio: float = 0.0,
        strategy: str = "uniform",
        pfsp_weighting: str = "hard",
        pfsp_decay: float = PFSP_DECAY,
        learner_id: str = "learner",
        history_size: int = 1000,
        history_path: str | os.PathLike[str] | None | bool = None,
        deterministic: bool = False,
        seed: int | None = None,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k must be a positive number of opponents, got {k!r}.")
        if mode not in REWARD_MODES:
            raise ValueError(f"mode must be one of {REWARD_MODES}, got {mode!r}.")
        if not callable(reward_fn):
            raise TypeError(
                f"reward_fn must be a function reward_fn(record, history), got {reward_fn!r}; "
                "e.g. novelty_reward()."
            )
        if history_size < 1:
            raise ValueError(f"history_size must be at least 1, got {history_size!r}.")
        self.archive = as_archive(archive, owner="KOpponentRollouts(archive=...)")
        # the sampler supplies the window, latest share and PFSP probabilities; the draw without
        # replacement is ours
        self.sampler = OpponentSampler(
            self.archive,
            window=window,
            latest_ratio=latest_ratio,
            strategy=strategy,
            pfsp_weighting=pfsp_weighting,
            pfsp_decay=pfsp_decay,
            learner_id=learner_id,
            deterministic=deterministic,
        )
        self.k = int(k)
        self.reward_fn = reward_fn
        self.mode = mode
        self.rng = np.random.default_rng(seed)
        if history_path is None:
            history_path = self.archive.path / HISTORY_NAME
        self.history_path = Path(history_path) if history_path is not False else None
        self.history: deque[KOpponentRecord] = deque(maxlen=int(history_size))
        self.last_record: KOpponentRecord | None = None
        self._latest: Any = None
        self._assigned: list[str] = []
        self._ids: list[str] = []
        self._finished: list[tuple[int, int, dict[str, Any], bool]] = []
        self._team_size = 1
        self._game_rewards: np.ndarray | None = None
        if self.history_path is not None and self.history_path.exists():
            self._load_history(self.history_path)

    # -- SB3 hooks ---------------------------------------------------------------------------------
    def _init_callback(self) -> None:
        from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

        if not isinstance(self.model, OnPolicyAlgorithm):
            raise TypeError(
                f"KOpponentRollouts rewrites the rewards of an on-policy rollout buffer, but "
                f"{type(self.model).__name__} is off-policy (its replay buffer mixes many "
                "updates). Use PPO, A2C or MaskablePPO."
            )
        n_envs = self.training_env.num_envs
        self._team_size = _team_size(self.training_env)
        n_games = n_envs // self._team_size
        if n_games % self.k:
            # a block that split a game copy would give one copy two opponents (the last wins)
            slots = ""
            if self._team_size > 1:
                slots = (
                    f" ({n_games} game copies of {self._team_size} team slots each: each "
                    "opponent's block must be whole game copies)"
                )
            suggestion = self.k * max(1, round(n_games / self.k))
            raise ValueError(
                f"n_envs={n_games} is not a multiple of k={self.k}{slots}: each opponent needs "
                f"the same number of env copies. Use n_envs={suggestion} or pick k dividing "
                "n_envs."
            )
        self._game_rewards = np.zeros((self.model.n_steps, n_envs), dtype=np.float32)

    def _on_rollout_start(self) -> None:
        ids = self._draw()
        per_opponent = self.training_env.num_envs // self.k
        self._ids = ids
        self._assigned = [ids[i // per_opponent] for i in range(self.training_env.num_envs)]
        for j, opponent_id in enumerate(ids):
            policy = self._policy(opponent_id)
            indices = list(range(j * per_opponent, (j + 1) * per_opponent))
            try:
                self.training_env.env_method("set_opponent", policy, indices=indices)
            except AttributeError as error:
                raise TypeError(
                    "KOpponentRollouts needs a training env whose copies have set_opponent(); "
                    "build it with SelfPlayVecEnv (or a VecEnv of SelfPlayEnv)."
                ) from error
        self._finished = []

    def _on_step(self) -> bool:
        row = self.model.rollout_buffer.pos
        # copied before SB3 adds value bootstrapping of truncated episodes in place
        self._game_rewards[row] = self.locals["rewards"]
        infos = self.locals["infos"]
        size = self._team_size
        for env, (done, info) in enumerate(zip(self.locals["dones"], infos, strict=True)):
            if not done:
                continue
            if "selfplay" in info:
                self._finished.append((row, env, info["selfplay"], True))
            elif size > 1:  # a teammate's slot: its game's record is on the copy's first slot
                first = infos[env - env % size]
                if "selfplay" in first:
                    self._finished.append((row, env, first["selfplay"], False))
        return True

    def _on_rollout_end(self) -> None:
        record = self._record()
        history = list(self.history)
        reward = self.reward_fn(record, history)
        per_episode = self._per_episode(reward, record)
        self._rewrite(record, per_episode)
        record.reward = reward if np.ndim(reward) else float(reward)
        self.history.append(record)
        self.last_record = record
        if self.history_path is not None:
            self._save_history(self.history_path)
        self._log(record, per_episode)

    # -- opponents ---------------------------------------------------------------------------------
    def _draw(self) -> list[str]:
        candidates = self.sampler.eligible_ids()
        take_latest = self.rng.random() < self.sampler.latest_ratio
        n_snapshots = self.k - int(take_latest)
        if len(candidates) < n_snapshots:
            window = "" if self.sampler.window is None else f" within window={self.sampler.window}"
            raise ValueError(
                f"KOpponentRollouts needs k={self.k} distinct opponents, but the archive "
                f"{self.archive.path} holds {len(candidates)} snapshot(s){window}. Save at least "
                f"{n_snapshots} snapshots before training (e.g. a short run of plain self-play "
                "with SelfPlayCallback), lower k, or widen the window."
            )
        probabilities = self.sampler.snapshot_probabilities(candidates)
        picked = self.rng.choice(len(candidates), size=n_snapshots, replace=False, p=probabilities)
        # archive order (oldest first, the latest weights last): copy blocks are stable
        ids = [candidates[i] for i in sorted(picked)]
        return ids + [LATEST_ID] if take_latest else ids

    def _policy(self, opponent_id: str) -> Any:
        if opponent_id != LATEST_ID:
            return self.archive.load_policy(opponent_id, deterministic=self.sampler.deterministic)
        from ..core.policies import SB3Policy

        if self._latest is None:
            self._latest = SB3Policy(
                self.model.policy, self.sampler.deterministic, policy_id=LATEST_ID
            )
        else:
            self._latest.load_state_dict(self.model.policy.state_dict())
        return self._latest

    # -- the outcome vector and the reward ---------------------------------------------------------
    def _record(self) -> KOpponentRecord:
        k = self.k
        sums, returns, counts = np.zeros(k), np.zeros(k), np.zeros(k, dtype=np.int64)
        episodes = []
        for row, env, summary, counted in self._finished:
            opponent = str(summary.get("opponent"))
            slot = self._ids.index(opponent) if opponent == self._assigned[env] else None
            episode = EpisodeResult(
                row=row,
                env=env,
                opponent=opponent,
                slot=slot,
                outcome=float(summary["outcome"]),
                game_return=float(summary.get("return", 0.0)),
                counted=counted,
            )
            episodes.append(episode)
            if slot is not None and counted:
                sums[slot] += episode.outcome
                returns[slot] += episode.game_return
                counts[slot] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            outcomes = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
            mean_returns = np.where(counts > 0, returns / np.maximum(counts, 1), np.nan)
        return KOpponentRecord(
            rollout=self.history[-1].rollout + 1 if self.history else 0,
            step=int(self.num_timesteps),
            opponents=list(self._ids),
            outcomes=outcomes,
            returns=mean_returns,
            counts=counts,
            episodes=episodes,
        )

    def _per_episode(self, reward: Any, record: KOpponentRecord) -> np.ndarray:
        n = len(record.episodes)
        values = np.asarray(reward, dtype=np.float64)
        if values.ndim == 0:
            return np.full(n, float(values))
        if values.shape != (n,):
            raise ValueError(
                f"reward_fn returned an array of shape {values.shape}, but this rollout has {n} "
                "finished episode(s): return one number for the rollout or one per episode "
                "(len(record.episodes))."
            )
        if not np.all(np.isfinite(values)):
            raise ValueError(f"reward_fn returned non-finite rewards: {values.tolist()}.")
        return values

    def _rewrite(self, record: KOpponentRecord, per_episode: np.ndarray) -> None:
        import torch
        from stable_baselines3.common.utils import obs_as_tensor

        buffer = self.model.rollout_buffer
        if self.mode == "replace":
            # keep only what SB3 added for truncated episodes (gamma * V(terminal observation))
            buffer.rewards[:] = buffer.rewards - self._game_rewards[: buffer.buffer_size]
        for episode, value in zip(record.episodes, per_episode, strict=True):
            buffer.rewards[episode.row, episode.env] += value
        with torch.no_grad():
            last_values = self.model.policy.predict_values(
                obs_as_tensor(self.model._last_obs, self.model.device)
            )
        buffer.compute_returns_and_advantage(
            last_values=last_values, dones=np.asarray(self.model._last_episode_starts)
        )

    # -- history on disk and logs ------------------------------------------------------------------
    def _save_history(self, path: Path) -> None:
        data = {"k": self.k, "records": [r.to_json() for r in self.history]}
        K_HISTORY_FORMAT.write(path, data, indent=None)

    def _load_history(self, path: Path) -> None:
        ids = [info.id for info in self.archive.snapshots(include_pruned=True)]
        data = K_HISTORY_FORMAT.read(path, snapshots=ids)
        self.history.extend(KOpponentRecord.from_json(r) for r in data["records"])

    def _log(self, record: KOpponentRecord, per_episode: np.ndarray) -> None:
        finite = record.outcomes[np.isfinite(record.outcomes)]
        self.logger.record("kopp/outcome_mean", float(finite.mean()) if finite.size else np.nan)
        for j in range(self.k):
            self.logger.record(f"kopp/outcome_{j}", float(record.outcomes[j]))
            self.logger.record(f"kopp/return_{j}", float(record.returns[j]))
            self.logger.record(f"kopp/games_{j}", int(record.counts[j]))
        self.logger.record("kopp/missing", int(record.missing.sum()))
        self.logger.record("kopp/reward_mean", float(per_episode.mean()) if len(per_episode) else 0)
        self.logger.record("kopp/opponents", ",".join(record.opponents), exclude=("tensorboard",))
        if self.verbose:
            vector = ", ".join(
                f"{o}: {v:.2f}" for o, v in zip(record.opponents, record.outcomes, strict=True)
            )
            print(f"rollout {record.rollout} step {record.step}: [{vector}] reward {record.reward}")
