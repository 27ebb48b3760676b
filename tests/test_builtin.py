"""The packaged network (issue 20 item 5): ``az:builtin`` plays after the plain install (no
PyTorch), every bad file or game is refused in one line before any move, ONNX Runtime gives
the outputs PyTorch gave when it was shipped, and ``experiments/ship_builtin.py`` rebuilds it.

No test pins the packaged network's moves (a new network is swapped in by rerunning the ship
command): they pin behaviour (legal moves, the search's settings, refusals) and the
description's own reference outputs, which the ship command rewrites.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import taluva_ai.agents.alphazero as az_pkg
from taluva_ai.agents import make_agent
from taluva_ai.agents.alphazero import builtin
from taluva_ai.agents.alphazero.runtime import CheckpointError
from taluva_ai.agents.base import parse_agent_spec, spec_key
from taluva_ai.games.taluva import TaluvaGame
from tests.helpers import TINY_NET

ROOT = Path(__file__).resolve().parents[1]
#: The modules of the az agent's path that must load without PyTorch, and net.py, which
#: imports it (so any import of it fails while PyTorch is blocked).
NO_TORCH = ("agent", "evaluator", "builtin", "runtime", "net")


def _play(agent, game: TaluvaGame, moves: int, seed: int = 1) -> list[int]:
    s = game.new_initial_state(seed=seed)
    s.draw()
    played = []
    for _ in range(moves):
        a = agent.act(s)
        assert a in set(s.legal_actions().tolist())
        played.append(a)
        s.apply(a)
        while s.current_player < 0:
            s.draw()
    return played


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    """A copy of the packaged files that a test may damage, in place of the package's."""
    out = tmp_path / "data"
    shutil.copytree(builtin.DATA_DIR, out)
    monkeypatch.setattr(builtin, "DATA_DIR", out)
    return out


def _edit(data: Path, **fields) -> None:
    path = data / builtin.JSON_NAME
    info = json.loads(path.read_text())
    for k, v in fields.items():
        info[k] = v
    path.write_text(json.dumps(info))


def test_builtin_plays_without_pytorch(monkeypatch) -> None:
    """The az:builtin path (spec, loading, NetEvaluator on ONNX Runtime, the compiled batched
    search) imports no PyTorch: run with PyTorch blocked and the modules re-imported."""
    for name in NO_TORCH[:-1]:  # imported first, so that monkeypatch puts them back after (net
        importlib.import_module(f"taluva_ai.agents.alphazero.{name}")  # cannot be re-imported)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    for name in NO_TORCH:
        monkeypatch.delitem(sys.modules, f"taluva_ai.agents.alphazero.{name}", raising=False)
        monkeypatch.delattr(az_pkg, name, raising=False)
    agent = make_agent("az:builtin,sims=8", seed=3)
    from taluva_ai.agents.search.batched import compiled_net_search_ok

    game = TaluvaGame()
    s = game.new_initial_state(seed=1)
    s.draw()
    assert compiled_net_search_ok(agent, s)
    played = _play(agent, game, 3)
    assert agent.stats()["simulations"] == 8
    assert agent.evaluator.backend == "onnx"
    assert "taluva_ai.agents.alphazero.net" not in sys.modules
    agent.reset(3)
    assert _play(agent, game, 3) == played  # seeded: the same moves again
    # a checkpoint needs PyTorch: one line naming the extra
    with pytest.raises(ValueError, match=r"^agent 'az:path=x.pt': checkpoint x.pt: a PyTorch "
                       r"checkpoint needs PyTorch: pip install 'taluva-ai\[train\]' "
                       r"\(az:builtin plays without it\)$"):
        make_agent("az:path=x.pt", seed=0)


