"""Specification of ``SelfPlayVecEnv``: many game copies as one SB3 ``VecEnv``, opponents batched.

Every copy must play exactly as a ``SelfPlayEnv`` seeded the same way; opponents facing the same
policy must be answered by one ``act`` call; the VecEnv contract (auto-reset, terminal
observations, attributes, methods, seeds, masks) must hold under SB3's wrappers; worker processes
must give the same games and never outlive the env.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import GuessGame, RaceGame, make_pong_aec, make_tictactoe
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecFrameStack, VecMonitor, VecNormalize

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.policies import RandomPolicy, SB3Policy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.envs.vector.factory import make_selfplay_vec_env
from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv
from sp_wrappers.evaluation.match import play_match
from sp_wrappers.opponents.sampler import OpponentSampler
from sp_wrappers.training.callbacks import SelfPlayCallback

ROOT = Path(__file__).resolve().parents[2]


class CountingPolicy:
    """Wraps a policy; records the batch size of every ``act`` call."""

    def __init__(self, inner: Any, policy_id: str = "counting") -> None:
        self.inner = inner
        self.policy_id = policy_id
        self.batch_sizes: list[int] = []

    def act(self, observations: Any, action_masks: Any, rng: np.random.Generator) -> np.ndarray:
        self.batch_sizes.append(len(observations))
        return self.inner.act(observations, action_masks, rng)


def run_side_by_side(
    env_fn: Any, n_envs: int, steps: int, seed: int = 10, num_workers: int = 0, **kwargs: Any
) -> int:
    """Step a SelfPlayVecEnv and ``n_envs`` SelfPlayEnvs (reset with ``seed + i``) with the same
    learner actions; assert identical observations, masks, rewards, dones and infos. Returns the
    number of finished episodes."""
    venv = SelfPlayVecEnv(env_fn, n_envs=n_envs, num_workers=num_workers, **kwargs)
    envs = [SelfPlayEnv(env_fn(), **kwargs) for _ in range(n_envs)]
    episodes = 0
    try:
        assert venv.seed(seed) == [seed + i for i in range(n_envs)]
        obs = venv.reset()
        for i, env in enumerate(envs):
            single_obs, info = env.reset(seed=seed + i)
            np.testing.assert_array_equal(single_obs, obs[i])
            assert venv.reset_infos[i] == info
        rng = np.random.default_rng(0)
        for _ in range(steps):
            masks = venv.action_masks()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, dones, infos = venv.step(actions)
            for i, env in enumerate(envs):
                np.testing.assert_array_equal(masks[i], env.action_masks())
                single_obs, reward, terminated, truncated, info = env.step(actions[i])
                assert rewards[i] == np.float32(reward)
                assert dones[i] == (terminated or truncated)
                assert infos[i]["seat"] == info["seat"]
                assert infos[i]["TimeLimit.truncated"] == (truncated and not terminated)
                if dones[i]:
                    episodes += 1
                    assert infos[i]["selfplay"] == info["selfplay"]
                    np.testing.assert_array_equal(infos[i]["terminal_observation"], single_obs)
                    single_obs, reset_info = env.reset()
                    assert venv.reset_infos[i] == reset_info
                else:
                    assert "selfplay" not in infos[i]
                np.testing.assert_array_equal(obs[i], single_obs)
    finally:
        venv.close()
    return episodes


# ------------------------------------------------------------------------------------------------
# Same games as SelfPlayEnv
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ttt_model() -> MaskablePPO:
    return MaskablePPO("MlpPolicy", SelfPlayEnv(make_tictactoe()), n_steps=64, seed=1)


@pytest.fixture(scope="module")
def pong_model() -> PPO:
    return PPO("MlpPolicy", SelfPlayEnv(make_pong_aec()), n_steps=64, seed=1)


@pytest.mark.parametrize("learner", ["random", "alternate", "player_2"])
def test_tictactoe_copies_play_exactly_as_selfplay_envs_against_random(learner):
    assert run_side_by_side(make_tictactoe, 4, 120, learner=learner) > 50


def test_tictactoe_copies_play_exactly_as_selfplay_envs_against_a_sampled_sb3_policy(ttt_model):
    opponent = SB3Policy(ttt_model, deterministic=False, policy_id="ppo")
    assert run_side_by_side(make_tictactoe, 4, 120, opponent=opponent) > 50


def test_sb3_opponents_take_the_fast_path_checked_against_their_own_act(ttt_model):
    env = SelfPlayVecEnv(make_tictactoe, 4, learner="player_2", opponent=SB3Policy(ttt_model))
    env.seed(0)
    env.reset()
    assert list(env._batches.fast._verified.values()) == [True]


def test_the_fast_path_follows_weights_loaded_in_place(ttt_model):
    from sp_wrappers.envs.vector.fast_path import FastSB3

    opponent = SB3Policy(ttt_model, deterministic=True)
    other = MaskablePPO("MlpPolicy", SelfPlayEnv(make_tictactoe()), n_steps=64, seed=5)
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 2, size=(64, 3, 3, 2)).astype(np.int8)
    masks = rng.random((64, 9)) < 0.7
    masks[:, 0] = True
    fast = FastSB3()
    before = fast.act(opponent, obs, masks, None)
    np.testing.assert_array_equal(before, opponent.act(obs, masks, None))
    opponent.load_state_dict(SB3Policy(other).state_dict())  # as the sampler's latest weights
    after = fast.act(opponent, obs, masks, None)
    np.testing.assert_array_equal(after, opponent.act(obs, masks, None))
    assert not np.array_equal(before, after)


def test_pong_copies_play_exactly_as_selfplay_envs(pong_model):
    opponent = SB3Policy(pong_model, policy_id="ppo")
    assert run_side_by_side(make_pong_aec, 3, 205, opponent=opponent) >= 3


def test_simultaneous_and_multiplayer_games_match_selfplay_env():
    assert run_side_by_side(GuessGame, 4, 30) == 120
    assert run_side_by_side(lambda: RaceGame(n_players=3), 4, 60) > 10


def test_archive_opponents_and_latest_weights_match_selfplay_env(tmp_path, ttt_model):
    archive = SnapshotArchive(tmp_path, cache_size=4)
    for step in range(6):
        archive.save(ttt_model, step=step)
    sampler = OpponentSampler(archive, window=5, latest_ratio=0.3, deterministic=True)
    sampler.sync_latest_weights(1, SB3Policy(ttt_model).state_dict())
    assert run_side_by_side(make_tictactoe, 6, 80, opponent=sampler) > 40


def test_each_copy_draws_its_own_opponents(tmp_path, ttt_model):
    archive = SnapshotArchive(tmp_path)
    for step in range(10):
        archive.save(ttt_model, step=step)
    env = SelfPlayVecEnv(make_tictactoe, 8, opponent=OpponentSampler(archive, latest_ratio=0.0))
    env.seed(3)
    env.reset()
    drawn = {p.policy_id for copy in env.copies for p in copy.seat_policies.values()}
    assert len(drawn) >= 4


def test_opponents_evicted_from_the_archive_cache_are_freed(tmp_path, ttt_model):
    import gc

    archive = SnapshotArchive(tmp_path, cache_size=2)
    for step in range(12):
        archive.save(ttt_model, step=step)
    sampler = OpponentSampler(archive, window=None, latest_ratio=0.0)
    env = SelfPlayVecEnv(make_tictactoe, 4, learner="player_2", opponent=sampler)
    env.seed(0)
    env.reset()
    for _ in range(30):  # about 35 episodes, each drawing an opponent
        env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
    gc.collect()
    alive = {id(o) for o in gc.get_objects() if type(o) is SB3Policy and o.policy_id != "latest"}
    assert len(alive) <= 2 + 4  # the cache, the copies' current opponents


class NumberedDraws:
    """An opponent source whose k-th draw is ``RandomPolicy`` "r<k>"; ``drawn_at`` logs the value
    of ``now`` (set by the test: the vector step) at each draw."""

    def __init__(self, swap_every: int = 1, swap_unit: str = "episodes") -> None:
        self.swap_every, self.swap_unit = swap_every, swap_unit
        self.now = 0
        self.drawn_at: list[int] = []

    def draw(self, rng: np.random.Generator) -> RandomPolicy:
        self.drawn_at.append(self.now)
        return RandomPolicy(policy_id=f"r{len(self.drawn_at)}")


def opponents_in_play(env: SelfPlayVecEnv) -> list[str]:
    return [p.policy_id for seats in env.get_attr("seat_policies") for p in seats.values()]


def random_legal(env: Any, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])


def test_shared_draws_give_every_copy_one_opponent_for_n_envs_times_swap_every_episodes():
    source = NumberedDraws(swap_every=2)
    env = SelfPlayVecEnv(make_tictactoe, 4, opponent=source, opponent_draw="shared")
    env.seed(0)
    env.reset()
    assert opponents_in_play(env) == ["r1"] * 4
    finished: dict[str, int] = {}
    rng = np.random.default_rng(0)
    for _ in range(150):
        _, _, dones, infos = env.step(random_legal(env, rng))
        for i in np.flatnonzero(dones):
            opponent = infos[i]["selfplay"]["opponent"]
            finished[opponent] = finished.get(opponent, 0) + 1
        newest = len(source.drawn_at)
        # between swaps all copies face the newest line-up; copies still finishing an episode
        # against the previous one take the new one up at their next episode start
        assert set(opponents_in_play(env)) <= {f"r{newest - 1}", f"r{newest}"}
    started = dict(finished)
    for opponent in opponents_in_play(env):
        started[opponent] = started.get(opponent, 0) + 1
    newest = len(source.drawn_at)
    assert newest >= 5
    # every line-up served exactly n_envs * swap_every = 8 episodes; the newest is still filling
    assert [started[f"r{k}"] for k in range(1, newest)] == [8] * (newest - 1)
    assert 1 <= started[f"r{newest}"] <= 8


def test_shared_draws_with_swap_unit_steps_swap_at_the_first_episode_start_when_due():
    source = NumberedDraws(swap_every=3, swap_unit="steps")
    env = SelfPlayVecEnv(make_tictactoe, 4, opponent=source, opponent_draw="shared")
    env.seed(1)
    env.reset()
    steps_with_a_new_episode = []
    rng = np.random.default_rng(1)
    for step in range(1, 80):
        source.now = step
        _, _, dones, _ = env.step(random_legal(env, rng))
        if dones.any():
            steps_with_a_new_episode.append(step)
    expected = [0]  # the first line-up is drawn at reset
    while True:  # then: after 3 learner steps of each copy, at the next episode start
        due = [s for s in steps_with_a_new_episode if s >= expected[-1] + 3]
        if not due:
            break
        expected.append(due[0])
    assert source.drawn_at == expected
    assert len(expected) >= 8


def test_shared_draws_with_one_copy_play_exactly_as_per_env_draws():
    runs = {}
    for draw in ("per_env", "shared"):
        source = NumberedDraws(swap_every=3)
        env = SelfPlayVecEnv(make_tictactoe, 1, opponent=source, opponent_draw=draw)
        env.seed(5)
        trace = [env.reset().tolist()]
        rng = np.random.default_rng(5)
        for _ in range(60):
            obs, rewards, dones, infos = env.step(random_legal(env, rng))
            trace.append((obs.tolist(), rewards.tolist(), infos[0].get("selfplay")))
        runs[draw] = (trace, source.drawn_at)
    assert runs["per_env"] == runs["shared"]


def test_shared_draws_take_one_opponent_and_a_known_draw_name():
    with pytest.raises(ValueError, match="not a list per copy"):
        SelfPlayVecEnv(make_tictactoe, 2, opponent=[RandomPolicy()] * 2, opponent_draw="shared")
    with pytest.raises(ValueError, match="opponent_draw must be one of"):
        SelfPlayVecEnv(make_tictactoe, 2, opponent_draw="ghost")


# ------------------------------------------------------------------------------------------------
# Batching
# ------------------------------------------------------------------------------------------------


def test_opponents_facing_one_policy_are_answered_by_one_call_per_inner_step():
    policy = CountingPolicy(RandomPolicy())
    env = SelfPlayVecEnv(make_tictactoe, n_envs=8, learner="player_1", opponent=policy)
    env.seed(0)
    env.reset()
    assert policy.batch_sizes == []  # the learner moves first: no opponent move yet
    rng = np.random.default_rng(0)
    for _ in range(40):
        before = len(policy.batch_sizes)
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        # learner moves first in every game, so one opponent move per unfinished game per step
        assert len(policy.batch_sizes) - before <= 1
    assert np.mean(policy.batch_sizes) > 4
    assert max(policy.batch_sizes) == 8


def test_opponent_moves_of_new_games_join_the_current_batch():
    policy = CountingPolicy(RandomPolicy())
    env = SelfPlayVecEnv(make_tictactoe, n_envs=8, learner="player_2", opponent=policy)
    env.seed(0)
    env.reset()
    assert policy.batch_sizes == [8]
    rng = np.random.default_rng(0)
    for _ in range(40):
        before = len(policy.batch_sizes)
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        # continuing games and games restarted by the learner's final move: one call together;
        # games the opponent just finished restart with a second opponent move
        assert 1 <= len(policy.batch_sizes) - before <= 2
    assert sum(policy.batch_sizes) >= 8 * 41


def test_one_call_per_distinct_policy_per_inner_step():
    space = GuessGame().action_space("p1")
    a, b = CountingPolicy(RandomPolicy(space), "a"), CountingPolicy(RandomPolicy(space), "b")
    env = SelfPlayVecEnv(GuessGame, n_envs=8, learner="p0", opponent=[a, b] * 4)
    env.seed(0)
    env.reset()
    for _ in range(10):
        env.step(np.zeros(8, dtype=np.int64))
    assert a.batch_sizes == [4] * 10 and b.batch_sizes == [4] * 10


class Always:
    """Plays one action in every row."""

    def __init__(self, action: int) -> None:
        self.action = action

    def act(self, observations: Any, action_masks: Any, rng: np.random.Generator) -> np.ndarray:
        return np.full(len(observations), self.action)


def test_opponent_batches_answer_rows_in_their_order_with_one_call_per_policy():
    """The vector env hands its batches rows, not itself: interleaved rows of two policies come
    back in their own order, each policy asked once for all of its rows."""
    from sp_wrappers.envs.vector.batching import OpponentBatches, OpponentRow

    game = make_tictactoe()
    game.reset(seed=0)
    seen = game.observe("player_1")
    batches = OpponentBatches(game, keep_dict_obs=False)
    a, b = CountingPolicy(Always(3), "a"), CountingPolicy(Always(5), "b")
    mask = seen["action_mask"].astype(bool)
    rows = [
        OpponentRow(policy, "player_1", seen["observation"], mask, np.random.default_rng(i), (i,))
        for i, policy in enumerate([a, b, a, b, a])
    ]
    assert batches.answer(rows) == [3, 5, 3, 5, 3]
    assert a.batch_sizes == [3] and b.batch_sizes == [2]


def test_snapshot_copies_sharing_a_network_are_batched_together(tmp_path, ttt_model):
    archive = SnapshotArchive(tmp_path)
    archive.save(ttt_model, step=0)
    sampler = OpponentSampler(archive, latest_ratio=0.0, deterministic=True)
    env = SelfPlayVecEnv(make_tictactoe, n_envs=6, learner="player_2", opponent=sampler)
    calls: list[int] = []
    inner = type(archive.load_policy("snapshot-0000")).act

    def counting_act(self, observations, masks, rng):
        calls.append(len(observations))
        return inner(self, observations, masks, rng)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(archive.load_policy("snapshot-0000")), "act", counting_act)
        env.seed(0)
        env.reset()
    assert calls == [6]


# ------------------------------------------------------------------------------------------------
# The VecEnv contract
# ------------------------------------------------------------------------------------------------


def test_turn_state_kept_by_a_wrapper_of_ours_is_what_the_learner_sees():
    """PettingZoo's own wrappers forward turn state to the game (the driver reads it there
    directly); a wrapper that keeps its own ``rewards`` is read, also under PettingZoo's."""
    from pettingzoo.classic import tictactoe_v3
    from pettingzoo.utils.wrappers import BaseWrapper, OrderEnforcingWrapper

    class SevenPerMove(BaseWrapper):
        def step(self, action: Any) -> None:
            super().step(action)
            self.rewards = dict.fromkeys(self.env.rewards, 7.0)

    def make() -> Any:
        return OrderEnforcingWrapper(SevenPerMove(tictactoe_v3.raw_env()))

    for draw in ("per_env", "shared"):
        env = SelfPlayVecEnv(make, 2, learner="player_1", opponent_draw=draw)
        env.seed(0)
        env.reset()
        rng = np.random.default_rng(0)
        _, rewards, dones, _ = env.step(random_legal(env, rng))  # learner's and opponent's move
        assert not dones.any() and rewards.tolist() == [14.0, 14.0]
        env.close()


