"""Replay the independent engines' games of ../shared/oracle through our engine.

Shared by tests/test_oracle.py and ``experiments/oracle_compare.py``. The oracle files use
the same axial convention as our engine (q east, r south), so hexes map one to one.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.game import TaluvaState
from taluva_ai.games.taluva.hexgrid import DIRECTIONS
from taluva_ai.games.taluva.tiles import Terrain, tile_type

ORACLE_DIR = Path(__file__).resolve().parent / "data" / "oracle"
TERRAIN = {t.name.lower(): t for t in Terrain}


def oracle_dir() -> Path:
    """The oracle data: ``tests/data/oracle`` (a copy of the project's ``shared/oracle``), or
    ``$TALUVA_ORACLE_DIR``."""
    import os

    env = os.environ.get("TALUVA_ORACLE_DIR")
    return Path(env) if env else ORACLE_DIR


def read_games(path: Path) -> Iterator[list[dict[str, Any]]]:
    """Yield each game's records (game, turns..., end)."""
    game: list[dict[str, Any]] = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["type"] == "game" and game:
                yield game
                game = []
            game.append(rec)
    if game:
        yield game


def tile_of(d: dict[str, str]) -> int:
    return tile_type(TERRAIN[d["left"]], TERRAIN[d["right"]])


def placement_key(p: dict[str, Any]) -> tuple[int, ...]:
    return (*p["volcano"], *p["a"], *p["b"])


def our_placement(game: TaluvaGame, action: int) -> tuple[int, ...]:
    b = game.board
    v, o = divmod(action, 6)
    a = int(b.neighbours[v, (o + 4) % 6])
    c = int(b.neighbours[v, (o + 5) % 6])
    return (*b.hex(v), *b.hex(a), *b.hex(c))


def placement_id(game: TaluvaGame, p: dict[str, Any]) -> int:
    v = game.board.cell(*p["volcano"])
    da = (p["a"][0] - p["volcano"][0], p["a"][1] - p["volcano"][1])
    o = next(o for o in range(6) if DIRECTIONS[(o + 4) % 6] == da)
    return v * 6 + o


def build_key(b: dict[str, Any]) -> tuple[Any, ...]:
    if b["kind"] == "expand":
        return ("expand", b["terrain"], tuple(sorted(tuple(h) for h in b["hexes"])))
    return (b["kind"], tuple(b["hex"]))


def our_build(state: TaluvaState, action: int) -> tuple[Any, ...]:
    game = state.game
    h = game.num_cells
    if action < 9 * h:
        kind = ("hut", "temple", "tower")[action // h - 6]
        return (kind, game.board.hex(action % h))
    e = action - 9 * h
    terrain = Terrain(Terrain.JUNGLE + e % 5)
    out = np.empty(h, dtype=np.int32)
    n = K.expansion_cells(state.cells, state.meta, game.board.neighbours, game.board.cell_of,
                          state.current_player, e // 5, int(terrain), out)
    hexes = tuple(sorted(game.board.hex(int(c)) for c in out[:n]))
    return ("expand", terrain.name.lower(), hexes)


@dataclass
class Report:
    turns: int = 0
    placement_sets: int = 0
    build_sets: int = 0
    mismatches: list[str] = field(default_factory=list)


def replay_game(
    records: list[dict[str, Any]],
    source: str,
    report: Report,
    observe: Callable[[dict[str, Any], TaluvaState], None] | None = None,
) -> None:
    """Replay one oracle game, comparing every legal set; append mismatches to ``report``.

    Args:
        observe: optional ``observe(record, state)``, called for each turn record once its tile
            is drawn (the state then matches the record's ``board_before``/``pieces_before``)
            and for the end record on the final state.
    """
    head, turns, end = records[0], records[1:-1], records[-1]
    gid = head["game"]
    ujf = source == "ujf"
    game = TaluvaGame(
        num_players=head["players"],
        tiles_per_player=head.get("tiles_per_player"),
        new_hut_isolated=not ujf,
    )
    deck = [tile_of({"left": t[0], "right": t[1]}) for t in head["tiles"]]
    state = game.new_initial_state(deck=deck)

    def bad(turn: int, what: str) -> None:
        report.mismatches.append(f"{gid} turn {turn}: {what}")

    for t in turns:
        report.turns += 1
        tn = t["turn"]
        if state.current_player != -1:
            bad(tn, f"expected a chance node, state is {state!r}")
            return
        state.apply(tile_of(t["tile"]))
        if observe is not None:
            observe(t, state)
        if state.current_player != t["player"]:
            bad(tn, f"player to move {state.current_player}, oracle {t['player']}")
            return
        ours = {our_placement(game, int(a)) for a in state.legal_actions()}
        theirs = {placement_key(p) for p in t["legal_placements"]}
        report.placement_sets += 1
        if ujf and tn == 0:
            # Q1: UJF offers one opening orientation; ours are all 6 at the origin.
            if not theirs <= ours:
                bad(tn, "UJF's opening placement is not among ours")
        elif ours != theirs:
            bad(tn, f"placements: ours-only {sorted(ours - theirs)[:5]}, "
                    f"theirs-only {sorted(theirs - ours)[:5]}")
        state.apply(placement_id(game, t["placement"]))
        if t["eliminated"]:
            if state.status(t["player"]).name != "ELIMINATED":
                bad(tn, "oracle eliminates the player, we do not")
                return
            continue
        if state.current_player != t["player"]:
            bad(tn, f"we eliminated player {t['player']}, oracle did not")
            return
        ours_b = {our_build(state, int(a)) for a in state.legal_actions()}
        theirs_b = {build_key(b) for b in t["legal_builds"]}
        if ujf:
            # new_hut_isolated=False: an expansion that fills one level-1 hex has the same
            # outcome as founding a hut there; our action space lists it once, as the hut.
            huts = {k[1] for k in theirs_b if k[0] == "hut"}
            theirs_b = {
                k for k in theirs_b
                if not (k[0] == "expand" and len(k[2]) == 1 and k[2][0] in huts)
            }
        report.build_sets += 1
        if ours_b != theirs_b:
            bad(tn, f"builds: ours-only {sorted(ours_b - theirs_b)[:5]}, "
                    f"theirs-only {sorted(theirs_b - ours_b)[:5]}")
            return
        chosen = build_key(t["build"])
        ids = [int(a) for a in state.legal_actions() if our_build(state, int(a)) == chosen]
        if not ids and chosen[0] == "expand":
            hx = chosen[2][0]
            ids = [game.num_cells * 6 + game.board.cell(*hx)]
        state.apply(ids[0])
    if not state.is_terminal():
        bad(-1, f"game not over after the oracle's last turn: {state!r}")
        return
    if observe is not None:
        observe(end, state)
    reason = {"early_victory": "EARLY_VICTORY", "last_standing": "LAST_STANDING",
              "tiles_exhausted": "TILES_OUT"}[end["reason"]]
    if state.end_reason.name != reason:
        bad(-1, f"end reason {state.end_reason.name}, oracle {reason}")
    if state.winners() != sorted(end["winners_excluding_eliminated"]):
        bad(-1, f"winners {state.winners()}, oracle {end['winners_excluding_eliminated']}")