def test_builtin_spec_and_defaults() -> None:
    assert parse_agent_spec("az:builtin,sims=64") == ("az", {"path": "builtin", "sims": 64})
    assert spec_key("az:builtin") == spec_key("az:path=builtin")
    with pytest.raises(ValueError, match="'builtin' is not key=value"):
        parse_agent_spec("greedy:builtin")  # only agents that declare a positional parameter
    with pytest.raises(ValueError, match="'sims' is not key=value"):
        parse_agent_spec("az:builtin,sims")  # only the first item
    agent = make_agent("az:builtin")
    cfg = agent.config
    assert (cfg.sims, cfg.root, cfg.compiled, cfg.reuse_tree, cfg.c, cfg.leaf_batch) == \
        (200, "gumbel", True, False, 1.25, 8)
    assert agent.leaf == {"rollout": "none", "lambda": 0.0, "samples": 8}
    onnx = builtin.DATA_DIR / builtin.ONNX_NAME  # the network a tournament pins
    assert agent.pinned_files() == {"builtin": hashlib.sha256(onnx.read_bytes()).hexdigest()}
    assert agent.checkpoint["iteration"] == json.loads(
        (builtin.DATA_DIR / builtin.JSON_NAME).read_text())["source"]["iteration"]
    other = make_agent("az:builtin,sims=32,root=puct,rollout=greedy,lambda=0.5,c=2", seed=0)
    assert (other.config.sims, other.config.root, other.config.c) == (32, "puct", 2)
    assert other.leaf == {"rollout": "greedy", "lambda": 0.5, "samples": 8}
    with pytest.raises(ValueError, match="runs on ONNX Runtime on the CPU: device=auto or cpu, "
                       "got 'cuda'"):
        make_agent("az:builtin,device=cuda")
    with pytest.raises(ValueError, match="is an ONNX model: it runs with backend=onnx"):
        make_agent("az:builtin,backend=torch")
    # az's own list of parameters, not mcts's (which names prior and lacks path, lambda...)
    with pytest.raises(ValueError, match=(
            r"^agent .az:builtin,simz=3.: unknown az parameter\(s\) simz; known: backend, c, "
            r"chance, compiled, device, dirichlet_alpha, dirichlet_frac, fpu, gumbel_c_scale, "
            r"gumbel_c_visit, gumbel_m, lambda, leaf_batch, path, reuse_tree, rollout, root, "
            r"samples, sims, temperature, threads, time$")):
        make_agent("az:builtin,simz=3")
    with pytest.raises(ValueError, match=r"^agent 'az:builtin,sims=abc': parameter "
                                         r"sims='abc' must be int$"):
        make_agent("az:builtin,sims=abc")
    with pytest.raises(ValueError, match="az takes its priors from the network: no prior "
                                         "parameter"):
        make_agent("az:builtin,prior=heuristic")


def test_builtin_refuses_other_games_before_any_move(tmp_path, capsys) -> None:
    from taluva_ai.cli import main
    from taluva_ai.tournament import run_tournament

    agent = make_agent("az:builtin,sims=4", seed=0)
    assert builtin.shipped_tables() == [2]  # until a 3- or 4-player network ships
    for game, message in ((TaluvaGame(num_players=3), "az:builtin has no network for 3-player "
                           "tables (this installation has one for 2 players); train one: taluva "
                           "train --config experiments/configs/builtin-3p.toml"),
                          (TaluvaGame(solo=True), "the built-in network (az:builtin) is for "
                           "2-player games, this game has 1 player(s)")):
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            agent.check_game(game)
    with pytest.raises(ValueError, match=r"the built-in network \(az:builtin\) is for taluva, "
                       "this game is thurn_und_taxis"):
        run_tournament(["az:builtin", "random"], 2, tmp_path / "t",
                       game_name="thurn_und_taxis", progress=False)
    assert not (tmp_path / "t" / "results.jsonl").exists()
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["play", "--players", "az:builtin", "greedy", "random"])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""  # no game started
    assert err.splitlines()[-1] == ("taluva play: error: --players: az:builtin has no "
                                    "network for 3-player tables "
                                    "(this installation has one for 2 players); train one: "
                                    "taluva train --config experiments/configs/builtin-3p.toml")


def test_missing_and_damaged_files_are_refused_in_one_line(data, capsys) -> None:
    from taluva_ai.cli import main

    onnx = data / builtin.ONNX_NAME
    raw = bytearray(onnx.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    onnx.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"^agent 'az:builtin': the built-in network "
                       r"\(az:builtin\): .*builtin-2p.onnx is damaged \(its SHA-256 is "
                       r"[0-9a-f]{12}\.\.\., not the [0-9a-f]{12}\.\.\. recorded in "
                       r"builtin-2p.json\); reinstall taluva-ai, or rebuild it: python "
                       r"experiments/ship_builtin.py RUN_DIR$"):
        make_agent("az:builtin")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["play", "--players", "az:builtin", "greedy"])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "is damaged" in err
    onnx.unlink()
    with pytest.raises(CheckpointError, match=r"builtin-2p\.onnx is missing; reinstall"):
        builtin.load_builtin()
    (data / builtin.JSON_NAME).unlink()
    with pytest.raises(CheckpointError, match=r"builtin-2p\.json is missing; reinstall"):
        builtin.load_builtin()
    (data / builtin.JSON_NAME).write_text("{not json")
    with pytest.raises(CheckpointError, match=r"builtin-2p\.json is unreadable"):
        builtin.load_builtin()
    (data / builtin.JSON_NAME).write_text('{"format": "other/1"}')
    with pytest.raises(CheckpointError, match="not a built-in network description "
                       r"\(format 'other/1'"):
        builtin.load_builtin()


