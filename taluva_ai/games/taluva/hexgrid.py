"""Axial hex coordinates, the engine's board, neighbour tables and rotations.

Hexes are pointy-top axial coordinates ``(q, r)``: ``q`` grows eastwards along a row, ``r``
grows southwards (the convention of the TaluvaUJF oracle data). The engine's board holds every
hex within distance ``board_radius`` of the first volcano (the origin); its hexes are numbered
``0 .. num_cells - 1`` row by row (``r`` ascending, then ``q`` ascending), so a larger cell index
is always further south-east in reading order.

Directions are numbered counter-clockwise on the map starting east:
``0 E (1,0), 1 NE (1,-1), 2 NW (0,-1), 3 W (-1,0), 4 SW (-1,1), 5 SE (0,1)``. Rotating the
board 60 degrees counter-clockwise maps direction ``d`` to ``d + 1 (mod 6)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

#: (dq, dr) of the six directions, counter-clockwise from east.
DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
DIRECTION_NAMES: tuple[str, ...] = ("E", "NE", "NW", "W", "SW", "SE")


def hex_distance(q: int, r: int) -> int:
    """Hex distance of axial ``(q, r)`` from the origin."""
    return (abs(q) + abs(r) + abs(q + r)) // 2


def rotate_hex(q: int, r: int, k: int = 1) -> tuple[int, int]:
    """Rotate axial ``(q, r)`` by ``k`` x 60 degrees counter-clockwise about the origin."""
    x, z = q, r
    y = -x - z
    for _ in range(k % 6):
        # cube (x, y, z) -> (-y, -z, -x) is a 60 degree counter-clockwise turn (r southwards)
        x, y, z = -y, -z, -x
    return x, z


@dataclass(frozen=True, eq=False)
class Board:
    """Geometry of a hexagonal board of radius ``radius`` (tables built once per radius).

    Attributes:
        radius: board radius in hexes.
        num_cells: ``3 R^2 + 3 R + 1`` hexes.
        q, r: ``int32[num_cells]`` axial coordinates of each cell.
        neighbours: ``int32[num_cells, 6]`` neighbour cell in each direction, ``-1`` off the board.
        cell_of: ``int32[2R+1, 2R+1]`` cell index at ``[q + R, r + R]``, ``-1`` off the board.
        origin: cell index of ``(0, 0)``.
    """

    radius: int
    num_cells: int
    q: np.ndarray = field(repr=False)
    r: np.ndarray = field(repr=False)
    neighbours: np.ndarray = field(repr=False)
    cell_of: np.ndarray = field(repr=False)
    origin: int

    def cell(self, q: int, r: int) -> int:
        """Cell index of axial ``(q, r)``.

        Raises:
            ValueError: the hex lies outside the board (distance > ``radius``).
        """
        if hex_distance(q, r) > self.radius:
            raise ValueError(f"hex ({q},{r}) lies outside the board of radius {self.radius}")
        return int(self.cell_of[q + self.radius, r + self.radius])

    def hex(self, cell: int) -> tuple[int, int]:
        """Axial ``(q, r)`` of a cell index."""
        if not 0 <= cell < self.num_cells:
            raise ValueError(f"cell {cell} out of range 0..{self.num_cells - 1}")
        return int(self.q[cell]), int(self.r[cell])

    def rotation_permutation(self, k: int = 1) -> np.ndarray:
        """``int32[num_cells]``: ``perm[c]`` is the cell that ``c`` goes to when the board turns
        ``k`` x 60 degrees counter-clockwise about the origin."""
        perm = np.empty(self.num_cells, dtype=np.int32)
        for c in range(self.num_cells):
            q2, r2 = rotate_hex(int(self.q[c]), int(self.r[c]), k)
            perm[c] = self.cell_of[q2 + self.radius, r2 + self.radius]
        return perm


@lru_cache(maxsize=8)
def make_board(radius: int) -> Board:
    """Build (and cache) the tables of a board of the given radius.

    Raises:
        ValueError: ``radius < 2``.
    """
    if radius < 2:
        raise ValueError(f"board_radius must be at least 2, got {radius}")
    side = 2 * radius + 1
    cell_of = np.full((side, side), -1, dtype=np.int32)
    qs: list[int] = []
    rs: list[int] = []
    for r in range(-radius, radius + 1):
        for q in range(-radius, radius + 1):
            if hex_distance(q, r) <= radius:
                cell_of[q + radius, r + radius] = len(qs)
                qs.append(q)
                rs.append(r)
    n = len(qs)
    q_arr = np.array(qs, dtype=np.int32)
    r_arr = np.array(rs, dtype=np.int32)
    nbr = np.full((n, 6), -1, dtype=np.int32)
    for c in range(n):
        for d, (dq, dr) in enumerate(DIRECTIONS):
            q2, r2 = qs[c] + dq, rs[c] + dr
            if hex_distance(q2, r2) <= radius:
                nbr[c, d] = cell_of[q2 + radius, r2 + radius]
    for a in (q_arr, r_arr, nbr, cell_of):
        a.setflags(write=False)
    return Board(radius, n, q_arr, r_arr, nbr, cell_of, int(cell_of[radius, radius]))
