"""A learned best response: how much a fresh learner wins against a frozen policy when it trains
against nothing else (approximate exploitability, Timbers et al., "Approximate exploitability:
learning a best response", IJCAI 2022).

Where the game tree is too big to walk (Connect Four), exact exploitability
(:func:`~sp_wrappers.evaluation.exploitability.exploitability`) is out of reach; what remains is
to train an exploiter: a fresh learner whose only opponent is the target, a snapshot or a
mixture of snapshots played one member per game (:class:`~sp_wrappers.MixturePolicy`), frozen
for the whole training. :func:`learned_best_response` trains it for ``steps`` learner steps in a
:class:`~sp_wrappers.SelfPlayVecEnv` whose opponent is always the target, and measures it from
the game's forced openings in both seats (:func:`~sp_wrappers.evaluation.openings.play_openings`,
the exploiter greedy; several games per opening where the target or the game draws at random)
at the start and every ``steps / evaluations`` steps: the score (1 win, 0.5 draw, 0 loss) with a
95% interval resampling openings, and the curve.

The score is a **lower bound on exploitability**: the best response does at least as well as
this exploiter, and a short training may find much less than it. An exploiter that wins says the
target is beatable; one that does not proves nothing.

>>> print(LOWER_BOUND)
a lower bound on exploitability: a best response does at least this well
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from ..core.policies import SB3Policy
from ..evaluation.openings import OpeningsResult, legal_openings, play_openings
from ..opponents.mixture import MixturePolicy

__all__ = [
    "learned_best_response",
    "BestResponseResult",
    "BestResponseCurve",
    "LOWER_BOUND",
    "stochastic_policy",
]

#: What every printed learned-best-response score says about itself.
LOWER_BOUND = "a lower bound on exploitability: a best response does at least this well"


def stochastic_policy(policy: Any) -> bool:
    """Whether ``policy`` may answer one position in more than one way, as far as can be told: a
    mixture of several members (drawn per game), or any policy not known to play one move (an
    SB3 policy with ``deterministic`` true, a bot with ``tie_break="first"``).

    >>> from sp_wrappers.core.policies import RandomPolicy
    >>> from sp_wrappers.games.baselines import PerfectTicTacToePolicy
    >>> stochastic_policy(RandomPolicy()), stochastic_policy(PerfectTicTacToePolicy())
    (True, True)
    >>> stochastic_policy(PerfectTicTacToePolicy(tie_break="first"))
    False
    """
    if isinstance(policy, MixturePolicy):
        return len(policy.members) > 1 or stochastic_policy(policy.members[0])
    if getattr(policy, "tie_break", None) == "first":
        return False
    return getattr(policy, "deterministic", None) is not True


def _point(step: int, result: OpeningsResult, seconds: float) -> dict[str, Any]:
    wins, draws, losses = result.wdl()
    low, high = result.bootstrap("score")
    return {
        "step": int(step),
        "score": result.score,
        "score_ci95": [low, high],
        "mean_return": result.mean_return,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "games": result.n_games,
        "by_seat": {seat: list(wdl) for seat, wdl in result.by_seat().items()},
        "seconds": round(seconds, 3),
    }


class BestResponseCurve(BaseCallback):
    """Measure the learner against a target from forced openings at training start and every
    ``every`` learner steps, and at training end; keep the points in :attr:`curve`.

    :param env_fn: builds the PettingZoo game.
    :param target: the frozen policy the learner is measured against.
    :param every: learner steps between measurements.
    :param openings: the forced openings (:func:`~sp_wrappers.evaluation.openings.legal_openings`).
    :param repeats: games per opening and seat.
    :param seed: the first game's reset seed (the same games at every measurement).
    :param verbose: 1 prints one line per measurement.
    """

    def __init__(
        self,
        env_fn: Callable[[], Any],
        target: Any,
        every: int,
        openings: Sequence[Sequence[int]],
        repeats: int = 1,
        seed: int = 0,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if every < 1:
            raise ValueError(f"every must be a positive number of learner steps, got {every!r}.")
        self.env_fn = env_fn
        self.target = target
        self.every = int(every)
        self.openings = [tuple(o) for o in openings]
        self.repeats = int(repeats)
        self.seed = int(seed)
        self.curve: list[dict[str, Any]] = []
        self.last: OpeningsResult | None = None
        self._next = 0

    def measure(self) -> OpeningsResult:
        """Play the openings now (the learner greedy), add the point to the curve, return it."""
        start = time.perf_counter()
        learner = SB3Policy(self.model, deterministic=True, copy_weights=False)
        learner.policy_id = "exploiter"
        result = play_openings(
            self.env_fn, learner, self.target, self.openings, repeats=self.repeats, seed=self.seed
        )
        point = _point(self.num_timesteps, result, time.perf_counter() - start)
        self.curve.append(point)
        self.last = result
        if self.verbose >= 1:
            print(f"step {point['step']:,d}: exploiter score {point['score']:.3f} ({LOWER_BOUND})")
        return result

    def _on_training_start(self) -> None:
        self._next = self.num_timesteps + self.every
        self.measure()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self.measure()
            self._next = (self.num_timesteps // self.every + 1) * self.every
        return True

    def _on_training_end(self) -> None:
        if not self.curve or self.curve[-1]["step"] != self.num_timesteps:
            self.measure()


@dataclass
class BestResponseResult:
    """What :func:`learned_best_response` found.

    :param target: the target's ``policy_id``.
    :param steps: learner steps the exploiter trained.
    :param openings: its final games from the forced openings.
    :param curve: one point per measurement (``step``, ``score``, ``score_ci95``,
        ``mean_return``, ``wins``, ``draws``, ``losses``, ``games``, ``by_seat``, ``seconds``).
    :param seconds: wall time of training and measuring, in seconds.
    :param model: the trained exploiter (an SB3 model).

    >>> from sp_wrappers.evaluation.openings import OpeningGame
    >>> games = [OpeningGame((0,), "x", 0, 1.0, 1.0, -1.0, (0,)),
    ...          OpeningGame((0,), "o", 0, 0.5, 0.0, 0.0, (0,))]
    >>> result = BestResponseResult("minimax", 1000, OpeningsResult("exploiter", "minimax", games))
    >>> print(result.summary().splitlines()[0])
    Learned best response against minimax after 1,000 steps: score 0.750 (1-1-0 in 2 games)
    """

    target: str
    steps: int
    openings: OpeningsResult
    curve: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    model: Any = field(default=None, repr=False)

    @property
    def score(self) -> float:
        """The exploiter's mean outcome (1 win, 0.5 draw, 0 loss) in its final games."""
        return self.openings.score

    @property
    def interval(self) -> tuple[float, float]:
        """95% interval of :attr:`score`, resampling whole openings."""
        return self.openings.bootstrap("score")

    def summary(self) -> str:
        """A few lines for a person; the first names the score, the last says what it bounds."""
        wins, draws, losses = self.openings.wdl()
        low, high = self.interval
        lines = [
            f"Learned best response against {self.target} after {self.steps:,d} steps: score "
            f"{self.score:.3f} ({wins}-{draws}-{losses} in {self.openings.n_games} games)",
            f"  95% interval {low:.3f}-{high:.3f} (resampling openings); per seat "
            + ", ".join(f"{s} {w}-{d}-{lo}" for s, (w, d, lo) in self.openings.by_seat().items()),
        ]
        if len(self.curve) > 1:
            lines.append(
                "  curve: " + ", ".join(f"{p['step']:,d} {p['score']:.3f}" for p in self.curve)
            )
        lines.append(f"  This is {LOWER_BOUND}.")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (no model, no per-game list)."""
        low, high = self.interval
        return {
            "target": self.target,
            "steps": int(self.steps),
            "score": self.score,
            "score_ci95": [low, high],
            "bound": LOWER_BOUND,
            "final": self.openings.summary(),
            "curve": list(self.curve),
            "seconds": round(self.seconds, 3),
        }


def learned_best_response(
    env_fn: Callable[[], Any],
    target: Any,
    model_factory: Callable[[Any], Any],
    steps: int,
    n_envs: int = 8,
    learner: str = "random",
    seed: int = 0,
    evaluations: int = 4,
    plies: int = 0,
    min_games: int = 32,
    symmetries: Any = None,
    verbose: int = 0,
) -> BestResponseResult:
    """Train a fresh learner against ``target`` alone for ``steps`` steps and measure how much it
    wins (see the module docstring): a lower bound on the target's exploitability.

    :param env_fn: builds the PettingZoo game (two seats).
    :param target: the frozen policy to exploit: a snapshot's policy, a
        :class:`~sp_wrappers.MixturePolicy`, a reference bot, any
        :class:`~sp_wrappers.Policy`. Its weights never change here.
    :param model_factory: ``model_factory(venv)`` builds the fresh SB3 learner on the training
        env (the run's recipe: algorithm and hyperparameters).
    :param steps: learner steps to train (SB3 may round up to whole rollouts).
    :param n_envs: game copies stepped together.
    :param learner: the exploiter's seat: ``"random"`` (both seats, drawn per game), ``"alternate"``
        or an agent name.
    :param seed: seeds the training env (copy ``i``: ``seed + i``) and the measured games.
    :param evaluations: measurements after the start, one every ``steps / evaluations`` steps.
    :param plies: forced opening moves of the measurements (0: ordinary games).
    :param min_games: where the target or the game draws at random (a mixture, a sampling
        policy, or a single opening), each opening is played in each seat often enough for at
        least this many games.
    :param symmetries: as :class:`~sp_wrappers.SelfPlayVecEnv` takes them (``"auto"``: the
        board's symmetries; ``None``: the real view).
    :param verbose: 1 prints one line per measurement.

    >>> from pettingzoo.classic import tictactoe_v3
    >>> from sb3_contrib import MaskablePPO
    >>> from sp_wrappers.games.baselines import PerfectTicTacToePolicy
    >>> result = learned_best_response(tictactoe_v3.env, PerfectTicTacToePolicy(),
    ...     lambda venv: MaskablePPO("MlpPolicy", venv, n_steps=32, seed=0), steps=64, n_envs=2,
    ...     evaluations=1, plies=1)
    >>> result.openings.wdl()[0]  # perfect play: the exploiter never wins
    0
    """
    from ..envs.vector.factory import make_selfplay_vec_env

    if steps < 1:
        raise ValueError(f"steps must be at least 1 learner step, got {steps!r}.")
    if evaluations < 1:
        raise ValueError(f"evaluations must be at least 1, got {evaluations!r}.")
    start = time.perf_counter()
    openings = legal_openings(env_fn, plies)
    random_games = stochastic_policy(target) or len(openings) == 1
    repeats = max(1, math.ceil(min_games / (2 * len(openings)))) if random_games else 1
    venv = make_selfplay_vec_env(
        env_fn,
        n_envs=int(n_envs),
        seed=int(seed),
        learner=learner,
        opponent=target,
        symmetries=symmetries,
    )
    try:
        model = model_factory(venv)
        curve = BestResponseCurve(
            env_fn,
            target,
            every=max(1, int(steps) // int(evaluations)),
            openings=openings,
            repeats=repeats,
            seed=seed,
            verbose=verbose,
        )
        model.learn(int(steps), callback=curve, progress_bar=False)
    finally:
        venv.close()
    assert curve.last is not None  # measured at the end of training
    return BestResponseResult(
        target=str(getattr(target, "policy_id", type(target).__name__)),
        steps=int(model.num_timesteps),
        openings=curve.last,
        curve=curve.curve,
        seconds=time.perf_counter() - start,
        model=model,
    )
