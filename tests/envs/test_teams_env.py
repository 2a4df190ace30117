"""Specification of teams in the envs (issue #11): ``teams=`` of ``SelfPlayEnv`` and
``SelfPlayVecEnv`` on real team games.

- ``simple_tag_v3`` (mpe2): three predators (``adversary_0..2``, observations of shape (16,))
  against one prey (``agent_0``, shape (14,)).
- ``simple_adversary_v3`` (mpe2): one adversary against a team of two agents, rewards every step.
- ``quadrapong_v4`` (Atari, RAM observations): ``first_0`` and ``third_0`` against ``second_0`` and
  ``fourth_0``, as PettingZoo's documentation assigns the teams.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from conftest import RaceGame
from stable_baselines3 import PPO

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.core.teams import TeamLayout, team_outcome, team_summary
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.envs.vector.factory import make_selfplay_vec_env
from sp_wrappers.envs.vector.team_vec_env import TeamVecEnv
from sp_wrappers.opponents.sampler import OpponentSampler
from sp_wrappers.ratings.elo import EloRatings
from sp_wrappers.training.callbacks import SelfPlayCallback, match_records

mpe2 = pytest.importorskip("mpe2")
from mpe2 import simple_adversary_v3, simple_tag_v3  # noqa: E402

QUADRAPONG_TEAMS = {"odd": ["first_0", "third_0"], "even": ["second_0", "fourth_0"]}


def make_tag(max_cycles: int = 5) -> Any:
    return simple_tag_v3.env(max_cycles=max_cycles, continuous_actions=False)


def make_tag_short() -> Any:
    return make_tag(5)


def make_adversary() -> Any:
    return simple_adversary_v3.env(max_cycles=6, continuous_actions=False)


def make_quadrapong() -> Any:
    import ale_py
    from pettingzoo.atari import quadrapong_v4

    roms = os.path.join(os.path.dirname(ale_py.__file__), "roms")
    return quadrapong_v4.env(obs_type="ram", auto_rom_install_path=roms, max_cycles=40)


class CountingPolicy:
    """A batched policy that always plays ``action`` and records the size of every ``act``
    call (one call = one forward pass)."""

    def __init__(self, action: int = 0, policy_id: str = "counting") -> None:
        self.action = action
        self.policy_id = policy_id
        self.batch_sizes: list[int] = []

    def act(self, observations: Any, action_masks: Any, rng: np.random.Generator) -> np.ndarray:
        self.batch_sizes.append(len(observations))
        return np.full(len(observations), self.action, dtype=np.int64)


def play_episodes(env: Any, episodes: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Random learner actions until ``episodes`` ``info["selfplay"]`` summaries came back."""
    summaries: list[dict[str, Any]] = []
    env.reset()
    while len(summaries) < episodes:
        actions = rng.integers(env.action_space.n, size=env.num_envs)
        _, _, _, infos = env.step(actions)
        summaries += [info["selfplay"] for info in infos if "selfplay" in info]
    return summaries


# ------------------------------------------------------------------------------------------------
# Grouping
# ------------------------------------------------------------------------------------------------


def test_prefix_groups_agents_by_their_name_without_the_trailing_number():
    layout = TeamLayout.from_spec("prefix", make_tag().possible_agents)
    assert layout.teams == {
        "adversary": ("adversary_0", "adversary_1", "adversary_2"),
        "agent": ("agent_0",),
    }
    assert layout.names == ["adversary", "agent"]
    assert layout.team_of("adversary_2") == "adversary"
    assert layout.opponents_of("agent") == ["adversary"]


def test_a_mapping_keeps_each_team_in_game_order_and_default_makes_every_agent_its_own_team():
    agents = make_quadrapong().possible_agents
    layout = TeamLayout.from_spec(
        {"odd": ["third_0", "first_0"], "even": QUADRAPONG_TEAMS["even"]}, agents
    )
    assert layout.teams == {"odd": ("first_0", "third_0"), "even": ("second_0", "fourth_0")}
    assert TeamLayout.from_spec(None, agents).teams == {a: (a,) for a in agents}


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"a": ["first_0", "second_0"], "b": ["second_0", "third_0", "fourth_0"]}, "in two teams"),
        ({"a": ["first_0", "second_0"], "b": ["third_0"]}, r"\['fourth_0'\] are in no team"),
        ({"a": ["first_0", "fifth_0"], "b": ["second_0", "third_0", "fourth_0"]}, "not an agent"),
        ({"a": [], "b": ["first_0", "second_0", "third_0", "fourth_0"]}, "have no agents"),
        ({"a": ["first_0", "second_0", "third_0", "fourth_0"]}, "at least two teams"),
        ("suffix", "not a known grouping"),
    ],
)
def test_a_bad_grouping_is_refused_with_the_fix(spec, message):
    with pytest.raises(ValueError, match=message):
        TeamLayout.from_spec(spec, ["first_0", "second_0", "third_0", "fourth_0"])


