"""MCTS: finds a one-move win, values per seat (max^n), chance nodes, determinism, budgets."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import make_position

from taluva_ai.agents import MCTSAgent, make_agent
from taluva_ai.agents.search.tree import CHANCE, DECISION, Tree
from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.protocol import CHANCE as CHANCE_PLAYER


def winning_tower_position(num_players: int, player: int):
    """Build step; ``player`` has no temple left and one tower: the tower on the level-3 rock
    next to its hut wins at once (all temples and all towers built). The other builds are
    two expansions."""
    game = TaluvaGame(num_players=num_players)
    hexes = [
        (-1, 0, 1, "V", 0),
        (0, 0, 1, "J", 0, "h", player),
        (0, 1, 1, "C", 0),
        (1, -1, 3, "V", 2),
        (1, 0, 3, "R", 2),
        (2, -1, 3, "S", 2),
    ]
    state = make_position(game, hexes, player=player, step="build",
                          supplies={player: (5, 0, 1)})
    return game, state


def test_position_has_the_intended_legal_builds() -> None:
    _, s = winning_tower_position(2, 0)
    assert sorted(s.action_to_string(int(a)) for a in s.legal_actions()) == [
        "expand@0,0:C", "expand@0,0:R", "tower@1,0",
    ]


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("prior", ["none", "heuristic"])
def test_finds_one_move_early_victory_for_every_seat(num_players: int, prior: str) -> None:
    player = num_players - 1  # not seat 0: the value must be read from the mover's entry
    _, s = winning_tower_position(num_players, player)
    agent = make_agent(f"mcts:sims=60,prior={prior}", seed=3)
    before = s.to_position_string()
    action = agent.act(s)
    assert s.action_to_string(action) == "tower@1,0"
    assert s.to_position_string() == before  # the search does not touch the state
    top = agent.stats()["top"][0]
    assert top["action"] == action
    assert top["value"] == pytest.approx(1.0)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_value_vector_is_the_returns_per_seat(num_players: int) -> None:
    player = 1
    _, s = winning_tower_position(num_players, player)
    agent = MCTSAgent(seed=0, sims=30, prior="none")
    tree = Tree(num_players)
    agent.search(s, tree)
    win = [c for c in tree.children(0) if s.action_to_string(int(tree.action[c])) == "tower@1,0"]
    assert len(win) == 1
    c = win[0]
    assert tree.N[c] > 0
    mean = tree.W[c] / tree.N[c]
    expected = np.full(num_players, -1.0 / (num_players - 1))
    expected[player] = 1.0
    np.testing.assert_allclose(mean, expected)
    assert tree.N[0] == 30


def _drawn(seed: int, num_players: int = 2):
    """The first decision of a new game of ``seed``: its first tile drawn."""
    s = TaluvaGame(num_players=num_players).new_initial_state(seed=seed)
    s.draw()
    return s


def _searched(s, **params) -> Tree:
    """The tree of one search of ``MCTSAgent(**params)`` from ``s``."""
    tree = Tree(2)
    MCTSAgent(**params).search(s, tree)
    return tree


def test_chance_children_carry_the_unseen_tile_distribution() -> None:
    s = _drawn(12)
    s.apply("tile@0,0:N")  # build step: every build ends the turn at a chance node
    tree = _searched(s, seed=1, sims=40, prior="none")
    chance_nodes = [n for n in range(tree.size) if tree.kind[n] == CHANCE]
    assert chance_nodes, "builds end the turn: a chance node must follow"
    drawn = int(s.meta[3])
    undrawn = np.bincount(s.deck[drawn:].astype(np.int64), minlength=25)
    for n in chance_nodes:
        kids = list(tree.children(n))
        probs = tree.prior[kids]
        assert probs.sum() == pytest.approx(1.0)
        assert (tree.W[n] / max(tree.N[n], 1)).shape == (2,)
        outcomes = tree.action[kids]
        np.testing.assert_allclose(probs, undrawn[outcomes] / undrawn.sum())
        assert sorted(outcomes.tolist()) == np.flatnonzero(undrawn).tolist()


def test_expand_mode_spreads_visits_by_probability() -> None:
    s = _drawn(5)
    s.apply(s.legal_actions()[0])
    tree = _searched(s, seed=0, sims=400, prior="none", chance="expand")
    # every build leads to the chance node of the next draw; take the most visited one
    best = max(tree.children(0), key=lambda c: tree.N[c])
    assert tree.kind[best] == CHANCE
    kids = list(tree.children(best))
    visits = tree.N[kids]
    share = tree.prior[kids] * (tree.N[best] - 1)
    assert np.all(np.abs(visits - share) <= 1.0 + 1e-9)  # stratified: within one visit


def test_same_seed_same_move_and_statistics() -> None:
    s = _drawn(11)
    a1 = make_agent("mcts:sims=80", seed=42)
    a2 = make_agent("mcts:sims=80", seed=42)
    assert a1.act(s) == a2.act(s)
    assert a1.stats() == a2.stats()


def test_simulation_budget_is_exact() -> None:
    s = _drawn(2, num_players=3)
    agent = make_agent("mcts:sims=37,leaf_batch=4", seed=0)
    agent.act(s)
    assert agent.stats()["simulations"] == 37


def test_time_budget_is_honoured() -> None:
    s = _drawn(2)
    agent = make_agent("mcts:time=0.3", seed=0)
    agent.act(s)  # compile and warm up
    t = time.perf_counter()
    agent.act(s)
    elapsed = time.perf_counter() - t
    assert agent.stats()["simulations"] >= 1
    assert elapsed < 0.3 + 0.5  # the deadline is checked between simulations


def test_virtual_losses_are_removed_after_a_batch() -> None:
    tree = _searched(_drawn(4), seed=0, sims=32, leaf_batch=8)
    assert tree.N[0] == 32
    assert not tree.vloss[: tree.size].any()


def test_tree_reuse_keeps_the_subtree_of_the_played_line() -> None:
    s = _drawn(8)
    agent = make_agent("mcts:sims=200,reuse_tree=true", seed=0)
    a = agent.act(s)
    s.apply(a)
    agent.act(s)  # the build step of the same turn, a child of the previous root
    assert agent.stats()["simulations"] > 200


def test_root_noise_changes_priors_but_keeps_a_distribution() -> None:
    tree = _searched(_drawn(8), seed=0, sims=10, dirichlet_alpha=0.3)
    kids = list(tree.children(0))
    assert tree.kind[0] == DECISION
    assert tree.prior[kids].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("spec", [
    "mcts:sims=0", "mcts:chance=maybe", "mcts:bogus=1", "mcts:rollout=smart",
    "mcts:leaf_batch=0", "mcts:prior=net", "mcts:temperature=-1", "mcts:sims=1.5",
    "mcts:leaf_batch=2.5", "mcts:c=abc", "mcts:fpu=abc", "mcts:samples=0",
    "mcts:temperature=nan", "mcts:dirichlet_frac=5", "mcts:dirichlet_alpha=-1",
    "mcts:reuse_tree=5", "mcts:evaluator=x", "mcts:time=inf", "mcts:prior_temperature=0",
])
def test_bad_parameters_raise_value_error(spec: str) -> None:
    with pytest.raises(ValueError):
        make_agent(spec, seed=0)


def test_refuses_to_act_at_a_chance_node() -> None:
    s = TaluvaGame().new_initial_state(seed=0)
    with pytest.raises(ValueError, match="decision node"):
        make_agent("mcts:sims=5", seed=0).act(s)


def test_resample_keeps_what_the_player_knows_and_redeals_the_rest() -> None:
    from taluva_ai.games.taluva.position import parse_position

    game = TaluvaGame(num_players=3, tile_preview=True)
    s = game.new_initial_state(seed=6)
    for _ in range(3):
        s.draw()  # one tile dealt to each seat
    assert s.current_player == 0
    hands = s.players[:3, 6].copy()
    seen_other = set()
    for seed in range(30):
        r = s.resample(0, seed)
        assert r.players[0, 6] == hands[0]  # own tile kept
        assert r.to_position_string().split(";deck=")[0].split(";seats=")[0] == \
            s.to_position_string().split(";deck=")[0].split(";seats=")[0]
        pool_before = sorted(s.deck[3:].tolist() + hands[1:].tolist())
        pool_after = sorted(r.deck[3:].tolist() + r.players[1:3, 6].tolist())
        assert pool_after == pool_before  # the unseen tiles are redealt, none lost
        # the deck stays the tile set and its drawn part shows the sampled held tiles, not the
        # true ones (a resample read as a position is a legal position)
        assert sorted(r.deck.tolist()) == sorted(s.deck.tolist())
        assert sorted(r.deck[:3].tolist()) == sorted(r.players[:3, 6].tolist())
        assert parse_position(game, r.to_position_string()).to_position_string() == \
            r.to_position_string()
        seen_other.add(tuple(r.players[1:3, 6].tolist()))
    assert len(seen_other) > 1  # the other seats' tiles are actually resampled
    with pytest.raises(ValueError, match="seat"):
        s.resample(3)


def test_mcts_never_reads_hidden_tiles() -> None:
    """With tile_preview, the move depends only on the mover's information: changing the
    other seats' held tiles (and the deck) does not change the search."""
    game = TaluvaGame(num_players=2, tile_preview=True)
    s = game.new_initial_state(seed=9)
    s.draw()
    s.draw()
    t = s.clone()
    t.players[1, 6], t.deck[5] = t.deck[5], t.players[1, 6]  # swap seat 1's tile with the deck
    a = make_agent("mcts:sims=60", seed=5)
    b = make_agent("mcts:sims=60", seed=5)
    assert a.act(s) == b.act(t)
    assert a.stats() == b.stats()


