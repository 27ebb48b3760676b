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

With ``--values`` (the packaged ``az:builtin`` network, or ``--checkpoint``) it adds
``value_before_end``: the network's value for the agent (the value head alone, no search) at
its own last decisions before the end (1 = its last decision, 2 = the one before, ...; a turn
is two decisions, tile and build), averaged over its eliminations, its other losses and its
wins, with the share of positions where the value was above 0. It says how early the value
head sees an elimination coming, which the search without rollouts sees only through it.

    python experiments/losses.py runs/builtin_greedy --agent az:builtin --values --json out.json
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from taluva_ai.agents.alphazero.encoder import TaluvaEncoder
from taluva_ai.games.taluva.game import TaluvaState
from taluva_ai.games.taluva.state import EndReason, Status
from taluva_ai.records import read_header

sys.path.insert(0, str(Path(__file__).resolve().parent))
from value_estimators import decision_states, make_evaluator

#: the agent's decisions before the end at which ``--values`` reads the network's value
BEFORE_END = (1, 2, 4, 8, 16, 32)


def values_before_end(states: list[Any], seat: int, evaluator: Any) -> dict[int, float]:
    """The network's value for ``seat`` at its ``k``-th last decision among a game's decision
    ``states`` (:func:`value_estimators.decision_states`), for each ``k`` of
    :data:`BEFORE_END` the game has (float, -1 to 1)."""
    mine = [s for s in states if s.current_player == seat]
    ks = [k for k in BEFORE_END if k <= len(mine)]
    if not ks:
        return {}
    _, v = evaluator.evaluate([mine[-k] for k in ks])
    return {k: float(v[i][seat]) for i, k in enumerate(ks)}


def summarise_values(rows: dict[str, list[dict[int, float]]]) -> dict[str, Any]:
    """Per group of games: their number and, for each ``k`` of :data:`BEFORE_END`, the mean
    value and the share above 0 over the games that long."""
    out: dict[str, Any] = {}
    for group, games in rows.items():
        figs: dict[str, Any] = {"games": len(games)}
        for k in BEFORE_END:
            vals = [g[k] for g in games if k in g]
            figs[str(k)] = ({"positions": len(vals),
                             "mean": round(sum(vals) / len(vals), 4),
                             "above_0": round(sum(x > 0 for x in vals) / len(vals), 4)}
                            if vals else {"positions": 0})
        out[group] = figs
    return out


def analyse(run: Path, agent: str, evaluator: Any = None) -> dict:
    """The tally for ``agent`` over the records under ``run/games`` (see the module doc);
    with an ``evaluator`` (:func:`value_estimators.make_evaluator`), ``value_before_end`` too.

    Raises:
        SystemExit: no records, a record not of 2-player Taluva or that does not replay
            (its file, line and field), or ``agent`` in no game.
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
    values: dict[str, list[dict[int, float]]] = {"eliminated": [], "other_losses": [],
                                                 "wins": []}
    for path in paths:
        try:
            header = read_header(path)
        except ValueError as e:  # a RecordError names the line and field, not the file
            sys.exit(f"losses.py: {path}: {e}")
        if header.game != "taluva" or len(header.players) != 2:
            sys.exit(f"losses.py: {path}: not a 2-player Taluva game")
        if agent not in header.players:
            continue
        seat = header.players.index(agent)
        try:  # with values, the one replay also keeps the decision states
            states, final = decision_states(path, keep=evaluator is not None)
        except ValueError as e:  # names the file, line and field
            sys.exit(f"losses.py: {e}")
        assert isinstance(final, TaluvaState)  # the header said taluva
        reason = final.end_reason.name.lower()
        games += 1
        if final.end_reason == EndReason.TRUNCATED:
            tally = undecided
        else:
            ret = final.returns()[seat]
            tally = wins if ret > 0 else losses if ret < 0 else draws
        tally[reason] += 1
        out = (final.end_reason == EndReason.LAST_STANDING
               and final.status(seat) == Status.ELIMINATED)
        if evaluator is not None and tally is not draws and tally is not undecided:
            group = "eliminated" if out else "wins" if tally is wins else "other_losses"
            values[group].append(values_before_end(states, seat, evaluator))
        if final.end_reason != EndReason.LAST_STANDING:
            continue
        if out:
            eliminated += 1
            left = final.supply(seat)
            supply.update(left)
            out_of_huts += left["huts"] == 0
        else:
            opponent_eliminated += 1
    if not games:
        sys.exit(f"losses.py: {agent!r} plays in none of the {len(paths)} records under {run}")
    result = {"run": str(run), "agent": agent, "games": games,
              "wins": dict(sorted(wins.items())), "losses": dict(sorted(losses.items())),
              "draws": dict(sorted(draws.items())), "undecided": dict(sorted(undecided.items())),
              "eliminated": eliminated, "eliminated_out_of_huts": out_of_huts,
              "opponent_eliminated": opponent_eliminated,
              "supply_when_eliminated": {k: supply[k] for k in ("huts", "temples", "towers")}}
    if evaluator is not None:
        result["value_before_end"] = summarise_values(values)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a tournament's folder (its games/*.jsonl)")
    parser.add_argument("--agent", required=True, help="the agent's spec, as in the records")
    parser.add_argument("--values", action="store_true",
                        help="add the network's value before the end (value_before_end)")
    parser.add_argument("--checkpoint", type=Path,
                        help="with --values: a training checkpoint (.pt); default: the "
                             "packaged network")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.checkpoint is not None and not args.values:
        parser.error("--checkpoint needs --values")
    if args.json is not None and (args.json.is_dir() or not args.json.parent.is_dir()):
        parser.error(f"--json {args.json}: " + ("a directory" if args.json.is_dir() else
                                                  f"no directory {args.json.parent}"))
    try:
        evaluator = make_evaluator(args.checkpoint) if args.values else None
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f"losses.py: {e}")
    if evaluator is not None and (not isinstance(evaluator.encoder, TaluvaEncoder)
                                  or evaluator.encoder.num_players != 2):
        enc = evaluator.encoder
        what = (f"{enc.num_players}-player Taluva" if isinstance(enc, TaluvaEncoder)
                else "another game")
        sys.exit(f"losses.py: {args.checkpoint}: a network for {what}; the "
                 "records are 2-player Taluva games")
    result = analyse(args.run, args.agent, evaluator)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
