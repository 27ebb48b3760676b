"""The solo variant's set-up, score breakdown and result bands (SOLO.md; docs/solo.md).

The rules themselves are kernels (:mod:`solo_kernels`, a mode of :mod:`kernels`); this module
builds the starting position (the starting island of SOLO.md 1: the default windmill layout or
a seeded random one), names the lines of the scoring table and holds the solo methods of
``TaluvaState`` (:class:`SoloStateMethods`: ``score``, ``score_breakdown``, ``result_band``,
``placement_class``, ``solo_counts``).

A starting island is a list of placements ``(tile type, volcano (q, r), orientation)`` at
level 1, the first with its volcano on the origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from taluva_ai.errors import IllegalActionError, WrongStepError
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.hexgrid import DIRECTIONS
from taluva_ai.games.taluva.state import (
    C_LEVEL,
    M_DRAWN,
    M_FACE_UP,
    M_ISLAND,
    M_PENDING,
    M_PILE,
    M_PLACED,
    M_STACK,
    M_STEP,
    M_TILE,
    PENDING_REVEAL_SETUP,
    SOLO_STACK,
    Step,
    new_arrays,
)
from taluva_ai.games.taluva.tiles import (
    NUM_TILE_TYPES,
    NUM_TILES,
    ORIENTATION_NAMES,
    TERRAIN_LETTER,
    Terrain,
    full_tile_set,
    parse_tile,
    tile_name,
    tile_terrains,
)

if TYPE_CHECKING:
    from taluva_ai.games.taluva.game import TaluvaGame

#: A placement of the starting island: (tile type id, (q, r) of the volcano, orientation 0..5).
Placement = tuple[int, tuple[int, int], int]

#: Names of the scoring table's lines (SOLO.md 5), in the kernels' order.
SCORE_LINES: tuple[str, ...] = (
    "triangles_of_3",
    "triangles_of_6",
    "high_hexes",
    "settlement_size",
    "hut_levels",
    "terrains_in_settlements",
    "distinct_terrains",
    "settlement_count",
    "tiles_left",
    "bonus",
    "all_built",
    "temple_tower_penalty",
    "hut_penalty",
)
assert len(SCORE_LINES) == SK.NUM_SCORE_LINES

#: Words of the scoring table for :data:`SCORE_LINES` (for printed breakdowns).
SCORE_LINE_TEXT: dict[str, str] = {
    "triangles_of_3": "island: triangles of 3 (R 1, L 3)",
    "triangles_of_6": "island: triangles of 6 (J 4, C 5, V 6, S 7, R 8, L 10)",
    "high_hexes": "island: hexes without building at level 3 (3) / 4+ (8)",
    "settlement_size": "settlements of 6+ hexes (4 each)",
    "hut_levels": "hut hexes at level 2 / 3 / 4+ (2 / 6 / 12)",
    "terrains_in_settlements": "terrains with 4 / 5 / 6+ hexes in a settlement (1 / 2 / 4)",
    "distinct_terrains": "settlements of 3 / 4 / 5 terrains (1 / 2 / 5)",
    "settlement_count": "number of settlements (4: 2, 5: 5, 6: 10, 7+: 18)",
    "tiles_left": "tiles remaining (draw pile + bonus stack + set aside)",
    "bonus": "tiles taken from the bonus stack (1 each)",
    "all_built": "all 25 pieces built, none boxed (5)",
    "temple_tower_penalty": "temples and towers not on the island (-3 each)",
    "hut_penalty": "huts not on the island (-1 each)",
}

#: Result bands (SOLO.md 5): the lowest score of each.
RESULT_BANDS: tuple[tuple[str, int], ...] = (
    ("perfect", 60),
    ("very well played", 50),
    ("well played", 45),
    ("win", 40),
    ("lost", -(10**9)),
)
BAND_NAMES: tuple[str, ...] = tuple(name for name, _ in reversed(RESULT_BANDS))


def result_band(score: int) -> str:
    """``"lost"`` (below 40), ``"win"`` (40-44), ``"well played"`` (45-49), ``"very well
    played"`` (50-59) or ``"perfect"`` (60+) (SOLO.md 5)."""
    for name, low in RESULT_BANDS:
        if score >= low:
            return name
    return "lost"  # pragma: no cover


