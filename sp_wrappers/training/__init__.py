"""The training layer: what runs inside ``model.learn``.

It holds :class:`SelfPlayCallback` (``callbacks``), k-opponent rollouts (``k_opponents``),
environment generators (``env_generator``) and asymmetric self-play over teams
(``team_selfplay`` with its parts in ``team_parts``).

It may import ``sp_wrappers.evaluation``, ``envs``, ``ratings``, ``opponents``, ``archive``,
``games`` and ``core``.
"""
