"""The runs layer: whole training runs as a library, with no argparse and no printing.

It holds run configs (``config``), recipes per game (``recipes``), model building (``models``),
single-learner and team runs (``train``, ``team_train``), run directories (``rundir``) and the
end-of-run summary (``summary``).

It may import every layer below it: ``league``, ``training``, ``evaluation``, ``envs``,
``ratings``, ``opponents``, ``archive``, ``games`` and ``core``.
"""
