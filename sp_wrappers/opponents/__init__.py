"""The opponents layer: who the learner plays, and when that changes.

It holds the opponent slots of one env copy with their swap schedules (``slots``), the
:class:`OpponentSampler` over an archive's snapshots (``sampler``: window, latest ratio, PFSP)
and the opponents of team games (``team_slots``).

It may import ``sp_wrappers.archive``, ``games`` and ``core``.
"""
