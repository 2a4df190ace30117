"""The entry point of the Gymnasium ids, at the path that users' registries store.

Gymnasium registries and RL Baselines3 Zoo yaml files written against 0.1 name
``sp_wrappers.registration:make_env``; this module keeps that path working, without a warning,
for as long as such files exist. The ids and their entry point live in
:mod:`sp_wrappers.envs.registration`.
"""

from .envs.registration import *  # noqa: F403
from .envs.registration import __all__  # noqa: F401
