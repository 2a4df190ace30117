"""Run settings declared once: a dataclass field's ``metadata`` says all there is to know about
one setting, and everything else is generated from it.

:func:`setting` makes such a field. Its :class:`Setting` holds the help line, the command-line
option's name when it is not the key's (``hp`` for ``hyperparams``; the command line adds the
dashes), the choices, the range, the kinds of run that take it and the kinds in which it is
fixed on resume. From these the library generates its override and resume key sets and its
range checks (:func:`check_settings`), and the command line its argparse groups and the map from
keys to options, so that a new setting is one field::

    magnet: float = setting(0.0, help="pull toward the centre", low=0, high=1)

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Knobs:
...     window: int | None = setting(10, help="newest N snapshots", low=1, metavar="N")
...     unit: str = setting("steps", help="swap unit", choices=("steps", "episodes"))
>>> sorted(declared(Knobs))
['unit', 'window']
>>> check_settings(Knobs(window=0), ValueError)
Traceback (most recent call last):
...
ValueError: `window` must be at least 1, got 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Setting",
    "setting",
    "count",
    "share",
    "declared",
    "check_settings",
    "check_value",
    "RUN_KINDS_ALL",
    "TRAIN_KINDS",
]

#: The kinds of run of ``sp-wrappers train`` (a single learner or teams).
TRAIN_KINDS = ("single", "teams")
#: Every kind of run that a command starts.
RUN_KINDS_ALL = ("single", "teams", "league", "psro")


@dataclass(frozen=True)
class Setting:
    """What one setting is, beside its key and default (a field's ``metadata["setting"]``).

    :param help: one line for the option's help (what it does, its unit, what ``0`` means), or
        a function that writes it (a default that lives in a module only some runs import).
    :param flag: the option's name when it is not the key's with dashes (``"hp"``), or ``""``
        for a setting with no option.
    :param choices: the values it may take (or a function that returns them, asked when they
        are needed: the learners installed).
    :param low: the least value (``None``: no bound); ``None`` itself is always allowed.
    :param high: the largest value.
    :param note: said after the range when a value is out of it (``"0: off"``).
    :param kinds: the kinds of run that take it (``"single"``, ``"teams"``, ``"league"``,
        ``"psro"``); a key that another kind's configuration also has is refused there.
    :param fixed: the kinds in which it cannot change on resume.
    :param metavar: the option's value in the help (``"N"``).
    :param type: how the option's text is read (``int``, ``float``, ``str``; ``bool``: an
        ``--x/--no-x`` switch, or ``--no-x`` for a default that is on; ``dict``: repeatable
        ``KEY=VALUE`` pairs, each value JSON; ``list``: a repeatable value).
    :param group: the help's group of options.
    """

    help: str | Callable[[], str]
    flag: str | None = None
    choices: tuple[Any, ...] | Callable[[], Any] | None = None
    low: float | None = None
    high: float | None = None
    note: str = ""
    kinds: tuple[str, ...] = TRAIN_KINDS
    fixed: tuple[str, ...] = ()
    metavar: str | None = None
    type: Any = None
    group: str = "run"

    def text(self) -> str:
        """The help line."""
        return self.help() if callable(self.help) else self.help

    def allowed(self) -> tuple[Any, ...] | None:
        """The choices (``None``: any value)."""
        choices = self.choices() if callable(self.choices) else self.choices
        return None if choices is None else tuple(choices)

    def option(self, key: str) -> str | None:
        """The option's name without dashes (``None``: the setting has no option)."""
        if self.flag == "":
            return None
        return self.flag or key.replace("_", "-")


def setting(default: Any = dataclasses.MISSING, *, when_set: bool = False, **what: Any) -> Any:
    """A dataclass field holding a :class:`Setting` (keyword arguments: its fields); a mutable
    default (a dict) is copied for each instance; ``when_set``: written to ``config.json`` only
    when set (``metadata["when_set"]``)."""
    metadata: dict[str, Any] = {"setting": Setting(**what)}
    if when_set:
        metadata["when_set"] = True
    if isinstance(default, dict | list):
        value = default
        return dataclasses.field(default_factory=lambda: type(value)(value), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def count(default: Any = dataclasses.MISSING, **what: Any) -> Any:
    """A :func:`setting` that counts (``int``, at least 0 unless ``low`` says more, ``N``)."""
    return setting(default, **{"low": 0, "metavar": "N", "type": int, **what})


def share(default: Any = dataclasses.MISSING, **what: Any) -> Any:
    """A :func:`setting` that is a share between 0 and 1 (``float``, ``P``)."""
    return setting(default, **{"low": 0.0, "high": 1.0, "metavar": "P", "type": float, **what})


def declared(*classes: Any) -> dict[str, tuple[Setting, Any]]:
    """``{key: (setting, default)}`` of the settings ``classes`` declare, the first class's
    declaration of a key kept (``default``: ``dataclasses.MISSING`` for a required field)."""
    found: dict[str, tuple[Setting, Any]] = {}
    for cls in classes:
        for f in dataclasses.fields(cls):
            if "setting" in f.metadata and f.name not in found:
                default = f.default
                if f.default_factory is not dataclasses.MISSING:
                    default = f.default_factory()
                found[f.name] = (f.metadata["setting"], default)
    return found


def check_value(key: str, value: Any, what: Setting, error: type[Exception]) -> None:
    """Raise ``error`` when ``value`` is outside ``what``'s choices or range (``None`` passes)."""
    if value is None:
        return
    choices = what.allowed()
    if choices is not None and value not in choices:
        allowed = ", ".join(str(c) for c in choices)
        raise error(f"`{key}` must be one of {allowed}, got {value!r}.")
    if what.low is None and what.high is None:
        return
    note = f" ({what.note})" if what.note else ""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise error(f"`{key}` must be a number{note}, got {value!r}.") from None
    integral = isinstance(what.low, int) and not isinstance(what.low, bool)
    if integral and number != int(number):
        raise error(f"`{key}` must be a whole number{note}, got {value!r}.")
    low, high = what.low, what.high
    if (low is not None and number < low) or (high is not None and number > high):
        if high is None:
            raise error(f"`{key}` must be at least {low:g}{note}, got {value}.")
        raise error(f"`{key}` must be between {low:g} and {high:g}{note}, got {value}.")


def check_settings(values: Any, error: type[Exception], keys: Iterable[str] | None = None) -> None:
    """Check every declared setting of ``values`` against its choices and range, raising
    ``error`` with a one-line message naming the key.

    :param values: a dataclass instance with :func:`setting` fields.
    :param error: the exception class to raise.
    :param keys: check only these keys (default: all declared).
    """
    wanted = None if keys is None else set(keys)
    for key, (what, _) in declared(type(values)).items():
        if wanted is None or key in wanted:
            check_value(key, getattr(values, key), what, error)
