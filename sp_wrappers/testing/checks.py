"""One call that checks a PettingZoo game works with self-play: :func:`check_selfplay`.

PettingZoo's ``api_test`` checks that a game keeps the PettingZoo API; this checks the rest of
what self-play needs, in the order it is used, and stops at the first problem with a
:class:`SelfPlayCheckError` that names the seat and what to fix. Each step is a public function
of its own, calling the libraries' checkers where they have one:

1. :func:`check_pettingzoo_api`: PettingZoo's ``api_test`` (or ``parallel_api_test``) and
   :func:`check_seeding`: its ``seed_test`` (``parallel_seed_test``), unless ``api=False``;
2. :func:`check_seats`: every seat as the learner of a :class:`~sp_wrappers.SelfPlayEnv` against
   random opponents: observations inside the learner's space, finite rewards, legal moves per
   the mask, every episode ending with an outcome in ``[0, 1]``;
3. :func:`check_gymnasium_env`: Gymnasium's and Stable-Baselines3's env checkers on that
   :class:`~sp_wrappers.SelfPlayEnv`;
4. :func:`check_vec_env`: two copies in a :class:`~sp_wrappers.SelfPlayVecEnv` (SB3's ``VecEnv``
   contract: a ``terminal_observation`` in the info of each finished episode);
5. :func:`check_learner`: a tiny Stable-Baselines3 learner trained by self-play with a
   :class:`~sp_wrappers.SelfPlayCallback` (PPO, or sb3-contrib's MaskablePPO for a game with
   masks) whose snapshot is saved, loaded back from the archive and played against a random
   player, unless ``learner_steps=0``.

>>> from sp_wrappers.testing import check_selfplay
>>> from sp_wrappers.testing.games import RaceGame
>>> report = check_selfplay(lambda: RaceGame(n_players=3, target=6), learner_steps=128)
>>> report.seats, report.snapshots >= 1
(['player_0', 'player_1', 'player_2'], True)
"""

from __future__ import annotations

import contextlib
import io
import math
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import SpWrappersError

__all__ = [
    "check_selfplay",
    "check_pettingzoo_api",
    "check_seeding",
    "check_seats",
    "check_gymnasium_env",
    "check_vec_env",
    "check_learner",
    "SelfPlayReport",
    "SelfPlayCheckError",
]


class SelfPlayCheckError(SpWrappersError, AssertionError):
    """A game that does not work with self-play; the message names the seat and the fix."""


@dataclass(frozen=True)
class SelfPlayReport:
    """What :func:`check_selfplay` checked.

    :param game: the game's ``metadata["name"]`` (or its class name).
    :param seats: the seats that were each the learner.
    :param episodes: the learner episodes played with random moves (all seats together).
    :param mean_length: their mean length, in learner moves.
    :param snapshots: snapshots the tiny learner saved (0 when it did not run).
    :param matches: games in its archive's match history.
    """

    game: str
    seats: list[str]
    episodes: int
    mean_length: float
    snapshots: int
    matches: int


def _legal_action(env: Any, rng: np.random.Generator) -> Any:
    """A random move of the learner, legal per the env's mask where it has one."""
    space = env.action_space
    masks = getattr(env, "action_masks", None)
    if masks is not None and hasattr(space, "n"):
        legal = np.flatnonzero(masks())
        if legal.size == 0:
            raise SelfPlayCheckError(
                "The learner's action mask allows no move; a seat whose turn it is must have a "
                "legal move."
            )
        return int(rng.choice(legal))
    return space.sample()


def _name(game: Any) -> str:
    return str(getattr(game, "metadata", {}).get("name") or type(game).__name__)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The checkers' printing and advice on style (warnings), which are not about the API."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def check_pettingzoo_api(env_fn: Callable[[], Any], num_cycles: int = 100) -> None:
    """PettingZoo's ``api_test`` (``parallel_api_test`` for a ``ParallelEnv``) on a fresh game.

    :param env_fn: builds the game.
    :param num_cycles: the test's steps.
    :raises SelfPlayCheckError: the game breaks PettingZoo's API.
    """
    from pettingzoo import ParallelEnv
    from pettingzoo.test import api_test, parallel_api_test

    game = env_fn()
    try:
        with _quiet():
            test = parallel_api_test if isinstance(game, ParallelEnv) else api_test
            test(game, num_cycles=num_cycles)
    except AssertionError as error:
        raise SelfPlayCheckError(
            f"{_name(game)} fails PettingZoo's api_test: {error or type(error).__name__}. Fix "
            "the game's PettingZoo API first (pettingzoo.test.api_test shows where)."
        ) from error
    finally:
        game.close()


