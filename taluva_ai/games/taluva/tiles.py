"""Terrains, buildings, the 48-tile set and tile orientations (RULES.md, Components).

A tile type is the ordered pair ``(a, b)`` of its two terrain hexes (``a`` bottom-left, ``b``
bottom-right, volcano on top); its integer id is ``5 * (a - JUNGLE) + (b - JUNGLE)`` in
``0 .. 24``. An orientation ``o`` in ``0 .. 5`` puts ``a`` in direction ``(o + 4) % 6`` and ``b``
in direction ``(o + 5) % 6`` of the volcano (see :mod:`hexgrid`); the volcano then points
``N, NW, SW, S, SE, NE`` for ``o = 0 .. 5`` (each step a 60 degree counter-clockwise turn).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class Terrain(IntEnum):
    """Top terrain of a hex. ``NONE`` is the empty table (level 0)."""

    NONE = 0
    VOLCANO = 1
    JUNGLE = 2
    CLEARING = 3
    SAND = 4
    ROCK = 5
    LAKE = 6


class Building(IntEnum):
    """Building on a hex (a hut hex holds as many huts as its level)."""

    NONE = 0
    HUT = 1
    TEMPLE = 2
    TOWER = 3


#: One-letter terrain codes (RULES.md): J C S R L, and V for the volcano.
TERRAIN_LETTER: dict[Terrain, str] = {
    Terrain.VOLCANO: "V",
    Terrain.JUNGLE: "J",
    Terrain.CLEARING: "C",
    Terrain.SAND: "S",
    Terrain.ROCK: "R",
    Terrain.LAKE: "L",
}
LETTER_TERRAIN: dict[str, Terrain] = {v: k for k, v in TERRAIN_LETTER.items()}
#: The five buildable terrains in expansion order (expansion terrain index 0..4).
BUILD_TERRAINS: tuple[Terrain, ...] = (
    Terrain.JUNGLE,
    Terrain.CLEARING,
    Terrain.SAND,
    Terrain.ROCK,
    Terrain.LAKE,
)
NUM_TILE_TYPES = 25
NUM_TILES = 48
ORIENTATION_NAMES: tuple[str, ...] = ("N", "NW", "SW", "S", "SE", "NE")

#: Copies of each tile type, row = a, column = b, in J C S R L order (RULES.md table).
TILE_COUNTS = np.array(
    [
        [1, 6, 4, 2, 2],
        [5, 1, 2, 2, 1],
        [4, 2, 1, 2, 1],
        [2, 2, 1, 1, 1],
        [1, 1, 1, 1, 1],
    ],
    dtype=np.int64,
)
TILE_COUNTS.setflags(write=False)
assert TILE_COUNTS.sum() == NUM_TILES


def tile_type(a: Terrain, b: Terrain) -> int:
    """Id ``0..24`` of the tile ``(a, b)``.

    Raises:
        ValueError: ``a`` or ``b`` is not one of the five buildable terrains.
    """
    if a not in BUILD_TERRAINS or b not in BUILD_TERRAINS:
        raise ValueError(f"a tile holds two of J C S R L, got ({a!r}, {b!r})")
    return 5 * (int(a) - Terrain.JUNGLE) + (int(b) - Terrain.JUNGLE)


def tile_terrains(t: int) -> tuple[Terrain, Terrain]:
    """The ``(a, b)`` terrains of tile type ``t``."""
    if not 0 <= t < NUM_TILE_TYPES:
        raise ValueError(f"tile type {t} out of range 0..24")
    return Terrain(Terrain.JUNGLE + t // 5), Terrain(Terrain.JUNGLE + t % 5)


def tile_name(t: int) -> str:
    """Two-letter name of tile type ``t``, e.g. ``"JC"`` for (jungle, clearing)."""
    a, b = tile_terrains(t)
    return TERRAIN_LETTER[a] + TERRAIN_LETTER[b]


def parse_tile(name: str) -> int:
    """Tile type id of a two-letter name such as ``"JC"``.

    Raises:
        ValueError: not two letters of J C S R L.
    """
    if len(name) != 2 or any(ch not in "JCSRL" for ch in name):
        raise ValueError(f"a tile is two letters of J C S R L (e.g. 'JC'), got {name!r}")
    return tile_type(LETTER_TERRAIN[name[0]], LETTER_TERRAIN[name[1]])


def full_tile_set() -> np.ndarray:
    """``int8[48]``: the 48 tiles as type ids, in type order (unshuffled)."""
    return np.repeat(np.arange(NUM_TILE_TYPES, dtype=np.int8), TILE_COUNTS.ravel())
