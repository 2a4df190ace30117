"""Compatibility matrix: which PettingZoo games sp_wrappers drives as they are, and what to do
for the others.

For every environment in ``pettingzoo.classic``, the two- and four-player ``pettingzoo.atari``
games on RAM observations, ``pettingzoo.butterfly``, ``mpe2`` and the two-player OpenSpiel games
that Shimmy exposes (through :func:`sp_wrappers.games.adapters.openspiel_env`), one row each:

- API (AEC or Parallel, the one the row drives), seats, masks (in the observation, in ``info``
  or none), and the learner seat (``"random"``, or a fixed seat when the seats' spaces differ);
- Gymnasium's and SB3's env checkers on ``SelfPlayEnv`` and on one copy of ``SelfPlayVecEnv``
  (seen as a Gymnasium env by :class:`OneCopy`);
- seeding: a seeded env replays the same observations over several episodes;
- 1,000 steps of random legal play in each env, with ``info["selfplay"]`` at every episode end;
- a short self-play learning run (MaskablePPO with masks, PPO otherwise; ``SelfPlayVecEnv``,
  ``OpponentSampler`` over a ``SnapshotArchive``, ``SelfPlayCallback``) that must complete.

Usage (the full matrix takes about an hour on 2 CPU cores; rows are appended to the JSON-lines
file as they finish, so an interrupted run keeps what it measured)::

    python benchmarks/compat.py                          # every family -> docs/compatibility.md
    python benchmarks/compat.py --families classic,mpe2  # some families
    python benchmarks/compat.py --render-only            # rebuild the table from the JSON lines

``tests/games/test_compat.py`` runs :func:`check_game` on a few games of each family.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

FAMILIES = ("classic", "atari", "butterfly", "mpe2", "openspiel")
ATARI_MAX_CYCLES = 200  # frames per Atari game, so that random play finishes episodes

# Games where every seat shares the goal: there is no opponent for self-play to beat.
COOPERATIVE = {
    "hanabi_v5",
    "entombed_cooperative_v3",
    "cooperative_pong_v6",
    "knights_archers_zombies_v11",
    "pistonball_v6",
    "simple_spread_v3",
    "simple_reference_v3",
    "simple_speaker_listener_v4",
    "simple_formation_v1",
    "simple_line_v1",
    "collect_treasure_v1",
}
COOPERATIVE_FIX = (
    "cooperative: every seat shares the reward, so there is no opponent to beat; train the seats "
    "together (e.g. one shared policy with SuperSuit's pettingzoo_env_to_vec_env_v1) instead"
)
SINGLE_AGENT_FIX = (
    "single agent: refused with a message (self-play needs two seats); train on the game with "
    "SB3 directly"
)
TEAMS = {"quadrapong_v4", "volleyball_pong_v3", "foozpong_v3"}
TEAMS_NOTE = "2-vs-2: the learner's teammate is played by the opponent policy (teams: issue #11)"


@dataclass
class GameEntry:
    """One row to check: a game and how to build it."""

    name: str
    family: str
    factory: Callable[[], Any]
    cooperative: bool = False
    note: str = ""


@dataclass
class Row:
    """What :func:`check_game` measured for one game (``None``: not run, with the reason)."""

    game: str
    family: str
    api: str = ""
    seats: int = 0
    masks: str = ""
    learner: str = "random"
    env_gym: str | None = None
    env_sb3: str | None = None
    vec_gym: str | None = None
    vec_sb3: str | None = None
    seeded: str | None = None
    play_env: str | None = None
    play_vec: str | None = None
    learn: str | None = None
    seconds: float = 0.0
    status: str = ""
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------
# The games
# ------------------------------------------------------------------------------------------------


def _rom_path() -> str | None:
    try:
        import ale_py
    except ImportError:
        return None
    return os.path.join(os.path.dirname(ale_py.__file__), "roms")


def _call(module: str, function: str, **kwargs: Any) -> Any:
    return getattr(importlib.import_module(module), function)(**kwargs)


class _Factory:
    """A picklable zero-argument game constructor (worker processes rebuild games with it)."""

    def __init__(self, module: str, function: str, **kwargs: Any) -> None:
        self.module, self.function, self.kwargs = module, function, kwargs

    def __call__(self) -> Any:
        return _call(self.module, self.function, **self.kwargs)


def game_entries(families: tuple[str, ...] = FAMILIES) -> list[GameEntry]:
    """Every game of the matrix in ``families``, in table order."""
    entries: list[GameEntry] = []
    if "classic" in families:
        from pettingzoo.classic.all_modules import classic_environments

        for name in sorted(classic_environments):
            short = name.split("/")[-1]
            entries.append(
                GameEntry(
                    short,
                    "classic",
                    _Factory(f"pettingzoo.classic.{short}", "env"),
                    short in COOPERATIVE,
                )
            )
    if "atari" in families:
        from pettingzoo.atari.all_modules import atari_environments

        rom = _rom_path()
        for name in sorted(atari_environments):
            short = name.split("/")[-1]
            kwargs = {"obs_type": "ram", "max_cycles": ATARI_MAX_CYCLES}
            if rom:
                kwargs["auto_rom_install_path"] = rom
            entries.append(
                GameEntry(
                    short,
                    "atari",
                    _Factory(f"pettingzoo.atari.{short}", "parallel_env", **kwargs),
                    short in COOPERATIVE,
                    TEAMS_NOTE if short in TEAMS else "",
                )
            )
    if "butterfly" in families:
        from pettingzoo.butterfly.all_modules import butterfly_environments

        for name in sorted(butterfly_environments):
            short = name.split("/")[-1]
            entries.append(
                GameEntry(
                    short,
                    "butterfly",
                    _Factory(f"pettingzoo.butterfly.{short}", "parallel_env"),
                    short in COOPERATIVE,
                )
            )
    if "mpe2" in families:
        from mpe2.all_modules import mpe_environments

        for name in sorted(mpe_environments):
            short = name.split("/")[-1]
            entries.append(
                GameEntry(
                    short, "mpe2", _Factory(f"mpe2.{short}", "parallel_env"), short in COOPERATIVE
                )
            )
    if "openspiel" in families:
        entries.extend(openspiel_entries())
    return entries


def openspiel_entries() -> list[GameEntry]:
    """The OpenSpiel games that load with default parameters and have two players."""
    import pyspiel

    entries = []
    for game_type in sorted(pyspiel.registered_games(), key=lambda t: t.short_name):
        if not game_type.default_loadable:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                game = pyspiel.load_game(game_type.short_name)
        except Exception:  # noqa: BLE001 - a game that does not load is not exposed
            continue
        if game.num_players() != 2:
            continue
        cooperative = game.get_type().utility == pyspiel.GameType.Utility.IDENTICAL
        entries.append(
            GameEntry(
                game_type.short_name,
                "openspiel",
                _Factory(
                    "sp_wrappers.games.adapters", "openspiel_env", game_name=game_type.short_name
                ),
                cooperative,
            )
        )
    return entries


# ------------------------------------------------------------------------------------------------
# The checks
# ------------------------------------------------------------------------------------------------


class OneCopy(gym.Env):
    """One copy of a ``SelfPlayVecEnv`` seen as a Gymnasium env, for the env checkers.

    ``reset(seed=s)`` seeds the copy (``venv.seed``); an episode's last step returns the copy's
    ``terminal_observation`` (the vector env has already auto-reset).
    """

    def __init__(self, venv: Any) -> None:
        self.venv = venv
        self.observation_space = venv.observation_space
        self.action_space = venv.action_space
        self.metadata = dict(getattr(venv, "metadata", {}) or {})

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        super().reset(seed=seed)
        if seed is not None:
            self.venv.seed(seed)
        if options:
            self.venv.set_options(options)
        obs = self.venv.reset()
        return _first(obs), dict(self.venv.reset_infos[0])

    def step(self, action: Any) -> tuple:
        obs, rewards, dones, infos = self.venv.step(np.array([action]))
        info = dict(infos[0])
        if dones[0]:
            truncated = bool(info.get("TimeLimit.truncated", False))
            return (
                info.pop("terminal_observation"),
                float(rewards[0]),
                not truncated,
                truncated,
                info,
            )
        return _first(obs), float(rewards[0]), False, False, info

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()[0]

    def close(self) -> None:
        self.venv.close()


def _first(obs: Any) -> Any:
    if isinstance(obs, dict):
        return {key: value[0].copy() for key, value in obs.items()}
    row = obs[0]
    return row.copy() if isinstance(row, np.ndarray) else row


def _legal_action(space: spaces.Space, mask: np.ndarray | None, rng: np.random.Generator) -> Any:
    if isinstance(space, spaces.Discrete) and mask is not None and mask.any():
        return int(rng.choice(np.flatnonzero(mask))) + int(space.start)
    return space.sample()


def _masks(env: Any) -> np.ndarray | None:
    if not isinstance(env.action_space, spaces.Discrete):
        return None
    return np.asarray(env.action_masks(), dtype=bool)


def _short(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".replace("\n", " ").replace("|", "/")
    return text[:160]


def _run(check: Callable[[], str | None]) -> str:
    try:
        return check() or "pass"
    except Exception as error:  # noqa: BLE001 - recorded in the row
        return "FAIL " + _short(error)


def _gym_check(env: gym.Env) -> str:
    from gymnasium.utils.env_checker import check_env

    try:
        check_env(env, skip_render_check=True, skip_close_check=True)
    finally:
        env.close()
    return "pass"


def _sb3_check(env: gym.Env) -> str:
    from stable_baselines3.common.env_checker import check_env

    try:
        check_env(env, warn=False, skip_render_check=True)
    finally:
        env.close()
    return "pass"


def _random_play_env(env: Any, steps: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    episodes = 0
    try:
        env.reset(seed=seed)
        for _ in range(steps):
            action = _legal_action(env.action_space, _masks(env), rng)
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                episodes += 1
                if "selfplay" not in info:
                    raise AssertionError("an episode ended without info['selfplay']")
                if "illegal_action" in info["selfplay"]:
                    raise AssertionError("a legal action was judged illegal")
                env.reset()
    finally:
        env.close()
    return f"pass ({episodes} episodes)"


def _random_play_vec(venv: Any, steps: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    episodes = 0
    try:
        venv.seed(seed)
        venv.reset()
        discrete = isinstance(venv.action_space, spaces.Discrete)
        for _ in range(max(1, steps // venv.num_envs)):
            masks = venv.action_masks() if discrete else [None] * venv.num_envs
            actions = np.array([_legal_action(venv.action_space, m, rng) for m in masks])
            _, _, dones, infos = venv.step(actions)
            for done, info in zip(dones, infos, strict=True):
                if done:
                    episodes += 1
                    if "selfplay" not in info or "terminal_observation" not in info:
                        raise AssertionError("an episode ended without info['selfplay']")
    finally:
        venv.close()
    return f"pass ({episodes} episodes)"


def _fingerprint(obs: Any) -> Any:
    if isinstance(obs, dict):
        return tuple((key, _fingerprint(value)) for key, value in sorted(obs.items()))
    if isinstance(obs, str):
        return obs
    return np.asarray(obs).tobytes()


def _seeded_replay(make_env: Callable[[], Any], steps: int = 200) -> str:
    """A seeded env replays the same observations over several episodes (unseeded resets)."""
    runs = []
    for _ in range(2):
        env = make_env()
        rng = np.random.default_rng(1)
        seen = []
        try:
            obs, _ = env.reset(seed=7)
            seen.append(_fingerprint(obs))
            for _ in range(steps):
                obs, _, terminated, truncated, _ = env.step(
                    _legal_action(env.action_space, _masks(env), rng)
                )
                seen.append(_fingerprint(obs))
                if terminated or truncated:
                    obs, _ = env.reset()
                    seen.append(_fingerprint(obs))
        finally:
            env.close()
        runs.append(seen)
    if runs[0] == runs[1]:
        return "yes"
    return "no: the game ignores reset(seed=...)"


def _learn(entry: GameEntry, learner: str, masks: bool, steps: int, dict_obs: bool) -> str:
    import torch
    from stable_baselines3 import PPO

    from sp_wrappers import OpponentSampler, SelfPlayCallback, SelfPlayVecEnv, SnapshotArchive

    torch.set_num_threads(1)
    if masks:
        from sb3_contrib import MaskablePPO as algo
    else:
        algo = PPO
    with tempfile.TemporaryDirectory() as tmp:
        archive = SnapshotArchive(os.path.join(tmp, "archive"))
        # Snapshots of a fixed seat cannot fill seats whose spaces differ: random opponents there.
        opponent = OpponentSampler(archive, seed=0) if learner == "random" else None
        venv = SelfPlayVecEnv(entry.factory, n_envs=4, learner=learner, opponent=opponent)
        try:
            model = algo(
                "MultiInputPolicy" if dict_obs else "MlpPolicy",
                venv,
                n_steps=max(8, min(128, steps // 4)),  # 4 copies: 512 steps a rollout at most
                batch_size=max(8, min(128, steps)),
                n_epochs=2,
                seed=0,
                device="cpu",
            )
            callback = SelfPlayCallback(archive, save_every=max(1, steps // 2))
            model.learn(steps, callback=callback)
            snapshots = len(archive.snapshots())
        finally:
            venv.close()
    name = algo.__name__
    return f"pass ({name}, {steps} steps" + (f", {snapshots} snapshots)" if snapshots else ")")


class _Timeout(BaseException):  # not caught by the per-check handler
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout("the row took too long")


def check_game(
    entry: GameEntry,
    random_steps: int = 1000,
    learn_steps: int = 2048,
    time_limit: int = 600,
) -> Row:
    """Run every check of the matrix on one game and return its row."""
    row = Row(entry.name, entry.family)
    row.notes = [entry.note] if entry.note else []
    start = time.perf_counter()
    old = signal.signal(signal.SIGALRM, _alarm) if time_limit else None
    if time_limit:
        signal.alarm(time_limit)
    try:
        _check_into(row, entry, random_steps, learn_steps)
    except _Timeout:
        row.status = "fails"
        row.notes.append(f"stopped after {time_limit} s")
    except Exception as error:  # noqa: BLE001 - the game could not even be built
        single = "at least two seats" in str(error)
        row.status = "n/a" if single else "fails"
        row.notes.append(SINGLE_AGENT_FIX if single else _short(error))
    finally:
        if time_limit:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    row.seconds = round(time.perf_counter() - start, 1)
    return row


def _check_into(row: Row, entry: GameEntry, random_steps: int, learn_steps: int) -> None:
    from pettingzoo.utils.env import ParallelEnv

    from sp_wrappers import SelfPlayEnv, SelfPlayVecEnv
    from sp_wrappers.core.seats import as_aec_env, seat_spaces
    from sp_wrappers.envs.selfplay_env import resolve_learner_seats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = entry.factory()
        row.api = "Parallel" if isinstance(game, ParallelEnv) else "AEC"
        aec = as_aec_env(game)
        agents = list(aec.possible_agents)
        row.seats = len(agents)
        obs_space, action_space = seat_spaces(aec, agents[0], False)
        raw_space = aec.observation_space(agents[0])
        if isinstance(raw_space, spaces.Dict) and "action_mask" in raw_space.spaces:
            row.masks = "observation"
        else:
            aec.reset(seed=0)
            info = aec.infos.get(aec.agent_selection) or {}
            row.masks = "info" if "action_mask" in info else "none"
        try:
            resolve_learner_seats(aec, "random", False)
        except ValueError:
            row.learner = agents[0]
            row.notes.append(
                f"seats' spaces differ: learner='random' is refused with a message; pass a fixed "
                f"seat (checked with learner={agents[0]!r}; learning against random opponents, "
                "since the learner's snapshots cannot play the other seats) or teams (issue #11)"
            )
        aec.close()
    learner = row.learner

    def make_env() -> Any:
        return SelfPlayEnv(entry.factory(), learner=learner)

    def make_vec(n: int = 1) -> Any:
        return SelfPlayVecEnv(entry.factory, n_envs=n, learner=learner)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row.env_gym = _run(lambda: _gym_check(make_env()))
        row.env_sb3 = _run(lambda: _sb3_check(make_env()))
        row.vec_gym = _run(lambda: _gym_check(OneCopy(make_vec())))
        row.vec_sb3 = _run(lambda: _sb3_check(OneCopy(make_vec())))
        row.seeded = _run(lambda: _seeded_replay(make_env))
        row.play_env = _run(lambda: _random_play_env(make_env(), random_steps))
        row.play_vec = _run(lambda: _random_play_vec(make_vec(2), random_steps))
        arrays = isinstance(
            obs_space,
            spaces.Box | spaces.Discrete | spaces.MultiBinary | spaces.MultiDiscrete | spaces.Dict,
        )
        if entry.cooperative:
            row.learn = "n/a (cooperative)"
        elif not arrays:
            row.learn = (
                f"n/a: observations are {type(obs_space).__name__}, SB3 needs arrays; wrap the "
                "game with a PettingZoo observation wrapper that encodes them as numbers"
            )
        elif isinstance(obs_space, spaces.Box) and int(np.prod(obs_space.shape)) > 20_000:
            row.learn = "n/a: image observations; train with CnnPolicy (not part of this check)"
        else:
            row.learn = _run(
                lambda: _learn(
                    entry,
                    learner,
                    row.masks != "none",
                    learn_steps,
                    isinstance(obs_space, spaces.Dict),
                )
            )
    checks = [
        row.env_gym,
        row.env_sb3,
        row.vec_gym,
        row.vec_sb3,
        row.play_env,
        row.play_vec,
        row.learn,
    ]
    failed = [c for c in checks if c and c.startswith("FAIL")]
    if row.seeded and not row.seeded.startswith("yes"):
        row.notes.append("cannot be seeded: " + row.seeded)
    if entry.cooperative:
        row.status = "n/a"
        row.notes.append(COOPERATIVE_FIX)
    elif failed:
        row.status = "fails"
    elif row.learn and row.learn.startswith("n/a"):
        row.status = "fails"
        row.notes.append(row.learn[5:] if row.learn.startswith("n/a: ") else row.learn)
    else:
        row.status = "works" if learner == "random" else "works (fixed seat)"


# ------------------------------------------------------------------------------------------------
# The table
# ------------------------------------------------------------------------------------------------
LEARNERS = """
## Learners

