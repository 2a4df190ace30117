"""PSRO: a tiny real run on Kuhn poker, checked exactly, and a run killed with SIGKILL that
resumes from its last complete iteration."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sp_wrappers.archive.store import SnapshotArchive
from sp_wrappers.cli import main
from sp_wrappers.evaluation.exploitability import exploitability
from sp_wrappers.games.openspiel_games import kuhn_poker
from sp_wrappers.league.errors import LeagueSetupError
from sp_wrappers.league.psro import PSRO_STATE, PSROSettings, read_psro
from sp_wrappers.runs.players import choose_player
from sp_wrappers.runs.psro import resolve_psro
from sp_wrappers.runs.recipes import KUHN_POKER
from sp_wrappers.runs.run import RunOptions, start

TINY = {
    "steps_per_iteration": 1024,
    "n_envs": 2,
    "max_doublings": 1,  # a response that finds nothing trains 2048 steps at most
    "hp": {"n_steps": 128, "batch_size": 64, "n_epochs": 2},
}
TINY_ARGS = ["--steps", "1024", "--n-envs", "2", "--hp", "n_steps=128", "--hp", "batch_size=64"]
TINY_ARGS += ["--hp", "n_epochs=2", "--doublings", "1"]


def test_tiny_kuhn_run_measures_its_meta_mixture_exactly(tmp_path: Path) -> None:
    config = resolve_psro(KUHN_POKER, {**TINY, "iterations": 3, "meta_solver": "nash"})
    lines: list[str] = []
    result = start(config, tmp_path, RunOptions(report=lines.append)).psro
    assert result.iterations == 3 and len(result.members) == 4 and len(lines) == 4
    assert sum(result.weights.values()) == pytest.approx(1.0)
    for record in result.history:
        assert sum(record["weights"].values()) == pytest.approx(1.0)
        assert record["exploitability"] == pytest.approx(record["nash_conv"] / 2)
    # the reported number is the exact exploitability of the mixture the archive holds, each
    # member played greedily, recomputed here independently of the run
    with SnapshotArchive(tmp_path / "archive", create=False) as archive:
        stored = archive.stored_mixture()
        assert stored is not None and stored["mixture"] == pytest.approx(result.weights)
        mixture = [
            (archive.load_policy(sid, deterministic=True), w)
            for sid, w in result.weights.items()
            if w > 0
        ]
        again = exploitability(mixture, kuhn_poker())
    assert again.exploitability == pytest.approx(result.exploitability, abs=1e-9)
    # --snapshot nash (play, watch, tournament, exploitability) plays this same mixture
    with SnapshotArchive(tmp_path / "archive", create=False) as archive:
        choice = choose_player(archive, "nash")
    assert choice.mixture
    assert choice.weights == {k: v for k, v in result.weights.items() if v > 0}
    assert result.history[0]["exploitability"] > result.best["exploitability"]
    state = read_psro(tmp_path / PSRO_STATE)
    payoff = np.asarray(state["payoff"])
    np.testing.assert_allclose(payoff, -payoff.T, atol=1e-12)
    page = (tmp_path / "report.html").read_text()
    assert "<h2>PSRO</h2>" in page
    assert "psro/exploitability" in (tmp_path / "progress.csv").read_text().splitlines()[0]


def test_warm_start_and_stochastic_members_run_and_resume(tmp_path: Path) -> None:
    overrides = {**TINY, "iterations": 2, "warm_start": True, "greedy": False}
    overrides["meta_solver"] = "prd"
    result = start(resolve_psro(KUHN_POKER, overrides), tmp_path).psro
    assert result.iterations == 2
    assert sorted(p.name for p in tmp_path.glob("oracle-*.zip")) == ["oracle-2.zip"]
    more = start(
        resolve_psro(resume=tmp_path, overrides={"iterations": 3}),
        tmp_path,
        RunOptions(resume=True),
    ).psro
    assert more.iterations == 3 and more.members[:3] == result.members
    state = read_psro(tmp_path / PSRO_STATE)
    assert state["settings"]["warm_start"] and not state["settings"]["greedy"]


def _iterations(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["iterations"])
    except (OSError, ValueError, KeyError):
        return 0


def test_psro_killed_with_sigkill_resumes_from_its_last_iteration(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [sys.executable, "-m", "sp_wrappers.cli", "psro", KUHN_POKER, "--out", str(run)]
    command += [*TINY_ARGS, "--iterations", "200"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state = run / PSRO_STATE
    try:
        deadline = time.monotonic() + 600
        while _iterations(state) < 3:  # the start and two iterations written
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "PSRO wrote no iterations in 10 minutes"
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    before = read_psro(state)
    done = len(before["iterations"])
    status = main(["psro", "--resume", str(run), "--iterations", str(done)])
    assert status == 0
    after = read_psro(state)
    assert [r["iteration"] for r in after["iterations"]] == list(range(done + 1))
    assert after["members"][:done] == before["members"]
    with SnapshotArchive(run / "archive", create=False) as archive:
        assert [s.id for s in archive.snapshots()] == after["members"]  # no orphan kept


def test_psro_command_refuses_a_resume_with_new_settings(tmp_path: Path, capsys) -> None:
    assert main(["psro", "--resume", str(tmp_path), "--steps", "5", "--iterations", "2"]) == 2
    assert "keeps its game and settings" in capsys.readouterr().err
    assert main(["psro", "--resume", str(tmp_path), "--iterations", "2"]) == 2
    assert "holds no PSRO run" in capsys.readouterr().err


def test_benchmark_psro_arm_writes_a_line_per_iteration(tmp_path: Path) -> None:
    import importlib.util

    path = Path(__file__).parents[2] / "benchmarks" / "exploitability.py"
    spec = importlib.util.spec_from_file_location("exploitability_benchmark_psro", path)
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    # one iteration by count, never by the clock: a fast machine fitted two into 0.5 s
    argv = ["--games", "kuhn", "--strategies", "psro", "--seeds", "1", "--seconds", "600",
            "--out", str(tmp_path), "--psro", "iterations=1",
            "--psro", "steps_per_iteration=512", "--psro", "n_envs=2",
            "--psro", 'hp={"n_steps": 128, "batch_size": 64, "n_epochs": 2}']  # fmt: skip
    assert benchmark.main(argv) == 0
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [0, 512]
    assert all(line["strategy"] == "psro" and line["nash_nash_conv"] >= 0 for line in lines)
    assert lines[0]["nash_exploitability"] == pytest.approx(lines[0]["learner_exploitability"])
    # cut off before its done.json (a session's end): --resume goes on from the last iteration,
    # keeping the members it had, rather than training them again
    arm = tmp_path / "kuhn-psro-seed0"
    (arm / "done.json").unlink()
    members = read_psro(arm / PSRO_STATE)["members"]
    resumed = [
        *argv[: argv.index("iterations=1")],
        "iterations=2",
        *argv[argv.index("iterations=1") + 1 :],
    ]
    assert benchmark.main([*resumed, "--resume"]) == 0
    state = read_psro(arm / PSRO_STATE)
    assert state["members"][: len(members)] == members and len(state["members"]) == len(members) + 1
    history = json.loads((arm / "config.json").read_text())["history"]
    assert [entry["from_iteration"] for entry in history] == [0, 1]  # resumed, not started again
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and lines[1]["step"] == 512 and (arm / "done.json").exists()


def test_sampled_payoffs_keep_their_intervals_and_the_mixture_is_still_measured(tmp_path):
    from pettingzoo.classic import tictactoe_v3

    overrides = {"iterations": 1, "steps_per_iteration": 256, "n_envs": 2}
    overrides.update(payoffs="sampled", games_per_pair=4, hp={"n_steps": 128, "batch_size": 64})
    result = start(resolve_psro("tictactoe_v3", overrides), tmp_path).psro
    state = read_psro(tmp_path / PSRO_STATE)
    assert np.asarray(state["half_width"]).shape == (2, 2)
    assert list(result.weights) == result.members and result.exploitability is not None
    with SnapshotArchive(tmp_path / "archive", create=False) as archive:
        mixture = [
            (archive.load_policy(sid, deterministic=True), w)
            for sid, w in result.weights.items()
            if w > 0
        ]
        exact = exploitability(mixture, tictactoe_v3.env())
    assert exact.exploitability == pytest.approx(result.exploitability)


def test_a_response_that_does_not_improve_trains_on_doubled_and_a_resume_keeps_its_budget(
    tmp_path: Path, capsys
) -> None:
    # a learner that cannot learn (learning rate 0), warm-started from the previous response:
    # each response is a copy of a member, so it wins nothing against the mixture (exactly 0
    # against the one initial member) and trains on, its steps doubled twice, before it joins
    run = tmp_path / "run"
    argv = ["psro", KUHN_POKER, "--out", str(run), "--steps", "256", "--n-envs", "2"]
    argv += ["--hp", "n_steps=128", "--hp", "batch_size=64", "--hp", "n_epochs=2"]
    argv += ["--hp", "learning_rate=0", "--start", "warm", "--doublings", "2"]
    argv += ["--budget", "keep", "--min-gain", "0.5", "--iterations", "1"]
    assert main(argv) == 0
    assert "(response doubled 2x to 1,024 steps)" in capsys.readouterr().out
    state = read_psro(run / PSRO_STATE)
    settings = state["settings"]
    assert settings["max_doublings"] == 2 and settings["keep_budget"]
    assert settings["min_gain"] == 0.5
    [start, first] = state["iterations"]
    assert first["response_steps"] == 1024 and first["doublings"] == 2
    assert first["checked_gains"] == [0.0, 0.0] and first["response_gain"] == 0.0
    assert state["steps"] == 1024 and state["budget"] == 1024  # the next response starts at 1024
    config = json.loads((run / "config.json").read_text())
    assert config["settings"]["max_doublings"] == 2
    # the resumed run starts its response at the kept budget: no doubling from 256 again
    assert main(["psro", "--resume", str(run), "--iterations", "2"]) == 0
    second = read_psro(run / PSRO_STATE)["iterations"][2]
    assert second["response_steps"] == 1024 and second["checked_gains"] == []
    assert second["steps"] == 2048
    header, *rows = (run / "progress.csv").read_text().splitlines()
    column = header.split(",").index("psro/steps_per_iteration")
    assert "1024" in {row.split(",")[column] for row in rows}


def test_a_response_joins_once_it_improves_and_its_checked_gain_is_the_exact_one(tmp_path):
    overrides = {**TINY, "steps_per_iteration": 512, "iterations": 2, "max_doublings": 2}
    result = start(resolve_psro(KUHN_POKER, overrides), tmp_path).psro
    for record in result.history[1:]:
        gains, doublings = record["checked_gains"], record["doublings"]
        assert record["response_steps"] == 512 * 2**doublings
        assert len(gains) == min(doublings + 1, 2)  # a check after each try the cap allows
        assert all(gain <= 0 for gain in gains[:doublings])  # it trained on only after none
        if doublings < 2:
            assert gains[-1] > 0  # it stopped because it improved on the mixture
        # the gain read before the member joined is the one its added payoff row gives
        assert gains[-1] == pytest.approx(record["response_gain"], abs=1e-9)
        assert 0 < record["check_seconds"] < record["train_seconds"]
    assert result.history[-1]["steps"] == sum(r["response_steps"] for r in result.history)


def test_tictactoe_responses_are_checked_with_exact_payoffs(tmp_path: Path) -> None:
    overrides = {"iterations": 1, "steps_per_iteration": 256, "n_envs": 2, "max_doublings": 1}
    overrides["hp"] = {"n_steps": 128, "batch_size": 64, "n_epochs": 2}
    result = start(resolve_psro("tictactoe_v3", overrides), tmp_path).psro
    record = result.history[1]
    assert record["checked_gains"] and record["exploitability"] is not None
    assert record["checked_gains"][-1] == pytest.approx(record["response_gain"], abs=1e-9)
    assert record["response_steps"] == 256 * 2 ** record["doublings"]


BAD_EXTENSIONS = [({"max_doublings": -1}, "--doublings"), ({"min_gain": 1.5}, "--min-gain")]
BAD_EXTENSIONS += [({"random_ratio": 1.0}, "--random-ratio")]
BAD_EXTENSIONS += [({"reference_ratio": -0.1}, "--reference-ratio")]
BAD_EXTENSIONS += [({"random_ratio": 0.5, "reference_ratio": 0.5}, "sum under 1")]


@pytest.mark.parametrize(("settings", "flag"), BAD_EXTENSIONS)
def test_bad_extension_settings_name_their_flag(settings, flag) -> None:
    with pytest.raises(LeagueSetupError, match=flag):
        PSROSettings(**settings)


def test_a_gain_of_rounding_size_is_a_tie_and_the_threshold_follows_exploitability() -> None:
    # a Kuhn run's copy of a member "won" 6.2e-10 against the mixture (exact payoffs of greedy
    # members round at about 1e-9); it found nothing and must train on
    settings = PSROSettings(max_doublings=3)
    assert not settings.improves(6.249988616924274e-10, 0.0625)
    assert settings.improves(0.0104, 0.1019) and not settings.improves(0.0, None)
    assert not PSROSettings(min_gain=0.2).improves(0.0104, 0.1019)  # wins only 10% of it
    assert PSROSettings.unexploitable(0.0) and not PSROSettings.unexploitable(None)


class _CountingPlayer:
    """Tic-tac-toe's minimax, counting the batches it is asked to move in."""

    def __init__(self) -> None:
        from sp_wrappers.games.baselines import PerfectTicTacToePolicy

        self.inner = PerfectTicTacToePolicy()
        self.policy_id = "counted-minimax"
        self.batches = 0

    def act(self, *args, **kwargs):
        self.batches += 1
        return self.inner.act(*args, **kwargs)


