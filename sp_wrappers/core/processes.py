"""Checks made in the parent before it starts worker processes.

Worker processes are started with ``spawn`` (the only start method that works everywhere and leaks
no state): each worker imports the script that started it again, as ``__mp_main__``. A script whose
top-level code starts the workers, or writes to an archive, without an
``if __name__ == "__main__":`` guard then runs that code once more in every worker: the workers die
with a misleading error, or write the script's games again. :func:`require_main_guard` finds that
before the first worker starts and says so in one line.

>>> from sp_wrappers.core.processes import require_main_guard
>>> require_main_guard("a tournament")  # a doctest, an interactive session or pytest: no script
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import FrameType

from .errors import SpWrappersError

__all__ = ["UnguardedMainError", "main_module_call_line", "line_is_guarded", "require_main_guard"]


class UnguardedMainError(SpWrappersError, RuntimeError):
    """A script starts worker processes from top-level code without a ``__main__`` guard."""


def main_module_call_line(frame: FrameType | None = None) -> tuple[str, int] | None:
    """The file and line of the main script's top-level code in the current call stack.

    :param frame: the frame to start from (default: the caller's).
    :return: ``(path, line)``, or ``None`` when no script's top-level code is on the stack (an
        interactive session, ``python -c``, a test runner) or its file cannot be read.
    """
    frame = frame if frame is not None else sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__":
            path = code.co_filename
            if Path(path).is_file():
                return path, frame.f_lineno
            return None
        frame = frame.f_back
    return None


def _is_main_test(test: ast.expr) -> bool:
    """Whether an ``if`` test reads ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    strings = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(strings) == 1


def line_is_guarded(source: str, line: int) -> bool:
    """Whether ``line`` of a script lies inside an ``if __name__ == "__main__":`` block.

    :param source: the script's source text.
    :param line: a 1-based line number of its top-level code.

    >>> source = "import x\\nif __name__ == '__main__':\\n    x.run()\\nx.run()\\n"
    >>> line_is_guarded(source, 3), line_is_guarded(source, 4)
    (True, False)
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True  # not ours to judge: say nothing rather than something wrong
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) and node.body:
            first, last = node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno
            if first <= line <= last:
                return True
    return False


def require_main_guard(what: str) -> None:
    """Raise :class:`UnguardedMainError` when the main script starts ``what`` unguarded.

    Call it in the parent just before it starts spawned worker processes. It looks up the call
    stack for the main script's top-level line and, from the script's syntax tree, whether that
    line lies inside an ``if __name__ == "__main__":`` block.

    :param what: what is about to start worker processes, for the message (``"a tournament"``).
    """
    found = main_module_call_line(sys._getframe(1))
    if found is None:
        return
    path, line = found
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if line_is_guarded(source, line):
        return
    raise UnguardedMainError(
        f"{path}, line {line} starts {what} in worker processes from the script's top level; "
        "each worker imports the script again and would run that code once more. Put the "
        'script\'s code under `if __name__ == "__main__":` (or use backend="serial").'
    )
