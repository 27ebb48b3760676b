"""The fixed components of Thurn und Taxis (THURN-UND-TAXIS.md §1), as tables built at import.

Cities, provinces, roads, bonus stacks and carriage points. Ids are ASCII (ü→ue, ö→oe); cities
are numbered in alphabetical order, provinces and bonus stacks in the order of the spec's
tables. Every table is a NumPy array the compiled kernels read as a constant.
"""

from __future__ import annotations

import numpy as np

#: The 22 cities, id = index (alphabetical).
CITIES: tuple[str, ...] = (
    "augsburg", "basel", "budweis", "carlsruhe", "freiburg", "ingolstadt", "innsbruck",
    "kempten", "linz", "lodz", "mannheim", "muenchen", "nuernberg", "passau", "pilsen",
    "regensburg", "salzburg", "sigmaringen", "stuttgart", "ulm", "wuerzburg", "zuerich",
)
NUM_CITIES = len(CITIES)
CITY_ID: dict[str, int] = {c: i for i, c in enumerate(CITIES)}

#: The 9 provinces, id = index (the order of the spec's table).
PROVINCES: tuple[str, ...] = (
    "baiern", "baden", "wuerttemberg", "hohenzollern", "schweiz", "tyrol", "boehmen",
    "salzburg", "polen",
)
NUM_PROVINCES = len(PROVINCES)
PROVINCE_ID: dict[str, int] = {p: i for i, p in enumerate(PROVINCES)}
#: Province id of Baiern (the province the ``exclude_baiern`` all_provinces rule leaves out).
BAIERN = 0

_PROVINCE_CITIES: dict[str, tuple[str, ...]] = {
    "baiern": ("augsburg", "ingolstadt", "kempten", "muenchen", "nuernberg", "passau",
               "regensburg", "wuerzburg"),
    "baden": ("carlsruhe", "freiburg", "mannheim"),
    "wuerttemberg": ("stuttgart", "ulm"),
    "hohenzollern": ("sigmaringen",),
    "schweiz": ("basel", "zuerich"),
    "tyrol": ("innsbruck",),
    "boehmen": ("budweis", "pilsen"),
    "salzburg": ("linz", "salzburg"),
    "polen": ("lodz",),
}

#: ``int64[22]``: province id of each city.
CITY_PROVINCE = np.full(NUM_CITIES, -1, dtype=np.int64)
for _p, _cs in _PROVINCE_CITIES.items():
    for _c in _cs:
        CITY_PROVINCE[CITY_ID[_c]] = PROVINCE_ID[_p]
assert (CITY_PROVINCE >= 0).all()

#: The 45 roads (undirected), as in the spec.
_ROAD_TEXT = (
    "augsburg-ingolstadt", "augsburg-innsbruck", "augsburg-kempten", "augsburg-muenchen",
    "augsburg-ulm", "basel-freiburg", "basel-zuerich", "budweis-linz", "budweis-pilsen",
    "carlsruhe-freiburg", "carlsruhe-mannheim", "carlsruhe-stuttgart", "freiburg-sigmaringen",
    "freiburg-zuerich", "ingolstadt-muenchen", "ingolstadt-nuernberg", "ingolstadt-regensburg",
    "ingolstadt-stuttgart", "ingolstadt-ulm", "innsbruck-kempten", "innsbruck-muenchen",
    "innsbruck-salzburg", "kempten-sigmaringen", "kempten-ulm", "kempten-zuerich", "linz-passau",
    "linz-salzburg", "lodz-pilsen", "mannheim-stuttgart", "mannheim-wuerzburg", "muenchen-passau",
    "muenchen-regensburg", "muenchen-salzburg", "nuernberg-pilsen", "nuernberg-regensburg",
    "nuernberg-stuttgart", "nuernberg-wuerzburg", "passau-regensburg", "passau-salzburg",
    "pilsen-regensburg", "sigmaringen-stuttgart", "sigmaringen-ulm", "sigmaringen-zuerich",
    "stuttgart-ulm", "stuttgart-wuerzburg",
)
ROADS: tuple[tuple[str, str], ...] = tuple(
    (a, b) for a, b in (r.split("-") for r in _ROAD_TEXT)
)

#: ``bool[22, 22]``: joined by a road.
ADJACENT = np.zeros((NUM_CITIES, NUM_CITIES), dtype=np.bool_)
for _a, _b in ROADS:
    ADJACENT[CITY_ID[_a], CITY_ID[_b]] = ADJACENT[CITY_ID[_b], CITY_ID[_a]] = True

#: Directed roads ``(end, new)``, in (end, new) order: the ways to put city ``new`` next to a
#: route end holding ``end``. ``EDGE_END[k]``, ``EDGE_NEW[k]``; ``EDGE_ID[end, new]`` is ``k``
#: or -1 when the cities are not joined.
_directed = sorted((e, n) for e in range(NUM_CITIES) for n in range(NUM_CITIES)
                   if ADJACENT[e, n])
NUM_EDGES = len(_directed)  # 90
EDGE_END = np.array([e for e, _ in _directed], dtype=np.int64)
EDGE_NEW = np.array([n for _, n in _directed], dtype=np.int64)
EDGE_ID = np.full((NUM_CITIES, NUM_CITIES), -1, dtype=np.int64)
for _k, (_e, _n) in enumerate(_directed):
    EDGE_ID[_e, _n] = _k