def test_networks_for_another_encoding_view_or_game_are_refused(data) -> None:
    info = json.loads((data / builtin.JSON_NAME).read_text())
    enc = info["encoder"]
    _edit(data, encoder={**enc, "version": 0})  # the encoding changed since it was shipped
    with pytest.raises(CheckpointError, match=r"made for another encoding than this version of "
                       r"taluva-ai's: version 0 \(expected 1\); reinstall"):
        builtin.load_builtin()
    _edit(data, encoder={**enc, "view_radius": enc["view_radius"] + 2})
    with pytest.raises(CheckpointError, match=rf"view_radius {enc['view_radius'] + 2} "
                       rf"\(expected {enc['view_radius']}\)"):
        builtin.load_builtin()
    # a description whose view does not match the ONNX file's inputs
    r = enc["view_radius"] + 2
    side = 2 * r + 1
    _edit(data, encoder={**enc, "view_radius": r, "side": side},
          encoder_options={**info["encoder_options"], "view_radius": r})
    with pytest.raises(CheckpointError, match=rf"made for another encoding: spatial "
                       rf"\[{enc['spatial_planes']}, {enc['side']}, {enc['side']}\] \(expected "
                       rf"\[{enc['spatial_planes']}, {side}, {side}\]\)"):
        builtin.load_builtin()
    _edit(data, encoder=enc, encoder_options=info["encoder_options"],
          game={**info["game"], "num_players": 3})
    with pytest.raises(CheckpointError, match=r"num_players 2 \(expected 3\)"):
        builtin.load_builtin()
    _edit(data, game={**info["game"], "name": "thurn_und_taxis"})
    with pytest.raises(CheckpointError, match=r"builtin-2p.json: the encoder of 'thurn_und_taxis' "
                       r"has no option ('build_sites', )?'view_radius' \(its options: none\); "
                       "reinstall"):
        builtin.load_builtin()
    _edit(data, encoder_options={})
    with pytest.raises(CheckpointError, match=r"name 'taluva-view' \(expected "
                       r"'tnt-observation'\)"):
        builtin.load_builtin()


def test_packaged_onnx_gives_the_outputs_pytorch_gave() -> None:
    """ONNX Runtime here reproduces, to 1e-5, the exact (float64) outputs the ship command
    recorded (no PyTorch needed); and every recorded field is there."""
    net, encoder, info = builtin.load_builtin()
    assert builtin.reference_difference(net, encoder, info) <= 1e-5
    assert info["sha256"] == hashlib.sha256(
        (builtin.DATA_DIR / builtin.ONNX_NAME).read_bytes()).hexdigest()
    assert info["bytes"] == (builtin.DATA_DIR / builtin.ONNX_NAME).stat().st_size < 4_000_000
    assert info["game"]["name"] == "taluva" and info["game"]["num_players"] == 2
    assert info["encoder"] == encoder.spec()
    assert info["encoder_options"] == encoder.options()
    assert info["source"]["iteration"] >= 0 and info["config"]["game"]["num_players"] == 2
    gaps = info["check"]["max_abs_diff"]  # the policy's, or the logits' before it was recorded
    assert max(gaps["values"], gaps["policy"] if "policy" in gaps else gaps["logits"]) <= 1e-5
    assert all(set(a) == {"iteration", "best_iteration", "elapsed_s", "anchors"}
               for a in info["anchors"])


# -- the ship command (needs PyTorch and onnx) -------------------------------------------------

MICRO = f"""
seed = 3
iterations = 2

[game]
name = "taluva"
num_players = {{players}}

[encoder]
view_radius = 6

{TINY_NET}
[anchors]
opponents = ["greedy"]
az = "sims=8"
"""


