"""Observation planes, view action ids and the 6 rotations (taluva_ai.games.taluva.encoding)."""

from __future__ import annotations

import numpy as np
import pytest

from taluva_ai.games.taluva import TaluvaGame, TaluvaState
from taluva_ai.games.taluva.encoding import (
    DEFAULT_VIEW_RADIUS,
    PL_LEVEL,
    PL_TERRAIN,
    action_permutation,
    encode,
    engine_to_view,
    global_features,
    make_view,
    num_globals,
    num_planes,
    plane_names,
    rotate_planes,
    rotated_state,
    view_center,
    view_to_engine,
)
from taluva_ai.games.taluva.hexgrid import rotate_hex


def _play(game: TaluvaGame, seed: int, decisions: int) -> TaluvaState:
    """Random self-play for ``decisions`` decisions from ``seed`` (stops at the end)."""
    st = game.new_initial_state(seed=seed)
    rng = np.random.default_rng(seed)
    done = 0
    while not st.is_terminal() and done < decisions:
        if st.current_player == -1:
            st.draw()
            continue
        legal = st.legal_actions()
        st.apply(int(legal[rng.integers(legal.size)]))
        done += 1
    if not st.is_terminal() and st.current_player == -1:
        st.draw()
    return st


def test_sizes() -> None:
    v = make_view(12)
    assert (v.side, v.num_actions, int(v.valid.sum())) == (25, 8750, 469)
    assert DEFAULT_VIEW_RADIUS == 13
    assert [num_planes(n) for n in (2, 3, 4)] == [49, 56, 63]
    assert [num_globals(n) for n in (2, 3, 4)] == [20, 24, 28]
    assert len(plane_names(3)) == 56
    assert plane_names(2)[:3] == ["valid", "level", "terrain/V"]


def test_first_tile_position() -> None:
    game = TaluvaGame()
    st = game.new_initial_state(seed=0)
    st.draw()
    obs, mask, center, out = encode(st)
    assert center == (0, 0) and out == 0
    assert obs.shape == (49, 27, 27) and obs.dtype == np.float32
    assert mask.dtype == np.int8 and mask.shape == (10206,)
    # the six orientations at the centre pixel (13, 13)
    pix = 13 * 27 + 13
    assert np.flatnonzero(mask).tolist() == [ch * 729 + pix for ch in range(6)]
    assert obs[0].sum() == 547  # valid
    assert obs[PL_LEVEL].sum() == 0
    names = plane_names(2)
    tile = st.tile
    assert obs[names.index(f"tile_a/{'JCSRL'[tile // 5]}")].sum() == 547
    assert obs[names.index("tiles_left")][13, 13] == pytest.approx(48 / 48)
    assert obs[names.index("supply_huts/0")][13, 13] == 1.0
    g = global_features(st)
    assert g.shape == (20,) and g[8] == 1.0 and g[9] == 0.0  # tiles_left, step


def test_mask_counts_and_round_trip() -> None:
    game = TaluvaGame()
    _rules, _nbr, cell_of, hexqr, _origin = game.kernel_args()
    for seed in range(3):
        st = _play(game, seed, 30 + 10 * seed)
        legal = st.legal_actions()
        for vr in (4, 12):
            _obs, mask, (qc, rc), out = encode(st, view_radius=vr)
            assert int(mask.sum()) + out == legal.size
            inside = 0
            for a in legal:
                v = engine_to_view(int(a), game.num_cells, hexqr, qc, rc, vr)
                if v >= 0:
                    inside += 1
                    assert mask[v] == 1
                    assert view_to_engine(v, cell_of, qc, rc, vr) == a
            assert inside == int(mask.sum())
    assert view_to_engine(-1, cell_of, 0, 0, 12) == -1
    assert view_to_engine(8750, cell_of, 0, 0, 12) == -1
    assert view_to_engine(0, cell_of, 0, 0, 12) == -1  # a corner pixel: not in the hexagon