def test_reset_step_auto_reset_and_terminal_observation():
    env = SelfPlayVecEnv(make_tictactoe, n_envs=3, learner="player_1")
    env.seed(5)
    obs = env.reset()
    assert obs.shape == (3, 3, 3, 2) and obs.dtype == env.observation_space.dtype
    assert env.reset_infos == [{"seat": "player_1"}] * 3
    finished = 0
    for _ in range(30):
        masks = env.action_masks()
        obs, rewards, dones, infos = env.step(masks.argmax(axis=1))
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 3
        for i in np.flatnonzero(dones):
            finished += 1
            terminal = infos[i]["terminal_observation"]
            assert terminal.shape == (3, 3, 2) and terminal.sum() >= 5  # the finished board
            assert obs[i].sum() == 0  # the learner moves first on the new, empty board
            assert infos[i]["selfplay"]["outcome"] in (0.0, 0.5, 1.0)
    assert finished >= 3


def test_seed_makes_resets_reproducible_and_is_used_once():
    env = SelfPlayVecEnv(make_tictactoe, n_envs=4, learner="random")
    env.seed(1)
    env.reset()
    seats = env.get_attr("learner")
    env.seed(1)
    env.reset()
    assert env.get_attr("learner") == seats
    assert env._seeds == [None] * 4


