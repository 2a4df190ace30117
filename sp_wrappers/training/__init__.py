"""The training layer: what runs inside ``model.learn``.

The self-play callback that snapshots the learner and rates it, budget schedules for learning in
chunks, k-opponent rollouts, environment generators (curricula, handicaps), strength measured
against reference players and exact exploitability while training, a learned best response (a
fresh learner trained against a frozen policy or mixture: a lower bound on exploitability), and
asymmetric self-play over teams.

It may import ``sp_wrappers.evaluation``, ``envs``, ``ratings``, ``opponents``, ``archive``,
``games`` and ``core``.
"""

from __future__ import annotations

from ..core.lazy import lazy_exports
from .best_response import BestResponseResult, learned_best_response
from .callbacks import SelfPlayCallback
from .env_generator import EnvGenerator, win_rates_by_config
from .env_history import ConfigResult, EnvHistory, GameConfig
from .errors import TeamChangeError
from .exploitability import ExploitabilityCallback, least_exploitable
from .k_opponents import EpisodeResult, KOpponentRecord, KOpponentRollouts, novelty_reward
from .schedules import BudgetSchedules
from .strength import StrengthCallback

__all__ = [
    "SelfPlayCallback",
    "BudgetSchedules",
    "KOpponentRollouts",
    "KOpponentRecord",
    "EpisodeResult",
    "novelty_reward",
    "EnvGenerator",
    "win_rates_by_config",
    "GameConfig",
    "EnvHistory",
    "ConfigResult",
    "StrengthCallback",
    "ExploitabilityCallback",
    "least_exploitable",
    "learned_best_response",
    "BestResponseResult",
    "TeamSelfPlay",
    "swap_steps",
    "make_team_vec_env",
    "TeamChangeError",
]

#: Team self-play loads on first use: a single-learner run never imports team code.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "TeamSelfPlay": ".team_selfplay",
        "swap_steps": ".team_selfplay",
        "make_team_vec_env": ".team_setup",
    },
)