Every learner of Stable-Baselines3 and sb3-contrib trains by self-play and plays back as a
snapshot opponent (`tests/training/test_learner_matrix.py`: a few hundred learner steps in each
runner, the snapshots reloaded in a fresh process, then a match; the last column is one short real
run per family, marked `learning`; *env*: `SelfPlayEnv`, *vec env*: `SelfPlayVecEnv`, *league*: the
serial backend). How each family plays: [Any SB3 learner](how-to/learners.md).

| learner | family | actions | env | vec env | league | masked opponent | beats random |
|---|---|---|---|---|---|---|---|
| PPO | actor-critic | any | yes | yes | yes | masked logits | MaskablePPO's run |
| A2C | actor-critic | any | yes | yes | yes | masked logits | MaskablePPO's run |
| TRPO | actor-critic | any | yes | yes | yes | masked logits | MaskablePPO's run |
| MaskablePPO | actor-critic | Discrete | yes | yes | yes | masked logits | yes, tic-tac-toe |
| RecurrentPPO | recurrent | any | yes | yes | yes | masked logits + LSTM | yes, tic-tac-toe |
| DQN | Q-network | Discrete | yes | yes | yes | greedy legal action | yes, tic-tac-toe |
| QRDQN | Q-network | Discrete | yes | yes | yes | greedy legal action | DQN's run |
| ARS (MLP, linear) | ARS | Discrete, Box | yes | yes | yes | greedy legal action | linear: yes |
| SAC | Box actor | Box | yes | yes | - | refused in masked games | yes, a continuous game |
| TD3, DDPG, TQC, CrossQ | Box actor | Box | yes | yes | - | refused in masked games | SAC's run |

