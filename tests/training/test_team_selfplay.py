"""``TeamSelfPlay`` on ``simple_tag_v3`` (three predators against one prey) with real PPO learners
on tiny budgets: team changes, fair swaps, per-team Elo and ratings, resume after a kill, and the
bad inputs, each with the fix in its message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mpe2")

import torch  # noqa: E402
from mpe2 import simple_tag_v3  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.logger import KVWriter, Logger  # noqa: E402

from sp_wrappers import SnapshotArchive  # noqa: E402
from sp_wrappers.archive.store import IncompatibleSnapshotError  # noqa: E402
from sp_wrappers.opponents.sampler import pfsp_weights  # noqa: E402
from sp_wrappers.training.team_selfplay import STATE_NAME, TeamSelfPlay, swap_steps
from sp_wrappers.training.team_setup import make_team_vec_env

ROOT = Path(__file__).resolve().parents[2]
TEAMS = ("adversary", "agent")  # teams="prefix": adversary_0..2 and agent_0


def tag_game(max_cycles: int = 8) -> Any:
    return simple_tag_v3.env(max_cycles=max_cycles)


def ppo(team: str, n_envs: int = 1, n_steps: int = 32, env_fn: Any = tag_game) -> PPO:
    env = make_team_vec_env(env_fn, "prefix", team, n_envs=n_envs, seed=0)
    return PPO(
        "MlpPolicy",
        env,
        n_steps=n_steps,
        batch_size=n_steps,
        n_epochs=1,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )


@pytest.fixture(autouse=True)
def _one_thread() -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class KeysSeen(KVWriter):
    """An SB3 logger output that remembers every key written."""

    def __init__(self) -> None:
        self.keys: set[str] = set()

    def write(self, key_values: dict, key_excluded: dict, step: int = 0) -> None:
        self.keys.update(key_values)


class Starts(BaseCallback):
    """Remembers the model of every ``learn`` call it is passed to."""

    def __init__(self) -> None:
        super().__init__()
        self.models: list[Any] = []

    def _on_training_start(self) -> None:
        self.models.append(self.model)

    def _on_step(self) -> bool:
        return True


# ------------------------------------------------------------------------------------------------
# Team changes, ratings, logs
# ------------------------------------------------------------------------------------------------


def test_two_team_changes_train_each_model_for_team_change_steps_of_its_own(tmp_path: Path) -> None:
    models = {team: ppo(team) for team in TEAMS}
    seen = {team: KeysSeen() for team in TEAMS}
    for team, model in models.items():
        model.set_logger(Logger(folder=None, output_formats=[seen[team]]))
    run = TeamSelfPlay(
        tag_game,
        "prefix",
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=96,
        save_every=96,
        seed=0,
    )
    starts = Starts()
    run.learn(2 * 96, callback=starts)

    assert starts.models == [models["adversary"], models["agent"]]  # the user's callback too
    # predators (3 slots x 32 steps) and prey (1 slot x 32 steps) each learned one turn of 96
    assert [turn["team"] for turn in run.turns] == ["adversary", "agent"]
    assert run.team_changes == 2 and run.learning_team == "adversary"
    assert {t: m.num_timesteps for t, m in models.items()} == {"adversary": 96, "agent": 96}
    for model in models.values():  # each kept its own optimiser (Adam's moments exist)
        assert model.policy.optimizer.state_dict()["state"]
    # snapshots at step 0 (the other team's first opponent) and at save_every
    for team in TEAMS:
        assert [i.step for i in SnapshotArchive(tmp_path / team)] == [0, 96]
    # the predators' games are recorded in their archive, against the prey's snapshots
    games = SnapshotArchive(tmp_path / "adversary").matches()
    assert games and {(g.team_a, g.team_b) for g in games} == {("adversary", "agent")}
    assert {g.player_b.split("/")[0] for g in games} == {"agent"}
    # Elo per team, logged under the team's name through SB3's logger
    for team in TEAMS:
        for key in ("elo", "win_rate", "archive_size"):
            assert f"selfplay/{team}/{key}" in seen[team].keys
    assert "selfplay/agent/elo" in seen["adversary"].keys  # the frozen team's too
    ratings = run.ratings()
    assert set(ratings) == set(TEAMS)
    # one Bradley-Terry fit over both archives: the snapshots that played have an interval
    for team in TEAMS:
        rated = [r for r in ratings[team]["snapshots"].values() if "bt" in r]
        assert rated and all(r["bt_low"] < r["bt"] < r["bt_high"] for r in rated)


def test_the_learning_teams_elo_gains_are_the_frozen_teams_losses(tmp_path: Path) -> None:
    models = {team: ppo(team, n_envs=4) for team in TEAMS}
    run = TeamSelfPlay(
        tag_game,
        "prefix",
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=384,
        save_every=1000,
        seed=0,
    )
    run.learn(384)  # the predators' turn (16 games), against the prey's first snapshot and model
    prey = SnapshotArchive(tmp_path / "agent")
    gained = run.team_elo["adversary"] - 1200.0
    lost = (run.team_elo["agent"] - 1200.0) + sum(i.ratings["elo"] - 1200.0 for i in prey)
    assert gained != 0.0 and gained == pytest.approx(-lost)


def test_swaps_are_fair_with_three_predators_against_one_prey(tmp_path: Path) -> None:
    # 2 game copies; episodes of 8 game steps. A turn of 192 learner steps is 32 game steps per
    # copy when the 3 predators learn and 96 when the prey learns; 2 swaps per turn means the
    # frozen prey swaps every 16 game steps and the frozen predators every 48.
    models = {team: ppo(team, n_envs=2, n_steps=16) for team in TEAMS}
    run = TeamSelfPlay(
        tag_game,
        "prefix",
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=192,
        swaps_per_team_change=2,
        save_every=10_000,
        seed=0,
    )
    assert run.swap_every_steps("agent", learner_agents=3) == swap_steps(192, 2, 1, 3) == 32
    assert run.swap_every_steps("adversary", learner_agents=1) == swap_steps(192, 2, 3, 1) == 288
    run.learn(4 * 192)

    swaps = [(turn["team"], turn["swaps"]) for turn in run.turns]
    # the first turn of each team also holds the frozen team's first draw in each copy
    assert swaps == [
        ("adversary", {"agent": 2 * (1 + 2)}),
        ("agent", {"adversary": 2 * (1 + 2)}),
        ("adversary", {"agent": 2 * 2}),
        ("agent", {"adversary": 2 * 2}),
    ]


def test_swaps_stay_fair_when_the_interval_does_not_divide_the_episode_length(
    tmp_path: Path,
) -> None:
    # One game copy, episodes of 8 game steps, 4 swaps per team change of 240 learner steps: the
    # frozen prey should swap every 20 of its steps, the frozen predators every 180 of theirs (60
    # rounds). Swaps wait for an episode start (every 8 rounds), so a schedule that restarted its
    # count at each draw would swap every 24 and every 64 rounds: 10 and 11 swaps below instead
    # of 12 and 12.
    models = {team: ppo(team, n_envs=1, n_steps=16) for team in TEAMS}
    run = TeamSelfPlay(
        tag_game,
        "prefix",
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=240,
        swaps_per_team_change=4,
        save_every=10_000,
        seed=0,
    )
    run.learn(6 * 240)
    swaps = {team: 0 for team in TEAMS}
    for turn in run.turns:
        for frozen, n in turn["swaps"].items():
            swaps[frozen] += n
    # 3 predator turns of 80 rounds give the prey 240 steps (12 swaps); 3 prey turns of 240 rounds
    # give the predators 720 steps in their own count (12 swaps); plus each team's first draw
    assert swaps == {"agent": 1 + 12, "adversary": 1 + 12}


def test_sampler_knobs_are_set_per_team_and_pfsp_reads_the_learners_archive(
    tmp_path: Path,
) -> None:
    models = {team: ppo(team) for team in TEAMS}
    run = TeamSelfPlay(
        tag_game,
        "prefix",
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=96,
        save_every=32,
        window={"adversary": 2, "agent": None},
        latest_ratio={"adversary": 0.0, "agent": 1.0},
        strategy={"adversary": "pfsp", "agent": "uniform"},
        seed=0,
    )
    run.learn(2 * 96)
    predators, prey = run.samplers["adversary"], run.samplers["agent"]
    assert (predators.window, predators.latest_ratio, predators.strategy) == (2, 0.0, "pfsp")
    assert (prey.window, prey.latest_ratio, prey.strategy) == (None, 1.0, "uniform")
    # the prey learned against the predators' snapshots only (latest_ratio 0), the predators
    # against the prey's current model only (latest_ratio 1)
    assert {m.player_b for m in SnapshotArchive(tmp_path / "adversary").matches()} == {
        "agent/latest"
    }
    faced = {m.player_b for m in SnapshotArchive(tmp_path / "agent").matches()}
    assert faced and all(p.startswith("adversary/snapshot-") for p in faced)
    # PFSP weights the predators' newest two snapshots by the prey's results against them,
    # which live in the prey's archive (recent results first: PFSP's decay)
    scores = SnapshotArchive(tmp_path / "agent").scores_against("learner", predators.pfsp_decay)
    ids = predators.eligible_ids()
    expected = pfsp_weights([scores.get(f"adversary/{i}", (0.5, 0))[0] for i in ids])
    assert len(ids) == 2 and predators.snapshot_probabilities().tolist() == expected.tolist()


def test_swap_unit_episodes_keeps_a_frozen_teams_draw_for_that_many_episodes(
    tmp_path: Path,
) -> None:
    models = {team: ppo(team) for team in TEAMS}  # one game copy each; episodes of 8 steps
    run = TeamSelfPlay(
        tag_game,
        "prefix",
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=96,  # 4 episodes of the predators' turn, 12 of the prey's
        swap_every=2,
        swap_unit="episodes",
        save_every=10_000,
    )
    run.learn(4 * 96)
    # a draw at the first episode start, then at every second one (the 5th episode starts as the
    # 4th ends, in the turn's last step)
    assert [turn["swaps"] for turn in run.turns] == [
        {"agent": 3},
        {"adversary": 7},
        {"agent": 2},
        {"adversary": 6},
    ]


def test_team_games_record_the_game_configuration_in_every_match_row(tmp_path: Path) -> None:
    models = {team: ppo(team) for team in TEAMS}
    for model in models.values():  # as an environment generator would set it
        model.get_env().env_method("set_game_config", {"max_cycles": 6})
    run = TeamSelfPlay(
        tag_game,
        "prefix",
        models,
        archives={team: tmp_path / team for team in TEAMS},
        team_change=96,
        save_every=96,
        seed=0,
    )
    run.learn(2 * 96)
    for team in TEAMS:
        games = SnapshotArchive(tmp_path / team).matches()
        configured = SnapshotArchive(tmp_path / team).matches(config={"max_cycles": 6})
        assert games and configured == games
        assert {(g.team_a, g.team_b) for g in games} == {(team, *set(TEAMS) - {team})}


def test_one_model_plays_every_team_of_a_symmetric_game(tmp_path: Path) -> None:
    from pettingzoo.classic import rps_v2

    teams = {"red": ["player_0"], "blue": ["player_1"]}
    env = make_team_vec_env(rps_v2.env, teams, "random", n_envs=2, seed=0)
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    seen = KeysSeen()
    model.set_logger(Logger(folder=None, output_formats=[seen]))
    run = TeamSelfPlay(rps_v2.env, teams, model, archives=tmp_path / "shared", team_change=64)
    run.learn(128)
    assert model.num_timesteps == 128
    games = SnapshotArchive(tmp_path / "shared").matches()
    assert {(g.team_a, g.team_b) for g in games} == {("red", "blue"), ("blue", "red")}
    assert "selfplay/shared/elo" in seen.keys


# ------------------------------------------------------------------------------------------------
# Resume
# ------------------------------------------------------------------------------------------------

SCRIPT = textwrap.dedent(
    """
    import sys, torch
    torch.set_num_threads(1)
    sys.path.insert(0, {tests!r})
    from test_team_selfplay import TEAMS, ppo, tag_game
    from sp_wrappers.training.team_selfplay import TeamSelfPlay
    models = {{team: ppo(team) for team in TEAMS}}
    run = TeamSelfPlay(tag_game, "prefix", models, run_dir={run!r}, team_change=96,
                       save_every=32, resume=True, seed=0)
    run.learn({total})
    """
)


def test_a_killed_run_resumes_with_its_learning_team_steps_archives_and_ratings(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    total = 6 * 96
    script = SCRIPT.format(tests=str(Path(__file__).parent), run=str(run_dir), total=total)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    child = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE)
    state_file = run_dir / STATE_NAME
    deadline = time.monotonic() + 120
    state: dict[str, Any] = {}
    while time.monotonic() < deadline and child.poll() is None:
        try:
            state = json.loads(state_file.read_text())
        except (OSError, ValueError):
            state = {}
        # killed in the prey's turn, after one of its snapshots
        if state.get("team_changes", 0) >= 1 and state["steps"]["agent"] >= 32:
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    _, stderr = child.communicate()
    assert state.get("team_changes", 0) >= 1, stderr.decode()[-2000:]
    assert sum(state["steps"].values()) < total  # killed mid-run
    state = json.loads(state_file.read_text())  # the last state written before the kill

    models = {team: ppo(team) for team in TEAMS}
    run = TeamSelfPlay(
        tag_game, "prefix", models, run_dir=run_dir, team_change=96, save_every=32, resume=True
    )
    assert run.learning_team == state["learning_team"]
    assert run.team_changes == state["team_changes"]
    for team, model in models.items():  # each model as its last checkpoint left it
        with zipfile.ZipFile(run_dir / "models" / f"{team}.zip") as saved:
            assert model.num_timesteps == json.loads(saved.read("data"))["num_timesteps"]
        assert model.num_timesteps >= state["steps"][team]
    assert run.team_elo == state["elo"]
    before = {t: len(SnapshotArchive(run_dir / "archives" / t)) for t in TEAMS}
    assert all(n >= 2 for n in before.values())

    run.learn(total)
    assert run.total_steps == total
    assert [t["team"] for t in run.turns] == ["adversary", "agent"] * 3
    for team in TEAMS:
        steps = [i.step for i in SnapshotArchive(run_dir / "archives" / team)]
        assert steps == sorted(steps) and len(steps) > before[team]


def test_learn_stopped_mid_turn_goes_on_in_a_new_process_where_it_stopped(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = TeamSelfPlay(
        tag_game, "prefix", {t: ppo(t) for t in TEAMS}, run_dir=run_dir, team_change=96
    )
    first.learn(96 + 32)  # one turn of the predators, a third of the prey's
    assert first.learning_team == "agent"
    models = {t: ppo(t) for t in TEAMS}
    again = TeamSelfPlay(tag_game, "prefix", models, run_dir=run_dir, team_change=96, resume=True)
    assert again.learning_team == "agent" and again.turn_start_step == 0
    assert models["agent"].num_timesteps == 32
    again.learn(2 * 96)
    assert [t["team"] for t in again.turns] == ["adversary", "agent"]
    assert models["agent"].num_timesteps == 96 and again.learning_team == "adversary"


class Killed(Exception):
    """Stands for the process being killed: raised from inside ``learn``, so that no end-of-turn
    bookkeeping runs."""


class KillAfterSnapshots(BaseCallback):
    """Stops ``learn`` (raises :class:`Killed`) in the step where a team's callback has saved
    ``n`` snapshots, remembering the Elo that callback computed at that snapshot."""

    def __init__(self, run: TeamSelfPlay, team: str, n: int) -> None:
        super().__init__()
        self.run, self.team, self.n = run, team, n
        self.elo: dict[str, float] = {}

    def _on_step(self) -> bool:
        callback = self.run.callbacks[self.team]
        if callback.snapshots_saved >= self.n:
            self.elo = dict(callback.elo.ratings)
            raise Killed
        return True


def test_each_snapshot_writes_the_teams_current_elo_and_a_killed_run_resumes_with_it(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    models = {t: ppo(t, n_envs=4) for t in TEAMS}  # 4 games every 96 predator steps
    run = TeamSelfPlay(
        tag_game, "prefix", models, run_dir=run_dir, team_change=768, save_every=192, seed=0
    )
    kill = KillAfterSnapshots(run, "adversary", n=2)  # at step 384, mid-turn
    with pytest.raises(Killed):
        run.learn(4 * 768, callback=kill)
    learner, prey = kill.elo["learner"], kill.elo["agent/latest"]
    assert learner != 1200.0  # the predators played rated games before the snapshot
    state = json.loads((run_dir / STATE_NAME).read_text())
    assert state["elo"] == {"adversary": learner, "agent": prey}
    assert run.team_elo == {"adversary": learner, "agent": prey}
    # the prey's snapshots carry the Elo the predators' games gave them
    for info in SnapshotArchive(run_dir / "archives" / "agent"):
        assert (info.ratings or {}).get("elo") == kill.elo[f"agent/{info.id}"]

    models = {t: ppo(t, n_envs=4) for t in TEAMS}
    again = TeamSelfPlay(
        tag_game, "prefix", models, run_dir=run_dir, team_change=768, save_every=192, resume=True
    )
    assert again.team_elo == {"adversary": learner, "agent": prey}


# ------------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tag_models() -> dict[str, PPO]:
    return {team: ppo(team) for team in TEAMS}


@pytest.mark.parametrize("team_change", [0, -5, 1.5])
def test_team_change_must_be_a_positive_number_of_steps(tag_models: dict, team_change: Any) -> None:
    with pytest.raises(ValueError, match="team_change must be a positive number of learner steps"):
        TeamSelfPlay(tag_game, "prefix", tag_models, archives={}, team_change=team_change)


def test_team_change_shorter_than_a_teams_rollout_is_refused_with_both_numbers(
    tmp_path: Path,
) -> None:
    models = {team: ppo(team, n_envs=2) for team in TEAMS}  # predators: 32 x 6 slots = 192
    archives = {team: tmp_path / team for team in TEAMS}
    with pytest.raises(ValueError, match=r"team_change=96 .* 'adversary'.* = 192 learner") as e:
        TeamSelfPlay(tag_game, "prefix", models, archives=archives, team_change=96)
    assert "Pass team_change=192" in str(e.value) and "lower n_steps" in str(e.value)
    run = TeamSelfPlay(tag_game, "prefix", models, archives=archives, team_change=192)
    run.check_rollouts()  # a turn of one rollout or more is accepted


def test_models_and_archives_must_name_the_games_teams(tmp_path: Path, tag_models: dict) -> None:
    archives = {team: tmp_path / team for team in TEAMS}
    wrong = {"predator": tag_models["adversary"], "agent": tag_models["agent"]}
    with pytest.raises(ValueError, match=r"teams \['predator'\].*its teams are"):
        TeamSelfPlay(tag_game, "prefix", wrong, archives=archives, team_change=96)
    with pytest.raises(ValueError, match=r"no model for team\(s\) \['adversary'\]"):
        TeamSelfPlay(tag_game, "prefix", {"agent": tag_models["agent"]}, archives=archives)
    with pytest.raises(ValueError, match=r"archives names team\(s\) \['prey'\]"):
        TeamSelfPlay(tag_game, "prefix", tag_models, archives={**archives, "prey": tmp_path})
    same = {team: tmp_path / "one" for team in TEAMS}
    with pytest.raises(ValueError, match="each team needs its own archive directory"):
        TeamSelfPlay(tag_game, "prefix", tag_models, archives=same)


def test_one_model_cannot_play_teams_whose_spaces_differ(tmp_path: Path, tag_models: dict) -> None:
    with pytest.raises(ValueError, match="One model cannot play teams whose spaces differ.*one"):
        TeamSelfPlay(tag_game, "prefix", tag_models["adversary"], archives=tmp_path)
    crossed = {"adversary": tag_models["agent"], "agent": tag_models["adversary"]}
    with pytest.raises(ValueError, match="make_team_vec_env"):
        TeamSelfPlay(tag_game, "prefix", crossed, archives={t: tmp_path / t for t in TEAMS})


def test_a_model_must_train_on_its_own_teams_env(tmp_path: Path) -> None:
    from pettingzoo.classic import rps_v2

    teams = {"red": ["player_0"], "blue": ["player_1"]}

    def model_of(team: str) -> PPO:
        env = make_team_vec_env(rps_v2.env, teams, team, n_envs=1)
        return PPO("MlpPolicy", env, n_steps=32, batch_size=32, device="cpu")

    crossed = {"red": model_of("blue"), "blue": model_of("red")}  # same spaces, wrong envs
    with pytest.raises(ValueError, match=r"learner plays \['blue'\], not \['red'\].*'red'\)"):
        TeamSelfPlay(rps_v2.env, teams, crossed, archives={t: tmp_path / t for t in teams})


def test_an_archive_of_the_other_teams_spaces_is_refused(tmp_path: Path, tag_models: dict) -> None:
    SnapshotArchive(tmp_path / "adversary").save(tag_models["adversary"], step=0)
    swapped = {"adversary": tmp_path / "agent", "agent": tmp_path / "adversary"}
    with pytest.raises(IncompatibleSnapshotError, match="team 'agent'.*its own archive directory"):
        TeamSelfPlay(tag_game, "prefix", tag_models, archives=swapped)


def test_a_run_dir_with_a_run_needs_resume(tmp_path: Path, tag_models: dict) -> None:
    (tmp_path / STATE_NAME).write_text("{}")
    with pytest.raises(ValueError, match="Pass resume=True to continue it"):
        TeamSelfPlay(tag_game, "prefix", tag_models, run_dir=tmp_path)


def test_a_team_callback_publishes_elo_into_the_table_it_is_handed(tmp_path):
    """TeamCallback works from what it is handed (the run's Elo table, the other teams'
    archives), not from a TeamSelfPlay."""
    from sp_wrappers.training.team_parts import TeamCallback

    table = {"adversary": 1200.0, "agent": 1200.0}
    prey = SnapshotArchive(tmp_path / "agent")
    callback = TeamCallback(
        "adversary",
        SnapshotArchive(tmp_path / "adversary"),
        team_elo=table,
        opponent_archives={"agent": prey},
        team_index=0,
    )
    callback.elo.ratings["learner"] = 1234.0
    callback.elo.ratings["agent/latest"] = 1111.0
    callback.publish_elo()
    assert table == {"adversary": 1234.0, "agent": 1111.0}