def test_planes_match_the_board() -> None:
    game = TaluvaGame()
    st = _play(game, 5, 40)
    obs, _, (qc, rc), _ = encode(st, view_radius=16)
    levels = obs[PL_LEVEL]
    board = game.board
    occ = np.flatnonzero(st.cells[:, 0] > 0)
    assert int((levels > 0).sum()) == occ.size
    for c in occ:
        q, r = board.hex(int(c))
        row, col = r - rc + 16, q - qc + 16
        assert levels[row, col] == st.cells[c, 0]
        assert obs[PL_TERRAIN + st.cells[c, 1] - 1, row, col] == 1.0
    names = plane_names(2)
    p = st.current_player
    huts = obs[names.index("huts/0")].sum() + obs[names.index("huts/1")].sum()
    on_board = sum(20 - st.supply(i)["huts"] - st.destroyed_huts(i) for i in range(2))
    assert huts == on_board
    own_huts = obs[names.index("huts/0")].sum()
    assert own_huts == 20 - st.supply(p)["huts"] - st.destroyed_huts(p)


def test_view_recentres_on_translated_island() -> None:
    """The rules are translation invariant and so is the observation: the island moved by one
    hex east gives the same planes and mask (the view follows it)."""
    game = TaluvaGame()
    st = _play(game, 2, 24)
    board = game.board
    moved = st.clone()
    cells = np.zeros_like(st.cells)
    cells[:, 2] = cells[:, 4] = -1
    for c in np.flatnonzero(st.cells[:, 0] > 0):
        q, r = board.hex(int(c))
        cells[board.cell(q + 1, r)] = st.cells[c]
    moved.cells = cells
    moved.meta[5] += 1  # M_QMIN
    moved.meta[6] += 1  # M_QMAX
    a = encode(st)
    b = encode(moved)
    assert b[2] == (a[2][0] + 1, a[2][1])
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("num_players", [2, 3])
def test_rotation_rotates_planes_and_mask(num_players: int) -> None:
    """Turning a position k x 60 degrees turns its planes (rotate_planes) and its legal mask
    (action_permutation), both steps, every k."""
    game = TaluvaGame(num_players=num_players)
    checked = 0
    expansions = 0
    for seed in range(6):
        for decisions in (1, 9, 22, 41, 60):
            st = _play(game, 100 * num_players + seed, decisions)
            if st.is_terminal():
                continue
            obs, mask, center, out = encode(st, view_radius=18)
            assert out == 0
            for k in range(1, 6):
                rot = rotated_state(st, k)
                c2 = rotate_hex(center[0], center[1], k)
                obs_r, mask_r, _, out_r = encode(rot, view_radius=18, center=c2)
                assert out_r == 0
                np.testing.assert_array_equal(rotate_planes(obs, k), obs_r)
                perm = action_permutation(obs, k)
                assert np.array_equal(np.sort(perm), np.arange(perm.size))
                moved = np.zeros_like(mask_r)
                moved[perm] = mask
                np.testing.assert_array_equal(moved, mask_r)
                checked += 1
            expansions += int(mask[9 * 37 * 37:].sum())
    assert checked >= 100
    assert expansions > 0  # expansion ids were exercised


def test_rotation_composes() -> None:
    game = TaluvaGame()
    st = _play(game, 9, 30)
    obs, *_ = encode(st)
    np.testing.assert_array_equal(rotate_planes(rotate_planes(obs, 2), 4), obs)
    np.testing.assert_array_equal(rotate_planes(obs, 6), obs)


