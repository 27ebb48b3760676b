"""Property tests for Thurn und Taxis along random and greedy games (hypothesis): cards,
houses and bonus tiles are conserved; scores and places follow from the final state."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from taluva_ai import make_game
from taluva_ai.agents import make_agent
from taluva_ai.games.thurn_und_taxis import ThurnUndTaxisState
from taluva_ai.games.thurn_und_taxis.board import STACK_SIZE, TOTAL_TILE_POINTS
from tests.tnt_helpers import check_invariants

POINTS = {0: 0, 3: 2, 4: 3, 5: 5, 6: 7, 7: 10}  # carriage points, §1


def _tiles_conserved(s: ThurnUndTaxisState) -> None:
    held = sum(k for p in range(s.num_players) for k, _ in s.tiles(p).values())
    left = sum(len(s.stack_left(name)) for name in
               ("route_7", "route_6", "route_5", "baiern", "boehmen_salzburg", "baden",
                "wuerttemberg_hohenzollern", "schweiz_tyrol", "all_provinces", "game_end"))
    assert held + left == int(STACK_SIZE.sum()) == 30
    pts = sum(s.tile_points(p) for p in range(s.num_players))
    rest = sum(sum(s.stack_left(name)) for name in
               ("route_7", "route_6", "route_5", "baiern", "boehmen_salzburg", "baden",
                "wuerttemberg_hohenzollern", "schweiz_tyrol", "all_provinces", "game_end"))
    assert pts + rest == TOTAL_TILE_POINTS


def _expected_places(s: ThurnUndTaxisState) -> list[int]:
    n = s.num_players
    sc = [POINTS[s.carriage(p)] + s.tile_points(p) - s.houses_left(p) for p in range(n)]
    assert sc == s.scores()
    h = s.end_triggered_by

    def beats(a: int, b: int) -> bool:
        if sc[a] != sc[b]:
            return sc[a] > sc[b]
        return h >= 0 and (a - h) % n < (b - h) % n

    return [sum(beats(b, a) for b in range(n) if b != a) for a in range(n)]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.sampled_from([2, 3, 4]),
       agent=st.sampled_from(["random", "greedy", "greedy:epsilon=0.3"]))
def test_conservation_and_scoring_along_games(seed: int, n: int, agent: str) -> None:
    game = make_game("thurn_und_taxis", num_players=n, max_rounds=40)
    s = game.new_initial_state(seed=seed)
    agents = [make_agent(agent, seed=seed + p) for p in range(n)]
    while not s.is_terminal():
        if s.current_player < 0:
            s.draw()
        else:
            mask = s.legal_action_mask()
            legal = s.legal_actions()
            assert np.array_equal(np.flatnonzero(mask), legal) and legal.size > 0
            s.apply(agents[s.current_player].act(s))
        check_invariants(s)
        _tiles_conserved(s)
    assert s.places() == _expected_places(s)
    r, k = s.returns(), len(s.winners())
    want = [(n - k) / (k * (n - 1)) if p in s.winners() else -1 / (n - 1) for p in range(n)]
    assert np.allclose(r, want) and abs(float(r.sum())) < 1e-9
    assert (s.end_triggered_by >= 0) == (not s.truncated)
