"""``python -m sp_wrappers.cli``: the ``sp-wrappers`` command."""

if __name__ == "__main__":
    from sp_wrappers.cli import main

    raise SystemExit(main())
