"""The league on Ray's own multi-node test cluster: players on two nodes, snapshots and match
records reaching the driver's archive through Ray (one Ray session for the module)."""

from __future__ import annotations

import sys

import pytest
from pettingzoo.classic import tictactoe_v3

from sp_wrappers.league import AlphaStarLeague, League

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")
pytestmark = pytest.mark.xdist_group("ray")  # one Ray cluster at a time (conftest.py)

CHUNK = 64


def tiny_model(env):
    from sb3_contrib import MaskablePPO

    return MaskablePPO(
        "MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, policy_kwargs={"net_arch": [16]}
    )


@pytest.fixture(scope="module")
def two_node_cluster():
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"node_a": 1}}
    )
    cluster.add_node(num_cpus=1, resources={"node_b": 1})
    ray.init(address=cluster.address, log_to_driver=False)
    # Ray's workers cannot import this test module: send its functions by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def test_players_on_two_nodes_send_snapshots_and_games_to_the_driver(two_node_cluster, tmp_path):
    nodes: list[dict[str, str]] = []
    league = League(
        tictactoe_v3.env,
        AlphaStarLeague(1, 1, 0, snapshot_min_steps=CHUNK, snapshot_max_steps=CHUNK),
        tiny_model,
        tmp_path,
        chunk_steps=CHUNK,
        n_envs=2,
        on_round=lambda _, results: nodes.append({n: r.node for n, r in results.items()}),
    )
    result = league.run(
        2 * 2 * CHUNK,
        backend="ray",
        address=two_node_cluster.address,
        actor_options={
            "main_agent_0": {"resources": {"node_a": 0.5}},
            "main_exploiter_0": {"resources": {"node_b": 0.5}},
        },
    )
    assert result.rounds == 2
    cluster_nodes = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    for placed in nodes:
        assert placed["main_agent_0"] != placed["main_exploiter_0"]
        assert set(placed.values()) <= cluster_nodes
    # the driver's archive holds both players' snapshots and games, written by the driver
    parents = {
        t for info in league.archive.snapshots() for t in info.tags if t.startswith("parent")
    }
    assert parents == {"parent:main_agent_0", "parent:main_exploiter_0"}
    players = {m.player_a for m in league.archive.matches()}
    assert players == {"main_agent_0", "main_exploiter_0"}
    assert league.learners["main_exploiter_0"].resets == 2
