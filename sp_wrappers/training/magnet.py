"""A magnet regulariser for on-policy SB3 learners: self-play that settles instead of cycling.

Plain self-play in imperfect-information games (Kuhn, Leduc poker) cycles: each policy is beaten
by the next and the learner never settles on an equilibrium. Regularised learning dynamics fix
this (magnetic mirror descent, Sokota et al. 2023; R-NaD, Perolat et al. 2022; NashPG, Yu et al.
2025): a penalty pulls the policy toward a *magnet* policy, and the magnet is refreshed to the
current policy every so often, so the regularised game's fixed points walk toward a Nash
equilibrium.

:class:`MagnetCallback` is R-NaD's reward transform as an SB3 callback. At the end of each rollout
it subtracts ``kl * (log pi(a|s) - log magnet(a|s))`` for the action taken from every step's reward
(its mean over the policy's actions is ``KL(pi || magnet)``; the state's whole KL would not change
which action the learner prefers there), then corrects the returns and advantages the algorithm
has already computed. GAE is linear in the rewards, so the correction is exact and needs no new
value estimate: the change of the advantage at step ``t`` is the penalty there plus
``gamma * gae_lambda`` times the change at ``t + 1`` within the same episode (the bootstrap value
at the rollout's end does not change). Every ``refresh`` updates (or learner steps) the magnet
becomes the current policy, or the mixture of the ``average`` most recent ones.

It works with every on-policy learner whose rollout buffer is SB3's ``RolloutBuffer``: PPO, A2C,
TRPO and MaskablePPO, whose action masks the magnet uses too (an illegal move has no probability
under either policy). RecurrentPPO is refused: its magnet would need its own LSTM states.

:class:`MagnetSettings` is what ``config.json`` holds (``"magnet"``) and what ``sp-wrappers train
--magnet kl=0.05,refresh=20`` parses. The magnet's weights are saved beside the model
(:data:`MAGNET_STATE`, format :data:`MAGNET_FORMAT_VERSION`) each time the run writes its
checkpoint, so ``--resume`` restores exactly the magnet that the checkpoint trained against.

>>> MagnetSettings.parse("kl=0.05,refresh=20")
MagnetSettings(kl=0.05, refresh=20, unit='updates', average=1)
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.utils import obs_as_tensor

from ..core.policy_families import constructor_parameters
from ..core.run_layout import MAGNET_NAME
from ..core.save_util import atomic_write
from .errors import MagnetError

__all__ = [
    "MagnetSettings",
    "MagnetCallback",
    "MAGNET_STATE",
    "MAGNET_FORMAT_VERSION",
    "MAGNET_UNITS",
    "read_magnet_state",
]

#: The magnet's file in a run directory (its members' weights; see :meth:`MagnetCallback.save`).
MAGNET_STATE = MAGNET_NAME
MAGNET_FORMAT_VERSION = 1
#: What ``refresh`` counts: policy updates (rollouts) or learner steps.
MAGNET_UNITS = ("updates", "steps")
#: States kept in the file: the newest checkpoint's and the one before (see ``save``).
_KEPT_STATES = 2
#: Observations evaluated per forward pass of a magnet member.
_CHUNK = 4096


@dataclass(frozen=True)
class MagnetSettings:
    """The magnet's settings, as ``config.json``'s ``"magnet"`` holds them.

    :param kl: the KL strength ``eta``: each step's reward loses
        ``kl * (log pi(a|s) - log magnet(a|s))`` (a reward of the game's scale, per step).
    :param refresh: how often the magnet becomes the current policy, in ``unit``.
    :param unit: ``"updates"`` (policy updates, one per rollout) or ``"steps"`` (learner steps).
    :param average: the magnet is the mixture of the ``average`` most recent refreshed policies
        (their probabilities averaged); 1: the policy of the last refresh.

    >>> MagnetSettings.parse("kl=0.1,refresh=50000,unit=steps,average=3").to_json()
    {'kl': 0.1, 'refresh': 50000, 'unit': 'steps', 'average': 3}
    """

    kl: float
    refresh: int
    unit: str = "updates"
    average: int = 1

    def __post_init__(self) -> None:
        if not (isinstance(self.kl, int | float) and math.isfinite(self.kl) and self.kl >= 0):
            raise MagnetError(f"`magnet` kl must be a number >= 0, got kl={self.kl!r}.")
        for key in ("refresh", "average"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise MagnetError(
                    f"`magnet` {key} must be a whole number >= 1, got {key}={value!r}."
                )
        if self.unit not in MAGNET_UNITS:
            raise MagnetError(
                f"`magnet` unit must be one of {', '.join(MAGNET_UNITS)}, got unit={self.unit!r}."
            )

    @classmethod
    def parse(cls, text: str) -> MagnetSettings:
        """Settings from ``"kl=0.05,refresh=20"`` (``unit`` and ``average`` optional)."""
        fields: dict[str, Any] = {}
        for pair in (p.strip() for p in str(text).split(",")):
            key, sep, raw = pair.partition("=")
            key = key.strip()
            if not sep or key not in ("kl", "refresh", "unit", "average"):
                raise MagnetError(
                    f"`magnet` takes kl=ETA,refresh=N[,unit=updates|steps][,average=K], got "
                    f"{text!r}."
                )
            fields[key] = raw.strip() if key == "unit" else _number(key, raw.strip(), text)
        missing = [key for key in ("kl", "refresh") if key not in fields]
        if missing:
            raise MagnetError(
                f"`magnet` needs {' and '.join(f'{m}=' for m in missing)} (e.g. "
                f"kl=0.05,refresh=20), got {text!r}."
            )
        return cls(**fields)

    @classmethod
    def from_json(cls, data: Any) -> MagnetSettings:
        """Settings from ``config.json``'s object, a string :meth:`parse` reads, or settings."""
        if isinstance(data, MagnetSettings):
            return data
        if isinstance(data, str):
            return cls.parse(data)
        if not isinstance(data, Mapping) or not {"kl", "refresh"} <= set(data):
            raise MagnetError(
                f"`magnet` must be an object with kl and refresh (or the text "
                f"kl=0.05,refresh=20), got {data!r}."
            )
        unknown = sorted(set(data) - {"kl", "refresh", "unit", "average"})
        if unknown:
            raise MagnetError(
                f"`magnet` has unknown settings {', '.join(unknown)}; it takes kl, refresh, unit "
                "and average."
            )
        return cls(**dict(data))

    def to_json(self) -> dict[str, Any]:
        """The object ``config.json`` stores."""
        return asdict(self)


def _number(key: str, raw: str, text: str) -> float | int:
    try:
        value = float(raw)
    except ValueError:
        raise MagnetError(
            f"`magnet` {key} must be a number, got {key}={raw!r} in {text!r}."
        ) from None
    if key != "kl" and value.is_integer():
        return int(value)
    return value


class MagnetCallback(BaseCallback):
    """Pull an on-policy learner toward a magnet policy that is refreshed to the learner's own.

    Add it to ``model.learn``'s callbacks. At each rollout's end it subtracts
    ``kl * (log pi(a|s) - log magnet(a|s))`` from every step's reward and corrects the buffer's
    returns and advantages (exactly: GAE is linear in the rewards); it logs the rollout's mean of
    ``log pi(a|s) - log magnet(a|s)`` as ``magnet/kl`` (an estimate of ``KL(pi || magnet)``) and
    the refreshes as ``magnet/refreshes``.

    :param kl: the KL strength (see :class:`MagnetSettings`).
    :param refresh: how often the magnet becomes the current policy, in ``unit``.
    :param unit: ``"updates"`` (rollouts) or ``"steps"`` (learner steps).
    :param average: the magnet mixes the ``average`` most recent refreshed policies.
    :param state_path: the magnet's file (:data:`MAGNET_STATE` in a run directory): when it
        exists at the start of ``learn``, the magnet is restored from its state at the model's
        ``num_timesteps`` (a resumed run); :meth:`save` writes it.
    :param verbose: SB3's verbosity.

    >>> from sb3_contrib import MaskablePPO
    >>> from sp_wrappers import SelfPlayVecEnv
    >>> from pettingzoo.classic import tictactoe_v3
    >>> venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2)
    >>> model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, seed=0)
    >>> magnet = MagnetCallback(kl=0.05, refresh=2)
    >>> _ = model.learn(128, callback=magnet)
    >>> magnet.updates, magnet.refreshes, math.isfinite(magnet.last_kl)
    (2, 1, True)
    """

    def __init__(
        self,
        kl: float,
        refresh: int,
        unit: str = "updates",
        average: int = 1,
        state_path: str | os.PathLike[str] | None = None,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        self.settings = MagnetSettings(kl, refresh, unit, average)
        self.state_path = Path(state_path) if state_path is not None else None
        #: The magnet's members, newest last (copies of the learner's policy, frozen).
        self.members: list[Any] = []
        #: Refreshes so far (the first magnet, the initial policy, is not one).
        self.refreshes = 0
        #: Policy updates (rollouts) regularised so far.
        self.updates = 0
        #: Updates or steps (``unit``) since the last refresh.
        self.since = 0
        #: The last rollout's mean ``log pi(a|s) - log magnet(a|s)`` (NaN before the first).
        self.last_kl = math.nan
        #: The last rollout's penalties, ``kl * (log pi - log magnet)``, shaped (n_steps, n_envs).
        self.last_penalty: np.ndarray | None = None

    @classmethod
    def from_settings(
        cls, settings: MagnetSettings | Mapping[str, Any] | str, **kwargs: Any
    ) -> MagnetCallback:
        """A callback from :class:`MagnetSettings` (or what :meth:`MagnetSettings.from_json`
        reads); ``kwargs`` go to the constructor (``state_path``, ``verbose``)."""
        s = MagnetSettings.from_json(settings)
        return cls(s.kl, s.refresh, s.unit, s.average, **kwargs)

    # -- SB3's hooks -------------------------------------------------------------------------

    def _init_callback(self) -> None:
        model = self.model
        if not isinstance(model, OnPolicyAlgorithm):
            raise MagnetError(
                f"The magnet regularises on-policy learners (PPO, A2C, TRPO, MaskablePPO); "
                f"{type(model).__name__} is not one. Drop `magnet` or pick one of those."
            )
        buffer = model.rollout_buffer
        if type(buffer).__name__.startswith("Recurrent") or not isinstance(buffer, RolloutBuffer):
            raise MagnetError(
                f"The magnet does not work with {type(model).__name__} yet (its magnet would need "
                "its own recurrent states); use ppo or maskable_ppo, or drop `magnet`."
            )
        if self.members:
            return  # a second learn call goes on with the same magnet
        if self.state_path is not None and self.state_path.is_file():
            self._restore(self.state_path, int(model.num_timesteps))
        else:
            self.members = [self._frozen_copy()]

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        buffer = self.model.rollout_buffer
        log_pi = np.asarray(buffer.log_probs, dtype=np.float64)
        log_magnet = self.magnet_log_prob(
            buffer.observations, buffer.actions, getattr(buffer, "action_masks", None)
        )
        gap = log_pi - log_magnet
        penalty = (self.settings.kl * gap).astype(np.float32)
        self._penalise(buffer, penalty)
        self.last_penalty = penalty
        self.last_kl = float(gap.mean())
        self.updates += 1
        self.since += 1 if self.settings.unit == "updates" else int(penalty.size)
        if self.since >= self.settings.refresh:
            self.refresh()
        self.logger.record("magnet/kl", self.last_kl)
        self.logger.record("magnet/refreshes", self.refreshes)

    # -- the magnet --------------------------------------------------------------------------

    def refresh(self) -> None:
        """Make the current policy the magnet's newest member (the oldest beyond ``average``
        leaves)."""
        self.members.append(self._frozen_copy())
        del self.members[: -self.settings.average]
        self.refreshes += 1
        self.since = 0

    def magnet_log_prob(
        self, observations: Any, actions: np.ndarray, action_masks: np.ndarray | None = None
    ) -> np.ndarray:
        """``log magnet(a|s)`` of ``actions`` in ``observations``, as a rollout buffer holds them
        (leading axes ``(n_steps, n_envs)``); with ``action_masks`` the members' distributions
        are masked as MaskablePPO's (an illegal move has probability 0).

        :return: an array of the leading axes' shape (float64).
        """
        lead = np.shape(actions)[:2]
        flat_obs = _flatten(observations)
        flat_actions = np.asarray(actions).reshape(-1, *np.shape(actions)[2:])
        masks = (
            None
            if action_masks is None
            else np.asarray(action_masks).reshape(int(np.prod(lead)), -1)
        )
        n = flat_actions.shape[0]
        out = np.empty(n, dtype=np.float64)
        for start in range(0, n, _CHUNK):
            part = slice(start, min(start + _CHUNK, n))
            per_member = [
                self._log_prob(m, _index(flat_obs, part), flat_actions[part], masks, part)
                for m in self.members
            ]
            stacked = th.stack(per_member).double()
            out[part] = (th.logsumexp(stacked, 0) - math.log(len(per_member))).cpu().numpy()
        return out.reshape(lead)

    def _log_prob(self, member: Any, obs: Any, actions: np.ndarray, masks: Any, part: slice) -> Any:
        device = member.device
        with th.no_grad():
            tensor = obs_as_tensor(obs, device)
            if masks is not None:
                dist = member.get_distribution(tensor, action_masks=masks[part])
            else:
                dist = member.get_distribution(tensor)
            acts = th.as_tensor(actions, device=device)
            if isinstance(self.model.action_space, spaces.Discrete):
                acts = acts.long().flatten()
            return dist.log_prob(acts)

    def _frozen_copy(self) -> Any:
        """A new policy of the learner's class holding a copy of its weights (rebuilt rather
        than deep-copied: a policy after an update holds tensors of the autograd graph)."""
        policy = self.model.policy
        member = type(policy)(**constructor_parameters(policy)).to(policy.device)
        member.load_state_dict(policy.state_dict())
        member.optimizer = None  # never trained: no optimizer state to carry
        member.set_training_mode(False)
        member.requires_grad_(False)
        return member

    def _penalise(self, buffer: RolloutBuffer, penalty: np.ndarray) -> None:
        """Subtract ``penalty`` from the rewards and correct the advantages and returns that
        ``compute_returns_and_advantage`` already computed: the change of GAE's advantage at
        ``t`` is ``-penalty[t] + gamma * lambda * (1 - episode_start[t + 1]) * change[t + 1]``
        (the last step's bootstrap value is unchanged, so its change is its own penalty)."""
        buffer.rewards -= penalty
        discount = buffer.gamma * buffer.gae_lambda
        change = np.zeros_like(penalty[0])
        for t in reversed(range(buffer.buffer_size)):
            if t == buffer.buffer_size - 1:
                change = -penalty[t]
            else:
                change = -penalty[t] + discount * (1.0 - buffer.episode_starts[t + 1]) * change
            buffer.advantages[t] += change
            buffer.returns[t] += change

    # -- the state file ----------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the magnet at the model's ``num_timesteps`` to ``path`` (default: ``state_path``),
        keeping the state saved before it: call it just before the model's checkpoint is written,
        so that whenever the run is cut off, the file holds the state at the checkpoint's step.

        :return: the file written.
        """
        target = Path(path) if path is not None else self.state_path
        if target is None:
            raise MagnetError("MagnetCallback.save needs a path (or the callback's state_path).")
        states = read_magnet_state(target)["states"] if target.is_file() else []
        step = int(self.model.num_timesteps)
        mine = {
            "step": step,
            "refreshes": self.refreshes,
            "updates": self.updates,
            "since": self.since,
            "members": [
                {k: v.detach().cpu().clone() for k, v in m.state_dict().items()}
                for m in self.members
            ],
        }
        states = [s for s in states if s["step"] != step][-(_KEPT_STATES - 1) :] + [mine]
        atomic_write(target, _encode(states, self.settings))
        return target

    def _restore(self, path: Path, step: int) -> None:
        stored = read_magnet_state(path)
        state = next((s for s in stored["states"] if s["step"] == step), None)
        if state is None:
            steps = ", ".join(str(s["step"]) for s in stored["states"])
            raise MagnetError(
                f"{path} holds the magnet at steps {steps}, not at the model's step {step:,d}; it "
                "belongs to another checkpoint. Resume the run whose model.zip it was saved with, "
                "or delete the file to start the magnet afresh from the learner."
            )
        members = []
        for weights in state["members"][-self.settings.average :]:
            member = self._frozen_copy()
            member.load_state_dict(weights)
            members.append(member)
        self.members = members
        self.refreshes, self.updates, self.since = (
            state["refreshes"],
            state["updates"],
            state["since"],
        )


def _flatten(observations: Any) -> Any:
    if isinstance(observations, Mapping):
        return {k: _flatten(v) for k, v in observations.items()}
    array = np.asarray(observations)
    return array.reshape(-1, *array.shape[2:])


def _index(observations: Any, part: slice) -> Any:
    if isinstance(observations, Mapping):
        return {k: v[part] for k, v in observations.items()}
    return observations[part]


def _encode(states: Sequence[Mapping[str, Any]], settings: MagnetSettings) -> bytes:
    from safetensors.torch import save

    tensors: dict[str, th.Tensor] = {}
    index = []
    for k, state in enumerate(states):
        for m, weights in enumerate(state["members"]):
            for name, tensor in weights.items():
                tensors[f"{k}/{m}/{name}"] = tensor.contiguous()
        index.append({key: state[key] for key in ("step", "refreshes", "updates", "since")})
        index[-1]["members"] = len(state["members"])
    meta = {
        "format_version": MAGNET_FORMAT_VERSION,
        "settings": settings.to_json(),
        "states": index,
    }
    return save(tensors, metadata={"magnet": json.dumps(meta)})


def read_magnet_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The magnet file at ``path``: ``{"format_version", "settings", "states": [{"step",
    "refreshes", "updates", "since", "members": [state_dict, ...]}, ...]}``, oldest state first.

    :raises MagnetError: the file cannot be read or was written by another format.
    """
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {})["magnet"])
            version = meta.get("format_version")
            if version != MAGNET_FORMAT_VERSION:
                raise MagnetError(
                    f"{path} is a magnet state of format {version!r}; this version reads "
                    f"{MAGNET_FORMAT_VERSION}. Install the sp_wrappers version that wrote it, or "
                    "delete the file to start the magnet afresh."
                )
            names = list(f.keys())
            states = []
            for k, entry in enumerate(meta["states"]):
                members = []
                for m in range(int(entry["members"])):
                    prefix = f"{k}/{m}/"
                    members.append(
                        {n[len(prefix) :]: f.get_tensor(n) for n in names if n.startswith(prefix)}
                    )
                states.append({**entry, "members": members})
    except MagnetError:
        raise
    except (OSError, KeyError, ValueError, TypeError, SafetensorError) as error:
        raise MagnetError(
            f"Cannot read the magnet state {path} ({error}); delete it to start the magnet afresh "
            "from the learner."
        ) from None
    return {"format_version": version, "settings": meta.get("settings"), "states": states}
