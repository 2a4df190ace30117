"""Specification of ``SelfPlayEnv``: a PettingZoo game seen from one seat, opponents elsewhere."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import AsymmetricGuessGame, EarlyExitGame, GuessGame
from gymnasium import spaces

from sp_wrappers.core.policies import CallablePolicy, RandomPolicy, SB3Policy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.evaluation.match import play_match

SUMMARY_KEYS = {
    "opponent",
    "opponents",
    "outcome",
    "seat",
    "seat_outcomes",
    "return",
    "returns",
    "length",
}


def play_episode(env: SelfPlayEnv, seed: int | None, action_seed: int = 0) -> list[tuple]:
    """One episode with uniformly random legal learner actions; every step's results."""
    rng = np.random.default_rng(action_seed)
    obs, info = env.reset(seed=seed)
    trace: list[tuple] = [("reset", np.array(obs, copy=True), dict(info))]
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        action = int(rng.choice(legal))
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        trace.append((action, np.array(obs, copy=True), reward, terminated, truncated, info))
    return trace


def assert_same_trace(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for step_a, step_b in zip(a, b, strict=True):
        assert len(step_a) == len(step_b)
        for x, y in zip(step_a, step_b, strict=True):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)
            else:
                assert x == y


class RecordingPolicy:
    """Wraps a policy; records every (seat to move, observation, mask, action) it is asked for."""

    def __init__(self, inner: Any, game_of: Any = None) -> None:
        self.inner = inner
        self.policy_id = inner.policy_id
        self.game_of = game_of
        self.calls: list[tuple[str | None, Any, Any, Any]] = []

    def act(self, observations: Any, action_masks: Any, rng: np.random.Generator) -> np.ndarray:
        actions = self.inner.act(observations, action_masks, rng)
        seat = None if self.game_of is None else self.game_of().agent_selection
        self.calls.append((seat, observations, action_masks, actions))
        return actions


# ------------------------------------------------------------------------------------------------
# Gymnasium and SB3 env checkers
# ------------------------------------------------------------------------------------------------

CHECKED_GAMES = [
    "tictactoe",
    "connect_four",
    "texas_holdem",
    "pong_aec",
    "pong_parallel",
    "pong_stacked",
    "guess",
    "race3",
    "race_info_mask",
]


@pytest.mark.parametrize("name", CHECKED_GAMES)
def test_gymnasium_and_sb3_env_checkers_pass(games, name):
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = SelfPlayEnv(games[name]())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's advice on image-like observations
        gymnasium_check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=False)
    env.close()


def test_env_checkers_pass_with_keep_dict_obs(games):
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = SelfPlayEnv(games["connect_four"](), keep_dict_obs=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gymnasium_check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=False)


# ------------------------------------------------------------------------------------------------
# Learner seats
# ------------------------------------------------------------------------------------------------