def test_team_outcome_compares_team_returns():
    assert team_outcome({"adversary": 30.0, "agent": -10.0}, "adversary") == 1.0
    assert team_outcome({"adversary": 30.0, "agent": -10.0}, "agent") == 0.0
    assert team_outcome({"a": 1.0, "b": 1.0}, "a") == 0.5


# ------------------------------------------------------------------------------------------------
# Bad input to the envs
# ------------------------------------------------------------------------------------------------


def test_an_unknown_learner_team_is_refused_naming_the_teams():
    with pytest.raises(ValueError, match=r"neither a team \(\['adversary', 'agent'\]\)"):
        SelfPlayEnv(make_tag(), learner="predators", teams="prefix")
    with pytest.raises(ValueError, match="learner='adversary'"):
        TeamVecEnv(make_tag_short, learner="predators", teams="prefix")


def test_an_opponent_mapping_with_an_unknown_team_is_refused():
    with pytest.raises(ValueError, match=r"names \['prey'\], which are not teams"):
        SelfPlayEnv(
            make_tag(), learner="adversary", teams="prefix", opponent={"prey": RandomPolicy()}
        )


def test_an_opponent_mapping_that_misses_an_opposing_team_is_refused():
    with pytest.raises(ValueError, match=r"no entry for the opposing team\(s\) \['agent'\]"):
        TeamVecEnv(
            make_tag_short,
            learner="adversary",
            teams="prefix",
            opponent={"adversary": RandomPolicy()},
        )


def test_a_learner_team_whose_agents_have_different_spaces_is_refused_naming_them():
    teams = {"mixed": ["adversary_0", "agent_0"], "rest": ["adversary_1", "adversary_2"]}
    with pytest.raises(ValueError) as error:
        TeamVecEnv(make_tag_short, learner="mixed", teams=teams)
    text = str(error.value)
    assert "'adversary_0'" in text and "'agent_0'" in text
    assert "(16,)" in text and "(14,)" in text
    with pytest.raises(ValueError, match="cannot be played by one learner"):
        SelfPlayEnv(make_tag(), learner="mixed", teams=teams)


def test_random_learner_over_teams_of_different_spaces_is_refused():
    with pytest.raises(ValueError, match="same size and spaces.*learner='adversary'"):
        TeamVecEnv(make_tag_short, learner="random", teams="prefix")


def test_the_vec_env_refuses_one_agent_of_a_larger_team_as_learner():
    with pytest.raises(ValueError, match="pass learner='adversary'"):
        TeamVecEnv(make_tag_short, learner="adversary_1", teams="prefix")


# ------------------------------------------------------------------------------------------------
# The vector env: one slot per team agent
# ------------------------------------------------------------------------------------------------


def test_every_agent_of_the_learner_team_is_its_own_slot():
    env = TeamVecEnv(make_tag_short, n_envs=2, learner="adversary", teams="prefix")
    assert (env.num_envs, env.n_games, env.team_size) == (6, 2, 3)
    assert env.observation_space.shape == (16,)
    obs = env.reset()
    assert obs.shape == (6, 16)
    seats = [info["seat"] for info in env.reset_infos]
    assert seats == ["adversary_0", "adversary_1", "adversary_2"] * 2
    prey = TeamVecEnv(make_tag_short, n_envs=2, learner="agent", teams="prefix")
    assert prey.num_envs == 2 and prey.reset().shape == (2, 14)


def test_every_slot_plays_its_own_agent():
    """MPE observations start with the agent's own velocity: only the slot told to move up
    (action 4) gets an upward velocity, in its own game copy."""
    env = TeamVecEnv(make_tag_short, n_envs=2, learner="adversary", teams="prefix")
    env.seed(0)
    obs = env.reset()
    assert np.allclose(obs[:, :2], 0.0)
    actions = np.zeros(6, dtype=np.int64)
    actions[4] = 4  # game copy 1, adversary_1
    obs, _, _, _ = env.step(actions)
    moving = np.flatnonzero(np.abs(obs[:, :2]).sum(axis=1) > 0)
    assert moving.tolist() == [4]
    assert obs[4, 1] > 0


