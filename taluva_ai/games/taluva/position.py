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

from taluva_ai.errors import PositionError, echo
from taluva_ai.games.position_fields import parse_int as _int
from taluva_ai.games.taluva import state as S
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
_CELL = re.compile(r"(-?[0-9]+),(-?[0-9]+):([0-9]+)([VJCSRL])([0-9]+)(\.\.|[hTW][0-9])")


def format_position(state: TaluvaState) -> str:
    """The state as a position string (see the module docstring)."""
    m = state.meta
    n = state.num_players
    f = [
        "taluva=1",
        f"players={n}",
        f"step={S.Step(int(m[0])).name.lower()}",
        f"player={int(m[1])}",
        f"tile={tile_name(int(m[2])) if m[2] >= 0 else '-'}",
    ]
    f += [f"{k}={int(m[i])}" for k, i in _META_FIELDS[:3]]
    f.append(f"end={S.EndReason(int(m[9])).name.lower()}")
    f += [f"{k}={int(m[i])}" for k, i in _META_FIELDS[3:]]
    f.append(f"bbox={int(m[5])},{int(m[6])},{int(m[7])},{int(m[8])}")
    f.append("seats=" + "/".join(".".join(str(int(x)) for x in state.players[p]) for p in range(n)))
    f.append("deck=" + "".join(tile_name(int(t)) for t in state.deck))
    board = state.game.board
    cells = []
    for c in np.flatnonzero(state.cells[:, S.C_LEVEL] > 0):
        row = state.cells[c]
        b = int(row[S.C_BUILDING])
        bs = ".." if b == 0 else f"{_BUILD_LETTER[b]}{int(row[S.C_OWNER])}"
        cells.append(
            f"{int(board.q[c])},{int(board.r[c])}:{int(row[S.C_LEVEL])}"
            f"{TERRAIN_LETTER[Terrain(int(row[S.C_TERRAIN]))]}{int(row[S.C_TILE])}{bs}"
        )
    f.append("cells=" + "/".join(cells))
    if state.game.rules.solo:
        f.append("solo=" + ".".join(str(int(x)) for x in m[16:32]))
    return ";".join(f)


#: Steps and end reasons of the solo variant only.
_SOLO_STEPS = (S.Step.BONUS, S.Step.BOX)
_SOLO_ENDS = (S.EndReason.NO_BUILD, S.EndReason.SUPPLY_OUT, S.EndReason.PILE_OUT)


def _meta_range(game: TaluvaGame, key: str) -> tuple[int, int]:
    """The allowed range of the counter ``key`` of :data:`_META_FIELDS` in ``game``."""
    n = game.num_players
    if game.rules.solo:  # one seat: no ranking, no elimination, no preview deal
        return {"drawn": (0, NUM_TILES), "placed": (0, NUM_TILES), "ply": (0, _MAX_SOLO_PLY),
                "worst": (0, 0)}.get(key, (0, 0))
    size = game.rules.deck_size
    return {"drawn": (0, size), "placed": (0, size), "ply": (0, 3 * size), "nelim": (0, n - 1),
            "best": (0, n), "worst": (-1, n - 1), "drawfor": (0, n - 1), "setup": (0, 1)}[key]


def _seat_fields(game: TaluvaGame) -> tuple[tuple[str, int, int], ...]:
    """Name and allowed range of each number of a seat in ``seats=``."""
    n = game.num_players
    return (("huts", 0, S.START_HUTS), ("temples", 0, S.START_TEMPLES),
            ("towers", 0, S.START_TOWERS),
            ("status", 0, 2), ("destroyed huts", 0, S.START_HUTS),
            ("place", -1, 1 if game.rules.solo else n - 1), ("hand tile", -1, NUM_TILE_TYPES - 1),
            ("elimination order", -1, n - 1))


#: Most actions a solo game can take: per tile, its draw, its placement, a bonus choice, a
#: box choice, a reveal and a build.
_MAX_SOLO_PLY = 6 * NUM_TILES