def test_fixed_learner_seat_is_kept_every_episode(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_2")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info["seat"] == "player_2"
        # player_1 has already moved when the learner first observes the board
        assert int(env.action_masks().sum()) == 8


def test_random_learner_seat_takes_every_seat_and_depends_on_the_seed(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="random")
    seats = [env.reset(seed=seed)[1]["seat"] for seed in range(20)]
    assert set(seats) == {"player_1", "player_2"}
    assert seats == [env.reset(seed=seed)[1]["seat"] for seed in range(20)]


def test_alternate_learner_seat_cycles_and_restarts_on_seed(race3):
    env = SelfPlayEnv(race3, learner="alternate")
    seats = [env.reset(seed=0 if i == 0 else None)[1]["seat"] for i in range(6)]
    assert seats == ["player_0", "player_1", "player_2"] * 2
    assert env.reset(seed=1)[1]["seat"] == "player_0"


def test_reset_option_forces_the_learner_seat_for_one_episode(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="random")
    for seed in range(6):
        assert env.reset(seed=seed, options={"learner_seat": "player_2"})[1]["seat"] == "player_2"


def test_reset_option_with_a_seat_the_learner_may_not_take_errors(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_1")
    with pytest.raises(ValueError, match=r"learner_seat.*'player_2'.*not a seat"):
        env.reset(seed=0, options={"learner_seat": "player_2"})


def test_other_reset_options_reach_the_game(info_mask_game):
    env = SelfPlayEnv(info_mask_game, learner="player_0")
    env.reset(seed=0, options={"start": 8})  # counter at 8 of 10: adding 3 would overshoot
    assert env.action_masks().tolist() == [True, True, False]


# ------------------------------------------------------------------------------------------------
# Reproducibility
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tictactoe", "texas_holdem", "race3"])
def test_same_seed_gives_the_same_trajectory_including_seat_and_opponent_moves(games, name):
    first = [play_episode(SelfPlayEnv(games[name]()), seed) for seed in (3, 4)]
    env = SelfPlayEnv(games[name]())
    again = [play_episode(env, seed) for seed in (3, 4)]
    for a, b in zip(first, again, strict=True):
        assert_same_trace(a, b)


def test_different_seeds_give_different_opponent_moves(connect_four):
    env = SelfPlayEnv(connect_four, learner="player_1")
    first_moves = set()
    for seed in range(10):
        obs, _ = env.reset(seed=seed)
        first_moves.add(int(np.flatnonzero(obs[..., 1].any(axis=0))[0]))  # player_1's column
    assert len(first_moves) > 1


def test_opponent_randomness_is_independent_of_the_games_own_seeded_randomness():
    # GuessGame draws its hidden cue with np.random.default_rng(seed), as Gymnasium seeds envs; the
    # random opponent must not replay that stream (it would always name the cue).
    env = SelfPlayEnv(GuessGame(), learner="p0")
    outcomes = []
    for seed in range(60):
        obs, _ = env.reset(seed=seed)
        outcomes.append(env.step(int(np.argmax(obs)))[4]["selfplay"]["outcome"])
    assert 0.4 < np.mean(np.array(outcomes) == 1.0) < 0.9  # about 2/3 of the time it misses


# ------------------------------------------------------------------------------------------------
# Rewards and episode ends
# ------------------------------------------------------------------------------------------------


def top_row_first(obs: Any, mask: np.ndarray) -> int:
    """A scripted tic-tac-toe opponent: takes cells 0, 1, 2 if it can."""
    for cell in (0, 1, 2, 6, 7, 8, 5):
        if mask[cell]:
            return cell
    return int(np.flatnonzero(mask)[0])


def test_final_reward_arrives_when_the_game_ends_on_an_opponents_move(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_2", opponent=CallablePolicy(top_row_first, "row"))
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(3)
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert "selfplay" not in info
    obs, reward, terminated, truncated, info = env.step(4)  # the opponent completes the top row
    assert (reward, terminated, truncated) == (-1.0, True, False)
    summary = info["selfplay"]
    assert set(summary) == SUMMARY_KEYS
    assert summary["outcome"] == 0.0
    assert summary["opponent"] == "row"
    assert summary["opponents"] == {"player_1": "row"}
    assert summary["seat"] == "player_2"
    assert summary["return"] == -1.0
    assert summary["returns"] == {"player_1": 1.0, "player_2": -1.0}
    assert summary["length"] == 2
    assert obs.shape == env.observation_space.shape


def test_learners_winning_move_is_rewarded_at_once(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_1", opponent=CallablePolicy(top_row_first, "row"))
    env.reset(seed=0)  # opponent (player_2) will take 0, 1, 2; learner takes 4, 3, then 5 wins
    for action in (4, 3):
        assert env.step(action)[1:3] == (0.0, False)
    _, reward, terminated, _, info = env.step(5)
    assert (reward, terminated) == (1.0, True)
    assert info["selfplay"]["outcome"] == 1.0


def test_draw_has_outcome_one_half(tictactoe):
    # learner X: 4, 1, 5, 6, 8 / opponent O takes cells 0, 2, 7, 3 by preference -> a draw
    order = (0, 2, 7, 3)

    def scripted(obs: Any, mask: np.ndarray) -> int:
        return next(cell for cell in order if mask[cell])

    env = SelfPlayEnv(tictactoe, learner="player_1", opponent=CallablePolicy(scripted, "s"))
    env.reset(seed=0)
    for action in (4, 1, 5, 6):
        assert not env.step(action)[2]
    _, reward, terminated, _, info = env.step(8)
    assert (reward, terminated, info["selfplay"]["outcome"]) == (0.0, True, 0.5)


def test_early_leaving_learner_gets_its_final_reward_and_summary(early_exit_game):
    same = CallablePolicy(lambda obs, mask: 1, "ones")
    env = SelfPlayEnv(early_exit_game, learner="leaver", opponent=same)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(1)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["selfplay"]["return"] == 1.0
    assert info["selfplay"]["outcome"] == 1.0
    assert info["selfplay"]["length"] == 1
    assert env.observation_space.contains(obs)
    env.reset(seed=1)
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["selfplay"]["outcome"]) == (-1.0, True, 0.0)


def test_learner_plays_on_after_an_opponent_leaves_early():
    env = SelfPlayEnv(EarlyExitGame(extra_moves=3), learner="stayer")
    env.reset(seed=0)
    rewards, done = [], False
    while not done:
        _, reward, terminated, truncated, info = env.step(0)
        rewards.append(reward)
        done = terminated or truncated
    assert len(rewards) == 4 and rewards[1:] == [0.0, 0.0, 0.5]
    assert abs(rewards[0]) == 1.0
    assert info["selfplay"]["return"] == pytest.approx(sum(rewards))
    assert set(info["selfplay"]["returns"]) == {"leaver", "stayer"}


def test_truncated_episode_ends_with_a_summary(pong_aec):
    env = SelfPlayEnv(pong_aec, learner="second_0")
    trace = play_episode(env, seed=0)
    *_, terminated, truncated, info = trace[-1]
    assert truncated and not terminated
    assert info["selfplay"]["seat"] == "second_0"
    assert info["selfplay"]["length"] == len(trace) - 1
    assert sum(step[2] for step in trace[1:]) == info["selfplay"]["return"]


def test_step_after_the_episode_ended_errors(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_1", opponent=CallablePolicy(top_row_first, "row"))
    env.reset(seed=0)
    for action in (4, 3, 5):
        env.step(action)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(8)


# ------------------------------------------------------------------------------------------------
# Masks
# ------------------------------------------------------------------------------------------------


def test_action_masks_are_the_learners_legal_moves(connect_four):
    env = SelfPlayEnv(connect_four, learner="player_1")
    env.reset(seed=0)
    for action in (0, 0, 0):
        np.testing.assert_array_equal(
            env.action_masks(), env.game.observe("player_1")["action_mask"].astype(bool)
        )
        env.step(action)
    assert env.action_masks().dtype == bool


def test_action_masks_read_masks_given_only_in_info(info_mask_game):
    env = SelfPlayEnv(info_mask_game, learner="player_1")
    assert isinstance(env.observation_space, spaces.Box)
    env.reset(seed=0, options={"start": 7})  # player_0 adds 1-3 first: counter 8, 9 or 10
    masks = env.action_masks()
    np.testing.assert_array_equal(masks, env.game.infos["player_1"]["action_mask"].astype(bool))
    assert not masks.all()


def test_action_masks_are_all_true_for_games_without_masks(pong_aec):
    env = SelfPlayEnv(pong_aec)
    env.reset(seed=0)
    assert env.action_masks().tolist() == [True] * 6


def test_maskable_ppo_trains_on_the_env_without_extra_wrappers(tictactoe):
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import is_masking_supported

    env = SelfPlayEnv(tictactoe)
    assert is_masking_supported(env)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0)
    model.learn(128)
    assert model.num_timesteps >= 128


def test_opponents_are_asked_only_on_their_turn_and_choose_legal_actions(connect_four):
    recorder = RecordingPolicy(RandomPolicy(), game_of=lambda: env.game)
    env = SelfPlayEnv(connect_four, learner="random", opponent=recorder)
    for seed in range(8):
        play_episode(env, seed=seed, action_seed=seed)
        assert env.driver.learner_done
    assert len(recorder.calls) > 40
    for seat, observations, masks, actions in recorder.calls:
        assert masks.shape == (1, 7) and observations.shape == (1, 6, 7, 2)
        assert masks[0, int(actions[0])]
        assert seat is not None
    seats = {seat for seat, *_ in recorder.calls}
    assert seats == {"player_0", "player_1"}


def test_opponent_sees_its_own_observation_and_mask(tictactoe):
    def check(obs: Any, mask: np.ndarray) -> int:
        seat = env.game.agent_selection
        assert seat != env.driver.learner
        raw = env.game.observe(seat)
        np.testing.assert_array_equal(obs, raw["observation"])
        np.testing.assert_array_equal(mask, raw["action_mask"].astype(bool))
        return int(np.flatnonzero(mask)[-1])

    env = SelfPlayEnv(tictactoe, learner="random", opponent=CallablePolicy(check, "check"))
    for seed in range(6):
        play_episode(env, seed=seed)


# ------------------------------------------------------------------------------------------------
# Observations and rendering
# ------------------------------------------------------------------------------------------------


def test_learner_observes_the_observation_part_by_default(tictactoe):
    env = SelfPlayEnv(tictactoe)
    obs, _ = env.reset(seed=0)
    assert env.observation_space == tictactoe.observation_space("player_1")["observation"]
    np.testing.assert_array_equal(obs, env.game.observe(env.driver.learner)["observation"])


def test_keep_dict_obs_keeps_the_dict_for_learner_and_opponents(tictactoe):
    seen: list[Any] = []

    def opponent(obs: Any, mask: np.ndarray) -> int:
        seen.append(obs)
        return int(np.flatnonzero(mask)[0])

    env = SelfPlayEnv(
        tictactoe, learner="player_2", keep_dict_obs=True, opponent=CallablePolicy(opponent, "o")
    )
    assert isinstance(env.observation_space, spaces.Dict)
    assert set(env.observation_space.spaces) == {"observation", "action_mask"}
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"observation", "action_mask"}
    assert env.observation_space.contains(obs)
    assert set(seen[0]) == {"observation", "action_mask"}
    np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))


