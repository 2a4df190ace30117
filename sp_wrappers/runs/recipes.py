"""Per-game training recipes: tuned defaults for ``sp-wrappers train``.

A recipe is everything a run needs besides the game: the algorithm and its hyperparameters, the
opponent sampler's settings (:class:`~sp_wrappers.OpponentSampler`), the snapshot interval, the
number of environment copies and the default training budget. Every value is plain JSON, so a
recipe is written as-is into the run's ``config.json``. A learning rate may be a number or
``"lin_<rate>"`` (decays linearly to 0 over the run, the RL Baselines3 Zoo notation); a
``policy_kwargs`` class (``features_extractor_class``) is named by its import path
``"module:Class"`` (:data:`BOARD_EXTRACTOR` for :class:`~sp_wrappers.core.networks.BoardExtractor`).

Games without a recipe, and registered games trained with another ``--algo``, get the generic
recipe of the algorithm (:data:`GENERIC`): SB3's defaults plus self-play settings that are a
reasonable start. How each tuned recipe was measured is in ``benchmarks/strength.py``.

>>> recipe = recipe_for("tictactoe_v3")
>>> recipe.algo, recipe.sampler["random_ratio"]
('maskable_ppo', 0.2)
>>> recipe_for("tictactoe_v3", algo="ppo").tuned
False
>>> recipe_for("my.module:env", algo="dqn").hyperparams["learning_rate"]
0.0001
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..games.registry import QUADRAPONG_TEAMS, same_game
from ..opponents.settings import SamplerSettings
from .algos import ALGOS, BOX_ONLY, DISCRETE_ONLY, OFF_POLICY, fit_to_budget, installed_algos

__all__ = [
    "Recipe",
    "RECIPES",
    "GENERIC",
    "ALGOS",
    "OFF_POLICY",
    "DISCRETE_ONLY",
    "BOX_ONLY",
    "installed_algos",
    "recipe_for",
    "fit_to_budget",
    "linear_schedule",
    "BOARD_EXTRACTOR",
    "GO",
    "KUHN_POKER",
    "LEDUC_POKER",
]

#: The import path of :class:`~sp_wrappers.core.networks.BoardExtractor`, as recipes and
#: ``--hp 'policy_kwargs={"features_extractor_class": ...}'`` name it.
BOARD_EXTRACTOR = "sp_wrappers.core.networks:BoardExtractor"
#: Go's game name for ``sp-wrappers train`` (an import path: Go is not a registered game).
GO = "pettingzoo.classic.go_v5:env"
#: OpenSpiel's Kuhn and Leduc poker for ``sp-wrappers train`` (import paths: not registered
#: games; through ``openspiel_env``, Leduc observing its information state).
KUHN_POKER = "sp_wrappers.games.openspiel_games:kuhn_poker"
LEDUC_POKER = "sp_wrappers.games.openspiel_games:leduc_poker"

_POKER_NOTE = (
    "The figures are pending measurement: benchmarks/exploitability.py measures exploitability "
    "over wall time per opponent strategy and seed (docs/benchmarks.md). "
)


#: The sampler settings a recipe may set, with OpponentSampler's defaults (``random_ratio`` is the
#: probability of a fixed ``RandomPolicy`` opponent; ``reference_ratio`` that of the game's
#: reference bots, e.g. minimax for tic-tac-toe, which makes the run no longer pure self-play;
#: ``deterministic`` makes snapshot opponents take their most likely action).
SAMPLER_DEFAULTS: dict[str, Any] = SamplerSettings().to_json()


@dataclass(frozen=True)
class Recipe:
    """Tuned defaults for one game (every field is plain JSON).

    :param algo: a key of :data:`ALGOS`.
    :param hyperparams: keyword arguments of the algorithm's constructor (``policy_kwargs``
        included); ``learning_rate`` may be ``"lin_<rate>"``.
    :param sampler: :class:`~sp_wrappers.OpponentSampler` settings (keys of ``SAMPLER_DEFAULTS``).
    :param timesteps: default training budget in learner steps.
    :param n_envs: environment copies stepped together.
    :param save_every: snapshot interval in learner steps.
    :param learner: the learner's seat mode (``"random"``, ``"alternate"`` or an agent name).
    :param game_kwargs: keyword arguments of the game's constructor.
    :param eval_games: end-of-run games against each reference opponent.
    :param draw_reward: added to the learner's reward for a drawn game (see
        :class:`~sp_wrappers.DrawReward`); 0 leaves the game's rewards as they are.
    :param tuned: whether the values were tuned for this game (else the generic ones).
    :param notes: how the recipe was measured, what it reaches.
    :param teams: the game's teams (``"prefix"`` or ``{team: [agent, ...]}``, see
        :attr:`~sp_wrappers.games.registry.GameSpec.teams`); when set, ``sp-wrappers train`` trains
        one learner per team with :class:`~sp_wrappers.training.team_selfplay.TeamSelfPlay` and
        ``timesteps`` and ``save_every`` count each team's own learner steps.
    :param team_change: with ``teams``: learner steps of the learning team before the next team
        learns (ML-Agents' ``team_change``).
    :param symmetries: ``"auto"`` plays every learner episode in a random symmetric view of the
        board (``SelfPlayVecEnv(symmetries="auto")``); ``None``: the real view only.
    :param strength_every: learner steps between the strength evaluations of ``sp-wrappers
        train`` against the game's ladder (games with reference players only; see
        :class:`~sp_wrappers.training.strength.StrengthCallback`); ``None``: a tenth of the run
        (none in runs shorter than 50,000 steps); ``0``: none.
    :param magnet: the magnet regulariser's settings (``{"kl", "refresh", "unit", "average"}``,
        see :class:`~sp_wrappers.training.magnet.MagnetSettings`); ``None``: none.
    """

    algo: str
    hyperparams: Mapping[str, Any]
    sampler: Mapping[str, Any] = field(default_factory=lambda: dict(SAMPLER_DEFAULTS))
    timesteps: int = 200_000
    n_envs: int = 8
    save_every: int = 20_000
    learner: str = "random"
    game_kwargs: Mapping[str, Any] = field(default_factory=dict)
    eval_games: int = 100
    draw_reward: float = 0.0
    tuned: bool = False
    notes: str = ""
    teams: str | Mapping[str, Any] | None = None
    team_change: int | None = None
    symmetries: str | None = None
    strength_every: int | None = None
    magnet: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A deep, JSON-ready copy."""
        return copy.deepcopy(asdict(self))