def test_a_proven_win_is_played_even_with_fewer_visits() -> None:
    _, s = winning_tower_position(2, 0)
    agent = MCTSAgent(seed=0, sims=3, prior="none")  # one visit per child at most
    assert s.action_to_string(agent.act(s)) == "tower@1,0"


def test_compiled_and_python_loops_agree_on_a_forced_win_and_budgets() -> None:
    for compiled in (True, False):
        _, s = winning_tower_position(3, 2)
        agent = MCTSAgent(seed=4, sims=45, prior="none", compiled=compiled)
        tree = Tree(3)
        assert agent._compiled_ok(s) is compiled
        agent.search(s, tree)
        assert tree.N[0] == 45
        win = next(c for c in tree.children(0) if s.action_to_string(int(tree.action[c])) ==
               "tower@1,0")
        np.testing.assert_allclose(tree.W[win] / tree.N[win], [-0.5, -0.5, 1.0])
        # every visit is accounted for (the root is expanded before the first simulation)
        kids = list(tree.children(0))
        assert tree.N[kids].sum() == tree.N[0]


def test_compiled_loop_grows_the_tree() -> None:
    s = TaluvaGame().new_initial_state(seed=2)
    s.draw()
    agent = MCTSAgent(seed=0, sims=300, prior="none")
    tree = Tree(2, capacity=64)  # far too small: the driver must grow it between chunks
    agent.search(s, tree)
    assert tree.N[0] == 300
    assert tree.size <= tree.capacity