def test_render_passes_through_to_the_game():
    env = SelfPlayEnv(GuessGame(render_mode="ansi"))
    assert env.render_mode == "ansi"
    env.reset(seed=0)
    assert env.render().startswith("cue=")


def test_render_returns_the_games_rgb_array():
    pytest.importorskip("pygame")
    from pettingzoo.classic import tictactoe_v3

    env = SelfPlayEnv(tictactoe_v3.env(render_mode="rgb_array"))
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.ndim == 3


# ------------------------------------------------------------------------------------------------
# Bad inputs: each error says what was wrong
# ------------------------------------------------------------------------------------------------


class OneSeatGame(GuessGame):
    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = ["p0"]


def test_non_pettingzoo_object_errors():
    with pytest.raises(TypeError, match="Expected a PettingZoo AECEnv or ParallelEnv, got object"):
        SelfPlayEnv(object())


def test_single_agent_gymnasium_env_errors_with_a_hint():
    with pytest.raises(TypeError, match="single-agent Gymnasium env"):
        SelfPlayEnv(gym.make("CartPole-v1"))


def test_pettingzoo_game_with_one_seat_errors():
    with pytest.raises(ValueError, match=r"1 agent\(s\).*at least two seats"):
        SelfPlayEnv(OneSeatGame())


