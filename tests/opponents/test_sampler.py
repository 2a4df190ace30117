"""OpponentSampler: latest ratio, window, swap schedule, PFSP, fixed opponents, determinism."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.classic import tictactoe_v3
from sb3_contrib import MaskablePPO

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.core.policies import RandomPolicy
from sp_wrappers.envs.selfplay_env import SelfPlayEnv
from sp_wrappers.opponents.sampler import LATEST_ID, OpponentSampler, draw_index, pfsp_weights


@pytest.fixture(scope="module")
def model():
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random")
    return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, policy_kwargs={"net_arch": [8]})


@pytest.fixture
def archive(tmp_path, model):
    archive = SnapshotArchive(tmp_path, cache_size=4)
    for step in range(0, 100, 10):
        archive.save(model, step=step)
    return archive


def synced(sampler: OpponentSampler, model) -> OpponentSampler:
    state = {k: v.detach().numpy() for k, v in model.policy.state_dict().items()}
    sampler.sync_latest_weights(1, state)
    return sampler


def draw_ids(sampler: OpponentSampler, n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [sampler.draw(rng).policy_id for _ in range(n)]


def test_latest_ratio_one_always_gives_the_latest_weights(archive, model):
    sampler = synced(OpponentSampler(archive, latest_ratio=1.0), model)
    assert set(draw_ids(sampler, 200)) == {LATEST_ID}


def test_latest_ratio_zero_never_gives_the_latest_weights(archive, model):
    sampler = synced(OpponentSampler(archive, latest_ratio=0.0, window=None), model)
    ids = draw_ids(sampler, 300)
    assert LATEST_ID not in ids
    assert set(ids) == {info.id for info in archive.snapshots()}


def test_latest_ratio_sets_the_share_of_latest_draws(archive, model):
    sampler = synced(OpponentSampler(archive, latest_ratio=0.3), model)
    share = draw_ids(sampler, 2000).count(LATEST_ID) / 2000
    assert 0.26 < share < 0.34


def test_a_draw_of_the_latest_weights_reads_no_archive_listing(archive, model, monkeypatch):
    """Every episode start of every env copy draws: the latest weights (half the draws at
    ``latest_ratio=0.5``) need no listing of the snapshots (an SQLite query)."""
    sampler = synced(OpponentSampler(archive, latest_ratio=0.5, window=None), model)
    expected = draw_ids(sampler, 400)
    listings = []
    listing = archive.snapshot_ids

    def counted(*args, **kwargs):
        listings.append(1)
        return listing(*args, **kwargs)

    monkeypatch.setattr(archive, "snapshot_ids", counted)
    assert draw_ids(sampler, 400) == expected  # the same draws from the same stream
    assert len(listings) == 400 - expected.count(LATEST_ID) > 0


@pytest.mark.parametrize(
    "probabilities",
    [
        np.full(10, 0.1),
        np.full(7, 1 / 7),
        np.array([0.0, 1.0, 0.0]),
        pfsp_weights([0.0, 0.5, 1.0, 0.9, 0.2], "hard"),
        np.random.default_rng(3).dirichlet(np.ones(30)),
    ],
    ids=["uniform-10", "uniform-7", "one", "pfsp", "dirichlet"],
)
def test_snapshot_draws_are_rng_choice_draws_without_its_checks(probabilities):
    """Seeded runs draw the same snapshots as before the sampler drew its own index (the
    cumulative sums and one uniform, as numpy's ``choice`` does), and leave the generator in the
    same state."""
    for seed in range(300):
        mine, numpy = np.random.default_rng(seed), np.random.default_rng(seed)
        drawn = [draw_index(mine, probabilities) for _ in range(4)]
        assert drawn == [int(numpy.choice(len(probabilities), p=probabilities)) for _ in range(4)]
        assert mine.bit_generator.state == numpy.bit_generator.state
    with pytest.raises(ValueError, match="NaN"):  # what cannot be drawn from: numpy says why
        draw_index(np.random.default_rng(0), np.array([np.nan, 1.0]))


def test_latest_weights_follow_the_learner(archive, model):
    sampler = synced(OpponentSampler(archive, latest_ratio=1.0), model)
    latest = sampler.draw(np.random.default_rng(0))
    zeros = {k: np.zeros_like(v) for k, v in latest.state_dict().items()}
    sampler.sync_latest_weights(2, zeros)
    assert all(not v.any() for v in sampler.draw().state_dict().values())
    sampler.sync_latest_weights(2, {k: v + 1 for k, v in zeros.items()})  # a repeat: ignored
    assert all(not v.any() for v in sampler.draw().state_dict().values())


@given(window=st.integers(1, 12))
@settings(max_examples=12, deadline=None)
def test_window_only_admits_the_newest_snapshots(window, tmp_path_factory, model):
    archive = SnapshotArchive(tmp_path_factory.mktemp("a"))
    for step in range(8):
        archive.save(model, step=step)
    sampler = OpponentSampler(archive, window=window, latest_ratio=0.0)
    newest = {info.id for info in archive.snapshots()[-window:]}
    assert set(draw_ids(sampler, 150)) == newest


def test_new_snapshots_enter_the_window_and_old_ones_leave(archive, model):
    sampler = OpponentSampler(archive, window=2, latest_ratio=0.0)
    assert set(draw_ids(sampler, 50)) == {"snapshot-0008", "snapshot-0009"}
    archive.save(model, step=200)
    assert set(draw_ids(sampler, 50)) == {"snapshot-0009", "snapshot-0010"}


def episode_opponents(sampler: OpponentSampler, episodes: int) -> list[tuple[str, int]]:
    """(opponent id, episode length) of each episode played with random legal moves."""
    env = SelfPlayEnv(tictactoe_v3.env(), learner="random", opponent=sampler)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    result = []
    while len(result) < episodes:
        action = rng.choice(np.flatnonzero(env.action_masks()))
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            result.append((info["selfplay"]["opponent"], info["selfplay"]["length"]))
            env.reset()
    return result


def test_swap_every_episodes_keeps_an_opponent_for_that_many_episodes(archive):
    sampler = OpponentSampler(archive, latest_ratio=0.0, swap_every=3, swap_unit="episodes")
    ids = [opponent for opponent, _ in episode_opponents(sampler, 30)]
    blocks = [ids[i : i + 3] for i in range(0, 30, 3)]
    assert all(len(set(block)) == 1 for block in blocks)
    assert len({block[0] for block in blocks}) > 1


def test_swap_every_steps_draws_again_once_that_many_learner_steps_passed(archive):
    sampler = OpponentSampler(archive, latest_ratio=0.0, swap_every=7, swap_unit="steps")
    episodes = episode_opponents(sampler, 40)
    steps_since_draw = 0
    for i, (opponent, _) in enumerate(episodes[1:], start=1):
        steps_since_draw += episodes[i - 1][1]
        if opponent != episodes[i - 1][0]:
            assert steps_since_draw >= 7, "swapped before swap_every learner steps"
            steps_since_draw = 0
        elif steps_since_draw >= 7:
            steps_since_draw = 0  # a new draw happened to pick the same snapshot
    assert len({opponent for opponent, _ in episodes}) > 1


def test_pfsp_hard_weighting_favours_snapshots_the_learner_loses_to(archive):
    ids = [info.id for info in archive.snapshots()]
    for sid in ids[:-1]:
        archive.record_matches([dict(player_a="learner", player_b=sid, score_a=1.0)] * 10)
    archive.record_matches([dict(player_a="learner", player_b=ids[-1], score_a=0.0)] * 10)
    sampler = OpponentSampler(archive, strategy="pfsp", latest_ratio=0.0, window=None)
    counts = Counter(draw_ids(sampler, 200))
    assert counts[ids[-1]] == 200  # (1 - p)^2 is zero for every snapshot the learner always beats


def test_pfsp_variance_weighting_favours_even_matches(archive):
    ids = [info.id for info in archive.snapshots()]
    record = archive.record_matches
    record([dict(player_a="learner", player_b=ids[0], score_a=1.0)] * 10)  # p = 1
    record([dict(player_a="learner", player_b=ids[1], score_a=s) for s in (0.0, 1.0)])  # p = .5
    record([dict(player_a="learner", player_b=ids[2], score_a=s) for s in [1.0] * 9 + [0.0]])
    sampler = OpponentSampler(
        archive,
        strategy="pfsp",
        pfsp_weighting="variance",
        pfsp_decay=1.0,  # plain rates over the whole history
        latest_ratio=0.0,
        window=None,
    )
    probabilities = dict(zip(ids, sampler.snapshot_probabilities(), strict=True))
    assert probabilities[ids[0]] == 0.0
    # p(1-p): 0.25 for the even match (and for unplayed snapshots, taken as p = 0.5), 0.09 at 0.9
    assert probabilities[ids[1]] == pytest.approx(probabilities[ids[5]])
    assert probabilities[ids[2]] == pytest.approx(probabilities[ids[1]] * 0.09 / 0.25)


def test_pfsp_follows_recent_results_so_old_losses_fade(archive):
    ids = [info.id for info in archive.snapshots()]
    old, even = ids[0], ids[1]
    record = archive.record_matches
    record([dict(player_a="learner", player_b=old, score_a=0.0)] * 300)  # lost long ago...
    record([dict(player_a="learner", player_b=old, score_a=1.0)] * 100)  # ...wins it now
    record([dict(player_a="learner", player_b=even, score_a=float(i % 2)) for i in range(100)])

    def probabilities(**kwargs):
        sampler = OpponentSampler(archive, strategy="pfsp", latest_ratio=0.0, window=None, **kwargs)
        return dict(zip(ids, sampler.snapshot_probabilities(), strict=True))

    # recent results (the default): the learner now beats `old` (decayed rate 0.65), so the even
    # match weighs more under (1 - p)^2
    recent = probabilities()
    assert recent[old] < recent[even]
    # the whole history (rate 0.25) would keep chasing the opponent it already beats
    whole = probabilities(pfsp_decay=1.0)
    assert whole[old] > whole[even]


def test_decayed_scores_are_the_leagues_payoff_win_rates(archive):
    from sp_wrappers.league.payoff import DEFAULT_DECAY, PayoffTable
    from sp_wrappers.opponents.sampler import PFSP_DECAY

    ids = [info.id for info in archive.snapshots()]
    rng = np.random.default_rng(0)
    games = [
        dict(player_a="learner", player_b=ids[int(rng.integers(3))], score_a=float(s))
        for s in rng.choice([0.0, 0.5, 1.0], size=300)
    ]
    games += [dict(player_a=ids[1], player_b="learner", score_a=1.0)] * 20  # learner as b
    archive.record_matches(games)
    table = PayoffTable(decay=0.95, min_games=0).from_matches(
        archive.matches(), decay=0.95, min_games=0
    )
    scores = archive.scores_against("learner", decay=0.95)
    for sid in ids[:3]:
        assert scores[sid][0] == pytest.approx(table.win_rate("learner", sid))
        assert scores[sid][1] == table.games("learner", sid)
    assert PFSP_DECAY == DEFAULT_DECAY  # the sampler and the league fade results alike


def test_fixed_opponents_are_mixed_in_at_their_probability(archive, model):
    bot = RandomPolicy(policy_id="scripted-bot")
    sampler = synced(
        OpponentSampler(archive, latest_ratio=0.5, fixed_opponents=[(bot, 0.1)]), model
    )
    counts = Counter(draw_ids(sampler, 4000))
    assert 0.08 < counts["scripted-bot"] / 4000 < 0.12
    assert 0.42 < counts[LATEST_ID] / 4000 < 0.48  # latest_ratio applies to the remaining 90%


def test_draws_are_deterministic_given_a_seed(archive, model):
    first = draw_ids(synced(OpponentSampler(archive, strategy="uniform"), model), 100, seed=5)
    again = draw_ids(synced(OpponentSampler(archive, strategy="uniform"), model), 100, seed=5)
    other = draw_ids(synced(OpponentSampler(archive, strategy="uniform"), model), 100, seed=6)
    assert first == again != other


def test_an_empty_archive_falls_back_until_the_first_snapshot(tmp_path, model):
    archive = SnapshotArchive(tmp_path)
    sampler = OpponentSampler(archive)
    assert sampler.draw().policy_id == "random"
    archive.save(model, step=0)
    assert set(draw_ids(sampler, 20)) == {"snapshot-0000"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(window=0), "window must be a positive integer"),
        (dict(latest_ratio=1.5), "latest_ratio must be between 0 and 1"),
        (dict(latest_ratio=-0.1), "latest_ratio must be between 0 and 1"),
        (dict(swap_unit="minutes"), "swap_unit must be one of"),
        (dict(swap_every=0), "swap_every must be a positive integer"),
        (dict(strategy="elo"), "strategy must be one of"),
        (dict(fixed_opponents=[(RandomPolicy(), 0.7), (RandomPolicy(), 0.7)]), "sum to more"),
        (dict(fixed_opponents=["random"]), r"\(policy, probability\) pairs"),
        (dict(pfsp_decay=0.0), r"pfsp_decay must be in \(0, 1\].*1.0 weighs the whole history"),
    ],
)
def test_bad_sampler_settings_are_refused_with_the_fix(archive, kwargs, message):
    with pytest.raises(ValueError, match=message):
        OpponentSampler(archive, **kwargs)


def test_nash_strategy_draws_follow_its_stored_mixture(archive):
    ids = [info.id for info in archive.snapshots()][:3]
    a, b, c = ids
    # rock-paper-scissors among the first three, each pair played: a beats b, b beats c, c beats a.
    archive.record_matches(
        [dict(player_a=a, player_b=b, score_a=1.0)] * 4
        + [dict(player_a=b, player_b=c, score_a=1.0)] * 4
        + [dict(player_a=c, player_b=a, score_a=0.75)] * 4  # c beats a, less often: tilts the mix
    )
    sampler = OpponentSampler(archive, strategy="nash", latest_ratio=0.0, window=None)
    mixture = sampler.nash_mixture
    assert set(mixture) == {info.id for info in archive.snapshots()}
    assert sum(mixture.values()) == pytest.approx(1.0)
    n = 3000
    counts = Counter(draw_ids(sampler, n, seed=3))
    expected = {sid: p * n for sid, p in mixture.items()}
    chi_square = sum((counts[sid] - e) ** 2 / e for sid, e in expected.items() if e > 0)
    assert chi_square < 30  # 9 degrees of freedom at most: p < 0.001 above 28
    assert all(counts[sid] == 0 for sid, p in mixture.items() if p == 0)


def test_nash_mixture_is_solved_again_when_new_results_arrive_and_lists_unplayed_pairs(archive):
    ids = [info.id for info in archive.snapshots()]
    sampler = OpponentSampler(archive, strategy="nash", latest_ratio=0.0, window=2)
    newer, newest = ids[-2:]
    assert sampler.missing_pairs() == [(newer, newest)]
    assert sampler.nash_mixture == pytest.approx({newer: 0.5, newest: 0.5})
    archive.record_matches([dict(player_a=newest, player_b=newer, score_a=1.0)] * 3)
    assert sampler.missing_pairs() == []
    assert sampler.nash_mixture == pytest.approx({newer: 0.0, newest: 1.0}, abs=1e-9)
    assert set(draw_ids(sampler, 50)) == {newest}


@pytest.mark.parametrize("family", ["SAC", "DQN"])
def test_latest_weights_after_the_first_load_copy_only_the_acting_part(tmp_path, family):
    import gymnasium as gym
    import torch
    from stable_baselines3 import DQN, SAC

    from sp_wrappers.core.policies import SB3Policy

    make = SAC if family == "SAC" else DQN
    env = gym.make("Pendulum-v1" if family == "SAC" else "CartPole-v1")
    learner = make("MlpPolicy", env, seed=0, policy_kwargs={"net_arch": [16]})
    archive = SnapshotArchive(tmp_path)
    archive.save(learner, step=0)
    sampler = OpponentSampler(archive, latest_ratio=1.0)
    acting, training = ("actor.", "critic") if family == "SAC" else ("q_net.", "q_net_target.")
    for version in range(1, 4):
        with torch.no_grad():
            for p in learner.policy.parameters():
                p.add_(torch.randn_like(p))
        sent = {k: v.detach().numpy().copy() for k, v in learner.policy.state_dict().items()}
        sampler.sync_latest_weights(version, sent)
        held = sampler.draw().state_dict()
        if version == 1:
            first = held
        for key, weights in held.items():
            if key.startswith(acting) or version == 1:
                np.testing.assert_array_equal(weights, sent[key])  # what the opponent acts with
            elif key.startswith(training):
                np.testing.assert_array_equal(weights, first[key])  # kept from the first load
    obs = np.stack([env.observation_space.sample() for _ in range(5)])
    alone = SB3Policy(learner, deterministic=True)
    latest = sampler.draw()
    latest.deterministic = True
    np.testing.assert_allclose(latest.act(obs, None, None), alone.act(obs, None, None), atol=1e-6)
    # weights of another shape are refused as before, by the whole load
    wrong = {k: np.zeros((1,) + v.shape, v.dtype) for k, v in sent.items()}
    with pytest.raises(RuntimeError, match="size mismatch"):
        sampler.sync_latest_weights(9, wrong)