def test_options_reach_the_copies():
    env = SelfPlayVecEnv(make_tictactoe, n_envs=2, learner="random")
    env.set_options({"learner_seat": "player_2"})
    env.reset()
    assert env.get_attr("learner") == ["player_2", "player_2"]
    with pytest.raises(ValueError, match="learner_seat"):
        env.set_options({"learner_seat": "nobody"})
        env.reset()


def test_get_attr_set_attr_env_method_reach_copies_and_games():
    env = SelfPlayVecEnv(make_tictactoe, n_envs=3)
    env.reset()
    assert env.get_attr("learner_seats") == [["player_1", "player_2"]] * 3
    assert env.get_attr("possible_agents", indices=[1]) == [["player_1", "player_2"]]  # the game
    assert env.has_attr("action_masks") and not env.has_attr("no_such_attribute")
    masks = env.env_method("action_masks")
    assert len(masks) == 3 and masks[0].shape == (9,)
    np.testing.assert_array_equal(np.stack(masks), env.action_masks())
    env.set_attr("outcome_fn", lambda returns, seat: 0.25, indices=0)
    assert env.get_attr("outcome_fn")[1] is None
    env.set_attr("custom_flag", 7, indices=2)  # not a copy attribute: set on the game
    assert env.get_attr("custom_flag", indices=2) == [7]
    game_space = env.env_method("observation_space", "player_1", indices=0)[0]
    assert game_space["observation"].shape == (3, 3, 2)
    assert env.env_is_wrapped(VecMonitor) == [False] * 3


