"""Specification of ``sp_wrappers.ratings.elo``: Elo arithmetic, the Bradley-Terry fit, team
ratings."""

from __future__ import annotations

import doctest
import importlib.util
import math
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sp_wrappers import ratings as ratings_module
from sp_wrappers.ratings.bradley_terry import fit_bradley_terry
from sp_wrappers.ratings.elo import EloRatings, elo_update, expected_score
from sp_wrappers.ratings.results import BradleyTerryResult

HAS_OPENSKILL = importlib.util.find_spec("openskill") is not None


def simulate(
    rng: np.random.Generator, n_players: int, games_per_pair: int, spread: float = 150.0
) -> tuple[np.ndarray, list[tuple[str, str, float]]]:
    """True Elo strengths ~ N(0, spread) and a full round robin of win/loss games between them."""
    true = rng.normal(0.0, spread, n_players)
    a, b = np.triu_indices(n_players, 1)
    a, b = np.repeat(a, games_per_pair), np.repeat(b, games_per_pair)
    wins = rng.random(len(a)) < 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
    return true, [(f"p{i}", f"p{j}", float(w)) for i, j, w in zip(a, b, wins, strict=True)]


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(np.argsort(np.argsort(x)), np.argsort(np.argsort(y)))[0, 1])


# --------------------------------------------------------------------------------------------------
# Doctests
# --------------------------------------------------------------------------------------------------


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    modules = [
        importlib.import_module(f"sp_wrappers.ratings.{name}")
        for name in ("elo", "bradley_terry", "results", "skill")
    ]
    tests = [test for m in modules for test in finder.find(m, globs=vars(m).copy())]
    if not HAS_OPENSKILL:  # those examples need the multiplayer extra
        tests = [t for t in tests if "OpenSkill" not in t.name and "team" not in t.name]
    assert sum(len(t.examples) for t in tests) >= 10
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# --------------------------------------------------------------------------------------------------
# Elo
# --------------------------------------------------------------------------------------------------


def test_expected_score_is_half_between_equal_ratings():
    assert expected_score(1500, 1500) == 0.5


def test_expected_score_of_200_points_ahead_is_0_7597():
    assert expected_score(1400, 1200) == pytest.approx(0.7597, abs=1e-4)
    assert expected_score(1200, 1400) == pytest.approx(0.2403, abs=1e-4)


def test_a_win_between_equals_moves_each_rating_by_half_k():
    assert elo_update(1200, 1200, 1.0, k=16) == (1208.0, 1192.0)
    assert elo_update(1200, 1200, 0.0, k=32) == (1184.0, 1216.0)


def test_a_draw_moves_the_stronger_player_down_by_k_times_its_excess_expectation():
    new_a, new_b = elo_update(1400, 1200, 0.5, k=16)
    assert new_a == pytest.approx(1400 - 16 * 0.2597, abs=1e-2)  # 1395.85
    assert new_b == pytest.approx(1200 + 16 * 0.2597, abs=1e-2)


def test_an_upset_win_gains_more_than_an_expected_win():
    assert elo_update(1200, 1400, 1.0)[0] == pytest.approx(1200 + 16 * 0.7597, abs=1e-2)
    assert elo_update(1400, 1200, 1.0)[0] == pytest.approx(1400 + 16 * 0.2403, abs=1e-2)


@given(
    r_a=st.floats(0, 3000),
    r_b=st.floats(0, 3000),
    score=st.sampled_from([0.0, 0.5, 1.0]),
    k=st.floats(1, 64),
)
@settings(max_examples=40, deadline=None)
def test_elo_updates_are_zero_sum(r_a, r_b, score, k):
    new_a, new_b = elo_update(r_a, r_b, score, k)
    assert new_a + new_b == pytest.approx(r_a + r_b)


