"""The compiled network-guided search (agents/search/batched.py) against the Python search.

The compiled loop must make the same random draws in the same order and the same arithmetic
as ``MCTSAgent.search_steps`` with a network evaluator, so one game searched either way gives
the same tree: visit counts, value sums, priors, size and move. The compiled encoder must give
``TaluvaEncoder.encode``'s planes, globals and network ids exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from taluva_ai import make_game  # noqa: E402
from taluva_ai.agents import make_agent  # noqa: E402
from taluva_ai.agents.alphazero.config import NetConfig, SelfPlaySection  # noqa: E402
from taluva_ai.agents.alphazero.encoder import make_encoder  # noqa: E402
from taluva_ai.agents.alphazero.evaluator import NetEvaluator  # noqa: E402
from taluva_ai.agents.alphazero.net import build_net  # noqa: E402
from taluva_ai.agents.alphazero.replay import SampleBuilder  # noqa: E402
from taluva_ai.agents.alphazero.selfplay import SelfPlay  # noqa: E402
from taluva_ai.agents.mcts import MCTSAgent  # noqa: E402
from taluva_ai.agents.search.batched import BatchedSearch, compiled_net_search_ok  # noqa: E402
from taluva_ai.agents.search.tree import Tree  # noqa: E402
from taluva_ai.games.taluva import search_kernels as tk  # noqa: E402


def _net(num_players: int, seed: int = 0):  # type: ignore[no-untyped-def]
    """A tiny network with non-trivial batch-norm statistics (fixed seed)."""
    torch.manual_seed(seed)
    enc = make_encoder("taluva", num_players)
    net = build_net(enc, NetConfig("tiny"))
    g = torch.Generator().manual_seed(seed)
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return net.eval(), enc


def _position(num_players: int = 2, turns: int = 9, seed: int = 3, **rules):  # type: ignore[no-untyped-def]
    game = make_game("taluva", num_players=num_players, **rules)
    state = game.new_initial_state(seed=seed)
    greedy = make_agent("greedy", seed=1)
    for _ in range(turns):
        while state.current_player < 0:
            state.draw()
        if state.is_terminal():
            break
        state.apply(greedy.act(state))
    while state.current_player < 0:
        state.draw()
    return state


def _search(state, net, enc, compiled: bool, **params):  # type: ignore[no-untyped-def]
    ev = NetEvaluator(net, enc, "cpu", seed=5, backend="torch")
    agent = MCTSAgent(seed=11, evaluator=ev, compiled=compiled, **params)
    tree = Tree(len(state.returns()))
    agent.search(state, tree)
    move = agent.choose(tree, state)
    kids = np.array(list(tree.children(0)))
    return move, tree, kids, ev.evaluations


@pytest.mark.parametrize("params", [
    {"sims": 40, "c": 1.25, "leaf_batch": 4, "root": "puct"},
    {"sims": 40, "c": 1.25, "leaf_batch": 1, "root": "puct", "dirichlet_alpha": 0.3},
    {"sims": 48, "c": 1.25, "leaf_batch": 8, "root": "gumbel", "temperature": 1.0},
    {"sims": 24, "c": 1.25, "leaf_batch": 1, "root": "gumbel", "gumbel_m": 4},
    {"sims": 32, "c": 1.25, "leaf_batch": 4, "root": "puct", "chance": "sample"},
], ids=["puct-batch4", "puct-noise", "gumbel-batch8", "gumbel-m4", "chance-sample"])
def test_compiled_search_equals_python_search(params) -> None:  # type: ignore[no-untyped-def]
    net, enc = _net(2)
    state = _position()
    a_py, t_py, _, e_py = _search(state, net, enc, False, **params)
    a_c, t_c, _, e_c = _search(state, net, enc, True, **params)
    assert a_py == a_c
    assert t_py.size == t_c.size
    assert e_py == e_c  # network evaluations (terminal leaves need none)
    n = t_py.size
    for name in ("parent", "action", "first_child", "n_children", "kind", "to_move", "N", "W",
                 "prior"):
        assert np.array_equal(getattr(t_py, name)[:n], getattr(t_c, name)[:n]), name
    assert t_py.N[0] == params["sims"]


def test_compiled_search_equals_python_search_three_players_and_solo() -> None:
    for players, rules in ((3, {}), (1, {"solo": True})):
        net, enc = _net(players)
        state = _position(players, turns=6, **rules)
        py = _search(state, net, enc, False, sims=32, leaf_batch=4, root="gumbel")
        co = _search(state, net, enc, True, sims=32, leaf_batch=4, root="gumbel")
        assert py[0] == co[0]
        for name in ("N", "W", "prior", "action"):
            assert np.array_equal(getattr(py[1], name)[:py[1].size],
                                  getattr(co[1], name)[:co[1].size]), (players, name)


def test_python_search_steps_through_new_chance_nodes() -> None:
    """A network evaluator values decision nodes only: every evaluation below the root is a
    decision node, and no chance node is ever a leaf (values_chance_nodes = False)."""
    net, enc = _net(2)
    state = _position()
    _, tree, _, evaluations = _search(state, net, enc, False, sims=60, leaf_batch=1)
    chance = [i for i in range(tree.size) if tree.kind[i] == 2]
    assert chance, "the search reached a chance node"
    for i in chance:  # every expanded chance node has a visited (and expanded) outcome
        kids = range(tree.first_child[i], tree.first_child[i] + tree.n_children[i])
        assert sum(tree.N[k] for k in kids) == tree.N[i]
    assert evaluations == 61  # the root and one decision leaf per simulation


def test_compiled_encoder_equals_encoder() -> None:
    sites_seen = 0
    for players, rules, opts in ((2, {}, {}), (3, {}, {}), (4, {}, {}), (1, {"solo": True}, {}),
                                 (2, {}, {"build_sites": True}),
                                 (3, {"no_lake_building": True}, {"build_sites": True})):
        enc = make_encoder("taluva", players, **opts)
        kernels, consts = enc.search_kernels()
        assert kernels == (tk.SOLO_NET_KERNELS if players == 1 else tk.NET_KERNELS)
        encode, net_id = kernels[1], kernels[2]
        for turns in (0, 3, 8) + ((24, 40) if opts else ()):
            state = _position(players, turns=turns, seed=turns + 1, **rules)
            for _ in range(2):  # the tile step, then the build step
                e = enc.encode(state)
                s, k, _ = state.search_kernels()
                sp = np.full((enc.spatial_planes, enc.side, enc.side), 7, dtype=np.float32)
                gl = np.full(enc.num_globals, 7, dtype=np.float32)
                ctx = np.zeros(4, dtype=np.int64)
                encode(s, k, consts, sp, gl, ctx)
                assert np.array_equal(sp, e.spatial.astype(np.float32))
                assert np.array_equal(gl, e.globals)
                if opts:
                    sites_seen += int(gl[-2 * players:].any())
                ids = [net_id(k, consts, ctx, int(a)) for a in e.legal]
                assert ids == e.net_ids.tolist()
                state.apply(int(e.legal[len(e.legal) // 2]))
                if state.current_player < 0:
                    break
    assert sites_seen >= 4  # positions with temple or tower sites were compared


def test_batched_search_of_several_games_is_reproducible() -> None:
    net, enc = _net(2)
    states = [_position(turns=t, seed=t) for t in (2, 5, 9)]

    def run(stats: bool):  # type: ignore[no-untyped-def]
        ev = NetEvaluator(net, enc, "cpu", seed=0, backend="torch")
        agents = [MCTSAgent(seed=i, evaluator=ev, sims=24 + 8 * i, leaf_batch=4, root="gumbel",
                            temperature=1.0) for i in range(3)]
        bs = BatchedSearch(ev, agents[0].config, 3, 2, capacity=64)  # grows on the way
        for b in range(3):
            bs.start(b, agents[b], states[b], sims=agents[b].config.sims)
        finished = []
        while bs.active():
            finished += bs.run_round()
        assert sorted(finished) == [0, 1, 2]
        out = []
        for b in range(3):
            move = agents[b].choose(bs.tree(b), states[b], stats=stats)
            out.append((move, bs.tree(b).N[:bs.size[b]].copy(), agents[b].root_policy()[1],
                        agents[b].stats()))
        return out

    # without the move statistics (self-play's choice): the same moves and policy targets
    first, second = run(True), run(False)
    for (m1, n1, p1, s1), (m2, n2, p2, s2), sims in zip(first, second, (24, 32, 40),
                                                        strict=True):
        assert m1 == m2 and np.array_equal(n1, n2) and np.array_equal(p1, p2)
        assert n1[0] == sims
        assert s1["simulations"] == sims and "pv" in s1 and s2 == {"simulations": sims}


def test_compiled_self_play_is_reproducible_and_records_samples() -> None:
    net, enc = _net(2)
    game = make_game("taluva", num_players=2, tiles_per_player=4)
    cfg = SelfPlaySection(games=3, parallel_games=2, sims=12, fast_sims=4, full_search_prob=0.5,
                          root="gumbel", gumbel_m=4, leaf_batch=4, records=0)

    def run():  # type: ignore[no-untyped-def]
        ev = NetEvaluator(net, enc, "cpu", seed=0, backend="torch")
        sp = SelfPlay(game, enc, ev, cfg)
        state = game.new_initial_state(seed=1)
        state.draw()
        assert compiled_net_search_ok(sp._agent(1), state)
        builder = SampleBuilder(enc)
        out = sp.play([(g, 100 + g, 200 + g) for g in range(3)], builder)
        return sorted((s.game, s.decisions, s.samples, s.simulations, tuple(s.returns))
                      for s in out), len(builder.build())

    a, b = run(), run()
    assert a == b
    summaries, samples = a
    assert [s[0] for s in summaries] == [0, 1, 2]
    assert samples == sum(s[2] for s in summaries) > 0


def test_onnx_backend_equals_torch() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from taluva_ai.agents.alphazero.net import onnx_forward

    for players in (2, 1):
        net, enc = _net(players)
        f = onnx_forward(net, enc, threads=1)
        rng = np.random.default_rng(0)
        sp = (rng.random((5, enc.spatial_planes, enc.side, enc.side)) < 0.2).astype(np.float32)
        gl = rng.random((5, enc.num_globals)).astype(np.float32)
        lo, va = f(sp, gl)
        with torch.inference_mode():
            tl, tv = net(torch.from_numpy(sp), torch.from_numpy(gl))
        assert lo.shape == tuple(tl.shape) and va.shape == tuple(tv.shape)
        assert np.abs(lo - tl.numpy()).max() < 1e-5
        assert np.abs(va - tv.numpy()).max() < 1e-5


def test_backend_errors_are_one_line() -> None:
    net, enc = _net(2)
    with pytest.raises(ValueError, match="backend must be one of auto, torch, onnx, numpy"):
        NetEvaluator(net, enc, "cpu", backend="tensorrt")
    with pytest.raises(ValueError, match="backend=numpy needs a network with a NumPy copy"):
        NetEvaluator(net, enc, "cpu", backend="numpy")


def test_an_agent_searches_games_of_other_rule_sets_with_their_own_rules() -> None:
    """The az agent keeps its batched search between moves; a game of another rule set (same
    array shapes) gets a search of its own, never the first game's rules."""
    net, enc = _net(2)
    ev = NetEvaluator(net, enc, "cpu", seed=0, backend="torch")
    agent = MCTSAgent(seed=3, evaluator=ev, sims=8, leaf_batch=4)
    short = _position(turns=2, tiles_per_player=3)
    long = _position(turns=2)
    agent.act(long)
    first = agent._batched
    assert first.accepts(long) and not first.accepts(short)
    agent.act(short)
    assert agent._batched is not first and agent._batched.accepts(short)
    with pytest.raises(ValueError, match="one game and rule set"):
        agent._batched.start(0, agent, long)


