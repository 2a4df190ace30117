"""Every code block of the docs runs as written: the ```python blocks and the ``sp-wrappers``
commands of each page (and of README.md), in order, in one fresh subprocess per page in an empty
temporary directory, so a failure names its page and a page's blocks may build on each other.

A block may carry markers, HTML comments just above it (invisible on the site), one per line:

- ``<!-- test: replace "1_000_000" "2_048" -->``: run the block with that text replaced (to cut its
  budget); the text must be in the block.
- ``<!-- test: before "sp-wrappers train tictactoe_v3 --timesteps 512" -->``: a command (a shell
  line) run first, for what the block needs and the page does not show (a run to rate, say).
- ``<!-- test: input "5\\n1\\n" -->``: what the block reads from stdin.
- ``<!-- test: status "1" -->``: the exit status the block's commands end with (default 0), for
  a command that a person would end by hand (a game of chess stopped with ``quit``).
- ``<!-- test: file "c4cnn.py" -->``: the block is a module the reader saves under that name (in the
  current directory, where the page's later blocks import it), not a script to run.
- ``<!-- test: skip "reason" -->``: a fragment, or a command not for a test (an install); the reason
  says why.
- ``<!-- test: xfail "#34 item 1" -->``: the block fails because of a known bug, named; a failure
  is printed and the page goes on.

Shell blocks may hold only ``sp-wrappers`` commands (else they need ``skip``); each runs as
``python -m sp_wrappers.cli`` does (``runpy``, so ``__main__`` and ``sys.argv`` are the command's),
in a fork of a warm process that imported torch, Stable-Baselines3 and the package once, before the
page ran anything (so no thread pool is copied): a fresh interpreter per command cost about two
seconds of imports each.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
RUNNABLE = ("python", "bash", "sh", "console")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
MARKER = re.compile(r"^<!--\s*test:\s*(.*?)\s*-->\s*$")
VERBS = {"replace": 2, "before": 1, "input": 1, "status": 1, "file": 1, "skip": 1, "xfail": 1}


@dataclass
class Block:
    page: str
    line: int
    lang: str
    code: str
    replace: list[tuple[str, str]] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    stdin: str | None = None
    status: str = "0"
    skip: str | None = None
    file: str | None = None
    xfail: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def text(self) -> str:
        code = self.code
        for old, new in self.replace:
            assert old in code, f"{self.where}: marker replaces {old!r}, which the block lacks"
            code = code.replace(old, new)
        return code

    def commands(self) -> list[str]:
        """The block's shell commands, continuation lines joined, comments kept for the shell."""
        joined = self.text().replace("\\\n", " ")
        return [line.strip() for line in joined.splitlines() if line.strip()]


def blocks_of(page: Path) -> list[Block]:
    """The runnable blocks of ``page`` with their markers (a marker not followed by a block, or
    one the test does not know, fails)."""
    text = page.read_text()
    name = str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name
    found: list[Block] = []
    for match in FENCE.finditer(text):
        lang = match.group(1)
        if lang not in RUNNABLE:
            continue
        start = text[: match.start()].count("\n") + 1
        lines = text[: match.start()].splitlines()
        markers: list[list[str]] = []
        while lines and MARKER.match(lines[-1]):
            words = shlex.split(MARKER.match(lines.pop()).group(1))
            assert words and words[0] in VERBS, f"{name}:{start}: unknown marker {words}"
            assert len(words) == 1 + VERBS[words[0]], f"{name}:{start}: marker {words}"
            markers.insert(0, words)
        block = Block(name, start, lang, match.group(2))
        for verb, *values in markers:
            values = [v.encode().decode("unicode_escape") for v in values]
            if verb == "replace":
                block.replace.append((values[0], values[1]))
            elif verb == "before":
                block.before.append(values[0])
            elif verb == "input":
                block.stdin = values[0]
            else:
                setattr(block, verb, values[0])
        found.append(block)
    return found


def sp_wrappers_command(line: str) -> list[str]:
    """The arguments of an ``sp-wrappers`` line, as a shell splits them (``# comments`` dropped)."""
    assert line.startswith("sp-wrappers "), line
    return shlex.split(line[len("sp-wrappers ") :], comments=True)


RUNNER = (Path(__file__).parent / "docs_runner.py").read_text()


def shell_call(
    line: str, stdin: str | None, xfail: str | None, where: str, expected: str = "0"
) -> str:
    check = xfail is None
    return textwrap.dedent(
        f"""\
        if __name__ == "__main__":
            print({f"$ {line}"!r}, flush=True)
            _status = sp_wrappers({sp_wrappers_command(line)!r}, {stdin!r})
            if _status != {int(expected)} and {check!r}:
                sys.exit("{where}: the command ended with exit status " + str(_status))
            if _status != {int(expected)}:
                print("XFAIL {where} ({xfail}): exit status", _status, flush=True)
        """
    )


def driver(blocks: list[Block]) -> str:
    """One script running the page's blocks in order (commands guarded by ``__main__``, so worker
    processes that import the script again do not run them twice)."""
    parts = [RUNNER, "import subprocess, sys, io\n"]
    for block in blocks:
        if block.skip is not None:
            continue
        for command in block.before:
            parts.append(shell_call(command, None, None, block.where))
        if block.file is not None:
            parts.append(f"open({block.file!r}, 'w').write({block.text()!r})\n")
            continue
        if block.lang == "python":
            code = block.text()
            parts.append(f'print("### {block.where}", flush=True)\n')
            if block.stdin is not None:
                parts.append(f"sys.stdin = io.StringIO({block.stdin!r})\n")
            if block.xfail is not None:
                code = (
                    "try:\n" + textwrap.indent(code, "    ") + f"except Exception as _error:\n"
                    f'    print("XFAIL {block.where} ({block.xfail}):", repr(_error), flush=True)\n'
                )
            parts.append(code)
        else:
            for line in block.commands():
                parts.append(shell_call(line, block.stdin, block.xfail, block.where, block.status))
    return "\n".join(parts)


def runnable(page: Path) -> bool:
    return any(b.skip is None for b in blocks_of(page))


RUN_PAGES = [p for p in PAGES if runnable(p)]


@pytest.mark.parametrize("page", RUN_PAGES, ids=[str(p.relative_to(ROOT)) for p in RUN_PAGES])
def test_the_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = work / "_docs_page.py"  # beside what the page writes, which its blocks import
    script.write_text(driver(blocks_of(page)))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "MPLBACKEND": "Agg",
    }
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]


def test_every_block_is_runnable_or_says_why_not() -> None:
    for page in PAGES:
        for block in blocks_of(page):
            if block.skip is not None:
                assert block.skip.strip(), f"{block.where}: skip needs a reason"
                continue
            if block.lang != "python":
                for line in block.commands():
                    assert line.startswith("sp-wrappers "), (
                        f"{block.where}: {line!r} is not an sp-wrappers command: mark the block "
                        '<!-- test: skip "reason" -->'
                    )


def test_markers_are_read(tmp_path: Path) -> None:
    page = tmp_path / "sample.md"
    text = (
        '<!-- test: replace "200_000" "64" -->\n<!-- test: before "sp-wrappers x" -->\n'
        "```python\nlearn(200_000)\n```\n"
    )
    page.write_text(text)
    (block,) = blocks_of(page)
    assert block.text() == "learn(64)\n" and block.before == ["sp-wrappers x"]
