"""KOpponentRollouts: k snapshots per rollout, an outcome vector, and a reward written into SB3's
rollout buffer at the finished episodes' last steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.utils import obs_as_tensor

from sp_wrappers import (
    KOpponentRecord,
    KOpponentRollouts,
    SelfPlayCallback,
    SelfPlayVecEnv,
    SnapshotArchive,
    novelty_reward,
)

N_STEPS = 16


def _archive_with(tmp_path, n_snapshots: int, name: str = "archive") -> SnapshotArchive:
    archive = SnapshotArchive(tmp_path / name)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=1)
    for i in range(n_snapshots):
        model = MaskablePPO("MlpPolicy", venv, seed=100 + i, policy_kwargs={"net_arch": [16]})
        archive.save(model, step=i)
    venv.close()
    return archive


def _model(venv, seed: int = 0, algo=MaskablePPO):
    return algo(
        "MlpPolicy",
        venv,
        n_steps=N_STEPS,
        batch_size=32,
        n_epochs=1,
        seed=seed,
        policy_kwargs={"net_arch": [16]},
    )


class BufferProbe(BaseCallback):
    """Runs after KOpponentRollouts: keeps a copy of every rewritten rollout buffer, the raw game
    rewards and the opponents seen per env copy, and the value of the rollout's last observation."""

    def __init__(self, kopp: KOpponentRollouts) -> None:
        super().__init__()
        self.kopp = kopp
        self.rollouts: list[dict] = []
        self._game_rewards: list[np.ndarray] = []
        self._opponents: list[list[str | None]] = []

    def _on_rollout_start(self) -> None:
        self._game_rewards, self._opponents = [], []

    def _on_step(self) -> bool:
        self._game_rewards.append(np.array(self.locals["rewards"], dtype=np.float32))
        self._opponents.append(
            [info.get("selfplay", {}).get("opponent") for info in self.locals["infos"]]
        )
        return True

    def _on_rollout_end(self) -> None:
        buffer = self.model.rollout_buffer
        with torch.no_grad():
            last_values = self.model.policy.predict_values(
                obs_as_tensor(self.model._last_obs, self.model.device)
            )
        self.rollouts.append(
            dict(
                rewards=buffer.rewards.copy(),
                values=buffer.values.copy(),
                episode_starts=buffer.episode_starts.copy(),
                returns=buffer.returns.copy(),
                advantages=buffer.advantages.copy(),
                last_values=last_values.cpu().numpy().ravel(),
                last_dones=np.asarray(self.model._last_episode_starts, dtype=np.float32),
                game_rewards=np.stack(self._game_rewards),
                opponents=self._opponents,
                record=self.kopp.last_record,
                assigned=list(self.kopp._assigned),
            )
        )


def _learn(
    tmp_path, archive, reward_fn, mode="replace", k=2, n_envs=4, rollouts=3, seed=0, opponent=None
):
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=n_envs, opponent=opponent)
    venv.seed(seed)
    model = _model(venv, seed=seed)
    kopp = KOpponentRollouts(archive, k=k, reward_fn=reward_fn, mode=mode, seed=seed)
    probe = BufferProbe(kopp)
    model.learn(N_STEPS * n_envs * rollouts, callback=CallbackList([kopp, probe]))
    return model, kopp, probe


def test_each_rollout_plays_k_distinct_snapshots_that_stay_fixed_for_the_rollout(tmp_path):
    archive = _archive_with(tmp_path, 4)
    _, kopp, probe = _learn(tmp_path, archive, lambda record, history: 0.0, rollouts=4)
    for rollout in probe.rollouts:
        record: KOpponentRecord = rollout["record"]
        assert len(record.opponents) == 2 == len(set(record.opponents))
        assert set(record.opponents) <= {info.id for info in archive}
        assert rollout["assigned"] == [record.opponents[0]] * 2 + [record.opponents[1]] * 2
        # after each copy's first finished episode (begun before the rollout), every episode of
        # the rollout is played against the opponent assigned to that copy
        for env in range(4):
            seen = [step[env] for step in rollout["opponents"] if step[env] is not None]
            assert all(opponent == rollout["assigned"][env] for opponent in seen[1:])
        counted = [e for e in record.episodes if e.slot is not None]
        assert sum(record.counts) == len(counted)
        for episode in counted:
            assert record.opponents[episode.slot] == episode.opponent
    assert len(kopp.history) == 4


