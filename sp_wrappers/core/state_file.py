"""Versioned state files: one version key, one reader, one writer, one error.

A run keeps what it resumes from in small JSON files (``psro.json``, ``league.json``,
``team_selfplay.json``, ``strength.json``, ...). Each file has one :class:`StateFormat`: its
name, the version this sp_wrappers writes, a small declared schema (types, ranges, snapshot ids
that must exist in the run's archive), and the fix a reader gives. The writer puts the version
under one key, :data:`VERSION_KEY`, and writes atomically (:func:`~sp_wrappers.core.jsonio.
write_json`); the reader accepts the version key of 0.2's files too (``"format"``, as
``psro.json`` had it) and checks the whole file against the schema before anything acts on it.
Every refusal is one :class:`StateFileError`, one line naming the file, the field and the fix.

>>> import tempfile
>>> from pathlib import Path
>>> notes = StateFormat("notes", 1, Obj({"step": Int(min=0), "best": Optional(SnapshotId())}),
...                     fix="delete it to start again")
>>> path = Path(tempfile.mkdtemp()) / "notes.json"
>>> notes.write(path, {"step": 10, "best": "snapshot-0003"})
>>> notes.read(path, snapshots={"snapshot-0003"})["step"]
10
>>> try:
...     notes.read(path, snapshots={"snapshot-0000"})
... except StateFileError as error:
...     print(str(error).split(": ", 1)[1])
field best is 'snapshot-0003', not a snapshot of the run's archive; delete it to start again.
"""

from __future__ import annotations

import abc
import json
import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SpWrappersError
from .jsonio import write_json

__all__ = [
    "VERSION_KEY",
    "LEGACY_VERSION_KEYS",
    "StateFileError",
    "StateFormat",
    "Spec",
    "AnyValue",
    "Bool",
    "Int",
    "Num",
    "Str",
    "SnapshotId",
    "Optional",
    "List",
    "Map",
    "Obj",
    "SNAPSHOT_ID_PATTERN",
    "version_of",
]

#: The key every state file written by this sp_wrappers keeps its format's version under.
VERSION_KEY = "format_version"
#: Where 0.2's files kept it instead (``psro.json``: ``{"format": 1}``); still read.
LEGACY_VERSION_KEYS = ("format",)
#: A snapshot id as an archive hands them out (``snapshot-0003``).
SNAPSHOT_ID_PATTERN = r"snapshot-\d{4,9}"
_SHOWN = 60  # characters of a refused value shown in a message


class StateFileError(SpWrappersError, ValueError):
    """A state file that cannot be read, has another version, or holds something its format
    does not allow; the one line names the file, the field and the fix.

    :param path: the file.
    :param problem: what is wrong (``"field steps must be an integer >= 0, got 'many'"``).
    :param fix: what to do (``"restore it from a backup or start a new run directory"``).
    """

    def __init__(self, path: str | os.PathLike[str], problem: str, fix: str) -> None:
        self.path = Path(path)
        self.problem = problem
        self.fix = fix
        super().__init__(f"{self.path}: {problem}; {fix}.")


class _Invalid(Exception):
    """A value a spec refuses (internal: :class:`StateFormat` turns it into the one error)."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.where = where
        self.problem = problem


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _child(where: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{where}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{where}.{key}" if where else key
    return f"{where}[{json.dumps(key)}]"


@dataclass(frozen=True)
class _Context:
    snapshots: Collection[str] | None


class Spec(abc.ABC):
    """One field's declared shape; :meth:`check` refuses a value that does not have it.

    A file's own shape that the specs here do not spell (a tree of records) is a subclass whose
    :meth:`check` passes each part to other specs, at :meth:`at` their place, and refuses with
    :meth:`refuse`.
    """

    @abc.abstractmethod
    def check(self, value: Any, where: str, context: _Context) -> None:
        """Refuse ``value`` (raise) unless it has this spec's shape; ``where`` names its place."""

    @staticmethod
    def at(where: str, key: str | int) -> str:
        """The place of ``key`` inside the field at ``where`` (``iterations[2].weights``)."""
        return _child(where, key)

    def refuse(self, value: Any, where: str) -> Exception:
        """The refusal of ``value`` at ``where``: it is not :meth:`describe`'s."""
        return self._refuse(value, where)

    @abc.abstractmethod
    def describe(self) -> str:
        """What the field must be, in words (``"an integer >= 0"``)."""

    def _refuse(self, value: Any, where: str) -> _Invalid:
        return _Invalid(where, f"must be {self.describe()}, got {_shown(value)}")


@dataclass(frozen=True)
class AnyValue(Spec):
    """Any JSON value (a free-form record the run only shows)."""

    def check(self, value: Any, where: str, context: _Context) -> None:
        return None

    def describe(self) -> str:
        return "any value"


