"""Observation planes and view action ids for networks: :mod:`taluva_ai.games.taluva.encoding`
under its short name (docs/encoding.md)."""

from taluva_ai.games.taluva.encoding import (
    DEFAULT_VIEW_RADIUS,
    View,
    action_permutation,
    encode,
    global_features,
    make_view,
    num_globals,
    num_planes,
    pixel_permutation,
    plane_names,
    plane_permutation,
    rotate_planes,
    rotated_state,
    view_center,
)

__all__ = [
    "DEFAULT_VIEW_RADIUS",
    "View",
    "action_permutation",
    "encode",
    "global_features",
    "make_view",
    "num_globals",
    "num_planes",
    "pixel_permutation",
    "plane_names",
    "plane_permutation",
    "rotate_planes",
    "rotated_state",
    "view_center",
]