def test_the_reward_is_written_at_finished_episodes_last_steps_and_nowhere_else(tmp_path):
    archive = _archive_with(tmp_path, 2)
    _, _, probe = _learn(tmp_path, archive, lambda record, history: 7.0, mode="replace")
    for rollout in probe.rollouts:
        record = rollout["record"]
        expected = np.zeros_like(rollout["rewards"])
        for episode in record.episodes:
            expected[episode.row, episode.env] = 7.0
        assert record.episodes, "every rollout of 16 tic-tac-toe steps finishes some game"
        np.testing.assert_array_equal(rollout["rewards"], expected)


def test_add_mode_adds_the_reward_to_the_games_own_rewards(tmp_path):
    archive = _archive_with(tmp_path, 2)
    _, _, probe = _learn(tmp_path, archive, lambda record, history: 0.25, mode="add")
    for rollout in probe.rollouts:
        expected = rollout["game_rewards"].copy()
        for episode in rollout["record"].episodes:
            expected[episode.row, episode.env] += 0.25
        np.testing.assert_allclose(rollout["rewards"], expected)


def test_recomputed_returns_and_advantages_follow_gae_on_the_rewritten_rewards(tmp_path):
    archive = _archive_with(tmp_path, 2)
    model, _, probe = _learn(tmp_path, archive, lambda record, history: -0.5)
    gamma, lam = model.gamma, model.gae_lambda
    for rollout in probe.rollouts:
        rewards, values = rollout["rewards"], rollout["values"]
        starts = rollout["episode_starts"]
        advantages = np.zeros_like(rewards)
        last_gae = np.zeros(rewards.shape[1], dtype=np.float32)
        for t in reversed(range(len(rewards))):
            if t == len(rewards) - 1:
                not_done, next_values = 1.0 - rollout["last_dones"], rollout["last_values"]
            else:
                not_done, next_values = 1.0 - starts[t + 1], values[t + 1]
            delta = rewards[t] + gamma * next_values * not_done - values[t]
            last_gae = delta + gamma * lam * not_done * last_gae
            advantages[t] = last_gae
        np.testing.assert_allclose(rollout["advantages"], advantages, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rollout["returns"], advantages + values, rtol=1e-5, atol=1e-6)


def test_giving_back_each_episodes_own_reward_trains_exactly_as_without_the_callback(tmp_path):
    archive = _archive_with(tmp_path, 2)
    ids = [info.id for info in archive]
    own = lambda record, history: record.episode_returns  # noqa: E731

    # both runs start with the opponents the callback will assign (k = every snapshot, so the
    # callback's draw is both snapshots, in archive order)
    lineup = [archive.load_policy(i) for i in (ids[0], ids[0], ids[1], ids[1])]
    with_callback, kopp, probe = _learn(
        tmp_path, archive, own, mode="replace", seed=3, opponent=lineup
    )
    assert all(r["assigned"] == [ids[0], ids[0], ids[1], ids[1]] for r in probe.rollouts)
    assert all(r["record"].episodes for r in probe.rollouts)

    # the same opponents per copy, given to the env directly, and no callback
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4, opponent=lineup)
    venv.seed(3)
    without = _model(venv, seed=3)
    without.learn(N_STEPS * 4 * 3)
    for a, b in zip(
        with_callback.policy.state_dict().values(),
        without.policy.state_dict().values(),
        strict=True,
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_an_opponent_with_no_finished_episode_is_marked_missing_not_guessed(tmp_path):
    archive = _archive_with(tmp_path, 2)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2)
    # one learner step per copy: no game of tic-tac-toe can finish in it
    model = MaskablePPO("MlpPolicy", venv, n_steps=1, batch_size=2, seed=0)
    kopp = KOpponentRollouts(archive, k=2, reward_fn=lambda r, h: 0.0)
    model.learn(2, callback=kopp)
    record = kopp.last_record
    assert record.missing.all()
    assert np.isnan(record.outcomes).all() and np.isnan(record.returns).all()