def test_unknown_learner_name_errors(tictactoe):
    with pytest.raises(ValueError, match=r"learner='player_3' is not an agent.*player_1"):
        SelfPlayEnv(tictactoe, learner="player_3")


@pytest.mark.parametrize("mode", ["random", "alternate"])
def test_changing_seats_whose_spaces_differ_errors(mode):
    with pytest.raises(ValueError, match=r"needs every seat to have the same spaces.*'p1'"):
        SelfPlayEnv(AsymmetricGuessGame(), learner=mode)


def test_fixed_seat_in_a_game_whose_seats_differ_plays_each_opponent_in_its_own_space():
    env = SelfPlayEnv(AsymmetricGuessGame(), learner="p0")
    assert env.action_space == spaces.Discrete(3)
    for seed in range(30):  # the default random opponent must only use p1's two actions
        env.reset(seed=seed)
        assert "selfplay" in env.step(2)[4]


@pytest.mark.parametrize("action", [9, -1, 1.5, "a", [1, 2]])
def test_learner_action_outside_its_space_errors(tictactoe, action):
    env = SelfPlayEnv(tictactoe)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the learner's action space Discrete"):
        env.step(action)


def test_learner_action_may_be_a_numpy_integer_or_array(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_1")
    env.reset(seed=0)
    env.step(np.int64(0))
    env.step(np.array([1]))
    env.step(np.array(2))


def test_opponent_choosing_an_illegal_action_errors_naming_opponent_and_action(tictactoe):
    always_zero = CallablePolicy(lambda obs, mask: 0, "always-zero")
    env = SelfPlayEnv(tictactoe, learner="player_2", opponent=always_zero)
    env.reset(seed=0)  # the first 0 is legal
    with pytest.raises(ValueError, match=r"Opponent 'always-zero'.*illegal action 0"):
        env.step(4)


def test_opponent_returning_an_action_outside_its_space_errors(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_2", opponent=CallablePolicy(lambda o, m: 42, "b"))
    with pytest.raises(ValueError, match=r"Opponent 'b' in seat 'player_1'.*action 42, outside"):
        env.reset(seed=0)


def test_opponent_returning_a_non_integer_action_errors(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_2", opponent=CallablePolicy(lambda o, m: 0.5, "f"))
    with pytest.raises(ValueError, match=r"Opponent 'f'.*0.5.*not an integer action"):
        env.reset(seed=0)


def test_opponent_that_is_not_a_policy_errors(tictactoe):
    with pytest.raises(TypeError, match="opponent must be a policy"):
        SelfPlayEnv(tictactoe, opponent=5)


def test_opponent_callable_returning_a_non_policy_errors(tictactoe):
    env = SelfPlayEnv(tictactoe, opponent=lambda: "not a policy")
    with pytest.raises(TypeError, match="returned str, not a policy"):
        env.reset(seed=0)


# ------------------------------------------------------------------------------------------------
# Opponents given as callables
# ------------------------------------------------------------------------------------------------


def test_opponent_callable_is_called_once_per_episode_with_the_envs_generator(tictactoe):
    calls: list[Any] = []

    def new_opponent(rng: np.random.Generator) -> RandomPolicy:
        calls.append(rng)
        return RandomPolicy(policy_id=f"random-{len(calls)}")

    env = SelfPlayEnv(tictactoe, opponent=new_opponent)
    for episode in range(1, 4):
        trace = play_episode(env, seed=episode)
        assert trace[-1][-1]["selfplay"]["opponent"] == f"random-{episode}"
    assert len(calls) == 3
    assert all(isinstance(rng, np.random.Generator) for rng in calls)
    assert calls[-1] is env.np_random


def test_opponent_callable_without_arguments_is_accepted(tictactoe):
    env = SelfPlayEnv(tictactoe, opponent=lambda: RandomPolicy(policy_id="fresh"))
    assert play_episode(env, seed=0)[-1][-1]["selfplay"]["opponent"] == "fresh"


def test_each_opponent_seat_of_a_three_player_game_gets_its_own_draw(race3):
    counter = iter(range(100))
    env = SelfPlayEnv(
        race3, learner="player_0", opponent=lambda: RandomPolicy(policy_id=f"r{next(counter)}")
    )
    info = play_episode(env, seed=0)[-1][-1]
    assert info["selfplay"]["opponents"] == {"player_1": "r0", "player_2": "r1"}
    assert info["selfplay"]["opponent"] == "r0"
    assert set(info["selfplay"]["returns"]) == {"player_0", "player_1", "player_2"}


class ScheduledSource:
    """An opponent source like OpponentSampler: numbered draws on a swap schedule."""

    def __init__(self, swap_every: int, swap_unit: str) -> None:
        self.swap_every = swap_every
        self.swap_unit = swap_unit
        self.draws = 0
        self.synced: list[tuple[int, dict]] = []

    def draw(self, rng: np.random.Generator) -> RandomPolicy:
        self.draws += 1
        return RandomPolicy(policy_id=f"draw-{self.draws}")

    def sync_latest_weights(self, version: int, state: dict) -> None:
        self.synced.append((version, state))


def test_opponents_are_redrawn_every_swap_every_episodes(tictactoe):
    env = SelfPlayEnv(tictactoe, opponent=ScheduledSource(2, "episodes"))
    ids = [play_episode(env, seed=seed)[-1][-1]["selfplay"]["opponent"] for seed in range(6)]
    assert ids == ["draw-1", "draw-1", "draw-2", "draw-2", "draw-3", "draw-3"]


def test_opponents_are_redrawn_at_the_first_episode_start_after_swap_every_steps(tictactoe):
    env = SelfPlayEnv(tictactoe, learner="player_1", opponent=ScheduledSource(4, "steps"))
    ids, lengths = [], []
    for seed in range(6):
        info = play_episode(env, seed=seed)[-1][-1]["selfplay"]
        ids.append(info["opponent"])
        lengths.append(info["length"])
    steps_since_draw = 0
    expected, current = [], 0
    for length in lengths:  # a draw happens at an episode start once 4 learner steps have passed
        if current == 0 or steps_since_draw >= 4:
            current += 1
            steps_since_draw = 0
        expected.append(f"draw-{current}")
        steps_since_draw += length
    assert ids == expected


def test_unknown_swap_unit_errors(tictactoe):
    with pytest.raises(ValueError, match="swap_unit must be one of"):
        SelfPlayEnv(tictactoe, opponent=ScheduledSource(1, "games"))


def test_sync_latest_weights_reaches_the_opponent_source(tictactoe):
    source = ScheduledSource(1, "episodes")
    env = SelfPlayEnv(tictactoe, opponent=source)
    env.sync_latest_weights(3, {"w": np.zeros(1)})
    assert [version for version, _ in source.synced] == [3]
    SelfPlayEnv(tictactoe).sync_latest_weights(1, {})  # a plain policy ignores it


# ------------------------------------------------------------------------------------------------
# Learning (small budgets, fixed seeds)
# ------------------------------------------------------------------------------------------------


@pytest.mark.learning
@pytest.mark.usefixtures("single_thread_torch")
def test_maskable_ppo_learns_to_beat_random_at_tictactoe():
    from pettingzoo.classic import tictactoe_v3
    from sb3_contrib import MaskablePPO

    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=512,
        batch_size=128,
        n_epochs=4,
        learning_rate=1e-3,
        policy_kwargs={"net_arch": [64, 64]},
        seed=0,
        device="cpu",
    )
    model.learn(4_096)  # seeds 0-2 win minus lose 57-61 games in 100 here
    result = play_match(
        tictactoe_v3.env, SB3Policy(model, deterministic=True), RandomPolicy(), 100, seed=123
    )
    baseline = play_match(
        tictactoe_v3.env, RandomPolicy(policy_id="r"), RandomPolicy(), 100, seed=123
    )
    assert result.wins - result.losses >= 30, str(result)
    assert result.score_a > baseline.score_a + 0.15, f"{result} / {baseline}"


@pytest.mark.learning
@pytest.mark.usefixtures("single_thread_torch")
def test_plain_ppo_learns_a_game_without_masks():
    from stable_baselines3 import PPO

    env = SelfPlayEnv(GuessGame(), learner="random")
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=256,
        batch_size=64,
        n_epochs=4,
        learning_rate=3e-3,
        policy_kwargs={"net_arch": [32]},
        seed=0,
        device="cpu",
    )
    model.learn(2_048)
    opponent = RandomPolicy(env.action_space)
    result = play_match(GuessGame, SB3Policy(model, deterministic=True), opponent, 100, seed=7)
    # naming the cue never loses and wins whenever the random opponent misses (2/3 of games)
    assert result.losses <= 5 and result.wins >= 50, str(result)
