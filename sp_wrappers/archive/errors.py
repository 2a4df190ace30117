"""The archive's base errors.

This module holds :class:`ArchiveError`, the base of every error an archive raises (its message
names the file and the fix), and :class:`PolicySpecError`, a policy spec that cannot be trusted
or rebuilt. The other archive errors live with the checks that raise them
(:mod:`sp_wrappers.archive.checks`).
"""

from __future__ import annotations

__all__ = ["ArchiveError", "PolicySpecError"]


_FIX = (
    "sp_wrappers never writes such a spec: the archive was edited or comes from elsewhere. Load "
    "snapshots only from archives you trust, or save this policy again."
)


class ArchiveError(Exception):
    """Base class of the archive's errors (policy specs, formats, files, unsafe contents)."""


class PolicySpecError(ArchiveError, ValueError):
    """A policy spec cannot be written or rebuilt, or names something it must not (a class outside
    its slot or outside the trusted modules, an unknown argument, an absurd size)."""
