"""AlphaZero network, encoder adapter and checkpoints: shapes, symmetries, masked policy,
per-player values, checkpoint safety and the messages of incompatible checkpoints."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import taluva_ai.games.taluva.encoding as E  # noqa: E402
from taluva_ai.agents import make_agent  # noqa: E402
from taluva_ai.agents.alphazero.encoder import TaluvaEncoder, make_encoder  # noqa: E402
from taluva_ai.agents.alphazero.evaluator import (  # noqa: E402
    NetEvaluator,
    legal_priors,
    seats_to_slots,
    slots_to_seats,
)
from taluva_ai.agents.alphazero.net import (  # noqa: E402
    PRESETS,
    CheckpointError,
    NetConfig,
    build_net,
    export_onnx,
    load_checkpoint,
    masked_log_softmax,
    net_from_checkpoint,
    parameter_count,
    save_checkpoint,
)
from taluva_ai.games.taluva import TaluvaGame  # noqa: E402

SMALL = NetConfig("tiny", channels=8, blocks=1, global_hidden=8, value_hidden=8)


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small batches: one torch thread


def positions(num_players: int, games: int, seed: int = 0):
    """Decision states along seeded random games (``num_players = 1``: the solo variant)."""
    game = TaluvaGame(solo=True) if num_players == 1 else TaluvaGame(num_players=num_players)
    for g in range(games):
        rng = np.random.default_rng(seed + g)
        s = game.new_initial_state(seed=seed + g)
        while not s.is_terminal():
            if s.current_player < 0:
                s.draw()
                continue
            yield s
            legal = s.legal_actions()
            s.apply(int(legal[rng.integers(legal.size)]))


def save_small(path, num_players: int = 2, config: NetConfig = SMALL, seed: int = 0,
               meta: dict | None = None):
    torch.manual_seed(seed)
    enc = make_encoder("taluva", num_players)
    net = build_net(enc, config)
    game = TaluvaGame(num_players=num_players)
    save_checkpoint(path, net, enc, config, {"name": "taluva", "options": game.options()},
                    meta or {"iteration": 0})
    return net, enc


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_encoder_splits_the_view_planes_into_spatial_planes_and_globals(num_players) -> None:
    enc = make_encoder("taluva", num_players)
    assert enc.spatial_planes == 23 + 3 * num_players
    assert enc.num_globals == 4 * num_players + 12
    assert enc.spatial_planes + enc.num_globals == E.num_planes(num_players)
    assert enc.num_actions == 14 * 27 * 27
    s = next(p for i, p in enumerate(positions(num_players, 1)) if i == 9)
    e = enc.encode(s)
    planes, mask, _, _ = E.encode(s)
    np.testing.assert_array_equal(e.spatial, planes[:enc.spatial_planes])
    np.testing.assert_array_equal(e.globals, E.global_features(s))
    # the constant planes are the globals, in the encoding's plane order
    const = planes[enc.spatial_planes:][:, 13, 13]
    assert sorted(const.tolist()) == sorted(e.globals.tolist())
    np.testing.assert_array_equal(e.legal, s.legal_actions())
    assert sorted(e.net_ids[e.net_ids >= 0].tolist()) == np.flatnonzero(mask).tolist()
    assert e.player == s.current_player
    names = E.plane_names(num_players)[:enc.spatial_planes]
    assert [n for n, b in zip(names, enc.binary_planes, strict=True) if not b] == \
        ["level"] + [f"huts/{j}" for j in range(num_players)] + ["settlement/size"]


def test_encoder_refuses_chance_nodes_and_unknown_games() -> None:
    s = TaluvaGame().new_initial_state(seed=0)
    with pytest.raises(ValueError, match="decision state"):
        make_encoder("taluva", 2).encode(s)
    with pytest.raises(ValueError, match="no network encoder for game 'chess'"):
        make_encoder("chess", 2)
    with pytest.raises(ValueError, match=r"^the encoder of 'thurn_und_taxis' has no option "
                       r"'build_sites' \(its options: none\)$"):
        make_encoder("thurn_und_taxis", 2, build_sites=True)
    with pytest.raises(ValueError, match=r"^the encoder of 'taluva' has no option 'sites' "
                       r"\(its options: view_radius, build_sites\)$"):
        make_encoder("taluva", 2, sites=True)
    with pytest.raises(ValueError, match="view_radius"):
        TaluvaEncoder(2, view_radius=1)


@pytest.mark.parametrize("num_players", [2, 3])
def test_symmetries_match_the_encodings_rotations(num_players: int) -> None:
    """transform_spatial is rotate_planes on the spatial planes, and the id permutations (a
    fast path for legal expansions) agree with action_permutation on every legal id."""
    enc = make_encoder("taluva", num_players)
    checked = expansions = 0
    for i, s in enumerate(positions(num_players, 2, seed=40)):
        if i % 5 or checked == 24:
            continue
        e = enc.encode(s)
        planes, _, _, _ = E.encode(s)
        perms = enc.id_permutations(e)
        ids = e.net_ids[e.net_ids >= 0]
        expansions += int((ids >= E.CH_EXPAND * 729).any())
        for k in range(6):
            np.testing.assert_array_equal(enc.transform_spatial(e.spatial, k),
                                          E.rotate_planes(planes, k)[:enc.spatial_planes])
            np.testing.assert_array_equal(perms[k, ids], E.action_permutation(planes, k)[ids])
        checked += 1
    assert checked == 24 and expansions >= 3


@pytest.mark.parametrize("num_players", [2, 4])
def test_network_shapes_and_per_player_values(num_players: int) -> None:
    enc = make_encoder("taluva", num_players)
    net = build_net(enc, SMALL).eval()
    sp = torch.zeros(3, enc.spatial_planes, 27, 27)
    gl = torch.zeros(3, enc.num_globals)
    with torch.no_grad():
        logits, values = net(sp, gl)
    assert logits.shape == (3, enc.num_actions)
    assert values.shape == (3, num_players)
    assert float(values.abs().max()) < 1.0  # tanh
    assert logits.dtype == torch.float32


def test_value_pooling_max_is_the_max_over_the_board_and_export_has_no_where() -> None:
    """The value head's max pooling is a plain max (v >= 0, 0 off the board): the same values,
    bit for bit, as a max over the board's pixels only, and no Where node in the ONNX graph."""
    enc = make_encoder("taluva", 2, view_radius=11, build_sites=True)
    torch.manual_seed(3)
    net = build_net(enc, NetConfig.parse("tiny/1x1")).eval()
    with torch.no_grad():
        for m in net.modules():  # trained-looking batch norms: some channels go dead
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-1.0, 1.0)
                m.bias.uniform_(-1.0, 0.5)
    seen: dict[str, torch.Tensor] = {}
    net.value_conv.register_forward_hook(lambda m, i, o: seen.__setitem__("v", o))
    net.globals_mlp.register_forward_hook(lambda m, i, o: seen.__setitem__("e", o))
    rng = np.random.default_rng(0)
    sp = torch.from_numpy((rng.random((8, enc.spatial_planes, enc.side, enc.side)) < 0.3)
                          .astype(np.float32))
    gl = torch.from_numpy(rng.random((8, enc.num_globals)).astype(np.float32))
    with torch.no_grad():
        _, values = net(sp, gl)
        valid = net.valid
        v = seen["v"] * valid
        masked = v.masked_fill(valid == 0, float("-inf")).amax(dim=(2, 3))
        want = torch.tanh(net.value_fc(torch.cat([v.sum(dim=(2, 3)) / net.num_valid, masked,
                                                  seen["e"]], dim=1)))
    assert bool((masked == 0).any()) and bool((masked > 0).any())
    assert torch.equal(values, want)
    import onnx

    graph = onnx.load_from_string(export_onnx(net, enc)).graph
    assert "Where" not in {n.op_type for n in graph.node}


