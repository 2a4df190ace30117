"""openspiel_env's observations: Shimmy's by default, OpenSpiel's information state on request."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

pytest.importorskip("shimmy")
pyspiel = pytest.importorskip("pyspiel")

from sp_wrappers import SelfPlayEnv  # noqa: E402
from sp_wrappers.games.adapters import openspiel_env  # noqa: E402


def play_randomly(game, seed: int):
    """Yield (acting agent, its observation, the OpenSpiel state) at every live step."""
    rng = np.random.default_rng(seed)
    game.reset(seed=seed)
    while game.agents:
        agent = game.agent_selection
        if game.terminations[agent] or game.truncations[agent]:
            game.step(None)
            continue
        yield agent, game.observe(agent), game.game_state
        game.step(int(rng.choice(np.flatnonzero(game.infos[agent]["action_mask"]))))


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
@pytest.mark.parametrize("observation", ["default", "information_state"])
def test_observation_of_a_state_is_what_the_game_observes_on_live_steps(name, observation):
    game = openspiel_env(name, observation=observation)
    for seed in range(20):
        for agent, obs, state in play_randomly(game, seed):
            player = game.agent_name_id_mapping[agent]
            assert np.array_equal(game.observation_of(state, player), obs)
            if observation == "information_state":
                assert np.array_equal(obs, np.array(state.information_state_tensor(player)))
            else:
                assert np.array_equal(obs, np.array(state.observation_tensor(player)))


def distinct_observations(observation: str) -> tuple[int, int]:
    game = openspiel_env("leduc_poker", observation=observation)
    game.reset(seed=0)
    infostates, observations = set(), set()

    def walk(state):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                walk(state.child(action))
            return
        player = state.current_player()
        infostates.add(state.information_state_string(player))
        observations.add(game.observation_of(state, player).tobytes())
        for action in state.legal_actions():
            walk(state.child(action))

    walk(game._env.new_initial_state())
    return len(infostates), len(observations)


def test_leduc_information_state_tells_every_information_state_apart_unlike_shimmys_view():
    assert distinct_observations("information_state") == (936, 936)
    infostates, seen = distinct_observations("default")
    assert infostates == 936 and seen < 600  # the betting history is lost


def test_the_information_state_view_trains_in_selfplay_env_and_survives_pickling():
    game = openspiel_env("leduc_poker", {"suit_isomorphism": True}, observation="information_state")
    env = SelfPlayEnv(game, learner="player_0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (24,) and env.observation_space.shape == (24,)
    clone = pickle.loads(pickle.dumps(game))
    assert clone.observation_type == "information_state"
    assert clone.config == {"suit_isomorphism": True}
    clone.reset(seed=0)
    assert clone.observe(clone.agent_selection).shape == (24,)


def test_a_game_without_an_information_state_tensor_is_refused_by_name():
    with pytest.raises(ValueError, match="tic_tac_toe has no information-state tensor"):
        openspiel_env("tic_tac_toe", observation="information_state")
    with pytest.raises(ValueError, match="observation must be one of"):
        openspiel_env("kuhn_poker", observation="board")
