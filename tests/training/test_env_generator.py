"""Environment generators (#14): each env copy's game and reward change between episodes, the
configuration is recorded in info and the archive, and a resumed run keeps it.

Real games: 5x5 Go (komi keeps the spaces, board_size changes them); real MaskablePPO learners
on tiny budgets.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.classic import go_v5
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import SubprocVecEnv

from sp_wrappers import (
    EnvGenerator,
    EnvHistory,
    GameConfig,
    SelfPlayCallback,
    SelfPlayEnv,
    SelfPlayVecEnv,
    SnapshotArchive,
    TeamVecEnv,
    make_selfplay_vec_env,
    win_rates_by_config,
)
from sp_wrappers.cli import main as cli_main
from sp_wrappers.cli.app import run_command

ROOT = Path(__file__).resolve().parents[2]
go5 = functools.partial(go_v5.env, board_size=5)


def komis(venv) -> list[float]:
    return [float(game._komi) for game in venv.get_attr("unwrapped")]


def first_legal(venv) -> np.ndarray:
    return np.array([np.flatnonzero(m)[0] for m in venv.action_masks()])


def play_until_done(venv, index: int, max_steps: int = 500) -> list[dict]:
    """Step with first-legal actions until copy ``index`` ends an episode; every step's infos."""
    history = []
    for _ in range(max_steps):
        _, _, dones, infos = venv.step(first_legal(venv))
        history.append(infos)
        if dones[index]:
            return history
    raise AssertionError(f"copy {index} never ended an episode")


# ------------------------------------------------------------------------------------------------
# set_game_config
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_new_game_config_applies_at_the_next_episode_start_of_exactly_the_chosen_copy(
    num_workers,
):
    with SelfPlayVecEnv(go5, n_envs=3, learner="black_0", num_workers=num_workers) as venv:
        venv.seed(0)
        venv.reset()
        venv.step(first_legal(venv))  # every copy is mid-game
        venv.set_game_config({"komi": 2.5}, indices=[1])
        assert komis(venv) == [7.5, 7.5, 7.5]  # never mid-game
        assert venv.get_attr("game_config") == [None, None, None]
        infos = play_until_done(venv, 1)
        assert "config" not in infos[-1][1]["selfplay"]  # that game was played under the old one
        assert komis(venv) == [7.5, 2.5, 7.5]
        assert venv.get_attr("game_config") == [None, {"komi": 2.5}, None]
        infos = play_until_done(venv, 1)
        assert infos[-1][1]["selfplay"]["config"] == {"komi": 2.5}


def test_set_game_config_is_reachable_through_env_method_and_wrappers():
    venv = make_selfplay_vec_env(go5, n_envs=2, seed=0, learner="black_0")  # in VecMonitor
    venv.reset()
    venv.env_method("set_game_config", {"komi": 0.5}, indices=[0])
    venv.reset()
    assert venv.get_attr("game_config") == [{"komi": 0.5}, None]
    assert komis(venv) == [0.5, 7.5]
    venv.close()


def test_selfplay_env_rebuilds_its_game_from_its_constructor_at_reset_only():
    env = SelfPlayEnv(go5, learner="black_0")
    env.reset(seed=0)
    env.set_game_config({"komi": 3.5})
    assert env.game.unwrapped._komi == 7.5 and env.game_config is None
    env.reset()
    assert env.game.unwrapped._komi == 3.5 and env.game_config == {"komi": 3.5}
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = terminated or truncated
    assert info["selfplay"]["config"] == {"komi": 3.5}


def test_selfplay_env_given_an_instance_needs_env_fn_to_rebuild():
    env = SelfPlayEnv(go5(), learner="black_0")
    with pytest.raises(TypeError, match="env_fn=go_v5.env"):
        env.set_game_config({"komi": 3.5})
    env = SelfPlayEnv(go5(), learner="black_0", env_fn=go5)
    env.set_game_config({"komi": 3.5})
    env.reset(seed=0)
    assert env.game.unwrapped._komi == 3.5


