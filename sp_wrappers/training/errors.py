"""The training layer's errors: training settings that cannot work together.

Each derives from :class:`~sp_wrappers.core.errors.SpWrappersError` and keeps its built-in base.

>>> from sp_wrappers.training.errors import TeamChangeError
>>> error = TeamChangeError("red", 100, n_steps=64, num_envs=2, fits=128)
>>> flag = error.for_flag("--team-change ")
>>> "Pass team_change=128" in str(error), "--team-change 128" in str(flag)
(True, True)
"""

from __future__ import annotations

from ..core.errors import SpWrappersError

__all__ = ["TeamChangeError", "MagnetError"]


class TeamChangeError(SpWrappersError, ValueError):
    """``team_change`` is shorter than a team's rollout, which an on-policy learner collects whole.

    :param team: the team whose rollout is longer.
    :param team_change: the learner steps per turn asked for.
    :param n_steps: the team model's ``n_steps``.
    :param num_envs: the team model's env slots.
    :param fits: a ``team_change`` that fits every team's rollout.
    :param name: how the user sets it (``team_change=`` in Python, ``--team-change`` on the
        command line); :meth:`for_flag` rewrites the message.
    """

    def __init__(
        self,
        team: str,
        team_change: int,
        n_steps: int,
        num_envs: int,
        fits: int,
        name: str = "team_change=",
    ) -> None:
        self.team, self.team_change, self.fits = team, int(team_change), int(fits)
        self.n_steps, self.num_envs, self.name = int(n_steps), int(num_envs), name
        rollout = self.n_steps * self.num_envs
        super().__init__(
            f"{name}{self.team_change} is shorter than the rollout of team {team!r}'s model: "
            f"n_steps={self.n_steps} x {self.num_envs} env slots = {rollout} learner steps, "
            f"which it collects whole in every turn, so each turn would run {rollout} steps "
            f"instead of {self.team_change}. Pass {name}{self.fits} (a multiple of every team's "
            "rollout keeps turns exact), or lower n_steps (or the number of env copies)."
        )

    def for_flag(self, flag: str) -> TeamChangeError:
        """The same error naming ``flag`` (e.g. ``"--team-change "``)."""
        return TeamChangeError(
            self.team, self.team_change, self.n_steps, self.num_envs, self.fits, flag
        )


class MagnetError(SpWrappersError, ValueError):
    """Magnet settings that cannot work (a bad ``kl``, ``refresh``, ``unit`` or ``average``, a
    learner the magnet cannot regularise) or a magnet state file that cannot be read; the message
    names the fix."""