def _sampler(**overrides: Any) -> dict[str, Any]:
    unknown = set(overrides) - set(SAMPLER_DEFAULTS)
    if unknown:  # pragma: no cover - a typo in this file
        raise KeyError(f"unknown sampler settings {sorted(unknown)}")
    return {**SAMPLER_DEFAULTS, **overrides}


#: PPO's generic hyperparameters; MaskablePPO takes the same ones.
_PPO_GENERIC: dict[str, Any] = {
    "n_steps": 256,
    "batch_size": 256,
    "n_epochs": 10,
    "learning_rate": 3e-4,
    "ent_coef": 0.01,
    "gamma": 0.99,
    "policy_kwargs": {"net_arch": [128, 128]},
}

#: The generic hyperparameters of the continuous-action off-policy learners (SAC, TD3, DDPG, TQC,
#: CrossQ): SB3's defaults with a replay buffer and warm-up fit for self-play budgets.
_CONTINUOUS_GENERIC: dict[str, Any] = {
    "learning_rate": 3e-4,
    "buffer_size": 100_000,
    "learning_starts": 1_000,
    "batch_size": 256,
    "train_freq": 1,
    "gradient_steps": 1,
    "gamma": 0.99,
    "policy_kwargs": {"net_arch": [256, 256]},
}