#: ``int64[22]``: number of roads at each city.
DEGREE = ADJACENT.sum(axis=1).astype(np.int64)
MAX_DEGREE = int(DEGREE.max())  # 7 (stuttgart)
#: ``int64[22, 7]``: the neighbours of each city, ascending, padded with -1.
NEIGHBOURS = np.full((NUM_CITIES, MAX_DEGREE), -1, dtype=np.int64)
for _city in range(NUM_CITIES):
    _nb = np.flatnonzero(ADJACENT[_city])
    NEIGHBOURS[_city, : _nb.size] = _nb

#: Copies of each city card (66 cards in all).
COPIES = 3
NUM_CARDS = COPIES * NUM_CITIES
#: Cards in the face-up display.
DISPLAY_SIZE = 6
#: Houses per player.
HOUSES = 20
#: Hand size a close discards down to.
HAND_KEEP = 3

#: Bonus-tile stacks, id = index (the order of the spec's table).
STACKS: tuple[str, ...] = (
    "route_7", "route_6", "route_5", "baiern", "boehmen_salzburg", "baden",
    "wuerttemberg_hohenzollern", "schweiz_tyrol", "all_provinces", "game_end",
)
NUM_STACKS = len(STACKS)
STACK_ID: dict[str, int] = {s: i for i, s in enumerate(STACKS)}
ST_ROUTE_7, ST_ROUTE_6, ST_ROUTE_5 = 0, 1, 2
ST_ALL_PROVINCES, ST_GAME_END = 8, 9
_STACK_TILES: tuple[tuple[int, ...], ...] = (
    (4, 3, 2, 1), (3, 2, 1), (2, 1), (5, 4, 3, 2), (4, 3, 2), (3, 2, 1), (3, 2, 1), (3, 2, 1),
    (6, 5, 4, 3), (1,),
)
MAX_STACK = max(len(t) for t in _STACK_TILES)
#: ``int64[10, 4]``: tile values of each stack, top first, padded with 0.
STACK_VALUES = np.zeros((NUM_STACKS, MAX_STACK), dtype=np.int64)
for _s, _t in enumerate(_STACK_TILES):
    STACK_VALUES[_s, : len(_t)] = _t
#: ``int64[10]``: tiles in each stack.
STACK_SIZE = np.array([len(t) for t in _STACK_TILES], dtype=np.int64)
TOTAL_TILE_POINTS = int(STACK_VALUES.sum())  # 79

#: Region bonus groups: stack id -> provinces.
GROUP_PROVINCES: dict[int, tuple[int, ...]] = {
    STACK_ID["baiern"]: (PROVINCE_ID["baiern"],),
    STACK_ID["boehmen_salzburg"]: (PROVINCE_ID["boehmen"], PROVINCE_ID["salzburg"]),
    STACK_ID["baden"]: (PROVINCE_ID["baden"],),
    STACK_ID["wuerttemberg_hohenzollern"]: (PROVINCE_ID["wuerttemberg"],
                                             PROVINCE_ID["hohenzollern"]),
    STACK_ID["schweiz_tyrol"]: (PROVINCE_ID["schweiz"], PROVINCE_ID["tyrol"]),
}
#: ``int64[9]``: the region stack of each province, -1 for polen (no region tile).
PROVINCE_GROUP = np.full(NUM_PROVINCES, -1, dtype=np.int64)
for _stack, _provs in GROUP_PROVINCES.items():
    for _prov in _provs:
        PROVINCE_GROUP[_prov] = _stack
#: ``bool[10, 22]``: ``GROUP_CITIES[s, c]`` = city ``c`` belongs to region stack ``s``.
GROUP_CITIES = np.zeros((NUM_STACKS, NUM_CITIES), dtype=np.bool_)
for _city in range(NUM_CITIES):
    _group = int(PROVINCE_GROUP[CITY_PROVINCE[_city]])
    if _group >= 0:
        GROUP_CITIES[_group, _city] = True
#: ``int64[10]``: cities in each region group (0 for the other stacks).
GROUP_SIZE = GROUP_CITIES.sum(axis=1).astype(np.int64)
#: Region stacks in id order.
REGION_STACKS = np.array(sorted(GROUP_PROVINCES), dtype=np.int64)

#: Carriage values, and ``CARRIAGE_POINTS[v]`` the points of carriage ``v`` (0 for none).
CARRIAGES = (3, 4, 5, 6, 7)
CARRIAGE_POINTS = np.array([0, 0, 0, 2, 3, 5, 7, 10], dtype=np.int64)
#: Copies of each carriage value (four: they never run out, clarification 19).
CARRIAGE_COPIES = 4

#: The officials, id = index (0 means none used this turn).
OFFICIALS: tuple[str, ...] = ("none", "postmaster", "administrator", "postal_carrier",
                              "cartwright")
OF_NONE, OF_POSTMASTER, OF_ADMINISTRATOR, OF_POSTAL_CARRIER, OF_CARTWRIGHT = range(5)


def city_name(c: int) -> str:
    return CITIES[int(c)]


def province_of(city: str) -> str:
    """The province id of a city id string.

    Raises:
        KeyError: not a city.
    """
    return PROVINCES[int(CITY_PROVINCE[CITY_ID[city]])]