def test_slots_end_their_episode_together_with_one_match_summary_per_game():
    env = TeamVecEnv(make_tag_short, n_envs=2, learner="adversary", teams="prefix")
    env.reset()
    for _ in range(4):
        _, _, dones, _ = env.step(np.zeros(6, dtype=np.int64))
        assert not dones.any()
    obs, _, dones, infos = env.step(np.zeros(6, dtype=np.int64))
    assert dones.all()
    assert [("selfplay" in info) for info in infos] == [True, False, False] * 2
    assert all(info["terminal_observation"].shape == (16,) for info in infos)
    assert all(info["TimeLimit.truncated"] for info in infos)
    assert obs.shape == (6, 16)  # the next episode's first observations
    assert infos[0]["selfplay"]["length"] == 5


def test_an_opposing_team_is_answered_in_one_forward_pass_per_round():
    counting = CountingPolicy()
    env = TeamVecEnv(
        make_tag_short, n_envs=2, learner="agent", teams="prefix", opponent={"adversary": counting}
    )
    env.reset()
    assert counting.batch_sizes == [6]  # three predators in each of two games
    for _ in range(3):
        env.step(np.zeros(2, dtype=np.int64))
    assert counting.batch_sizes == [6] * 4


def test_opposing_agents_interleaved_with_the_learner_team_are_batched_too():
    counting = CountingPolicy()
    env = TeamVecEnv(
        make_quadrapong, n_envs=2, learner="odd", teams=QUADRAPONG_TEAMS, opponent=counting
    )
    env.reset()
    for _ in range(3):
        env.step(np.zeros(4, dtype=np.int64))
    assert counting.batch_sizes == [4, 4, 4]  # second_0 and fourth_0 of both games, per round


def test_set_opponent_on_a_slot_reaches_that_slot_s_game_copy():
    env = TeamVecEnv(make_tag_short, n_envs=2, learner="adversary", teams="prefix")
    env.reset()
    newcomer = CountingPolicy(policy_id="newcomer")
    env.env_method("set_opponent", {"agent": newcomer}, indices=[4])  # copy 1, adversary_1
    summaries = play_episodes(env, 4, np.random.default_rng(0))
    sources = env.get_attr("opponent_source")
    assert sources[0] is sources[1] is sources[2] and not isinstance(sources[0], dict)
    assert all(s["agent"].policy is newcomer for s in sources[3:])
    assert {s["opponent"] for s in summaries} == {"random", "newcomer"}
    assert newcomer.batch_sizes and set(newcomer.batch_sizes) == {1}


def test_shared_draw_gives_every_copy_one_opposing_team_line_up():
    first, second = CountingPolicy(policy_id="first"), CountingPolicy(policy_id="second")
    env = TeamVecEnv(
        make_tag_short,
        n_envs=3,
        learner="agent",
        teams="prefix",
        opponent_draw="shared",
        opponent={"adversary": first},
    )
    env.reset()
    assert first.batch_sizes == [9]  # three predators in three games, one call
    # given to every copy, the new opponent is shared too (one line-up, one batch); given to
    # some copies only, it is shared among those (test_set_opponent.py)
    env.env_method("set_opponent", {"adversary": second})
    summaries = play_episodes(env, 6, np.random.default_rng(0))
    assert [s["opponent"] for s in summaries[-3:]] == ["second"] * 3
    assert set(second.batch_sizes) == {9}


def test_a_turn_based_team_game_in_the_vec_env_warns_and_still_plays_whole_episodes():
    teams = {"a": ["player_0", "player_2"], "b": ["player_1", "player_3"]}
    with pytest.warns(UserWarning, match="turn-based"):
        env = TeamVecEnv(lambda: RaceGame(4, 12), n_envs=2, learner="a", teams=teams)
    env.seed(0)
    env.reset()
    rng = np.random.default_rng(0)
    summaries: list[dict[str, Any]] = []
    while len(summaries) < 6:
        actions = [rng.choice(np.flatnonzero(mask)) for mask in env.action_masks()]
        _, _, _, infos = env.step(np.array(actions))
        summaries += [info["selfplay"] for info in infos if "selfplay" in info]
    for summary in summaries:
        assert summary["team_returns"]["a"] == pytest.approx(
            summary["returns"]["player_0"] + summary["returns"]["player_2"]
        )
        assert set(summary["opponents"]) == {"player_1", "player_3"}


