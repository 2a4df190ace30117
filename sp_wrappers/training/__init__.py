"""The training layer: what runs inside ``model.learn``.

The self-play callback that snapshots the learner and rates it, budget schedules for learning in
chunks, k-opponent rollouts, environment generators (curricula, handicaps), strength measured
against reference players while training, and asymmetric self-play over teams.

It may import ``sp_wrappers.evaluation``, ``envs``, ``ratings``, ``opponents``, ``archive``,
``games`` and ``core``.
"""

from __future__ import annotations

from ..core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".callbacks": ["SelfPlayCallback"],
        ".schedules": ["BudgetSchedules"],
        ".k_opponents": ["KOpponentRollouts", "KOpponentRecord", "EpisodeResult", "novelty_reward"],
        ".env_generator": ["EnvGenerator", "win_rates_by_config"],
        ".env_history": ["GameConfig", "EnvHistory", "ConfigResult"],
        ".strength": ["StrengthCallback"],
        ".team_selfplay": ["TeamSelfPlay", "swap_steps"],
        ".team_setup": ["make_team_vec_env"],
        ".errors": ["TeamChangeError"],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