def test_history_is_saved_with_the_archive_and_a_resumed_run_keeps_it(tmp_path):
    archive = _archive_with(tmp_path, 2)
    seen_lengths = []

    def reward(record, history):
        seen_lengths.append(len(history))
        return 0.0

    _learn(tmp_path, archive, reward, rollouts=2)
    resumed = KOpponentRollouts(archive, k=2, reward_fn=reward)
    assert len(resumed.history) == 2
    assert [r.opponents for r in resumed.history] == [sorted(r.opponents) for r in resumed.history]
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4)
    _model(venv).learn(N_STEPS * 4, callback=resumed)
    assert seen_lengths == [0, 1, 2]
    assert resumed.last_record.rollout == 2


def test_games_go_into_the_match_history_with_selfplay_callback(tmp_path):
    archive = _archive_with(tmp_path, 2)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4)
    model = _model(venv)
    kopp = KOpponentRollouts(archive, k=2, reward_fn=novelty_reward())
    model.learn(
        N_STEPS * 4 * 2,
        callback=CallbackList([SelfPlayCallback(archive, save_every=10_000), kopp]),
    )
    opponents = {m.player_b for m in archive.matches(player="learner")}
    assert set(kopp.last_record.opponents) <= opponents


def test_novelty_reward_compares_outcomes_by_opponent_id():
    def record(opponents, outcomes):
        n = len(opponents)
        return KOpponentRecord(0, 0, opponents, np.array(outcomes), np.zeros(n), np.ones(n))

    reward = novelty_reward(k_nearest=2)
    now = record(["a", "b"], [1.0, 0.0])
    history = [record(["b", "a"], [0.0, 1.0]), record(["c", "d"], [0.0, 0.0])]
    assert reward(now, history) == 0.0  # same results against the same opponents; c/d not shared
    history.append(record(["a", "x"], [0.0, 0.5]))
    assert reward(now, history) == pytest.approx(0.5)  # mean of the two nearest: 0 and 1
    assert novelty_reward(by="slot")(now, [record(["b", "a"], [0.0, 1.0])]) == 1.0


def test_bad_setups_fail_with_messages_that_name_the_fix(tmp_path):
    small = _archive_with(tmp_path, 1)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=4)
    with pytest.raises(ValueError, match="needs k=2 distinct opponents.*holds 1 snapshot"):
        _model(venv).learn(64, callback=KOpponentRollouts(small, k=2, reward_fn=lambda r, h: 0))

    archive = _archive_with(tmp_path, 3, name="three")
    with pytest.raises(ValueError, match="n_envs=4 is not a multiple of k=3"):
        _model(venv).learn(64, callback=KOpponentRollouts(archive, k=3, reward_fn=lambda r, h: 0))

    wrong_shape = KOpponentRollouts(archive, k=2, reward_fn=lambda r, h: np.zeros(1000))
    with pytest.raises(ValueError, match=r"shape \(1000,\).*one per episode"):
        _model(venv).learn(64, callback=wrong_shape)

    with pytest.raises(TypeError, match="off-policy.*PPO, A2C or MaskablePPO"):
        DQN("MlpPolicy", venv, learning_starts=0).learn(
            16, callback=KOpponentRollouts(archive, k=2, reward_fn=lambda r, h: 0)
        )
    with pytest.raises(TypeError, match="takes a SnapshotArchive or the path"):
        KOpponentRollouts(42, k=2, reward_fn=lambda r, h: 0)
    with pytest.raises(ValueError, match="mode must be one of"):
        KOpponentRollouts(archive, k=2, reward_fn=lambda r, h: 0, mode="swap")
    venv.close()


def test_plain_ppo_learns_through_the_callback_and_a_path_opens_the_archive(tmp_path):
    archive = _archive_with(tmp_path, 2)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2)
    model = PPO("MlpPolicy", venv, n_steps=N_STEPS, batch_size=32, seed=0)
    kopp = KOpponentRollouts(str(archive.path), k=2, reward_fn=lambda r, h: 0.0)
    model.learn(N_STEPS * 2 * 2, callback=kopp)
    assert len(kopp.history) == 2


