"""MCTS as a generator of leaf batches, and Gumbel root selection (sequential halving)."""

from __future__ import annotations

import numpy as np
import pytest
from test_mcts import winning_tower_position

from taluva_ai.agents import MCTSAgent, make_agent
from taluva_ai.agents.mcts_gumbel import (
    completed_q,
    considered_visits,
    improved_policy,
    score_considered,
)
from taluva_ai.agents.mcts_tree import Tree
from taluva_ai.games.taluva import TaluvaGame


def test_considered_visits_is_mctx_sequential_halving() -> None:
    # m = 4 actions, 8 simulations: one visit each, then the best two get two more each
    assert considered_visits(4, 8) == (0, 0, 0, 0, 1, 1, 2, 2)
    assert considered_visits(16, 32)[:16] == (0,) * 16
    assert considered_visits(1, 3) == (0, 1, 2)
    seq = considered_visits(16, 200)
    assert len(seq) == 200 and max(seq) > 20  # the survivors absorb the rest of the budget


def test_completed_q_mixes_the_value_into_unvisited_actions() -> None:
    q = np.array([0.5, 0.0, -0.5])
    n = np.array([2.0, 0.0, 1.0])
    prior = np.array([0.5, 0.3, 0.2])
    raw = 0.1
    mixed = (raw + 3 * (0.5 * 0.5 + 0.2 * -0.5) / 0.7) / 4
    comp = np.array([0.5, mixed, -0.5])
    want = (50 + 2) * 0.1 * (comp - comp.min()) / (comp.max() - comp.min())
    np.testing.assert_allclose(completed_q(q, n, prior, raw, 50.0, 0.1), want)
    pol = improved_policy(np.log(prior), want)
    assert pol.sum() == pytest.approx(1.0) and pol.argmax() == 0
    s = score_considered(1.0, np.zeros(3), np.log(prior), want, n)
    assert np.isneginf(s[[0, 1]]).all() and np.isfinite(s[2])


def test_search_steps_driven_by_hand_equals_search() -> None:
    s = TaluvaGame().new_initial_state(seed=6)
    s.draw()
    a = MCTSAgent(seed=3, sims=40, leaf_batch=4)
    b = MCTSAgent(seed=3, sims=40, leaf_batch=4)
    ta, tb = Tree(2), Tree(2)
    a.search(s, ta)
    steps = b.search_steps(s, tb)
    batches = 0
    try:
        leaves = next(steps)
        while True:
            batches += 1
            assert 1 <= len(leaves) <= 4
            leaves = steps.send(b.evaluator.evaluate(leaves))
    except StopIteration:
        pass
    assert batches >= 10
    n = ta.size
    assert tb.size == n
    np.testing.assert_array_equal(ta.N[:n], tb.N[:n])
    np.testing.assert_array_equal(ta.W[:n], tb.W[:n])
    assert a.choose(ta, s) == b.choose(tb, s)


@pytest.mark.parametrize("num_players", [2, 3])
def test_gumbel_finds_the_one_move_win(num_players: int) -> None:
    _, s = winning_tower_position(num_players, num_players - 1)
    agent = make_agent("mcts:sims=8,root=gumbel,gumbel_m=2", seed=1)
    assert s.action_to_string(agent.act(s)) == "tower@1,0"


def test_gumbel_visits_at_most_m_actions_and_its_policy_is_a_distribution() -> None:
    s = TaluvaGame().new_initial_state(seed=9)
    rng = np.random.default_rng(0)
    while s.tiles_placed < 4 or s.step.name != "TILE":  # a tile step, many placements
        if s.current_player < 0:
            s.draw()
        else:
            s.apply(int(rng.choice(s.legal_actions())))
    assert s.legal_actions().size > 50
    agent = MCTSAgent(seed=2, sims=32, root="gumbel", gumbel_m=8, rollout="greedy",
                      temperature=1.0)
    tree = Tree(2)
    agent.search(s, tree)
    kids = list(tree.children(0))
    visits = tree.N[kids]
    assert tree.N[0] == 32 and visits.sum() == 32
    assert (visits > 0).sum() == 8  # the 8 considered actions, one visit each at first
    action = agent.choose(tree, s)
    acts, pol = agent.root_policy()
    assert sorted(acts.tolist()) == s.legal_actions().tolist()
    assert pol.sum() == pytest.approx(1.0) and (pol > 0).all()
    chosen = kids[list(tree.action[kids]).index(action)]
    assert tree.N[chosen] == visits.max()  # the survivor of the halving


def test_gumbel_options_are_checked() -> None:
    with pytest.raises(ValueError, match="needs priors"):
        make_agent("mcts:root=gumbel,prior=none", seed=0)
    with pytest.raises(ValueError, match="root must be"):
        make_agent("mcts:root=best", seed=0)
    with pytest.raises(ValueError, match="reuse_tree"):
        make_agent("mcts:root=gumbel,reuse_tree=true", seed=0)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 130, 255, 256, 257, 1000, 4099])
def test_compiled_sum_adds_in_numpys_order(n: int) -> None:
    """The compiled Gumbel root sums as np.sum does (pairwise), so its choices are the bits
    the NumPy version gave (the ladder's games do not depend on which ran)."""
    from taluva_ai.agents.mcts_gumbel import _pairwise_sum

    rng = np.random.default_rng(n)
    for _ in range(20):
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, size=n)
        assert _pairwise_sum(x, 0, n) == float(np.sum(x))


def test_gumbel_root_is_loaded_from_the_cache_in_a_new_process() -> None:
    """A cached function that called a recursive one crashed the process that loaded it
    (Numba); the summation is iterative now. This process compiles (or loads) the Gumbel
    root, a new one loads it from the cache and searches."""
    import subprocess
    import sys

    code = ("from taluva_ai.games.taluva import TaluvaGame\n"
            "from taluva_ai.agents import make_agent\n"
            "s = TaluvaGame().new_initial_state(seed=2); s.draw()\n"
            "print(make_agent('mcts:sims=40,rollout=greedy,root=gumbel', seed=0).act(s))\n")
    s = TaluvaGame().new_initial_state(seed=2)
    s.draw()
    move = make_agent("mcts:sims=40,rollout=greedy,root=gumbel", seed=0).act(s)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) == move