def test_presets_grow_and_overrides_apply() -> None:
    enc = make_encoder("taluva", 2)
    counts = [parameter_count(build_net(enc, NetConfig(p))) for p in PRESETS]
    assert counts == sorted(counts) and len(set(counts)) == 3
    assert NetConfig("small", blocks=2).sizes() == {**PRESETS["small"], "blocks": 2}
    with pytest.raises(ValueError, match="preset"):
        NetConfig("huge")
    with pytest.raises(ValueError, match="channels"):
        NetConfig("tiny", channels=-1)


def test_masked_log_softmax_is_a_distribution_over_legal_ids_only() -> None:
    logits = torch.tensor([[1.0, 5.0, 2.0, 0.0]])
    mask = torch.tensor([[True, False, True, False]])
    lp = masked_log_softmax(logits, mask)
    p = lp.exp() * mask
    assert float(p.sum()) == pytest.approx(1.0)
    assert float(lp[0, 1]) == 0.0 and torch.isfinite(lp).all()
    assert float(p[0, 2] / p[0, 0]) == pytest.approx(float(np.exp(1.0)))


def test_legal_priors_give_actions_outside_the_view_the_smallest_logit() -> None:
    logits = np.array([0.0, 1.0, 3.0, -2.0])
    pr = legal_priors(logits, np.array([1, -1, 2]))
    w = np.exp(np.array([1.0, 1.0, 3.0]))
    np.testing.assert_allclose(pr, w / w.sum())
    np.testing.assert_allclose(legal_priors(logits, np.array([-1, -1])), [0.5, 0.5])