def check_seeding(env_fn: Callable[[], Any], num_cycles: int = 100) -> None:
    """PettingZoo's ``seed_test`` (``parallel_seed_test``): two games reset with one seed play
    the same (self-play's seeded envs and replays rely on it).

    :param env_fn: builds the game.
    :param num_cycles: the test's steps.
    :raises SelfPlayCheckError: the same seed gave two different games.
    """
    from pettingzoo import ParallelEnv
    from pettingzoo.test import parallel_seed_test, seed_test

    game = env_fn()
    parallel, name = isinstance(game, ParallelEnv), _name(game)
    game.close()
    try:
        with _quiet():
            (parallel_seed_test if parallel else seed_test)(env_fn, num_cycles=num_cycles)
    except AssertionError as error:
        raise SelfPlayCheckError(
            f"{name} fails PettingZoo's seed_test: {error or type(error).__name__}. Draw every "
            "random choice from the generator reset(seed=...) seeds (self.np_random)."
        ) from error


def check_gymnasium_env(env_fn: Callable[[], Any], seat: str) -> None:
    """Gymnasium's and Stable-Baselines3's env checkers on the :class:`~sp_wrappers.SelfPlayEnv`
    of the learner in ``seat`` (spaces, reset and step signatures, seeding, dtypes).

    :param env_fn: builds the game.
    :param seat: the learner's seat.
    :raises SelfPlayCheckError: a checker's complaint, naming the checker.
    """
    from gymnasium.utils.env_checker import check_env as gymnasium_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    from ..envs.selfplay_env import SelfPlayEnv

    for checker, library in ((gymnasium_check, "Gymnasium"), (sb3_check, "Stable-Baselines3")):
        env = SelfPlayEnv(env_fn(), learner=seat)
        try:
            with _quiet():
                checker(env)
        except (AssertionError, ValueError, TypeError) as error:
            raise SelfPlayCheckError(
                f"Seat {seat!r}: {library}'s env checker refuses the self-play env: {error}"
            ) from error
        finally:
            env.close()


def check_seats(
    env_fn: Callable[[], Any], episodes: int = 4, max_moves: int = 10_000, seed: int = 0
) -> list[int]:
    """Every seat as the learner of a :class:`~sp_wrappers.SelfPlayEnv` against random
    opponents, ``episodes`` random-move episodes each; their lengths in learner moves.

    :raises SelfPlayCheckError: the first problem, naming the seat and the fix.
    """
    game = env_fn()
    seats = list(game.possible_agents)
    game.close()
    lengths = []
    for index, seat in enumerate(seats):
        lengths += _play_seat(env_fn, seat, episodes, max_moves, seed + 1000 * index)
    return lengths


def _play_seat(env_fn: Callable[[], Any], seat: str, episodes: int, max_moves: int, seed: int):
    from ..envs.selfplay_env import SelfPlayEnv

    env = SelfPlayEnv(env_fn(), learner=seat)
    rng = np.random.default_rng(seed)
    lengths = []
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        for moves in range(1, max_moves + 1):
            if not env.observation_space.contains(obs):
                raise SelfPlayCheckError(
                    f"Seat {seat!r}: an observation is outside the learner's observation space "
                    f"{env.observation_space} (move {moves}); give the game's observation_space "
                    "the shape, dtype and bounds its observations have."
                )
            obs, reward, terminated, truncated, info = env.step(_legal_action(env, rng))
            if not math.isfinite(float(reward)):
                raise SelfPlayCheckError(f"Seat {seat!r}: reward {reward!r} is not finite.")
            if terminated or truncated:
                outcome = info.get("selfplay", {}).get("outcome")
                if outcome is None or not 0.0 <= float(outcome) <= 1.0:
                    raise SelfPlayCheckError(
                        f"Seat {seat!r}: the episode ended with outcome {outcome!r}, not a "
                        "number in [0, 1]; pass SelfPlayEnv an outcome_fn for this game."
                    )
                lengths.append(moves)
                break
        else:
            raise SelfPlayCheckError(
                f"Seat {seat!r}: an episode did not end in {max_moves} learner moves; end the "
                "game (terminations or truncations) or raise max_moves."
            )
    env.close()
    return lengths