def _tiny_ppo(venv, seed):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=2, seed=seed)


def test_the_oracle_plays_the_reference_for_its_share_and_a_resume_keeps_it(tmp_path) -> None:
    from pettingzoo.classic import tictactoe_v3

    from sp_wrappers.league.psro import PSRO

    settings = PSROSettings(steps_per_iteration=512, n_envs=2, reference_ratio=0.5)
    counted = _CountingPlayer()
    psro = PSRO(tictactoe_v3.env, _tiny_ppo, tmp_path, settings, reference=[counted])
    psro.run(iterations=1)
    psro.archive.close()
    assert counted.batches > 20  # about half of some 100 games, several moves each
    assert read_psro(tmp_path / PSRO_STATE)["settings"]["reference_ratio"] == 0.5
    # without it, the same run never asks the player to move
    idle = _CountingPlayer()
    plain = PSROSettings(steps_per_iteration=512, n_envs=2)
    alone = PSRO(tictactoe_v3.env, _tiny_ppo, tmp_path / "plain", plain, reference=[idle])
    alone.run(iterations=1)
    alone.archive.close()
    assert idle.batches == 0
    # a resumed run keeps its stored share and still needs the players
    with pytest.raises(LeagueSetupError, match="--reference-ratio"):
        PSRO(tictactoe_v3.env, _tiny_ppo, tmp_path, PSROSettings())