def test_value_slots_and_seats() -> None:
    v = np.array([0.9, -0.3, -0.6])  # slot 0 = the player to move (seat 2)
    seats = slots_to_seats(v, 2)
    np.testing.assert_allclose(seats, [-0.3, -0.6, 0.9])
    np.testing.assert_allclose(seats_to_slots(seats, 2), v)


def test_evaluator_mixes_rollouts_and_values_chance_nodes(tmp_path) -> None:
    net, enc = save_small(tmp_path / "n.pt")
    game = TaluvaGame()
    s = game.new_initial_state(seed=3)
    s.draw()
    chance = game.new_initial_state(seed=4)  # a chance node
    ev = NetEvaluator(net, enc, rollout="none", seed=1)
    priors, values = ev.evaluate([s, chance])
    assert priors[0] is not None and priors[0].shape == (s.legal_actions().size,)
    assert priors[0].sum() == pytest.approx(1.0) and priors[1] is None
    assert values.shape == (2, 2)
    mixed = NetEvaluator(net, enc, rollout="greedy", rollout_lambda=1.0, seed=1)
    _, v1 = mixed.evaluate([s])
    assert sorted(v1[0].tolist()) == [-1.0, 1.0]  # lambda = 1: the rollout's returns
    with pytest.raises(ValueError, match="rollout"):
        NetEvaluator(net, enc, rollout="none", rollout_lambda=0.5)
    with pytest.raises(ValueError, match="lambda"):
        NetEvaluator(net, enc, rollout="greedy", rollout_lambda=1.5)


