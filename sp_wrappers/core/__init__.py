"""The core layer: what every other layer builds on.

It holds the policy protocol and its implementations (``policies``: ``Policy``, ``RandomPolicy``,
``CallablePolicy``, ``SB3Policy``), how a PettingZoo game's seats are driven and scored
(``seats``), the grouping of agents into teams (``teams``) and small IO helpers (``jsonio``).

It imports nothing else of sp_wrappers.
"""