#: Generic recipes by algorithm: SB3's defaults with a larger network and self-play settings.
GENERIC: dict[str, Recipe] = {
    "ppo": Recipe("ppo", copy.deepcopy(_PPO_GENERIC), _sampler()),
    "maskable_ppo": Recipe("maskable_ppo", copy.deepcopy(_PPO_GENERIC), _sampler()),
    "a2c": Recipe(
        "a2c",
        {
            "n_steps": 16,
            "learning_rate": 7e-4,
            "ent_coef": 0.01,
            "gamma": 0.99,
            "policy_kwargs": {"net_arch": [128, 128]},
        },
        _sampler(),
    ),
    "dqn": Recipe(
        "dqn",
        {
            "learning_rate": 1e-4,
            "buffer_size": 100_000,
            "learning_starts": 1_000,
            "batch_size": 64,
            "train_freq": 4,
            "target_update_interval": 2_000,
            "exploration_fraction": 0.2,
            "exploration_final_eps": 0.05,
            "gamma": 0.99,
            "policy_kwargs": {"net_arch": [128, 128]},
        },
        _sampler(),
        n_envs=1,
    ),
    "qrdqn": Recipe(
        "qrdqn",
        {
            "learning_rate": 1e-4,
            "buffer_size": 100_000,
            "learning_starts": 1_000,
            "batch_size": 64,
            "train_freq": 4,
            "target_update_interval": 2_000,
            "exploration_fraction": 0.2,
            "exploration_final_eps": 0.05,
            "gamma": 0.99,
            "policy_kwargs": {"net_arch": [128, 128], "n_quantiles": 25},
        },
        _sampler(),
        n_envs=1,
    ),
    "trpo": Recipe(
        "trpo",
        {
            "n_steps": 256,
            "batch_size": 256,
            "learning_rate": 1e-3,
            "gamma": 0.99,
            "policy_kwargs": {"net_arch": [128, 128]},
        },
        _sampler(),
    ),
    "recurrent_ppo": Recipe(
        "recurrent_ppo",
        {
            "n_steps": 128,
            "batch_size": 128,
            "n_epochs": 10,
            "learning_rate": 3e-4,
            "ent_coef": 0.01,
            "gamma": 0.99,
            "policy_kwargs": {"net_arch": [64], "lstm_hidden_size": 64},
        },
        _sampler(),
    ),
    "ars": Recipe(
        "ars",
        {"n_delta": 8, "n_eval_episodes": 1, "learning_rate": 0.02, "delta_std": 0.05},
        _sampler(),
        n_envs=1,
    ),
    **{
        algo: Recipe(algo, copy.deepcopy(hp), _sampler(), n_envs=4)
        for algo, hp in {
            "sac": _CONTINUOUS_GENERIC,
            "tqc": _CONTINUOUS_GENERIC,
            "td3": {**_CONTINUOUS_GENERIC, "learning_rate": 1e-3},
            "ddpg": {**_CONTINUOUS_GENERIC, "learning_rate": 1e-3},
            "crossq": {k: v for k, v in _CONTINUOUS_GENERIC.items() if k != "policy_kwargs"},
        }.items()
    },
}