def parse_position(game: TaluvaGame, text: str) -> TaluvaState:
    """Parse a position string made by :func:`format_position` for ``game``.

    Raises:
        PositionError: a missing, extra, out-of-order or malformed field (named in the message),
            or a position inconsistent with the game (player count, board bound, tile set).
    """
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
        raise PositionError("taluva", f"unknown format version {echo(vals['taluva'])}")
    n = _int("players", vals["players"], 1 if game.rules.solo else 2, 4)
    if n != game.num_players:
        raise PositionError("players", f"{n} players, but the game has {game.num_players}")
    solo = game.rules.solo
    steps = {s.name.lower(): s for s in S.Step if solo or s not in _SOLO_STEPS}
    if vals["step"] not in steps:
        raise PositionError("step", f"{echo(vals['step'])} is not one of {', '.join(steps)}"
                            + ("" if solo else " (bonus and box are solo steps)"))
    ends = {e.name.lower(): e for e in S.EndReason if (e in _SOLO_ENDS) == solo
            or e == S.EndReason.NONE}
    if vals["end"] not in ends:
        raise PositionError("end", f"{echo(vals['end'])} is not one of {', '.join(ends)}"
                            f"{' in a solo game' if solo else ''}")
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
    cells, players, deck8, meta = S.new_arrays(n, deck, game.num_cells, game.rules.tile_preview)
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
        lo, hi = _meta_range(game, key)
        meta[i] = _int(key, vals[key], lo, hi)
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
        if len(xs) != S.NUM_PLAYER_FIELDS:
            raise PositionError(
                "seats", f"seat {p}: expected {S.NUM_PLAYER_FIELDS} '.'-separated numbers"
            )
        for j, (t, (name, lo, hi)) in enumerate(zip(xs, _seat_fields(game), strict=True)):
            try:
                players[p, j] = _int("seats", t, lo, hi)
            except PositionError as e:
                raise PositionError("seats", f"seat {p}: {name}: {e.reason}") from None
    if vals["cells"]:
        for k, item in enumerate(vals["cells"].split("/")):
            mt = _CELL.fullmatch(item)
            if not mt:
                raise PositionError(
                    "cells",
                    f"entry {k + 1} {echo(item)} is not 'q,r:<level><terrain><tile><building>'",
                )
            q, r, lv, terr, tix, bs = mt.groups()
            try:
                c = game.board.cell(int(q), int(r))
            except ValueError as e:
                raise PositionError("cells", f"entry {k + 1}: {e}") from None
            if cells[c, S.C_LEVEL] != 0:
                raise PositionError("cells", f"entry {k + 1}: hex ({q},{r}) given twice")
            cells[c, S.C_LEVEL] = _int("cells", lv, 1, NUM_TILES)
            cells[c, S.C_TERRAIN] = LETTER_TERRAIN[terr]
            cells[c, S.C_TILE] = _int("cells", tix, 0, NUM_TILES - 1)
            if bs != "..":
                cells[c, S.C_BUILDING] = _LETTER_BUILD[bs[0]]
                cells[c, S.C_OWNER] = _int("cells", bs[1:], 0, n - 1)
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
    if game.rules.solo:
        _check_solo_turn(game, cells, players, meta)
    else:
        _check_turn(game, players, deck8, meta)
        _check_seats(game, players, meta)
    state = game.state_from_arrays(cells, players, deck8, meta)
    _check_playable(state)
    return state