@dataclass(frozen=True)
class Bool(Spec):
    """``true`` or ``false``."""

    def check(self, value: Any, where: str, context: _Context) -> None:
        if not isinstance(value, bool):
            raise self._refuse(value, where)

    def describe(self) -> str:
        return "true or false"


def _range(lower: float | None, upper: float | None) -> str:
    if lower is not None and upper is not None:
        return f" in [{lower:g}, {upper:g}]"
    if lower is not None:
        return f" >= {lower:g}"
    return "" if upper is None else f" <= {upper:g}"


@dataclass(frozen=True)
class Int(Spec):
    """An integer (not a boolean), optionally in ``[min, max]``."""

    min: int | None = None
    max: int | None = None

    def check(self, value: Any, where: str, context: _Context) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._refuse(value, where)
        if (self.min is not None and value < self.min) or (
            self.max is not None and value > self.max
        ):
            raise self._refuse(value, where)

    def describe(self) -> str:
        return f"an integer{_range(self.min, self.max)}"


@dataclass(frozen=True)
class Num(Spec):
    """A finite number (not a boolean, not ``NaN``), optionally in ``[min, max]``; with
    ``finite=False`` also ``NaN`` and the infinities (a measurement that can be undefined)."""

    min: float | None = None
    max: float | None = None
    finite: bool = True

    def check(self, value: Any, where: str, context: _Context) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._refuse(value, where)
        if not math.isfinite(value):
            if self.finite:
                raise self._refuse(value, where)
            return
        if (self.min is not None and value < self.min) or (
            self.max is not None and value > self.max
        ):
            raise self._refuse(value, where)

    def describe(self) -> str:
        return f"{'a finite' if self.finite else 'a'} number{_range(self.min, self.max)}"


@dataclass(frozen=True)
class Str(Spec):
    """A string, optionally matching ``pattern`` whole or one of ``choices``."""

    pattern: str | None = None
    choices: tuple[str, ...] | None = None

    def check(self, value: Any, where: str, context: _Context) -> None:
        if not isinstance(value, str):
            raise self._refuse(value, where)
        if self.pattern is not None and not re.fullmatch(self.pattern, value):
            raise self._refuse(value, where)
        if self.choices is not None and value not in self.choices:
            raise self._refuse(value, where)

    def describe(self) -> str:
        if self.choices is not None:
            return f"one of {list(self.choices)}"
        return "a string" if self.pattern is None else f"a string matching {self.pattern}"


@dataclass(frozen=True)
class SnapshotId(Spec):
    """A snapshot id (``snapshot-0003``) that, when the reader is given the archive's ids, is
    one of them.

    :param also: other names allowed in its place (``"latest"``, a baseline's id).
    """

    also: tuple[str, ...] = ()

    def check(self, value: Any, where: str, context: _Context) -> None:
        if isinstance(value, str) and value in self.also:
            return
        if not isinstance(value, str) or not re.fullmatch(SNAPSHOT_ID_PATTERN, value):
            raise self._refuse(value, where)
        if context.snapshots is not None and value not in context.snapshots:
            raise _Invalid(where, f"is {value!r}, not a snapshot of the run's archive")

    def describe(self) -> str:
        also = "".join(f" or {name!r}" for name in self.also)
        return f"a snapshot id (snapshot-0003){also}"


@dataclass(frozen=True)
class Optional(Spec):
    """``null`` or what ``spec`` allows."""

    spec: Spec

    def check(self, value: Any, where: str, context: _Context) -> None:
        if value is not None:
            self.spec.check(value, where, context)

    def describe(self) -> str:
        return f"null or {self.spec.describe()}"


@dataclass(frozen=True)
class List(Spec):
    """A list of ``item``s, optionally of at most ``max_length``."""

    item: Spec = field(default_factory=AnyValue)
    max_length: int | None = None

    def check(self, value: Any, where: str, context: _Context) -> None:
        if not isinstance(value, list):
            raise self._refuse(value, where)
        if self.max_length is not None and len(value) > self.max_length:
            raise _Invalid(where, f"holds {len(value)} items, at most {self.max_length} allowed")
        for index, item in enumerate(value):
            self.item.check(item, _child(where, index), context)

    def describe(self) -> str:
        return f"a list of {self.item.describe()}"


@dataclass(frozen=True)
class Map(Spec):
    """An object whose keys are ``key`` (strings) and values ``value``."""

    value: Spec = field(default_factory=AnyValue)
    key: Spec = field(default_factory=Str)

    def check(self, value: Any, where: str, context: _Context) -> None:
        if not isinstance(value, dict):
            raise self._refuse(value, where)
        for name, item in value.items():
            self.key.check(name, _child(where, name) + " (a key)", context)
            self.value.check(item, _child(where, name), context)

    def describe(self) -> str:
        return f"an object of {self.value.describe()}"