def _micro_run(path: Path, players: int = 2) -> Path:
    """A run directory as ``taluva train`` leaves it, as far as the ship command reads it: its
    config, metrics with anchors at iterations 0 and 2, and a tiny best.pt of iteration 2."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from taluva_ai.agents.alphazero.config import config_to_toml, load_config, make_encoder_for
    from taluva_ai.agents.alphazero.net import NetConfig, build_net, save_checkpoint

    path.mkdir()
    (path / "config.toml").write_text(MICRO.format(players=players))
    cfg = load_config(path / "config.toml")
    (path / "config.toml").write_text(config_to_toml(cfg))
    (path / "config.json").write_text(json.dumps(cfg.to_dict()))
    lines = [{"iteration": k, "best_iteration": k, "elapsed_s": 10.0 * (k + 1),
              **({"anchors": {"greedy": {"games": 4, "win_rate": 0.25 * k}}} if k != 1 else {})}
             for k in range(3)]
    (path / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))
    torch.manual_seed(0)
    enc = make_encoder_for(cfg)
    net_cfg = NetConfig("tiny", channels=4, blocks=1, global_hidden=8, value_hidden=8)
    game = TaluvaGame(num_players=players)
    save_checkpoint(path / "best.pt", build_net(enc, net_cfg), enc, net_cfg,
                    {"name": "taluva", "options": game.options()},
                    {"iteration": 2, "seed": 3, "leaf": {"rollout": "none", "lambda": 0.0,
                                                         "samples": 8}})
    return path


def _ship_script():
    spec = importlib.util.spec_from_file_location("ship_builtin",
                                                  ROOT / "experiments" / "ship_builtin.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ship_command_packages_a_run(tmp_path, monkeypatch, capsys) -> None:
    run = _micro_run(tmp_path / "run")
    out = tmp_path / "out"
    assert _ship_script().main([str(run), "--out", str(out), "--positions", "8"]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out}/builtin-2p.onnx (") and "run/best.pt, iteration 2" in said
    info = json.loads((out / builtin.JSON_NAME).read_text())
    assert info["sha256"] == hashlib.sha256(
        (out / builtin.ONNX_NAME).read_bytes()).hexdigest()
    assert info["source"]["iteration"] == 2 and info["source"]["elapsed_s"] == 30.0
    assert info["source"]["checkpoint"] == "best.pt" and info["source"]["run"] == "run"
    assert [a["iteration"] for a in info["anchors"]] == [0, 2]
    assert info["anchors"][1]["anchors"] == {"greedy": {"games": 4, "win_rate": 0.5}}
    assert info["encoder_options"] == {"view_radius": 6} and info["encoder"]["side"] == 13
    assert info["net"]["sizes"] == {"channels": 4, "blocks": 1, "global_hidden": 8,
                                    "value_hidden": 8}
    assert info["config"]["seed"] == 3 and "config_at_start" not in info
    gaps = info["check"]["max_abs_diff"]
    assert info["check"]["positions"] == 8 and max(gaps["policy"], gaps["values"]) <= 1e-5
    # the shipped files give PyTorch's outputs and play through az:builtin
    net, encoder, _ = builtin.load_builtin(data_dir=out)
    assert builtin.reference_difference(net, encoder, info) <= 1e-5
    torch = pytest.importorskip("torch")
    from taluva_ai.agents.alphazero.agent import load_net

    tnet, _, _ = load_net(run / "best.pt", torch.device("cpu"))
    sp, gl = builtin.check_positions(TaluvaGame(), encoder, 5, seed=9)
    with torch.no_grad():
        t_lo, t_va = tnet(torch.from_numpy(sp), torch.from_numpy(gl))
    o_lo, o_va = net(sp, gl)
    np.testing.assert_allclose(o_lo, t_lo.numpy(), rtol=0, atol=1e-5)
    np.testing.assert_allclose(o_va, t_va.numpy(), rtol=0, atol=1e-5)
    monkeypatch.setattr(builtin, "DATA_DIR", out)
    _play(make_agent("az:builtin,sims=4", seed=0), TaluvaGame(), 2)


def test_az_builtin_takes_the_network_of_the_table_s_player_count(tmp_path, monkeypatch,
                                                                   capsys) -> None:
    """A 3-player network shipped beside the 2-player one: ``az:builtin`` plays each at its
    table, in one agent, and a tournament pins the network of its table."""
    run = _micro_run(tmp_path / "run3", players=3)
    out = tmp_path / "data"
    shutil.copytree(builtin.DATA_DIR, out)
    assert _ship_script().main([str(run), "--out", str(out), "--positions", "4"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}/builtin-3p.onnx (")
    info3 = json.loads((out / "builtin-3p.json").read_text())
    assert info3["onnx"] == "builtin-3p.onnx" and info3["game"]["num_players"] == 3
    monkeypatch.setattr(builtin, "DATA_DIR", out)
    assert builtin.shipped_tables() == [2, 3]
    agent = make_agent("az:builtin,sims=4", seed=0)
    two = agent.pinned_files()
    agent.check_game(TaluvaGame(num_players=3))
    assert agent.encoder.num_players == 3
    assert agent.pinned_files() == {"builtin": info3["sha256"]} != two
    _play(agent, TaluvaGame(num_players=3), 3)
    agent.check_game(TaluvaGame(num_players=2))
    assert agent.encoder.num_players == 2 and agent.pinned_files() == two
    with pytest.raises(ValueError, match=r"has no network for 4-player tables \(this "
                       r"installation has one for 2, 3 players\)"):
        agent.check_game(TaluvaGame(num_players=4))


def test_ship_command_refuses_what_it_cannot_package(tmp_path, capsys, monkeypatch) -> None:
    run = _micro_run(tmp_path / "run3", players=3)
    script = _ship_script()
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "torch", None)
        assert script.main([str(run), "--out", str(out)]) == 1
    assert capsys.readouterr().err.startswith("ship_builtin.py: error: exporting needs the train "
                                              "extra (PyTorch, onnx): pip install -e '.[train]' (")
    assert script.main([str(run), "--checkpoint", "nothing.pt", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (f"ship_builtin.py: error: checkpoint {run}/nothing.pt: no "
                                       "such file\n")
    assert script.main([str(tmp_path / "none"), "--out", str(out)]) == 1
    assert "no such run directory" in capsys.readouterr().err
    assert not out.exists()  # nothing written


def test_ship_compares_onnx_runtime_with_the_exact_float64_outputs(tmp_path) -> None:
    """The check's reference is the network evaluated in float64, not PyTorch's float32
    forward (which carries its own rounding error); a tolerance below float32's is refused
    before anything is written."""
    torch = pytest.importorskip("torch")
    from taluva_ai.agents.alphazero.config import load_config, make_encoder_for
    from taluva_ai.agents.alphazero.net import load_checkpoint, net_from_checkpoint

    run = _micro_run(tmp_path / "run")
    out = tmp_path / "out"
    with pytest.raises(CheckpointError, match=(
            rf"^checkpoint {re.escape(str(run))}/best.pt: its ONNX export differs from its "
            r"exact \(float64\) outputs by [0-9.e-]+ \(> 1e-12\) on 8 positions; nothing "
            r"written$")):
        builtin.ship(run, out_dir=out, positions=8, tolerance=1e-12)
    assert not out.exists()
    info = builtin.ship(run, out_dir=out, positions=8)
    assert set(info["check"]["max_abs_diff"]) == set(info["check"]["torch_float32_max_abs_diff"]) \
        == {"policy", "values", "logits"}
    encoder = make_encoder_for(load_config(run / "config.toml"))
    net, _ = net_from_checkpoint(load_checkpoint(run / "best.pt"), run / "best.pt", encoder)
    ref = info["reference"]
    sp, gl = builtin.check_positions(TaluvaGame(num_players=2), encoder, ref["positions"])
    with torch.no_grad():
        logits, values = net.eval().double()(torch.from_numpy(sp).double(),
                                             torch.from_numpy(gl).double())
    assert values.numpy().tolist() == ref["values"]
    assert logits.numpy()[:, ref["ids"]].tolist() == ref["logits"]
    exact = torch.softmax(logits, dim=1).numpy()[:, ref["ids"]]
    np.testing.assert_allclose(ref["policy"], exact, rtol=0, atol=1e-15)
    # the logits' gap is recorded, not checked: a shift of every logit leaves the policy
    gap = builtin.policy(logits.numpy() + 0.5) - builtin.policy(logits.numpy())
    assert np.abs(gap).max() < 1e-12
