"""SB3 schedules follow the whole budget when learning runs in chunks: PPO on tic-tac-toe with a
linear learning rate over 384 steps, learnt in three chunks of 128 steps, reads 2/3, 1/3 and 0 of
its start after each chunk, directly, through ``TeamSelfPlay`` and through a one-player league,
and a resumed run continues the same curve."""

from __future__ import annotations

import io
from typing import Any

import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback

from sp_wrappers import SelfPlayVecEnv
from sp_wrappers.league import League, SelfPlayLeague
from sp_wrappers.runs.recipes import linear_schedule
from sp_wrappers.training.schedules import BudgetSchedule, BudgetSchedules
from sp_wrappers.training.team_selfplay import TeamSelfPlay
from sp_wrappers.training.team_setup import make_team_vec_env

START = 1e-3
EXPECTED = [2 / 3, 1 / 3, 0.0]  # of START, after chunks 1, 2, 3 of 128 steps out of 384
TEAMS = {"x": ["player_1"], "o": ["player_2"]}


@pytest.fixture(autouse=True)
def _one_thread() -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def ppo(env: Any) -> PPO:
    """64 steps x 2 env copies: one rollout is 128 learner steps, one chunk."""
    return PPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        learning_rate=linear_schedule(f"lin_{START}"),
        clip_range=linear_schedule("lin_0.2"),
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )


def rate(model: Any) -> float:
    """The learning rate the optimizer used in the model's last update, as a share of START."""
    return model.policy.optimizer.param_groups[0]["lr"] / START


class RecordRate(BaseCallback):
    """Records the learning rate (and the clip range PPO logged) at the end of each learn call."""

    def __init__(self, rates: list[float], clips: list[float] | None = None) -> None:
        super().__init__()
        self.rates = rates
        self.clips = clips

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self.rates.append(rate(self.model))
        if self.clips is not None:
            self.clips.append(float(self.model.clip_range(self.model._current_progress_remaining)))


def test_linear_learning_rate_runs_once_over_three_chunks_of_learn():
    model = ppo(SelfPlayVecEnv(tictactoe_v3.env, n_envs=2))
    rates: list[float] = []
    clips: list[float] = []
    for _ in range(3):
        model.learn(
            128,
            callback=[RecordRate(rates, clips), BudgetSchedules(384)],
            reset_num_timesteps=False,
        )
    assert model.num_timesteps == 384
    assert rates == pytest.approx(EXPECTED, abs=1e-9)
    assert clips == pytest.approx([0.2 * e for e in EXPECTED], abs=1e-9)
    # the wrappers are gone after each call: the model holds SB3's own schedules again
    assert not isinstance(model.lr_schedule, BudgetSchedule)
    assert not isinstance(model.clip_range, BudgetSchedule)


def test_model_saved_mid_chunk_loads_without_the_wrapper(tmp_path):
    model = ppo(SelfPlayVecEnv(tictactoe_v3.env, n_envs=2))

    class SaveMidway(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps == 64:
                assert isinstance(self.model.lr_schedule, BudgetSchedule)
                self.model.save(tmp_path / "mid.zip")
            return True

    model.learn(128, callback=[BudgetSchedules(384), SaveMidway()], reset_num_timesteps=False)
    loaded = PPO.load(tmp_path / "mid.zip", device="cpu")
    assert not isinstance(loaded.clip_range, BudgetSchedule)
    assert loaded.clip_range(0.5) == pytest.approx(0.1)


def team_models() -> dict[str, PPO]:
    return {
        team: ppo(make_team_vec_env(tictactoe_v3.env, TEAMS, team, n_envs=2, seed=0))
        for team in TEAMS
    }


def test_team_selfplay_schedules_follow_each_teams_whole_budget(tmp_path):
    models = team_models()
    rates: dict[str, list[float]] = {team: [] for team in TEAMS}
    run = TeamSelfPlay(
        tictactoe_v3.env,
        TEAMS,
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=128,
        save_every=128,
        seed=0,
    )
    # three turns of 128 steps for each team: 768 learner steps in all, 384 per team
    assert run.schedule_budgets(768) == {"x": 384, "o": 384}
    run.learn(768, callback={team: RecordRate(rates[team]) for team in TEAMS})
    assert {team: m.num_timesteps for team, m in models.items()} == {"x": 384, "o": 384}
    for team in TEAMS:
        assert rates[team] == pytest.approx(EXPECTED, abs=1e-9), team


def test_resumed_team_selfplay_continues_the_curve(tmp_path):
    common = dict(team_change=128, save_every=128, seed=0, run_dir=tmp_path / "run")
    first = TeamSelfPlay(tictactoe_v3.env, TEAMS, team_models(), **common)
    first.learn(256, schedule_timesteps=768)  # one turn each, as the CLI learns in pieces
    rates: dict[str, list[float]] = {team: [] for team in TEAMS}
    models = team_models()
    resumed = TeamSelfPlay(tictactoe_v3.env, TEAMS, models, resume=True, **common)
    assert resumed.schedule_timesteps == 768  # from team_selfplay.json
    resumed.learn(768, callback={team: RecordRate(rates[team]) for team in TEAMS})
    for team in TEAMS:
        assert rates[team] == pytest.approx(EXPECTED[1:], abs=1e-9), team


def model_zip_rate(result: Any) -> float:
    model = PPO.load(io.BytesIO(result.model_zip), device="cpu")
    return rate(model)


class Stop(Exception):
    """Ends a league after its first round, as a kill would (league.json is already written)."""


def one_player_league(root: Any, on_round: Any) -> League:
    return League(
        tictactoe_v3.env,
        SelfPlayLeague(save_every=128),
        ppo,
        root,
        chunk_steps=128,
        n_envs=2,
        seed=0,
        on_round=on_round,
    )


def test_one_player_league_schedules_follow_the_players_whole_budget(tmp_path):
    rates: list[float] = []
    league = one_player_league(
        tmp_path, lambda league, results: rates.append(model_zip_rate(results["learner_0"]))
    )
    assert league.run(384, backend="serial").rounds == 3
    assert rates == pytest.approx(EXPECTED, abs=1e-9)


def test_resumed_league_continues_the_curve(tmp_path):
    rates: list[float] = []

    def first_round_then_stop(league: League, results: dict[str, Any]) -> None:
        rates.append(model_zip_rate(results["learner_0"]))
        raise Stop

    with pytest.raises(Stop):
        one_player_league(tmp_path, first_round_then_stop).run(384, backend="serial")
    league = one_player_league(
        tmp_path, lambda league, results: rates.append(model_zip_rate(results["learner_0"]))
    )
    assert league.resumed and league.total_timesteps == 384
    league.run(384, backend="serial")
    assert rates == pytest.approx(EXPECTED, abs=1e-9)