def check_vec_env(
    env_fn: Callable[[], Any], learner: str = "random", max_moves: int = 10_000, seed: int = 0
) -> None:
    """Two copies in a :class:`~sp_wrappers.SelfPlayVecEnv` finish two episodes, each with a
    ``terminal_observation`` (SB3's ``VecEnv`` contract).

    :raises SelfPlayCheckError: what broke.
    """
    from ..envs.vector.vec_env import SelfPlayVecEnv

    env = SelfPlayVecEnv(env_fn, n_envs=2, learner=learner)
    env.seed(seed)
    env.reset()  # the learner moves in every copy after a reset
    rng = np.random.default_rng(seed)
    finished = 0
    for _ in range(max_moves):
        masks = env.action_masks() if hasattr(env.action_space, "n") else None
        if masks is not None:
            actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])
        else:
            actions = np.array([env.action_space.sample() for _ in range(env.num_envs)])
        _, _, dones, infos = env.step(actions)
        for done, info in zip(dones, infos, strict=True):
            if done and "terminal_observation" not in info:
                raise SelfPlayCheckError(
                    "SelfPlayVecEnv ended an episode without a terminal_observation."
                )
        finished += int(np.sum(dones))
        if finished >= 2:
            env.close()
            return
    env.close()
    raise SelfPlayCheckError(
        f"Two copies in a SelfPlayVecEnv finished no two episodes in {max_moves} steps."
    )


def check_learner(
    env_fn: Callable[[], Any], learner: str = "random", steps: int = 256, seed: int = 0
) -> tuple[int, int]:
    """A tiny SB3 learner trained ``steps`` by self-play, its snapshot saved, loaded back and
    played against a random player; the archive's snapshots and matches.

    :raises SelfPlayCheckError: no snapshot was saved.
    """
    from stable_baselines3 import PPO

    from ..archive.store import SnapshotArchive
    from ..core.policies import RandomPolicy
    from ..envs.vector.vec_env import SelfPlayVecEnv
    from ..evaluation.match import play_match
    from ..training.callbacks import SelfPlayCallback

    env = SelfPlayVecEnv(env_fn, n_envs=2, learner=learner)
    algo: Any = PPO
    if hasattr(env.action_space, "n"):  # the env's masks (all moves legal in a game without)
        with contextlib.suppress(ImportError):
            from sb3_contrib import MaskablePPO

            algo = MaskablePPO
    policy = "MultiInputPolicy" if hasattr(env.observation_space, "spaces") else "MlpPolicy"
    n_steps = max(8, steps // 4)
    with tempfile.TemporaryDirectory() as folder:
        archive = SnapshotArchive(folder)
        model = algo(
            policy,
            env,
            n_steps=n_steps,
            batch_size=n_steps,
            n_epochs=1,
            seed=seed,
            device="cpu",
            policy_kwargs={"net_arch": [16]},
        )
        callback = SelfPlayCallback(archive, save_every=max(1, steps // 2))
        model.learn(steps, callback=callback)
        env.close()
        latest = archive.latest()
        if latest is None:
            raise SelfPlayCheckError(f"Training {steps} steps saved no snapshot to the archive.")
        seats = (
            {"swap_seats": True} if learner == "random" else {"swap_seats": False, "seat": learner}
        )
        play_match(
            env_fn, latest.id, RandomPolicy(), n_games=2, archive=archive, seed=seed, **seats
        )
        counts = len(archive.snapshots()), archive.n_matches()
        archive.close()
    return counts


def check_selfplay(
    env_fn: Callable[[], Any],
    *,
    episodes: int = 4,
    learner_steps: int = 256,
    max_moves: int = 10_000,
    api: bool = True,
    seed: int = 0,
) -> SelfPlayReport:
    """Check that the game ``env_fn`` builds works with self-play (see the module's list).

    :param env_fn: a zero-argument function returning a fresh PettingZoo ``AECEnv`` or
        ``ParallelEnv`` (a game class, ``tictactoe_v3.env``).
    :param episodes: random-move episodes played with each seat as the learner.
    :param learner_steps: learner steps of the tiny SB3 learner (0: skip that check).
    :param max_moves: learner moves an episode may take before the check says it never ends.
    :param api: run PettingZoo's ``api_test`` and ``seed_test`` first.
    :param seed: the seed of every random choice, so a failure repeats.
    :raises SelfPlayCheckError: the first problem found, with what to fix.
    """
    game = env_fn()
    name, seats = _name(game), list(game.possible_agents)
    same = len({(str(game.observation_space(s)), str(game.action_space(s))) for s in seats}) == 1
    game.close()
    if api:
        check_pettingzoo_api(env_fn)
        check_seeding(env_fn)
    lengths = check_seats(env_fn, episodes, max_moves, seed)
    learner = "random" if same else seats[0]  # seats with other spaces need a learner each
    for seat in seats if not same else seats[:1]:
        check_gymnasium_env(env_fn, seat)
    check_vec_env(env_fn, learner, max_moves, seed)
    snapshots = matches = 0
    if learner_steps > 0:
        snapshots, matches = check_learner(env_fn, learner, learner_steps, seed)
    return SelfPlayReport(
        game=name,
        seats=seats,
        episodes=len(lengths),
        mean_length=float(np.mean(lengths)),
        snapshots=snapshots,
        matches=matches,
    )