def test_sync_latest_weights_reaches_a_shared_sampler_once(tmp_path, ttt_model):
    archive = SnapshotArchive(tmp_path)
    archive.save(ttt_model, step=0)
    sampler = OpponentSampler(archive, latest_ratio=1.0)
    calls: list[int] = []
    original = sampler.sync_latest_weights
    sampler.sync_latest_weights = lambda v, s: (calls.append(v), original(v, s))[1]
    env = VecMonitor(SelfPlayVecEnv(make_tictactoe, n_envs=4, opponent=sampler))
    state = SB3Policy(ttt_model).state_dict()
    assert env.env_method("sync_latest_weights", 3, state) == [None] * 4
    assert calls == [3] and sampler.latest_version == 3
    env.reset()
    assert {p.policy_id for c in env.unwrapped.copies for p in c.seat_policies.values()} == {
        "latest"
    }


@pytest.mark.usefixtures("single_thread_torch")
@pytest.mark.parametrize("wrap", ["monitor", "normalize", "framestack"])
def test_sb3_vec_wrappers_train_with_maskable_ppo(wrap):
    env = VecMonitor(SelfPlayVecEnv(make_tictactoe, n_envs=4))
    if wrap == "normalize":
        env = VecNormalize(env)
    elif wrap == "framestack":
        env = VecFrameStack(env, n_stack=2)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256
    if wrap == "monitor":
        assert len(model.ep_info_buffer) > 0


