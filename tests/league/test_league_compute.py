"""League compute shares: the main agents get the compute, the shares sum to the budget, a
league killed mid-run resumes with the same shares, and every chunk is whole rollouts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.league import (
    AlphaStarLeague,
    ChunkFit,
    League,
    LeagueChunksWarning,
    LeagueSetupError,
    SelfPlayLeague,
)
from sp_wrappers.league.runner import STATE_NAME

CHUNK = 128  # per player per round on average; the rollout is 16 steps x 2 copies = 32


def tiny_model(env):
    return MaskablePPO(
        "MlpPolicy", env, n_steps=16, batch_size=32, n_epochs=1, policy_kwargs={"net_arch": [16]}
    )


def no_snapshot_builder(**kwargs):
    return AlphaStarLeague(snapshot_min_steps=10**6, snapshot_max_steps=10**6, **kwargs)


def test_main_agents_take_at_least_half_of_the_league_by_default():
    shares = AlphaStarLeague(main_agents=1, main_exploiters=1, league_exploiters=1).compute_shares()
    assert shares == {"main_agent_0": 0.5, "main_exploiter_0": 0.25, "league_exploiter_0": 0.25}
    shares = AlphaStarLeague(main_agents=2, main_exploiters=2, league_exploiters=2).compute_shares()
    assert sum(v for k, v in shares.items() if k.startswith("main_agent")) == pytest.approx(0.5)
    assert shares["main_agent_0"] == pytest.approx(0.25)
    assert shares["league_exploiter_1"] == pytest.approx(0.125)
    # more mains than half the players: their head count
    shares = AlphaStarLeague(main_agents=3, main_exploiters=1, league_exploiters=0).compute_shares()
    assert shares["main_agent_2"] == pytest.approx(0.25) and sum(shares.values()) == 1
    shares = AlphaStarLeague(main_agents=1, main_exploiters=0, league_exploiters=0).compute_shares()
    assert shares == {"main_agent_0": 1.0}
    shares = AlphaStarLeague(main_agents_compute=0.8).compute_shares()
    assert shares["main_agent_0"] == pytest.approx(0.8)
    by_role = AlphaStarLeague(
        role_compute={"main_agent": 2, "main_exploiter": 1, "league_exploiter": 1}
    )
    assert by_role.compute_shares()["main_agent_0"] == pytest.approx(0.5)
    assert SelfPlayLeague().compute_shares() == {"learner_0": 1.0}


def test_bad_compute_settings_are_refused_naming_them():
    with pytest.raises(ValueError, match="role_compute"):
        AlphaStarLeague(role_compute={"main_agent": 1.0})  # the exploiters get nothing
    with pytest.raises(ValueError, match="main_agents_compute"):
        AlphaStarLeague(main_agents_compute=0.0)


def test_league_steps_follow_the_compute_shares_and_sum_to_the_budget(tmp_path):
    league = League(
        tictactoe_v3.env, no_snapshot_builder(), tiny_model, tmp_path, chunk_steps=CHUNK,
        n_envs=2, seed=0,
    )  # fmt: skip
    result = league.run(2 * 3 * CHUNK, backend="serial")
    steps = {p.name: p.steps for p in result.learners}
    assert sum(steps.values()) == 2 * 3 * CHUNK
    assert steps == {"main_agent_0": 384, "main_exploiter_0": 192, "league_exploiter_0": 192}
    assert result.shares["main_agent_0"] == 0.5
    assert "(50% of the league's, share 50%)" in str(result)
    saved = json.loads((tmp_path / STATE_NAME).read_text())
    assert saved["compute_shares"] == result.shares


class EqualBuilder(AlphaStarLeague):
    """An AlphaStar league without compute shares: every player as many steps as the others."""

    compute_shares = None


def test_a_builder_without_shares_gives_every_player_the_same_steps(tmp_path):
    league = League(
        tictactoe_v3.env, EqualBuilder(snapshot_min_steps=10**6, snapshot_max_steps=10**6),
        tiny_model, tmp_path, chunk_steps=CHUNK, n_envs=2, seed=0,
    )  # fmt: skip
    result = league.run(3 * CHUNK, backend="serial")
    assert {p.steps for p in result.learners} == {CHUNK}


KILLED_RUN = """
import sys
sys.path.insert(0, {tests!r})
from pettingzoo.classic import tictactoe_v3
from sp_wrappers.league import League
from test_league_compute import CHUNK, no_snapshot_builder, tiny_model

if __name__ == "__main__":
    league = League(tictactoe_v3.env, no_snapshot_builder(), tiny_model, {root!r},
                    chunk_steps=CHUNK, n_envs=2, seed=0)
    league.run(10**9, backend="serial")
