"""The greedy heuristic's placement values: the incremental path (``placement_value_fast``,
``fast_action_values``) must give exactly the value of placing the tile and listing the builds
(``_placement_value``, ``action_values``)."""

from __future__ import annotations

import numpy as np
import pytest

from taluva_ai.agents.base import make_agent
from taluva_ai.games.taluva import heuristic as H
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.state import M_STEP
from taluva_ai.protocol import CHANCE, make_game


def _compare_game(num_players: int, seed: int, **options: object) -> tuple[int, int]:
    """Play a noisy greedy game; at every tile step compare both paths on every placement.
    Returns (placements compared, placements that fell back to the replayed path)."""
    game = make_game("taluva", num_players=num_players, **options)
    state = game.new_initial_state(seed=seed)
    agent = make_agent("greedy:epsilon=0.4", seed=seed)
    compared = fallbacks = 0
    while not state.is_terminal():
        if state.current_player == CHANCE:
            state.draw()
            continue
        (cells, players, _, meta), consts = state.search_kernels()[:2]
        rules, nbr, cell_of, hexqr, origin = consts[:5]
        # the greedy player's kernel (by the definition) and the searches' give the same values
        size = 8 * cells.shape[0]
        ids_ref, ids_fast = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
        vals_ref, vals_fast = np.empty(size), np.empty(size)
        n = H.action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids_ref,
                            vals_ref)
        assert n > 0
        assert n == H.fast_action_values(cells, players, meta, rules, nbr, cell_of, hexqr,
                                         origin, ids_fast, vals_fast)
        assert np.array_equal(ids_ref[:n], ids_fast[:n])
        assert np.array_equal(vals_ref[:n], vals_fast[:n]), (seed, int(meta[M_STEP]))
        if meta[M_STEP] == K.S_TILE:
            ncell = cells.shape[0]
            ids = np.empty(8 * ncell, dtype=np.int64)
            n = K.tile_actions(cells, meta, nbr, cell_of, origin, ids, False)
            ctx = H.new_placement_context(ncell)
            assert H.placement_context(cells, players, meta, rules, nbr, cell_of, ctx)
            before = (cells.copy(), players.copy(), meta.copy())
            for a in ids[:n]:
                ref = H._placement_value(
                    cells, players, meta, rules, nbr, cell_of, hexqr, a,
                    np.empty((3, cells.shape[1]), dtype=cells.dtype), players.copy(),
                    meta.copy(), np.empty(8 * ncell, dtype=np.int64),
                    np.empty(8 * ncell, dtype=np.int64), np.empty(8 * ncell))
                fast = H.placement_value_fast(cells, players, meta, rules, nbr, a, ctx)
                compared += 1
                if np.isnan(fast):
                    fallbacks += 1
                else:
                    assert fast == ref, (seed, int(a))
            for x, y in zip((cells, players, meta), before, strict=True):
                assert np.array_equal(x, y)  # neither path changes the state
        state.apply(agent.act(state))
    return compared, fallbacks


@pytest.mark.parametrize(("num_players", "options"), [
    (2, {}), (3, {}), (4, {}), (2, {"new_hut_isolated": False}),
    (3, {"destroyed_huts_return": True}), (2, {"no_lake_building": True}),
    (2, {"early_victory_kinds": 3}),
])
def test_incremental_placement_values_equal_the_replayed_ones(
        num_players: int, options: dict[str, object]) -> None:
    compared, fallbacks = _compare_game(num_players, 0, **options)
    assert compared > 2000
    # eruptions over the mover's own huts take the replayed path; nearly all others are fast
    assert 0 < fallbacks < compared // 50