def test_elo_ratings_start_unknown_players_at_the_initial_rating_and_count_games():
    elo = EloRatings(k=16, initial_rating=1000)
    assert elo.rating("nobody") == 1000.0
    assert elo.update("a", "b", 1.0) == (1008.0, 992.0)
    elo.update("a", "c", 0.5)
    assert elo.ratings["a"] == pytest.approx(1008 + 16 * (0.5 - expected_score(1008, 1000)))
    assert elo.games == {"a": 2, "b": 1, "c": 1}
    assert sum(elo.ratings.values()) == pytest.approx(3000.0)
    assert "nobody" not in elo.ratings


@pytest.mark.parametrize("score", [-0.1, 1.5, float("nan")])
def test_elo_refuses_a_score_outside_zero_one(score):
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        EloRatings().update("a", "b", score)


@pytest.mark.parametrize("k", [0, -1])
def test_elo_refuses_a_non_positive_k(k):
    with pytest.raises(ValueError, match="k must be positive"):
        EloRatings(k=k)
    with pytest.raises(ValueError, match="k must be positive"):
        elo_update(1200, 1200, 1.0, k=k)


def test_elo_refuses_a_player_playing_itself():
    with pytest.raises(ValueError, match="cannot play itself"):
        EloRatings().update("a", "a", 1.0)


# --------------------------------------------------------------------------------------------------
# Bradley-Terry
# --------------------------------------------------------------------------------------------------


def test_bradley_terry_recovers_known_strengths_from_simulated_matches():
    true, games = simulate(np.random.default_rng(0), n_players=20, games_per_pair=50, spread=200)
    result = fit_bradley_terry(games)
    fitted = np.array([result.ratings[f"p{i}"] for i in range(20)])
    assert result.converged
    assert spearman(fitted, true) >= 0.95
    assert fitted.mean() == pytest.approx(1500.0)
    rmse = np.sqrt(np.mean((fitted - fitted.mean() - (true - true.mean())) ** 2))
    assert rmse < 40


def test_a_three_to_one_record_puts_the_winner_400_log10_3_points_ahead():
    games = [("a", "b", 1.0)] * 3 + [("b", "a", 1.0)]
    result = fit_bradley_terry(games, prior_games=0)
    assert result.ratings["a"] - result.ratings["b"] == pytest.approx(400 * math.log10(3))
    assert result.win_probability("a", "b") == pytest.approx(0.75)


def test_draws_count_as_half_a_win_each_way():
    two_draws = fit_bradley_terry([("a", "b", 0.5), ("a", "b", 0.5), ("a", "c", 1.0)])
    win_and_loss = fit_bradley_terry([("a", "b", 1.0), ("b", "a", 1.0), ("a", "c", 1.0)])
    for player in "abc":
        assert two_draws.ratings[player] == pytest.approx(win_and_loss.ratings[player])
    fractional = fit_bradley_terry([("a", "b", 0.75)] * 4, prior_games=0)
    assert fractional.ratings["a"] - fractional.ratings["b"] == pytest.approx(400 * math.log10(3))


def test_records_with_player_and_score_attributes_are_accepted():
    record = SimpleNamespace(player_a="x", player_b="y", score_a=1.0, step=10)
    as_records = fit_bradley_terry(
        [record, record, SimpleNamespace(**{**vars(record), "score_a": 0})]
    )
    as_tuples = fit_bradley_terry([("x", "y", 1.0), ("x", "y", 1.0), ("x", "y", 0.0)])
    assert as_records.ratings == pytest.approx(as_tuples.ratings)
    assert as_records.games_played == {"x": 3, "y": 3}


def test_anchoring_puts_the_anchor_exactly_at_its_rating_with_zero_error():
    _, games = simulate(np.random.default_rng(1), n_players=6, games_per_pair=10)
    centred = fit_bradley_terry(games)
    anchored = fit_bradley_terry(games, anchor="p3", anchor_rating=1000.0)
    assert anchored.ratings["p3"] == 1000.0
    assert anchored.std_errors["p3"] == 0.0
    assert anchored.intervals["p3"] == (1000.0, 1000.0)
    assert anchored.anchor == "p3" and centred.anchor is None
    shift = anchored.ratings["p0"] - centred.ratings["p0"]
    for player in centred.ratings:
        assert anchored.ratings[player] - centred.ratings[player] == pytest.approx(shift)
        assert anchored.std_errors[player] > 0 or player == "p3"