@dataclass(frozen=True)
class Obj(Spec):
    """An object with ``fields`` (each required) and ``optional`` ones (absent or as declared);
    other keys are kept unchecked (a newer writer's additions)."""

    fields: Mapping[str, Spec] = field(default_factory=dict)
    optional: Mapping[str, Spec] = field(default_factory=dict)

    def check(self, value: Any, where: str, context: _Context) -> None:
        if not isinstance(value, dict):
            raise self._refuse(value, where)
        for name, spec in self.fields.items():
            if name not in value:
                raise _Invalid(_child(where, name), "is missing")
            spec.check(value[name], _child(where, name), context)
        for name, spec in self.optional.items():
            if name in value:
                spec.check(value[name], _child(where, name), context)

    def describe(self) -> str:
        return "an object"


#: ``check(data, refuse)``: a format's cross-field check; it raises ``refuse(field, problem)``
#: (:meth:`StateFormat.refuse`'s error for the file being read) for fields that disagree.
CrossCheck = Callable[[Mapping[str, Any], Callable[[str, str], Exception]], None]


@dataclass(frozen=True)
class StateFormat:
    """One state file's format: its version, schema and fix, and its one reader and writer.

    :param name: the file's name (``"psro.json"``), for messages.
    :param version: the version this sp_wrappers writes and reads.
    :param schema: the file's declared shape (an :class:`Obj`; the version key is not in it).
    :param fix: what a user does about a file that is refused (``"restore it from a backup or
        start a new run directory"``).
    :param checks: cross-field checks (``checks=(lambda data, refuse: ...,)``), run after the
        schema: each raises ``refuse(field, problem)`` for a file whose fields disagree.
    """

    name: str
    version: int
    schema: Obj
    fix: str
    checks: Sequence[CrossCheck] = ()

    def refuse(self, path: str | os.PathLike[str], field: str, problem: str) -> StateFileError:
        """The error for ``path``'s ``field`` (``"members[1]"``): ``problem``, then the fix."""
        return StateFileError(path, f"field {field} {problem}", self.fix)

    def read(
        self, path: str | os.PathLike[str], snapshots: Iterable[str] | None = None
    ) -> dict[str, Any]:
        """The file at ``path``, parsed and checked; its version key is :data:`VERSION_KEY`
        whatever key the file used.

        :param path: the file.
        :param snapshots: the ids of the run's archive's listed snapshots; given, every
            :class:`SnapshotId` field must be one of them.
        :raises StateFileError: the file cannot be read, is of another version, or holds a
            field its schema refuses.
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as cause:
            raise StateFileError(path, f"cannot read the {self.name} ({cause})", self.fix) from None
        if not isinstance(data, dict):
            raise StateFileError(
                path, f"holds {type(data).__name__}, not the {self.name} object", self.fix
            )
        found = version_of(data)
        if isinstance(found, bool) or found != self.version:
            raise StateFileError(
                path,
                f"has {VERSION_KEY} {found!r}; this sp_wrappers reads {self.name} version "
                f"{self.version}",
                f"install the sp_wrappers version that wrote it, or {self.fix}",
            )
        data = {VERSION_KEY: found, **{k: v for k, v in data.items() if k != VERSION_KEY}}
        context = _Context(None if snapshots is None else frozenset(snapshots))
        try:
            self.schema.check(data, "", context)
        except _Invalid as invalid:
            raise self.refuse(path, invalid.where, invalid.problem) from None
        for check in self.checks:
            check(data, lambda where, problem: self.refuse(path, where, problem))
        return data

    def write(
        self,
        path: str | os.PathLike[str],
        data: Mapping[str, Any],
        indent: int | None = 2,
        **dumps: Any,
    ) -> None:
        """Write ``data`` to ``path`` atomically, its version first under :data:`VERSION_KEY`
        (a 0.2 version key it carries is dropped).

        :param path: the file.
        :param data: the file's fields (numpy scalars allowed).
        :param indent: ``json.dumps``' indent (``None``: one line).
        :param dumps: other ``json.dumps`` arguments (``sort_keys=True``, ``default=int``).
        """
        skip = {VERSION_KEY, *LEGACY_VERSION_KEYS}
        body = {VERSION_KEY: self.version, **{k: v for k, v in data.items() if k not in skip}}
        write_json(Path(path), body, indent=indent, **dumps)


def version_of(data: Mapping[str, Any]) -> Any:
    """The version a state file's object records: :data:`VERSION_KEY`, else an integer under a
    0.2 key (:data:`LEGACY_VERSION_KEYS`), else ``None``.

    >>> version_of({"format_version": 1}), version_of({"format": 1}), version_of({"format": "x"})
    (1, 1, None)
    """
    if VERSION_KEY in data:
        return data[VERSION_KEY]
    for key in LEGACY_VERSION_KEYS:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None