def _placement(tile: str, v: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> Placement:
    """The placement of ``tile`` with its volcano on ``v``, ``a`` hex on ``a``, ``b`` on ``b``.

    Raises:
        ValueError: the three hexes are not a tile in one of the 6 orientations.
    """
    for o in range(6):
        da, db = DIRECTIONS[(o + 4) % 6], DIRECTIONS[(o + 5) % 6]
        if (v[0] + da[0], v[1] + da[1]) == a and (v[0] + db[0], v[1] + db[1]) == b:
            return parse_tile(tile), v, o
    raise ValueError(f"{tile}: V{v} a{a} b{b} is no orientation of a tile")


#: The default starting island (SOLO.md 1, ``start_layout="windmill"``): T0, A1, A2, B1, B2,
#: C1, C2 as written there (``V(q,r) a(q,r) b(q,r)``).
WINDMILL: tuple[Placement, ...] = (
    _placement("JC", (0, 0), (-1, 1), (0, 1)),  # T0, the centre
    _placement("JS", (-3, 1), (-2, 1), (-2, 0)),  # A1
    _placement("SR", (-3, -1), (-2, -1), (-2, -2)),  # A2
    _placement("CL", (-1, 3), (-1, 2), (-2, 3)),  # B1
    _placement("LJ", (-4, 4), (-3, 3), (-4, 3)),  # B2
    _placement("RC", (1, 2), (2, 1), (1, 1)),  # C1
    _placement("CS", (2, -1), (2, 0), (3, -1)),  # C2
)


def placement_hexes(p: Placement) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """``(volcano, a, b)`` hexes of a placement."""
    _, (q, r), o = p
    da, db = DIRECTIONS[(o + 4) % 6], DIRECTIONS[(o + 5) % 6]
    return (q, r), (q + da[0], r + da[1]), (q + db[0], r + db[1])


def placement_terrains(p: Placement) -> dict[tuple[int, int], Terrain]:
    """Terrain of each of the placement's three hexes."""
    v, a, b = placement_hexes(p)
    ta, tb = tile_terrains(p[0])
    return {v: Terrain.VOLCANO, a: ta, b: tb}


def joins(p1: Placement, p2: Placement) -> tuple[int, int, bool]:
    """Contacts between two placed tiles (SOLO.md 0, per edge): ``(contacts, matching,
    V-V matching)``."""
    t1, t2 = placement_terrains(p1), placement_terrains(p2)
    n = m = vv = 0
    for (q, r), ta in t1.items():
        for dq, dr in DIRECTIONS:
            tb = t2.get((q + dq, r + dr))
            if tb is None:
                continue
            n += 1
            if ta == tb:
                m += 1
                vv += ta == Terrain.VOLCANO
    return n, m, vv > 0


def island_shape(placements: Sequence[Placement]) -> list[tuple[int, int]]:
    """The touch graph's edges ``(i, j)``, ``i < j``, of an island (tiles touch when they share
    a contact)."""
    out = []
    for i in range(len(placements)):
        for j in range(i + 1, len(placements)):
            if joins(placements[i], placements[j])[0] > 0:
                out.append((i, j))
    return out


def island_problems(placements: Sequence[Placement], shape: str = "windmill") -> list[str]:
    """What makes ``placements`` no legal starting island (SOLO.md 1): an empty list when it is
    one. Seven tiles, disjoint hexes, the touch graph a windmill (``shape="windmill"``: a centre
    touching three arm tiles, each arm touching one outer tile, nothing else) or any tree
    (``"tree"``), and every touching pair with exactly one matching contact, not V-V."""
    problems = []
    if len(placements) != 7:
        problems.append(f"a starting island has 7 tiles, got {len(placements)}")
    seen: set[tuple[int, int]] = set()
    for p in placements:
        for h in placement_hexes(p):
            if h in seen:
                problems.append(f"hex {h} is covered twice")
            seen.add(h)
    edges = island_shape(placements)
    for i, j in edges:
        _, m, vv = joins(placements[i], placements[j])
        if m != 1 or vv:
            problems.append(f"tiles {i} and {j} touch with {m} matching contacts"
                            f"{' (V-V)' if vv else ''}; a join has exactly one, not V-V")
    n = len(placements)
    if len(edges) != n - 1 or not _connected(n, edges):
        problems.append("the tiles' touch graph is not a tree")
    elif shape == "windmill" and n == 7:
        deg = [sum(i in e for e in edges) for i in range(n)]
        centre = [i for i in range(n) if deg[i] == 3]
        arms = [j for e in edges for j in e if centre and centre[0] in e and j != centre[0]]
        ok = len(centre) == 1 and sorted(deg) == [1, 1, 1, 2, 2, 2, 3] and all(
            deg[a] == 2 for a in arms)
        if not ok:
            problems.append("the touch graph is not a windmill (a centre, three arms, three "
                            "outer tiles)")
    return problems


def _connected(n: int, edges: list[tuple[int, int]]) -> bool:
    adj: dict[int, set[int]] = {i: set() for i in range(n)}
    for i, j in edges:
        adj[i].add(j)
        adj[j].add(i)
    todo, seen = [0], {0}
    while todo:
        i = todo.pop()
        for j in adj[i] - seen:
            seen.add(j)
            todo.append(j)
    return len(seen) == n


#: Candidate lists the search may build before it gives up 7 drawn tiles (then redrawn).
RANDOM_LAYOUT_BUDGET = 60
#: Candidates tried per tile and parent at each search node.
RANDOM_LAYOUT_TRIES = 3


def random_island(rng: np.random.Generator, shape: str = "windmill",
                  max_draws: int = 1000) -> tuple[list[Placement], np.ndarray]:
    """A seeded random starting island (SOLO.md 1, ``start_layout="random"``).

    The 48 tiles are shuffled and the first 7 drawn; a depth-first search whose choices are
    taken in the generator's order lays them out, the centre tile's volcano on the origin,
    each new tile touching exactly one tile already placed (its parent; arms on the centre and
    outer tiles on distinct arms for the windmill) with exactly one matching contact, not V-V.
    At most :data:`RANDOM_LAYOUT_TRIES` candidates are tried per tile and parent; when no
    layout is found within :data:`RANDOM_LAYOUT_BUDGET` candidate lists the tiles go back, the
    48 are reshuffled and 7 redrawn.

    Returns:
        ``(placements, deck)``: the island, and the deck ``int8[48]`` with the island's tiles
        first (in placement order) and the other 41 in shuffled order.

    Raises:
        RuntimeError: no layout after ``max_draws`` draws (never seen).
    """
    for _ in range(max_draws):
        deck = rng.permutation(full_tile_set()).astype(np.int8)
        found = _search_layout([int(t) for t in deck[:7]], rng, shape)
        if found is not None:
            order, placements = found
            island = np.array([deck[i] for i in order], dtype=np.int8)
            return placements, np.concatenate([island, deck[7:]]).astype(np.int8)
    raise RuntimeError(f"no starting island found in {max_draws} draws")


def _search_layout(tiles: list[int], rng: np.random.Generator,
                   shape: str) -> tuple[list[int], list[Placement]] | None:
    """Depth-first search for a layout of the 7 ``tiles`` (see :func:`random_island`);
    returns the tiles' indices in placement order and the placements, or None."""
    budget = [RANDOM_LAYOUT_BUDGET]
    # windmill: the k-th tile placed joins tile windmill_parent[k] (arms 1-3, outer 4-6)
    windmill_parent = [-1, 0, 0, 0, 1, 2, 3]
    ring = [(dq, dr) for dq in range(-3, 4) for dr in range(-3, 4)
            if max(abs(dq), abs(dr), abs(dq + dr)) <= 3]

    def candidates(tile: int, parent: int, placed: list[Placement],
                   owner: dict[tuple[int, int], int]) -> list[Placement]:
        """Placements of ``tile`` touching exactly the placed tile ``parent``, with exactly one
        matching contact, not V-V (``owner``: placed hex -> tile index), in random order."""
        out = []
        pq, pr = placed[parent][1]
        for dq, dr in ring:
            for o in range(6):
                p: Placement = (tile, (pq + dq, pr + dr), o)
                hexes = placement_hexes(p)
                if any(h in owner for h in hexes):
                    continue
                touched = {owner.get((q + eq, r + er), -1) for q, r in hexes
                           for eq, er in DIRECTIONS} - {-1}
                if touched != {parent}:
                    continue
                _, m, vv = joins(placed[parent], p)
                if m == 1 and not vv:
                    out.append(p)
        return [out[i] for i in rng.permutation(len(out))]

    def go(placed: list[Placement], used: list[int],
           owner: dict[tuple[int, int], int]) -> list[Placement] | None:
        k = len(placed)
        if k == 7:
            return placed
        parents = [windmill_parent[k]] if shape == "windmill" else \
            [int(x) for x in rng.permutation(k)]
        for i in (int(x) for x in rng.permutation(7)):
            if i in used:
                continue
            for parent in parents:
                budget[0] -= 1
                if budget[0] < 0:
                    return None
                for p in candidates(tiles[i], parent, placed, owner)[:RANDOM_LAYOUT_TRIES]:
                    grown = dict(owner)
                    grown.update({h: k for h in placement_hexes(p)})
                    res = go([*placed, p], [*used, i], grown)
                    if res is not None or budget[0] < 0:
                        return res
        return None

    for first in (int(x) for x in rng.permutation(7)):
        for o in (int(x) for x in rng.permutation(6)):
            p0: Placement = (tiles[first], (0, 0), o)
            res = go([p0], [first], {h: 0 for h in placement_hexes(p0)})
            if res is not None:
                return _order_of(tiles, res), res
            if budget[0] < 0:
                return None
    return None


def _order_of(tiles: list[int], placements: list[Placement]) -> list[int]:
    """Indices into ``tiles`` of the placements' tiles (each index once)."""
    left = list(range(len(tiles)))
    order = []
    for t, _, _ in placements:
        i = next(i for i in left if tiles[i] == t)
        left.remove(i)
        order.append(i)
    return order


def setup_arrays(game: TaluvaGame, placements: Sequence[Placement], deck: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The arrays of a solo game at its first chance node (the face-up tile is turned up):
    ``placements`` at level 1, their tiles ``deck[:len(placements)]``, the bonus stack
    (10 tiles) and the draw pile (the rest) face down.

    Raises:
        ValueError: the deck does not start with the placements' tiles, or two placements
            share a hex or lie off the board.
    """
    rules, nbr, _, hexqr, _ = game.kernel_args()
    k = len(placements)
    if not 1 <= k <= NUM_TILES - SOLO_STACK - 1:
        raise ValueError(f"a starting island has 1 to {NUM_TILES - SOLO_STACK - 1} tiles, "
                         f"got {k}")
    if [int(t) for t in deck[:k]] != [int(p[0]) for p in placements]:
        raise ValueError("the deck must start with the starting island's tiles")
    cells, players, d, meta = new_arrays(1, deck, game.num_cells, False)
    board = game.board
    for i, p in enumerate(placements):
        cs = []
        for q, r in placement_hexes(p):
            try:
                cs.append(board.cell(q, r))
            except ValueError as e:
                raise ValueError(f"starting island tile {i}: {e}") from None
        if any(cells[c, C_LEVEL] for c in cs):
            raise ValueError(f"starting island tile {i} ({_name(p)}) covers a hex already on "
                             "the table")
        meta[M_PLACED] = i
        K.place_tile_cells(cells, players, meta, rules, nbr, hexqr, cs[0] * 6 + int(p[2]),
                           int(p[0]))
    meta[M_PLACED] = k
    meta[M_DRAWN] = k
    meta[M_ISLAND] = k
    meta[M_STACK] = SOLO_STACK
    meta[M_PILE] = NUM_TILES - k - SOLO_STACK
    meta[M_FACE_UP] = -1
    meta[M_STEP] = Step.CHANCE
    meta[M_PENDING] = PENDING_REVEAL_SETUP
    return cells, players, d, meta


def _name(p: Placement) -> str:
    from taluva_ai.games.taluva.tiles import tile_name

    (q, r), o = p[1], p[2]
    return f"{tile_name(p[0])}@{q},{r}:{ORIENTATION_NAMES[o]}"


def solo_deck(island_tiles: Sequence[int], rest: np.ndarray | Sequence[int] | None,
              rng: np.random.Generator) -> np.ndarray:
    """``int8[48]``: the island's tiles, then ``rest`` (the draw order after set-up, completed
    by the remaining tiles in type order) or, when ``rest`` is None, the other tiles shuffled.

    Raises:
        ValueError: more copies of a tile type than the set holds, or an id outside 0..24.
    """
    counts = np.bincount(full_tile_set(), minlength=NUM_TILE_TYPES)
    head = np.asarray(list(island_tiles), dtype=np.int64)
    tail = np.asarray([] if rest is None else rest)
    if tail.size and (tail.ndim != 1 or tail.dtype.kind not in "iu"):
        raise ValueError("a deck is a 1-D sequence of integer tile type ids 0..24")
    tail = tail.astype(np.int64)
    both = np.concatenate([head, tail])
    if both.size and (both.min() < 0 or both.max() >= NUM_TILE_TYPES):
        raise ValueError("tile type ids must lie in 0..24")
    left = counts - np.bincount(both, minlength=NUM_TILE_TYPES)
    if (left < 0).any():
        bad = [tile_name(int(i)) for i in np.flatnonzero(left < 0)]
        raise ValueError(f"the island and deck hold more copies than the tile set of: "
                         f"{', '.join(bad)}")
    others = np.repeat(np.arange(NUM_TILE_TYPES), left)
    if rest is None:
        others = rng.permutation(others)
    return np.concatenate([head, tail, others]).astype(np.int8)


def parse_island(island: Sequence[Any]) -> list[Placement]:
    """Placements from ``(tile, (q, r), orientation)`` triples, where ``tile`` is a type id or
    a name such as ``"JC"`` and ``orientation`` 0..5 or one of ``N NW SW S SE NE``; or from
    strings ``"JC@q,r:O"``.

    Raises:
        ValueError: a malformed entry (the message names it).
    """
    out: list[Placement] = []
    for i, item in enumerate(island):
        try:
            if isinstance(item, str):
                name, _, rest = item.partition("@")
                at, _, o_s = rest.partition(":")
                q_s, _, r_s = at.partition(",")
                tile: object = name
                vq, vr, o = int(q_s), int(r_s), o_s
            else:
                tile, (vq, vr), o = item
            t = parse_tile(tile) if isinstance(tile, str) else int(tile)  # type: ignore[call-overload]
            if not 0 <= t < NUM_TILE_TYPES:
                raise ValueError(f"tile type {t} out of range 0..24")
            oi = ORIENTATION_NAMES.index(o) if isinstance(o, str) else int(o)
            if not 0 <= oi < 6:
                raise ValueError(f"orientation {o!r} out of range")
            out.append((t, (int(vq), int(vr)), oi))
        except (TypeError, ValueError) as e:
            raise ValueError(f"starting island entry {i} ({item!r}): expected (tile, (q, r), "
                             f"orientation) or 'JC@q,r:O': {e}") from None
    return out


class SoloStateMethods:
    """The solo variant's methods of :class:`~taluva_ai.games.taluva.game.TaluvaState` (its
    base class): the score and its breakdown (SOLO.md 5), the result band, the class of a
    placement (3.1) and the public counters. Each raises ``ValueError`` in a game that is not
    solo."""

    game: TaluvaGame
    cells: np.ndarray
    players: np.ndarray
    meta: np.ndarray

    def legal_actions(self) -> np.ndarray:
        raise NotImplementedError

    def parse_action(self, text: str) -> int:
        raise NotImplementedError

    def _solo_only(self, what: str) -> None:
        if not self.game.rules.solo:
            raise ValueError(f"{what} belongs to the solo variant (a game with solo=True)")

    def score(self) -> int:
        """Solo: the score of the position as if the game ended now (the running score;
        the final score once the game is over), SOLO.md 5.

        Raises:
            ValueError: not a solo game.
        """
        return sum(self.score_breakdown().values())

    def score_breakdown(self) -> dict[str, int]:
        """Solo: the score by line of the scoring table (SOLO.md 5), in table order: keys
        :data:`solo.SCORE_LINES` (``"triangles_of_3"`` ... ``"hut_penalty"``), values in
        points; they add up to :meth:`score`.

        Raises:
            ValueError: not a solo game.
        """
        self._solo_only("score_breakdown()")
        rules, nbr, cell_of, _, _ = self.game.kernel_args()
        lines = np.zeros(SK.NUM_SCORE_LINES, dtype=np.int64)
        SK.score(self.cells, self.players, self.meta, rules, nbr, cell_of, lines)
        return {name: int(v) for name, v in zip(SCORE_LINES, lines, strict=True)}

    def result_band(self) -> str:
        """Solo: the band of :meth:`score`: ``"lost"`` (below 40), ``"win"`` (40-44), ``"well
        played"`` (45-49), ``"very well played"`` (50-59), ``"perfect"`` (60+).

        Raises:
            ValueError: not a solo game.
        """
        return result_band(self.score())

    def placement_class(self, action: int | str) -> dict[str, Any]:
        """Solo: the contacts and the class of a level-1 placement of the tile in hand
        (SOLO.md 0, 3.1), without applying it: ``{"matching": M, "non_matching": U,
        "terrains": T (letters, e.g. "JV"), "volcano_contacts": V-V contacts left out of M
        (volcano_in_T=False), "class": 1-4}``.

        Raises:
            ValueError: not a solo game; WrongStepError: not at a tile step;
            IllegalActionError: not a legal level-1 placement here.
        """
        self._solo_only("placement_class()")
        if self.meta[M_STEP] != Step.TILE:
            raise WrongStepError(action, "placement_class() needs the tile step")
        a = self.parse_action(action) if isinstance(action, str) else int(action)
        legal = self.legal_actions()
        if a not in set(legal.tolist()) or a >= 6 * self.game.num_cells:
            raise IllegalActionError(self.game.action_to_string(a) if a >= 0 else str(a),
                                     "not a legal placement of the tile in hand")
        v, o = divmod(a, 6)
        if self.cells[v, C_LEVEL] != 0:
            raise IllegalActionError(self.game.action_to_string(a),
                                     "classes are for level-1 placements (SOLO.md 3.1)")
        rules, nbr, _, hexqr, _ = self.game.kernel_args()
        cells, players, meta = self.cells.copy(), self.players.copy(), self.meta.copy()
        K.place_tile_cells(cells, players, meta, rules, nbr, hexqr, a, int(meta[M_TILE]))
        m, u, tmask, vv = SK.contacts(cells, rules, nbr, v, nbr[v, (o + 4) % 6],
                                      nbr[v, (o + 5) % 6])
        letters = "".join(TERRAIN_LETTER[Terrain(t)] for t in (2, 3, 4, 5, 6, 1)
                          if (tmask >> t) & 1)
        return {"matching": int(m), "non_matching": int(u), "terrains": letters,
                "volcano_contacts": int(vv), "class": int(SK.contact_class(rules, m, u, tmask))}

    def solo_counts(self) -> dict[str, Any]:
        """Solo: the public counters of the position: ``draw_pile`` (tiles in it, those put
        under it included), ``under_pile`` (known tiles put under it, ``unplaceable="bottom"``),
        ``bonus_stack`` (the face-up tile included), ``face_up`` (its name, or None),
        ``set_aside``, ``boxed`` (``{"huts", "temples", "towers"}``), ``tiles_this_turn``,
        ``source`` of the tile in hand (``"regular"``, ``"pile"``, ``"faceup"``),
        ``bonus_offer`` (the sources of the bonus step), ``last_class`` (class 1-4 of the last
        level-1 placement this turn, 0 for none or a higher one), ``island_tiles``.

        Raises:
            ValueError: not a solo game.
        """
        self._solo_only("solo_counts()")
        m = self.meta
        face = int(m[S.M_FACE_UP])
        src = int(m[S.M_BONUS_SRC]) if self.meta[M_STEP] == Step.BONUS else 0
        return {
            "draw_pile": int(m[S.M_PILE]),
            "under_pile": int(m[S.M_BOTTOM]),
            "bonus_stack": int(m[S.M_STACK]),
            "face_up": tile_name(face) if face >= 0 else None,
            "set_aside": int(m[S.M_ASIDE]),
            "boxed": {"huts": int(m[S.M_BOXED_HUTS]), "temples": int(m[S.M_BOXED_TEMPLES]),
                      "towers": int(m[S.M_BOXED_TOWERS])},
            "tiles_this_turn": int(m[S.M_TURN_TILES]),
            "source": ("regular", "pile", "faceup")[int(m[S.M_SOURCE])],
            "bonus_offer": [name for bit, name in ((S.SRC_BIT_PILE, "pile"),
                                                   (S.SRC_BIT_FACE_UP, "faceup")) if src & bit],
            "last_class": int(m[S.M_LAST_CLASS]),
            "island_tiles": int(m[S.M_ISLAND]),
        }
