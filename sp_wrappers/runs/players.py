"""Which player a user names: ``latest``, ``best``, ``nash`` or a snapshot id, as a policy.

The one home of ``--snapshot``: ``play``, ``watch``, ``tournament``, ``exploitability`` and
``exploit`` all resolve their snapshot through :func:`choose_player` (what the name picks: one
snapshot, or the archive's Nash mixture with its weights) and :meth:`PlayerChoice.load` (the
policy that plays it):

- ``latest``: the newest listed snapshot;
- ``best``: the least exploitable snapshot where the run measured it
  (:func:`~sp_wrappers.training.exploitability.least_exploitable`), else the highest stored
  rating (``"bt"``, then ``"elo"``; the newest wins a tie), else the highest Bradley-Terry
  rating fitted over the match history;
- ``nash``: the Nash mixture of the archive's listed snapshots
  (:func:`~sp_wrappers.training.exploitability.archive_nash_mixture`, from their payoffs in the
  match history; pairs that never met count as even) or, in a PSRO run's archive (snapshots
  tagged ``psro``), the meta-mixture PSRO stored last, played as a
  :class:`~sp_wrappers.MixturePolicy`: one snapshot drawn per game with the mixture's odds;
- a snapshot id, or its number (``"3"`` is ``snapshot-0003``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import TrainError

__all__ = ["PlayerChoice", "choose_player", "resolve_player", "NAMED_PLAYERS", "RATING_KEYS"]

#: The names :func:`choose_player` reads besides snapshot ids.
NAMED_PLAYERS = ("latest", "best", "nash")
#: Stored ratings that ``best`` compares, in order of preference.
RATING_KEYS = ("bt", "elo")
#: The prefix of a mixture player's ``policy_id`` (``nash-mixture-<n>``, ``n`` snapshots).
NASH_ID = "nash-mixture"


@dataclass(frozen=True)
class PlayerChoice:
    """What a player's name picked in an archive.

    :param name: the name as given (``"latest"``, ``"nash"``, ``"3"``, an id).
    :param weights: ``{snapshot id: weight}``: one snapshot with weight 1, or a mixture.
    :param mixture: whether the player is a mixture (``nash``), even of one snapshot.
    :param source: where a mixture's weights come from: ``"payoffs"`` (the archive's match
        history) or ``"psro"`` (the meta-mixture a PSRO run stored); ``""`` for one snapshot.

    >>> choice = PlayerChoice("nash", {"snapshot-0001": 0.25, "snapshot-0002": 0.75}, True)
    >>> choice.snapshot is None, choice.label
    (True, 'nash-mixture-2')
    """

    name: str
    weights: Mapping[str, float] = field(default_factory=dict)
    mixture: bool = False
    source: str = ""

    @property
    def snapshot(self) -> str | None:
        """The snapshot id when the player is one snapshot, else ``None``."""
        return None if self.mixture else next(iter(self.weights))

    @property
    def label(self) -> str:
        """The player's id in matches and tables: the snapshot id, or ``nash-mixture-<n>``."""
        return f"{NASH_ID}-{len(self.weights)}" if self.mixture else str(self.snapshot)

    def load(self, archive: Any, deterministic: bool = True) -> Any:
        """The policy that plays the choice: the snapshot's :class:`~sp_wrappers.SB3Policy`, or
        a :class:`~sp_wrappers.MixturePolicy` of the snapshots (one drawn per game).

        :param archive: the archive the choice was made in.
        :param deterministic: the snapshots take their most likely move (else sample).
        """
        if not self.mixture:
            return archive.load_policy(self.snapshot, deterministic=deterministic)
        from ..opponents.mixture import MixturePolicy

        members = [
            (archive.load_policy(sid, deterministic=deterministic), weight)
            for sid, weight in self.weights.items()
        ]
        return MixturePolicy(members, policy_id=self.label)


def _shown(ids: list[str]) -> str:
    return ", ".join(ids if len(ids) <= 6 else ids[:3] + ["..."] + ids[-2:])


def _fitted_best(archive: Any) -> str | None:
    """The highest Bradley-Terry rating fitted over the match history (``None``: no games)."""
    import math

    from ..ratings.archive_ratings import archive_ratings

    try:
        rated = [s for s in archive_ratings(archive).snapshots if math.isfinite(s.rating)]
    except ValueError:  # no games yet
        return None
    return max(rated, key=lambda s: (s.rating, s.step)).id if rated else None


def choose_player(archive: Any, which: str = "latest") -> PlayerChoice:
    """What ``which`` names in ``archive`` (see the module docstring).

    :param archive: a :class:`~sp_wrappers.SnapshotArchive`.
    :param which: ``latest``, ``best``, ``nash``, a snapshot id or its number.
    :raises TrainError: an empty archive, an unknown id, or ``best`` with nothing measured or
        rated; each message names the fix.
    """
    listing = archive.snapshots()
    if not listing:
        raise TrainError(f"The archive {archive.path} has no snapshots yet; train first.")
    if which == "latest":
        return PlayerChoice(which, {listing[-1].id: 1.0})
    if which == "nash":
        from ..training.exploitability import archive_nash_mixture

        stored = archive.stored_mixture() if "psro" in listing[-1].tags else None
        if stored is not None:  # PSRO's meta-mixture: its payoffs are not in the match history
            weights = {sid: w for sid, w in stored["mixture"].items() if w > 0 and sid in archive}
            return PlayerChoice(which, weights, mixture=True, source="psro")

        return PlayerChoice(which, archive_nash_mixture(archive), mixture=True, source="payoffs")
    if which == "best":
        from ..training.exploitability import least_exploitable

        measured = least_exploitable(archive)  # the least exploitable, where that is known
        if measured is not None:
            return PlayerChoice(which, {measured: 1.0})
        for key in RATING_KEYS:
            rated = [info for info in listing if key in info.ratings]
            if rated:
                info = max(rated, key=lambda info: (info.ratings[key], info.seq))
                return PlayerChoice(which, {info.id: 1.0})
        fitted = _fitted_best(archive)
        if fitted is not None:
            return PlayerChoice(which, {fitted: 1.0})
        raise TrainError(
            f"No snapshot in {archive.path} has a stored rating yet; rate them with "
            f"`sp-wrappers tournament {archive.path}`, or pass --snapshot latest, nash or a "
            "snapshot id."
        )
    wanted = f"snapshot-{int(which):04d}" if which.isdigit() else which
    if wanted not in archive:
        shown = _shown([info.id for info in listing])
        raise TrainError(
            f"No snapshot {which!r} in {archive.path}; pass latest, best, nash or one of {shown}."
        )
    return PlayerChoice(which, {wanted: 1.0})


def resolve_player(archive: Any, which: str = "latest", deterministic: bool = True) -> Any:
    """The policy ``which`` names in ``archive``: :func:`choose_player`, then
    :meth:`PlayerChoice.load`.

    >>> import tempfile
    >>> from sp_wrappers import SnapshotArchive
    >>> resolve_player(SnapshotArchive(tempfile.mkdtemp()), "nash")
    Traceback (most recent call last):
    ...
    sp_wrappers.runs.config.TrainError: The archive ... has no snapshots yet; train first.
    """
    return choose_player(archive, which).load(archive, deterministic=deterministic)
