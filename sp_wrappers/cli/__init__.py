"""The command line, ``sp-wrappers``: argparse and printing only, on top of the library.

``sp_wrappers.cli.main`` is the entry point (the console script ``sp-wrappers``, and ``python -m
sp_wrappers.cli``); the parser, the table of commands and the one place that turns library errors
into messages and exit status 2 are in :mod:`~sp_wrappers.cli.app`, what the commands share in
``common``, the options of a run in ``run_options``, and one module per command family
(``train``, ``league``, ``psro``, ``inspect``, ``play``, ``watch``, ``report``,
``exploitability``, ``exploit``).

It may import every layer; nothing imports it.
"""

from .app import build_parser, main

__all__ = ["main", "build_parser"]