@st.composite
def small_histories(draw):
    n_players = draw(st.integers(2, 5))
    players = [f"p{i}" for i in range(n_players)]
    game = st.tuples(
        st.sampled_from(players), st.sampled_from(players), st.sampled_from([0.0, 0.5, 1.0])
    ).filter(lambda g: g[0] != g[1])
    return draw(st.lists(game, min_size=1, max_size=25))


@given(games=small_histories(), data=st.data())
@settings(max_examples=30, deadline=None)
def test_anchoring_only_shifts_every_rating_by_the_same_constant(games, data):
    centred = fit_bradley_terry(games)
    anchor = data.draw(st.sampled_from(sorted(centred.ratings)))
    anchored = fit_bradley_terry(games, anchor=anchor, anchor_rating=0.0)
    shifts = [anchored.ratings[p] - centred.ratings[p] for p in centred.ratings]
    assert np.allclose(shifts, shifts[0], atol=1e-6)
    assert anchored.ratings[anchor] == 0.0


@given(games=small_histories(), seed=st.integers(0, 2**16))
@settings(max_examples=30, deadline=None)
def test_the_fit_ignores_game_order_and_player_names(games, seed):
    rng = np.random.default_rng(seed)
    names = sorted({p for a, b, _ in games for p in (a, b)})
    rename = dict(zip(names, rng.permutation([f"q{i}" for i in range(len(names))]), strict=True))
    shuffled = [
        (rename[a], rename[b], s) for a, b, s in (games[i] for i in rng.permutation(len(games)))
    ]
    original = fit_bradley_terry(games)
    relabelled = fit_bradley_terry(shuffled)
    for player in names:
        assert relabelled.ratings[rename[player]] == pytest.approx(original.ratings[player])
        assert relabelled.std_errors[rename[player]] == pytest.approx(original.std_errors[player])


def test_95_percent_intervals_cover_the_true_strengths_at_about_the_nominal_rate():
    rng = np.random.default_rng(2024)
    centred_hits, anchored_hits = [], []
    for _ in range(40):
        true, games = simulate(rng, n_players=8, games_per_pair=20)
        centred = fit_bradley_terry(games, center=0.0)
        anchored = fit_bradley_terry(games, anchor="p0", anchor_rating=0.0)
        for i in range(8):
            low, high = centred.intervals[f"p{i}"]
            centred_hits.append(low <= true[i] - true.mean() <= high)
            if i:
                low, high = anchored.intervals[f"p{i}"]
                anchored_hits.append(low <= true[i] - true[0] <= high)
    assert 0.88 <= np.mean(centred_hits) <= 0.99
    assert 0.88 <= np.mean(anchored_hits) <= 0.99


def test_intervals_are_rating_plus_minus_z_standard_errors():
    _, games = simulate(np.random.default_rng(3), n_players=4, games_per_pair=10)
    wide = fit_bradley_terry(games)
    narrow = fit_bradley_terry(games, confidence=0.5)
    low, high = wide.intervals["p1"]
    assert (high - low) / 2 == pytest.approx(1.959964 * wide.std_errors["p1"], rel=1e-6)
    low, high = narrow.intervals["p1"]
    assert (high - low) / 2 == pytest.approx(0.674490 * narrow.std_errors["p1"], rel=1e-6)


def test_standard_errors_shrink_like_one_over_root_games():
    few = fit_bradley_terry([("a", "b", 1.0), ("a", "b", 0.0)] * 10, prior_games=0)
    many = fit_bradley_terry([("a", "b", 1.0), ("a", "b", 0.0)] * 40, prior_games=0)
    assert few.std_errors["a"] / many.std_errors["a"] == pytest.approx(2.0)
    # 20 even games: Var(a - b) = 1 / (20 * 0.25) logits², and a sits at (a - b) / 2 from the mean.
    assert few.std_errors["a"] == pytest.approx(400 / math.log(10) * math.sqrt(1 / 5) / 2)