"""


def _round(root: Path) -> int:
    try:
        return json.loads((root / STATE_NAME).read_text())["round"]
    except (OSError, ValueError):
        return -1


def test_a_league_killed_mid_run_resumes_with_the_same_shares(tmp_path):
    root = tmp_path / "league"
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(KILLED_RUN.format(tests=str(Path(__file__).parent), root=str(root)))
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    process = subprocess.Popen([sys.executable, str(script)], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while _round(root) < 1:
            assert process.poll() is None, "the league process ended before its first round"
            assert time.monotonic() < deadline, "no round within 240 s"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    saved = json.loads((root / STATE_NAME).read_text())
    done = sum(p["steps"] for p in saved["learners"])
    assert saved["compute_shares"]["main_agent_0"] == 0.5

    with pytest.raises(LeagueSetupError, match="compute shares"):
        League(tictactoe_v3.env, no_snapshot_builder(main_agents_compute=0.75), tiny_model, root,
               chunk_steps=CHUNK, n_envs=2, seed=0)  # fmt: skip
    league = League(
        tictactoe_v3.env, no_snapshot_builder(), tiny_model, root, chunk_steps=CHUNK, n_envs=2,
        seed=0,
    )  # fmt: skip
    assert league.resumed and league.shares == saved["compute_shares"]
    result = league.run(done + 2 * 3 * CHUNK, backend="serial")
    steps = {p.name: p.steps for p in result.learners}
    total = sum(steps.values())
    assert total == done + 2 * 3 * CHUNK
    assert steps == {
        "main_agent_0": total // 2,
        "main_exploiter_0": total // 4,
        "league_exploiter_0": total // 4,
    }


def test_chunks_shorter_than_a_rollout_are_rounded_to_whole_rollouts_in_the_shares(tmp_path):
    # 16 steps asked per player (48 a round, 24/12/12 by the shares) against rollouts of 32: the
    # round becomes 128 (64/32/32), the shortest in which every share is whole rollouts, and the
    # budget of 200 the first multiple of it past: 256. One warning says so, before round 1.
    heard: list[ChunkFit] = []
    league = League(
        tictactoe_v3.env, no_snapshot_builder(), tiny_model, tmp_path, chunk_steps=16, n_envs=2,
        seed=0, on_chunks=heard.append,
    )  # fmt: skip
    assert league.schedule_steps(200)["main_agent_0"] == 100  # no rollouts known before a run
    result = league.run(200, backend="serial")
    assert len(heard) == 1 and heard[0].round_steps == 128 and league.target_steps == 256
    assert str(heard[0]).startswith("chunk_steps=16 rounded to whole rollouts of 32 steps")
    assert str(heard[0]).endswith("total_timesteps=200 runs to 256.")
    steps = {p.name: p.steps for p in result.learners}
    assert steps == {"main_agent_0": 128, "main_exploiter_0": 64, "league_exploiter_0": 64}
    assert result.rounds == 2  # 128 + 128
    assert league.schedule_steps(200) == steps  # the schedules' horizon is where the run ended

    # the default is a LeagueChunksWarning, once for the run
    with pytest.warns(LeagueChunksWarning, match="total_timesteps=300 runs to 384") as caught:
        League(
            tictactoe_v3.env, no_snapshot_builder(), tiny_model, tmp_path, chunk_steps=16,
            n_envs=2, seed=0,
        ).run(300, backend="serial")  # fmt: skip
    assert len([w for w in caught if w.category is LeagueChunksWarning]) == 1


def test_shares_that_need_a_long_round_are_met_over_the_run_in_whole_rollouts(tmp_path):
    # 77% / 11.5% / 11.5% are whole rollouts of 32 only in rounds of 6,400 steps: each round's
    # chunks are rounded instead (a player may sit a round out), the shares hold over the run
    heard: list[ChunkFit] = []
    builder = no_snapshot_builder(main_agents_compute=0.77)
    league = League(
        tictactoe_v3.env, builder, tiny_model, tmp_path, chunk_steps=64, n_envs=2, seed=0,
        on_chunks=heard.append,
    )  # fmt: skip
    result = league.run(1280, backend="serial")
    assert len(heard) == 1 and heard[0].unit is None and "sit a round out" in str(heard[0])
    steps = {p.name: p.steps for p in result.learners}
    assert all(s % 32 == 0 for s in steps.values()), steps
    total = sum(steps.values())
    assert 1280 <= total < 1280 + 3 * 32
    assert all(abs(s / total - league.shares[n]) < 0.05 for n, s in steps.items()), steps


@pytest.mark.parametrize(
    ("chunk", "shares", "rollouts", "budget", "round_steps", "target", "rounded"),
    [
        (64, {"a": 0.5, "b": 0.5}, {"a": 64, "b": 64}, 256, 128, 256, False),  # it fits
        (64, {"a": 0.5, "b": 0.5}, {"a": 64, "b": 64}, 200, 128, 256, True),  # the budget only
        (
            1024,
            {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3},
            dict.fromkeys("abc", 2048),
            6144,
            6144,
            6144,
            True,
        ),  # fmt: skip
        (100, {"a": 0.5, "b": 0.5}, {}, 250, 200, 250, False),  # no rollouts (off-policy)
        (4096, {"a": 1.0}, {"a": 2048}, 10_000, 4096, 10_240, True),  # one learner
    ],
)
def test_a_round_fits_every_players_rollouts_in_its_share(
    chunk, shares, rollouts, budget, round_steps, target, rounded
):
    fit = ChunkFit(chunk, shares, rollouts, budget)
    assert (fit.round_steps, fit.target, fit.rounded) == (round_steps, target, rounded)
    assert bool(fit.line()) == rounded
    steps = dict.fromkeys(shares, 0)
    while sum(steps.values()) < budget:
        plan = fit.plan(steps)
        assert all(plan[n] % rollouts.get(n, 1) == 0 for n in plan), plan
        steps = {n: steps[n] + plan[n] for n in steps}
    assert sum(steps.values()) == target
