"""The warm ``sp-wrappers`` runner at the top of each docs page's script (see
``test_docs_snippets.py``, which puts this file's text first in the script it writes).

``start_runner`` forks once, after the heavy imports and before the page runs anything (a fork
after torch has computed can hang in its thread pool); the runner forks again for each command,
which runs as ``python -m sp_wrappers.cli`` would (``runpy`` with ``alter_sys``: the command's
``__main__`` and ``sys.argv``), reading its stdin from the given text, and hands back its exit
status. A fresh interpreter per command spent about two seconds in imports.
"""

import io
import json
import os
import runpy
import sys
import tempfile


def run_command(argv: list[str], stdin: str | None) -> int:
    """``sp-wrappers ARGV`` in this (forked) process; its exit status."""
    if stdin is not None:
        with tempfile.TemporaryFile() as held:
            held.write(stdin.encode())
            held.seek(0)
            os.dup2(held.fileno(), 0)
    sys.argv = ["sp-wrappers", *argv]
    try:
        runpy.run_module("sp_wrappers.cli", run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as end:
        if end.code is None or isinstance(end.code, int):
            status = end.code or 0
        else:  # sys.exit("message"), as the interpreter prints it
            print(end.code, file=sys.stderr)
            status = 1
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def start_runner() -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
    """Fork the runner; the pipes to ask it for a command and read its answer."""
    import sb3_contrib  # noqa: F401  the imports every command makes, once
    import stable_baselines3  # noqa: F401
    import torch  # noqa: F401

    import sp_wrappers.cli.app  # noqa: F401
    import sp_wrappers.runs.league  # noqa: F401  (the commands import these when they run)
    import sp_wrappers.runs.single  # noqa: F401

    sys.stdout.flush()
    sys.stderr.flush()
    asks, ask = os.pipe()
    answer, answers = os.pipe()
    if os.fork() == 0:
        os.close(ask)
        os.close(answer)
        replies = os.fdopen(answers, "w")
        for line in os.fdopen(asks):
            argv, stdin = json.loads(line)
            child = os.fork()
            if child == 0:
                os._exit(run_command(argv, stdin))
            _, waited = os.waitpid(child, 0)
            replies.write(f"{os.waitstatus_to_exitcode(waited)}\n")
            replies.flush()
        os._exit(0)
    os.close(asks)
    os.close(answers)
    return os.fdopen(ask, "w"), os.fdopen(answer)


def sp_wrappers(argv: list[str], stdin: str | None) -> int:
    """Run one command in a fork of the runner; its exit status."""
    ask, answer = RUNNER
    ask.write(json.dumps([argv, stdin]) + "\n")
    ask.flush()
    return int(answer.readline())


if __name__ == "__main__":
    RUNNER = start_runner()
