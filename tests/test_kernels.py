"""The tile-placement sampler and the enumerator agree (they share the per-placement checks,
the enumerator with the sea-level check written out for speed)."""

from __future__ import annotations

import numpy as np
from numba import njit

from taluva_ai.agents import make_agent
from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva import kernels as K


@njit(cache=True)
def _samples(cells, meta, nbr, cell_of, origin, k, seed):
    np.random.seed(seed)
    buf = np.empty(6 * cells.shape[0], dtype=np.int64)
    out = np.empty(k, dtype=np.int64)
    for i in range(k):
        out[i] = K.sample_tile_action(cells, meta, nbr, cell_of, origin, buf)
    return out


@njit(cache=True)
def _sea_checks(cells, meta, nbr, cell_of, origin):
    """Every (v, o) that _sea_ok accepts, over the whole board."""
    _, _, adj, _, _ = K.tile_context(cells, meta, nbr, cell_of, False)
    out = np.empty(6 * cells.shape[0], dtype=np.int64)
    n = 0
    for v in range(cells.shape[0]):
        if cells[v, 0] == 0:
            for o in range(6):
                if K._sea_ok(cells, nbr, adj, v, o):
                    out[n] = v * 6 + o
                    n += 1
    return out[:n]


def _tile_positions(players: int, seeds: range):
    game = TaluvaGame(num_players=players)
    agent = make_agent("greedy:epsilon=0.5", seed=0)
    for seed in seeds:
        s = game.new_initial_state(seed=seed)
        agent.reset(seed)
        while not s.is_terminal():
            if s.current_player < 0:
                s.draw()
                continue
            if s.step == 1 and s.tiles_placed > 0:
                yield game, s
            s.apply(agent.act(s))


def test_sampler_draws_only_legal_placements_and_covers_them() -> None:
    checked = 0
    for game, s in _tile_positions(2, range(3)):
        if checked % 7 == 0:
            _, nbr, cell_of, _, origin = game.kernel_args()
            legal = set(s.legal_actions().tolist())
            draws = _samples(s.cells, s.meta, nbr, cell_of, origin, 20 * len(legal), checked)
            assert set(draws.tolist()) == legal  # all legal, and each one drawn
        checked += 1
    assert checked > 50


def test_enumerator_sea_placements_equal_the_shared_check() -> None:
    for game, s in _tile_positions(3, range(2)):
        _, nbr, cell_of, _, origin = game.kernel_args()
        legal = s.legal_actions()
        on_sea = legal[s.cells[legal // 6, 0] == 0]
        np.testing.assert_array_equal(on_sea, _sea_checks(s.cells, s.meta, nbr, cell_of, origin))
