"""The evaluation layer: play players against each other and count the results.

Single matches, round robins over an archive (serial, in processes, or on Ray), forced
openings, games between a person and a policy, replays, and plots of ratings and payoffs. The
ratings of an archive's snapshots are also here, where 0.1 had them.

It may import ``sp_wrappers.envs``, ``ratings``, ``opponents``, ``archive``, ``games`` and
``core``.
"""

from __future__ import annotations

from ..core.exports import LazyExports

_face = LazyExports(
    __name__,
    {
        ".match": ["play_match", "MatchResult", "as_policy", "EVALUATION_SOURCE"],
        ".round_robin": ["round_robin", "RoundRobinResult", "pair_seed"],
        ".backends": ["BACKENDS"],
        ".openings": ["legal_openings", "play_openings", "OpeningsResult"],
        ".human_play": ["play_session", "PlayOutcome"],
        ".replay": ["play_replay", "Replay"],
        ".replay_video": ["write_replay"],
        ".errors": ["PlayError", "UnplayableGameError"],
        "..ratings.archive_ratings": [
            "archive_ratings",
            "store_archive_ratings",
            "ArchiveRatings",
            "SnapshotRating",
        ],
    },
)
__all__ = _face.names
__getattr__ = _face.load
__dir__ = _face.dir
