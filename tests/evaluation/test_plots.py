"""Specification of the payoff plot: missing pairs are marked, game counts are shown."""

from __future__ import annotations

import numpy as np
import pytest

from sp_wrappers.evaluation.plots import _payoff_layers, plot_payoff
from sp_wrappers.evaluation.round_robin import RoundRobinResult

pytest.importorskip("matplotlib")


def matrix() -> RoundRobinResult:
    # a-b: an even match (0.5) over 4 games; a-c: 1 game; b-c: never played.
    games = [("a", "b", 1.0), ("a", "b", 0.0), ("b", "a", 0.5), ("a", "b", 0.5), ("c", "a", 1.0)]
    return RoundRobinResult.from_games(["a", "b", "c"], games)


def test_pairs_that_never_played_are_masked_and_an_even_score_is_not():
    scores, counts, unplayed = _payoff_layers(matrix())
    assert counts.tolist() == [[0, 4, 1], [4, 0, 0], [1, 0, 0]]
    assert float(scores[0, 1]) == 0.5 and not np.ma.is_masked(scores[0, 1])
    assert np.ma.is_masked(scores[1, 2]) and np.ma.is_masked(scores[2, 1])
    assert np.ma.getmaskarray(scores).tolist() == (counts == 0).tolist()
    assert unplayed.tolist() == [[False, False, False], [False, False, True], [False, True, False]]


def test_payoff_png_is_written_with_both_panels(tmp_path):
    import matplotlib.image

    path = plot_payoff(matrix(), tmp_path / "payoff.png", title="three players")
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[1] > 1.5 * image.shape[0]  # scores | counts


def test_payoff_plot_of_many_players_leaves_out_cell_text_but_still_draws(tmp_path):
    players = [f"p{k}" for k in range(20)]
    games = [(players[k], players[k + 1], 1.0) for k in range(19)]
    path = plot_payoff(RoundRobinResult.from_games(players, games), tmp_path / "big.png")
    assert (tmp_path / "big.png").stat().st_size > 0 and path.endswith("big.png")


def test_a_plot_interrupted_while_written_leaves_the_older_picture_and_nothing_partial(tmp_path):
    from sp_wrappers.evaluation.plots import new_figure, save_figure

    figure = new_figure(2.0, 2.0)
    figure.add_subplot(1, 1, 1).plot([0, 1], [1, 0])
    path = tmp_path / "ratings.png"
    save_figure(figure, path)
    older = path.read_bytes()
    real = figure.savefig

    def interrupted(target, *args, **kwargs):  # Ctrl-C half way through the write
        real(target, *args, **kwargs)
        with open(target, "r+b") as handle:
            handle.truncate(100)
        raise KeyboardInterrupt

    figure.savefig = interrupted
    with pytest.raises(KeyboardInterrupt):
        save_figure(figure, path)
    assert path.read_bytes() == older and older.startswith(b"\x89PNG")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ratings.png"]
