"""The command line, ``sp-wrappers``: argparse and printing only, on top of the library.

It holds the parser and the entry point (``main``), shared helpers and the one place that turns
library errors into messages and exit status 2 (``common``), the options of a run (``run_options``)
and one module per command family (``train``, ``team_train``, ``league``, ``inspect``,
``play``, ``watch``, ``report``).

It may import every layer; nothing imports it.
"""

from .main import build_parser, main

__all__ = ["main", "build_parser"]
