"""Properties of ``SelfPlayEnv`` over random legal play, checked against the raw PettingZoo game.

Every example plays one learner episode with random legal moves (learner and opponents), logs
every move in game order, then replays the same moves in a fresh copy of the game with
PettingZoo's own ``agent_iter``/``last()`` loop as an independent reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import GameSeeds, SelfPlayEnv

GAMES = {
    "tictactoe": ["player_1", "player_2"],
    "connect_four": ["player_0", "player_1"],
    "texas_holdem": ["player_0", "player_1"],
    "race3": ["player_0", "player_1", "player_2"],
}

PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


class LoggingOpponent:
    """A random opponent that appends its moves to a shared game-order log and checks turns."""

    policy_id = "logging-random"

    def __init__(self, log: list[list[int]]) -> None:
        self.inner = RandomPolicy()
        self.log = log
        self.env: SelfPlayEnv | None = None

    def act(self, observations: Any, action_masks: Any, rng: np.random.Generator) -> np.ndarray:
        assert self.env is not None
        assert self.env.game.agent_selection != self.env.driver.learner, "asked on learner's turn"
        actions = self.inner.act(observations, action_masks, rng)
        self.log[-1].append(int(actions[0]))
        return actions


def _plain(obs: Any) -> np.ndarray:
    return np.asarray(obs["observation"] if isinstance(obs, dict) else obs)


def play_logged_episode(make: Any, learner: str, seed: int, action_seed: int) -> dict[str, Any]:
    """One SelfPlayEnv episode; returns what the learner saw and every game's move log."""
    log: list[list[int]] = []
    opponent = LoggingOpponent(log)
    env = SelfPlayEnv(make(), learner=learner, opponent=opponent)
    opponent.env = env
    driver_reset = env.driver.reset

    def logged_reset(*args: Any, **kwargs: Any) -> None:  # one log per game the env starts
        log.append([])
        driver_reset(*args, **kwargs)

    env.driver.reset = logged_reset  # type: ignore[method-assign]

    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    seat = info["seat"]
    observations, rewards, done = [_plain(obs)], [], False
    while not done:
        assert env.game.agent_selection == seat, "learner observed off its turn"
        np.testing.assert_array_equal(_plain(obs), _plain(env.game.observe(seat)))
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        log[-1].append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        assert ("selfplay" in info) == done, "an episode end must carry info['selfplay']"
        assert info["seat"] == seat
        rewards.append(reward)
        if not done:
            observations.append(_plain(obs))
    return {
        "seat": seat,
        "observations": observations,
        "rewards": rewards,
        "log": log,
        "summary": info["selfplay"],
    }


def replay_reference(make: Any, seed: int, log: list[list[int]], seat: str) -> dict[str, Any]:
    """Replay the logged moves in the raw game with PettingZoo's canonical loop."""
    raw = make()
    observations: list[np.ndarray] = []
    returns: dict[str, float] = {}
    seeds = GameSeeds()  # the documented seed of each game a seeded env starts
    for index, moves in enumerate(log):
        raw.reset(seed=seeds.next(seed if index == 0 else None))
        last_game = index == len(log) - 1
        returns = {agent: 0.0 for agent in raw.possible_agents}
        pending = iter(moves)
        for agent in raw.agent_iter():
            obs, reward, terminated, truncated, _ = raw.last()
            returns[agent] += float(reward)
            if terminated or truncated:
                raw.step(None)
                continue
            if agent == seat and last_game:
                observations.append(_plain(obs))
            move = next(pending, None)
            if move is None:  # the learner's episode ended before the rest of the game
                break
            raw.step(move)
        assert next(pending, None) is None, "the wrapper played moves the game did not ask for"
    return {"observations": observations, "returns": returns}


def independent_outcome(returns: dict[str, float], seat: str) -> float:
    scores = []
    for other, value in returns.items():
        if other != seat:
            mine = returns[seat]
            scores.append(1.0 if mine > value else 0.5 if mine == value else 0.0)
    return float(np.mean(scores))


@pytest.mark.parametrize("name", sorted(GAMES))
@PROPERTY_SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**31 - 1), action_seed=st.integers(0, 2**31 - 1))
def test_learner_sees_exactly_its_own_turns_and_its_game_return(
    games, name, data, seed, action_seed
):
    learner = data.draw(st.sampled_from(["random", "alternate", *GAMES[name]]), label="learner")
    make = games[name]
    played = play_logged_episode(make, learner, seed, action_seed)
    seat = played["seat"]
    reference = replay_reference(make, seed, played["log"], seat)

    # the learner receives observations on its own turns only: exactly the raw game's
    assert len(played["observations"]) == len(reference["observations"])
    for mine, theirs in zip(played["observations"], reference["observations"], strict=True):
        np.testing.assert_array_equal(mine, theirs)

    # rewards over the episode add up to the game's return for the learner's seat
    summary = played["summary"]
    expected_return = reference["returns"][seat]
    assert sum(played["rewards"]) == pytest.approx(expected_return)
    assert summary["return"] == pytest.approx(expected_return)
    assert summary["seat"] == seat
    assert summary["length"] == len(played["rewards"])
    for agent, value in reference["returns"].items():
        assert summary["returns"][agent] == pytest.approx(value)

    # the outcome follows from the returns
    outcome = summary["outcome"]
    assert outcome == pytest.approx(independent_outcome(reference["returns"], seat))
    if len(GAMES[name]) == 2:
        assert outcome in (0.0, 0.5, 1.0)
        other = next(a for a in GAMES[name] if a != seat)
        mine, theirs = reference["returns"][seat], reference["returns"][other]
        assert (outcome == 1.0) == (mine > theirs) and (outcome == 0.0) == (mine < theirs)


@pytest.mark.parametrize("name", sorted(GAMES))
@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_same_seed_same_episode(games, name, seed):
    first = play_logged_episode(games[name], "random", seed, action_seed=1)
    second = play_logged_episode(games[name], "random", seed, action_seed=1)
    assert first["seat"] == second["seat"]
    assert first["log"] == second["log"]
    assert first["rewards"] == second["rewards"]
