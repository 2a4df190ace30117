"""``--latest-ratio`` is a share of the games the fixed opponents leave, and says so (#33)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from stable_baselines3 import PPO

from sp_wrappers import OpponentSampler, RandomPolicy, SnapshotArchive
from sp_wrappers.cli.app import build_parser


def test_latest_ratio_help_says_it_is_a_share_of_what_the_fixed_opponents_leave():
    help_text = " ".join(build_parser().command_parser("train").format_help().split())
    entry = help_text[help_text.rindex("--latest-ratio P") :][:600]
    assert "left after --random-ratio and --reference-ratio" in entry
    assert "--random-ratio 0.2 --latest-ratio 0.5 plays the latest weights in 40% of games" in entry


def test_latest_ratio_is_a_share_of_the_draws_left_after_fixed_opponents(tmp_path):
    archive = SnapshotArchive(tmp_path / "a")
    model = PPO("MlpPolicy", gym.make("CartPole-v1"), policy_kwargs={"net_arch": [8]})
    archive.save(model, step=0)
    random = RandomPolicy()
    sampler = OpponentSampler(archive, latest_ratio=0.5, fixed_opponents=[(random, 0.2)], seed=0)
    state = {k: v.detach().numpy() for k, v in model.policy.state_dict().items()}
    sampler.sync_latest_weights(1, state)
    rng = np.random.default_rng(0)
    draws = [sampler.draw(rng).policy_id for _ in range(4000)]
    shares = {name: draws.count(name) / len(draws) for name in set(draws)}
    assert abs(shares["random"] - 0.2) < 0.03
    assert abs(shares["latest"] - 0.4) < 0.03  # 0.5 of the 0.8 left, not 0.5 of all
    assert abs(shares["snapshot-0000"] - 0.4) < 0.03