ARS learns through `evaluate_policy`, whose callback carries no `infos`: its games are played
but not written to the match history, so its snapshots get no Elo from training.
"""


def _cell(value: str | None) -> str:
    if value is None:
        return "-"
    if value.startswith("FAIL"):
        return "**fail**: " + value[5:]
    return value


BRING_YOUR_OWN_GAME = """
## Bringing your own game

What `SelfPlayEnv` and `SelfPlayVecEnv` do for any PettingZoo game, whatever its family:

- **Masks** are read from the observation dict (`{"observation", "action_mask"}`, as in
  PettingZoo's classic games) or from `info["action_mask"]` (as in OpenSpiel games through
  Shimmy); either way `env.action_masks()` serves MaskablePPO and opponents play legal moves.
- **Illegal learner actions**: wherever masks are known, the wrapper checks the learner's action
  before the game sees it. By default an illegal action ends the learner's episode as a loss: the
  game's illegal-move reward (the value of PettingZoo's `TerminateIllegalWrapper` when the game
  has one, else -1, what the classic games give), outcome 0, and
  `info["selfplay"]["illegal_action"]` holding the action, the same ending in every family, in
  both envs and in `play_match`. `illegal_action="raise"` raises `IllegalActionError` naming the
  action and the legal ones instead. Plain PPO (no masks) therefore trains on any masked game
  without crashing; it just loses the games in which it plays illegal moves. Illegal opponent
  actions stay errors. Games without masks accept every action in their space.
