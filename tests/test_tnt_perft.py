"""Perft-style regression for Thurn und Taxis: replay the fixed games of
tests/data/tnt_perft.json (made by tests/data/make_tnt_perft.py) and assert the number of
legal actions, by kind, at every decision, and the end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taluva_ai import make_game
from taluva_ai.games.thurn_und_taxis.actions import KINDS
from tests.tnt_helpers import check_invariants

DATA = json.loads((Path(__file__).parent / "data" / "tnt_perft.json").read_text("utf-8"))
GAMES = {g["name"]: g for g in DATA["games"]}


def test_perft_file_covers_player_counts_and_options() -> None:
    assert DATA["version"] == 1 and DATA["kinds"] == list(KINDS)
    assert {g["options"]["num_players"] for g in GAMES.values()} == {2, 3, 4}
    assert {g["end_reason"] for g in GAMES.values()} == {"carriage_7", "last_house",
                                                         "truncated"}
    assert any(g["options"]["all_provinces_rule"] == "exclude_baiern" for g in GAMES.values())
    assert any(not g["options"]["route_tile_fallback"] for g in GAMES.values())


@pytest.mark.parametrize("name", sorted(GAMES))
def test_legal_move_counts_along_the_game(name: str) -> None:
    g: dict[str, Any] = GAMES[name]
    state = make_game("thurn_und_taxis", **g["options"]).new_initial_state(seed=g["seed"])
    counts = iter(g["counts"])
    for i, move in enumerate(g["moves"]):
        if state.current_player >= 0:
            kinds = dict.fromkeys(KINDS, 0)
            for a in state.legal_actions():
                kinds[state.action_to_string(int(a)).split(":")[0]] += 1
            assert [kinds[k] for k in KINDS] == next(counts), (name, i, move)
        else:
            assert state.action_to_string(state.clone().draw()) == move  # the seeded chance
        state.apply(move)
        if i % 25 == 0:
            check_invariants(state)
    assert next(counts, None) is None
    assert state.is_terminal()
    assert state.end_reason.name.lower() == g["end_reason"]
    assert state.scores() == g["scores"] and state.winners() == g["winners"]