@pytest.mark.usefixtures("single_thread_torch")
def test_plain_ppo_and_selfplay_callback_work_unchanged(tmp_path):
    archive = SnapshotArchive(tmp_path)
    env = make_selfplay_vec_env(make_tictactoe, n_envs=4, seed=0, opponent=OpponentSampler(archive))
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    callback = SelfPlayCallback(archive, save_every=64)
    model.learn(256, callback=callback)
    assert len(archive) >= 3
    assert len(callback.outcomes) > 0 or callback.snapshots_saved > 0
    assert env.unwrapped.copies[0].opponent_source.latest_version == callback._sync_version


@pytest.mark.learning
@pytest.mark.usefixtures("single_thread_torch")
def test_maskable_ppo_learns_tictactoe_against_random():
    from pettingzoo.classic import tictactoe_v3

    env = make_selfplay_vec_env(tictactoe_v3.env, n_envs=8, seed=0)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=128,
        n_epochs=4,
        learning_rate=1e-3,
        policy_kwargs={"net_arch": [64, 64]},
        seed=0,
        device="cpu",
    )
    model.learn(6_144)  # seeds 0-2 win minus lose 52-64 games in 100 here
    result = play_match(
        tictactoe_v3.env, SB3Policy(model, deterministic=True), RandomPolicy(), 100, seed=123
    )
    assert result.wins - result.losses >= 40, str(result)


