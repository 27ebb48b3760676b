"""MCTS as a generator of leaf batches, and Gumbel root selection (sequential halving)."""

from __future__ import annotations

import numpy as np
import pytest
from test_mcts import winning_tower_position

from taluva_ai.agents import MCTSAgent, make_agent
from taluva_ai.agents.search.gumbel import (
    completed_q,
    considered_visits,
    improved_policy,
    score_considered,
)
from taluva_ai.agents.search.tree import Tree
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
    from taluva_ai.agents.search.priors import pairwise_sum

    rng = np.random.default_rng(n)
    for _ in range(20):
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, size=n)
        assert pairwise_sum(x, 0, n) == float(np.sum(x))


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


def _numpy_gumbel_child(N, W, vloss, f, k, p, table, gumbel, logits, raw, c_visit, c_scale):
    """The NumPy child selection the compiled one replaced (as it was, for reference)."""
    visits = N[f:f + k] + vloss[f:f + k]
    n = N[f:f + k]
    q = np.where(n > 0, W[f:f + k, p] / np.maximum(n, 1.0), 0.0)
    prior = np.exp(logits - logits.max())
    prior = prior / prior.sum()
    seen = n > 0
    total = float(n.sum())
    if total > 0:
        pp = np.maximum(prior, np.finfo(np.float64).tiny)
        weighted = float((pp[seen] * q[seen]).sum() / pp[seen].sum())
        mixed = (raw + total * weighted) / (total + 1.0)
    else:
        mixed = raw
    comp = np.where(seen, q, mixed)
    lo, hi = comp.min(), comp.max()
    comp = (comp - lo) / max(hi - lo, 1e-8)
    sigma = (c_visit + float(n.max(initial=0.0))) * c_scale * comp

    def score(considered: float) -> np.ndarray:
        s = np.maximum(-1e9, gumbel + (logits - logits.max()) + sigma)
        return np.where(visits == considered, s, -np.inf)

    sc = score(table[min(int(visits.sum()), len(table) - 1)])
    if not np.isfinite(sc).any():
        sc = score(visits.min())
    return f + int(np.argmax(sc))


def test_compiled_gumbel_child_chooses_what_the_numpy_version_chose() -> None:
    from taluva_ai.agents.search.gumbel import gumbel_child

    rng = np.random.default_rng(5)
    for trial in range(300):
        k = int(rng.integers(1, 400))
        f = int(rng.integers(1, 5))
        size = f + k + 3
        table = np.array(considered_visits(min(16, k), int(rng.integers(1, 500))), dtype=np.int64)
        n_sims = int(rng.integers(0, 2 * len(table)))
        N = np.zeros(size)
        chosen = rng.integers(0, k, size=n_sims)  # visits, some children many times
        np.add.at(N, f + chosen, 1.0)
        W = np.zeros((size, 3))
        W[:, :] = N[:, None] * rng.uniform(-1, 1, size=(size, 3))
        vloss = np.zeros(size)
        if trial % 3 == 0:  # pending virtual visits of a leaf batch
            vloss[f + rng.integers(0, k, size=3)] += 1.0
        prior = rng.dirichlet(np.full(k, 0.3))
        if trial % 4 == 0:
            prior = np.full(k, 1.0 / k)  # ties everywhere
        logits = np.log(np.maximum(prior, 1e-30))
        gumbel = rng.gumbel(size=k) if trial % 2 else np.zeros(k)
        p = int(rng.integers(0, 3))
        raw = float(rng.uniform(-1, 1))
        norm = np.exp(logits - logits.max())
        norm = norm / norm.sum()
        want = _numpy_gumbel_child(N, W, vloss, f, k, p, table, gumbel, logits, raw, 50.0, 0.1)
        got = gumbel_child(N, W, vloss, f, k, p, table, gumbel, logits, norm, raw, 50.0, 0.1)
        assert got == want, trial
