"""A Griffe extension for the API reference: our docstrings are reStructuredText-flavoured
(Sphinx fields, ``>>>`` doctests, ``:class:`` roles), the site renders Markdown.

It rewrites each docstring before it is parsed: text after the ``:param:`` fields (our doctest
examples) moves before them, since the Sphinx parser would read it as part of the last field; a
doctest block becomes a fenced ``pycon`` code block (so ``>>>`` is not read as a Markdown quote);
a ``:role:`~pkg.Name``` becomes ```Name```; and a paragraph ending in ``::`` ends in ``:`` (its
indented block is already Markdown code).
The docstrings themselves stay as they are: ``tests/test_doctests.py`` runs them.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_FIELD = re.compile(
    r"^:(param|parameter|arg|argument|key|keyword|type|raises?|except|exception|var|ivar|cvar|"
    r"vartype|returns?|rtype|yields?)\b"
)
_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):`~?([^`]+)`")


def _short(match: re.Match[str]) -> str:
    target = match.group(1)
    return f"`{target.rsplit('.', 1)[-1] if match.group(0).count('~') else target}`"


def _examples_before_fields(text: str) -> str:
    """Move the unindented text that follows the fields (``:param x:`` ...) before them."""
    head: list[str] = []
    fields: list[str] = []
    moved: list[str] = []
    section = head
    for line in text.splitlines():
        if _FIELD.match(line):
            section = fields
        elif section is not head and line and not line[0].isspace():
            section = moved
        section.append(line)
    if not moved:
        return text
    return "\n".join([*head, *([""] if head and head[-1] else []), *moved, "", *fields])


def markdown_docstring(text: str) -> str:
    """The docstring ``text`` with doctest blocks fenced, roles as code and ``::`` as ``:``."""
    text = _examples_before_fields(text)
    out: list[str] = []
    fence: str | None = None  # the indentation of the open ```pycon block
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None and stripped.startswith(">>>"):
            fence = line[: len(line) - len(stripped)]
            out.append(f"{fence}```pycon")
        elif fence is not None and not stripped:
            out.append(f"{fence}```")
            fence = None
        if fence is None:
            line = _ROLE.sub(_short, line)
            if line.rstrip().endswith("::") and not line.rstrip().endswith(" ::"):
                line = line.rstrip()[:-1]
        out.append(line)
    if fence is not None:
        out.append(f"{fence}```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Rewrite every docstring with :func:`markdown_docstring` before it is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
