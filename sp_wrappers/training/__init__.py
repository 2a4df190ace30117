"""The training layer: what runs inside ``model.learn``.

The callbacks that make a learner's ``learn`` call self-play: snapshots, opponents and ratings
for one learner, k-opponent rollouts, environment generators, strength against reference
players, schedules over a chunked budget, and asymmetric self-play over teams.

It may import ``sp_wrappers.evaluation``, ``envs``, ``ratings``, ``opponents``, ``archive``,
``games`` and ``core``.
"""
