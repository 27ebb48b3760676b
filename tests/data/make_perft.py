"""Generate tests/data/perft.json: fixed games with the legal-move counts at every decision.

Each game is played from a seeded deck by a seeded agent (``random`` or ``greedy``). The file
stores the rules, the deck (tile names in draw order, so the replay does not depend on NumPy's
shuffling), every decision in notation, and at every decision the number of legal actions
split by kind: ``[sea-level placements, eruptions]`` at a tile step and
``[huts, temples, towers, expansions]`` at a build step; and the end (reason, winners, returns).
tests/test_perft.py replays the actions and asserts every count exactly.

Run from the repository root after a deliberate rules change (and review the diff)::

    python tests/data/make_perft.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from taluva_ai.agents import make_agent
from taluva_ai.games.taluva import TaluvaGame, TaluvaState
from taluva_ai.games.taluva.state import C_LEVEL
from taluva_ai.games.taluva.tiles import tile_name

OUT = Path(__file__).with_name("perft.json")

#: (name, rule options, seed, agent)
GAMES: list[tuple[str, dict[str, Any], int, str]] = [
    ("2p-default-s101", {"num_players": 2}, 101, "random"),
    ("2p-default-s102", {"num_players": 2}, 102, "random"),
    ("2p-greedy-s103", {"num_players": 2}, 103, "greedy"),
    ("3p-default-s104", {"num_players": 3}, 104, "random"),
    ("3p-greedy-s105", {"num_players": 3}, 105, "greedy"),
    ("4p-default-s106", {"num_players": 4}, 106, "random"),
    ("4p-greedy-s107", {"num_players": 4}, 107, "greedy"),
    ("2p-nonisolated-s108", {"num_players": 2, "new_hut_isolated": False}, 108, "random"),
    ("3p-nonisolated-greedy-s109", {"num_players": 3, "new_hut_isolated": False}, 109, "greedy"),
    ("4p-ranked-greedy-s110", {"num_players": 4, "ranked": True}, 110, "greedy"),
]


def breakdown(state: TaluvaState) -> list[int]:
    """Legal action counts by kind (see the module docstring)."""
    legal = state.legal_actions()
    h = state.game.num_cells
    if int(legal[0]) < 6 * h:
        erupt = sum(1 for a in legal if state.cells[int(a) // 6, C_LEVEL] > 0)
        return [len(legal) - erupt, erupt]
    kinds = [0, 0, 0, 0]
    for a in legal:
        kinds[min(int(a) // h - 6, 3)] += 1
    return kinds


def play(name: str, options: dict[str, Any], seed: int, agent: str) -> dict[str, Any]:
    game = TaluvaGame(**options)
    state = game.new_initial_state(seed=seed)
    deck = "".join(tile_name(int(t)) for t in state.deck)
    ag = make_agent(agent, seed=seed)
    steps: list[list[Any]] = []
    while not state.is_terminal():
        if state.current_player == -1:
            state.draw()
            continue
        counts = breakdown(state)
        a = ag.act(state)
        steps.append([state.action_to_string(a), counts])
        state.apply(a)
    return {
        "name": name,
        "rules": game.rules.to_dict(),
        "seed": seed,
        "agent": agent,
        "deck": deck,
        "steps": steps,
        "end": {
            "reason": state.end_reason.name,
            "winners": state.winners(),
            "returns": state.returns().tolist(),
            "tiles_placed": state.tiles_placed,
        },
    }


def main() -> None:
    data = {"version": 1, "games": [play(*g) for g in GAMES]}
    lines = ["{", '"version": 1,', '"games": [']
    for i, g in enumerate(data["games"]):
        sep = "," if i + 1 < len(data["games"]) else ""
        lines.append(json.dumps(g, separators=(",", ":")) + sep)
    lines += ["]", "}"]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = sum(len(g["steps"]) for g in data["games"])
    print(f"wrote {OUT} ({len(data['games'])} games, {total} decisions)")


if __name__ == "__main__":
    main()
