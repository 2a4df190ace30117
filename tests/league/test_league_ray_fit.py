"""``sp-wrappers league --backend ray`` on the machine it runs on: the players fit the Ray the
command starts, a cluster too small is refused before training naming ``--num-cpus``, and a round
that cannot progress says which player waits and why (slow: each test starts Ray)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pettingzoo.classic import tictactoe_v3

from sp_wrappers.league import AlphaStarLeague, League
from sp_wrappers.league.faults import PlayersDoNotFitError, StallReport

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.xdist_group("ray")  # one Ray cluster at a time (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--timesteps", "384", "--chunk-steps", "64", "--n-envs", "2", "--hp", "n_steps=32",
    "--hp", "batch_size=32", "--eval-games", "2", "--no-plots", "--no-progress",
]  # fmt: skip


def league_command(
    *argv: str, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "sp_wrappers.cli", "league", *argv],
        env={**os.environ, **(env or {}), "PYTHONPATH": path},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the command and the Ray it started
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_the_readmes_three_player_league_on_ray_finishes_on_this_machine(tmp_path):
    # three players, and Ray started by the command with this machine's CPUs (two here): each
    # player used to ask one CPU, the third actor was never placed and the run waited forever
    out = tmp_path / "run"
    done = league_command("tictactoe_v3", "--backend", "ray", *TINY, "--out", str(out), timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    state = json.loads((out / "league.json").read_text())
    assert state["round"] == 2
    assert sorted(p["name"] for p in state["learners"]) == [
        "league_exploiter_0",
        "main_agent_0",
        "main_exploiter_0",
    ]


def refuses_num_cpus_the_machine_cannot_hold(out: Path, env: dict[str, str] | None = None) -> None:
    cpus = os.cpu_count() or 1  # three players asking this many each never fit
    done = league_command(
        "tictactoe_v3", "--backend", "ray", "--num-cpus", str(cpus), *TINY, "--out", str(out),
        timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    line = done.stderr.strip().splitlines()[-1]
    # the Ray measured is the one the command started, with this machine's CPUs
    assert f"--num-cpus {cpus:g} each" in line and f"has {cpus:g} CPU in all" in line, line
    assert "Pass --num-cpus" in line and "num_cpus=" not in line, line
    assert not (out / "league.json").exists()  # stopped before training
    # and left nothing behind: the corrected command starts there, not "already holds a run"
    assert not out.exists()


def test_a_num_cpus_the_cluster_cannot_hold_is_refused_before_training(tmp_path):
    refuses_num_cpus_the_machine_cannot_hold(tmp_path / "run")


@pytest.fixture
def other_ray_cluster() -> Iterator[str]:
    """Someone else's one-CPU Ray cluster on this machine (``ray start --head --num-cpus 1``),
    stopped at teardown: its own process group, so no other Ray on the machine is touched."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths have a limit
    ray_command = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
    if ray_command is None:  # pragma: no cover - Ray without its command line
        pytest.skip("the ray command is not installed")
    proc = subprocess.Popen(
        [ray_command, "start", "--head", "--num-cpus", "1", "--port", str(port),
         "--temp-dir", temp, "--include-dashboard", "false", "--disable-usage-stats", "--block"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        lines = []
        for output in proc.stdout:  # waits for the cluster, or for ray start to fail
            lines.append(output)
            if "Ray runtime started" in output:
                break
        else:
            pytest.fail("ray start did not start a cluster:\n" + "".join(lines[-30:]))
        yield f"127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # ray start --block stops its processes
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck shutdown
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_the_league_starts_its_own_ray_while_another_cluster_is_advertised(
    tmp_path, other_ray_cluster
):
    # RAY_ADDRESS names a one-CPU cluster: the league used to join it and measure its one CPU
    # ("the largest node of the Ray cluster has 1") instead of this machine's
    refuses_num_cpus_the_machine_cannot_hold(tmp_path / "run", {"RAY_ADDRESS": other_ray_cluster})


def test_an_address_with_no_ray_running_is_one_line_naming_ray_start(tmp_path):
    if ray.is_initialized():  # pragma: no cover - the module's cluster is shut down by now
        pytest.skip("a Ray is running in this process")
    out = tmp_path / "run"
    done = league_command(
        "tictactoe_v3", "--backend", "ray", "--address", "auto", *TINY, "--out", str(out),
        timeout=120,
    )  # fmt: skip
    if done.returncode == 0:  # pragma: no cover - a Ray cluster runs on this machine
        pytest.skip("a Ray cluster is running on this machine")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    line = done.stderr.strip().splitlines()[-1]
    assert "ray start --head" in line and "--address" in line, line
    assert not out.exists()


@pytest.fixture(scope="module")
def two_cpu_ray():
    ray.init(address="local", num_cpus=2, log_to_driver=False)  # whatever else runs Ray here
    yield
    ray.shutdown()


def tiny_model(env):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1)


def test_players_that_cannot_fit_are_refused_naming_num_cpus_and_the_cluster(two_cpu_ray, tmp_path):
    league = League(tictactoe_v3.env, AlphaStarLeague(1, 1, 1), tiny_model, tmp_path, 64, 2)
    with pytest.raises(PlayersDoNotFitError, match=r"num_cpus=1 each\) but the Ray cluster has 2"):
        league.run(192, backend="ray", num_cpus=1)


def test_a_round_that_cannot_progress_reports_the_waiting_player_and_why(two_cpu_ray, tmp_path):
    reports: list[StallReport] = []

    def stop(report: StallReport) -> None:
        reports.append(report)
        raise KeyboardInterrupt  # what a user does after reading it

    league = League(
        tictactoe_v3.env, AlphaStarLeague(1, 1, 0), tiny_model, tmp_path, 64, 2, on_stall=stop
    )
    with pytest.raises(KeyboardInterrupt):
        league.run(
            256,
            backend="ray",
            stall_seconds=3,
            # a resource no node has: this player's actor is never placed
            actor_options={"main_exploiter_0": {"resources": {"gpu_box": 1}}},
        )
    assert len(reports) == 1
    why = reports[0].waiting["main_exploiter_0"]
    assert "not placed" in why and "1 gpu_box" in why, why
    assert "main_exploiter_0" in str(reports[0])