def test_novelty_example_runs_on_a_tiny_budget_and_prints_vectors_and_spread(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "novelty_selfplay.py"
    args = ["--timesteps", "2048", "--warmup", "2048", "--k", "2", "--n-envs", "2"]
    result = subprocess.run(
        [sys.executable, str(script), *args, "--positions", "50", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "rollout 0 step" in result.stdout
    assert "plain self-play" in result.stdout and "novelty reward" in result.stdout


def test_each_rollouts_vector_opponents_and_reward_reach_sb3s_logger(tmp_path):
    from stable_baselines3.common.logger import KVWriter, Logger

    class Capture(KVWriter):
        def __init__(self) -> None:
            self.rows: list[dict] = []

        def write(self, key_values, key_excluded, step=0) -> None:
            self.rows.append(dict(key_values))

    archive = _archive_with(tmp_path, 2)
    venv = SelfPlayVecEnv(tictactoe_v3.env, n_envs=2)
    model = _model(venv)
    capture = Capture()
    model.set_logger(Logger(None, [capture]))
    kopp = KOpponentRollouts(archive, k=2, reward_fn=lambda r, h: 0.5)
    model.learn(N_STEPS * 2 * 2, callback=kopp)
    row = capture.rows[-1]
    assert row["kopp/opponents"] == ",".join(kopp.last_record.opponents)
    assert row["kopp/games_0"] == kopp.last_record.counts[0]
    assert "kopp/outcome_1" in row and row["kopp/reward_mean"] == 0.5


def _team_venv(n_envs: int):
    from death_game import DeathGame

    from sp_wrappers.envs.vector.factory import make_selfplay_vec_env

    # team a's agents terminate in rounds 1 and 2: every team episode ends terminated, so the
    # rewritten rewards hold no value bootstrapping
    return make_selfplay_vec_env(
        lambda: DeathGame({"a_0": 1, "a_1": 2}, max_cycles=10),
        n_envs=n_envs,
        learner="a",
        teams="prefix",
    )


def _team_archive(tmp_path, n_snapshots: int) -> SnapshotArchive:
    archive = SnapshotArchive(tmp_path / "team-archive")
    venv = _team_venv(2)
    for i in range(n_snapshots):
        archive.save(_model(venv, seed=100 + i, algo=PPO), step=i)
    venv.close()
    return archive


def test_every_teammate_slot_gets_its_games_reward_and_each_game_counts_once(tmp_path):
    archive = _team_archive(tmp_path, 2)
    venv = _team_venv(4)  # 4 game copies x 2 team slots
    model = _model(venv, algo=PPO)
    kopp = KOpponentRollouts(archive, k=2, reward_fn=lambda record, history: 7.0, seed=0)
    probe = BufferProbe(kopp)
    model.learn(N_STEPS * venv.num_envs * 2, callback=CallbackList([kopp, probe]))
    for rollout in probe.rollouts:
        record = rollout["record"]
        # each opponent's block is whole game copies: slots 0-3 (games 0, 1), slots 4-7
        assert rollout["assigned"] == [record.opponents[0]] * 4 + [record.opponents[1]] * 4
        ends = np.argwhere(rollout["episode_starts"][1:] == 1)  # (row - 1, slot) of each end
        expected = np.zeros_like(rollout["rewards"])
        expected[ends[:, 0], ends[:, 1]] = 7.0
        # every slot of a finished game, teammates included, ends on the rollout's reward
        np.testing.assert_array_equal(rollout["rewards"][:-1], expected[:-1])
        assert {e.env for e in record.episodes} == set(range(8))
        counted = [e for e in record.episodes if e.counted and e.slot is not None]
        assert all(e.env % 2 == 0 for e in record.episodes if e.counted)
        assert int(sum(record.counts)) == len(counted)  # one count per game, not per teammate
    venv.close()


def test_k_opponent_blocks_that_would_split_a_team_game_copy_are_refused(tmp_path):
    archive = _team_archive(tmp_path, 2)
    venv = _team_venv(3)  # 6 slots: k=2 blocks of 3 slots would split game copy 1
    with pytest.raises(ValueError, match="n_envs=3 is not a multiple of k=2.*whole game copies"):
        _model(venv, algo=PPO).learn(64, callback=KOpponentRollouts(archive, k=2, reward_fn=max))
    venv.close()
