"""Perft-style regression: replay the fixed games of tests/data/perft.json and assert the number
of legal actions, by kind, at every decision (tests/data/make_perft.py made the file and says
what the counts are)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from taluva_ai.games.taluva import RuleSet, TaluvaGame
from taluva_ai.games.taluva.tiles import parse_tile

DATA = json.loads((Path(__file__).parent / "data" / "perft.json").read_text(encoding="utf-8"))
GAMES = {g["name"]: g for g in DATA["games"]}


def breakdown(state) -> list[int]:
    """The counts as make_perft.py writes them: ``[sea-level, eruptions]`` at a tile step,
    ``[huts, temples, towers, expansions]`` at a build step."""
    legal = state.legal_actions()
    h = state.game.num_cells
    if int(legal[0]) < 6 * h:
        erupt = int((state.cells[legal // 6, 0] > 0).sum())
        return [len(legal) - erupt, erupt]
    kinds = np.minimum(legal // h - 6, 3)
    return np.bincount(kinds, minlength=4).tolist()


def test_perft_file_covers_the_required_setups():
    assert DATA["version"] == 1
    players = {g["rules"]["num_players"] for g in GAMES.values()}
    assert players == {2, 3, 4}
    assert len({g["seed"] for g in GAMES.values()}) >= 5
    assert any(not g["rules"]["new_hut_isolated"] for g in GAMES.values())
    defaults = RuleSet().to_dict()
    assert sum(
        all(g["rules"][k] == v for k, v in defaults.items() if k != "num_players")
        for g in GAMES.values()
    ) >= 5
    assert sum(len(g["steps"]) for g in GAMES.values()) == 843


@pytest.mark.parametrize("name", sorted(GAMES))
def test_perft_counts(name):
    g = GAMES[name]
    game = TaluvaGame(RuleSet.from_dict(g["rules"]))
    deck = [parse_tile(g["deck"][i:i + 2]) for i in range(0, 96, 2)]
    state = game.new_initial_state(deck=deck)
    steps = g["steps"]
    i = 0
    while not state.is_terminal():
        if state.current_player == -1:
            state.draw()
            continue
        assert i < len(steps), f"{name}: the game goes on after the recorded decisions"
        text, counts = steps[i]
        assert breakdown(state) == counts, f"{name}: decision {i} ({text})"
        state.apply(text)
        i += 1
    assert i == len(steps)
    end = g["end"]
    assert state.end_reason.name == end["reason"]
    assert state.winners() == end["winners"]
    assert state.tiles_placed == end["tiles_placed"]
    assert state.returns().tolist() == pytest.approx(end["returns"], abs=1e-12)