def test_selfplay_and_inference_benchmarks_report_their_figures() -> None:
    """`taluva bench --selfplay` / `--inference` at toy sizes: every figure present and
    consistent (the speeds themselves are for the benchmark, not for a test)."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from taluva_ai.bench import RECIPE_2P, bench_inference, bench_selfplay

    said: list[str] = []
    sp = bench_selfplay(presets=("tiny@4",), games=2, parallel_games=2, sims=4, leaf_batch=2,
                        rollout_sims=20, repeats=1, say=said.append, recipe_games=0)
    assert "builtin-2p" not in sp
    assert said == ["bench --selfplay: tiny@4 (1/1): an untimed game (on a first run it "
                    "compiles the search)", "bench --selfplay: tiny@4 (1/1): 2 timed games, 2 "
                    "at a time", "bench --selfplay: the rollout MCTS (1 searches of 20 "
                    "simulations)"]
    v = sp["tiny@4"]
    assert v["backend"] == "onnx" and v["view_radius"] == 4 and v["max_batch"] == 16
    assert v["stem_kernel"] == 3
    both = bench_selfplay(presets=("tiny@4/1x1",), games=1, parallel_games=1, sims=2,
                          leaf_batch=1, rollout_sims=20, repeats=1, max_batch=3, recipe_games=1)
    one = both["tiny@4/1x1"]
    recipe = both["builtin-2p"]  # the 2-player recipe's self-play, in its own settings
    assert recipe["settings"] == RECIPE_2P and recipe["view_radius"] == 11
    assert recipe["stem_kernel"] == 1 and recipe["max_batch"] == 3
    assert recipe["ratio_cpu"] == round(recipe["sims_per_cpu_s"]
                                        / both["rollout_mcts_sims_per_cpu_s"], 3)
    assert one["max_batch"] == 3 and one["stem_kernel"] == 1
    assert one["parameters"] == v["parameters"] - 16 * 29 * 8  # a ninth of the stem's weights
    assert v["simulations"] > 0 and v["evaluations"] > 0 and 0 <= v["net_share"] <= 1
    assert v["ratio"] == round(v["sims_per_s"] / sp["rollout_mcts_sims_per_s"], 3)
    said.clear()
    inf = bench_inference(presets=("tiny",), batch_sizes=(1, 4), view_radii=(4,),
                          min_seconds=0.01, repeats=1, say=said.append)
    assert said == [f"bench --inference: tiny at view radius 4 (1/1), batch {b} ({i}/2)"
                    for i, b in ((1, 1), (2, 4))]
    got = {(r["backend"], r["batch"]) for r in inf["results"]}
    assert got == {(b, n) for b in ("torch", "onnx") for n in (1, 4)}
    assert set(inf["fastest"]["tiny@r4"]) == {"1", "4"}


def test_onnx_runtime_evaluates_a_batch_in_chunks_of_16_with_the_same_outputs() -> None:
    """ONNX Runtime's cost per position grows with the batch once activations outgrow the
    caches (docs/alphazero.md), so the evaluator gives it chunks of ``ONNX_CHUNK``; the
    outputs are those of one call (to float rounding) and in the batch's order."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from taluva_ai.agents.alphazero.evaluator import ONNX_CHUNK

    net, enc = _net(2)
    ev = NetEvaluator(net, enc, "cpu")
    assert ev.backend == "onnx" and ev.max_batch == ONNX_CHUNK == 16
    assert NetEvaluator(net, enc, "cpu", backend="torch").max_batch == 512
    assert NetEvaluator(net, enc, "cpu", max_batch=5).max_batch == 5
    with pytest.raises(ValueError, match="max_batch must be >= 1, got 0"):
        NetEvaluator(net, enc, "cpu", max_batch=0)
    rng = np.random.default_rng(0)
    sp = rng.integers(0, 2, (40, enc.spatial_planes, enc.side, enc.side)).astype(np.float32)
    gl = rng.random((40, enc.num_globals)).astype(np.float32)
    calls: list[int] = []
    run = ev._numpy
    ev._numpy = lambda a, b: (calls.append(len(a)), run(a, b))[1]
    logits, values = ev.infer_arrays(sp, gl)
    assert calls == [16, 16, 8] and ev.evaluations == 40
    whole = NetEvaluator(net, enc, "cpu", max_batch=40).infer_arrays(sp, gl)
    np.testing.assert_allclose(logits, whole[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(values, whole[1], rtol=0, atol=1e-6)


def test_auto_backend_falls_back_to_torch_without_the_onnx_packages(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A machine without ``onnx`` (torch's exporter needs it) plays on PyTorch, and
    ``backend=onnx`` names the missing package."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "onnx" else real(name, *a))
    net, enc = _net(2)
    assert NetEvaluator(net, enc, "cpu").backend == "torch"
    with pytest.raises(ValueError, match="backend=onnx needs the onnx package"):
        NetEvaluator(net, enc, "cpu", backend="onnx")


def test_the_benchs_recipe_is_the_2_player_recipes_self_play() -> None:
    """``bench --selfplay``'s ``builtin-2p`` entry measures the self-play of
    experiments/configs/builtin-2p.toml after its schedule switches the rollouts off."""
    from taluva_ai.agents.alphazero.config.reader import load_config
    from taluva_ai.bench import RECIPE_2P

    cfg = load_config(Path(__file__).resolve().parents[1] / "experiments" / "configs"
                      / "builtin-2p.toml")
    sp, net, enc = cfg.selfplay, cfg.net, cfg.encoder
    assert cfg.schedule[0]["at"] == 31
    assert cfg.schedule[0]["selfplay"] == {"rollout": "none", "rollout_lambda": 0.0}
    assert f"{net.preset}/{net.stem_kernel}x{net.stem_kernel}" == RECIPE_2P["net"]
    assert (net.aux_head, enc.view_radius, enc.build_sites) == (
        RECIPE_2P["aux_head"], RECIPE_2P["view_radius"], RECIPE_2P["build_sites"])
    assert sp.root == "gumbel" and cfg.game.num_players == 2
    for key in ("parallel_games", "sims", "fast_sims", "full_search_prob", "gumbel_m",
                "leaf_batch", "temperature_decisions"):
        assert getattr(sp, key) == RECIPE_2P[key], key