def test_view_center_minimal() -> None:
    game = TaluvaGame()
    st = _play(game, 4, 50)
    _, cell_of, _ = game.board.neighbours, game.board.cell_of, None
    qc, rc = view_center(st.cells, st.meta, cell_of)
    board = game.board
    occ = np.flatnonzero(st.cells[:, 0] > 0)
    q, r = board.q[occ], board.r[occ]

    def need(a: int, b: int) -> int:
        return int(((np.abs(q - a) + np.abs(r - b) + np.abs(q - a + r - b)) // 2).max())

    best = need(qc, rc)
    for a in range(qc - 3, qc + 4):
        for b in range(rc - 3, rc + 4):
            assert need(a, b) >= best


def test_bad_input() -> None:
    game = TaluvaGame()
    st = game.new_initial_state(seed=0)
    st.draw()
    with pytest.raises(ValueError, match=r"view_radius must be an integer in 2\.\.40"):
        make_view(1)
    with pytest.raises(ValueError, match=r"player must lie in 0\.\.1"):
        encode(st, player=2)


def test_measure_view_smoke() -> None:
    """experiments/measure_view.py: the compiled and the agent paths on a couple of games."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "measure_view.py"
    spec = importlib.util.spec_from_file_location("measure_view", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["measure_view"] = mod
    spec.loader.exec_module(mod)
    cfg = mod.Config(games=2, greedy_games=0, players=(2,), radii=(2, 40), agent="greedy",
                     agent_games=1)
    res = mod.measure(cfg)
    assert sorted(res) == ["agent:greedy", "random"]
    row = res["random"]["2"]
    assert row["games"] == 2 and row["decisions"] > 40
    assert row["any_outside/40"] == 0.0 and row["chosen_outside/40"] == 0.0
    assert row["any_outside/2"] > 0.5
    assert res["agent:greedy"]["2"]["games"] == 1


def test_build_sites_count_the_temple_and_tower_builds_the_engine_allows() -> None:
    """``kernels.build_sites`` against the engine's legal builds (RULES.md Step 2.3-2.4): for
    every seat of every decision of greedy games, the temples and towers ``build_actions``
    lists when that seat is to build with one of each in its supply; and
    ``build_site_features`` gives them by player slot, capped at ``SITES_CAP``."""
    from taluva_ai.agents import make_agent
    from taluva_ai.games.taluva import kernels as K
    from taluva_ai.games.taluva.encoding import SITES_CAP, build_site_features
    from taluva_ai.games.taluva.state import M_PLAYER, P_TEMPLES, P_TOWERS

    seen = np.zeros(2, dtype=np.int64)
    for n, rules in ((2, {}), (3, {"no_lake_building": True})):
        game = TaluvaGame(num_players=n, **rules)
        rules_a, nbr, cell_of, _, _ = game.kernel_args()
        h = game.num_cells
        st = game.new_initial_state(seed=n)
        agents = [make_agent("greedy", seed=s) for s in range(n)]
        while not st.is_terminal():
            if st.current_player == -1:
                st.draw()
                continue
            want = np.zeros((n, 2), dtype=np.int64)
            for p in range(n):
                got = np.zeros(2, dtype=np.int64)
                K.build_sites(st.cells, st.meta, rules_a, nbr, cell_of, p, got)
                forced = st.clone()
                forced.meta[M_PLAYER] = p
                forced.players[p, P_TEMPLES] = max(1, forced.players[p, P_TEMPLES])
                forced.players[p, P_TOWERS] = max(1, forced.players[p, P_TOWERS])
                out = np.empty(8 * h, dtype=np.int64)
                k = K.build_actions(forced.cells, forced.players, forced.meta, rules_a, nbr,
                                    cell_of, out, False, np.empty(0, dtype=np.int64))
                ids = out[:k]
                want[p] = (((ids >= 7 * h) & (ids < 8 * h)).sum(), ((ids >= 8 * h) &
                                                                    (ids < 9 * h)).sum())
                assert got.tolist() == want[p].tolist()
            seen += want.sum(axis=0) > 0
            mover = st.current_player
            slots = [(mover + j) % n for j in range(n)]
            feats = build_site_features(st)
            assert feats.tolist() == pytest.approx(
                [min(want[p, 0], SITES_CAP) / SITES_CAP for p in slots]
                + [min(want[p, 1], SITES_CAP) / SITES_CAP for p in slots])
            st.apply(agents[mover].act(st))
    assert (seen > 5).all()  # temple and tower sites were there to count
    solo = TaluvaGame(num_players=1, solo=True).new_initial_state(seed=0)
    with pytest.raises(ValueError, match="2-4 players, not the solo variant"):
        build_site_features(solo)
