"""Schedules that follow a whole training budget across chunked ``learn`` calls.

SB3 computes a schedule's ``progress_remaining`` against the end of the current ``learn`` call:
``1 - num_timesteps / (steps at the call's start + its total_timesteps)``. A run that learns in
chunks (``model.learn(chunk, reset_num_timesteps=False)``, as :class:`~sp_wrappers.TeamSelfPlay`
and the league do) would see every schedule (a ``"lin_..."`` learning rate, a clip range, DQN's
exploration rate) fall to its end value at the end of *every* chunk. :class:`BudgetSchedules`,
passed to each chunk's ``learn``, rescales the progress every schedule sees to the whole budget:
``progress_remaining = 1 - num_timesteps / budget`` (never below 0), so the curve runs once over
the run, and a resumed run (whose model holds its ``num_timesteps``) continues it.

Every callable hyperparameter SB3 and sb3-contrib read through ``_current_progress_remaining``
is covered (:func:`schedule_attributes`: ``lr_schedule``, ``clip_range``, ``clip_range_vf``,
``exploration_schedule``, ``delta_std_schedule`` and any other ``*_schedule`` attribute or SB3
schedule object). The wrappers are removed when the chunk ends, and a model saved during a chunk
stores SB3's own schedule (a :class:`BudgetSchedule` pickles as the schedule it wraps).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import ConstantSchedule, FloatSchedule, LinearSchedule

__all__ = ["BudgetSchedules", "BudgetSchedule", "schedule_attributes"]

#: Schedule attributes of SB3 / sb3-contrib algorithms that are not named ``*_schedule``.
_NAMED = ("clip_range", "clip_range_vf")
_SCHEDULE_TYPES = (FloatSchedule, LinearSchedule, ConstantSchedule)


class BudgetSchedule:
    """One SB3 schedule seen over a whole budget instead of one ``learn`` call.

    SB3 calls it with the progress of the current call, whose horizon is ``call_end`` (the
    model's ``num_timesteps`` at the call's end); it calls ``schedule`` with the progress over
    ``budget`` (the model's ``num_timesteps`` at the end of the whole run).

    :param schedule: the SB3 schedule (``progress_remaining -> value``).
    :param budget: the ``num_timesteps`` at which the schedule reaches its end (learner steps).
    :param call_end: the ``num_timesteps`` the current ``learn`` call ends at (learner steps).

    >>> schedule = BudgetSchedule(lambda progress: 3e-4 * progress, budget=300, call_end=200)
    >>> round(schedule(0.5), 8)  # SB3: 100 of this call's 200 steps; 100 of 300 in the budget
    0.0002
    """

    def __init__(self, schedule: Callable[[float], float], budget: int, call_end: int) -> None:
        if budget < 1 or call_end < 1:
            raise ValueError(
                f"budget and call_end must be positive learner steps, got {budget} and {call_end}."
            )
        self.schedule = schedule
        self.budget = int(budget)
        self.call_end = int(call_end)

    def __call__(self, progress_remaining: float) -> float:
        steps = (1.0 - float(progress_remaining)) * self.call_end
        return self.schedule(max(0.0, 1.0 - steps / self.budget))

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        # Unpickles as (a copy of) the wrapped schedule: a model saved mid-chunk stores SB3's
        # own schedule and loads without sp_wrappers.
        return copy.copy, (self.schedule,)

    def __repr__(self) -> str:
        return f"BudgetSchedule({self.schedule!r}, budget={self.budget}, call_end={self.call_end})"


def schedule_attributes(model: Any) -> list[str]:
    """The names of the model's attributes that SB3 calls with ``progress_remaining``.

    :param model: an SB3 model.

    >>> from stable_baselines3 import PPO
    >>> schedule_attributes(PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64))
    ['clip_range', 'lr_schedule']
    """
    names = []
    for name, value in vars(model).items():
        if not callable(value) or isinstance(value, type):
            continue
        if name in _NAMED or name.endswith("_schedule") or isinstance(value, _SCHEDULE_TYPES):
            names.append(name)
        elif isinstance(value, BudgetSchedule):
            names.append(name)
    return sorted(names)


class BudgetSchedules(BaseCallback):
    """An SB3 callback that makes every schedule of the model follow ``budget`` learner steps
    during the ``learn`` call it is passed to (see the module docstring).

    Pass a new one (or the same one) to every chunk: ``model.learn(chunk, callback=[...,
    BudgetSchedules(budget)], reset_num_timesteps=False)``. ``budget`` is the model's
    ``num_timesteps`` at the end of the whole run (for a resumed model, counted since the run
    began); steps past it see progress 0 (the schedule's end value).

    :param budget: the learner steps over which the schedules run, counted in the model's
        ``num_timesteps``.

    >>> from stable_baselines3 import PPO
    >>> model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=64, n_epochs=1,
    ...             learning_rate=lambda progress: 1e-3 * progress)
    >>> for _ in range(3):
    ...     _ = model.learn(64, callback=BudgetSchedules(192), reset_num_timesteps=False)
    ...     print(round(model.policy.optimizer.param_groups[0]["lr"] / 1e-3, 3))
    0.667
    0.333
    0.0
    """

    def __init__(self, budget: int) -> None:
        super().__init__()
        if int(budget) < 1:
            raise ValueError(f"budget must be a positive number of learner steps, got {budget!r}.")
        self.budget = int(budget)
        self._wrapped: list[str] = []

    def _on_training_start(self) -> None:
        call_end = int(self.model._total_timesteps)  # set by SB3's _setup_learn for this call
        self._wrapped = []
        for name in schedule_attributes(self.model):
            schedule = getattr(self.model, name)
            if isinstance(schedule, BudgetSchedule):
                schedule = schedule.schedule
            setattr(self.model, name, BudgetSchedule(schedule, self.budget, max(1, call_end)))
            self._wrapped.append(name)

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        for name in self._wrapped:
            schedule = getattr(self.model, name)
            if isinstance(schedule, BudgetSchedule):
                setattr(self.model, name, schedule.schedule)
        self._wrapped = []
