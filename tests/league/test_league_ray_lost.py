"""A league on Ray's two-node test cluster survives a lost worker: a player's actor process killed
mid-round, then a whole node removed mid-round; the lost player plays its chunk again on a new
actor, nothing is recorded twice and the run finishes (slow: one Ray cluster for the module)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3
from test_league_faults import assert_recorded_once

from sp_wrappers.league import AlphaStarLeague, League

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")
pytestmark = pytest.mark.xdist_group("ray")  # one Ray cluster at a time (conftest.py)

CHUNK = 256
# Ray places the two players on different nodes; after a node is lost the head holds both.
SPREAD = {"scheduling_strategy": "SPREAD"}


@pytest.fixture(scope="module")
def cluster():
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    worker_node = cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield cluster, worker_node
    ray.shutdown()
    cluster.shutdown()


def tiny_model(env):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1)


def run_league(root: Path, attack) -> tuple[League, object]:
    def in_second_round(league: League, results: dict) -> None:
        if league.round == 1:  # the second round starts when this returns
            threading.Thread(target=attack, daemon=True).start()

    builder = AlphaStarLeague(1, 1, 0, snapshot_min_steps=CHUNK, snapshot_max_steps=CHUNK)
    league = League(tictactoe_v3.env, builder, tiny_model, root, CHUNK, 2, on_round=in_second_round)
    options = {"main_agent_0": SPREAD, "main_exploiter_0": SPREAD}
    result = league.run(2 * 2 * CHUNK, backend="ray", num_cpus=1, actor_options=options)
    return league, result


def learning_actor_pids(parent: int | None = None) -> list[int]:
    """The processes learning a chunk now (those whose parent is ``parent``, a raylet, if given)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or not (entry / "cmdline").read_bytes().startswith(
                b"ray::PlayerWorker.train_chunk"
            ):
                continue
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent is None or ppid == parent:
                pids.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def raylet_pid(node) -> int:
    """The pid of ``node``'s raylet, the parent of the worker processes that run on it."""
    return node.all_processes["raylet"][0].process.pid


def test_an_actor_process_killed_mid_round_is_replaced_and_the_league_finishes(cluster, tmp_path):
    killed: list[int] = []

    def kill() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not killed:
            pids = learning_actor_pids()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.05)

    _, result = run_league(tmp_path, kill)
    assert killed and len(result.lost_workers) == 1, result.lost_workers
    assert result.rounds == 2
    state = assert_recorded_once(tmp_path)
    assert all(p["steps"] == 2 * CHUNK for p in state["learners"])


def test_a_node_removed_mid_round_loses_its_player_which_moves_to_the_head(cluster, tmp_path):
    cluster_, worker_node = cluster

    raylet = raylet_pid(worker_node)
    # the previous test's actors release their CPUs asynchronously: start once every CPU is free,
    # so SPREAD puts one player on the worker node
    deadline = time.monotonic() + 60
    while ray.available_resources().get("CPU", 0) < ray.cluster_resources().get("CPU", 0):
        assert time.monotonic() < deadline, (ray.available_resources(), ray.cluster_resources())
        time.sleep(0.05)

    def remove() -> None:  # once the player on the worker node is learning its chunk
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not learning_actor_pids(raylet):
            time.sleep(0.01)
        cluster_.remove_node(worker_node)

    _, result = run_league(tmp_path, remove)
    assert len(result.lost_workers) == 1, result.lost_workers
    assert result.rounds == 2
    state = assert_recorded_once(tmp_path)
    assert all(p["steps"] == 2 * CHUNK for p in state["learners"])