#: The solo counters of ``solo=`` (``meta[16:32]``): name and allowed range.
_SOLO_FIELDS = (
    ("draw pile", 0, NUM_TILES), ("bonus stack", 0, S.SOLO_STACK),
    ("face-up tile", -1, NUM_TILE_TYPES - 1), ("set aside", 0, NUM_TILES),
    ("tiles this turn", 0, 3), ("bonus sources", 0, 3), ("face-up used", 0, 1),
    ("source", 0, 2), ("boxed huts", 0, S.START_HUTS), ("boxed temples", 0, S.START_TEMPLES),
    ("boxed towers", 0, S.START_TOWERS), ("tiles under the pile", 0, NUM_TILES),
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
    if (step == S.Step.TERMINAL) != (meta[9] != S.EndReason.NONE):
        raise PositionError("end", "a terminal step needs an end reason, and only it has one")
    if step == S.Step.TILE and meta[2] < 0:
        raise PositionError("tile", "the tile step needs a tile in hand")
    drawn, placed = int(meta[3]), int(meta[4])
    if drawn > rules.deck_size:
        raise PositionError("drawn", f"{drawn} tiles drawn, but the game has {rules.deck_size}")
    if placed > drawn:
        raise PositionError("placed", f"{placed} tiles placed, but only {drawn} drawn")
    face_up_in_hand = rules.solo and meta[23] == 2  # solo: M_SOURCE == SOURCE_FACE_UP
    if step in (S.Step.TILE, S.Step.BUILD) and placed + int(step == S.Step.TILE) < 1:
        raise PositionError("placed", f"the {S.Step(step).name.lower()} step comes after a draw")
    if step == S.Step.TILE and not rules.tile_preview and not face_up_in_hand \
            and meta[2] != deck[drawn - 1]:
        raise PositionError("tile", "the tile in hand is not the last tile drawn from the deck")
    if rules.solo:
        from taluva_ai.games.taluva.solo_kernels import check_invariants

        if check_invariants(players, deck, meta) != 0:
            raise PositionError("solo", "the solo counters disagree (draw pile, bonus stack, "
                                "face-up tile, unseen tiles, boxed pieces)")
    if meta[13] and not rules.tile_preview:
        raise PositionError("setup", "the set-up deal exists only with tile_preview")
    if step not in (S.Step.CHANCE, S.Step.TERMINAL) and players[int(meta[1]), S.P_STATUS] != 0:
        raise PositionError("player", "the seat to move is not active")
    start = (S.START_HUTS, S.START_TEMPLES, S.START_TOWERS)
    occ = cells[:, S.C_LEVEL] > 0
    for p in range(n):
        row = players[p]
        if row[S.P_STATUS] not in (0, 1, 2):
            raise PositionError("seats", f"seat {p}: status {row[S.P_STATUS]} is not 0, 1 or 2")
        for j, name in enumerate(("huts", "temples", "towers")):
            if not 0 <= row[j] <= start[j]:
                raise PositionError("seats", f"seat {p}: {row[j]} {name} is outside 0..{start[j]}")
        places = 2 if rules.solo else n  # solo: place 0 a win (40+), 1 a loss
        if not -1 <= row[S.P_PLACE] < places or not -1 <= row[S.P_ELIM_ORDER] < n:
            raise PositionError("seats", f"seat {p}: place or elimination order outside -1..{n-1}")
        if row[S.P_HAND] >= 0 and not rules.tile_preview:
            raise PositionError("seats", f"seat {p}: a held tile exists only with tile_preview")
        mine = occ & (cells[:, S.C_OWNER] == p)
        on_board = (
            int(cells[mine & (cells[:, S.C_BUILDING] == 1), S.C_LEVEL].sum()),
            int((mine & (cells[:, S.C_BUILDING] == 2)).sum()),
            int((mine & (cells[:, S.C_BUILDING] == 3)).sum()),
        )
        destroyed = int(row[S.P_DESTROYED])
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
    if not occ.any() and (meta[5:9] != 0).any():
        raise PositionError("bbox", "the island is empty: expected 0,0,0,0")
    if occ.any():
        if int(cells[occ, S.C_TILE].max()) >= placed:
            raise PositionError("cells", f"a tile index is not below placed={placed}")
        top = cells[occ].astype(np.int64)
        if (top[:, S.C_TILE] < top[:, S.C_LEVEL] - 1).any():
            raise PositionError("cells", "a hex at level L shows a tile placed before L - 1 "
                                "others (its tile index is below L - 1)")
        volcano = top[:, S.C_TERRAIN] == Terrain.VOLCANO
        if (volcano & (top[:, S.C_BUILDING] != 0)).any():
            raise PositionError("cells", "a building stands on a volcano")
        if ((top[:, S.C_BUILDING] == 3) & (top[:, S.C_LEVEL] < 3)).any():
            raise PositionError("cells", "a tower stands below level 3")
        if (np.bincount(top[:, S.C_TILE], minlength=placed) > 3).any():
            raise PositionError("cells", "a tile shows more than 3 hexes")
        if (np.bincount(top[volcano, S.C_TILE], minlength=placed) > 1).any():
            raise PositionError("cells", "a tile shows more than one volcano")
        lv = np.zeros(placed, dtype=np.int64)
        lv[top[:, S.C_TILE]] = top[:, S.C_LEVEL]
        if (lv[top[:, S.C_TILE]] != top[:, S.C_LEVEL]).any():
            raise PositionError("cells", "the hexes of one tile lie at different levels")
        if rules.no_lake_building and ((top[:, S.C_TERRAIN] == Terrain.LAKE)
                                       & (top[:, S.C_BUILDING] != 0)).any():
            raise PositionError("cells", "a building stands on a lake (no_lake_building)")
        if (cells[occ & (cells[:, S.C_BUILDING] != 0), S.C_OWNER] >= n).any():
            raise PositionError("cells", f"a building's owner is not a seat 0..{n - 1}")
        b = game.board
        qs, rs = b.q[occ], b.r[occ]
        box = (int(qs.min()), int(qs.max()), int(rs.min()), int(rs.max()))
        if tuple(int(x) for x in meta[5:9]) != box:
            raise PositionError("bbox", f"does not match the cells: expected {box}")


def _kinds_out(row: np.ndarray) -> int:
    """Kinds of pieces (huts, temples, towers) a seat has none left of."""
    return int(row[S.P_HUTS] == 0) + int(row[S.P_TEMPLES] == 0) + int(row[S.P_TOWERS] == 0)


def _check_seats(game: TaluvaGame, players: np.ndarray, meta: np.ndarray) -> None:
    """The seats' statuses, elimination orders and places against ``nelim``, ``best``,
    ``worst``, the end reason and the rules (ranked play, early victory); multiplayer game.

    Raises:
        PositionError: naming the first inconsistent field.
    """
    rules = game.rules
    n = game.num_players
    seats = players[:n]
    status = seats[:, S.P_STATUS]
    active, elim, fin = status == S.Status.ACTIVE, status == S.Status.ELIMINATED, \
        status == S.Status.FINISHED
    n_active, n_elim, n_fin = int(active.sum()), int(elim.sum()), int(fin.sum())
    step, end = int(meta[S.M_STEP]), int(meta[S.M_END])
    if n_fin and not rules.ranked:
        raise PositionError("seats", "a finished seat (status 2) exists only in ranked play")
    if meta[S.M_NELIM] != n_elim:
        raise PositionError("nelim", f"{int(meta[S.M_NELIM])} eliminations, but {n_elim} seat(s) "
                            "have status 1 (eliminated)")
    orders = sorted(int(x) for x in seats[elim, S.P_ELIM_ORDER])
    if orders != list(range(n_elim)) or (seats[~elim, S.P_ELIM_ORDER] != -1).any():
        raise PositionError("seats", f"the elimination orders of the {n_elim} eliminated "
                            f"seat(s) must be 0..{n_elim - 1}, each once, the others' -1")
    result = step == S.Step.TERMINAL and end != S.EndReason.TRUNCATED
    last_one = result and end in (S.EndReason.EARLY_VICTORY, S.EndReason.LAST_STANDING)
    if rules.ranked:
        best, worst = n_fin + int(last_one), n - 1 - n_elim
    else:
        best, worst = 0, n - 1
    if meta[S.M_NEXT_BEST] != best:
        raise PositionError("best", f"{int(meta[S.M_NEXT_BEST])}, but {n_fin} finished seat(s)"
                            f"{' and a last seat placed' if rules.ranked and last_one else ''}"
                            f" make the next best place {best}")
    if meta[S.M_NEXT_WORST] != worst:
        raise PositionError("worst", f"{int(meta[S.M_NEXT_WORST])}, but {n_elim} eliminated "
                            f"seat(s) make the next worst place {worst}"
                            f"{'' if rules.ranked else ' (unranked play)'}")
    # how many seats are still in play
    if last_one and (rules.ranked or end == S.EndReason.LAST_STANDING):
        if n_active != 1:
            raise PositionError("end", f"{S.EndReason(end).name.lower()} leaves one seat in play, "
                                f"but {n_active} are active")
    elif n_active < 2:
        raise PositionError("seats", f"{n_active} active seat(s): a game goes on (or ends "
                            f"{S.EndReason(end).name.lower()}) with 2 or more")
    if rules.ranked and end == S.EndReason.EARLY_VICTORY and result and n_fin == 0:
        raise PositionError("end", "an early victory in ranked play needs a finished seat")
    if end == S.EndReason.LAST_STANDING and n_elim == 0:
        raise PositionError("end", "last_standing needs an eliminated seat")
    # early victory: only a seat that has left (or the unranked winner) has built its kinds
    kinds = rules.early_victory_kinds
    places = seats[:, S.P_PLACE].astype(np.int64)
    winner = -1
    if result and end == S.EndReason.EARLY_VICTORY and not rules.ranked:
        zeros = np.flatnonzero(places == 0)
        winner = int(zeros[0]) if zeros.size == 1 else -1
        if winner < 0 or not active[winner]:
            raise PositionError("seats", "an early victory has one winner (place 0), an active "
                                "seat")
    for p in range(n):
        done = _kinds_out(seats[p]) >= kinds
        if done != (bool(fin[p]) or p == winner):
            raise PositionError("seats", f"seat {p}: {_kinds_out(seats[p])} kind(s) of pieces "
                                f"all built ({kinds} win early), but status {int(status[p])}"
                                f"{' and place 0' if p == winner else ''}")
    # places
    expect = np.full(n, -1, dtype=np.int64)
    if rules.ranked:
        for mask, first in ((fin, 0), (elim, worst + 1)):
            got = sorted(int(x) for x in places[mask])
            if got != list(range(first, first + len(got))):
                what = "finished" if first == 0 else "eliminated"
                raise PositionError("seats", f"the places of the {what} seats must be "
                                    f"{first}..{first + len(got) - 1}, each once; got {got}")
            expect[mask] = places[mask]
        if last_one:
            expect[active] = n_fin
    elif last_one:
        expect[:] = 1
        expect[active if end == S.EndReason.LAST_STANDING else winner] = 0
    if result and end == S.EndReason.TILES_OUT:
        from taluva_ai.games.taluva.kernels import _end_tiles_out

        p2, m2 = players.copy(), meta.copy()
        p2[:n, S.P_PLACE] = np.where(active, -1, expect)
        _end_tiles_out(p2, m2, game.rules_array)
        expect = p2[:n, S.P_PLACE].astype(np.int64)
    if not np.array_equal(places, expect):
        when = "while the game goes on" if not result else \
            f"after {S.EndReason(end).name.lower()}"
        raise PositionError("seats", f"places {places.tolist()}, but {when} they are "
                            f"{expect.tolist()}")


def _check_turn(game: TaluvaGame, players: np.ndarray, deck: np.ndarray,
                meta: np.ndarray) -> None:
    """The step, the seat to move, the pending draw, the tile in hand, the held tiles and the
    counters against each other (multiplayer game).

    Raises:
        PositionError: naming the first inconsistent field.
    """
    rules = game.rules
    n = game.num_players
    seats = players[:n]
    active = seats[:, S.P_STATUS] == S.Status.ACTIVE
    step, player, tile = int(meta[S.M_STEP]), int(meta[S.M_PLAYER]), int(meta[S.M_TILE])
    drawn, placed, end = int(meta[S.M_DRAWN]), int(meta[S.M_PLACED]), int(meta[S.M_END])
    draw_for, setup = int(meta[S.M_DRAW_FOR]), int(meta[S.M_SETUP])
    hands = seats[:, S.P_HAND]
    held = int((hands >= 0).sum())
    last = int(deck[drawn - 1]) if drawn > 0 else -1
    if step == S.Step.CHANCE and drawn >= rules.deck_size:
        raise PositionError("drawn", f"the chance step needs a tile left to draw, but "
                            f"{drawn} of {rules.deck_size} are drawn")
    if step == S.Step.TERMINAL and end == S.EndReason.TILES_OUT and drawn != rules.deck_size:
        raise PositionError("end", f"tiles_out, but only {drawn} of {rules.deck_size} tiles "
                            "are drawn")
    if (hands[~active] >= 0).any():
        raise PositionError("seats", "a seat out of play holds a tile")
    if setup and step != S.Step.CHANCE:
        raise PositionError("setup", "the set-up deal (setup=1) is at the chance step")
    if rules.tile_preview:
        if drawn - placed != held:
            raise PositionError("drawn", f"{drawn} tiles drawn and {placed} placed leave "
                                f"{drawn - placed} in hand, but the seats hold {held}")
        if drawn < rules.deck_size:  # who holds a tile while the deck lasts
            if setup:
                holds = np.arange(n) < draw_for
            else:
                holds = active.copy()
                if step in (S.Step.CHANCE, S.Step.BUILD) or (
                        step == S.Step.TERMINAL and end != S.EndReason.TRUNCATED):
                    holds[player] = False  # the mover has placed its tile
            if not np.array_equal(hands >= 0, holds):
                raise PositionError("seats", "with tile_preview, while the deck lasts, every "
                                    "active seat holds its next tile but the mover between "
                                    "placing its tile and drawing the next (and, while the "
                                    "set-up deal goes on, the seats not dealt yet)")
    else:
        in_hand = int(step == S.Step.TILE
                      or (step == S.Step.TERMINAL and end == S.EndReason.TRUNCATED))
        if drawn - placed != in_hand:
            raise PositionError("placed", f"{placed} tiles placed of {drawn} drawn: at this "
                                f"step {in_hand} tile is in hand")
    if step == S.Step.CHANCE:
        if not active[draw_for]:
            raise PositionError("drawfor", f"seat {draw_for} is not active")
        if setup:
            if draw_for != drawn or player != 0 or tile != -1:
                raise PositionError("drawfor", f"the set-up deal gives seats 0..{n - 1} a tile "
                                    f"in turn: drawfor must be drawn={drawn} (got {draw_for}), "
                                    "player 0, tile -")
        elif draw_for != player:
            raise PositionError("drawfor", f"the draw is for the seat to move ({player}), got "
                                f"{draw_for}")
        elif rules.tile_preview and (hands[player] >= 0 or tile != -1):
            raise PositionError("tile", "after a turn with tile_preview the mover draws their "
                                "next tile: no tile in hand")
        elif not rules.tile_preview and tile not in (-1, last):
            raise PositionError("tile", "at the chance step the tile is '-' or the last tile "
                                "drawn")
    elif step == S.Step.TILE:
        if rules.tile_preview and tile != hands[player]:
            raise PositionError("tile", f"the tile in hand is not seat {player}'s held tile")
    elif step == S.Step.BUILD:
        if tile < 0 or (not rules.tile_preview and tile != last):
            raise PositionError("tile", "the build step keeps the turn's tile (the last tile "
                                "drawn without tile_preview)")
        if rules.tile_preview and hands[player] >= 0:
            raise PositionError("seats", f"seat {player} builds, so it has placed its held "
                                "tile")
    elif step == S.Step.TERMINAL and tile != -1:
        raise PositionError("tile", "a finished game has no tile in hand")
    builds = placed - int(meta[S.M_NELIM]) - int(step == S.Step.BUILD)
    ply = drawn + placed + builds
    if meta[S.M_PLY] != ply:
        raise PositionError("ply", f"{int(meta[S.M_PLY])}, but {drawn} draws, {placed} "
                            f"placements and {builds} builds make {ply}")


def _check_solo_turn(game: TaluvaGame, cells: np.ndarray, players: np.ndarray,
                     meta: np.ndarray) -> None:
    """The solo game's step, counters and seat against each other (SOLO.md; the counters
    of ``solo=`` were range-checked and :func:`solo_kernels.check_invariants` passed).

    Raises:
        PositionError: naming the first inconsistent field.
    """
    from taluva_ai.games.taluva import solo_kernels as SK

    rules = game.rules
    seat = players[0]
    step, tile, end = int(meta[S.M_STEP]), int(meta[S.M_TILE]), int(meta[S.M_END])
    drawn, placed, island = int(meta[S.M_DRAWN]), int(meta[S.M_PLACED]), int(meta[S.M_ISLAND])
    pile, bottom, face_up = int(meta[S.M_PILE]), int(meta[S.M_BOTTOM]), int(meta[S.M_FACE_UP])
    turn_tiles, src = int(meta[S.M_TURN_TILES]), int(meta[S.M_BONUS_SRC])
    if seat[S.P_STATUS] != S.Status.ACTIVE or seat[S.P_ELIM_ORDER] != -1 or seat[S.P_DESTROYED] < 0:
        raise PositionError("seats", "the solo seat is active (status 0) with elimination "
                            "order -1")
    if not 1 <= island <= NUM_TILES - S.SOLO_STACK - 1 or placed < island or drawn < island:
        raise PositionError("solo", f"counter 15 (island tiles): {island}, but the starting "
                            f"island has 1..{NUM_TILES - S.SOLO_STACK - 1} tiles, all drawn and "
                            "placed")
    in_hand = int(step == S.Step.TILE)
    want = placed + int(meta[S.M_ASIDE]) + in_hand + int(face_up >= 0)
    if drawn != want:
        raise PositionError("drawn", f"{drawn}, but {placed} placed, {int(meta[S.M_ASIDE])} set "
                            f"aside, {in_hand} in hand and {int(face_up >= 0)} face up make "
                            f"{want}")
    if SK.stack_face_down(meta) < 0:
        raise PositionError("solo", "counter 3 (face-up tile): a face-up tile needs a bonus "
                            "stack")
    if meta[S.M_PLY] < placed - island:
        raise PositionError("ply", f"{int(meta[S.M_PLY])}, but {placed - island} tiles were "
                            "placed after the set-up")
    source, face_used = int(meta[S.M_SOURCE]), int(meta[S.M_FACE_USED])
    pile_bonus = source == S.SOURCE_PILE and step in (S.Step.CHANCE, S.Step.TILE)
    if ((src != 0 and step != S.Step.BONUS and not pile_bonus)
            or (src == 0 and step == S.Step.BONUS)):
        raise PositionError("solo", "counter 6 (bonus sources): sources are on offer at the "
                            "bonus step (and kept while a bonus tile from the pile is drawn "
                            "and placed)")
    if face_used and face_up >= 0 and step not in (S.Step.BUILD, S.Step.TERMINAL):
        raise PositionError("solo", "counter 7 (face-up used): a new face-up tile is turned up "
                            "at phase 2, before the build")
    over = step == S.Step.TERMINAL
    supply = int(seat[S.P_HUTS]) + int(seat[S.P_TEMPLES]) + int(seat[S.P_TOWERS])
    if over and end == S.EndReason.PILE_OUT and pile != 0:
        raise PositionError("end", f"pile_out, but the draw pile holds {pile} tile(s)")
    if over and end == S.EndReason.SUPPLY_OUT and supply != 0:
        raise PositionError("end", f"supply_out, but {supply} piece(s) are left")
    if over and tile != -1:
        raise PositionError("tile", "a finished game has no tile in hand")
    if over:
        rules_arr, nbr, cell_of, _, _ = game.kernel_args()
        lines = np.zeros(SK.NUM_SCORE_LINES, dtype=np.int64)
        score = int(SK.score(cells, players, meta, rules_arr, nbr, cell_of, lines))
        if meta[S.M_SCORE] != score or seat[S.P_PLACE] != (0 if score >= SK.WIN_SCORE else 1):
            raise PositionError("solo", f"counter 16 (score): the final score is {score}, "
                                f"place {0 if score >= SK.WIN_SCORE else 1}")
    elif meta[S.M_SCORE] != 0 or seat[S.P_PLACE] != -1:
        raise PositionError("solo", "counter 16 (score) and the seat's place are set when the "
                            "game ends (0 and -1 before)")
    if not over and supply == 0:
        raise PositionError("seats", "every piece is built or boxed: the game is over "
                            "(supply_out)")
    if step == S.Step.CHANCE:
        pending = int(meta[S.M_PENDING])
        if pending == S.PENDING_PILE and (pile - bottom <= 0 or tile != -1 or turn_tiles > 2):
            raise PositionError("solo", "counter 13 (pending chance): a draw from the pile "
                                "needs an unseen tile in the pile, no tile in hand and fewer "
                                "than 3 tiles this turn")
        if pending == S.PENDING_PILE and (turn_tiles == 0) != (source == S.SOURCE_REGULAR):
            raise PositionError("solo", "counter 8 (source): the turn's first tile is the "
                                "regular one, the others bonus tiles")
        if pending == S.PENDING_PILE and turn_tiles == 0 and (
                face_used or meta[S.M_LAST_CLASS] or src):
            raise PositionError("solo", "a new turn starts with counters 6, 7 and 14 (bonus "
                                "sources, face-up used, last class) at 0")
        if pending == S.PENDING_REVEAL and (SK.stack_face_down(meta) <= 0 or face_up >= 0
                                          or meta[S.M_FACE_USED] == 0):
            raise PositionError("solo", "counter 13 (pending chance): a new face-up tile is "
                                "turned up after the face-up tile was used, from a face-down "
                                "bonus stack")
        if pending == S.PENDING_REVEAL_SETUP and (placed != island or drawn != island
                                                or face_up >= 0 or meta[S.M_PLY] != 0):
            raise PositionError("solo", "counter 13 (pending chance): the first face-up tile is "
                                "turned up at the set-up, before any action")
    elif step == S.Step.TILE:
        if turn_tiles < 1:
            raise PositionError("solo", "counter 5 (tiles this turn): the tile in hand counts")
        if (turn_tiles == 1) != (source == S.SOURCE_REGULAR):
            raise PositionError("solo", "counter 8 (source): the turn's first tile is the "
                                "regular one, the others bonus tiles")
        if meta[S.M_SOURCE] == S.SOURCE_FACE_UP and meta[S.M_FACE_USED] == 0:
            raise PositionError("solo", "counter 7 (face-up used): the tile in hand is the "
                                "face-up tile")
    elif step == S.Step.BONUS:
        if not 1 <= turn_tiles <= 2 or ((src & S.SRC_BIT_PILE) and pile <= 0) or (
                (src & S.SRC_BIT_FACE_UP) and (face_up < 0 or meta[S.M_FACE_USED] != 0)):
            raise PositionError("solo", "counter 6 (bonus sources): a source on offer must "
                                "hold a tile, and a bonus tile comes after 1 or 2 tiles")
    elif step == S.Step.BOX and (rules.box_piece != "choice"
                               or sum(int(seat[k] > 0) for k in range(3)) < 2):
        raise PositionError("step", "the box step is a choice (box_piece='choice') between 2 "
                            "kinds of pieces or more")


def _check_playable(state: TaluvaState) -> None:
    """A decision step has a legal action, and a finished game ended as its end reason says
    (the board bound left no placement; solo: no legal build), asked of the kernels.

    Raises:
        PositionError: naming the step or the end reason.
    """
    step = state.step
    if step in (S.Step.TILE, S.Step.BUILD, S.Step.BONUS, S.Step.BOX):
        if state.legal_actions().size == 0:
            why = {S.Step.TILE: "the tile in hand has no legal placement (the game would have "
                              "ended: truncated, or solo: set aside)",
                   S.Step.BUILD: "the player to move has no legal build (eliminated, or solo: "
                               "the end no_build)"}.get(step, "nothing to choose")
            raise PositionError("step", f"{step.name.lower()}, but {why}")
        return
    if step != S.Step.TERMINAL:
        return
    end = state.end_reason
    if end not in (S.EndReason.TRUNCATED, S.EndReason.NO_BUILD):
        return
    probe = state.clone()
    m = probe.meta
    if end == S.EndReason.TRUNCATED:
        p = int(m[S.M_PLAYER])
        held = int(probe.players[p, S.P_HAND])
        m[S.M_TILE] = (held if state.game.rules.tile_preview
                       else int(probe.deck[int(m[S.M_DRAWN]) - 1]))
        m[S.M_STEP] = S.Step.TILE
        if m[S.M_TILE] < 0 or probe.legal_actions().size:
            raise PositionError("end", "truncated, but the tile in hand has a legal placement")
    else:
        m[S.M_STEP] = S.Step.BUILD
        if probe.legal_actions().size:
            raise PositionError("end", "no_build, but a build is legal")