- **Seeding**: `reset(seed=s)` seeds the game with `s` and every later unseeded reset with a
  seed drawn from `s`, so games that take a seed in `reset` (PettingZoo's card games, Shimmy's
  OpenSpiel chance events) replay their deals and dice and pass Gymnasium's determinism checks.
  A game that ignores `reset(seed=...)` shows "no" in the *seeded* column.
- **Observations** come back in the form the learner's space promises (a `Discrete` observation
  as a numpy integer rather than a 0-d array, a `Box` observation in the space's dtype), and
  never as the very object returned by the previous call.
- **OpenSpiel**: build games with `sp_wrappers.openspiel_env(name)` (`pip install
  "sp-wrappers[openspiel]"`). It is Shimmy's `OpenSpielCompatibilityV0` except that games end
  only when OpenSpiel says so: Shimmy 2.0 counts every chance event against the game's maximum
  number of moves and truncates Kuhn poker after its first move (the wrapper warns when it is
  given Shimmy's adapter on a game with chance events).
- **Seats with different spaces** (MPE's adversaries and agents): `learner="random"` is refused
  with a message; pass a fixed seat (`learner="adversary_0"`). Snapshots of that seat cannot play
  the other seats, so give those seats their own opponent policies (teams: issue #11).
- **Cooperative games** (butterfly, MPE's spread/reference/speaker-listener, Hanabi): every seat
  shares the reward, so there is no opponent to beat; train the seats together (for example one
  shared policy through SuperSuit's `pettingzoo_env_to_vec_env_v1`).
"""


def game_names_section() -> list[str]:
    """The names the commands take (``sp-wrappers train GAME``), both lists in full."""
    from sp_wrappers.games.registry import LIST_COMMAND, OPENSPIEL_PREFIX, game_names

    names = game_names()
    spiel = names["openspiel"]
    return [
        "## Game names the commands take",
        "",
        "`sp-wrappers train`, `league` and `psro` take a registered game "
        f"({', '.join(f'`{n}`' for n in names['registered'])}: tuned recipes, reference "
        "players), every PettingZoo environment by its own name (`sp-wrappers train chess_v6`; "
        "an environment whose extra is missing answers with the `pip install` line), every "
        "OpenSpiel game by its OpenSpiel name (`sp-wrappers psro kuhn_poker`; "
        f"`{OPENSPIEL_PREFIX}NAME` where the name is also another game's, as `chess` is "
        "PettingZoo's `chess_v6` too), or an import path `module:function` to any PettingZoo "
        f"env constructor. `{LIST_COMMAND}` prints the lists below for the installed versions.",
        "",
        f"**PettingZoo** ({len(names['pettingzoo'])}): "
        + ", ".join(f"`{n}`" for n in names["pettingzoo"]),
        "",
        f'**OpenSpiel** ({len(spiel)}; `pip install "sp-wrappers[openspiel]"`): '
        + (
            ", ".join(f"`{n}`" for n in spiel)
            or "OpenSpiel was not installed when this page was built"
        ),
        "",
    ]


def render(rows: list[Row], command: str) -> str:
    """The Markdown of docs/compatibility.md."""
    counted = [r for r in rows if r.status != "n/a"]
    passing = [r for r in counted if r.status.startswith("works")]
    lines = [
        "# Compatibility with existing PettingZoo games",
        "",
        f"Generated by `{command}` on 2 CPU cores shared with other jobs, "
        + time.strftime("%Y-%m-%d", time.gmtime())
        + " (`python benchmarks/compat.py --render-only` rebuilds this page from "
        "`benchmarks/compat_rows.jsonl`).",
        "",
        f"**{len(passing)} of {len(counted)} competitive games work as they are** "
        f"({sum(r.status == 'works (fixed seat)' for r in passing)} of them with a fixed learner "
        f"seat because their seats' spaces differ); {len(rows) - len(counted)} cooperative "
        "or single-agent games have no opponent to beat and are listed with what to do instead.",
        "",
        "| family | games | work | with a fixed seat | fail | n/a (cooperative, single agent) |",
        "|---|---|---|---|---|---|",
    ]
    for family in FAMILIES:
        part = [r for r in rows if r.family == family]
        if part:
            lines.append(
                f"| {family} | {len(part)} | {sum(r.status == 'works' for r in part)} | "
                f"{sum(r.status == 'works (fixed seat)' for r in part)} | "
                f"{sum(r.status == 'fails' for r in part)} | "
                f"{sum(r.status == 'n/a' for r in part)} |"
            )
    lines += [
        "",
        "Each row drives the game with `SelfPlayEnv` and `SelfPlayVecEnv` against the default "
        "random opponent and checks: Gymnasium's `check_env` and SB3's `check_env` on "
        "`SelfPlayEnv` (*env*) and on one `SelfPlayVecEnv` copy (*vec*, seen as a Gymnasium env); "
        "*seeded*: a seeded env replays the same observations over several episodes; *random "
        'play*: 1,000 steps of random legal play in each env with `info["selfplay"]` at every '
        "episode end; *learning*: a short self-play run (its length in the cell: 2,048 steps by "
        "default, 1,024 for rows measured with `--learn-steps 1024` to finish on a busy machine; "
        "MaskablePPO when the game has masks, PPO otherwise, on `SelfPlayVecEnv` with "
        "`OpponentSampler` and `SelfPlayCallback`) that completes. "
        "*Masks*: where the seat's legal actions are (the observation dict, `info`, or "
        "none). Atari games run on RAM observations with `max_cycles=200`; OpenSpiel games through "
        "`sp_wrappers.games.adapters.openspiel_env` (Shimmy's `OpenSpielCompatibilityV0` "
        "without its early truncation of games with chance events).",
        "",
    ]
    lines += game_names_section()
    lines += BRING_YOUR_OWN_GAME.splitlines()
    lines += LEARNERS.splitlines()
    for family in FAMILIES:
        part = [r for r in rows if r.family == family]
        if not part:
            continue
        ok = sum(r.status.startswith("works") for r in part)
        lines += [
            f"## {family} ({ok} of {sum(r.status != 'n/a' for r in part)} work)",
            "",
            "| game | result | API | seats | masks | env checkers (gym / SB3) | vec checkers "
            "(gym / SB3) | seeded | random play (env / vec) | learning | notes |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in part:
            env = (
                "pass"
                if r.env_gym == r.env_sb3 == "pass"
                else f"{_cell(r.env_gym)} / {_cell(r.env_sb3)}"
            )
            vec = (
                "pass"
                if r.vec_gym == r.vec_sb3 == "pass"
                else f"{_cell(r.vec_gym)} / {_cell(r.vec_sb3)}"
            )
            play = f"{_cell(r.play_env)} / {_cell(r.play_vec)}"
            lines.append(
                f"| {r.game} | {r.status} | {r.api} | {r.seats} | {r.masks} | {env} | {vec} | "
                f"{_cell(r.seeded)} | {play} | {_cell(r.learn)} | {'; '.join(r.notes)} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--games", default="", help="comma-separated names (default: all)")
    parser.add_argument("--jsonl", default=os.path.join(ROOT, "benchmarks", "compat_rows.jsonl"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "compatibility.md"))
    parser.add_argument("--learn-steps", type=int, default=2048)
    parser.add_argument("--time-limit", type=int, default=1200, help="seconds per row")
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    families = tuple(f for f in args.families.split(",") if f)
    if not args.render_only:
        done = set()
        if os.path.exists(args.jsonl):
            with open(args.jsonl) as handle:
                done = {(d["family"], d["game"]) for d in map(json.loads, handle)}
        wanted = set(filter(None, args.games.split(",")))
        for entry in game_entries(families):
            if (wanted and entry.name not in wanted) or (entry.family, entry.name) in done:
                continue
            row = check_game(entry, learn_steps=args.learn_steps, time_limit=args.time_limit)
            print(
                f"{row.family:10s} {row.game:32s} {row.status:20s} {row.seconds:6.1f}s "
                f"{'; '.join(row.notes)[:100]}",
                flush=True,
            )
            with open(args.jsonl, "a") as handle:
                handle.write(json.dumps(row.__dict__) + "\n")
    with open(args.jsonl) as handle:
        rows = [Row(**d) for d in map(json.loads, handle)]
    order = {f: i for i, f in enumerate(FAMILIES)}
    rows.sort(key=lambda r: (order.get(r.family, 99), r.game))
    with open(args.out, "w") as handle:
        handle.write(render(rows, "python benchmarks/compat.py") + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # pragma: no cover
        traceback.print_exc()
