"""How an agent loses: its 2-player Taluva tournament games by end reason, and its eliminations.

Replays every record of a tournament (``taluva_ai.records.replay_record``, which checks each
move) and counts, for one agent, its wins and losses by ``end_reason`` (RULES.md "End of the
game"). For each loss by elimination (``last_standing`` with the agent eliminated) it reads the
agent's supply in the final position: an elimination with no hut left is the "out of huts"
loss of docs/alphazero.md ("How the built-in network loses").

    python experiments/losses.py runs/builtin_greedy --agent az:builtin --json out.json

Prints one JSON object (and writes it with ``--json``): ``games``; ``wins``, ``losses``,
``draws`` (a shared first place) and ``undecided`` (a truncated game: RULES.md "Board bound",
neither won nor lost), each by end reason; ``eliminated`` (the agent's eliminations),
``eliminated_out_of_huts`` (those with 0 huts left), ``opponent_eliminated``, and
``supply_when_eliminated`` (huts, temples, towers left, summed over its eliminations).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from taluva_ai.games.taluva.game import TaluvaState
from taluva_ai.games.taluva.state import EndReason, Status
from taluva_ai.records import read_header, replay_record


def analyse(run: Path, agent: str) -> dict:
    """The tally for ``agent`` over the records under ``run/games`` (see the module doc).

    Raises:
        SystemExit: no records, a record not of 2-player Taluva, or ``agent`` in no game.
        RecordError: a record that does not replay (its line and field).
    """
    paths = sorted((run / "games").glob("*.jsonl"))
    if not paths:
        sys.exit(f"losses.py: no game records under {run / 'games'}")
    wins: Counter[str] = Counter()
    losses: Counter[str] = Counter()
    draws: Counter[str] = Counter()
    undecided: Counter[str] = Counter()
    supply: Counter[str] = Counter()
    eliminated = out_of_huts = opponent_eliminated = games = 0
    for path in paths:
        header = read_header(path)
        if header.game != "taluva" or len(header.players) != 2:
            sys.exit(f"losses.py: {path}: not a 2-player Taluva game")
        if agent not in header.players:
            continue
        seat = header.players.index(agent)
        final = replay_record(path)
        assert isinstance(final, TaluvaState)  # the header said taluva
        reason = final.end_reason.name.lower()
        games += 1
        if final.end_reason == EndReason.TRUNCATED:
            tally = undecided
        else:
            ret = final.returns()[seat]
            tally = wins if ret > 0 else losses if ret < 0 else draws
        tally[reason] += 1
        if final.end_reason != EndReason.LAST_STANDING:
            continue
        if final.status(seat) == Status.ELIMINATED:
            eliminated += 1
            left = final.supply(seat)
            supply.update(left)
            out_of_huts += left["huts"] == 0
        else:
            opponent_eliminated += 1
    if not games:
        sys.exit(f"losses.py: {agent!r} plays in none of the {len(paths)} records under {run}")
    return {"run": str(run), "agent": agent, "games": games, "wins": dict(sorted(wins.items())),
            "losses": dict(sorted(losses.items())), "draws": dict(sorted(draws.items())),
            "undecided": dict(sorted(undecided.items())), "eliminated": eliminated,
            "eliminated_out_of_huts": out_of_huts, "opponent_eliminated": opponent_eliminated,
            "supply_when_eliminated": {k: supply[k] for k in ("huts", "temples", "towers")}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a tournament's folder (its games/*.jsonl)")
    parser.add_argument("--agent", required=True, help="the agent's spec, as in the records")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    result = analyse(args.run, args.agent)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
