"""Specification: a recurrent learner keeps its memory everywhere it plays (issue #33).

A RecurrentPPO policy's moves depend on its LSTM state, so every way of playing a game (a match,
forced openings, the strength ladder, the end-of-run evaluation, a replay, a person's game, an
opposing team) must carry that state through the game: the same policy, seeds and deterministic
opponent give the same moves in all of them. Acting without a state raises instead of quietly
playing every move from a fresh one. The policies are real, untrained RecurrentPPO networks
(their moves already depend on their state).
"""

from __future__ import annotations

import io
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pytest
import torch
from pettingzoo.classic import tictactoe_v3
from pettingzoo.utils import BaseWrapper

sb3_contrib = pytest.importorskip("sb3_contrib")

from sp_wrappers import SB3Policy, SelfPlayEnv, SnapshotArchive  # noqa: E402
from sp_wrappers.core.policies import CallablePolicy, PolicyPlayer  # noqa: E402
from sp_wrappers.evaluation.human_play import play_session  # noqa: E402
from sp_wrappers.evaluation.match import play_match  # noqa: E402
from sp_wrappers.evaluation.openings import ForcedOpening, play_openings  # noqa: E402
from sp_wrappers.evaluation.replay import play_replay  # noqa: E402
from sp_wrappers.games.notation import IndexNotation  # noqa: E402
from sp_wrappers.runs import summary  # noqa: E402
from sp_wrappers.runs.summary import evaluate_final  # noqa: E402
from sp_wrappers.training.strength import StrengthCallback  # noqa: E402

torch.set_num_threads(1)


class Recording(BaseWrapper):
    """A PettingZoo game that writes every move played into ``games`` (one list per reset)."""

    def __init__(self, env: Any, games: list[list[tuple[str, int]]]) -> None:
        super().__init__(env)
        self.games = games

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.games.append([])
        super().reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        if action is not None:
            self.games[-1].append((self.agent_selection, int(action)))
        super().step(action)


def recorded(games: list[list[tuple[str, int]]]) -> Any:
    """A zero-argument game builder recording into ``games``."""
    return lambda: Recording(tictactoe_v3.env(), games)


def played(games: list[list[tuple[str, int]]]) -> list[list[tuple[str, int]]]:
    """The games that had moves (builders also reset games to read their spaces)."""
    return [game for game in games if game]


def recurrent_model(seed: int, env: Any = None) -> Any:
    """An untrained RecurrentPPO whose LSTM memory weighs heavily on its moves."""
    env = env if env is not None else SelfPlayEnv(tictactoe_v3.env())
    model = sb3_contrib.RecurrentPPO(
        "MlpLstmPolicy",
        env,
        n_steps=32,
        batch_size=32,
        seed=seed,
        policy_kwargs={"lstm_hidden_size": 16},
    )
    with torch.no_grad():
        model.policy.lstm_actor.weight_hh_l0.mul_(4.0)
    return model


class FreshEveryMove:
    """What the envs' callers did before: the recurrent policy plays each move from a fresh
    state (used to show that the state changes the moves, so the comparisons mean something)."""

    recurrent = True

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.policy_id = policy.policy_id

    def act(self, obs: Any, masks: Any, rng: Any, state_keys: Sequence[Hashable]) -> np.ndarray:
        return self.policy.act(obs, masks, rng, state_keys=[object() for _ in state_keys])


