"""``TeamVecEnv``: the name of a :class:`~sp_wrappers.SelfPlayVecEnv` whose learner is a team.

A learner team's env is a ``SelfPlayVecEnv`` holding the team seating
(:class:`~sp_wrappers.envs.vector.team_seating.LearnerTeam`: one slot per team agent, one match
per game copy). ``TeamVecEnv`` adds no behaviour: it names such an env, requires ``teams=``, and
is what ``make_selfplay_vec_env(..., teams=...)`` builds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .vec_env import SelfPlayVecEnv

__all__ = ["TeamVecEnv"]


class TeamVecEnv(SelfPlayVecEnv):
    """A :class:`~sp_wrappers.SelfPlayVecEnv` whose learner is a team, one slot per team agent
    (see :mod:`sp_wrappers.envs.vector.team_seating`); built by
    ``make_selfplay_vec_env(..., teams=...)``.

    :param env_fn: a function returning a fresh PettingZoo game (see ``SelfPlayVecEnv``).
    :param args: ``SelfPlayVecEnv``'s other arguments in its order (``n_envs``, ``learner``: a
        team, ``opponent``: also ``{team: source}``, ...), or as keywords in ``kwargs``.
    :param teams: ``"prefix"`` or ``{team: [agent, ...]}`` (see :class:`~sp_wrappers.TeamLayout`):
        ``learner`` names a team and each of its agents is its own slot (parameter sharing), so
        ``num_envs == n_envs * team_size``, slot ``g * team_size + k`` being agent ``k`` in game
        copy ``g`` (``n_games == n_envs``); ``opponent`` may be ``{team: source}``.

    >>> import numpy as np
    >>> from mpe2 import simple_tag_v3
    >>> env = TeamVecEnv(
    ...     lambda: simple_tag_v3.env(max_cycles=5, continuous_actions=False),
    ...     n_envs=2, learner="adversary", teams="prefix")
    >>> type(env).__name__, env.num_envs, env.n_games, env.team_size
    ('TeamVecEnv', 6, 2, 3)
    >>> env.reset().shape
    (6, 16)
    >>> for _ in range(5):
    ...     obs, rewards, dones, infos = env.step(np.zeros(6, dtype=np.int64))
    >>> dones.tolist() == [True] * 6, infos[0]["selfplay"]["opponent_teams"]
    (True, {'agent': 'random'})
    >>> env.close()
    """

    def __init__(
        self, env_fn: Callable[..., Any], *args: Any, teams: Any = None, **kwargs: Any
    ) -> None:
        if teams is None:
            raise ValueError(
                "TeamVecEnv needs teams='prefix' or {team: [agent, ...]}; for a learner that plays "
                "one seat use SelfPlayVecEnv."
            )
        self.teams = teams
        super().__init__(env_fn, *args, **kwargs)
