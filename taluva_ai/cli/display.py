"""A game as text, for ``taluva play`` and ``taluva replay``: every position and action
(``--show``), the result by seat, the solo score.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from taluva_ai.cli.core import _count
from taluva_ai.protocol import CHANCE, GameState
from taluva_ai.records import MoveEvent


def _seat_line(state: GameState, seat: int, name: str) -> str:
    """``seat 0  greedy   built 3 temples, 2 towers, 14 huts (2 destroyed), active``."""
    parts = [f"seat {seat}  {name:<12}"]
    summary = getattr(state, "seat_summary", None)
    if summary is not None:  # a game's own one-line account of a seat
        return "  ".join([*parts, summary(seat)])
    built = getattr(state, "built", None)
    if built is not None:
        b = built(seat)
        text = "built " + ", ".join(
            _count(b[k], k[:-1]) for k in ("temples", "towers", "huts")
        )
        destroyed = getattr(state, "destroyed_huts", None)
        if destroyed is not None and destroyed(seat):
            text += f" ({destroyed(seat)} destroyed)"
        parts.append(text)
    status = getattr(state, "status", None)
    if status is not None:
        parts.append(status(seat).name.lower())
    return "  ".join(parts)


def _print_result(state: GameState, players: Sequence[str], plies: int) -> None:
    from taluva_ai.records import outcome_of

    out = outcome_of(state, plies)
    breakdown = getattr(state, "score_breakdown", None)
    rules = getattr(getattr(state, "game", None), "rules", None)
    if getattr(rules, "solo", False) and breakdown is not None:
        print(format_solo_score(state))
        print(f"result: {out.end_reason} after {out.plies} plies ({players[0]})")
        return
    for seat, name in enumerate(players):
        print(_seat_line(state, seat, name))
    if out.winners:
        who = ", ".join(f"seat {w} ({players[w]})" for w in out.winners)
    else:
        who = "none (no result)"
    print(f"result: {out.end_reason or 'over'} after {out.plies} plies; winners: {who}")
    print(f"returns: {[round(x, 4) for x in out.returns]}  places: {list(out.places)}")


def _show(players: Sequence[str], color: bool = False) -> Any:
    """An ``on_state`` callback printing every position and action (a game's ``to_text``
    picture when it has one: with ``color``, in colour; the legend with the first position
    only)."""
    first = [True]

    def show(state: GameState, event: MoveEvent | None) -> None:
        if event is not None:
            who = "chance" if event.player == CHANCE else f"seat {event.player} " \
                f"({players[event.player]})"
            line = f"[{event.ply}] {who}: {event.notation}"
            if event.stats:  # an agent's own one-line summary when it gives one
                summary = event.stats.get("summary")
                line += "  " + (str(summary) if summary else json.dumps(event.stats,
                                                                        sort_keys=True))
            print(line)
        to_text = getattr(state, "to_text", None)
        print(state if to_text is None else to_text(color=color, legend=first[0]))
        first[0] = False
        print()

    return show


def _color(args: argparse.Namespace) -> bool:
    """Whether ``--show`` writes colour: stdout a terminal, no ``--no-color``, ``NO_COLOR``
    unset (:func:`taluva_ai.games.taluva.render.use_color`)."""
    from taluva_ai.games.taluva.render import use_color

    return use_color(sys.stdout, no_color=args.no_color)


def format_solo_score(state: Any) -> str:
    """The solo score by line of the scoring table (docs/solo.md), the total and its band."""
    from taluva_ai.games.taluva.solo import SCORE_LINE_TEXT

    b = state.score_breakdown()
    width = max(len(t) for t in SCORE_LINE_TEXT.values())
    lines = ["score (docs/solo_rules.md, section 5):"]
    lines += [f"  {SCORE_LINE_TEXT[k]:<{width}}  {v:+4d}" for k, v in b.items()]
    total = sum(b.values())
    lines.append(f"  {'total':<{width}}  {total:4d}  ({state.result_band()})")
    return "\n".join(lines)
