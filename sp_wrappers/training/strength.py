"""Strength during training: the learner against a ladder of reference players, every N steps.

Self-play ratings measure the learner against its own past; a ladder measures it against fixed
players whose strength does not move (random play, alpha-beta at depths 1, 2, 4, perfect play).
Every ``eval_every`` learner steps the callback plays the current learner, deterministically,
from every forced opening in every seat against each rung (:func:`~sp_wrappers.evaluation.openings.
play_openings`), and logs through SB3's logger (TensorBoard, CSV, stdout):

- ``eval/<rung>/score``: the learner's mean outcome against that rung (1 win, 0.5 draw);
- ``eval/rating`` and ``eval/rating_std_error``: its rating on the ladder's Bradley-Terry scale;
- with ``tactics`` on, ``eval/tactics/wins_taken``, ``eval/tactics/threats_blocked`` and
  ``eval/tactics/wins_handed``: its one-move tactics in the games against one rung
  (:func:`~sp_wrappers.evaluation.tactics.game_tactics`: the immediate wins it took, the single
  threats it blocked, the wins it handed over when a safe move existed), each share kept in the
  history with its counts.

The ladder's scale: before the first evaluation the rungs play each other from the same openings
(once per run; the games are kept in the history), the first rung is anchored at
``anchor_rating`` (1000 by default) and each evaluation fits
:func:`~sp_wrappers.ratings.elo.fit_bradley_terry` over the rungs' games plus that evaluation's
learner games. The rungs' games pin the rungs' ratings, so the learner's rating at different
steps is on one scale; with the fit's weak prior a learner that wins or loses every game still
gets a finite rating, with a wide interval.

With a ``run_dir`` the callback keeps its history in ``run_dir/strength.json`` (read back at
training start, so a resumed run continues its curve) and draws ``run_dir/plots/strength.png``:
the score against each rung, the rating with its 95% interval and the tactics shares, over
learner steps.
``strength.json``'s format: ``docs/formats.md``.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from ..core.policies import SB3Policy, is_policy
from ..core.run_layout import PLOTS_DIR
from ..core.seats import as_aec_env, seat_spaces
from ..evaluation.errors import LookAheadError
from ..evaluation.openings import legal_openings, play_openings
from ..evaluation.plots import PLOTS_HINT, new_figure, save_figure
from ..evaluation.tactics import TacticsReport, game_tactics
from ..games.registry import game_factory, reference_opponents
from ..ratings.bradley_terry import fit_bradley_terry
from .strength_history import STRENGTH_FORMAT

__all__ = [
    "StrengthCallback",
    "default_ladder",
    "plot_strength",
    "HISTORY_NAME",
    "PLOT_NAME",
    "HISTORY_FORMAT_VERSION",
]

HISTORY_NAME = "strength.json"
PLOT_NAME = "strength.png"
HISTORY_FORMAT_VERSION = 1
LEARNER = "learner"
#: The tactics shares logged and drawn (``<name>_share`` in an evaluation's ``tactics``).
TACTICS_SHARES = ("wins_taken", "threats_blocked", "wins_handed")
#: Forced opening moves per game for the registered games (9 and 49 openings).
DEFAULT_OPENING_PLIES = {"tictactoe_v3": 1, "connect_four_v3": 2}


def default_ladder(game: str) -> list[Any]:
    """The reference players a game's strength is measured against, weakest first.

    ``tictactoe_v3``: random, perfect minimax. ``connect_four_v3``: alpha-beta at depths 1, 2
    and 4. Other games: :func:`~sp_wrappers.games.registry.reference_opponents` (random first).

    >>> [p.policy_id for p in default_ladder("connect_four_v3")]
    ['alphabeta-d1', 'alphabeta-d2', 'alphabeta-d4']
    """
    from ..games.baselines import AlphaBetaConnectFourPolicy

    if game == "connect_four_v3":
        return [AlphaBetaConnectFourPolicy(depth=d) for d in (1, 2, 4)]
    return reference_opponents(game)


class StrengthCallback(BaseCallback):
    """Every ``eval_every`` learner steps, play the learner against a ladder and log its strength.

    See the module docstring for what is logged and kept. Evaluations happen at training start
    (``eval_at_start``), at the first step at or past each multiple of ``eval_every``, and at
    training end. Their games cost time: a Connect Four ladder of alpha-beta depths 1, 2 and 4
    plays 3 x 98 games per evaluation.

    :param env_fn: builds the PettingZoo game the learner plays (a zero-argument function).
    :param ladder: the reference players (``Policy`` objects with distinct ``policy_id``), the
        anchor of the rating scale first.
    :param eval_every: learner steps between evaluations.
    :param openings: the forced openings (default: every legal sequence of ``opening_plies``).
    :param opening_plies: moves per opening when ``openings`` is not given.
    :param repeats: games per opening and seat.
    :param run_dir: where ``strength.json`` and ``plots/strength.png`` go (``None``: only log).
    :param anchor_rating: the first rung's rating (Elo points).
    :param seed: the first game's reset seed (every evaluation replays the same seeds).
    :param eval_at_start: evaluate the learner before it trains.
    :param plots: draw ``plots/strength.png`` in ``run_dir`` (when matplotlib is installed).
    :param verbose: 1 prints one line per evaluation.
    :param progress: show a progress bar (tqdm, on stderr) over each evaluation's matches, which
        can take minutes on large ladders; ``None``: when stderr is a terminal.
    :param tactics: count the learner's one-move tactics in its games against a rung: ``True``
        (the first rung), a rung's ``policy_id``, or ``False`` (off). The game's state must copy
        (:func:`~sp_wrappers.evaluation.tactics.copy_game`); when it does not, a warning says so
        and the curve goes on without tactics. It replays each game and plays every move and
        reply on a copy: about 10 s of one core per evaluation for Connect Four's 98 games.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sp_wrappers.games.baselines import PerfectTicTacToePolicy
    >>> from sp_wrappers.core.policies import RandomPolicy
    >>> callback = StrengthCallback(tictactoe_v3.env, [RandomPolicy(), PerfectTicTacToePolicy()],
    ...                             eval_every=10_000)
    >>> callback.rung_ids
    ['random', 'minimax']
    """

    def __init__(
        self,
        env_fn: Callable[[], Any],
        ladder: Sequence[Any],
        eval_every: int = 100_000,
        openings: Sequence[Sequence[int]] | None = None,
        opening_plies: int = 1,
        repeats: int = 1,
        run_dir: str | os.PathLike[str] | None = None,
        anchor_rating: float = 1000.0,
        seed: int = 0,
        eval_at_start: bool = True,
        plots: bool = True,
        verbose: int = 0,
        progress: bool | None = None,
        tactics: bool | str = False,
    ) -> None:
        super().__init__(verbose)
        if int(eval_every) != eval_every or eval_every < 1:
            raise ValueError(f"eval_every must be a positive number of steps, got {eval_every!r}.")
        self.ladder = list(ladder)
        if not self.ladder or not all(is_policy(p) for p in self.ladder):
            raise ValueError(
                "ladder must list at least one policy (objects with act() and policy_id), e.g. "
                "default_ladder('connect_four_v3')."
            )
        self.rung_ids = [str(p.policy_id) for p in self.ladder]
        if len(set(self.rung_ids)) != len(self.rung_ids) or LEARNER in self.rung_ids:
            raise ValueError(
                f"The ladder's policy_ids must be distinct and not {LEARNER!r}, got "
                f"{self.rung_ids}; give each rung its own policy_id."
            )
        if tactics is True:
            tactics = self.rung_ids[0]
        if tactics is not False and tactics not in self.rung_ids:
            raise ValueError(
                f"tactics must be True, False or one of the ladder's policy_ids {self.rung_ids}, "
                f"got {tactics!r}."
            )
        #: The rung whose games the tactics are counted in (``None``: off).
        self.tactics: str | None = None if tactics is False else str(tactics)
        self.env_fn = env_fn
        self.eval_every = int(eval_every)
        self.openings = None if openings is None else [tuple(map(int, o)) for o in openings]
        self.opening_plies = opening_plies
        self.repeats = repeats
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.anchor_rating = float(anchor_rating)
        self.seed = seed
        self.eval_at_start = eval_at_start
        self.plots = plots
        self.progress = progress
        self.history: dict[str, Any] = {}
        self._next_eval = 0
        self._warned = False

    @classmethod
    def for_game(
        cls, game: str, game_kwargs: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> StrengthCallback:
        """The callback for a registered game (or import path): its :func:`default_ladder`
        and openings (one move for tic-tac-toe, two for Connect Four), and tactics against the
        first rung for those two games; ``kwargs`` as in the constructor override them."""
        kwargs.setdefault("ladder", default_ladder(game))
        kwargs.setdefault("opening_plies", DEFAULT_OPENING_PLIES.get(game, 0))
        kwargs.setdefault("tactics", game in DEFAULT_OPENING_PLIES)
        return cls(game_factory(game, game_kwargs), **kwargs)

    @property
    def history_path(self) -> Path | None:
        return None if self.run_dir is None else self.run_dir / HISTORY_NAME

    @property
    def plot_path(self) -> Path | None:
        return None if self.run_dir is None else self.run_dir / PLOTS_DIR / PLOT_NAME

    # -- SB3 hooks ---------------------------------------------------------------------------------
    def _on_training_start(self) -> None:
        self._prepare()
        steps = [e["step"] for e in self.history["evaluations"]]
        self._next_eval = (self.num_timesteps // self.eval_every + 1) * self.eval_every
        if self.eval_at_start and self.num_timesteps not in steps:
            self.evaluate()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next_eval:
            self.evaluate()
        return True

    def _on_training_end(self) -> None:
        evaluations = self.history.get("evaluations") or [{"step": None}]
        if evaluations[-1]["step"] != self.num_timesteps:
            self.evaluate()

    # -- evaluation --------------------------------------------------------------------------------
    def _prepare(self) -> None:
        """Check the model, list the openings, read the history or play the rungs' games."""
        self.num_timesteps = self.model.num_timesteps
        self._check_model_fits()
        if self.openings is None:
            self.openings = legal_openings(self.env_fn, self.opening_plies)
        if not self.history:
            self.history = self._load_or_start()

    def evaluate(self) -> dict[str, Any]:
        """Play the learner against every rung now; log, keep and plot the result (also
        callable outside ``learn`` once the callback is initialised with ``init_callback``)."""
        if not self.history:
            self._prepare()
        self.num_timesteps = self.model.num_timesteps
        start = time.perf_counter()
        learner = SB3Policy(self.model, deterministic=True, policy_id=LEARNER)
        results = {}
        with self._bar(len(self.ladder), f"strength at step {self.num_timesteps:,d}") as bar:
            for rung in self.ladder:
                bar.set_postfix_str(f"vs {rung.policy_id}")
                results[rung.policy_id] = play_openings(
                    self.env_fn, learner, rung, self.openings, repeats=self.repeats, seed=self.seed
                )
                bar.update()
        games = self._rung_games() + [
            (LEARNER, rung, g.outcome) for rung, result in results.items() for g in result.games
        ]
        fit = self._fit(games)
        record = {
            "step": int(self.num_timesteps),
            "wall_time": time.time(),
            "seconds": round(time.perf_counter() - start, 3),
            "scores": {rung: result.score for rung, result in results.items()},
            "wdl": {rung: list(result.wdl()) for rung, result in results.items()},
            "by_seat": {
                rung: {seat: list(wdl) for seat, wdl in result.by_seat().items()}
                for rung, result in results.items()
            },
            "distinct_games": {rung: result.distinct_games() for rung, result in results.items()},
            "rating": fit.ratings[LEARNER],
            "rating_std_error": fit.std_errors[LEARNER],
            "rating_interval": list(fit.intervals[LEARNER]),
        }
        if self.tactics is not None:
            tactics = self._tactics(results[self.tactics])
            if tactics is not None:
                record["tactics"] = {"opponent": self.tactics, **tactics.as_dict()}
        record["seconds"] = round(time.perf_counter() - start, 3)
        self.history["evaluations"].append(record)
        self._log(record)
        self._next_eval = (self.num_timesteps // self.eval_every + 1) * self.eval_every
        self._save()
        if self.verbose >= 1:
            scores = ", ".join(f"{r} {s:.2f}" for r, s in record["scores"].items())
            line = f"strength at step {record['step']}: {scores}; rating {record['rating']:.0f}"
            if "tactics" in record:
                line += f"; tactics vs {self.tactics}: "
                line += TacticsReport.from_dict(record["tactics"]).summary()
            print(line)
        return record

    def _tactics(self, played: Any) -> TacticsReport | None:
        """The learner's tactics in its games against the tactics rung (``None`` and a warning,
        once, when the game cannot be looked ahead in: tactics are then off)."""
        try:
            return game_tactics(self.env_fn, played, seed=self.seed)
        except LookAheadError as error:
            warnings.warn(
                f"No tactics in the strength curve: {error}", RuntimeWarning, stacklevel=3
            )
            self.tactics = None
            return None

    def _bar(self, total: int, description: str) -> Any:
        """A tqdm bar over ``total`` matches (see ``progress``)."""
        from tqdm.auto import tqdm

        disable = None if self.progress is None else not self.progress
        return tqdm(total=total, desc=description, unit="match", disable=disable, leave=False)

    def _log(self, record: dict[str, Any]) -> None:
        """Record the evaluation through SB3's logger (none before ``learn`` sets one up)."""
        logger = getattr(self.model, "_logger", None)
        if logger is None:
            return
        for rung, score in record["scores"].items():
            logger.record(f"eval/{rung}/score", score)
        logger.record("eval/rating", record["rating"])
        logger.record("eval/rating_std_error", record["rating_std_error"])
        for name in TACTICS_SHARES:
            share = (record.get("tactics") or {}).get(f"{name}_share")
            if share is not None:
                logger.record(f"eval/tactics/{name}", share)
        logger.record("time/total_timesteps", self.num_timesteps, exclude="tensorboard")
        logger.dump(self.num_timesteps)

    def _fit(self, games: list[tuple[str, str, float]]) -> Any:
        return fit_bradley_terry(
            games, anchor=self.rung_ids[0], anchor_rating=self.anchor_rating, prior_games=1.0
        )

    def _rung_games(self) -> list[tuple[str, str, float]]:
        """The rungs' games among themselves (their mean score stands in for each game: the
        Bradley-Terry likelihood depends only on games and points per pair)."""
        games = []
        for match in self.history["rung_matches"]:
            n = match["wins"] + match["draws"] + match["losses"]
            score = (match["wins"] + 0.5 * match["draws"]) / n
            games += [(match["player_a"], match["player_b"], score)] * n
        return games

    def _play_rungs(self) -> list[dict[str, Any]]:
        matches = []
        pairs = [(a, b) for i, a in enumerate(self.ladder) for b in self.ladder[i + 1 :]]
        with self._bar(len(pairs), "strength: the ladder's own games") as bar:
            for a, b in pairs:
                bar.set_postfix_str(f"{a.policy_id} vs {b.policy_id}")
                result = play_openings(
                    self.env_fn, a, b, self.openings, repeats=self.repeats, seed=self.seed
                )
                bar.update()
                wins, draws, losses = result.wdl()
                matches.append(
                    {
                        "player_a": a.policy_id,
                        "player_b": b.policy_id,
                        "games": result.n_games,
                        "wins": wins,
                        "draws": draws,
                        "losses": losses,
                    }
                )
        return matches

    def _check_model_fits(self) -> None:
        game = as_aec_env(self.env_fn())
        try:
            space, _ = seat_spaces(game, game.possible_agents[0], keep_dict_obs=False)
            name = (getattr(game, "metadata", None) or {}).get("name", "the game")
        finally:
            game.close()
        if self.model.observation_space != space:
            raise ValueError(
                f"StrengthCallback plays the learner on {name}'s seat observations {space}, but "
                f"the model observes {self.model.observation_space}. Train on "
                "SelfPlayEnv(game) without keep_dict_obs, or give the callback the env_fn of the "
                "game the model learns."
            )

    # -- history -----------------------------------------------------------------------------------
    def _header(self) -> dict[str, Any]:
        return {
            "format_version": HISTORY_FORMAT_VERSION,
            "ladder": self.rung_ids,
            "anchor_rating": self.anchor_rating,
            "openings": [list(o) for o in self.openings or []],
            "repeats": self.repeats,
            "seed": self.seed,
        }

    def _load_or_start(self) -> dict[str, Any]:
        header = self._header()
        path = self.history_path
        if path is not None and path.exists():
            data = STRENGTH_FORMAT.read(path)
            changed = sorted(k for k in header if data.get(k) != header[k])
            if changed:
                raise ValueError(
                    f"{path} holds the strength history of another ladder or openings (its "
                    f"{changed} differ); move it away, or pass another run_dir, to measure "
                    "against this ladder."
                )
            if self.num_timesteps == 0:  # a fresh learner: the old curve is another run's
                data["evaluations"] = []
            else:  # a resumed run: drop what a longer, discarded run measured after this step
                data["evaluations"] = [
                    e for e in data["evaluations"] if e["step"] <= self.num_timesteps
                ]
            return data
        data = dict(header, rung_matches=[], ladder_ratings={}, evaluations=[])
        self.history = data
        start = time.perf_counter()
        data["rung_matches"] = self._play_rungs()
        data["ladder_seconds"] = round(time.perf_counter() - start, 3)
        rung_games = self._rung_games()
        data["ladder_ratings"] = (
            self._fit(rung_games).ratings if rung_games else {self.rung_ids[0]: self.anchor_rating}
        )
        return data

    def _save(self) -> None:
        if self.run_dir is None:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        STRENGTH_FORMAT.write(self.history_path, self.history, indent=1)
        if not self.plots:
            return
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            if not self._warned:
                message = f"No {PLOT_NAME}: matplotlib is not installed ({PLOTS_HINT})."
                warnings.warn(message, RuntimeWarning, stacklevel=2)
                self._warned = True
            return
        self.plot_path.parent.mkdir(exist_ok=True)
        plot_strength(self.history, self.plot_path)


def plot_strength(
    history: Mapping[str, Any], path: str | os.PathLike[str], title: str | None = None
) -> str:
    """Draw a strength history (what ``strength.json`` holds) as a PNG: the learner's score
    against each rung (top) and its ladder rating with its interval (bottom), by learner step;
    dashed lines mark the rungs' ratings fitted on their games among themselves.

    :param history: the callback's ``history`` or the parsed ``strength.json``.
    :param path: the PNG file to write.
    :param title: the figure title.
    :return: the path written.

    >>> import tempfile
    >>> history = {"ladder": ["random", "minimax"], "ladder_ratings": {"random": 1000.0,
    ...            "minimax": 1500.0}, "evaluations": [{"step": 0, "rating": 1100.0,
    ...            "rating_interval": [1000.0, 1200.0], "scores": {"random": 0.6, "minimax": 0.1}}]}
    >>> path = plot_strength(history, os.path.join(tempfile.mkdtemp(), PLOT_NAME))
    >>> os.path.getsize(path) > 0
    True
    """
    evaluations = history.get("evaluations", [])
    with_tactics = [e for e in evaluations if e.get("tactics")]
    figure = new_figure(7.0, 9.0 if with_tactics else 6.5)
    axes = figure.subplots(3 if with_tactics else 2, 1, sharex=True)
    scores_axes, rating_axes = axes[0], axes[1]
    steps = [e["step"] for e in evaluations]
    for rung in history["ladder"]:
        scores_axes.plot(steps, [e["scores"][rung] for e in evaluations], "o-", label=rung)
    scores_axes.set_ylim(-0.03, 1.03)
    scores_axes.set_ylabel("learner's score (win 1, draw 0.5)")
    scores_axes.grid(True, alpha=0.3)
    scores_axes.legend(loc="best", fontsize="small", title="against")
    if evaluations:
        low = [e["rating_interval"][0] for e in evaluations]
        high = [e["rating_interval"][1] for e in evaluations]
        rating_axes.fill_between(steps, low, high, alpha=0.2, label="95% interval")
        rating_axes.plot(steps, [e["rating"] for e in evaluations], "o-", label="learner")
    for rung, rating in history.get("ladder_ratings", {}).items():
        rating_axes.axhline(rating, linestyle="--", linewidth=1, color="0.5")
        rating_axes.annotate(rung, (0, rating), xycoords=("axes fraction", "data"), fontsize=7)
    rating_axes.set_ylabel("rating (ladder's Bradley-Terry scale)")
    rating_axes.grid(True, alpha=0.3)
    rating_axes.legend(loc="best", fontsize="small")
    if with_tactics:
        _plot_tactics(axes[2], with_tactics)
    axes[-1].set_xlabel("learner steps")
    anchor = history["ladder"][0]
    figure.suptitle(
        title
        or f"Strength against the ladder ({anchor} = {history.get('anchor_rating', 1000.0):.0f})"
    )
    figure.tight_layout()
    return save_figure(figure, path)


def _plot_tactics(axes: Any, evaluations: Sequence[Mapping[str, Any]]) -> None:
    """The tactics shares by learner step (an empty share, NaN, leaves a gap)."""
    labels = {
        "wins_taken": "immediate wins taken",
        "threats_blocked": "single threats blocked",
        "wins_handed": "wins handed over (lower is better)",
    }
    steps = [e["step"] for e in evaluations]
    for name in TACTICS_SHARES:
        shares = [e["tactics"].get(f"{name}_share") for e in evaluations]
        values = [math.nan if v is None else v for v in shares]
        axes.plot(steps, values, "o-", label=labels[name])
    axes.set_ylim(-0.03, 1.03)
    opponent = evaluations[-1]["tactics"].get("opponent", "a rung")
    axes.set_ylabel(f"share (games vs {opponent})")
    axes.grid(True, alpha=0.3)
    axes.legend(loc="best", fontsize="small", title="one-move tactics")