class DrawCounter:
    """An opponent source that swaps every 10 steps and counts its draws."""

    swap_every = 10
    swap_unit = "steps"

    def __init__(self) -> None:
        self.draws = 0
        self.policy = CountingPolicy()

    def draw(self, rng: np.random.Generator) -> CountingPolicy:
        self.draws += 1
        return self.policy


@pytest.mark.parametrize(
    "learner, opposing, draws", [("agent", "adversary", 4), ("adversary", "agent", 2)]
)
def test_step_swaps_are_counted_in_the_opposing_team_s_own_agent_steps(learner, opposing, draws):
    """Five rounds a game: three predators take 15 steps (a swap due every game), the prey 5
    (every second game); four episode starts."""
    source = DrawCounter()
    env = TeamVecEnv(
        make_tag_short, n_envs=1, learner=learner, teams="prefix", opponent={opposing: source}
    )
    env.reset()
    for _ in range(15):
        env.step(np.zeros(env.num_envs, dtype=np.int64))
    assert source.draws == draws


def test_outcomes_and_returns_are_per_team_and_slot_rewards_add_up_to_agent_returns():
    env = TeamVecEnv(make_adversary, n_envs=2, learner="agent", teams="prefix")
    env.seed(3)
    env.reset()
    totals = np.zeros(4)
    summaries = []
    while len(summaries) < 4:
        _, rewards, dones, infos = env.step(np.ones(4, dtype=np.int64))
        totals += rewards
        for g in range(2):
            summary = infos[2 * g].get("selfplay")
            if summary is not None:
                slot_returns = totals[2 * g : 2 * g + 2]
                agents = [infos[2 * g + k]["seat"] for k in range(2)]
                assert agents == ["agent_0", "agent_1"]
                assert np.allclose(slot_returns, [summary["returns"][a] for a in agents], atol=1e-4)
                totals[2 * g : 2 * g + 2] = 0
                summaries.append(summary)
    for summary in summaries:
        returns = summary["returns"]
        assert summary["team"] == "agent"
        assert summary["team_return"] == pytest.approx(returns["agent_0"] + returns["agent_1"])
        assert summary["team_returns"]["adversary"] == pytest.approx(returns["adversary_0"])
        assert summary["outcome"] == team_outcome(summary["team_returns"], "agent")
        assert summary["opponents"] == {"adversary_0": "random"}
        assert summary["opponent_teams"] == {"adversary": "random"}
    assert {s["outcome"] for s in summaries} <= {0.0, 1.0}
    assert any(s["team_return"] != 0 for s in summaries)


THREE_TEAMS = {"a": ["player_0"], "b": ["player_1"], "c": ["player_2"]}


def three_team_summary(outcome_fn: Any = None, illegal_action: Any = None) -> dict[str, Any]:
    """Team ``a``'s summary of a game that team ``b`` won (returns a -1, b 2, c -1)."""
    layout = TeamLayout.from_spec(THREE_TEAMS, ["player_0", "player_1", "player_2"])
    returns = {"player_0": -1.0, "player_1": 2.0, "player_2": -1.0}
    policies = {"player_1": RandomPolicy(), "player_2": RandomPolicy()}
    policies["player_1"].policy_id, policies["player_2"].policy_id = "b-snap", "c-snap"
    return team_summary(layout, "a", returns, policies, outcome_fn, "player_0", illegal_action)


def test_with_three_teams_each_opposing_team_is_scored_by_the_two_teams_returns_alone():
    summary = three_team_summary()
    assert summary["outcome"] == 0.25  # the overall placement: lost to b, level with c
    assert summary["team_outcomes"] == {"b": 0.0, "c": 0.5}
    rows = match_records(summary, "learner", step=0)
    assert {r["team_b"]: (r["player_b"], r["score_a"]) for r in rows} == {
        "b": ("b-snap", 0.0),
        "c": ("c-snap", 0.5),
    }
    # a user outcome_fn decides against every team; an illegal action loses against every team
    assert three_team_summary(outcome_fn=lambda r, s: 1.0)["team_outcomes"] == {"b": 1.0, "c": 1.0}
    assert three_team_summary(illegal_action=2)["team_outcomes"] == {"b": 0.0, "c": 0.0}


