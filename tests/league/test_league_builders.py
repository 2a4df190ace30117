"""League design without training: payoff, PFSP, AlphaStar's matchmaking, snapshots and resets,
and the errors a misconfigured league raises."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.league import (
    ALPHASTAR_DEFAULTS,
    AlphaStarLeague,
    FrozenPlayer,
    League,
    LeagueSetupError,
    LeagueView,
    LearnerState,
    PayoffTable,
    PlayerSpec,
    SelfPlayLeague,
)
from sp_wrappers.league.worker import MatchmakingSource
from sp_wrappers.opponents.sampler import pfsp_weights

MAIN, EXPLOITER, LEAGUE_EXPLOITER = "main_agent_0", "main_exploiter_0", "league_exploiter_0"


def games(table: PayoffTable, a: str, b: str, score: float, n: int = 20) -> None:
    table.add([(a, b, score)] * n)


def alphastar_view(payoff: PayoffTable) -> tuple[LeagueView, dict[str, LearnerState]]:
    learners = {
        MAIN: LearnerState(MAIN, "main_agent", steps=1000),
        EXPLOITER: LearnerState(EXPLOITER, "main_exploiter", steps=1000),
        LEAGUE_EXPLOITER: LearnerState(LEAGUE_EXPLOITER, "league_exploiter", steps=1000),
    }
    frozen = [
        FrozenPlayer("m0", MAIN, "main_agent", 0),
        FrozenPlayer("m1", MAIN, "main_agent", 500),
        FrozenPlayer("e0", EXPLOITER, "main_exploiter", 500),
    ]
    return LeagueView(list(learners.values()), frozen, payoff), learners


def empirical(distribution: dict[str, float], draws: int = 20_000, seed: int = 0) -> dict:
    policies = {k: RandomPolicy(policy_id=k) for k in distribution}
    source = MatchmakingSource(policies, distribution, seed=seed)
    ids = [source.draw().policy_id for _ in range(draws)]
    return {k: ids.count(k) / draws for k in distribution}


# -- payoff ----------------------------------------------------------------------------------------
def test_payoff_decays_old_games_as_alphastar_update():
    table = PayoffTable(decay=0.5, min_games=0)
    table.add([("a", "b", 0.0), ("a", "b", 1.0)])
    # counts: score 0*0.5 + 1 = 1, games 1*0.5 + 1 = 1.5
    assert table.win_rate("a", "b") == pytest.approx(1 / 1.5)
    assert table.win_rate("b", "a") == pytest.approx(0.5 / 1.5)
    assert table.games("b", "a") == 2


def test_payoff_answers_the_prior_until_min_games():
    table = PayoffTable(min_games=8)
    games(table, "a", "b", 1.0, n=7)
    assert table.win_rate("a", "b") == 0.5
    table.add([("a", "b", 1.0)])
    assert table.win_rate("a", "b") == 1.0


def test_payoff_skips_self_games_and_rejects_bad_scores():
    table = PayoffTable()
    table.add([("a", "a", 1.0)])
    assert table.players() == []
    with pytest.raises(ValueError, match="between 0 and 1"):
        table.add([("a", "b", 2.0)])


def test_pfsp_weightings_match_alphastar_formulas():
    p = np.array([0.2, 0.6, 0.9])
    assert pfsp_weights(p, "linear") == pytest.approx((1 - p) / (1 - p).sum())
    assert pfsp_weights(p, "squared") == pytest.approx((1 - p) ** 2 / ((1 - p) ** 2).sum())
    capped = np.minimum(0.5, 1 - p)
    assert pfsp_weights(p, "linear_capped") == pytest.approx(capped / capped.sum())
    assert pfsp_weights(p, "variance") == pytest.approx(p * (1 - p) / (p * (1 - p)).sum())


# -- matchmaking -----------------------------------------------------------------------------------
def test_main_agent_branches_are_35_selfplay_50_pfsp_15_verification_when_sampled():
    payoff = PayoffTable(min_games=8)
    games(payoff, MAIN, "m0", 0.9)
    games(payoff, MAIN, "m1", 0.9)
    games(payoff, MAIN, "e0", 0.1)  # an exploiter's snapshot the main loses to: verification
    view, learners = alphastar_view(payoff)
    builder = AlphaStarLeague()
    distribution = builder.opponents(learners[MAIN], view)
    squared = pfsp_weights([0.9, 0.9, 0.1], "squared")
    expected = {
        MAIN: 0.35,
        "m0": 0.5 * squared[0],
        "m1": 0.5 * squared[1],
        "e0": 0.5 * squared[2] + 0.15,
    }
    assert distribution == pytest.approx(expected)
    assert empirical(distribution) == pytest.approx(expected, abs=0.01)


def test_main_agent_verification_plays_forgotten_snapshots_else_selfplay():
    payoff = PayoffTable(min_games=8)
    games(payoff, MAIN, "e0", 0.9)  # beats the exploiter's snapshots
    games(payoff, MAIN, "m0", 0.4)  # has forgotten how to beat m0
    games(payoff, MAIN, "m1", 0.8)
    view, learners = alphastar_view(payoff)
    distribution = AlphaStarLeague().opponents(learners[MAIN], view)
    pfsp = pfsp_weights([0.4, 0.8, 0.9], "squared")
    # verification keeps m0, m1 (no decreasing suffix); the forgotten-check PFSP is over them
    forgotten = pfsp_weights([0.4, 0.8], "squared")
    assert distribution[MAIN] == pytest.approx(0.35)
    assert distribution["m0"] == pytest.approx(0.5 * pfsp[0] + 0.15 * forgotten[0])
    assert distribution["m1"] == pytest.approx(0.5 * pfsp[1] + 0.15 * forgotten[1])
    games(payoff, MAIN, "m0", 0.9, n=200)  # remembered again: verification falls to self-play
    distribution = AlphaStarLeague().opponents(learners[MAIN], view)
    assert distribution[MAIN] == pytest.approx(0.5)


def test_main_exploiter_plays_current_main_then_its_snapshots_when_it_cannot_win():
    payoff = PayoffTable(min_games=8)
    view, learners = alphastar_view(payoff)
    builder = AlphaStarLeague()
    assert builder.opponents(learners[EXPLOITER], view) == {MAIN: 1.0}
    games(payoff, EXPLOITER, MAIN, 0.05)
    games(payoff, EXPLOITER, "m0", 0.5)
    games(payoff, EXPLOITER, "m1", 0.2)
    distribution = builder.opponents(learners[EXPLOITER], view)
    variance = pfsp_weights([0.5, 0.2], "variance")
    assert distribution == pytest.approx({"m0": variance[0], "m1": variance[1]})


def test_league_exploiter_pfsp_weights_follow_the_payoff_table():
    payoff = PayoffTable(min_games=8)
    view, learners = alphastar_view(payoff)
    builder = AlphaStarLeague()
    before = builder.opponents(learners[LEAGUE_EXPLOITER], view)
    assert before == pytest.approx({"m0": 1 / 3, "m1": 1 / 3, "e0": 1 / 3})  # all untrusted
    games(payoff, LEAGUE_EXPLOITER, "m0", 0.95)
    games(payoff, LEAGUE_EXPLOITER, "m1", 0.3)
    after = builder.opponents(learners[LEAGUE_EXPLOITER], view)
    capped = np.minimum(0.5, 1 - np.array([0.95, 0.3, 0.5]))
    assert list(after.values()) == pytest.approx((capped / capped.sum()).tolist())
    assert after["m0"] < after["m1"]


def test_selfplay_league_is_latest_ratio_plus_uniform_window():
    me = LearnerState("learner_0", "learner")
    pool = [FrozenPlayer(f"s{i}", "learner_0", "learner", i) for i in range(5)]
    view = LeagueView([me], pool, PayoffTable())
    distribution = SelfPlayLeague(latest_ratio=0.2, window=2).opponents(me, view)
    assert distribution == pytest.approx({"learner_0": 0.2, "s3": 0.4, "s4": 0.4})


# -- snapshots and resets --------------------------------------------------------------------------
def test_snapshot_when_win_rate_reaches_threshold_or_after_step_limit():
    payoff = PayoffTable(min_games=8)
    view, learners = alphastar_view(payoff)
    builder = AlphaStarLeague(snapshot_min_steps=100, snapshot_max_steps=1000)
    main = learners[MAIN]
    main.last_snapshot_step = 950  # 50 steps: too early whatever the rates
    assert not builder.ready_to_snapshot(main, view)
    main.last_snapshot_step = 500
    assert not builder.ready_to_snapshot(main, view)  # rates untrusted (0.5 < 0.7)
    for frozen in ("m0", "m1", "e0"):
        games(payoff, MAIN, frozen, 0.8)
    assert builder.ready_to_snapshot(main, view)
    exploiter = learners[EXPLOITER]
    exploiter.last_snapshot_step = 0  # 1000 steps: the step limit
    assert builder.ready_to_snapshot(exploiter, view)


def test_main_exploiter_always_resets_and_league_exploiter_with_probability_quarter():
    payoff = PayoffTable()
    view, learners = alphastar_view(payoff)
    builder = AlphaStarLeague()
    rng = np.random.default_rng(0)
    assert all(builder.reset_after_snapshot(learners[EXPLOITER], view, rng) for _ in range(50))
    assert not any(builder.reset_after_snapshot(learners[MAIN], view, rng) for _ in range(50))
    resets = [
        builder.reset_after_snapshot(learners[LEAGUE_EXPLOITER], view, rng) for _ in range(4000)
    ]
    assert np.mean(resets) == pytest.approx(
        ALPHASTAR_DEFAULTS["league_exploiter_reset_probability"], abs=0.02
    )


# -- bad input -------------------------------------------------------------------------------------
def test_alphastar_league_without_main_agents_names_the_fix():
    with pytest.raises(ValueError, match="at least one main agent"):
        AlphaStarLeague(main_agents=0)
    with pytest.raises(TypeError, match="known ones"):
        AlphaStarLeague(snapshot_threshold=0.5)


class _Builder(SelfPlayLeague):
    def __init__(self, players: list[PlayerSpec]) -> None:
        super().__init__()
        self._players = players

    def players(self) -> list[PlayerSpec]:
        return self._players


def _unused_model(env):  # never called: the league fails before any player starts
    raise AssertionError


def test_unknown_role_zero_players_and_unknown_make_model_role_fail_with_the_fix(tmp_path):
    from pettingzoo.classic import tictactoe_v3

    with pytest.raises(LeagueSetupError, match="unknown role 'coach'.*knows the roles"):
        League(tictactoe_v3.env, _Builder([PlayerSpec("c", "coach")]), _unused_model, tmp_path)
    with pytest.raises(LeagueSetupError, match="no learning players"):
        League(tictactoe_v3.env, _Builder([]), _unused_model, tmp_path)
    with pytest.raises(LeagueSetupError, match="unknown roles"):
        League(tictactoe_v3.env, AlphaStarLeague(), {"coach": _unused_model}, tmp_path)
    with pytest.raises(TypeError, match="not a LeagueBuilder"):
        League(tictactoe_v3.env, object(), _unused_model, tmp_path)


def test_ray_backend_without_ray_says_how_to_install_it(monkeypatch, tmp_path):
    from pettingzoo.classic import tictactoe_v3

    league = League(tictactoe_v3.env, SelfPlayLeague(), _unused_model, tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r'pip install "sp-wrappers\[ray\]".*backend="process"'):
        league.run(100, backend="ray")


def test_pool_cap_drops_the_crowded_middle_and_keeps_each_players_first_and_newest(tmp_path):
    from pettingzoo.classic import tictactoe_v3

    league = League(tictactoe_v3.env, AlphaStarLeague(), _unused_model, tmp_path, max_frozen=4)
    mains = [FrozenPlayer(f"m{i}", MAIN, "main_agent", 100 * i) for i in range(5)]
    exploiters = [FrozenPlayer(f"e{i}", EXPLOITER, "main_exploiter", 100 * i) for i in range(2)]
    league.frozen = mains + exploiters
    dropped = league._prune_pool()
    kept = [f.id for f in league.frozen]
    assert len(kept) == 4 and len(dropped) == 3
    assert {"m0", "m4", "e0", "e1"} == set(kept)
