"""The command line, ``sp-wrappers``: argparse and printing only, on top of the library.

``sp_wrappers.cli.main`` is the entry point (the console script ``sp-wrappers``, and ``python -m
sp_wrappers.cli``); the parser, the table of commands and the one place that turns library errors
into messages and exit status 2 are in :mod:`~sp_wrappers.cli.app`, what the commands share in
``common``, the options of a run in ``run_options``, and one module per command family
(``train``, ``team_train``, ``league``, ``psro``, ``inspect``, ``play``, ``watch``, ``report``,
``exploitability``, ``exploit``).

It may import every layer; nothing imports it.
"""

from ..core.deprecation import serve_moved_modules
from .app import build_parser, main

__all__ = ["main", "build_parser"]

# 0.2's console scripts import ``sp_wrappers.cli.main:main``; the module is ``app`` now, so that
# ``sp_wrappers.cli.main`` is one thing, the function. Scripts installed by 0.2 keep working until
# they are reinstalled: the old module path is served by the same table as the package's other
# moved paths, without a warning (a console script's warning would show on every command).
serve_moved_modules(__name__, {"main": "app"}, quiet={"main"})