def test_an_unbeaten_player_gets_a_finite_rating_from_the_prior():
    games = [("champion", "p1", 1.0)] * 20 + [("champion", "p2", 1.0)] * 20 + [("p1", "p2", 0.5)]
    result = fit_bradley_terry(games)
    assert result.converged
    assert all(
        math.isfinite(r) and math.isfinite(s)
        for r, s in zip(result.ratings.values(), result.std_errors.values(), strict=True)
    )
    assert result.table()[0].player == "champion"
    with pytest.raises(ValueError, match="prior_games > 0"):
        fit_bradley_terry(games, prior_games=0)


def test_table_lists_players_best_first_with_their_games():
    result = fit_bradley_terry([("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 1.0)])
    rows = result.table()
    assert [row.player for row in rows] == ["a", "b", "c"]
    assert rows[0].games == 2 and rows[0].low < rows[0].rating < rows[0].high
    assert "player" in result.format_table() and isinstance(result, BradleyTerryResult)
    with pytest.raises(KeyError, match="unknown player 'z'"):
        result.win_probability("a", "z")


@pytest.mark.parametrize(
    ("games", "kwargs", "message"),
    [
        ([], {}, "at least one game"),
        ([("a", "b", 1.5)], {}, r"score_a of game 'a' vs 'b' must be in \[0, 1\]"),
        ([("a", "b", float("nan"))], {}, r"must be in \[0, 1\]"),
        ([("a", "a", 1.0)], {}, "cannot play itself"),
        ([("a", "b")], {}, r"\(player_a, player_b, score_a\)"),
        ([("a", "b", 1.0)], {"anchor": "c"}, r"anchor 'c' played no games; .*\['a', 'b'\]"),
        ([("a", "b", 1.0)], {"prior_games": -1}, "prior_games must be >= 0"),
        ([("a", "b", 1.0)], {"confidence": 1.0}, r"confidence must be in \(0, 1\)"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(games, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_bradley_terry(games, **kwargs)


# --------------------------------------------------------------------------------------------------
# Team ratings (openskill)
# --------------------------------------------------------------------------------------------------


def test_team_ratings_without_openskill_name_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openskill", None)
    monkeypatch.setitem(sys.modules, "openskill.models", None)
    with pytest.raises(ImportError, match=r'pip install "sp-wrappers\[multiplayer\]"'):
        ratings_module.OpenSkillRatings()


def test_free_for_all_winners_rank_above_losers_with_openskill():
    pytest.importorskip("openskill")
    games = [([["a"], ["b"], ["c"]], [1, 2, 3])] * 10 + [[["b"], ["a"], ["c"]]] * 2
    result = ratings_module.fit_team_ratings(games)
    assert [row.player for row in result.table()] == ["a", "b", "c"]
    assert np.mean(list(result.ratings.values())) == pytest.approx(1500.0)
    assert result.games_played == {"a": 12, "b": 12, "c": 12}
    assert all(result.std_errors[p] > 0 for p in "abc")
    low, high = result.intervals["a"]
    assert low < result.ratings["a"] < high


def test_team_ratings_take_teams_ties_and_an_anchor_with_openskill():
    pytest.importorskip("openskill")
    rater = ratings_module.OpenSkillRatings()
    for _ in range(8):
        rater.update([["a", "b"], ["c", "d"]], ranks=[1, 2])
    rater.update([["a", "c"], ["b", "d"]], ranks=[1, 1])
    result = rater.result(anchor="d", anchor_rating=1000.0)
    assert result.ratings["d"] == 1000.0 and result.std_errors["d"] == 0.0
    assert min(result.ratings["a"], result.ratings["b"]) > max(result.ratings["c"], 1000.0)
    assert set(result.mu) == set(result.sigma) == {"a", "b", "c", "d"}
    with pytest.raises(ValueError, match="a player appears twice"):
        rater.update([["a"], ["a"]])
    with pytest.raises(ValueError, match="one finite rank per team"):
        rater.update([["a"], ["b"]], ranks=[1])
    with pytest.raises(ValueError, match="anchor 'zed' played no games"):
        rater.result(anchor="zed")
