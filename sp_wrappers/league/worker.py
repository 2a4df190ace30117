"""One learning player of a league: its SB3 model, its env, and one chunk of learning at a time.

A worker runs wherever the backend puts it (this process, a child process, a Ray actor on another
node) and never touches the league's directory: everything it needs arrives in a
:class:`ChunkPlan` (opponent probabilities, the weights of opponents it has not seen, whether to
reset) and everything the league needs leaves in a :class:`ChunkResult` (match records, its new
weights, its model file as bytes). Weights travel as ``{name: numpy array}`` plus the JSON policy
spec the archive uses, so a Ray object store or a pipe carries them and the driver writes them.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from ..training.episode_feed import EpisodeFeed
from ..training.schedules import BudgetSchedules
from .errors import LeagueSetupError

__all__ = [
    "PlayerWorker",
    "ChunkPlan",
    "ChunkResult",
    "MatchmakingSource",
    "LeagueSetupError",
    "LEAGUE_SOURCE",
]

LEAGUE_SOURCE = "league"


@dataclass
class ChunkPlan:
    """What a player does next.

    :param steps: learner steps to learn for (``model.learn(steps, reset_num_timesteps=False)``).
    :param opponents: ``{opponent id: probability}``; one opponent is drawn per episode.
    :param weights: ``{opponent id: (version, policy spec, state dict of numpy arrays)}`` for
        opponents the worker does not hold at that version yet.
    :param reset: put the player back to its initial weights and optimizer state first (and
        empty an off-policy learner's replay buffer).
    :param seed: seeds the per-episode opponent draws of this chunk.
    :param schedule_steps: the player's ``num_timesteps`` at the end of the league: every SB3
        schedule of its model (learning rate, clip range, ...) runs once over the player's whole
        budget, not over each chunk (:class:`~sp_wrappers.training.schedules.BudgetSchedules`);
        ``None``: SB3's per-call progress.
    :param trusted_classes: classes (``"module:QualName"``) the league's own learners' policies
        use (the user's ``make_model`` built them), trusted whatever their module when the
        opponents are rebuilt from their specs (a custom features extractor needs no
        ``trusted_modules``: see :class:`~sp_wrappers.SnapshotArchive`).
    """

    steps: int
    opponents: dict[str, float]
    weights: dict[str, tuple[str, dict[str, Any], dict[str, np.ndarray]]] = field(
        default_factory=dict
    )
    reset: bool = False
    seed: int | None = None
    schedule_steps: int | None = None
    trusted_classes: tuple[str, ...] = ()


@dataclass
class ChunkResult:
    """What a chunk of learning gave: its games (match dicts for the archive), the player's new
    weights, its model file (SB3 zip as bytes, for resume) and timing."""

    name: str
    steps: int
    matches: list[dict[str, Any]]
    weights: dict[str, np.ndarray]
    model_zip: bytes
    seconds: float
    learn_seconds: float
    node: str = ""


class MatchmakingSource:
    """An opponent source for :class:`~sp_wrappers.SelfPlayVecEnv`: one draw per episode from
    fixed probabilities over policies.

    >>> from sp_wrappers import RandomPolicy
    >>> import numpy as np
    >>> source = MatchmakingSource({"a": RandomPolicy(policy_id="a")}, {"a": 1.0})
    >>> source.draw(np.random.default_rng(0)).policy_id
    'a'
    """

    swap_every = 1
    swap_unit = "episodes"

    def __init__(
        self,
        policies: Mapping[str, Any],
        probabilities: Mapping[str, float],
        seed: int | None = None,
    ) -> None:
        ids = [i for i, p in probabilities.items() if p > 0]
        missing = [i for i in ids if i not in policies]
        if missing:
            raise KeyError(f"No weights for opponents {missing}; the driver must send them.")
        p = np.array([probabilities[i] for i in ids], dtype=np.float64)
        if not len(ids) or p.sum() <= 0:
            raise ValueError(
                f"Opponent probabilities must have positive mass, got {probabilities}."
            )
        self.ids = ids
        self.probabilities = p / p.sum()
        self.policies = {i: policies[i] for i in ids}
        self.rng = np.random.default_rng(seed)

    def draw(self, rng: np.random.Generator | None = None) -> Any:
        # The source's own generator (seeded by the plan), so draws do not depend on the env's.
        index = int(self.rng.choice(len(self.ids), p=self.probabilities))
        return self.policies[self.ids[index]]


class _RecordGames(BaseCallback):
    """Collects every finished episode's ``info["selfplay"]`` as a match dict (drained from the
    env, so every learner's games count, ARS's too)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.matches: list[dict[str, Any]] = []
        self.episodes = EpisodeFeed()

    def _on_training_start(self) -> None:
        self.episodes.start(self.training_env)

    def _on_step(self) -> bool:
        self._record(self.episodes.collect(self.training_env, self.locals))
        return True

    def _on_training_end(self) -> None:
        self._record(self.episodes.collect(self.training_env, {}))

    def _record(self, summaries: list[dict[str, Any]]) -> None:
        from ..training.callbacks import match_records

        step = int(self.num_timesteps)
        for summary in summaries:
            self.matches += match_records(summary, self.name, step, source=LEAGUE_SOURCE)


def _state_numpy(policy: Any) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in policy.state_dict().items()}