# ------------------------------------------------------------------------------------------------
# Worker processes
# ------------------------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] not in "ZX"
    except (FileNotFoundError, IndexError):
        return False


def _wait_dead(pids: list[int], timeout: float = 10.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_workers_give_the_same_games_as_in_process(pong_model):
    opponent = SB3Policy(pong_model, policy_id="ppo")
    assert run_side_by_side(make_pong_aec, 2, 205, num_workers=2, opponent=opponent) >= 2
    assert run_side_by_side(make_tictactoe, 3, 60, num_workers=2) > 20


def test_workers_stop_on_close_and_when_a_with_block_raises():
    env = SelfPlayVecEnv(make_tictactoe, n_envs=4, num_workers=2)
    pids = env.worker_pids
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    env.reset()
    env.close()
    env.close()  # twice is fine
    assert _wait_dead(pids)
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
    with pytest.raises(ZeroDivisionError):
        with SelfPlayVecEnv(make_tictactoe, n_envs=2, num_workers=2) as env:
            pids = env.worker_pids
            env.reset()
            raise ZeroDivisionError("trainer failed")
    assert _wait_dead(pids)


def test_workers_do_not_outlive_a_trainer_that_raises():
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, "tests")
        from conftest import make_tictactoe
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback
        from sp_wrappers.envs.vector.vec_env import SelfPlayVecEnv

        class Boom(BaseCallback):
            def _on_step(self):
                raise RuntimeError("trainer failed")

        if __name__ == "__main__":
            env = SelfPlayVecEnv(make_tictactoe, n_envs=2, num_workers=2)
            print(*env.worker_pids, flush=True)
            MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16).learn(64, callback=Boom())
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert "trainer failed" in result.stderr and result.returncode != 0
    pids = [int(p) for p in result.stdout.split()]
    assert len(pids) == 2 and _wait_dead(pids)


