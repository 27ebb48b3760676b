"""Properties of the engine over random games (hypothesis picks seeds, players and options;
the games are played by the seeded ``random`` and ``greedy`` agents)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from helpers import (
    pieces_on_board,
    play_random_game,
    same_arrays,
    settlements_of,
    state_arrays,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taluva_ai.agents import make_agent
from taluva_ai.games.taluva import TaluvaGame, TaluvaState
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.state import (
    C_BUILDING,
    M_DRAWN,
    START_HUTS,
    START_TEMPLES,
    START_TOWERS,
    Step,
)
from taluva_ai.games.taluva.tiles import NUM_TILE_TYPES

SETTINGS = settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

games_st = st.builds(
    lambda players, isolated, returned, tpp: TaluvaGame(
        num_players=players, new_hut_isolated=isolated, destroyed_huts_return=returned,
        tiles_per_player=tpp,
    ),
    st.integers(2, 4),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, 12]),
)
seeds_st = st.integers(0, 2**31 - 1)
agents_st = st.sampled_from(["random", "greedy"])


def check_pieces(state: TaluvaState) -> None:
    """Supply + on the board (+ destroyed, for huts) = the starting pieces, for every seat."""
    for p in range(state.num_players):
        huts, temples, towers = pieces_on_board(state, p)
        sup = state.supply(p)
        assert sup["huts"] + huts + state.destroyed_huts(p) == START_HUTS
        assert sup["temples"] + temples == START_TEMPLES
        assert sup["towers"] + towers == START_TOWERS
        if state.game.rules.destroyed_huts_return:
            assert state.destroyed_huts(p) == 0


def check_settlements(state: TaluvaState) -> None:
    """kernels.settlements labels exactly the connected, maximal groups a flood fill finds."""
    game = state.game
    board = game.board
    h = game.num_cells
    scan = np.arange(h, dtype=np.int32)
    for owner in range(-1, state.num_players):
        label = np.full(h, -7, dtype=np.int32)
        size, temples, towers, canon = (np.zeros(K.MAX_SETTLEMENTS, dtype=np.int32)
                                        for _ in range(4))
        n = K.settlements(state.cells, board.neighbours, scan, h, owner, label, size, temples,
                          towers, canon)
        groups: dict[int, set[tuple[int, int]]] = {}
        for c in range(h):
            if label[c] >= 0:
                groups.setdefault(int(label[c]), set()).add(board.hex(c))
            else:
                assert label[c] == -1
        assert sorted(groups) == list(range(n))
        expected = set()
        for p in ([owner] if owner >= 0 else range(state.num_players)):
            expected |= settlements_of(state, p)
        assert {frozenset(g) for g in groups.values()} == expected
        for i, g in groups.items():
            cells = [board.cell(*x) for x in g]
            b = state.cells[cells, C_BUILDING]
            assert size[i] == len(g)
            assert temples[i] == int((b == 2).sum())
            assert towers[i] == int((b == 3).sum())
            assert canon[i] == min(cells)
        # numbered in order of their smallest cell
        assert list(canon[:n]) == sorted(canon[:n])


def check_chance(state: TaluvaState) -> None:
    outcomes = state.chance_outcomes()
    undrawn = Counter(state.deck[int(state.meta[M_DRAWN]):].tolist())
    total = sum(undrawn.values())
    assert math.isclose(math.fsum(p for _, p in outcomes), 1.0, abs_tol=1e-12)
    assert [t for t, _ in outcomes] == sorted(undrawn)
    for t, p in outcomes:
        assert 0 <= t < NUM_TILE_TYPES
        assert p == undrawn[t] / total


def check_legal(state: TaluvaState) -> np.ndarray:
    legal = state.legal_actions()
    assert legal.dtype == np.int64
    assert legal.size > 0
    assert np.all(np.diff(legal) > 0)  # ascending, hence unique
    mask = state.legal_action_mask()
    assert mask.shape == (state.game.num_actions,)
    assert np.array_equal(np.flatnonzero(mask), legal)
    h = state.game.num_cells
    if state.step == Step.TILE:
        assert legal.max() < 6 * h
    else:
        assert legal.min() >= 6 * h
    return legal


@SETTINGS
@given(game=games_st, seed=seeds_st, agent=agents_st)
def test_invariants_along_random_games(game, seed, agent):
    ag = make_agent(agent, seed=seed)
    state = game.new_initial_state(seed=seed)
    decisions = 0
    while not state.is_terminal():
        check_pieces(state)
        if state.current_player == -1:
            check_chance(state)
            before = state_arrays(state)
            t = state.draw()
            state.undo()
            assert same_arrays(state_arrays(state), before)
            state.apply(t)
            continue
        check_legal(state)
        if decisions % 3 == 0:
            check_settlements(state)
        a = ag.act(state)
        before = state_arrays(state)
        text_before = state.to_position_string()
        state.apply(a)
        after = state_arrays(state)
        state.undo()
        assert same_arrays(state_arrays(state), before)
        assert state.to_position_string() == text_before
        state.apply(a)
        assert same_arrays(state_arrays(state), after)
        decisions += 1
    check_pieces(state)
    check_settlements(state)
    assert state.legal_actions().size == 0
    r = state.returns()
    if state.truncated:
        assert r.tolist() == [0.0] * game.num_players
    else:
        assert math.isclose(r.sum(), 0.0, abs_tol=1e-12)
        assert len(state.winners()) >= 1
    # undo all the way back to the start
    while state.history():
        state.undo()
    assert state.ply == 0
    assert state.to_position_string() == game.new_initial_state(seed=seed).to_position_string()


@settings(max_examples=3, deadline=None)
@given(game=games_st, seed=seeds_st)
def test_every_legal_action_applies(game, seed):
    """At every fourth decision, each legal id applies without error to a clone, which then
    waits for the right step and player; the original is untouched."""
    counted = []

    def check(state: TaluvaState) -> None:
        if len(counted) % 4:
            counted.append(0)
            return
        legal = check_legal(state)
        text = state.to_position_string()
        p = state.current_player
        for a in legal:
            c = state.clone()
            c.apply(int(a))
            if state.step == Step.TILE:
                assert c.step in (Step.BUILD, Step.CHANCE, Step.TERMINAL)
                if c.step == Step.BUILD:
                    assert c.current_player == p
            else:
                assert c.step in (Step.CHANCE, Step.TERMINAL, Step.TILE)
        assert state.to_position_string() == text
        counted.append(len(legal))

    play_random_game(game, seed, on_decision=check)
    assert sum(counted) > 0


@settings(max_examples=4, deadline=None)
@given(game=games_st, seeds=st.lists(seeds_st, min_size=3, max_size=3))
def test_batch_kernels_agree_with_single_states(game, seeds):
    rng = np.random.default_rng(seeds[0])
    states = [game.new_initial_state(seed=s) for s in seeds]
    cells_b = np.stack([s.cells for s in states])
    players_b = np.stack([s.players for s in states])
    deck_b = np.stack([s.deck for s in states])
    meta_b = np.stack([s.meta for s in states])
    rules, nbr, cell_of, hexqr, origin = game.kernel_args()
    mask_b = np.ones((len(states), game.num_actions), dtype=np.bool_)
    steps = 0
    while not all(s.is_terminal() for s in states):
        K.batch_legal_mask(cells_b, players_b, meta_b, rules, nbr, cell_of, origin, mask_b)
        acts = np.zeros(len(states), dtype=np.int64)
        for i, s in enumerate(states):
            assert np.array_equal(mask_b[i], s.legal_action_mask())
            if s.is_terminal():
                continue
            if s.current_player == -1:
                acts[i] = int(s.deck[int(s.meta[M_DRAWN])])
            else:
                legal = s.legal_actions()
                acts[i] = int(legal[rng.integers(legal.size)])
            s.apply(int(acts[i]))
        K.batch_apply(cells_b, players_b, deck_b, meta_b, rules, nbr, cell_of, hexqr, origin,
                      acts)
        for i, s in enumerate(states):
            assert same_arrays((cells_b[i], players_b[i], deck_b[i], meta_b[i]),
                               (s.cells, s.players, s.deck, s.meta))
        steps += 1
    assert steps >= 3 * 2  # at least two full turns


@settings(max_examples=4, deadline=None)
@given(game=games_st, seed=seeds_st, agent=agents_st)
def test_same_seed_same_game(game, seed, agent):
    s1, a1 = play_random_game(game, seed, agent)
    s2, a2 = play_random_game(game, seed, agent)
    assert a1 == a2
    assert s1.history() == s2.history()
    assert s1.to_position_string() == s2.to_position_string()
    assert s1.returns().tolist() == s2.returns().tolist()


def test_different_seeds_differ():
    game = TaluvaGame()
    _, a1 = play_random_game(game, 1)
    _, a2 = play_random_game(game, 2)
    assert a1 != a2


def test_chance_outcomes_fresh_game():
    game = TaluvaGame()
    s = game.new_initial_state(seed=0)
    outcomes = dict(s.chance_outcomes())
    assert len(outcomes) == 25
    assert outcomes[1] == 6 / 48  # JC
    assert outcomes[0] == 1 / 48  # JJ
    s.apply(1)
    assert s.tile == 1
    s.apply("tile@0,0:N")
    s.apply("hut@-1,1")
    assert dict(s.chance_outcomes())[1] == 5 / 47


def test_clone_is_independent():
    """A clone and its original never share state: playing on (or undoing) either leaves the
    other as it was, its undo history included."""
    game = TaluvaGame()
    s = game.new_initial_state(seed=1)
    s.draw()
    s.apply("tile@0,0:N")
    before_build = s.to_position_string()
    s.apply(int(s.legal_actions()[0]))
    after_build = s.to_position_string()
    c = s.clone()
    c.draw()
    c.apply(int(c.legal_actions()[0]))
    assert s.to_position_string() == after_build
    c = s.clone()
    c.undo()
    assert c.to_position_string() == before_build
    c.apply(int(c.legal_actions()[-1]))  # another build on the clone
    assert s.to_position_string() == after_build
    s.undo()
    assert s.to_position_string() == before_build