def test_the_psro_command_takes_the_reference_share_and_refuses_it_without_bots(
    tmp_path, capsys
) -> None:
    args = ["--iterations", "1", "--steps", "256", "--n-envs", "2", "--hp", "n_steps=128",
            "--hp", "batch_size=64", "--hp", "n_epochs=1", "--doublings", "0"]  # fmt: skip
    out = tmp_path / "ttt"
    assert main(["psro", "tictactoe_v3", *args, "--reference-ratio", "0.2",
                 "--random-ratio", "0.1", "--out", str(out)]) == 0  # fmt: skip
    settings = json.loads((out / "config.json").read_text())["settings"]
    assert (settings["reference_ratio"], settings["random_ratio"]) == (0.2, 0.1)
    kuhn = ["psro", "sp_wrappers.games.openspiel_games:kuhn_poker", *args]
    assert main([*kuhn, "--reference-ratio", "0.2", "--out", str(tmp_path / "k")]) != 0
    err = capsys.readouterr().err
    assert "has none" in err and "--reference-ratio" in err
    assert not (tmp_path / "k" / PSRO_STATE).exists()


def test_a_learning_rate_schedule_runs_once_over_a_doubled_response(tmp_path: Path) -> None:
    # a linear learning rate too small to learn, warm-started: the response never improves and
    # trains on doubled; its schedule used to restart at each doubled learn call (from 1.0 to
    # 0, then from 0.5 again), now it decays once over the most steps the response may take
    run = tmp_path / "run"
    argv = ["psro", KUHN_POKER, "--out", str(run), "--steps", "256", "--n-envs", "2"]
    argv += ["--hp", "n_steps=128", "--hp", "batch_size=64", "--hp", "n_epochs=1"]
    argv += ["--hp", "learning_rate=lin_1e-9", "--start", "warm", "--doublings", "2"]
    argv += ["--min-gain", "0.5", "--iterations", "1"]
    assert main(argv) == 0
    [_, first] = read_psro(run / PSRO_STATE)["iterations"]
    assert first["doublings"] == 2 and first["response_steps"] == 1024
    header, *rows = (run / "progress.csv").read_text().splitlines()
    column = header.split(",").index("train/learning_rate")
    rates = [float(r.split(",")[column]) for r in rows if r.split(",")[column]]
    assert len(rates) >= 3, rates
    assert all(b <= a for a, b in zip(rates, rates[1:], strict=False)), rates  # never back up
    assert rates[0] == pytest.approx(1e-9 * (1 - 256 / 1024), rel=0.05), rates