class Recorder:
    """Forwards to a recurrent policy (state keys included) and keeps every batch it saw."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.policy_id = policy.policy_id
        self.calls: list[tuple[np.ndarray, Any, list | None, np.ndarray]] = []

    @property
    def recurrent(self) -> bool:
        return self.policy.recurrent

    def act(self, obs: Any, masks: Any, rng: Any, state_keys: Any = None) -> np.ndarray:
        actions = self.policy.act(obs, masks, rng, state_keys=state_keys)
        keys = None if state_keys is None else list(state_keys)
        record = (np.array(obs, copy=True), None if masks is None else np.array(masks), keys)
        self.calls.append((*record, np.asarray(actions)))
        return actions


def check_states_carried(model: Any, calls: list, state_matters: bool = True) -> set:
    """Every recorded action is the model's with the LSTM state of its row's key carried from
    that key's earlier rows (``SB3Policy.act`` with explicit keys, which plays as the model's
    own ``predict`` does: test_policy_families); returns the keys."""
    reference = SB3Policy(model, deterministic=True)
    fresh_differs = False
    for obs, masks, keys, actions in calls:
        assert keys is not None, "the policy was called without state keys"
        for row, key in enumerate(keys):
            view = obs[row : row + 1], None if masks is None else masks[row : row + 1]
            expected = reference.act(*view, None, state_keys=[("carried", key)])
            fresh = reference.act(*view, None, state_keys=[object()])
            fresh_differs |= int(fresh[0]) != int(expected[0])
            assert int(actions[row]) == int(expected[0])
    assert fresh_differs or not state_matters  # so the comparison above means something
    return {key for _, _, keys, _ in calls for key in keys}


@pytest.fixture(scope="module")
def lstm_a() -> SB3Policy:
    return SB3Policy(recurrent_model(0), deterministic=True, policy_id="lstm-a")


@pytest.fixture(scope="module")
def lstm_b() -> SB3Policy:
    return SB3Policy(recurrent_model(1), deterministic=True, policy_id="lstm-b")


def match_moves(a: Any, b: Any, n_games: int = 2, seed: int = 0) -> list[list[tuple[str, int]]]:
    games: list[list[tuple[str, int]]] = []
    play_match(recorded(games), a, b, n_games, seed=seed)
    return played(games)


# ------------------------------------------------------------------------------------------------
# One way to act
# ------------------------------------------------------------------------------------------------


def test_a_recurrent_policy_refuses_to_act_without_a_state(lstm_a):
    obs, masks = np.zeros((1, 3, 3, 2), dtype=np.float32), np.ones((1, 9), dtype=bool)
    with pytest.raises(ValueError, match="recurrent.*PolicyPlayer"):
        lstm_a.act(obs, masks, np.random.default_rng(0))
    a, _ = ForcedOpening.pair(lstm_a, lstm_a, opening=())
    with pytest.raises(ValueError, match="no state_keys"):
        a.act(obs, masks, np.random.default_rng(0))
    assert a.recurrent


def test_a_policy_player_continues_its_state_through_a_game_and_starts_fresh_at_reset(lstm_a):
    model = recurrent_model(0)
    policy = SB3Policy(model, deterministic=True)
    rng = np.random.default_rng(0)
    steps = [rng.normal(size=(1, 3, 3, 2)).astype(np.float32) * 3 for _ in range(5)]
    player = PolicyPlayer(policy)
    player.reset()
    state, start = None, np.ones(1, dtype=bool)
    for obs in steps:
        expected, state = model.predict(obs, state, start, deterministic=True)
        start = np.zeros(1, dtype=bool)
        assert player.act(obs, None, None).tolist() == expected.tolist()
    player.reset()
    fresh, _ = model.predict(steps[0], None, np.ones(1, dtype=bool), deterministic=True)
    assert player.act(steps[0], None, None).tolist() == fresh.tolist()


# ------------------------------------------------------------------------------------------------
# Every caller plays the games play_match plays
# ------------------------------------------------------------------------------------------------


def test_play_openings_plays_a_recurrent_policy_s_games_as_play_match_does(lstm_a, lstm_b):
    expected = match_moves(lstm_a, lstm_b)
    assert expected != match_moves(FreshEveryMove(lstm_a), FreshEveryMove(lstm_b))
    games: list[list[tuple[str, int]]] = []
    result = play_openings(recorded(games), lstm_a, lstm_b, [()])
    assert played(games) == expected
    assert [list(g.moves) for g in result.games] == [[m for _, m in g] for g in expected]


def test_one_recurrent_policy_in_both_seats_keeps_one_state_per_seat(lstm_b):
    expected = match_moves(lstm_b, lstm_b)
    assert expected != match_moves(FreshEveryMove(lstm_b), FreshEveryMove(lstm_b))
    games: list[list[tuple[str, int]]] = []
    play_openings(recorded(games), lstm_b, lstm_b, [()])
    assert played(games) == expected


def test_the_replay_of_a_recurrent_policy_plays_play_match_s_game(lstm_a, lstm_b):
    first = match_moves(lstm_a, lstm_b)[0]
    assert first[0][0] == "player_1"  # a moves first in play_match's game 0
    replay = play_replay(tictactoe_v3.env, lstm_a, lstm_b, seat="player_1", record_frames=False)
    assert [(s, int(a)) for m in replay.moves for s, a in m.actions.items()] == first


def test_a_replay_from_an_opening_plays_play_openings_game_of_that_opening(lstm_a, lstm_b):
    games: list[list[tuple[str, int]]] = []
    result = play_openings(recorded(games), lstm_a, lstm_b, [(4, 0)], seats=["player_1"])
    replay = play_replay(
        tictactoe_v3.env, lstm_a, lstm_b, seat="player_1", opening=(4, 0), record_frames=False
    )
    assert tuple(int(a) for m in replay.moves for a in m.actions.values()) == result.games[0].moves


def test_a_recurrent_policy_sees_the_forced_moves_of_its_seat_and_remembers_them():
    model = recurrent_model(0)
    recorder = Recorder(SB3Policy(model, deterministic=True, policy_id="lstm"))
    first_legal = CallablePolicy(lambda obs, mask: int(np.flatnonzero(mask)[0]), "first-legal")
    result = play_openings(tictactoe_v3.env, recorder, first_legal, [(4, 0, 8)], ["player_1"])
    moves = result.games[0].moves
    assert moves[:3] == (4, 0, 8)
    assert len(recorder.calls) == len(moves[0::2])  # player_1's turns, forced ones included
    keys = check_states_carried(model, recorder.calls, state_matters=False)
    assert len(keys) == 1  # one game, one seat: one memory


def test_a_person_s_game_against_a_recurrent_policy_gets_the_match_s_moves(lstm_a):
    first_legal = CallablePolicy(lambda obs, mask: int(np.flatnonzero(mask)[0]), "first-legal")
    match = match_moves(lstm_a, first_legal, n_games=1)[0]
    assert match != match_moves(FreshEveryMove(lstm_a), first_legal, n_games=1)[0]
    human = "".join(f"#{action}\n" for seat, action in match if seat == "player_2")
    outcome = play_session(
        tictactoe_v3.env,
        lstm_a,
        "player_2",
        input_stream=io.StringIO(human),
        output_stream=io.StringIO(),
        notation=IndexNotation(),
        seed=0,
    )
    assert outcome.finished
    assert outcome.moves == [(seat, str(action)) for seat, action in match]


def test_the_strength_ladder_plays_a_recurrent_learner_s_games_as_play_match_does(lstm_b):
    model = recurrent_model(0)
    learner = SB3Policy(model, deterministic=True, policy_id="learner")
    expected = match_moves(learner, lstm_b)
    games: list[list[tuple[str, int]]] = []
    callback = StrengthCallback(recorded(games), [lstm_b], eval_every=1000, openings=[()])
    callback.init_callback(model)
    games.clear()
    record = callback.evaluate()
    assert played(games) == expected
    outcomes = [o for _, o in play_match(tictactoe_v3.env, learner, lstm_b, 2).games]
    assert record["wdl"]["lstm-b"] == [outcomes.count(x) for x in (1.0, 0.5, 0.0)]


def test_the_end_of_run_evaluation_plays_a_recurrent_learner_s_games_as_play_match_does(
    tmp_path, monkeypatch
):
    model = recurrent_model(0)
    learner = SB3Policy(model, deterministic=True, policy_id="final")
    opponent = SB3Policy(recurrent_model(1), deterministic=True, policy_id="lstm-b")
    expected = match_moves(learner, opponent, n_games=4, seed=10_000)
    games: list[list[tuple[str, int]]] = []
    archive = SnapshotArchive(tmp_path / "archive")
    # a deterministic reference bot, and no forced openings (an unregistered game)
    monkeypatch.setattr(summary, "reference_opponents", lambda game: [opponent])
    results = evaluate_final(
        model, "final", recorded(games), archive, game="unregistered", n_games=4, seed=0
    )
    assert played(games) == expected
    outcomes = [o for _, o in play_match(tictactoe_v3.env, learner, opponent, 4, seed=10_000).games]
    assert [o for _, o in results["lstm-b"].games] == outcomes
    assert [r.score_a for r in archive.matches(source="evaluation")] == outcomes


# ------------------------------------------------------------------------------------------------
# Teams
# ------------------------------------------------------------------------------------------------


def tag() -> Any:
    pytest.importorskip("mpe2")
    from mpe2 import simple_tag_v3

    return simple_tag_v3.env(max_cycles=5, continuous_actions=False)


def test_a_recurrent_opposing_team_keeps_its_state_through_a_game():
    model = recurrent_model(0, SelfPlayEnv(tag(), learner="adversary", teams="prefix"))
    team = Recorder(SB3Policy(model, deterministic=True, policy_id="lstm-team"))
    env = SelfPlayEnv(tag(), learner="agent", teams="prefix", opponent={"adversary": team})
    for seed in (0, 1):  # two games: the second starts from fresh states
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(0)
            done = terminated or truncated
    assert len(team.calls) >= 8 and all(len(obs) == 3 for obs, *_ in team.calls)
    assert len(check_states_carried(model, team.calls)) == 6  # 3 predators x 2 games


def test_a_recurrent_opposing_team_keeps_its_state_in_a_team_s_training_env():
    from sp_wrappers.training.team_setup import make_team_vec_env

    model = recurrent_model(0, SelfPlayEnv(tag(), learner="adversary", teams="prefix"))
    team = Recorder(SB3Policy(model, deterministic=True, policy_id="lstm-team"))
    venv = make_team_vec_env(tag, "prefix", "agent", n_envs=2, seed=0, opponent={"adversary": team})
    venv.reset()
    for _ in range(12):  # more than one game per copy
        venv.step(np.zeros(venv.num_envs, dtype=np.int64))
    venv.close()
    assert len(check_states_carried(model, team.calls)) >= 12  # 3 predators, 2 copies, 2+ games


class PredictSpy:
    """A real model whose ``predict`` calls are written down (what went in, what came out)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.calls: list[tuple[Any, np.ndarray, Any]] = []

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None, **kwargs: Any):
        actions, new_state = self.model.predict(obs, state, episode_start, **kwargs)
        self.calls.append((state, np.array(episode_start, copy=True), new_state))
        return actions, new_state


def test_a_team_run_s_final_evaluation_carries_a_recurrent_model_s_state_through_each_game():
    from sp_wrappers.runs import team_results
    from sp_wrappers.training.team_setup import make_team_vec_env

    env = make_team_vec_env(tag, "prefix", "adversary", n_envs=1, seed=0, monitor=False)
    spy = PredictSpy(recurrent_model(0, env))
    team_results._play_against_random(spy, tag, "prefix", "adversary", n_games=5, seed=0)
    assert len(spy.calls) == 10  # 4 copies, games of 5 rounds: two rounds of games
    for i, (state, starts, _) in enumerate(spy.calls):
        assert starts.tolist() == [i % 5 == 0] * 12  # 4 copies x 3 predators
        if i:
            assert state is spy.calls[i - 1][2]  # the memory of the previous step goes on
