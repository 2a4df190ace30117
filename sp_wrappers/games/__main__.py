"""``python -m sp_wrappers.games``: print every game name the commands take, by source."""

from __future__ import annotations

from .registry import OPENSPIEL_PREFIX, game_names

__all__: list[str] = []

if __name__ == "__main__":
    names = game_names()
    print("Registered:", ", ".join(names["registered"]))
    print(f"PettingZoo ({len(names['pettingzoo'])}):", ", ".join(names["pettingzoo"]))
    print(
        f"OpenSpiel ({len(names['openspiel'])}; {OPENSPIEL_PREFIX}NAME where a name clashes):",
        ", ".join(names["openspiel"]) or 'not installed: pip install "sp-wrappers[openspiel]"',
    )
