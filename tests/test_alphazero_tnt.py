"""The AlphaZero pipeline on Thurn und Taxis: its encoder (the information set only), the mlp
network family, determinized self-play, and a tiny training run end to end whose network
plays by name."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from taluva_ai.agents import make_agent  # noqa: E402
from taluva_ai.agents.alphazero.config import SelfPlaySection, config_from_dict  # noqa: E402
from taluva_ai.agents.alphazero.encoder import ThurnUndTaxisEncoder, make_encoder  # noqa: E402
from taluva_ai.agents.alphazero.evaluator import NetEvaluator  # noqa: E402
from taluva_ai.agents.alphazero.net import MLPNet, NetConfig, build_net  # noqa: E402
from taluva_ai.agents.alphazero.replay import ReplayBuffer, SampleBuilder  # noqa: E402
from taluva_ai.agents.alphazero.selfplay import SelfPlay  # noqa: E402
from taluva_ai.games.thurn_und_taxis.encoding import OBS_SIZE, encode, encode_arrays  # noqa: E402
from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisState  # noqa: E402
from taluva_ai.protocol import make_game  # noqa: E402

SMALL = NetConfig("tiny", global_hidden=16, blocks=1, value_hidden=8)


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small batches: one torch thread


def _positions(num_players: int, games: int = 2, seed: int = 0):
    """Every state (decision, chance, terminal) of a few greedy-ish games."""
    game = make_game("thurn_und_taxis", num_players=num_players, max_rounds=40)
    rng = np.random.default_rng(seed)
    for g in range(games):
        s = game.new_initial_state(seed=seed + g)
        while True:
            yield s
            if s.is_terminal():
                break
            if s.current_player < 0:
                s.draw()
                continue
            ids, vals = s.heuristic_values()
            a = ids[rng.integers(ids.size)] if rng.random() < 0.3 else ids[np.argmax(vals)]
            s.apply(int(a))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_compiled_observation_equals_the_dict_encoding(n: int) -> None:
    out = np.empty(OBS_SIZE, dtype=np.float32)
    for s in _positions(n, games=1):
        for p in range(n):
            encode_arrays(*s.arrays(), s.game.rules_array, p, out)
            want = encode(s.observation(p), n, s.game.rules.max_rounds)
            assert np.array_equal(out, want)
            assert np.array_equal(s.observation_tensor(p), want)


def test_encoder_reads_the_information_set_only() -> None:
    """Every resampling of what the mover cannot see gives the same encoding, and the network
    ids are the legal action ids."""
    enc = make_encoder("thurn_und_taxis", 2)
    assert isinstance(enc, ThurnUndTaxisEncoder) and enc.network == "mlp"
    rng = np.random.default_rng(1)
    checked = 0
    for s in _positions(2, games=1, seed=3):
        if s.current_player < 0:
            continue
        e = enc.encode(s)
        assert e.spatial.shape == (0, 1, 1) and e.globals.shape == (OBS_SIZE,)
        assert np.array_equal(e.legal, s.legal_actions()) and np.array_equal(e.net_ids, e.legal)
        for _ in range(2):
            d = s.resample(s.current_player, rng)
            assert np.array_equal(enc.encode(d).globals, e.globals)
            assert np.array_equal(d.legal_actions(), e.legal)
        checked += 1
    assert checked > 50
    with pytest.raises(ValueError, match="decision state"):
        enc.encode(make_game("thurn_und_taxis").new_initial_state(seed=0))  # a chance node


def test_mlp_network_shapes_and_one_value_per_player() -> None:
    for n in (2, 3, 4):
        enc = make_encoder("thurn_und_taxis", n)
        net = build_net(enc, SMALL)
        assert isinstance(net, MLPNet)
        with torch.no_grad():
            logits, values = net(torch.zeros(5, 0, 1, 1), torch.zeros(5, OBS_SIZE))
        assert logits.shape == (5, 327) and values.shape == (5, n)
        assert float(values.abs().max()) <= 1.0


def test_selfplay_searches_a_determinization_per_move(monkeypatch) -> None:
    """Self-play never searches the real state of a hidden-information game: every search
    starts from a fresh ``resample`` of the mover's information set."""
    calls: list[int] = []
    real = ThurnUndTaxisState.resample

    def counting(self, player, rng=None):
        calls.append(player)
        return real(self, player, rng)

    monkeypatch.setattr(ThurnUndTaxisState, "resample", counting)
    game = make_game("thurn_und_taxis", num_players=2, max_rounds=3)
    enc = make_encoder("thurn_und_taxis", 2)
    ev = NetEvaluator(build_net(enc, SMALL), enc, "cpu", seed=0)
    sp = SelfPlay(game, enc, ev, SelfPlaySection(games=1, parallel_games=1, sims=4,
                                                 fast_sims=4, leaf_batch=2))
    builder = SampleBuilder(enc)
    (summary,) = sp.play([(0, 5, 6)], builder)
    searches = summary.samples
    assert searches > 0 and len(calls) == searches
    buf = ReplayBuffer(enc, 10)
    buf.add("x", builder.build())
    batch = buf.sample(8, np.random.default_rng(0))
    assert batch.spatial.shape == (8, 0, 1, 1) and batch.mask.shape == (8, 327)
    assert np.allclose(batch.target.sum(axis=1), 1.0)


