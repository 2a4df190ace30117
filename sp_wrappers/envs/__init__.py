"""The envs layer: a PettingZoo game seen as a single-agent Gymnasium or SB3 env.

It holds :class:`SelfPlayEnv` (``selfplay_env``), per-copy game configurations (``game_config``),
reward shaping (``shaping``), the Gymnasium ids (``registration``) and the batched envs
(``vector``).

It may import ``sp_wrappers.opponents``, ``archive``, ``games`` and ``core``.
"""
