"""A script that starts worker processes from unguarded top-level code is told so in one line,
before any worker starts or any game is written."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from sp_wrappers.core.errors import SpWrappersError
from sp_wrappers.core.processes import UnguardedMainError, line_is_guarded, require_main_guard

ROOT = Path(__file__).resolve().parents[2]


def run_script(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_an_unguarded_round_robin_script_is_refused_before_any_game_is_written(tmp_path):
    result = run_script(
        tmp_path,
        """
        from pettingzoo.classic import tictactoe_v3
        from sp_wrappers import PerfectTicTacToePolicy, RandomPolicy, SnapshotArchive, round_robin
        from sp_wrappers.core.errors import SpWrappersError

        archive = SnapshotArchive("archive")
        try:
            round_robin(archive, env_fn=tictactoe_v3.env, games_per_pair=2, n_workers=2,
                        baselines=[RandomPolicy(), PerfectTicTacToePolicy()], progress=False)
        except SpWrappersError as error:
            print("REFUSED", error)
        print("GAMES", len(SnapshotArchive("archive").matches()))
        """,
    )
    assert result.returncode == 0, result.stderr
    refused = [line for line in result.stdout.splitlines() if line.startswith("REFUSED")]
    assert len(refused) == 1
    assert "script.py, line 8" in refused[0]
    assert 'if __name__ == "__main__":' in refused[0]
    assert "GAMES 0" in result.stdout


def test_an_unguarded_league_process_backend_is_refused_before_a_worker_starts(tmp_path):
    result = run_script(
        tmp_path,
        """
        from sp_wrappers.league.backends import ProcessBackend
        ProcessBackend({})
        """,
    )
    assert result.returncode != 0
    assert "UnguardedMainError" in result.stderr and "script.py, line 3" in result.stderr


def test_a_guarded_script_and_a_script_calling_a_guarded_main_pass(tmp_path):
    result = run_script(
        tmp_path,
        """
        from sp_wrappers.league.backends import ProcessBackend

        def main():
            ProcessBackend({}).close()
            print("STARTED")

        if __name__ == "__main__":
            main()
        """,
    )
    assert result.returncode == 0, result.stderr
    assert "STARTED" in result.stdout


def test_the_guard_is_read_from_the_syntax_tree():
    source = "import x\nif '__main__' == __name__:\n    x.run(\n        1)\nx.run()\n"
    assert line_is_guarded(source, 3) and line_is_guarded(source, 4)
    assert not line_is_guarded(source, 5)
    assert not line_is_guarded("if __name__ != '__main__':\n    x()\n", 2)


def test_without_a_script_on_the_stack_nothing_is_refused():
    require_main_guard("a tournament")  # pytest's own main module is not a user's script
    assert issubclass(UnguardedMainError, SpWrappersError)
    assert issubclass(UnguardedMainError, RuntimeError)