@pytest.mark.parametrize("num_workers", [0, 1])
def test_a_config_that_changes_the_spaces_is_refused_and_the_copies_play_on(num_workers):
    with SelfPlayVecEnv(go5, n_envs=2, learner="black_0", num_workers=num_workers) as venv:
        venv.seed(0)
        obs = venv.reset()
        with pytest.raises(
            ValueError, match=r"black_0's observation space .*\(5, 5, 17\).*->.*7, 7"
        ):
            venv.set_game_config({"board_size": 7})
        assert venv.get_attr("game_config") == [None, None]
        for index in (0, 1):  # whole episodes on the old games, through their next reset
            infos = play_until_done(venv, index)
            assert "config" not in infos[-1][index]["selfplay"]
        obs, *_ = venv.step(first_legal(venv))
        assert obs.shape == (2, 5, 5, 17)
        assert komis(venv) == [7.5, 7.5]


def test_a_refused_config_leaves_a_selfplay_env_with_its_game():
    env = SelfPlayEnv(go5, learner="black_0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action space Discrete\\(26\\) -> Discrete\\(50\\)"):
        env.set_game_config({"board_size": 7})
    obs, _ = env.reset()
    assert obs.shape == (5, 5, 17) and env.game_config is None


def test_game_kwargs_that_cannot_be_recorded_are_refused():
    env = SelfPlayEnv(go5, learner="black_0")
    with pytest.raises(TypeError, match="not JSON-able"):
        env.set_game_config({"komi": object()})
    with pytest.raises(ValueError, match="set_reward_fn"):
        env.set_game_config({"reward_fn": "x"})


# ------------------------------------------------------------------------------------------------
# set_reward_fn
# ------------------------------------------------------------------------------------------------


def run_episodes(venv, steps: int):
    venv.seed(3)
    venv.reset()
    out = []
    for _ in range(steps):
        obs, rewards, dones, infos = venv.step(first_legal(venv))
        out.append((obs.copy(), rewards.copy(), dones.copy(), infos))
    return out


@pytest.mark.parametrize("num_workers", [0, 1])
def test_the_reward_transform_changes_the_learners_rewards_and_nothing_else(num_workers):
    seen_infos = []

    def double_plus_win_bonus(reward, info):
        seen_infos.append(info)
        info["seat"] = "tampered"  # a copy: the learner's info is unchanged
        bonus = 0.25 if "selfplay" in info and info["selfplay"]["outcome"] == 1.0 else 0.0
        return 2.0 * reward + bonus

    plain = SelfPlayVecEnv(go5, n_envs=2, learner="black_0", num_workers=num_workers)
    shaped = SelfPlayVecEnv(go5, n_envs=2, learner="black_0", num_workers=num_workers)
    shaped.set_reward_fn(double_plus_win_bonus, indices=[1])
    a, b = run_episodes(plain, 120), run_episodes(shaped, 120)
    plain.close()
    shaped.close()
    ends = 0
    for (obs_a, r_a, d_a, infos_a), (obs_b, r_b, d_b, infos_b) in zip(a, b, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(d_a, d_b)
        assert r_b[0] == r_a[0]
        expected = 2.0 * r_a[1]
        if d_a[1]:
            ends += 1
            summary_a, summary_b = infos_a[1]["selfplay"], infos_b[1]["selfplay"]
            config = summary_b.pop("config")
            assert list(config) == ["reward_fn"]
            assert config["reward_fn"].endswith("<locals>.double_plus_win_bonus")
            assert summary_a == summary_b  # outcome, returns: the game's own
            expected += 0.25 if summary_a["outcome"] == 1.0 else 0.0
        assert r_b[1] == pytest.approx(expected)
        assert infos_b[1]["seat"] == "black_0"
    assert ends >= 2
    assert sum("selfplay" in info for info in seen_infos) == ends
    assert all("outcome" in info["selfplay"] for info in seen_infos if "selfplay" in info)


# ------------------------------------------------------------------------------------------------
# EnvGenerator
# ------------------------------------------------------------------------------------------------


class CollectEpisodes(BaseCallback):
    """Every finished episode's (step, index, info["selfplay"]), as the training loop saw it."""

    def __init__(self) -> None:
        super().__init__()
        self.episodes: list[tuple[int, int, dict]] = []

    def _on_step(self) -> bool:
        for index, (info, done) in enumerate(
            zip(self.locals["infos"], self.locals["dones"], strict=True)
        ):
            if done and "selfplay" in info:  # (a team game reports on its first slot only)
                self.episodes.append((self.num_timesteps, index, dict(info["selfplay"])))
        return True


def alternating_komi(step, index, history):
    """Copy i alternates between two komis, one episode each (stateless: reads the history)."""
    current = history.current(index)
    if current is None:
        return {"komi": 0.5 + index}
    return {"komi": 10.5 + index if current["komi"] < 10 else 0.5 + index}


def make_model(venv):
    return MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=1, seed=0)