def test_compiled_loop_of_taluva_is_loaded_from_the_cache_in_a_new_process() -> None:
    """The loop is compiled once per kernel set (and with or without heuristic priors), each a
    cached dispatcher of its own (agents/search/specialize.py); a new process loads, not
    compiles."""
    import subprocess
    import sys

    from taluva_ai.agents.search import compiled as mc
    from taluva_ai.games.taluva import search_kernels as sk

    uct = mc._runner(sk.KERNELS, False)
    assert uct is mc._runner(sk.KERNELS, False)  # one per process
    made = {uct, mc._runner(sk.KERNELS, True), mc._runner(sk.SOLO_KERNELS, False)}
    other = (*sk.KERNELS[:-1], sk.solo_values)
    made.add(mc._runner(other, True))
    assert len(made) == 4
    names = {d.py_func.__qualname__ for d in made}
    assert len(names) == 4 and all(n.startswith("run_simulations_") for n in names)
    assert uct.py_func.__qualname__.startswith("run_simulations_taluva_uct_")
    s = TaluvaGame().new_initial_state(seed=2)
    s.draw()
    MCTSAgent(seed=0, sims=20).act(s)  # compiled (and cached) here, if not yet
    code = ("from taluva_ai.games.taluva import TaluvaGame\n"
            "from taluva_ai.agents import MCTSAgent\n"
            "from taluva_ai.agents.search import compiled as mc\n"
            "s = TaluvaGame().new_initial_state(seed=2); s.draw()\n"
            "MCTSAgent(seed=0, sims=20).act(s)\n"
            "from taluva_ai.games.taluva import search_kernels as sk\n"
            "run = mc._runner(sk.KERNELS, True)  # the default: heuristic priors\n"
            "print(len(run.stats.cache_hits), len(run.stats.cache_misses))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.split() == ["1", "0"]


def test_uct_with_fewer_simulations_than_moves_tries_random_ones_and_plays_the_best_tried() -> None:
    """UCT (``prior=none``) with fewer simulations than legal moves: the moves tried are drawn
    at random, not the first ones generated, and among the most visited the best mean value
    is played (before: the first moves in generation order, and a tie broken at random; 0.315
    against OpenSpiel's MCTSBot at 50 simulations each, docs/openspiel.md)."""
    game = TaluvaGame()
    s = game.new_initial_state(seed=11)
    greedy = make_agent("greedy", seed=0)
    plies = 0
    while plies < 12 or s.current_player == CHANCE_PLAYER or len(s.legal_actions()) <= 100:
        if s.current_player == CHANCE_PLAYER:
            s.draw()
        else:
            s.apply(greedy.act(s))
        plies += 1
    legal = [int(a) for a in s.legal_actions()]
    agent = make_agent("mcts:sims=20,prior=none", seed=3)
    move = agent.act(s)
    tried = [c for c in agent.search_candidates() if c["visits"] > 0]
    assert len(legal) > 100 and all(c["visits"] == 1 for c in tried)
    assert len(tried) == 20
    assert {c["action"] for c in tried} != set(legal[:20])
    best = max(c["value"] for c in tried)
    assert [c["value"] for c in tried if c["action"] == move] == [best]
