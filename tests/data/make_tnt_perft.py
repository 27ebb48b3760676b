"""Generate tests/data/tnt_perft.json: fixed Thurn und Taxis games with the legal-move counts
at every decision.

Each game is played from ``new_initial_state(seed)`` (chance nodes resolved by ``draw()``) by a
seeded agent (``random`` or ``greedy`` in every seat). The file stores the options, every
action and chance outcome in notation (so the replay depends on no random generator), at every
decision the number of legal actions by kind (``take``, ``postmaster``, ``extend``, ... in
:data:`taluva_ai.games.thurn_und_taxis.actions.KINDS` order), and the end (reason, scores,
winners). tests/test_tnt_perft.py replays the actions and asserts every count exactly.

Run from the repository root after a deliberate rules change (and review the diff)::

    python tests/data/make_tnt_perft.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from taluva_ai import make_game
from taluva_ai.agents import make_agent
from taluva_ai.games.thurn_und_taxis.actions import KINDS

OUT = Path(__file__).with_name("tnt_perft.json")

#: (name, options, seed, agent)
GAMES: list[tuple[str, dict[str, Any], int, str]] = [
    ("2p-greedy-s201", {"num_players": 2}, 201, "greedy"),
    ("2p-random-s202", {"num_players": 2, "max_rounds": 25}, 202, "random"),
    ("3p-greedy-s203", {"num_players": 3}, 203, "greedy"),
    ("3p-random-s204", {"num_players": 3, "max_rounds": 20}, 204, "random"),
    ("4p-greedy-s205", {"num_players": 4}, 205, "greedy"),
    ("4p-greedy-exclude-baiern-s206", {"num_players": 4, "all_provinces_rule":
                                       "exclude_baiern"}, 206, "greedy"),
    ("2p-greedy-no-fallback-s207", {"num_players": 2, "route_tile_fallback": False}, 207,
     "greedy"),
]


def breakdown(state: Any) -> list[int]:
    """Legal actions by kind, in KINDS order."""
    counts = dict.fromkeys(KINDS, 0)
    for a in state.legal_actions():
        counts[state.action_to_string(int(a)).split(":")[0]] += 1
    return [counts[k] for k in KINDS]


def play(name: str, options: dict[str, Any], seed: int, agent: str) -> dict[str, Any]:
    game = make_game("thurn_und_taxis", **options)
    state = game.new_initial_state(seed=seed)
    agents = [make_agent(agent, seed=seed + p) for p in range(game.num_players)]
    moves: list[str] = []
    counts: list[list[int]] = []
    while not state.is_terminal():
        if state.current_player < 0:
            a = state.clone().draw()
        else:
            counts.append(breakdown(state))
            a = agents[state.current_player].act(state)
        moves.append(state.action_to_string(a))
        state.apply(a)
    return {"name": name, "options": game.options(), "seed": seed, "agent": agent,
            "moves": moves, "counts": counts, "end_reason": state.end_reason.name.lower(),
            "scores": state.scores(), "winners": state.winners()}


def main() -> None:
    data = {"version": 1, "kinds": list(KINDS),
            "games": [play(*g) for g in GAMES]}
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(GAMES)} games, "
          f"{sum(len(g['counts']) for g in data['games'])} decisions")


if __name__ == "__main__":
    main()
