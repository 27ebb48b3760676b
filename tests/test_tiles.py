"""The tile set (RULES.md, Components), tile orientations and the hex grid's rotations."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from helpers import hex_at, play_random_game

from taluva_ai.games.taluva import TaluvaGame, TaluvaState, Terrain
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.hexgrid import (
    DIRECTION_NAMES,
    DIRECTIONS,
    hex_distance,
    make_board,
    rotate_hex,
)
from taluva_ai.games.taluva.state import (
    C_LEVEL,
    M_QMAX,
    M_QMIN,
    M_RMAX,
    M_RMIN,
    Step,
)
from taluva_ai.games.taluva.tiles import (
    NUM_TILE_TYPES,
    NUM_TILES,
    ORIENTATION_NAMES,
    TILE_COUNTS,
    full_tile_set,
    parse_tile,
    tile_name,
    tile_terrains,
    tile_type,
)

#: RULES.md's table, row = a, column = b, in J C S R L order.
RULES_TABLE = {
    "JJ": 1, "JC": 6, "JS": 4, "JR": 2, "JL": 2,
    "CJ": 5, "CC": 1, "CS": 2, "CR": 2, "CL": 1,
    "SJ": 4, "SC": 2, "SS": 1, "SR": 2, "SL": 1,
    "RJ": 2, "RC": 2, "RS": 1, "RR": 1, "RL": 1,
    "LJ": 1, "LC": 1, "LS": 1, "LR": 1, "LL": 1,
}


def test_tile_set_matches_rules_table():
    counts = Counter(tile_name(int(t)) for t in full_tile_set())
    assert dict(counts) == RULES_TABLE
    assert len(full_tile_set()) == NUM_TILES == 48
    assert int(TILE_COUNTS.sum()) == 48


def test_terrain_hex_counts():
    hexes = Counter()
    for t in full_tile_set():
        a, b = tile_terrains(int(t))
        hexes[a] += 1
        hexes[b] += 1
    assert hexes == {Terrain.JUNGLE: 28, Terrain.CLEARING: 23, Terrain.SAND: 19,
                     Terrain.ROCK: 15, Terrain.LAKE: 11}
    assert sum(hexes.values()) == 96


def test_twenty_five_types_ordered_pairs_distinct():
    assert NUM_TILE_TYPES == 25
    names = [tile_name(t) for t in range(25)]
    assert len(set(names)) == 25
    assert names[:6] == ["JJ", "JC", "JS", "JR", "JL", "CJ"]
    assert tile_type(Terrain.JUNGLE, Terrain.CLEARING) == 1
    assert tile_type(Terrain.CLEARING, Terrain.JUNGLE) == 5
    assert RULES_TABLE["JC"] != RULES_TABLE["CJ"]
    for t in range(25):
        assert parse_tile(tile_name(t)) == t
        a, b = tile_terrains(t)
        assert tile_type(a, b) == t == 5 * (a - 2) + (b - 2)


@pytest.mark.parametrize("bad", ["", "J", "JCS", "jc", "JV", "XX", "VJ"])
def test_parse_tile_rejects(bad):
    with pytest.raises(ValueError, match="two letters of J C S R L"):
        parse_tile(bad)


def test_tile_type_rejects_volcano_and_range():
    with pytest.raises(ValueError):
        tile_type(Terrain.VOLCANO, Terrain.JUNGLE)
    with pytest.raises(ValueError):
        tile_terrains(25)
    with pytest.raises(ValueError):
        tile_terrains(-1)


def test_shuffled_deck_is_the_tile_set():
    game = TaluvaGame()
    for seed in range(5):
        d = game.shuffled_deck(seed)
        assert sorted(d.tolist()) == sorted(full_tile_set().tolist())
    assert np.array_equal(game.shuffled_deck(7), game.shuffled_deck(7))
    assert not np.array_equal(game.shuffled_deck(7), game.shuffled_deck(8))


# -- orientations -------------------------------------------------------------------------------


def test_directions():
    assert DIRECTIONS == ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
    assert DIRECTION_NAMES == ("E", "NE", "NW", "W", "SW", "SE")
    assert ORIENTATION_NAMES == ("N", "NW", "SW", "S", "SE", "NE")
    for d, (dq, dr) in enumerate(DIRECTIONS):
        assert hex_distance(dq, dr) == 1
        assert DIRECTIONS[(d + 3) % 6] == (-dq, -dr)


# (orientation, a hex, b hex) for the volcano on (0,0): a = bottom-left, b = bottom-right when
# the volcano points up (N); each later orientation is a 60-degree counter-clockwise turn.
ORIENTATION_HEXES = [
    ("N", (-1, 1), (0, 1)),
    ("NW", (0, 1), (1, 0)),
    ("SW", (1, 0), (1, -1)),
    ("S", (1, -1), (0, -1)),
    ("SE", (0, -1), (-1, 0)),
    ("NE", (-1, 0), (-1, 1)),
]


@pytest.mark.parametrize(("name", "a", "b"), ORIENTATION_HEXES)
def test_first_tile_orientations(name, a, b):
    game = TaluvaGame()
    s = game.new_initial_state(deck=[parse_tile("JC")])
    s.draw()
    s.apply(f"tile@0,0:{name}")
    assert hex_at(s, 0, 0) == (1, "V", ".", -1)
    assert hex_at(s, *a) == (1, "J", ".", -1)
    assert hex_at(s, *b) == (1, "C", ".", -1)
    assert int((s.cells[:, C_LEVEL] > 0).sum()) == 3
    assert s.meta[M_QMIN : M_RMAX + 1].tolist() == [
        min(0, a[0], b[0]), max(0, a[0], b[0]), min(0, a[1], b[1]), max(0, a[1], b[1])
    ]


def test_orientation_steps_are_rotations():
    for o, (_, a, b) in enumerate(ORIENTATION_HEXES):
        na, nb = ORIENTATION_HEXES[(o + 1) % 6][1:]
        assert rotate_hex(*a) == na
        assert rotate_hex(*b) == nb
        assert a == DIRECTIONS[(o + 4) % 6]
        assert b == DIRECTIONS[(o + 5) % 6]


# -- rotations and the board ---------------------------------------------------------------------


def test_rotate_hex():
    for d in range(6):
        assert rotate_hex(*DIRECTIONS[d]) == DIRECTIONS[(d + 1) % 6]
    for q, r in [(0, 0), (3, -1), (-2, 5), (7, 7)]:
        assert rotate_hex(q, r, 6) == (q, r)
        assert rotate_hex(q, r, 0) == (q, r)
        assert rotate_hex(*rotate_hex(q, r, 2), 4) == (q, r)
        assert rotate_hex(q, r, 3) == (-q, -r)
        assert hex_distance(*rotate_hex(q, r)) == hex_distance(q, r)
    assert rotate_hex(2, 0) == (2, -2)


@pytest.mark.parametrize("radius", [2, 4, 32])
def test_board_tables(radius):
    b = make_board(radius)
    assert b.num_cells == 3 * radius * radius + 3 * radius + 1
    assert b.hex(b.origin) == (0, 0)
    order = [(int(b.r[c]), int(b.q[c])) for c in range(b.num_cells)]
    assert order == sorted(order)  # row by row: r, then q, ascending
    for c in range(b.num_cells):
        q, r = b.hex(c)
        assert b.cell(q, r) == c
        for d, (dq, dr) in enumerate(DIRECTIONS):
            m = int(b.neighbours[c, d])
            if hex_distance(q + dq, r + dr) <= radius:
                assert b.hex(m) == (q + dq, r + dr)
            else:
                assert m == -1
    with pytest.raises(ValueError, match="outside the board"):
        b.cell(radius + 1, 0)
    with pytest.raises(ValueError):
        b.hex(b.num_cells)


def test_make_board_rejects_tiny():
    with pytest.raises(ValueError, match="at least 2"):
        make_board(1)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_rotation_permutation(k):
    b = make_board(6)
    perm = b.rotation_permutation(k)
    assert sorted(perm.tolist()) == list(range(b.num_cells))
    assert perm[b.origin] == b.origin
    for c in range(b.num_cells):
        assert b.hex(int(perm[c])) == rotate_hex(*b.hex(c), k)
        for d in range(6):
            m = int(b.neighbours[c, d])
            if m >= 0:
                assert int(b.neighbours[perm[c], (d + k) % 6]) == perm[m]
    p6 = np.arange(b.num_cells)
    p1 = b.rotation_permutation(1)
    for _ in range(6):
        p6 = p1[p6]
    assert p6.tolist() == list(range(b.num_cells))


def _rotated(state: TaluvaState, k: int) -> TaluvaState:
    """``state`` with the board turned ``k`` x 60 degrees about the first volcano."""
    game = state.game
    perm = game.board.rotation_permutation(k)
    cells = np.empty_like(state.cells)
    cells[perm] = state.cells
    meta = state.meta.copy()
    occ = np.flatnonzero(cells[:, C_LEVEL] > 0)
    q, r = game.board.q[occ], game.board.r[occ]
    meta[M_QMIN], meta[M_QMAX] = q.min(), q.max()
    meta[M_RMIN], meta[M_RMAX] = r.min(), r.max()
    return TaluvaState(game, cells, state.players.copy(), state.deck.copy(), meta)


def _outcomes(state: TaluvaState, perm: np.ndarray | None = None) -> set:
    """The legal actions as outcomes (hexes after rotation ``perm``), independent of ids."""
    game = state.game
    h = game.num_cells
    b = game.board
    out = set()
    for a in state.legal_actions():
        a = int(a)
        if a < 6 * h:
            v, o = divmod(a, 6)
            cells = [v, int(b.neighbours[v, (o + 4) % 6]), int(b.neighbours[v, (o + 5) % 6])]
            out.add(("tile", *(b.hex(int(perm[c])) if perm is not None else b.hex(c)
                               for c in cells)))
        elif a < 9 * h:
            c = a % h
            out.add((a // h, b.hex(int(perm[c])) if perm is not None else b.hex(c)))
        else:
            e = a - 9 * h
            buf = np.empty(h, dtype=np.int32)
            n = K.expansion_cells(state.cells, state.meta, b.neighbours, b.cell_of,
                                  state.current_player, e // 5, 2 + e % 5, buf)
            hexes = frozenset(b.hex(int(perm[c])) if perm is not None else b.hex(int(c))
                              for c in buf[:n])
            out.add(("expand", e % 5, hexes))
    return out


@pytest.mark.parametrize("seed", [11, 12])
def test_rules_invariant_under_rotation(seed):
    """Turning the island about the first volcano turns every legal action with it."""
    game = TaluvaGame()
    checked = []

    def check(state: TaluvaState) -> None:
        if state.ply % 7 not in (1, 2) or state.tiles_placed == 0:
            return
        for k in (1, 3):
            perm = game.board.rotation_permutation(k)
            rot = _rotated(state, k)
            assert rot.step == state.step in (Step.TILE, Step.BUILD)
            assert _outcomes(rot) == _outcomes(state, perm)
        checked.append(state.ply)

    play_random_game(game, seed, on_decision=check)
    assert len(checked) >= 10
