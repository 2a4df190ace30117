"""A league trusts the classes its own learners use (docs/how-to/learners.md's promise).

The classes a learner in this process saved into an archive are trusted for that archive in
this process; plain training keeps it. A league's players build their models with the user's
``make_model`` (here a features extractor defined in this test module, no ``trusted_modules``),
so their first snapshot, and the opponents built from it in every player, trust that class too,
on the serial backend and in player processes.
"""

from __future__ import annotations

import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from sp_wrappers import SnapshotArchive
from sp_wrappers.league import League
from sp_wrappers.league.builders import AlphaStarLeague

CHUNK = 64


class TinyExtractor(BaseFeaturesExtractor):
    """The user's own features extractor, from a module no trusted prefix names."""

    def __init__(self, observation_space, features_dim: int = 8):
        super().__init__(observation_space, features_dim)
        size = int(torch.tensor(observation_space.shape).prod())
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(size, features_dim))

    def forward(self, observations):
        return torch.relu(self.net(observations))


def custom_model(env):
    return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0,
                       policy_kwargs={"features_extractor_class": TinyExtractor,
                                      "net_arch": [8]})  # fmt: skip


@pytest.mark.parametrize("backend", ["serial", "process"])
def test_a_league_trusts_the_features_extractor_its_learners_use(tmp_path, backend):
    assert not TinyExtractor.__module__.startswith(SnapshotArchive(tmp_path / "a").trusted_modules)
    # two players that play each other's snapshots: each player rebuilds the other's class
    builder = AlphaStarLeague(main_agents=1, main_exploiters=1, league_exploiters=0,
                              snapshot_min_steps=CHUNK, snapshot_max_steps=CHUNK)  # fmt: skip
    league = League(tictactoe_v3.env, builder, custom_model, tmp_path / "league",
                    chunk_steps=CHUNK, n_envs=2, seed=0)  # fmt: skip
    result = league.run(4 * CHUNK, backend=backend)
    assert result.rounds == 2
    snapshots = league.archive.snapshots()
    assert len(snapshots) >= 4  # the initial ones and one per player per round
    for info in snapshots:
        assert isinstance(league.archive.load_policy(info).policy.features_extractor,
                          TinyExtractor)  # fmt: skip
    games = list(league.archive.iter_matches(source="league"))
    assert games and {g.player_b for g in games} & {s.id for s in snapshots}
