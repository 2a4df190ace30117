"""The envs layer: a PettingZoo game seen as a single-agent Gymnasium or SB3 env.

The opponents play inside the env, so the learner sees only its own turns: one game
(``SelfPlayEnv``) or many copies batched into one SB3 ``VecEnv`` (``vector``), with per-copy game
configurations, symmetric views, reward shaping and Gymnasium ids.

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""