def test_the_generator_history_holds_each_configs_outcomes_and_opponents(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    from sp_wrappers import OpponentSampler

    venv = make_selfplay_vec_env(
        go5, n_envs=2, seed=0, learner="black_0", opponent=OpponentSampler(archive, seed=0)
    )
    calls = []

    def generator(step, index, history):
        calls.append((step, index))
        return alternating_komi(step, index, history)

    envgen = EnvGenerator(generator, window=1000)
    collect = CollectEpisodes()
    make_model(venv).learn(
        384, callback=[SelfPlayCallback(archive, save_every=128), envgen, collect]
    )
    venv.close()
    assert calls[:2] == [(0, 0), (0, 1)]  # every copy at the start of training
    assert sorted(calls[2:]) == sorted((step, index) for step, index, _ in collect.episodes)
    history = envgen.history
    by_config: dict[str, list] = {}
    for step, index, summary in collect.episodes:
        by_config.setdefault(json.dumps(summary["config"], sort_keys=True), []).append(
            (step, index, tuple(summary["opponents"].values()), summary["outcome"])
        )
    assert len(by_config) >= 3
    for key, expected in by_config.items():
        results = history.results(json.loads(key))
        assert [(r.step, r.index, r.opponents, r.outcome) for r in results] == expected
        assert history.total_games(json.loads(key)) == len(expected)
        outcomes = [e[3] for e in expected]
        assert history.score(json.loads(key)) == pytest.approx(np.mean(outcomes))
    # each copy switches configuration, and only ever plays its own two komis
    assert {c["komi"] for c in history.configs()} <= {0.5, 10.5, 1.5, 11.5}
    for index in (0, 1):
        played = {s["config"]["komi"] for _, i, s in collect.episodes if i == index}
        assert played == {0.5 + index, 10.5 + index}


def test_configs_appear_in_the_archives_match_history_and_split_win_rates(tmp_path):
    archive = SnapshotArchive(tmp_path / "archive")
    venv = make_selfplay_vec_env(go5, n_envs=2, seed=0, learner="black_0")
    collect = CollectEpisodes()
    callbacks = [SelfPlayCallback(archive, save_every=128), EnvGenerator(alternating_komi), collect]
    make_model(venv).learn(256, callback=callbacks)
    venv.close()
    matches = archive.matches(source="training")
    assert len(matches) == len(collect.episodes)
    assert [m.config for m in matches] == [s["config"] for _, _, s in collect.episodes]
    assert len(archive.matches(config={"komi": 0.5})) == sum(
        s["config"] == {"komi": 0.5} for _, _, s in collect.episodes
    )
    rows = win_rates_by_config(archive, source="training")
    for row in rows.values():
        mine = [s["outcome"] for _, _, s in collect.episodes if s["config"] == row["config"]]
        assert row["games"] == len(mine)
        assert row["wins"] == sum(o == 1.0 for o in mine)
        assert row["score"] == pytest.approx(np.mean(mine))


def test_every_n_steps_asks_the_generator_for_every_copy():
    venv = make_selfplay_vec_env(go5, n_envs=2, seed=0, learner="black_0")
    calls = []

    def generator(step, index, history):
        calls.append((step, index))
        return GameConfig({"komi": 0.5 + step / 64})

    envgen = EnvGenerator(generator, every=64)
    make_model(venv).learn(256, callback=envgen)
    venv.close()
    steps = sorted({step for step, _ in calls})
    assert steps == [0, 64, 128, 192, 256]
    assert all(sorted(i for s, i in calls if s == step) == [0, 1] for step in steps)
    assert [c.game_kwargs for c in envgen.configs] == [{"komi": 4.5}, {"komi": 4.5}]


def test_a_generator_giving_a_space_changing_config_stops_training_with_the_reason():
    venv = make_selfplay_vec_env(go5, n_envs=2, seed=0, learner="black_0")

    def bigger_board(step, index, history):
        return {"board_size": 7}

    with pytest.raises(ValueError, match="bigger_board gave copy 0 .*changes the game's spaces"):
        make_model(venv).learn(64, callback=EnvGenerator(bigger_board))
    assert venv.get_attr("game_config") == [None, None]
    venv.close()


def lambda_reward_generator(step, index, history):
    return GameConfig({"komi": 5.5}, reward_fn=lambda reward, info: 2 * reward)


def test_an_unpicklable_reward_fn_for_subprocess_workers_is_refused_with_the_fix():
    venv = SubprocVecEnv([lambda: SelfPlayEnv(go5, learner="black_0") for _ in range(2)])
    try:
        with pytest.raises(TypeError, match="cannot be pickled.*SubprocVecEnv.*module's top level"):
            make_model(venv).learn(64, callback=EnvGenerator(lambda_reward_generator))
    finally:
        venv.close()


def test_selfplay_vec_env_workers_apply_any_reward_fn_in_the_main_process():
    with SelfPlayVecEnv(go5, n_envs=2, learner="black_0", num_workers=1) as venv:
        make_model(venv).learn(128, callback=EnvGenerator(lambda_reward_generator))
        name = "lambda_reward_generator.<locals>.<lambda>"
        assert venv.get_attr("game_config") == [{"komi": 5.5, "reward_fn": name}] * 2


def test_env_history_is_bounded_per_config_and_in_configs():
    history = EnvHistory(window=2, max_configs=2)
    for komi in (1.0, 2.0, 3.0):
        for outcome in (0.0, 1.0, 1.0):
            history.record({"komi": komi}, {"outcome": outcome, "opponent": "x"}, 0, 0)
    assert history.configs() == [{"komi": 2.0}, {"komi": 3.0}]
    assert history.games({"komi": 3.0}) == 2 and history.total_games({"komi": 3.0}) == 3
    assert history.win_rate({"komi": 3.0}) == 1.0
    assert {"komi": 1.0} not in history and len(history) == 2


# ------------------------------------------------------------------------------------------------
# train --env-generator, resume, ratings --config
# ------------------------------------------------------------------------------------------------


def start_komi_then_keep(step, index, history):
    """A fresh copy gets komi 0.5 + index at step 0 (10.5 + index later); then keeps it."""
    if history.current(index) is None:
        return {"komi": 0.5 + index + (10 if step > 0 else 0)}
    return None


def train_args(out: Path) -> list[str]:
    return [
        "--timesteps", "256", "--n-envs", "2", "--hp", "n_steps=64", "--hp", "batch_size=128",
        "--save-every", "128", "--eval-games", "2", "--no-progress", "--no-plots",
    ]  # fmt: skip


def test_a_resumed_train_run_keeps_the_current_configurations(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    run = tmp_path / "run"
    status = run_command("train",
        [
            "pettingzoo.classic.go_v5:env", "--game-kwarg", "board_size=5",
            "--learner", "black_0", "--env-generator",
            "test_env_generator:start_komi_then_keep", "--out", str(run), *train_args(run),
        ]
    )  # fmt: skip
    assert status == 0, capsys.readouterr().err
    state = json.loads((run / "env_generator.json").read_text())
    assert [c["game_kwargs"] for c in state["copies"]] == [{"komi": 0.5}, {"komi": 1.5}]
    config = json.loads((run / "config.json").read_text())
    assert config["env_generator"] == "test_env_generator:start_komi_then_keep"
    first = len(SnapshotArchive(run / "archive").matches(source="training"))

    status = run_command(
        "train", ["--resume", str(run), "--timesteps", "256", "--no-progress", "--no-plots"]
    )
    assert status == 0, capsys.readouterr().err
    state = json.loads((run / "env_generator.json").read_text())
    assert [c["game_kwargs"] for c in state["copies"]] == [{"komi": 0.5}, {"komi": 1.5}]
    resumed = SnapshotArchive(run / "archive").matches(source="training")[first:]
    assert resumed and {m.config["komi"] for m in resumed} <= {0.5, 1.5}

    assert cli_main(["ratings", str(run), "--by-config"]) == 0
    table = capsys.readouterr().out
    assert '{"komi": 0.5}' in table and '{"komi": 1.5}' in table
    assert cli_main(["ratings", str(run), "--config", '{"komi": 0.5}', "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["players"]
    assert cli_main(["ratings", str(run), "--config", '{"komi": 99.5}']) == 2
    assert "no rateable games under the configuration" in capsys.readouterr().err


def test_env_generator_cannot_change_on_resume_and_must_import(tmp_path, capsys):
    assert (
        run_command(
            "train", ["tictactoe_v3", "--env-generator", "nowhere:gen", "--out", str(tmp_path)]
        )
        == 2
    )
    assert "Cannot import 'nowhere'" in capsys.readouterr().err


def test_the_komi_curriculum_example_runs_on_a_tiny_budget(tmp_path):
    import subprocess

    args = ["--timesteps", "1024", "--n-envs", "4", "--save-every", "512", "--out", str(tmp_path)]
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "env_generator.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "copies' komi [" in result.stdout
    assert '{"komi": 0.5}' in result.stdout
    assert (tmp_path / "env_generator.json").exists()


def test_a_team_learners_game_copies_switch_together_whatever_slot_is_named():
    from mpe2 import simple_tag_v3

    tag = functools.partial(simple_tag_v3.env, max_cycles=6, continuous_actions=False)
    with TeamVecEnv(tag, n_envs=2, learner="adversary", teams="prefix") as venv:
        size = venv.team_size  # 3 adversaries: slots 0-2 are game 0, slots 3-5 game 1
        venv.seed(0)
        venv.reset()
        venv.set_game_config({"max_cycles": 3}, indices=[size])
        venv.env_method("set_reward_fn", lambda reward, info: reward + 100.0, indices=[size + 1])
        lengths, rewards = {0: [], 1: []}, []
        for _ in range(18):
            _, r, dones, infos = venv.step(np.zeros(venv.num_envs, dtype=np.int64))
            rewards.append(r.copy())
            for g in (0, 1):
                if dones[g * size]:
                    summary = infos[g * size]["selfplay"]
                    lengths[g].append((summary["length"], summary.get("config")))
        assert venv.get_attr("game_config") == [None] * size + [
            {"max_cycles": 3, "reward_fn": "test_a_team_learners_game_copies_switch_together_"
             "whatever_slot_is_named.<locals>.<lambda>"}
        ] * size  # fmt: skip
    assert all(config is None for _, config in lengths[0])
    assert lengths[1][0][1] is None and {c["max_cycles"] for _, c in lengths[1][1:]} == {3}
    assert all(length == 3 for length, _ in lengths[1][1:])
    after = np.array(rewards[7:])  # game 1 restarted under the transform by then
    assert (after[:, size:] >= 99.0).all() and (after[:, :size] < 99.0).all()


def test_env_generator_drives_sb3s_own_vec_env_of_selfplay_envs():
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: SelfPlayEnv(go5, learner="black_0") for _ in range(2)])
    collect = CollectEpisodes()
    envgen = EnvGenerator(alternating_komi)
    make_model(venv).learn(256, callback=[envgen, collect])
    assert {s["config"]["komi"] for _, i, s in collect.episodes if i == 1} == {1.5, 11.5}
    assert venv.env_method("set_game_config", {"komi": 0.5}, indices=[0]) == [None]
    with pytest.raises(ValueError, match="changes the game's spaces"):
        venv.env_method("set_game_config", {"board_size": 7}, indices=[1])
    venv.close()


def test_env_generator_gives_a_team_learners_game_copies_their_configurations():
    from mpe2 import simple_tag_v3
    from stable_baselines3 import PPO

    tag = functools.partial(simple_tag_v3.env, max_cycles=8, continuous_actions=False)
    venv = TeamVecEnv(tag, n_envs=2, learner="adversary", teams="prefix")
    calls = []

    def cycles(step, index, history):
        calls.append(index)
        return {"max_cycles": 4 + 2 * index}

    envgen = EnvGenerator(cycles)
    collect = CollectEpisodes()
    PPO("MlpPolicy", venv, n_steps=16, batch_size=48, n_epochs=1, seed=0).learn(
        96, callback=[envgen, collect]
    )
    venv.close()
    assert set(calls) == {0, 1} and len(envgen.configs) == 2
    assert venv.get_attr("game_config") == [{"max_cycles": 4}] * 3 + [{"max_cycles": 6}] * 3
    for slot, index in ((0, 0), (3, 1)):
        lengths = {s["length"] for _, i, s in collect.episodes if i == slot}
        assert lengths == {4 + 2 * index}
        assert history_indices(envgen.history) <= {0, 1}


def history_indices(history):
    return {r.index for config in history.configs() for r in history.results(config)}


def test_every_teammates_reward_transform_sees_the_episodes_outcome():
    from mpe2 import simple_tag_v3

    tag = functools.partial(simple_tag_v3.env, max_cycles=3, continuous_actions=False)
    seen: list[tuple[str, float]] = []

    def end_bonus(reward, info):
        if "selfplay" in info:
            seen.append((info["seat"], info["selfplay"]["outcome"]))
            return reward + 1000.0
        return reward

    with TeamVecEnv(tag, n_envs=1, learner="adversary", teams="prefix") as venv:
        venv.set_reward_fn(end_bonus)
        venv.seed(0)
        venv.reset()
        for _ in range(3):
            _, rewards, dones, infos = venv.step(np.zeros(venv.num_envs, dtype=np.int64))
    assert dones.all()
    assert sorted(seat for seat, _ in seen) == ["adversary_0", "adversary_1", "adversary_2"]
    assert (rewards >= 900.0).all()  # the end bonus reached every slot of the team
    assert "selfplay" in infos[0] and all("selfplay" not in info for info in infos[1:])


def test_the_history_counts_an_episode_once_per_distinct_opposing_policy():
    history = EnvHistory()
    three_seats = {"outcome": 1.0, "opponents": {"a": "s-1", "b": "s-1", "c": "s-2"}}
    history.record({"komi": 1.5}, three_seats, 10, 0)
    team_game = {
        "outcome": 0.0,
        "opponents": {"adversary_0": "s-3", "adversary_1": "s-3", "adversary_2": "s-3"},
        "opponent_teams": {"adversary": "s-3"},
    }
    history.record({"komi": 1.5}, team_game, 20, 0)
    assert history.by_opponent({"komi": 1.5}) == {"s-1": (1, 1.0), "s-2": (1, 1.0), "s-3": (1, 0.0)}
    assert [r.opponents for r in history.results({"komi": 1.5})] == [("s-1", "s-2"), ("s-3",)]


def test_learning_again_on_the_same_env_keeps_each_copys_configuration_and_episode():
    venv = make_selfplay_vec_env(go5, n_envs=2, seed=0, learner="black_0")
    calls = []

    def generator(step, index, history):
        calls.append((step, index))
        return {"komi": 0.5 + index + step / 1000}

    model = make_model(venv)
    envgen = EnvGenerator(generator, every=10_000)
    model.learn(64, callback=envgen)
    configs, resets = list(envgen.configs), []
    reset = venv.reset
    venv.reset = lambda *args, **kwargs: resets.append(1) or reset(*args, **kwargs)
    model.learn(64, callback=envgen, reset_num_timesteps=False)
    assert calls == [(0, 0), (0, 1)]  # asked once per copy, at the first start only
    assert envgen.configs == configs
    assert venv.get_attr("game_config") == [{"komi": 0.5}, {"komi": 1.5}]
    assert resets == []  # the games in play went on
    assert model.num_timesteps == 256  # two rollouts of 64 steps x 2 copies
    venv.close()


def test_an_ars_learners_games_reach_the_generator_and_the_archive_each_once(tmp_path):
    # ARS's learn hands its callbacks no infos: the generator reads the games where the archive's
    # callback does (the envs' buffers of finished episodes), and both get every game once
    from sb3_contrib import ARS

    archive = SnapshotArchive(tmp_path / "archive")
    venv = make_selfplay_vec_env(go5, n_envs=2, seed=0, learner="black_0")
    envgen = EnvGenerator(alternating_komi, window=10_000)
    model = ARS("LinearPolicy", venv, n_delta=2, n_eval_episodes=1, seed=0)
    model.learn(600, callback=[SelfPlayCallback(archive, save_every=300), envgen])
    venv.close()
    matches = archive.matches(source="training")
    assert matches, "the ARS run recorded no games"
    games = {json.dumps(c, sort_keys=True): envgen.history.total_games(c)
             for c in envgen.history.configs()}  # fmt: skip
    assert sum(games.values()) == len(matches)
    for key, count in games.items():
        assert count == len(archive.matches(config=json.loads(key), source="training"))
    # the generator heard every episode's end: each copy alternated its komi
    assert {c["komi"] for c in envgen.history.configs()} == {0.5, 1.5, 10.5, 11.5}