TINY = {
    "seed": 1, "iterations": 1, "workers": 1, "device": "cpu", "torch_threads": 1,
    "game": {"name": "thurn_und_taxis", "num_players": 2, "max_rounds": 5},
    "net": {"preset": "tiny", "global_hidden": 16, "blocks": 1, "value_hidden": 8},
    "warm_start": {"games": 2, "expert": "heuristic", "heuristic_temperature": 5.0,
                   "steps": 4},
    "selfplay": {"games": 2, "parallel_games": 2, "sims": 8, "fast_sims": 4,
                 "full_search_prob": 0.5, "root": "gumbel", "gumbel_m": 4, "leaf_batch": 4,
                 "rollout": "greedy", "rollout_lambda": 0.5, "records": 1},
    "replay": {"window_games": 10},
    "train": {"steps": 4, "batch_size": 16},
    "gating": {"games": 2, "az": "sims=4,leaf_batch=4"},
    "anchors": {"opponents": ["random"], "games": 2, "every": 0,
                "az": "sims=4,leaf_batch=4"},
}


def test_tiny_tnt_training_run_end_to_end_and_the_network_plays_by_name(tmp_path) -> None:
    from taluva_ai.agents.alphazero.train import TrainingRun

    out = tmp_path / "run"
    TrainingRun(out, config_from_dict(TINY), progress=False).run()
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [0, 1]
    assert lines[1]["selfplay"]["games"] == 2 and lines[1]["selfplay"]["samples"] > 0
    assert "random" in lines[1]["anchors"] and "gating" in lines[1]
    best = out / json.loads((out / "state.json").read_text())["best"]
    payload = torch.load(best, weights_only=True)
    assert payload["encoder"]["name"] == "tnt-observation"
    assert payload["encoder"]["network"] == "mlp"
    agent = make_agent(f"az:path={best},sims=4,leaf_batch=2", seed=0)
    game = make_game("thurn_und_taxis", num_players=2, max_rounds=2)
    s = game.new_initial_state(seed=9)
    moves = 0
    while not s.is_terminal():
        if s.current_player < 0:
            s.draw()
            continue
        a = agent.act(s)
        assert a in s.legal_actions()
        s.apply(a)
        moves += 1
    assert moves > 0 and agent.stats()["leaf"]["rollout"] == "greedy"
    taluva = make_game("taluva").new_initial_state(seed=0)
    while taluva.current_player < 0:
        taluva.draw()
    with pytest.raises(ValueError, match="is for thurn_und_taxis, this game is taluva"):
        agent.act(taluva)
