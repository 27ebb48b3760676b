"""Observation planes for networks, the view's action ids, and the 6 rotations (docs/encoding.md).

The engine's board is large (``board_radius`` 32); a network sees a hexagonal **view** of radius
``R`` (``view_radius``, default :data:`DEFAULT_VIEW_RADIUS`) stored in a square array of side
``S = 2R + 1``: view hex ``(dq, dr)`` sits at ``[dr + R, dq + R]``. The view is **recentred on
the island** at every observation (the rules are translation invariant): its centre is the
hex that minimises the hex radius of the smallest view holding every hex on the table
(:func:`view_center`). Pixels outside the hexagon (the square's corners) are always zero except
in no plane; the ``valid`` plane marks the hexagon.

Planes, ``float32[C, S, S]`` from the view of ``player`` (normally the player to move), players
ordered from that player (slot ``j`` is seat ``(player + j) % n``), ``n`` = number of seats:

====================  ======  ==================================================================
planes                count   content
====================  ======  ==================================================================
valid                 1       1 on the view's hexes, 0 in the square's corners
level                 1       stack height of the hex (0 = empty table), raw
terrain               6       one-hot top terrain: volcano, jungle, clearing, sand, rock, lake
same_tile             6       1 in plane ``d`` when the neighbour in direction ``d`` (E NE NW W
                              SW SE) shows the same tile on top (eruption rule 3 reads this)
orientation           6       one-hot orientation (N NW SW S SE NE) of a tile whose three hexes
                              are all still on top, on those three hexes
huts                  n       per player slot: huts on the hex (= its level), raw
temple                n       per player slot: 1 where a temple stands
tower                 n       per player slot: 1 where a tower stands
settlement            3       on every building hex: its settlement's size (hexes, raw), has a
                              temple (0/1), has a tower (0/1)
step                  1       constant: 1 in the build step, 0 in the tile step
tile_a, tile_b        5 + 5   constant: one-hot terrain (J C S R L) of the tile in hand (tile
                              step) or of the tile just placed (build step); 0 elsewhere
supply                3n      constant: per player slot huts/20, temples/3, towers/2 in supply
out                   n       constant: 1 for a player slot that is eliminated (or finished)
tiles_left            1       constant: tiles still to be placed / 48
====================  ======  ==================================================================

So ``C = 35 + 7n`` (49 for 2 players). The same global facts are also given as a vector by
:func:`global_features` (``float32[4n + 12]``: supply 3n, out n, tiles_left, step, tile_a 5,
tile_b 5).

The solo variant (``n = 1``, docs/solo.md) appends :data:`NUM_SOLO_PLANES` constant planes
(:data:`SOLO_PLANE_NAMES`): the face-up tile's terrains (one-hot 5 + 5), the draw pile / 31,
the bonus stack / 10, the tiles set aside / 10, the tiles taken this turn / 3, the bonus step,
the box step, the source of the tile in hand (draw pile, face-up), the sources of the bonus
on offer (draw pile, face-up), the boxed huts / 20, temples / 3, towers / 2, and the running
score as ``clip((score + 100) / 200, 0, 1)``: ``C = 42 + 24 = 66``. Its action ids run 6
further: ``14 S^2 + k`` for the engine's ``14 H + k`` (bonus from the draw pile, the face-up
tile, stop; box a hut, temple, tower).

Action ids of the view (``A = 14 S^2``): ``id = channel * S^2 + (dr + R) * S + (dq + R)`` where
``channel`` is ``0..5`` a tile placement with its volcano on the pixel and orientation
``channel``; ``6`` hut, ``7`` temple, ``8`` tower on the pixel; ``9..13`` expand the settlement
whose smallest hex (reading order, as in the engine) is the pixel into J C S R L. A legal engine
action whose hex (volcano hex, build hex, settlement's smallest hex) lies outside the view has
no view id: it is masked, and counted as "outside" (docs/encoding.md gives the measured rates).

Rotations: turning the view ``k x 60`` degrees counter-clockwise about its centre permutes the
pixels (:func:`pixel_permutation`), the ``same_tile`` planes (``d -> d + k``) and the
``orientation`` planes (``o -> o + k``), and action ids by the pixel permutation and the
orientation channels, except expansion ids, whose pixel is a settlement's smallest hex: their
permutation depends on the position (:func:`action_permutation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.hexgrid import DIRECTIONS, hex_distance, rotate_hex
from taluva_ai.games.taluva.rules import R_DECK_SIZE, R_PLAYERS, R_SOLO, R_TILE_PREVIEW

if TYPE_CHECKING:
    from taluva_ai.games.taluva.game import TaluvaState

#: Default view radius (measured: docs/encoding.md, "Placing the view").
DEFAULT_VIEW_RADIUS = 13

# plane offsets (the per-player blocks follow, see plane_names)
PL_VALID = 0
PL_LEVEL = 1
PL_TERRAIN = 2  # 6 planes: volcano, J, C, S, R, L
PL_SAME_TILE = 8  # 6 planes by direction
PL_ORIENT = 14  # 6 planes by orientation
PL_PLAYERS = 20  # huts n, temple n, tower n
NUM_ACTION_CHANNELS = 14
CH_HUT, CH_TEMPLE, CH_TOWER, CH_EXPAND = 6, 7, 8, 9
#: The solo variant's constant planes, after the 42 of one seat (module docstring).
SOLO_PLANE_NAMES: tuple[str, ...] = (
    *(f"solo/face_up_a/{t}" for t in "JCSRL"), *(f"solo/face_up_b/{t}" for t in "JCSRL"),
    "solo/draw_pile", "solo/bonus_stack", "solo/set_aside", "solo/tiles_this_turn",
    "solo/bonus_step", "solo/box_step", "solo/source_pile", "solo/source_faceup",
    "solo/offer_pile", "solo/offer_faceup", "solo/boxed_huts", "solo/boxed_temples",
    "solo/boxed_towers", "solo/score",
)
NUM_SOLO_PLANES = 24
#: The solo variant's extra action ids (after ``14 S^2``).
NUM_SOLO_ACTIONS = 6


def num_planes(num_players: int, solo: bool = False) -> int:
    """``C = 35 + 7 n`` planes for ``n`` seats; ``66`` for the solo variant."""
    return 35 + 7 * num_players + (NUM_SOLO_PLANES if solo else 0)


def num_globals(num_players: int) -> int:
    """Length of :func:`global_features`: ``4 n + 12``."""
    return 4 * num_players + 12


def plane_names(num_players: int, solo: bool = False) -> list[str]:
    """Name of every plane, in order (e.g. ``"huts/1"`` is the huts of the next player)."""
    n = num_players
    names = ["valid", "level"]
    names += [f"terrain/{t}" for t in "VJCSRL"]
    names += [f"same_tile/{d}" for d in ("E", "NE", "NW", "W", "SW", "SE")]
    names += [f"orientation/{o}" for o in ("N", "NW", "SW", "S", "SE", "NE")]
    for kind in ("huts", "temple", "tower"):
        names += [f"{kind}/{j}" for j in range(n)]
    names += ["settlement/size", "settlement/temple", "settlement/tower", "step"]
    names += [f"tile_a/{t}" for t in "JCSRL"] + [f"tile_b/{t}" for t in "JCSRL"]
    for kind in ("supply_huts", "supply_temples", "supply_towers"):
        names += [f"{kind}/{j}" for j in range(n)]
    names += [f"out/{j}" for j in range(n)]
    names += ["tiles_left"]
    if solo:
        names += list(SOLO_PLANE_NAMES)
    assert len(names) == num_planes(n, solo)
    return names


@dataclass(frozen=True, eq=False)
class View:
    """Geometry of a view of radius ``radius`` (tables built once per radius).

    Attributes:
        radius: ``R``.
        side: ``S = 2R + 1``.
        num_actions: ``14 S^2``.
        valid: ``bool[S, S]``, the hexagon.
        dq, dr: ``int32[S*S]`` offsets of each pixel from the centre (garbage where invalid).
    """

    radius: int
    side: int
    num_actions: int
    valid: np.ndarray
    dq: np.ndarray
    dr: np.ndarray

    def pixel(self, dq: int, dr: int) -> int:
        """Pixel index ``(dr + R) * S + (dq + R)`` of view hex ``(dq, dr)``.

        Raises:
            ValueError: the hex lies outside the view.
        """
        if hex_distance(dq, dr) > self.radius:
            raise ValueError(f"hex ({dq},{dr}) lies outside the view of radius {self.radius}")
        return (dr + self.radius) * self.side + dq + self.radius


@lru_cache(maxsize=16)
def make_view(radius: int = DEFAULT_VIEW_RADIUS) -> View:
    """Build (and cache) the view of the given radius.

    Raises:
        ValueError: ``radius`` outside 2..40.
    """
    if not isinstance(radius, (int, np.integer)) or not 2 <= radius <= 40:
        raise ValueError(f"view_radius must be an integer in 2..40, got {radius!r}")
    radius = int(radius)
    s = 2 * radius + 1
    rows, cols = np.divmod(np.arange(s * s), s)
    dr = (rows - radius).astype(np.int32)
    dq = (cols - radius).astype(np.int32)
    valid = ((np.abs(dq) + np.abs(dr) + np.abs(dq + dr)) // 2 <= radius).reshape(s, s)
    for a in (valid, dq, dr):
        a.setflags(write=False)
    return View(radius, s, NUM_ACTION_CHANNELS * s * s, valid, dq, dr)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def view_center(cells, meta, cell_of):
    """``(qc, rc)``: the view centre, the hex minimising the largest hex distance to any hex on
    the table (ties: smallest ``rc``, then ``qc``); ``(0, 0)`` on an empty table."""
    if meta[S.M_PLACED] == 0:
        return 0, 0
    radius = (cell_of.shape[0] - 1) // 2
    big = 1 << 20
    xmin, xmax, ymin, ymax, zmin, zmax = big, -big, big, -big, big, -big
    for r in range(meta[S.M_RMIN], meta[S.M_RMAX] + 1):
        for q in range(meta[S.M_QMIN], meta[S.M_QMAX] + 1):
            c = cell_of[q + radius, r + radius]
            if c >= 0 and cells[c, S.C_LEVEL] > 0:
                y = -q - r
                xmin = min(xmin, q)
                xmax = max(xmax, q)
                ymin = min(ymin, y)
                ymax = max(ymax, y)
                zmin = min(zmin, r)
                zmax = max(zmax, r)
    q0 = (xmin + xmax) // 2
    r0 = (zmin + zmax) // 2
    best = big
    bq = q0
    br = r0
    for rc in range(r0 - 1, r0 + 3):
        for qc in range(q0 - 1, q0 + 3):
            yc = -qc - rc
            need = max(xmax - qc, qc - xmin, ymax - yc, yc - ymin, zmax - rc, rc - zmin)
            if need < best:
                best = need
                bq = qc
                br = rc
    return bq, br


@njit(cache=True)
def engine_to_view(action, ncell, hexqr, qc, rc, vr):
    """View id of engine tile/build id ``action`` for a view of radius ``vr`` centred on
    ``(qc, rc)``; -1 when its hex lies outside the view. The solo variant's ids ``14 H + k``
    map to ``14 S^2 + k``."""
    s = 2 * vr + 1
    if action >= 14 * ncell:
        return NUM_ACTION_CHANNELS * s * s + action - 14 * ncell
    if action < 6 * ncell:
        c = action // 6
        ch = action % 6
    elif action < 9 * ncell:
        c = action % ncell
        ch = action // ncell
    else:
        e = action - 9 * ncell
        c = e // 5
        ch = CH_EXPAND + e % 5
    dq = hexqr[c, 0] - qc
    dr = hexqr[c, 1] - rc
    if (abs(dq) + abs(dr) + abs(dq + dr)) // 2 > vr:
        return -1
    return ch * s * s + (dr + vr) * s + dq + vr


@njit(cache=True)
def view_to_engine(vid, cell_of, qc, rc, vr):
    """Engine id of view id ``vid`` (inverse of :func:`engine_to_view`); -1 when ``vid`` is out
    of range or its pixel lies outside the view's hexagon or the engine's board."""
    s = 2 * vr + 1
    if vid < 0 or vid >= NUM_ACTION_CHANNELS * s * s:
        return -1
    ch = vid // (s * s)
    pix = vid % (s * s)
    dr = pix // s - vr
    dq = pix % s - vr
    if (abs(dq) + abs(dr) + abs(dq + dr)) // 2 > vr:
        return -1
    radius = (cell_of.shape[0] - 1) // 2
    q = qc + dq
    r = rc + dr
    if (abs(q) + abs(r) + abs(q + r)) // 2 > radius:
        return -1
    c = cell_of[q + radius, r + radius]
    ncell = 3 * radius * radius + 3 * radius + 1
    if ch < 6:
        return c * 6 + ch
    if ch < CH_EXPAND:
        return ch * ncell + c
    return 9 * ncell + c * 5 + (ch - CH_EXPAND)


@njit(cache=True)
def encode_into(cells, players, meta, rules, nbr, cell_of, hexqr, origin, player, vr, qc, rc,
                valid, obs, mask, buf, label):
    """Write the planes (``obs float32[C, S, S]``, overwritten) of the position from the view of
    seat ``player``, and the view's legal mask (``mask int8[14 S^2]``, overwritten; solo
    ``int8[14 S^2 + 6]`` and 24 more planes) of the player to move, for a view of radius ``vr``
    centred on ``(qc, rc)``.

    Args:
        valid: ``bool[S, S]`` the view's hexagon.
        buf: ``int64[>= 8H]`` scratch; label: ``int32[H]`` scratch.

    Returns:
        Number of legal engine actions that lie outside the view (masked).
    """
    encode_planes(cells, players, meta, rules, nbr, cell_of, player, vr, qc, rc, valid, obs,
                  label, True)
    mask[:] = 0
    step = meta[S.M_STEP]
    # legal mask
    outside = 0
    if step == K.S_TILE or step == K.S_BUILD or step == SK.S_BONUS or step == SK.S_BOX:
        nl = K.legal_actions(cells, players, meta, rules, nbr, cell_of, origin, buf)
        ncell = cells.shape[0]
        for j in range(nl):
            v = engine_to_view(buf[j], ncell, hexqr, qc, rc, vr)
            if v >= 0:
                mask[v] = 1
            else:
                outside += 1
    return outside


@njit(cache=True)
def encode_planes(cells, players, meta, rules, nbr, cell_of, player, vr, qc, rc, valid, obs,
                  label, constants):
    """Write the planes of :func:`encode_into` (``obs float32[>= C, S, S]``, overwritten): all
    of them with ``constants``, else only the board planes before the constant ones (``obs``
    may then hold just those: ``float32[23 + 3n, S, S]``, the network's spatial input;
    :func:`board_planes`).

    Args:
        label: ``int32[H]`` scratch.
    """
    board_planes(cells, players, meta, rules, nbr, cell_of, player, vr, qc, rc, valid, obs,
                 label)
    if constants:
        _constant_planes(cells, players, meta, rules, nbr, cell_of, player, vr, valid, obs)


@njit(cache=True)
def board_planes(cells, players, meta, rules, nbr, cell_of, player, vr, qc, rc, valid, obs,
                 label):
    """The board planes of :func:`encode_planes` (``obs`` overwritten, the constant planes
    zero): the network's spatial input. The compiled search calls this, not
    :func:`encode_planes`, so that it does not compile the constant planes (the solo variant's
    score among them)."""
    n = rules[R_PLAYERS]
    s = 2 * vr + 1
    radius = (cell_of.shape[0] - 1) // 2
    obs[:] = 0.0
    # the same-settlement labels of every seat, for the settlement planes
    scan = np.empty(cells.shape[0], dtype=np.int32)
    nscan = K._scan_cells(meta, cell_of, np.int64(0), scan)
    size = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
    stemples = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
    stowers = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
    canon = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
    K.settlements(cells, nbr, scan, nscan, np.int64(-1), label, size, stemples, stowers, canon)
    pl_sett = PL_PLAYERS + 3 * n
    for row in range(s):
        for col in range(s):
            if not valid[row, col]:
                continue
            obs[PL_VALID, row, col] = 1.0
            q = qc + col - vr
            r = rc + row - vr
            if (abs(q) + abs(r) + abs(q + r)) // 2 > radius:
                continue
            c = cell_of[q + radius, r + radius]
            lv = cells[c, S.C_LEVEL]
            if lv == 0:
                continue
            obs[PL_LEVEL, row, col] = lv
            terr = cells[c, S.C_TERRAIN]
            obs[PL_TERRAIN + terr - 1, row, col] = 1.0
            t = cells[c, S.C_TILE]
            vol = -1
            if terr == K.VOLCANO:
                vol = c
            for d in range(6):
                m = nbr[c, d]
                if m >= 0 and cells[m, S.C_LEVEL] > 0 and cells[m, S.C_TILE] == t:
                    obs[PL_SAME_TILE + d, row, col] = 1.0
                    if cells[m, S.C_TERRAIN] == K.VOLCANO:
                        vol = m
            if vol >= 0:
                for o in range(6):
                    a = nbr[vol, (o + 4) % 6]
                    b = nbr[vol, (o + 5) % 6]
                    if a >= 0 and b >= 0 and cells[a, S.C_TILE] == t and cells[b, S.C_TILE] == t \
                            and cells[a, S.C_LEVEL] > 0 and cells[b, S.C_LEVEL] > 0:
                        obs[PL_ORIENT + o, row, col] = 1.0
                        break
            bld = cells[c, S.C_BUILDING]
            if bld != 0:
                slot = (cells[c, S.C_OWNER] - player + n) % n
                if bld == K.HUT:
                    obs[PL_PLAYERS + slot, row, col] = lv
                elif bld == K.TEMPLE:
                    obs[PL_PLAYERS + n + slot, row, col] = 1.0
                else:
                    obs[PL_PLAYERS + 2 * n + slot, row, col] = 1.0
                sl = label[c]
                obs[pl_sett, row, col] = size[sl]
                if stemples[sl] > 0:
                    obs[pl_sett + 1, row, col] = 1.0
                if stowers[sl] > 0:
                    obs[pl_sett + 2, row, col] = 1.0


@njit(cache=True)
def _constant_planes(cells, players, meta, rules, nbr, cell_of, player, vr, valid, obs):
    """The constant planes of :func:`encode_planes` (the globals spread over the view)."""
    n = rules[R_PLAYERS]
    s = 2 * vr + 1
    step = meta[S.M_STEP]
    g = PL_PLAYERS + 3 * n + 3
    tile = -1
    if step == K.S_TILE:
        tile = meta[S.M_TILE]
    elif step == K.S_BUILD and meta[S.M_PLACED] > 0:
        # the tile just placed (kept in meta until the build)
        tile = meta[S.M_TILE]
    vals = np.zeros(12 + 4 * n, dtype=np.float32)
    _globals(players, meta, rules, player, tile, vals)
    # vals: supply 3n, out n, tiles_left, step, tile_a 5, tile_b 5
    # planes: step, tile_a 5, tile_b 5, supply 3n, out n, tiles_left
    order = np.empty(12 + 4 * n, dtype=np.int64)
    k = 0
    order[k] = 4 * n + 1  # step
    k += 1
    for j in range(10):
        order[k] = 4 * n + 2 + j
        k += 1
    for j in range(4 * n):
        order[k] = j
        k += 1
    order[k] = 4 * n  # tiles_left
    for j in range(12 + 4 * n):
        v = vals[order[j]]
        if v != 0.0:
            for row in range(s):
                for col in range(s):
                    if valid[row, col]:
                        obs[g + j, row, col] = v
    if rules[R_SOLO] != 0:
        svals = np.zeros(NUM_SOLO_PLANES, dtype=np.float32)
        solo_globals(cells, players, meta, rules, nbr, cell_of, svals)
        g2 = g + 12 + 4 * n
        for j in range(NUM_SOLO_PLANES):
            v = svals[j]
            if v != 0.0:
                for row in range(s):
                    for col in range(s):
                        if valid[row, col]:
                            obs[g2 + j, row, col] = v


@njit(cache=True)
def solo_globals(cells, players, meta, rules, nbr, cell_of, out):
    """``out float32[NUM_SOLO_PLANES]``: the solo planes' values (module docstring)."""
    out[:] = 0.0
    face = meta[S.M_FACE_UP]
    if face >= 0:
        out[face // 5] = 1.0
        out[5 + face % 5] = 1.0
    out[10] = meta[S.M_PILE] / 31.0
    out[11] = meta[S.M_STACK] / 10.0
    out[12] = meta[S.M_ASIDE] / 10.0
    out[13] = meta[S.M_TURN_TILES] / 3.0
    step = meta[S.M_STEP]
    if step == SK.S_BONUS:
        out[14] = 1.0
        if meta[S.M_BONUS_SRC] & S.SRC_BIT_PILE:
            out[18] = 1.0
        if meta[S.M_BONUS_SRC] & S.SRC_BIT_FACE_UP:
            out[19] = 1.0
    elif step == SK.S_BOX:
        out[15] = 1.0
    if step == K.S_TILE:
        if meta[S.M_SOURCE] == S.SOURCE_PILE:
            out[16] = 1.0
        elif meta[S.M_SOURCE] == S.SOURCE_FACE_UP:
            out[17] = 1.0
    out[20] = meta[S.M_BOXED_HUTS] / 20.0
    out[21] = meta[S.M_BOXED_TEMPLES] / 3.0
    out[22] = meta[S.M_BOXED_TOWERS] / 2.0
    sc = SK.running_score(cells, players, meta, rules, nbr, cell_of)
    out[23] = min(max((sc + 100.0) / 200.0, 0.0), 1.0)


@njit(cache=True)
def _globals(players, meta, rules, player, tile, out):
    """``out float32[4n + 12]``: supply (huts/20, temples/3, towers/2 per slot), out per slot,
    tiles_left/48, step (1 build), tile_a one-hot 5, tile_b one-hot 5."""
    n = rules[R_PLAYERS]
    out[:] = 0.0
    for j in range(n):
        p = (player + j) % n
        out[j] = players[p, S.P_HUTS] / 20.0
        out[n + j] = players[p, S.P_TEMPLES] / 3.0
        out[2 * n + j] = players[p, S.P_TOWERS] / 2.0
        if players[p, S.P_STATUS] != 0:
            out[3 * n + j] = 1.0
    left = rules[R_DECK_SIZE] - meta[S.M_DRAWN]
    if rules[R_TILE_PREVIEW] != 0:
        for p in range(n):
            if players[p, S.P_HAND] >= 0:
                left += 1
    elif meta[S.M_STEP] == K.S_TILE:
        left += 1
    out[4 * n] = left / 48.0
    if meta[S.M_STEP] == K.S_BUILD:
        out[4 * n + 1] = 1.0
    if tile >= 0:
        out[4 * n + 2 + tile // 5] = 1.0
        out[4 * n + 7 + tile % 5] = 1.0


#: :func:`site_globals` counts sites up to this many (more read as this many)
SITES_CAP = 4


@njit(cache=True)
def site_globals(cells, meta, rules, nbr, cell_of, player, out):
    """``out float32[2n]``: for each player slot ``j`` (seat ``(player + j) % n``), the hexes
    where it could build a temple now, then the same for towers (:func:`~.kernels.build_sites`,
    whatever its supply), each as ``min(count, SITES_CAP) / SITES_CAP``."""
    n = rules[R_PLAYERS]
    counts = np.zeros(2, dtype=np.int64)
    for j in range(n):
        K.build_sites(cells, meta, rules, nbr, cell_of, (player + j) % n, counts)
        out[j] = min(counts[0], SITES_CAP) / SITES_CAP
        out[n + j] = min(counts[1], SITES_CAP) / SITES_CAP


# ---------------------------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------------------------


def _perspective(state: TaluvaState, player: int | None) -> int:
    if player is None:
        return int(state.meta[S.M_PLAYER])
    if not 0 <= player < state.num_players:
        raise ValueError(f"player must lie in 0..{state.num_players - 1}, got {player}")
    return player


def encode(
    state: TaluvaState,
    player: int | None = None,
    view_radius: int = DEFAULT_VIEW_RADIUS,
    center: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray, tuple[int, int], int]:
    """Planes and view mask of a position.

    Args:
        state: the position.
        player: the seat whose view the planes take (default: the player to move).
        view_radius: ``R``.
        center: the view centre ``(qc, rc)`` in engine coordinates (default :func:`view_center`).

    Returns:
        ``(planes float32[C, S, S], mask int8[14 S^2], center, outside)`` where ``outside`` is
        the number of legal engine actions with no view id (solo: ``int8[14 S^2 + 6]``).
    """
    view = make_view(view_radius)
    game = state.game
    rules, nbr, cell_of, hexqr, origin = game.kernel_args()
    p = _perspective(state, player)
    if center is None:
        qc, rc = view_center(state.cells, state.meta, cell_of)
    else:
        qc, rc = int(center[0]), int(center[1])
    solo = game.rules.solo
    obs = np.zeros((num_planes(game.num_players, solo), view.side, view.side), dtype=np.float32)
    mask = np.zeros(view.num_actions + (NUM_SOLO_ACTIONS if solo else 0), dtype=np.int8)
    buf = np.empty(8 * game.num_cells, dtype=np.int64)
    label = np.full(game.num_cells, -1, dtype=np.int32)
    out = encode_into(state.cells, state.players, state.meta, rules, nbr, cell_of, hexqr, origin,
                      p, view.radius, qc, rc, view.valid, obs, mask, buf, label)
    return obs, mask, (int(qc), int(rc)), int(out)


def global_features(state: TaluvaState, player: int | None = None) -> np.ndarray:
    """``float32[4n + 12]``: supply per player slot (huts/20 n, temples/3 n, towers/2 n), out
    (eliminated or finished) n, tiles_left/48, step (1 = build), tile_a one-hot 5, tile_b 5."""
    n = state.num_players
    out = np.zeros(num_globals(n), dtype=np.float32)
    step = int(state.meta[S.M_STEP])
    tile = int(state.meta[S.M_TILE]) if step in (K.S_TILE, K.S_BUILD) else -1
    _globals(state.players, state.meta, state.game.rules_array, _perspective(state, player),
             tile, out)
    return out


def build_site_features(state: TaluvaState, player: int | None = None) -> np.ndarray:
    """``float32[2n]``: the temple sites of each player slot, then its tower sites, counted up
    to :data:`SITES_CAP` and divided by it (:func:`site_globals`; docs/encoding.md, "Build
    sites"). 2-4 players.

    Raises:
        ValueError: a solo game, or ``player`` not a seat."""
    if state.game.rules.solo:
        raise ValueError("build sites are defined for 2-4 players, not the solo variant")
    rules, nbr, cell_of, _, _ = state.game.kernel_args()
    out = np.zeros(2 * state.num_players, dtype=np.float32)
    site_globals(state.cells, state.meta, rules, nbr, cell_of, _perspective(state, player), out)
    return out


def view_action_to_engine(vid: int, center: tuple[int, int], game_board_cell_of: np.ndarray,
                          view_radius: int = DEFAULT_VIEW_RADIUS) -> int:
    """Engine id of view id ``vid`` for a view centred on ``center``; -1 when it has none."""
    return int(view_to_engine(int(vid), game_board_cell_of, int(center[0]), int(center[1]),
                              int(view_radius)))


@njit(cache=True)
def solo_view_to_engine(vid, cell_of, qc, rc, vr):
    """:func:`view_to_engine` of the solo variant: also ``14 S^2 + k`` to ``14 H + k`` for
    its 6 extra ids; -1 beyond them."""
    s = 2 * vr + 1
    top = NUM_ACTION_CHANNELS * s * s
    if vid >= top:
        if vid >= top + NUM_SOLO_ACTIONS:
            return -1
        radius = (cell_of.shape[0] - 1) // 2
        return 14 * (3 * radius * radius + 3 * radius + 1) + vid - top
    return view_to_engine(vid, cell_of, qc, rc, vr)


# ---------------------------------------------------------------------------------------------
# Rotations
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def pixel_permutation(view_radius: int, k: int) -> np.ndarray:
    """``int64[S*S]``: ``perm[p]`` is the pixel that pixel ``p`` goes to when the view turns
    ``k x 60`` degrees counter-clockwise about its centre (corner pixels stay put)."""
    v = make_view(view_radius)
    s, r = v.side, v.radius
    perm = np.arange(s * s, dtype=np.int64)
    for p in range(s * s):
        dq, dr = int(v.dq[p]), int(v.dr[p])
        if hex_distance(dq, dr) <= r:
            q2, r2 = rotate_hex(dq, dr, k)
            perm[p] = (r2 + r) * s + q2 + r
    perm.setflags(write=False)
    return perm


def _seats_of(num_channels: int) -> tuple[int, bool]:
    """``(seats, solo)`` of planes with ``num_channels`` channels."""
    if num_channels == num_planes(1, solo=True):
        return 1, True
    return (num_channels - 35) // 7, False


def plane_permutation(num_players: int, k: int, solo: bool = False) -> np.ndarray:
    """``int64[C]``: plane ``c`` of a position becomes plane ``perm[c]`` of the position turned
    ``k x 60`` degrees (``same_tile`` d -> d + k, ``orientation`` o -> o + k; others fixed)."""
    perm = np.arange(num_planes(num_players, solo), dtype=np.int64)
    for i in range(6):
        perm[PL_SAME_TILE + i] = PL_SAME_TILE + (i + k) % 6
        perm[PL_ORIENT + i] = PL_ORIENT + (i + k) % 6
    return perm


def rotate_planes(planes: np.ndarray, k: int) -> np.ndarray:
    """Planes ``float32[..., C, S, S]`` of the position turned ``k x 60`` degrees CCW about the
    view centre (a leading batch axis is allowed)."""
    c, s = planes.shape[-3], planes.shape[-1]
    n, solo = _seats_of(c)
    vr = (s - 1) // 2
    pix = pixel_permutation(vr, k % 6)
    cperm = plane_permutation(n, k % 6, solo)
    flat = planes.reshape(*planes.shape[:-2], s * s)
    out = np.empty_like(flat)
    out[..., cperm, :] = flat
    res = np.empty_like(out)
    res[..., pix] = out
    return res.reshape(planes.shape)


def _own_settlements(planes: np.ndarray) -> list[list[int]]:
    """Pixels of each settlement of player slot 0 (connected own building hexes)."""
    c, s = planes.shape[0], planes.shape[-1]
    n, _ = _seats_of(c)
    vr = (s - 1) // 2
    own = (planes[PL_PLAYERS] > 0) | (planes[PL_PLAYERS + n] > 0) | (planes[PL_PLAYERS + 2 * n] > 0)
    own = own.ravel()
    seen = np.zeros(s * s, dtype=bool)
    out: list[list[int]] = []
    for p0 in np.flatnonzero(own):
        if seen[p0]:
            continue
        comp = []
        todo = [int(p0)]
        seen[p0] = True
        while todo:
            p = todo.pop()
            comp.append(p)
            for p2 in _pixel_neighbours(p, s, vr):
                if own[p2] and not seen[p2]:
                    seen[p2] = True
                    todo.append(p2)
        out.append(sorted(comp))
    return out


def _pixel_neighbours(p: int, s: int, vr: int) -> list[int]:
    """View pixels (flat index in the ``s x s`` square) adjacent to pixel ``p`` inside the
    hexagonal view of radius ``vr``."""
    rr, cc = divmod(p, s)
    out = []
    for dq, dr in DIRECTIONS:
        r2, c2 = rr + dr, cc + dq
        if 0 <= r2 < s and 0 <= c2 < s and hex_distance(c2 - vr, r2 - vr) <= vr:
            out.append(r2 * s + c2)
    return out


def _expansion_targets(planes: np.ndarray, comp: list[int], k: int) -> frozenset[int]:
    """Pixels an expansion of settlement ``comp`` into terrain index ``k`` would fill."""
    s = planes.shape[-1]
    vr = (s - 1) // 2
    c = planes.shape[0]
    n, _ = _seats_of(c)
    terr = planes[PL_TERRAIN + 1 + k].ravel() > 0
    occupied = (planes[PL_PLAYERS:PL_PLAYERS + 3 * n].sum(axis=0) > 0).ravel()
    tgt = set()
    for p in comp:
        for p2 in _pixel_neighbours(p, s, vr):
            if terr[p2] and not occupied[p2]:
                tgt.add(p2)
    return frozenset(tgt)


def action_permutation(planes: np.ndarray, k: int) -> np.ndarray:
    """``int64[14 S^2]``: view id ``a`` of this position (its planes given) is the id
    ``perm[a]`` of the same action in the position turned ``k x 60`` degrees CCW, so that
    ``mask_rotated[perm] == mask`` and a policy rotates as ``pi_rot[perm] = pi``.

    Tile, hut, temple and tower ids follow the pixel permutation (and ``o -> o + k`` for tiles).
    An expansion's pixel is its settlement's smallest hex, which a rotation does not preserve,
    so expansion ids are mapped settlement by settlement (read from the planes of the player to
    move, slot 0), keeping the engine's rule that of several settlements with the same
    expansion outcome only the one with the smallest hex is listed. Exact when every own
    settlement and its expansion targets lie inside the view.
    """
    s = planes.shape[-1]
    vr = (s - 1) // 2
    ss = s * s
    k %= 6
    pix = pixel_permutation(vr, k)
    solo = _seats_of(planes.shape[0])[1]
    perm = np.empty(NUM_ACTION_CHANNELS * ss + (NUM_SOLO_ACTIONS if solo else 0), dtype=np.int64)
    if solo:  # the bonus and box ids do not move
        perm[NUM_ACTION_CHANNELS * ss:] = np.arange(NUM_ACTION_CHANNELS * ss, perm.size)
    ar = np.arange(ss)
    for ch in range(NUM_ACTION_CHANNELS):
        dst = (ch + k) % 6 if ch < 6 else ch
        perm[ch * ss + ar] = dst * ss + pix[ar]
    comps = _own_settlements(planes)
    if not comps:
        return perm
    src = [comp[0] for comp in comps]  # smallest pixel = smallest hex in reading order
    dst_canon = [int(pix[np.asarray(comp)].min()) for comp in comps]
    for t in range(5):
        base = (CH_EXPAND + t) * ss
        f = {p: int(pix[p]) for p in range(ss)}
        # group settlements with the same expansion outcome; map sorted sources to sorted dests
        groups: dict[frozenset[int], list[int]] = {}
        for i, comp in enumerate(comps):
            tg = _expansion_targets(planes, comp, t)
            key = tg if tg else frozenset([-1 - i])
            groups.setdefault(key, []).append(i)
        assign: dict[int, int] = {}
        for members in groups.values():
            for a, b in zip(sorted(src[i] for i in members), sorted(dst_canon[i] for i in members),
                            strict=True):
                assign[a] = b
        used_targets = set(assign.values())
        free_targets = sorted(int(pix[a]) for a in assign if int(pix[a]) not in used_targets)
        loose = sorted(p for p in range(ss) if p not in assign and f[p] in used_targets)
        for p, q in zip(loose, free_targets, strict=True):
            assign[p] = q
        for p, q in assign.items():
            f[p] = q
        perm[base + ar] = base + np.array([f[p] for p in range(ss)], dtype=np.int64)
    return perm


def rotated_state(state: TaluvaState, k: int) -> TaluvaState:
    """A copy of ``state`` with the island turned ``k x 60`` degrees CCW about the first volcano
    (the engine's origin): cells permuted, the bounding box recomputed; everything else kept.
    The rules are rotation invariant, so the copy is a legal position of the same game."""
    board = state.game.board
    perm = board.rotation_permutation(k % 6)
    cells = np.empty_like(state.cells)
    cells[perm] = state.cells
    meta = state.meta.copy()
    occ = np.flatnonzero(cells[:, S.C_LEVEL] > 0)
    if occ.size:
        meta[S.M_QMIN], meta[S.M_QMAX] = board.q[occ].min(), board.q[occ].max()
        meta[S.M_RMIN], meta[S.M_RMAX] = board.r[occ].min(), board.r[occ].max()
    return state.game.state_from_arrays(cells, state.players.copy(), state.deck.copy(), meta)


__all__ = [
    "DEFAULT_VIEW_RADIUS",
    "NUM_SOLO_ACTIONS",
    "NUM_SOLO_PLANES",
    "SOLO_PLANE_NAMES",
    "View",
    "action_permutation",
    "encode",
    "encode_into",
    "encode_planes",
    "engine_to_view",
    "global_features",
    "make_view",
    "num_globals",
    "num_planes",
    "pixel_permutation",
    "plane_names",
    "plane_permutation",
    "rotate_planes",
    "rotated_state",
    "solo_view_to_engine",
    "view_center",
    "view_to_engine",
]