#: Tuned recipes of the registered games (measured figures: ``benchmarks/strength.py``).
RECIPES: dict[str, Recipe] = {
    "tictactoe_v3": Recipe(
        "maskable_ppo",
        {
            "n_steps": 256,
            "batch_size": 256,
            "n_epochs": 10,
            "learning_rate": "lin_1e-3",
            "ent_coef": 0.005,
            "gamma": 0.99,
            "gae_lambda": 0.95,
            "policy_kwargs": {"net_arch": [128, 128]},
        },
        _sampler(window=None, latest_ratio=0.5, random_ratio=0.2, reference_ratio=0.1),
        timesteps=1_000_000,
        n_envs=8,
        save_every=50_000,
        eval_games=200,
        tuned=True,
        notes="NOT pure self-play: 10% of the games are against the perfect minimax player "
        "(reference_ratio=0.1) and 20% against RandomPolicy; the rest against the learner's "
        "latest weights (half) and all its snapshots. Measured (seed 0, 200 games per opponent, "
        "deterministic learner, benchmarks/strength.py): 0 losses to random and 200/200 draws "
        "against minimax at 500k and at 1M steps. Pure self-play (reference_ratio=0, "
        "random_ratio 0.2-0.3, ent_coef 0.0-0.02) reached 0-2 losses to random but only "
        "87-91% draws against minimax at 1M steps: as second player the learner is never shown "
        "the openings its own first-player policy does not play. From every first move forced "
        "(9 openings x both seats x 5, benchmarks/strength.py; a second run, seed 0, stopped at "
        "750k steps) the learner loses some games as first player from openings it does not "
        "choose itself: 0-87-3 against minimax at 500k, 0-84-6 at 700k (0-200-0 in 200 seeded "
        "games from the same snapshot), no losses to random.",
    ),
    "connect_four_v3": Recipe(
        "maskable_ppo",
        {
            "n_steps": 256,
            "batch_size": 512,
            "n_epochs": 8,
            "learning_rate": "lin_5e-4",
            "ent_coef": 0.01,
            "gamma": 0.99,
            "gae_lambda": 0.95,
            "policy_kwargs": {
                "features_extractor_class": BOARD_EXTRACTOR,
                "features_extractor_kwargs": {"channels": 32, "n_layers": 3, "features_dim": 128},
                "net_arch": [128],
            },
        },
        _sampler(window=20, latest_ratio=0.5, random_ratio=0.1, reference_ratio=0.5),
        timesteps=5_000_000,
        n_envs=16,
        save_every=100_000,
        eval_games=100,
        tuned=True,
        symmetries="auto",
        notes="BoardExtractor (three 3x3 convolutions of 32 filters over the 6x7 board, 128 "
        "features, one hidden layer of 128), every learner episode in a random left-right view "
        "(symmetries='auto'), in train and league alike. NOT pure self-play: half the games are "
        "against alpha-beta search (depths 1 and 2, 25% each), 10% against RandomPolicy, the rest "
        "against the latest weights and a 20-snapshot window. The views and the network won "
        "benchmarks/strength_mechanisms.py's pure self-play arms (--reference-ratio 0, 2M "
        "learner steps each on a protected core, 49 two-move openings x both seats, "
        "benchmarks/results/connect-four-mechanisms/): BoardExtractor with views 13-0-85 "
        "against depth 1, rating 644 [561, 727] (depth 1 = 1000), beat the same network without "
        "views 70-1-27 and the MLP (net_arch [256, 256]) 88-0-10, and a learned best response "
        "of 200k steps scored 0.45 against it (0.66 without views, 0.79 against the MLP); the "
        "MLP with views, three times faster per step, was 0.00 against depth 1 after 4M steps; "
        "an AlphaStar league (1+1+1) of the same features at 2M lost to it 39-59. No arm is near "
        "0.6 against depth 1 within an hour of one core. With the reference bots (the MLP, "
        "seed 0, benchmarks/strength.py, 100 games per opponent): 94-95% against depth 1 and "
        "50% against depth 2 at 1M-5M steps, 0% against depth 4; the 5M target (>=90% against "
        "depth 2) is NOT reached; 100 seeded games were 13 distinct games, and from the 49 "
        "openings x both seats a 600k-step run went 5-0-93 against depth 1.",
    ),
    "texas_holdem_v4": Recipe(
        "maskable_ppo",
        {
            "n_steps": 256,
            "batch_size": 512,
            "n_epochs": 10,
            "learning_rate": "lin_3e-4",
            "ent_coef": 0.01,
            "gamma": 1.0,
            "policy_kwargs": {"net_arch": [128, 128]},
        },
        _sampler(window=20, latest_ratio=0.5, random_ratio=0.2),
        timesteps=100_000,
        n_envs=8,
        save_every=10_000,
        eval_games=500,
        tuned=True,
        notes="Beats RandomPolicy clearly from 10k steps on: measured (seed 0, 1000 hands per "
        "seat, deterministic learner, benchmarks/strength.py) at 10k, 20k, 50k and 100k steps: "
        "1924-7-69 (96% of hands won, 95% interval 95-97%) and +3.35 big blinds per hand "
        "(+3.14 to +3.55); the same hands at every budget, because the learner raises whenever "
        "it may (call when the raises are capped), which exploits a player that folds at random "
        "(uniform over its legal actions). 20% of the games are against RandomPolicy "
        "(random_ratio=0.2). The generic recipe before it (1M steps, random_ratio=0.1) was not "
        "measured. gamma=1: hands are short.",
    ),
    "pong_v3": Recipe(
        "ppo",
        {
            "n_steps": 128,
            "batch_size": 256,
            "n_epochs": 4,
            "learning_rate": "lin_2.5e-4",
            "ent_coef": 0.01,
            "gamma": 0.99,
            "gae_lambda": 0.95,
            "clip_range": 0.1,
            "policy_kwargs": {"net_arch": [256, 256]},
        },
        _sampler(
            window=10, latest_ratio=0.5, random_ratio=0.25, swap_every=2048, swap_unit="steps"
        ),
        timesteps=300_000,
        n_envs=8,
        save_every=25_000,
        game_kwargs={"frame_skip": 4},
        eval_games=4,
        tuned=True,
        notes="Observations are the RAM bytes scaled to [0, 1] (games.py) and each action is "
        "held for 4 frames (game_kwargs frame_skip=4); 25% of the games are against "
        "RandomPolicy. Measured (seed 0, benchmarks/strength.py: learner sampling its actions, "
        "games to 21 points or 10,000 frames, 5 per seat) at 100k / 200k / 300k steps: 5-0-5, "
        "8-0-2 and 8-0-2 against RandomPolicy, mean point difference +0.0, +6.2 and +6.6 per "
        "game; at 300k in 40 more games (--repeats 20 --seed 1) 36-0-4 (90%, 95% interval "
        "80-98%) and +9.3 points a game (+6.9 to +11.5). Without frame skip (the recipe "
        "before, raw bytes replaced by scaled ones, 400k-step schedule) the snapshot at 100k "
        "steps lost both "
        "games, -18.5 points a game. A deterministic learner that never picks FIRE never "
        "serves; hence the sampled actions in the measurement.",
    ),
    "simple_tag_v3": Recipe(
        "ppo",
        {
            "n_steps": 128,
            "batch_size": 256,
            "n_epochs": 10,
            "learning_rate": 3e-4,
            "ent_coef": 0.01,
            "gamma": 0.95,
            "gae_lambda": 0.95,
            "policy_kwargs": {"net_arch": [64, 64]},
        },
        _sampler(window=10, latest_ratio=0.5, random_ratio=0.0),
        timesteps=196_608,
        n_envs=8,
        save_every=12_288,
        game_kwargs={"max_cycles": 25},
        eval_games=100,
        teams="prefix",
        notes="Two PPO learners, one per team (adversary: three predators sharing one network; "
        "agent: the prey), trained by TeamSelfPlay: one team learns for team_change of its own "
        "steps against snapshots of the other team. timesteps and save_every count each team's "
        "learner steps (a step of every agent of the team). gamma 0.95 as in the MPE papers "
        "(25-step episodes). team_change is derived from the budget (about a tenth of it, a "
        "multiple of both teams' rollouts: 128 steps x 8 copies x 3 predators = 3,072 steps; x 1 "
        "prey = 1,024, and a divisor of the budget when it can be: 24,576 at this budget), so the "
        "turns have equal length and the budget ends on a turn boundary, whatever --timesteps "
        "says. Not tuned. Measured (benchmarks/teams.py, seed "
        "0, 1000 episodes per match-up, players sampling their actions) at this budget: trained "
        "predators catch random prey 2.96 times per episode (95% interval 2.81-3.12; random "
        "predators 0.42, 0.36-0.49); the trained prey is caught by random predators 0.49 times "
        "(0.42-0.56: no better than random prey) but by the trained predators 1.60 times "
        "(1.48-1.73): it learned to evade the predators it trained against.",
    ),
    "quadrapong_v4": Recipe(
        "ppo",
        {
            "n_steps": 128,
            "batch_size": 256,
            "n_epochs": 4,
            "learning_rate": "lin_2.5e-4",
            "ent_coef": 0.01,
            "gamma": 0.99,
            "gae_lambda": 0.95,
            "clip_range": 0.1,
            "policy_kwargs": {"net_arch": [256, 256]},
        },
        _sampler(window=10, latest_ratio=0.5, random_ratio=0.0),
        timesteps=300_000,
        n_envs=8,
        save_every=24_576,
        game_kwargs={"frame_skip": 4},
        eval_games=4,
        teams={team: list(agents) for team, agents in QUADRAPONG_TEAMS.items()},
        notes="Pong's recipe (RAM scaled to [0, 1], frame_skip=4) for two teams of two; both "
        "teams have the same spaces, so one model plays both (train --shared, the default "
        "for teams whose spaces agree). Not measured.",
    ),
    KUHN_POKER: Recipe(
        "maskable_ppo",
        {
            "n_steps": 256,
            "batch_size": 256,
            "n_epochs": 4,
            "learning_rate": 1e-4,
            "ent_coef": 0.05,
            "gamma": 1.0,
            "gae_lambda": 0.95,
            "policy_kwargs": {"net_arch": [64, 64]},
        },
        _sampler(window=None, latest_ratio=1.0, strategy="nash", random_ratio=0.0),
        timesteps=1_000_000,
        n_envs=8,
        save_every=20_000,
        eval_games=200,
        tuned=True,
        magnet={"kl": 1.0, "refresh": 50, "unit": "updates", "average": 1},
        notes="Kuhn poker (OpenSpiel through openspiel_env), one network for both seats. From "
        "issue #32's 10-minute runs on 2 cores: entropy 0.05 and learning rate 1e-4 brought a "
        "single PPO policy to NashConv 0.26-0.45 where SB3's defaults stayed at 0.58-1.6, and a "
        "Nash mixture over the snapshots reached 0.119; so the opponents are drawn from the "
        "archive's Nash mixture (strategy nash, PSRO's meta-solver) and the run measures the "
        "mixture's exploitability (sp-wrappers exploitability). Target: the Nash mixture's "
        "exploitability at most 0.05 (NashConv 0.10) within 10 minutes. Since #48 the learner "
        "plays its own latest weights (latest_ratio 1) under a magnet (kl 1.0, refresh every 50 "
        "updates; MagnetCallback), the dynamics that settle on one network instead of cycling. "
        "Short checks on a loaded shared machine (2 cores), seed 1, "
        "benchmarks/exploitability.py --games kuhn --strategies magnet: with kl 1.0, refresh 50 "
        "(400 s, 670 steps/s, load 3.2-5.2) the learner's exploitability fell steadily to 0.208 "
        "at 40k steps, 0.142 at 120k and 0.098 at 268k; with kl 0.2, refresh 10 (480 s, 361 "
        "steps/s, load 4.1-7.4) it reached 0.142 at 60k and climbed back to 0.291 at 174k. The "
        "protected arms are still to run (docs/benchmarks.md). " + _POKER_NOTE,
    ),
    LEDUC_POKER: Recipe(
        "maskable_ppo",
        {
            "n_steps": 256,
            "batch_size": 512,
            "n_epochs": 4,
            "learning_rate": 1e-4,
            "ent_coef": 0.03,
            "gamma": 1.0,
            "gae_lambda": 0.95,
            "policy_kwargs": {"net_arch": [128, 128]},
        },
        _sampler(window=None, latest_ratio=1.0, strategy="nash", random_ratio=0.0),
        timesteps=5_000_000,
        n_envs=8,
        save_every=50_000,
        eval_games=200,
        tuned=True,
        magnet={"kl": 1.0, "refresh": 50, "unit": "updates", "average": 1},
        notes="Leduc poker (OpenSpiel through openspiel_env) observing OpenSpiel's "
        "information-state tensor (leduc_poker's default here): Shimmy's observation drops the "
        "betting history, a floor of about 0.3 NashConv for any policy that sees only it. "
        "Kuhn's settings with a wider network; opponents from the archive's Nash mixture. "
        "Target: NashConv at most 1.0 within 60 minutes on 2 cores (0.5 the stretch). Since #48 "
        "the learner plays its own latest weights under a magnet (Kuhn's settings, kl 1.0, "
        "refresh every 50 updates): not measured with them yet (a short check with kl 0.2, "
        "refresh 10 on a loaded machine, load 5.4-7.9, 154 steps/s: the learner's NashConv "
        "4.15-4.36 from 20k to 70k steps, where plain self-play's learner ended at 2.28 after "
        "3M); the protected arms are still to run (docs/benchmarks.md). " + _POKER_NOTE,
    ),
    GO: Recipe(
        "maskable_ppo",
        {
            "n_steps": 256,
            "batch_size": 512,
            "n_epochs": 4,
            "learning_rate": "lin_3e-4",
            "ent_coef": 0.01,
            "gamma": 1.0,
            "gae_lambda": 0.95,
            "policy_kwargs": {
                "features_extractor_class": BOARD_EXTRACTOR,
                "features_extractor_kwargs": {
                    "channels": 64,
                    "n_layers": 4,
                    "head_channels": 4,
                    "features_dim": 256,
                },
                "net_arch": [256],
            },
        },
        _sampler(window=20, latest_ratio=0.5, random_ratio=0.1),
        timesteps=2_000_000,
        n_envs=16,
        save_every=100_000,
        game_kwargs={"board_size": 9},
        eval_games=50,
        symmetries="auto",
        notes="9x9 Go (board_size=9; the 17 planes of PettingZoo's go_v5) through BoardExtractor "
        "(four 3x3 convolutions of 64 filters, a 1x1 head of 4 filters, as AlphaZero's heads), "
        "every episode in one of the 8 symmetric views of the board (symmetries='auto'). "
        "gamma=1: the only reward is the game's result. Not tuned, not measured; Go has no "
        "reference player here, so no strength curve: read ratings.json.",
    ),
}