class PlayerWorker:
    """One learning player: builds its env and model, learns chunk by chunk.

    :param name: the player's name (its match records' ``player_a``).
    :param env_fn: returns a fresh PettingZoo env.
    :param make_model: ``make_model(vec_env)`` returns a fresh SB3 model on that env.
    :param n_envs: game copies in the player's :class:`~sp_wrappers.SelfPlayVecEnv`.
    :param seed: seeds the env copies.
    :param model_zip: a saved model (bytes of SB3's zip) to resume from.
    :param initial_zip: the initial model (bytes) that resets return to; default: the fresh one.
    :param steps: the learner steps taken before (restored into ``num_timesteps``).
    :param torch_threads: torch threads for this player (``None`` leaves torch's default).
    :param vec_env_kwargs: more :class:`~sp_wrappers.SelfPlayVecEnv` arguments.
    :param trusted_modules: module prefixes whose classes the opponents' policy specs may name
        (the league's: see :class:`~sp_wrappers.league.League`).
    :param magnet: the player learns with a magnet regulariser of these settings
        (:class:`~sp_wrappers.training.magnet.MagnetSettings`), kept across its chunks and
        started afresh at a reset; ``None``: none.
    """

    def __init__(
        self,
        name: str,
        env_fn: Callable[[], Any],
        make_model: Callable[[Any], Any],
        n_envs: int = 4,
        seed: int | None = None,
        model_zip: bytes | None = None,
        initial_zip: bytes | None = None,
        steps: int = 0,
        torch_threads: int | None = 1,
        vec_env_kwargs: Mapping[str, Any] | None = None,
        trusted_modules: Sequence[str] = (),
        magnet: Mapping[str, Any] | None = None,
    ) -> None:
        import torch

        from ..core.policies import RandomPolicy
        from ..envs.vector.factory import make_selfplay_vec_env

        if torch_threads is not None:
            torch.set_num_threads(int(torch_threads))
        self.name = name
        self.trusted_modules = tuple(trusted_modules)
        self.venv = make_selfplay_vec_env(
            env_fn, n_envs=n_envs, seed=seed, opponent=RandomPolicy(), **dict(vec_env_kwargs or {})
        )
        self.model = make_model(self.venv)
        self._check_model_fits()
        if initial_zip is not None:
            self.model.set_parameters(io.BytesIO(initial_zip), exact_match=True)
        self.initial_zip = initial_zip if initial_zip is not None else self._zip()
        self.initial_weights = _state_numpy(self.model.policy)
        if model_zip is not None:
            self.model.set_parameters(io.BytesIO(model_zip), exact_match=True)
        self.model.num_timesteps = int(steps)
        self._opponents: dict[str, tuple[str, Any]] = {}
        self.magnet_settings = magnet
        self.magnet = self._new_magnet()

    def _new_magnet(self) -> Any:
        """A magnet that starts from the player's weights at its next ``learn``."""
        if self.magnet_settings is None:
            return None
        from ..training.magnet import MagnetCallback

        return MagnetCallback.from_settings(self.magnet_settings)

    def _check_model_fits(self) -> None:
        from ..archive.spaces import spaces_match

        model_obs = getattr(self.model, "observation_space", None)
        model_act = getattr(self.model, "action_space", None)
        if model_obs is None or not hasattr(self.model, "learn"):
            raise LeagueSetupError(
                f"make_model returned {type(self.model).__name__}, not an SB3 model. Return e.g. "
                "MaskablePPO('MlpPolicy', env) built on the env make_model receives."
            )
        env_obs, env_act = self.venv.observation_space, self.venv.action_space
        if not (spaces_match(model_obs, env_obs) and spaces_match(model_act, env_act)):
            raise LeagueSetupError(
                f"make_model built a model for observation space {model_obs} and action space "
                f"{model_act}, but the game gives {env_obs} and {env_act}. Build the model on the "
                "env that make_model receives: make_model=lambda env: PPO('MlpPolicy', env)."
            )

    def _zip(self) -> bytes:
        buffer = io.BytesIO()
        self.model.save(buffer)
        return buffer.getvalue()

    def describe(self) -> dict[str, Any]:
        """The player's policy spec, current and initial weights, initial model zip and rollout
        size (:meth:`rollout`)."""
        from ..archive.policy_spec import policy_spec

        return {
            "name": self.name,
            "spec": policy_spec(self.model.policy),
            "weights": _state_numpy(self.model.policy),
            "initial_weights": self.initial_weights,
            "initial_zip": self.initial_zip,
            "algo": type(self.model).__name__,
            "rollout": self.rollout(),
            "node": _node_id(),
        }

    def rollout(self) -> int:
        """The learner steps the model learns at a time: ``n_steps x n_envs`` for an on-policy
        learner, which learns whole rollouts; 1 for others."""
        from ..training.team_setup import rollout_sizes

        return rollout_sizes({self.name: self.model}).get(self.name, 1)

    def node(self) -> str:
        """Where this worker runs: its Ray node id, else ``host:pid`` (a readiness probe)."""
        return _node_id()

    def _opponent_policy(
        self, opponent: str, spec: dict[str, Any], state: Mapping, trusted_classes: Sequence[str]
    ) -> Any:
        import torch

        from ..archive.policy_spec import TRUSTED_MODULES, build_policy
        from ..core.policies import SB3Policy

        extra = tuple(m for m in self.trusted_modules if m not in TRUSTED_MODULES)
        policy = build_policy(
            spec, TRUSTED_MODULES + extra, device="cpu", trusted_classes=trusted_classes
        )
        policy.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
        policy.set_training_mode(False)
        for parameter in policy.parameters():
            parameter.requires_grad_(False)
        return SB3Policy(policy, policy_id=opponent, device="cpu", copy_weights=False)

    def train_chunk(self, plan: ChunkPlan) -> ChunkResult:
        """Learn ``plan.steps`` steps against ``plan.opponents`` and report."""
        start = time.perf_counter()
        if plan.reset:
            self.model.set_parameters(io.BytesIO(self.initial_zip), exact_match=True)
            # an off-policy learner (DQN, SAC, ...) starts over from an empty replay buffer too:
            # games against its former opponents would pull it back to what the reset undid
            buffer = getattr(self.model, "replay_buffer", None)
            if buffer is not None:
                buffer.reset()
            self.magnet = self._new_magnet()  # the magnet of the weights it was reset to
        for opponent, (version, spec, state) in plan.weights.items():
            policy = self._opponent_policy(opponent, spec, state, plan.trusted_classes)
            self._opponents[opponent] = (version, policy)
        wanted = {o for o, p in plan.opponents.items() if p > 0}
        self._opponents = {o: v for o, v in self._opponents.items() if o in wanted}
        policies = {o: policy for o, (_, policy) in self._opponents.items()}
        source = MatchmakingSource(policies, plan.opponents, seed=plan.seed)
        self.venv.env_method("set_opponent", source)
        recorder = _RecordGames(self.name)
        learn_start = time.perf_counter()
        # SB3 resets the env at the first learn (so no episode is played against the placeholder
        # opponent); later chunks go on with the episodes in progress, which keep their opponent.
        callbacks: list[BaseCallback] = [recorder]
        if self.magnet is not None:
            callbacks.append(self.magnet)
        if plan.schedule_steps is not None:
            callbacks.append(BudgetSchedules(max(1, int(plan.schedule_steps))))
        self.model.learn(plan.steps, callback=callbacks, reset_num_timesteps=False)
        learn_seconds = time.perf_counter() - learn_start
        return ChunkResult(
            name=self.name,
            steps=int(self.model.num_timesteps),
            matches=recorder.matches,
            weights=_state_numpy(self.model.policy),
            model_zip=self._zip(),
            seconds=time.perf_counter() - start,
            learn_seconds=learn_seconds,
            node=_node_id(),
        )

    def close(self) -> None:
        self.venv.close()


def _node_id() -> str:
    """The Ray node this runs on inside a Ray actor, else the host and process id (Ray is only
    looked up when already imported: the league imports it in its backend only)."""
    ray = sys.modules.get("ray")
    try:
        if ray is not None and ray.is_initialized():
            return str(ray.get_runtime_context().get_node_id())
    except Exception:  # noqa: BLE001 - not in a worker: fall back
        pass
    return f"{os.uname().nodename}:{os.getpid()}"
