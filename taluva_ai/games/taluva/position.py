"""Position strings: the whole state in one line of text, and back (docs/notation.md).

Format: ``;``-separated ``key=value`` fields, in this order::

    taluva=1;players=2;step=tile;player=0;tile=JC;drawn=3;placed=2;ply=7;end=none;
    nelim=0;best=0;worst=1;drawfor=0;setup=0;bbox=-1,2,0,1;
    seats=19.3.2.0.0.-1.-1.-1/20.3.2.0.0.-1.-1.-1;deck=JCCL...;
    cells=0,0:1V0../0,1:1J0h0/...

``seats`` per seat: huts, temples, towers (supply), status, destroyed huts, place, hand tile
(-1 none), elimination order. A solo game (docs/solo.md) adds a last field ``solo=`` with the
16 solo counters of ``meta[16:32]`` separated by ``.`` (draw pile, bonus stack, face-up tile,
set aside, tiles this turn, bonus sources, face-up used, source, boxed huts, temples, towers,
tiles under the pile, pending chance, last class, island tiles, score). ``deck``: the 48
tile names in draw order. ``cells``: every
non-empty hex as ``q,r:`` level, terrain letter, tile index, then ``..`` or a building letter
(``h`` ``T`` ``W``) and owner seat. The rules are not part of the string: parse it with the
game it belongs to.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from taluva_ai.errors import PositionError
from taluva_ai.games.taluva.state import (
    C_BUILDING,
    C_LEVEL,
    C_OWNER,
    C_TERRAIN,
    C_TILE,
    NUM_PLAYER_FIELDS,
    P_DESTROYED,
    P_ELIM_ORDER,
    P_HAND,
    P_PLACE,
    P_STATUS,
    SOLO_STACK,
    START_HUTS,
    START_TEMPLES,
    START_TOWERS,
    EndReason,
    Step,
    new_arrays,
)
from taluva_ai.games.taluva.tiles import (
    LETTER_TERRAIN,
    NUM_TILE_TYPES,
    NUM_TILES,
    TERRAIN_LETTER,
    Terrain,
    full_tile_set,
    parse_tile,
    tile_name,
)

if TYPE_CHECKING:
    from taluva_ai.games.taluva.game import TaluvaGame, TaluvaState

_META_FIELDS = (
    ("drawn", 3), ("placed", 4), ("ply", 15), ("nelim", 14), ("best", 10), ("worst", 11),
    ("drawfor", 12), ("setup", 13),
)
_BUILD_LETTER = {1: "h", 2: "T", 3: "W"}
_LETTER_BUILD = {v: k for k, v in _BUILD_LETTER.items()}
_CELL = re.compile(r"(-?\d+),(-?\d+):(\d+)([VJCSRL])(\d+)(\.\.|[hTW]\d)")


def format_position(state: TaluvaState) -> str:
    """The state as a position string (see the module docstring)."""
    m = state.meta
    n = state.num_players
    f = [
        "taluva=1",
        f"players={n}",
        f"step={Step(int(m[0])).name.lower()}",
        f"player={int(m[1])}",
        f"tile={tile_name(int(m[2])) if m[2] >= 0 else '-'}",
    ]
    f += [f"{k}={int(m[i])}" for k, i in _META_FIELDS[:3]]
    f.append(f"end={EndReason(int(m[9])).name.lower()}")
    f += [f"{k}={int(m[i])}" for k, i in _META_FIELDS[3:]]
    f.append(f"bbox={int(m[5])},{int(m[6])},{int(m[7])},{int(m[8])}")
    f.append("seats=" + "/".join(".".join(str(int(x)) for x in state.players[p]) for p in range(n)))
    f.append("deck=" + "".join(tile_name(int(t)) for t in state.deck))
    board = state.game.board
    cells = []
    for c in np.flatnonzero(state.cells[:, C_LEVEL] > 0):
        row = state.cells[c]
        b = int(row[C_BUILDING])
        bs = ".." if b == 0 else f"{_BUILD_LETTER[b]}{int(row[C_OWNER])}"
        cells.append(
            f"{int(board.q[c])},{int(board.r[c])}:{int(row[C_LEVEL])}"
            f"{TERRAIN_LETTER[Terrain(int(row[C_TERRAIN]))]}{int(row[C_TILE])}{bs}"
        )
    f.append("cells=" + "/".join(cells))
    if state.game.rules.solo:
        f.append("solo=" + ".".join(str(int(x)) for x in m[16:32]))
    return ";".join(f)


def _int(field: str, text: str, lo: int, hi: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise PositionError(field, f"{text!r} is not an integer") from None
    if not lo <= v <= hi:
        raise PositionError(field, f"{v} is outside {lo}..{hi}")
    return v


def parse_position(game: TaluvaGame, text: str) -> TaluvaState:
    """Parse a position string made by :func:`format_position` for ``game``.

    Raises:
        PositionError: a missing, extra, out-of-order or malformed field (named in the message),
            or a position inconsistent with the game (player count, board bound, tile set).
    """
    from taluva_ai.games.taluva.game import TaluvaState

    if not isinstance(text, str):
        raise PositionError("(whole)", f"expected a string, got {type(text).__name__}")
    expected = ["taluva", "players", "step", "player", "tile", "drawn", "placed", "ply", "end",
                "nelim", "best", "worst", "drawfor", "setup", "bbox", "seats", "deck", "cells"]
    if game.rules.solo:
        expected.append("solo")
    items = text.strip().split(";")
    if len(items) != len(expected):
        raise PositionError("(whole)", f"expected {len(expected)} ';'-separated fields "
                            f"({', '.join(expected)}), got {len(items)}")
    vals: dict[str, str] = {}
    for want, item in zip(expected, items, strict=True):
        key, sep, val = item.partition("=")
        if not sep or key != want:
            raise PositionError(want, f"expected '{want}=...', got {item[:40]!r}")
        vals[key] = val
    if vals["taluva"] != "1":
        raise PositionError("taluva", f"unknown format version {vals['taluva']!r}")
    n = _int("players", vals["players"], 1 if game.rules.solo else 2, 4)
    if n != game.num_players:
        raise PositionError("players", f"{n} players, but the game has {game.num_players}")
    steps = {s.name.lower(): s for s in Step}
    if vals["step"] not in steps:
        raise PositionError("step", f"{vals['step']!r} is not one of {', '.join(steps)}")
    ends = {e.name.lower(): e for e in EndReason}
    if vals["end"] not in ends:
        raise PositionError("end", f"{vals['end']!r} is not one of {', '.join(ends)}")
    deck_s = vals["deck"]
    if len(deck_s) != 2 * NUM_TILES:
        raise PositionError(
            "deck", f"expected {NUM_TILES} two-letter tiles, got {len(deck_s)} letters"
        )
    try:
        deck = np.array([parse_tile(deck_s[i:i + 2]) for i in range(0, len(deck_s), 2)])
    except ValueError as e:
        raise PositionError("deck", str(e)) from None
    if not np.array_equal(np.sort(deck), np.sort(full_tile_set())):
        raise PositionError("deck", "the deck is not the 48-tile set")
    cells, players, deck8, meta = new_arrays(n, deck, game.num_cells, game.rules.tile_preview)
    meta[0] = steps[vals["step"]]
    meta[1] = _int("player", vals["player"], 0, n - 1)
    if vals["tile"] == "-":
        meta[2] = -1
    else:
        try:
            meta[2] = parse_tile(vals["tile"])
        except ValueError as e:
            raise PositionError("tile", str(e)) from None
    meta[9] = ends[vals["end"]]
    for key, i in _META_FIELDS:
        meta[i] = _int(key, vals[key], -1 if key == "worst" else 0, 10**6)
    bbox = vals["bbox"].split(",")
    if len(bbox) != 4:
        raise PositionError("bbox", "expected qmin,qmax,rmin,rmax")
    radius = game.board.radius
    for j, t in enumerate(bbox):
        meta[5 + j] = _int("bbox", t, -radius, radius)
    seats = vals["seats"].split("/")
    if len(seats) != n:
        raise PositionError("seats", f"expected {n} seats separated by '/', got {len(seats)}")
    for p, s in enumerate(seats):
        xs = s.split(".")
        if len(xs) != NUM_PLAYER_FIELDS:
            raise PositionError(
                "seats", f"seat {p}: expected {NUM_PLAYER_FIELDS} '.'-separated numbers"
            )
        for j, t in enumerate(xs):
            players[p, j] = _int("seats", t, -1, 60)
        if players[p, 6] >= NUM_TILE_TYPES:
            raise PositionError("seats", f"seat {p}: hand tile {players[p, 6]} outside -1..24")
    if vals["cells"]:
        for k, item in enumerate(vals["cells"].split("/")):
            mt = _CELL.fullmatch(item)
            if not mt:
                raise PositionError(
                    "cells",
                    f"entry {k + 1} {item!r} is not 'q,r:<level><terrain><tile><building>'",
                )
            q, r, lv, terr, tix, bs = mt.groups()
            try:
                c = game.board.cell(int(q), int(r))
            except ValueError as e:
                raise PositionError("cells", f"entry {k + 1}: {e}") from None
            if cells[c, C_LEVEL] != 0:
                raise PositionError("cells", f"entry {k + 1}: hex ({q},{r}) given twice")
            cells[c, C_LEVEL] = _int("cells", lv, 1, NUM_TILES)
            cells[c, C_TERRAIN] = LETTER_TERRAIN[terr]
            cells[c, C_TILE] = _int("cells", tix, 0, NUM_TILES - 1)
            if bs != "..":
                cells[c, C_BUILDING] = _LETTER_BUILD[bs[0]]
                cells[c, C_OWNER] = _int("cells", bs[1:], 0, n - 1)
    if game.rules.solo:
        xs = vals["solo"].split(".")
        if len(xs) != 16:
            raise PositionError("solo", "expected 16 '.'-separated numbers")
        for j, (t, (name, lo, hi)) in enumerate(zip(xs, _SOLO_FIELDS, strict=True)):
            try:
                meta[16 + j] = _int("solo", t, lo, hi)
            except PositionError as e:
                raise PositionError("solo", f"counter {j + 1} ({name}): {e.reason}") from None
        if meta[16 + 11] > min(meta[16], NUM_TILES - meta[3]):
            raise PositionError("solo", "counter 12 (tiles under the pile): more than the draw "
                                "pile or the tiles not yet drawn")
    _check_consistency(game, cells, players, deck8, meta)
    return TaluvaState(game, cells, players, deck8, meta)


#: The solo counters of ``solo=`` (``meta[16:32]``): name and allowed range.
_SOLO_FIELDS = (
    ("draw pile", 0, NUM_TILES), ("bonus stack", 0, SOLO_STACK),
    ("face-up tile", -1, NUM_TILE_TYPES - 1), ("set aside", 0, NUM_TILES),
    ("tiles this turn", 0, 3), ("bonus sources", 0, 3), ("face-up used", 0, 1),
    ("source", 0, 2), ("boxed huts", 0, START_HUTS), ("boxed temples", 0, START_TEMPLES),
    ("boxed towers", 0, START_TOWERS), ("tiles under the pile", 0, NUM_TILES),
    ("pending chance", 0, 2), ("last class", 0, 4), ("island tiles", 0, NUM_TILES),
    ("score", -1000, 1000),
)


def _check_consistency(
    game: TaluvaGame, cells: np.ndarray, players: np.ndarray, deck: np.ndarray, meta: np.ndarray
) -> None:
    """Reject positions whose fields contradict each other or the game's rules.

    Raises:
        PositionError: naming the first inconsistent field.
    """
    rules = game.rules
    n = game.num_players
    step = int(meta[0])
    if (step == Step.TERMINAL) != (meta[9] != EndReason.NONE):
        raise PositionError("end", "a terminal step needs an end reason, and only it has one")
    if step == Step.TILE and meta[2] < 0:
        raise PositionError("tile", "the tile step needs a tile in hand")
    drawn, placed = int(meta[3]), int(meta[4])
    if drawn > rules.deck_size:
        raise PositionError("drawn", f"{drawn} tiles drawn, but the game has {rules.deck_size}")
    if placed > drawn:
        raise PositionError("placed", f"{placed} tiles placed, but only {drawn} drawn")
    face_up_in_hand = rules.solo and meta[23] == 2  # solo: M_SOURCE == SOURCE_FACE_UP
    if step == Step.TILE and not rules.tile_preview and not face_up_in_hand \
            and meta[2] != deck[drawn - 1]:
        raise PositionError("tile", "the tile in hand is not the last tile drawn from the deck")
    if rules.solo:
        from taluva_ai.games.taluva.solo_kernels import check_invariants

        if check_invariants(players, deck, meta) != 0:
            raise PositionError("solo", "the solo counters disagree (draw pile, bonus stack, "
                                "face-up tile, unseen tiles, boxed pieces)")
    if meta[13] and not rules.tile_preview:
        raise PositionError("setup", "the set-up deal exists only with tile_preview")
    if step in (Step.TILE, Step.BUILD) and players[int(meta[1]), P_STATUS] != 0:
        raise PositionError("player", "the seat to move is not active")
    start = (START_HUTS, START_TEMPLES, START_TOWERS)
    occ = cells[:, C_LEVEL] > 0
    for p in range(n):
        row = players[p]
        if row[P_STATUS] not in (0, 1, 2):
            raise PositionError("seats", f"seat {p}: status {row[P_STATUS]} is not 0, 1 or 2")
        for j, name in enumerate(("huts", "temples", "towers")):
            if not 0 <= row[j] <= start[j]:
                raise PositionError("seats", f"seat {p}: {row[j]} {name} is outside 0..{start[j]}")
        places = 2 if rules.solo else n  # solo: place 0 a win (40+), 1 a loss
        if not -1 <= row[P_PLACE] < places or not -1 <= row[P_ELIM_ORDER] < n:
            raise PositionError("seats", f"seat {p}: place or elimination order outside -1..{n-1}")
        if row[P_HAND] >= 0 and not rules.tile_preview:
            raise PositionError("seats", f"seat {p}: a held tile exists only with tile_preview")
        mine = occ & (cells[:, C_OWNER] == p)
        on_board = (
            int(cells[mine & (cells[:, C_BUILDING] == 1), C_LEVEL].sum()),
            int((mine & (cells[:, C_BUILDING] == 2)).sum()),
            int((mine & (cells[:, C_BUILDING] == 3)).sum()),
        )
        destroyed = int(row[P_DESTROYED])
        boxed = tuple(int(x) for x in meta[24:27]) if rules.solo else (0, 0, 0)
        if rules.destroyed_huts_return and destroyed:
            raise PositionError("seats", f"seat {p}: destroyed huts return under "
                                "destroyed_huts_return, so none can be counted")
        for j, name in enumerate(("huts", "temples", "towers")):
            total = int(row[j]) + on_board[j] + (destroyed if j == 0 else 0) + boxed[j]
            if total != start[j]:
                raise PositionError("seats", f"seat {p}: {name} in supply, on the board"
                                    f"{' and destroyed' if j == 0 else ''}"
                                    f"{' and boxed' if rules.solo else ''} add up to {total}, "
                                    f"not {start[j]}")
    if occ.any() and placed < 1:
        raise PositionError("placed", "the island has hexes, but no tile is placed")
    if not occ.any() and placed > 0:
        raise PositionError("cells", f"{placed} tile(s) placed, but the island is empty")
    if occ.any():
        if int(cells[occ, C_TILE].max()) >= placed:
            raise PositionError("cells", f"a tile index is not below placed={placed}")
        top = cells[occ].astype(np.int64)
        if (top[:, C_TILE] < top[:, C_LEVEL] - 1).any():
            raise PositionError("cells", "a hex at level L shows a tile placed before L - 1 "
                                "others (its tile index is below L - 1)")
        volcano = top[:, C_TERRAIN] == Terrain.VOLCANO
        if (volcano & (top[:, C_BUILDING] != 0)).any():
            raise PositionError("cells", "a building stands on a volcano")
        if ((top[:, C_BUILDING] == 3) & (top[:, C_LEVEL] < 3)).any():
            raise PositionError("cells", "a tower stands below level 3")
        if (np.bincount(top[:, C_TILE], minlength=placed) > 3).any():
            raise PositionError("cells", "a tile shows more than 3 hexes")
        if (np.bincount(top[volcano, C_TILE], minlength=placed) > 1).any():
            raise PositionError("cells", "a tile shows more than one volcano")
        if (cells[occ & (cells[:, C_BUILDING] != 0), C_OWNER] >= n).any():
            raise PositionError("cells", f"a building's owner is not a seat 0..{n - 1}")
        b = game.board
        qs, rs = b.q[occ], b.r[occ]
        box = (int(qs.min()), int(qs.max()), int(rs.min()), int(rs.max()))
        if tuple(int(x) for x in meta[5:9]) != box:
            raise PositionError("bbox", f"does not match the cells: expected {box}")