def test_checkpoint_round_trip_with_weights_only(tmp_path, monkeypatch) -> None:
    path = tmp_path / "best.pt"
    net, enc = save_small(path)
    calls = []
    real = torch.load

    def spy(*a, **k):
        calls.append(k.get("weights_only"))
        return real(*a, **k)

    monkeypatch.setattr(torch, "load", spy)
    payload = load_checkpoint(path)
    assert calls == [True]
    net2, cfg = net_from_checkpoint(payload, path, enc)
    assert cfg == SMALL
    for (k, a), (_, b) in zip(net.state_dict().items(), net2.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
    assert not list(tmp_path.glob(".*.part"))  # written atomically


def test_incompatible_checkpoints_say_what_differs(tmp_path) -> None:
    path = tmp_path / "c.pt"
    save_small(path, num_players=2)
    payload = load_checkpoint(path)
    with pytest.raises(CheckpointError, match=r"another encoding: num_players 2 \(expected 3\)"):
        net_from_checkpoint(payload, path, make_encoder("taluva", 3))
    with pytest.raises(CheckpointError, match=r"view_radius 13 \(expected 11\)"):
        net_from_checkpoint(payload, path, make_encoder("taluva", 2, view_radius=11))
    from taluva_ai.agents.alphazero.net import payload_sha256

    forged = [  # consistent checkpoints (their checksums redone) that do not fit
        # another version of the encoding
        ({"encoder": {**payload["encoder"], "version": 0}}, r"version 0 \(expected 1\)"),
        # weights of another shape than the network the checkpoint declares
        ({"net": {**payload["net"], "channels": 16}},
         r"weights do not fit the network it declares \(size mismatch for \S+: copying a param "
         r"with shape"),
        # a weight missing: torch's own first line names none, so the next one is quoted
        ({"state_dict": {k: v for k, v in payload["state_dict"].items()
                         if k != "value_fc.0.bias"}},
         r"weights do not fit the network it declares \(Missing key\(s\) in state_dict: "
         r"\"value_fc\.0\.bias\"\.\)$")]
    for i, (fields, message) in enumerate(forged):
        bad = dict(payload, **fields)
        bad["sha256"] = payload_sha256(bad)
        torch.save(bad, tmp_path / f"bad{i}.pt")
        with pytest.raises(CheckpointError, match=message):
            net_from_checkpoint(load_checkpoint(tmp_path / f"bad{i}.pt"), f"bad{i}.pt",
                                make_encoder("taluva", 2))
    from taluva_ai.agents.alphazero.net import check_compatible

    with pytest.raises(CheckpointError, match=r"network shape: channels 8 \(expected 16\)"):
        check_compatible(payload, path, config=NetConfig("tiny"))


def test_unreadable_and_foreign_files_are_refused(tmp_path) -> None:
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match=r"junk\.pt: unreadable \(not a PyTorch "
                       r"checkpoint: no zip archive in its 16 bytes\)$"):
        load_checkpoint(tmp_path / "junk.pt")
    save_small(tmp_path / "good.pt")
    good = (tmp_path / "good.pt").read_bytes()
    (tmp_path / "empty.pt").write_bytes(b"")
    (tmp_path / "cut.pt").write_bytes(good[: len(good) // 2])
    flipped = bytearray(good)
    start = good.index(b"data.pkl") + len(b"data.pkl")  # inside the pickle's stored bytes
    flipped[start + 40] ^= 0xFF
    (tmp_path / "flip.pt").write_bytes(bytes(flipped))
    for name, why in (("empty", r"an empty file"),
                      ("cut", rf"a damaged or cut-short zip archive \({len(good) // 2:,} bytes\)"),
                      ("flip", r"a damaged zip archive: \S+ fails its CRC check")):
        with pytest.raises(CheckpointError, match=rf"{name}\.pt: unreadable \({why}\)$"):
            load_checkpoint(tmp_path / f"{name}.pt")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a taluva-ai AlphaZero checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="no such file"):
        load_checkpoint(tmp_path / "missing.pt")

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    torch.save({"format": "x", "obj": Evil()}, tmp_path / "evil.pt")
    with pytest.raises(CheckpointError, match="unreadable"):  # weights_only refuses it
        load_checkpoint(tmp_path / "evil.pt")


def test_az_agent_by_name_plays_legal_moves_and_checks_its_checkpoint(tmp_path, capsys) -> None:
    path = tmp_path / "best.pt"
    save_small(path)
    agent = make_agent(f"az:path={path},sims=12,leaf_batch=4,device=cpu", seed=5)
    game = TaluvaGame()
    s = game.new_initial_state(seed=1)
    s.draw()
    for _ in range(4):
        a = agent.act(s)
        assert a in set(s.legal_actions().tolist())
        assert agent.stats()["simulations"] == 12
        s.apply(a)
        while s.current_player < 0:
            s.draw()
    same = make_agent(f"az:path={path},sims=12,leaf_batch=4,device=cpu", seed=5)
    s2 = game.new_initial_state(seed=1)
    s2.draw()
    agent.reset(5)
    assert agent.act(s2) == same.act(s2)
    with pytest.raises(ValueError, match="needs a network: az:builtin"):
        make_agent("az", seed=0)
    with pytest.raises(ValueError, match="no such file"):
        make_agent(f"az:path={tmp_path}/nothing.pt", seed=0)
    with pytest.raises(ValueError, match="priors from the network"):
        make_agent(f"az:path={path},prior=heuristic", seed=0)
    assert agent.stats()["leaf"] == {"rollout": "none", "lambda": 0.0, "samples": 8}
    three = TaluvaGame(num_players=3).new_initial_state(seed=0)
    three.draw()
    with pytest.raises(ValueError, match="2-player games, this game has 3"):
        agent.act(three)
    # refused before any move: by the arena, and by taluva play in one line
    from taluva_ai.cli import main
    from taluva_ai.tournament import run_tournament

    with pytest.raises(ValueError, match="is for taluva, this game is thurn_und_taxis"):
        run_tournament([f"az:path={path}", "random"], 2, tmp_path / "t",
                       game_name="thurn_und_taxis", progress=False)
    assert not (tmp_path / "t" / "results.jsonl").exists()
    with pytest.raises(SystemExit) as exc:
        main(["play", "--solo", "--players", f"az:path={path}"])
    assert exc.value.code == 2
    assert "2-player games, this game has 1 player(s)" in capsys.readouterr().err


def test_az_agent_values_leaves_as_the_runs_selfplay_did_unless_told(tmp_path) -> None:
    path = tmp_path / "mixed.pt"
    save_small(path, meta={"iteration": 3, "leaf": {"rollout": "greedy", "lambda": 0.25,
                                                     "samples": 4}})
    agent = make_agent(f"az:path={path},sims=4", seed=0)
    assert agent.leaf == {"rollout": "greedy", "lambda": 0.25, "samples": 4}
    assert agent.evaluator.rollout == "greedy" and agent.evaluator.rollout_lambda == 0.25
    pure = make_agent(f"az:path={path},sims=4,rollout=none", seed=0)
    assert pure.leaf["rollout"] == "none" and pure.evaluator.rollout_lambda == 0.0
    half = make_agent(f"az:path={path},sims=4,rollout=random", seed=0)
    assert half.leaf == {"rollout": "random", "lambda": 0.5, "samples": 4}


def test_solo_encoder_planes_globals_extra_ids_and_symmetries() -> None:
    """One player is the solo variant: the 26 seat planes, the solo planes' values after the
    globals, the bonus and box actions as 6 extra network ids that no rotation moves."""
    enc = make_encoder("taluva", 1)
    assert (enc.spatial_planes, enc.num_globals, enc.extra_actions) == (26, 16 + 24, 6)
    assert enc.num_actions == 14 * 27 * 27 + 6
    assert enc.spec()["extra_actions"] == 6 and "extra_actions" not in \
        make_encoder("taluva", 2).spec()
    extra_seen = 0
    for i, s in enumerate(positions(1, 2, seed=5)):
        if i % 4:
            continue
        e = enc.encode(s)
        planes, mask, _, _ = E.encode(s)
        assert planes.shape[0] == E.num_planes(1, solo=True) == 66
        np.testing.assert_array_equal(e.spatial, planes[:26])
        np.testing.assert_array_equal(e.globals[:16], E.global_features(s))
        np.testing.assert_array_equal(e.globals[16:], planes[42:, 13, 13])
        assert sorted(e.net_ids[e.net_ids >= 0].tolist()) == np.flatnonzero(mask).tolist()
        ids = e.net_ids[e.net_ids >= 0]
        extra = ids[ids >= 14 * 729]
        extra_seen += extra.size
        perms = enc.id_permutations(e)
        for k in range(6):
            np.testing.assert_array_equal(perms[k, ids], E.action_permutation(planes, k)[ids])
            np.testing.assert_array_equal(perms[k, extra], extra)
            np.testing.assert_array_equal(enc.transform_spatial(e.spatial, k),
                                          E.rotate_planes(planes, k)[:26])
    assert extra_seen > 0  # some positions offered a bonus or a box action


def test_solo_network_has_extra_logits_and_one_value_on_the_score_scale(tmp_path) -> None:
    from taluva_ai.agents.alphazero.evaluator import value_targets

    enc = make_encoder("taluva", 1)
    torch.manual_seed(0)
    net = build_net(enc, SMALL).eval()
    with torch.no_grad():
        logits, values = net(torch.zeros(2, 26, 27, 27), torch.zeros(2, enc.num_globals))
    assert logits.shape == (2, 14 * 729 + 6) and values.shape == (2, 1)
    s = next(positions(1, 1, seed=2))
    # value targets: (score - 40) / 20, clipped to the tanh range
    np.testing.assert_allclose(value_targets(s, np.array([50.0])), [0.5])
    np.testing.assert_allclose(value_targets(s, np.array([-30.0])), [-1.0])
    np.testing.assert_allclose(value_targets(s, np.array([75.0])), [1.0])
    # the evaluator gives values on the game's scale (what MCTS normalizes back)
    ev = NetEvaluator(net, enc, "cpu", seed=0)
    _, v = ev.evaluate([s])
    with torch.no_grad():
        e = enc.encode(s)
        raw = net(torch.from_numpy(e.spatial[None]).float(),
                  torch.from_numpy(e.globals[None]))[1]
    np.testing.assert_allclose(v[0, 0], float(raw[0, 0]) * 20 + 40, rtol=1e-5)
    # a solo checkpoint is not a 2-player one
    game = TaluvaGame(solo=True)
    save_checkpoint(tmp_path / "solo.pt", net, enc, SMALL,
                    {"name": "taluva", "options": game.options()}, {"iteration": 0})
    with pytest.raises(CheckpointError, match="num_players"):
        net_from_checkpoint(load_checkpoint(tmp_path / "solo.pt"), tmp_path / "solo.pt",
                            make_encoder("taluva", 2))
    agent = make_agent(f"az:path={tmp_path / 'solo.pt'},sims=4", seed=0)
    a = agent.act(s)
    assert a in s.legal_actions().tolist()


def test_a_tournament_pins_its_checkpoints_and_refuses_a_replaced_one(tmp_path) -> None:
    """A checkpoint replaced between a tournament's start and its resume (a training run
    writing best.pt again) is refused in one line naming it; restored, the run goes on."""
    from taluva_ai.errors import RunConfigError
    from taluva_ai.runfiles import json_sha256
    from taluva_ai.tournament import run_tournament

    path = tmp_path / "best.pt"
    save_small(path)
    first = path.read_bytes()
    spec = f"az:path={path},sims=2,leaf_batch=1,device=cpu"
    assert make_agent(spec).pinned_files() == {str(path): hashlib.sha256(first).hexdigest()}
    kw = {"rules": {"tiles_per_player": 3}, "seed": 1, "progress": False, "plots": False}
    out = tmp_path / "t"
    table = run_tournament([spec, "random"], 2, out, **kw)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["agent_files"] == {spec: {str(path): hashlib.sha256(first).hexdigest()}}
    save_small(path, seed=1)  # other weights under the same name
    with pytest.raises(RunConfigError, match=rf"^{re.escape(str(path))}: changed since the "
                       "tournament pinned it"):
        run_tournament([spec, "random"], 2, out, **kw)
    path.write_bytes(first)
    assert run_tournament([spec, "random"], 2, out, **kw) == table
    # a digest that is not one: refused in one line
    del cfg["sha256"]
    bad = {**cfg, "agent_files": {spec: {str(path): 123}}}
    (out / "config.json").write_text(json.dumps({**bad, "sha256": json_sha256(bad)}))
    with pytest.raises(RunConfigError, match=r"config.json: agent_files is not a mapping of "
                       r"agent specs to \{file: SHA-256 \(64 hex digits\)\}"):
        run_tournament([spec, "random"], 2, out, **kw)
    # a run of an older version (no agent_files in its config.json nor in its records'
    # headers) is pinned from its first resume on: config.json gains the files as they are
    # then, and its games are kept
    del cfg["agent_files"]
    (out / "config.json").write_text(json.dumps({**cfg, "sha256": json_sha256(cfg)}))
    digests = {}
    for rec in sorted((out / "games").glob("*.jsonl")):
        head, rest = rec.read_text().split("\n", 1)
        header = json.loads(head)
        del header["meta"]["agent_files"]
        rec.write_text(json.dumps(header) + "\n" + rest)
        digests[rec.stem] = hashlib.sha256(rec.read_bytes()).hexdigest()
    lines = []
    for line in (out / "results.jsonl").read_text().splitlines():
        entry = {k: v for k, v in json.loads(line).items() if k != "sha256"}
        entry["record_sha256"] = digests[entry["id"]]
        lines.append(json.dumps({**entry, "sha256": json_sha256(entry)}) + "\n")
    (out / "results.jsonl").write_text("".join(lines))
    save_small(path, seed=1)
    second = hashlib.sha256(path.read_bytes()).hexdigest()
    old = run_tournament([spec, "random"], 2, out, **kw)
    assert old["config"]["agent_files"] == {spec: {str(path): second}}
    assert old == {**table, "config": {**cfg, "agent_files": {spec: {str(path): second}}},
                   "records_sha256": old["records_sha256"]}
    assert [hashlib.sha256(p.read_bytes()).hexdigest()  # kept, not played again
            for p in sorted((out / "games").glob("*.jsonl"))] == list(digests.values())
    path.write_bytes(first)
    with pytest.raises(RunConfigError, match=r"changed since the tournament pinned it \(SHA-256 "
                       rf"{second[:12]}\.\.\., now {hashlib.sha256(first).hexdigest()[:12]}"):
        run_tournament([spec, "random"], 2, out, **kw)


def test_build_sites_add_two_globals_a_seat_and_are_refused_in_the_solo_variant() -> None:
    plain, sites = make_encoder("taluva", 3), make_encoder("taluva", 3, build_sites=True)
    assert sites.num_globals == plain.num_globals + 6
    assert sites.spatial_planes == plain.spatial_planes
    assert sites.options() == {"view_radius": 13, "build_sites": True}
    assert plain.options() == {"view_radius": 13}  # older networks keep their options
    assert {**plain.spec(), "num_globals": sites.num_globals, "build_sites": True} == sites.spec()
    for state in [s.clone() for i, s in enumerate(positions(3, 1)) if i % 25 == 0]:
        e, f = plain.encode(state), sites.encode(state)
        assert np.array_equal(e.spatial, f.spatial)
        assert np.array_equal(f.globals, np.concatenate([e.globals,
                                                         E.build_site_features(state)]))
    with pytest.raises(ValueError, match="build_sites is for 2-4 players"):
        make_encoder("taluva", 1, build_sites=True)
    with pytest.raises(ValueError, match="build_sites must be true or false, got 'yes'"):
        make_encoder("taluva", 2, build_sites="yes")


def test_init_from_checkpoint_widens_the_globals_and_keeps_the_function(tmp_path) -> None:
    """A network started from a checkpoint without build sites gives the checkpoint's outputs
    to the encoder with them (the new inputs' weights are 0); what does not fit is refused."""
    from taluva_ai.agents.alphazero.net import init_from_checkpoint

    config = NetConfig("tiny", channels=8, blocks=1, global_hidden=8, value_hidden=8,
                       aux_head=True)
    old_net, old_enc = save_small(tmp_path / "old.pt", config=config, seed=3)
    payload = load_checkpoint(tmp_path / "old.pt")
    enc = make_encoder("taluva", 2, build_sites=True)
    net = init_from_checkpoint(payload, tmp_path / "old.pt", enc, config)
    w = net.state_dict()["globals_mlp.0.weight"]
    assert w.shape == (8, enc.num_globals)
    assert torch.equal(w[:, :old_enc.num_globals], old_net.state_dict()["globals_mlp.0.weight"])
    assert not w[:, old_enc.num_globals:].any()
    old_net.eval()
    net.eval()
    states = [s.clone() for i, s in enumerate(positions(2, 1, seed=4)) if i % 10 == 0]
    a = [old_enc.encode(s) for s in states]
    b = [enc.encode(s) for s in states]
    assert any(x.globals[-4:].any() for x in b)  # some positions have sites to read
    with torch.no_grad():
        la, va = old_net(torch.tensor(np.stack([x.spatial for x in a]), dtype=torch.float32),
                         torch.tensor(np.stack([x.globals for x in a])))
        lb, vb = net(torch.tensor(np.stack([x.spatial for x in b]), dtype=torch.float32),
                     torch.tensor(np.stack([x.globals for x in b])))
    assert torch.allclose(la, lb, atol=1e-6) and torch.allclose(va, vb, atol=1e-6)
    # the same encoder: the checkpoint's network as it is
    same = init_from_checkpoint(payload, "old.pt", old_enc, config)
    assert all(torch.equal(v, old_net.state_dict()[k]) for k, v in same.state_dict().items())
    with pytest.raises(CheckpointError, match=r"made for another encoding: num_players 2 "
                                              r"\(expected 3\)"):
        init_from_checkpoint(payload, "old.pt", make_encoder("taluva", 3, build_sites=True),
                             config)
    save_checkpoint(tmp_path / "sites.pt", net, enc, config,
                    {"name": "taluva", "options": TaluvaGame().options()})
    with pytest.raises(CheckpointError, match=r"num_globals 24: a network can start from one "
                                              r"with at most the encoder's 20 global inputs"):
        init_from_checkpoint(load_checkpoint(tmp_path / "sites.pt"), "sites.pt", old_enc,
                             config)
    with pytest.raises(CheckpointError, match="made for another network shape"):
        init_from_checkpoint(payload, "old.pt", enc, dataclasses.replace(config, channels=16))