def test_with_three_teams_the_callback_rates_each_opposing_team_by_its_own_result(tmp_path):
    callback = SelfPlayCallback(SnapshotArchive(tmp_path))
    callback._record(three_team_summary())
    expected = EloRatings(k=16.0, initial_rating=1200.0)
    expected.update("learner", "b-snap", 0.0)  # b beat the learner's team
    expected.update("learner", "c-snap", 0.5)  # c drew with it
    assert callback.elo.ratings == pytest.approx(expected.ratings)
    scores = {m["team_b"]: m["score_a"] for m in callback._pending_matches}
    assert scores == {"b": 0.0, "c": 0.5}


def test_three_team_vec_env_summaries_score_each_opposing_team_pairwise():
    env = TeamVecEnv(lambda: RaceGame(3, 10), n_envs=2, learner="a", teams=THREE_TEAMS)
    env.seed(0)
    env.reset()
    rng = np.random.default_rng(0)
    summaries: list[dict[str, Any]] = []
    while len(summaries) < 10:
        actions = [rng.choice(np.flatnonzero(mask)) for mask in env.action_masks()]
        _, _, _, infos = env.step(np.array(actions))
        summaries += [info["selfplay"] for info in infos if "selfplay" in info]
    env.close()
    for summary in summaries:
        mine = summary["team_returns"]["a"]
        expected = {
            t: 1.0 if mine > r else 0.5 if mine == r else 0.0
            for t, r in summary["team_returns"].items()
            if t != "a"
        }
        assert summary["team_outcomes"] == expected
    assert any(len(set(s["team_outcomes"].values())) == 2 for s in summaries)


def test_a_user_outcome_fn_still_decides_the_outcome():
    env = TeamVecEnv(
        make_tag_short, n_envs=1, learner="adversary", teams="prefix", outcome_fn=lambda r, s: 0.25
    )
    (summary,) = play_episodes(env, 1, np.random.default_rng(0))
    assert summary["outcome"] == 0.25


def test_teammates_are_never_listed_among_opponents():
    env = TeamVecEnv(make_tag_short, n_envs=1, learner="adversary", teams="prefix")
    (summary,) = play_episodes(env, 1, np.random.default_rng(0))
    assert summary["opponents"] == {"agent_0": "random"}
    single = SelfPlayEnv(make_tag(), learner="adversary", teams="prefix")
    single.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, info = single.step(0)
        done = terminated or truncated
    assert info["selfplay"]["opponents"] == {"agent_0": "random"}
    assert info["selfplay"]["seat"] == "adversary_0"


def test_random_learner_over_symmetric_teams_plays_both_teams():
    env = TeamVecEnv(make_quadrapong, n_envs=2, learner="random", teams=QUADRAPONG_TEAMS)
    env.seed(0)
    teams = set()
    for _ in range(3):
        env.reset()
        teams |= {info["team"] for info in env.reset_infos}
    assert teams == {"odd", "even"}


def test_worker_processes_play_the_same_games():
    def run(num_workers: int) -> tuple:
        env = TeamVecEnv(
            make_adversary, n_envs=3, learner="agent", teams="prefix", num_workers=num_workers
        )
        env.seed(5)
        rng = np.random.default_rng(0)
        observations, rewards = [env.reset()], []
        for _ in range(8):
            obs, reward, _, _ = env.step(rng.integers(5, size=6))
            observations.append(obs)
            rewards.append(reward)
        pids = env.worker_pids
        env.close()
        return np.stack(observations), np.stack(rewards), pids

    obs0, rewards0, _ = run(0)
    obs2, rewards2, pids = run(2)
    assert len(pids) == 2
    assert np.array_equal(obs0, obs2) and np.array_equal(rewards0, rewards2)


# ------------------------------------------------------------------------------------------------
# The single env: one agent of the team, teammates on the learner's latest weights
# ------------------------------------------------------------------------------------------------


def test_the_single_env_learner_acts_for_the_team_s_first_agent_or_a_chosen_one():
    env = SelfPlayEnv(make_tag(), learner="adversary", teams="prefix")
    obs, info = env.reset(seed=0)
    assert (info["seat"], info["team"], obs.shape) == ("adversary_0", "adversary", (16,))
    _, info = env.reset(options={"learner_seat": "adversary_2"})
    assert info["seat"] == "adversary_2"
    with pytest.raises(ValueError, match="learner_seat"):
        env.reset(options={"learner_seat": "agent_0"})