def recipe_for(game: str, algo: str | None = None) -> Recipe:
    """The recipe for ``game`` (a short name such as ``kuhn_poker`` or ``go_v5`` gets the
    recipe of the import path it stands for): its tuned one when ``algo`` is ``None`` or the
    tuned algorithm, else the generic recipe of ``algo`` (``ppo`` when the game has no recipe
    and no ``algo``).

    :raises KeyError: ``algo`` is not a key of :data:`ALGOS`.
    """
    tuned = next((RECIPES[n] for n in same_game(game) if n in RECIPES), None)
    if tuned is not None and (algo is None or algo == tuned.algo):
        return tuned
    if algo is not None and algo not in ALGOS:
        raise KeyError(algo)
    generic = GENERIC[algo or "ppo"]
    if tuned is not None:  # keep what belongs to the game rather than to the algorithm
        return replace(
            generic,
            game_kwargs=tuned.game_kwargs,
            eval_games=tuned.eval_games,
            learner=tuned.learner,
            teams=tuned.teams,
            team_change=tuned.team_change,
            save_every=tuned.save_every if tuned.teams is not None else generic.save_every,
            timesteps=tuned.timesteps if tuned.teams is not None else generic.timesteps,
            symmetries=tuned.symmetries,
            strength_every=tuned.strength_every,
        )
    return generic


def linear_schedule(value: float | str) -> float | Callable[[float], float]:
    """A learning rate from a recipe: a number, or ``"lin_<rate>"`` decaying linearly to 0.

    >>> schedule = linear_schedule("lin_3e-4")
    >>> schedule(1.0), schedule(0.5)
    (0.0003, 0.00015)
    >>> linear_schedule(1e-3)
    0.001
    """
    if isinstance(value, str):
        if not value.startswith("lin_"):
            raise ValueError(f"A learning rate must be a number or 'lin_<rate>', got {value!r}.")
        try:
            start = float(value[4:])
        except ValueError:
            raise ValueError(
                f"A learning rate must be a number or 'lin_<rate>', got {value!r}."
            ) from None
        return _LinearSchedule(start)
    return float(value)


class _LinearSchedule:
    """``progress_remaining * start`` (picklable, so SB3 can save it in ``model.zip``)."""

    def __init__(self, start: float) -> None:
        self.start = start

    def __call__(self, progress_remaining: float) -> float:
        return progress_remaining * self.start

    def __repr__(self) -> str:
        return f"lin_{self.start}"