def test_a_game_that_fails_in_a_worker_is_reported():
    with pytest.raises(RuntimeError, match="no game here"):
        SelfPlayVecEnv(_failing_game, n_envs=2, num_workers=1)


def _failing_game() -> Any:
    raise RuntimeError("no game here")


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------


def test_bad_input_is_refused_with_the_fix():
    with pytest.raises(TypeError, match="constructor"):
        SelfPlayVecEnv(make_tictactoe(), n_envs=2)
    with pytest.raises(TypeError, match="function"):
        SelfPlayVecEnv("tictactoe", n_envs=2)
    with pytest.raises(ValueError, match="n_envs"):
        SelfPlayVecEnv(make_tictactoe, n_envs=0)
    with pytest.raises(ValueError, match="num_workers"):
        SelfPlayVecEnv(make_tictactoe, n_envs=2, num_workers=-1)
    with pytest.raises(ValueError, match="one opponent"):
        SelfPlayVecEnv(make_tictactoe, n_envs=2, opponent=[RandomPolicy()] * 3)
    with pytest.raises(ValueError, match="not an agent"):
        SelfPlayVecEnv(make_tictactoe, n_envs=2, learner="player_9")
    with pytest.raises(TypeError, match="opponent must be"):
        SelfPlayVecEnv(make_tictactoe, n_envs=2, opponent=42)
    env = SelfPlayVecEnv(make_tictactoe, n_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset()
    with pytest.raises(ValueError, match="one action per env"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="outside the learner's action space"):
        env.step(np.array([0, 12]))


def test_an_opponent_returning_illegal_actions_is_named():
    from sp_wrappers.core.policies import CallablePolicy

    cheat = CallablePolicy(
        lambda obs, masks: np.zeros(len(obs), dtype=np.int64), "cheat", batched=True
    )
    env = SelfPlayVecEnv(make_tictactoe, n_envs=2, learner="player_1", opponent=cheat)
    env.reset()
    with pytest.raises(ValueError, match="cheat.*illegal"):
        env.step(np.array([0, 0]))


def test_env_kwargs_and_workers_with_env_kwargs():
    from pettingzoo.classic import tictactoe_v3

    env = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2, env_kwargs={"render_mode": "ansi"})
    assert env.render_mode == "ansi"


def test_device_moves_sb3_opponents_when_they_are_drawn(ttt_model):
    opponent = SB3Policy(ttt_model, policy_id="moved")
    env = SelfPlayVecEnv(make_tictactoe, n_envs=2, learner="player_1", opponent=opponent)
    env.reset()
    assert opponent.device == "cpu"  # already there: untouched
    env = SelfPlayVecEnv(
        make_tictactoe, n_envs=2, learner="player_1", opponent=opponent, device="meta"
    )
    env.reset()  # the learner moves first: the opponent is placed, not yet asked to act
    assert opponent.device == "meta"
    assert next(opponent.policy.parameters()).device.type == "meta"