def test_single_env_teammates_play_the_learner_s_latest_weights():
    env = SelfPlayEnv(make_tag(), learner="adversary", teams="prefix")
    env.reset(seed=0)
    assert env._seat_policies["adversary_1"].policy_id == "random"  # no weights yet
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0)
    assert env.wants_learner_template
    env.set_learner_template(model)
    state = {k: v.detach().cpu().numpy().copy() for k, v in model.policy.state_dict().items()}
    state["action_net.weight"][:] = 0.0
    state["action_net.bias"][:] = [0, 0, 0, 0, 100.0]  # always "up"
    env.sync_latest_weights(1, state)
    env.reset(seed=1)
    assert env._seat_policies["adversary_1"].policy_id == "latest"
    assert "adversary_1" not in env.episode_summary()["opponents"]
    env.step(0)  # the learner stands still; its teammates move up
    assert env.game.observe("adversary_1")[1] > 0 and env.game.observe("adversary_2")[1] > 0
    assert env.game.observe("adversary_0")[1] == 0


def test_the_single_env_answers_an_opposing_team_in_one_forward_pass_per_round():
    counting = CountingPolicy()
    env = SelfPlayEnv(make_tag(), learner="agent", teams="prefix", opponent={"adversary": counting})
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)
    assert counting.batch_sizes == [3] * 4  # the three predators, before each prey move


def test_the_callback_gives_single_env_teammates_the_learner_s_weights(tmp_path):
    """The template goes out at the first sync; every rollout end brings the weights up to date
    (they lag the model by its last update, as a sampler's latest weights do)."""
    env = SelfPlayEnv(make_tag(), learner="adversary", teams="prefix")
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0)
    initial = {k: v.detach().clone() for k, v in model.policy.state_dict().items()}
    model.learn(64, callback=SelfPlayCallback(SnapshotArchive(tmp_path), save_every=32))
    assert not env.wants_learner_template
    assert env.seating.teammates.version == 3  # training start and two rollout ends
    theirs = env.seating.teammates.latest.policy.state_dict()
    assert set(theirs) == set(initial)
    assert not all(np.allclose(initial[k].numpy(), theirs[k].cpu().numpy()) for k in initial)


def test_gymnasium_and_sb3_env_checkers_pass_on_a_team_env():
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    gymnasium_check_env(
        SelfPlayEnv(make_tag(), learner="agent", teams="prefix"), skip_render_check=True
    )
    sb3_check_env(SelfPlayEnv(make_tag(), learner="adversary", teams="prefix"), warn=False)


# ------------------------------------------------------------------------------------------------
# Real learners
# ------------------------------------------------------------------------------------------------


def test_ppo_learns_on_the_team_vec_env_with_the_callback_recording_teams(tmp_path):
    archive = SnapshotArchive(tmp_path / "predators")
    env = make_selfplay_vec_env(
        make_tag_short,
        n_envs=2,
        seed=0,
        learner="adversary",
        teams="prefix",
        opponent={"agent": RandomPolicy()},
    )
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    callback = SelfPlayCallback(archive, save_every=96)
    model.learn(384, callback=callback)
    assert model.num_timesteps == 384
    matches = archive.matches()
    # one match per finished game: 64 vector steps of 2 games (6 slots), 5 rounds a game
    assert len(matches) == 2 * ((384 // 6) // 5)
    assert {(m.player_b, m.seat_a) for m in matches} == {("random", "adversary_0")}
    assert {(m.team_a, m.team_b) for m in matches} == {("adversary", "agent")}


def test_maskable_ppo_and_sb3_vec_wrappers_work_on_the_team_vec_env():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecFrameStack, VecMonitor, VecNormalize

    team_env = TeamVecEnv(make_tag_short, n_envs=2, learner="adversary", teams="prefix")
    env = VecFrameStack(VecNormalize(VecMonitor(team_env)), 2)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=48, n_epochs=1, seed=0)
    model.learn(192)
    assert model.num_timesteps == 192
    assert [mask.shape for mask in env.env_method("action_masks")] == [(5,)] * 6
    assert env.get_attr("learner") == ["adversary"] * 6


def test_ppo_plays_both_sides_of_a_symmetric_team_game_against_its_own_snapshots(tmp_path):
    archive = SnapshotArchive(tmp_path / "quadrapong")
    env = TeamVecEnv(
        make_quadrapong,
        n_envs=2,
        learner="random",
        teams=QUADRAPONG_TEAMS,
        opponent=OpponentSampler(archive, latest_ratio=0.5),
    )
    model = PPO("MlpPolicy", env, n_steps=40, batch_size=80, n_epochs=1, seed=0)
    model.learn(320, callback=SelfPlayCallback(archive, save_every=160))
    matches = archive.matches()
    assert len(archive) >= 2 and matches
    assert {m.seat_a for m in matches} <= {"first_0", "second_0"}
