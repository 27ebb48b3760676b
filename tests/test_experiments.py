"""Smoke runs of the experiment scripts (each single file, driven by a config dataclass)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_ladder_smoke(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    ladder = _load("ladder")
    cfg = dataclasses.replace(ladder.SMOKE, out=str(tmp_path))
    tables = ladder.run(cfg)
    assert set(tables) == {"2p", "3p"}
    assert tables["2p"]["games"] == 6  # 3 pairs x 2 games
    assert tables["3p"]["games"] == 3
    assert (tmp_path / "ladder.png").stat().st_size > 0
    md = (tmp_path / "ladder.md").read_text()
    assert "### 2p" in md and "| random | 0 |" in md
    assert "| random – greedy | 2 | 0–2 | 0 |" in md
    # --report: the same tables from the run directories, without playing
    (tmp_path / "ladder.md").unlink()
    again = ladder.report(cfg)
    assert {k: (t["games"], t["agents"]) for k, t in again.items()} == {
        k: (t["games"], t["agents"]) for k, t in tables.items()}
    assert (tmp_path / "ladder.md").read_text() == md


def test_measure_games_smoke(tmp_path: Path) -> None:
    measure = _load("measure_games")
    cfg = measure.Config(games=2, greedy_games=1, out=str(tmp_path))
    summary = measure.measure(cfg)
    assert set(summary["table"]) == {f"{n}p {p}" for n in (2, 3, 4) for p in ("random", "greedy")}
    assert summary["table"]["2p random"]["games"] == 2


def test_bench_ray_smoke_on_the_local_backend(tmp_path: Path, capsys) -> None:
    """experiments/bench_ray.py runs end to end (the local backend only: no Ray needed)."""
    pytest.importorskip("torch")
    bench = _load("bench_ray")
    out = tmp_path / "bench.json"
    assert bench.main(["--config", str(ROOT / "experiments" / "configs" / "tiny.toml"),
                       "--games", "1", "--rounds", "2", "--workers", "1", "--backends", "local",
                       "--learner-steps", "1", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    (res,) = report["results"]
    assert res["workers"] == 1 and len(res["local"]["rounds"]) == 2
    assert res["local"]["steady"] > 0 and report["learner"]["steps"] == 1


def test_ladder_interrupted_exits_130_with_a_resume_hint(tmp_path: Path, monkeypatch,
                                                         capsys) -> None:
    """A KeyboardInterrupt out of the tournament (Ctrl-C, or SIGTERM, which the tournament
    turns into one) ends the script with one line saying how to resume and status 130."""
    ladder = _load("ladder")

    def interrupted(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(ladder, "run", interrupted)
    monkeypatch.setattr(sys, "argv", ["ladder.py", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as e:
        ladder.main()
    assert e.value.code == 130
    hint = "ladder: interrupted (run the same command again to resume)"
    assert capsys.readouterr().err == f"\n{hint}\n"


@pytest.mark.slow
def test_ladder_stopped_by_sigterm_exits_130_with_a_resume_hint(tmp_path: Path) -> None:
    """SIGTERM mid-ladder, end to end: one line saying how to resume, exit status 130, no
    traceback, and the finished games kept."""
    import signal
    import subprocess
    import time

    results = tmp_path / "2p" / "results.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "experiments" / "ladder.py"), "--out", str(tmp_path),
         "--players", "2", "--agents", "random", "greedy", "--games", "400"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not (results.exists() and results.read_text().count("\n") >= 1):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no game finished in 240 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.rstrip().endswith("ladder: interrupted (run the same command again to resume)")
    kept = results.read_text().count("\n")
    assert 1 <= kept < 400


def test_plot_anchors_draws_the_anchor_results_of_a_run(tmp_path: Path, capsys) -> None:
    """experiments/plot_anchors.py on a made-up run: the curves by opponent in iteration order,
    the PNG, and one-line refusals of a run with no anchors and of a line that is not JSON."""
    from taluva_ai.reports import anchor_curves

    def result(win_rate: float, elo: float | None) -> dict:
        return {"games": 20, "wins": int(20 * win_rate), "draws": 0,
                "losses": 20 - int(20 * win_rate), "win_rate": win_rate, "elo": elo,
                "elo_ci95": [None, None] if elo is None else [elo - 100, elo + 100]}

    metrics = [{"iteration": 0, "anchors": {"greedy": result(0.65, 112.2),
                                            "mcts": result(0.4, -69.5)}},
               {"iteration": 1},
               {"iteration": 5, "anchors": {"greedy": result(1.0, None)}}]
    curves = anchor_curves(metrics)
    assert {k: [(i, a["win_rate"]) for i, a in v] for k, v in curves.items()} == {
        "greedy": [(0, 0.65), (5, 1.0)], "mcts": [(0, 0.4)]}
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in metrics))
    plot = _load("plot_anchors")
    png = tmp_path / "curve.png"
    assert plot.main([str(run), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.splitlines() == [
        "greedy: 0: 0.65, 5: 1.00", "mcts: 0: 0.40", f"wrote {png}"]
    (run / "metrics.jsonl").write_text(json.dumps({"iteration": 0}) + "\n")
    with pytest.raises(SystemExit):
        plot.main([str(run), "--out", str(png)])
    assert "no iteration has anchor results" in capsys.readouterr().err
    (run / "metrics.jsonl").write_text('{"iteration": 0}\n{"iteration"\n')
    with pytest.raises(SystemExit):
        plot.main([str(run), "--out", str(png)])
    assert "line 2: not JSON" in capsys.readouterr().err


def test_compile_profile_sums_own_and_total_time_per_kernel(tmp_path: Path, capsys) -> None:
    """experiments/compile_profile.py on made-up events of two processes: a callee's time is
    its own and counts in its caller's total, not in the caller's own; a signature compiled by
    both processes and a kernel with two signatures are named; an empty directory is refused."""
    mod = _load("compile_profile")
    rows = {1: [("m.leaf", "(int64,)", 2.0, 1), ("m.top", "(int64,)", 5.0, 0),
                ("m.leaf", "(int32,)", 1.0, 0)],
            2: [("m.leaf", "(int64,)", 2.5, 0)]}
    for pid, events in rows.items():
        (tmp_path / f"{pid}.jsonl").write_text("".join(
            json.dumps({"kernel": k, "args": a, "cpu_s": c, "depth": d, "test": "t",
                        "pid": pid}) + "\n" for k, a, c, d in events))
    out = mod.report(tmp_path)
    assert out["compile_cpu_s"] == 8.5 and out["processes"] == 2
    assert out["kernels"] == [
        {"kernel": "m.leaf", "own_cpu_s": 5.5, "total_cpu_s": 3.5, "compiles": 3},
        {"kernel": "m.top", "own_cpu_s": 3.0, "total_cpu_s": 5.0, "compiles": 1}]
    assert out["compiled_in_several_processes"] == ["m.leaf x2"]
    assert out["several_signatures"] == {"m.leaf": 2}
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit):
        mod.main([str(empty)])
    assert "no recorded compile events" in capsys.readouterr().err


def test_value_estimators_compares_the_network_and_rollouts_on_recorded_games(
        tmp_path: Path, capsys) -> None:
    pytest.importorskip("onnxruntime")
    from taluva_ai.agents import make_agent
    from taluva_ai.protocol import make_game
    from taluva_ai.tournament import play_game

    games = tmp_path / "games"
    games.mkdir()
    decisions = []
    for seed in (1, 2):
        res = play_game(make_game("taluva", tiles_per_player=6),
                        [make_agent("greedy", seed=0), make_agent("greedy", seed=1)], seed,
                        record_path=games / f"g{seed}.jsonl")
        decisions.append(sum(res.moves))
    mod = _load("value_estimators")
    out = tmp_path / "v.json"
    argv = ["--records", str(games), "--every", "2", "--rollouts", "4", "1", "--json", str(out)]
    assert mod.main(argv) == 0
    res = json.loads(out.read_text())
    assert res["games"] == 2 and res["rollouts"] == [1, 4]
    figs = res["phases"]["0.00-1.00"]
    assert figs["positions"] == sum((d + 1) // 2 for d in decisions)
    assert sum(res["phases"][p]["positions"] for p in ("0.00-0.33", "0.33-0.67",
                                                         "0.67-1.00")) == figs["positions"]
    assert figs["zero"] == {"mse": 1.0, "corr": 0.0}  # 2 players, no draws: z is +-1
    assert set(figs) == {"positions", "zero", "net", "rollouts_1", "rollouts_4",
                         "net_and_rollouts_4"}
    assert all(0 <= figs[k]["mse"] <= 4 for k in figs if k != "positions")
    first = out.read_text()
    assert mod.main(argv) == 0  # seeded: the same figures again (but the CPU time)
    again = json.loads(out.read_text())
    assert again["phases"] == json.loads(first)["phases"]
    assert mod.main(["--records", str(tmp_path / "none")]) == 2
    assert "none: no such folder" in capsys.readouterr().err
    assert mod.main(["--records", str(games), "--checkpoint", str(tmp_path / "no.pt")]) == 2
    assert "no.pt: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.jsonl").write_text('{"bad": 1}\n')
    assert mod.main(["--records", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"value_estimators: {bad / 'x.jsonl'}: record line 1, field 'type': expected 'header', "
        "'action' or 'result', got None\n")


def test_losses_counts_an_agents_games_by_end_reason_and_its_supply_when_eliminated(
        tmp_path: Path) -> None:
    from collections import Counter

    from taluva_ai.agents import make_agent
    from taluva_ai.games.taluva.state import Status
    from taluva_ai.protocol import make_game
    from taluva_ai.tournament import play_game

    run = tmp_path / "run"
    (run / "games").mkdir(parents=True)
    wins, losses, draws, supply = Counter(), Counter(), Counter(), Counter()
    eliminated = out_of_huts = opponent_eliminated = 0
    for seed in range(8):  # random loses, often by elimination; greedy takes both seats
        seats = ["random", "greedy"] if seed % 2 else ["greedy", "random"]
        finals = []
        res = play_game(make_game("taluva"), [make_agent(s, seed=seed) for s in seats], seed,
                        record_path=run / "games" / f"g{seed}.jsonl",
                        on_state=lambda state, event, finals=finals: finals.append(state))
        seat = seats.index("random")
        tally = (losses if seat not in res.winners else wins if len(res.winners) == 1
                 else draws)
        tally[res.end_reason] += 1
        if res.end_reason == "last_standing":
            state = finals[-1]
            if state.status(seat) == Status.ELIMINATED:
                eliminated += 1
                supply.update(state.supply(seat))
                out_of_huts += state.supply(seat)["huts"] == 0
            else:
                opponent_eliminated += 1
    mod = _load("losses")
    out = tmp_path / "losses.json"
    mod.main([str(run), "--agent", "random", "--json", str(out)])
    got = json.loads(out.read_text())
    assert got["games"] == 8 and eliminated > 0  # the seeds give eliminations to count
    assert (got["wins"], got["losses"], got["draws"], got["undecided"]) == (
        dict(wins), dict(losses), dict(draws), {})
    assert (got["eliminated"], got["eliminated_out_of_huts"], got["opponent_eliminated"]) == (
        eliminated, out_of_huts, opponent_eliminated)
    assert got["supply_when_eliminated"] == {k: supply[k] for k in ("huts", "temples", "towers")}
    with pytest.raises(SystemExit, match="'mcts' plays in none of the 8 records"):
        mod.main([str(run), "--agent", "mcts"])
    with pytest.raises(SystemExit, match="no game records under"):
        mod.main([str(tmp_path), "--agent", "random"])


def test_losses_values_reads_the_network_at_the_agents_last_decisions(
        tmp_path: Path, capsys) -> None:
    """``--values``: the network's value for the agent at its k-th last decision, grouped by
    how the game ended for it; checked against the states seen while the games were played
    (not replayed from the records)."""
    pytest.importorskip("onnxruntime")
    from taluva_ai.agents import make_agent
    from taluva_ai.games.taluva.state import Status
    from taluva_ai.protocol import make_game
    from taluva_ai.tournament import play_game

    mod = _load("losses")
    evaluator = mod.make_evaluator(None)
    run = tmp_path / "run"
    (run / "games").mkdir(parents=True)
    groups: dict[str, list[dict[int, float]]] = {"eliminated": [], "other_losses": [],
                                                 "wins": []}
    for seed in range(6):
        seats = ["random", "greedy"] if seed % 2 else ["greedy", "random"]
        seat = seats.index("random")
        mine, finals = [], []

        def keep(state, event, mine=mine, finals=finals, seat=seat):
            finals.append(state)
            if state.current_player == seat and not state.is_terminal():
                mine.append(state.clone())

        res = play_game(make_game("taluva"), [make_agent(s, seed=seed) for s in seats], seed,
                        record_path=run / "games" / f"g{seed}.jsonl", on_state=keep)
        out = res.end_reason == "last_standing" and finals[-1].status(seat) == Status.ELIMINATED
        group = ("eliminated" if out else "other_losses" if seat not in res.winners
                 else "wins")
        values = {}
        for k in mod.BEFORE_END:
            if k <= len(mine):
                _, v = evaluator.evaluate([mine[-k]])
                values[k] = float(v[0][seat])
        groups[group].append(values)
    got = mod.analyse(run, "random", evaluator)["value_before_end"]
    assert len(groups["eliminated"]) > 0 and len(groups["wins"]) + len(groups[
        "other_losses"]) > 0  # the seeds give both kinds
    for group, games in groups.items():
        assert got[group]["games"] == len(games)
        for k in mod.BEFORE_END:
            vals = [g[k] for g in games if k in g]
            want = ({"positions": len(vals), "mean": round(sum(vals) / len(vals), 4),
                     "above_0": round(sum(x > 0 for x in vals) / len(vals), 4)}
                    if vals else {"positions": 0})
            assert got[group][str(k)] == pytest.approx(want, abs=1e-4)
    with pytest.raises(SystemExit):
        mod.main([str(run), "--agent", "random", "--checkpoint", "x.pt"])
    assert capsys.readouterr().err.endswith("error: --checkpoint needs --values\n")
    with pytest.raises(SystemExit, match=r"losses\.py: checkpoint .*no\.pt: no such file"):
        mod.main([str(run), "--agent", "random", "--values", "--checkpoint",
                  str(tmp_path / "no.pt")])


def test_losses_counts_a_truncated_game_as_undecided_not_lost(tmp_path: Path) -> None:
    """A game the board bound truncates has no result (RULES.md "Board bound"): neither a
    win nor a loss of either seat."""
    from taluva_ai.agents import make_agent
    from taluva_ai.protocol import make_game
    from taluva_ai.tournament import play_game

    (tmp_path / "games").mkdir()
    for seed in range(3):  # radius 4 leaves random play no placement long before the end
        res = play_game(make_game("taluva", board_radius=4),
                        [make_agent("random", seed=seed), make_agent("greedy", seed=seed)],
                        seed, record_path=tmp_path / "games" / f"g{seed}.jsonl")
        assert res.end_reason == "truncated"
    got = _load("losses").analyse(tmp_path, "random")
    assert (got["games"], got["wins"], got["losses"], got["draws"], got["undecided"]) == (
        3, {}, {}, {}, {"truncated": 3})
    assert got["opponent_eliminated"] == got["eliminated"] == 0


def test_losses_refuses_a_record_that_is_not_2_player_taluva(tmp_path: Path) -> None:
    from taluva_ai.agents import make_agent
    from taluva_ai.protocol import make_game
    from taluva_ai.tournament import play_game

    (tmp_path / "games").mkdir()
    play_game(make_game("taluva", num_players=3, tiles_per_player=4),
              [make_agent("random", seed=s) for s in range(3)], 1,
              record_path=tmp_path / "games" / "g.jsonl")
    with pytest.raises(SystemExit, match=r"g\.jsonl: not a 2-player Taluva game$"):
        _load("losses").main([str(tmp_path), "--agent", "random"])


def test_losses_refuses_bad_records_unwritable_json_and_networks_of_another_game(
        tmp_path: Path, capsys) -> None:
    """One line naming the file, line and field for a record that does not replay (with and
    without ``--values``); an unwritable ``--json`` before any work; a checkpoint of another
    player count or game before any game is read."""
    torch = pytest.importorskip("torch")
    from taluva_ai.agents import make_agent
    from taluva_ai.agents.alphazero.config import NetConfig
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import build_net, save_checkpoint
    from taluva_ai.protocol import make_game
    from taluva_ai.tournament import play_game

    mod = _load("losses")
    run = tmp_path / "run"
    (run / "games").mkdir(parents=True)
    rec = run / "games" / "g.jsonl"
    play_game(make_game("taluva"), [make_agent("random", seed=1), make_agent("greedy", seed=1)],
              1, record_path=rec)
    lines = rec.read_text().splitlines(keepends=True)
    for text, where in (("".join(lines)[:-30], f"line {len(lines)}, field 'json'"),
                        ("".join(lines[:-1]), f"line {len(lines)}, field 'type'"),
                        ("", "line 1, field 'type'")):
        rec.write_text(text)
        for values in ([], ["--values"]):
            with pytest.raises(SystemExit) as e:
                mod.main([str(run), "--agent", "random", *values])
            assert str(e.value).startswith(f"losses.py: {rec}: record {where}: ")
            assert "\n" not in str(e.value)
    for bad, why in ((tmp_path / "no" / "o.json", f"no directory {tmp_path / 'no'}"),
                     (tmp_path, "a directory")):
        with pytest.raises(SystemExit):
            mod.main([str(run), "--agent", "random", "--json", str(bad)])
        assert capsys.readouterr().err.endswith(f"error: --json {bad}: {why}\n")
    small = NetConfig("tiny", channels=8, blocks=1, global_hidden=8, value_hidden=8)
    for game, players, what in (("taluva", 3, "3-player Taluva"),
                                ("thurn_und_taxis", 2, "another game")):
        enc = make_encoder(game, players)
        torch.manual_seed(0)
        ck = tmp_path / f"{game}{players}.pt"
        save_checkpoint(ck, build_net(enc, small), enc, small,
                        {"name": game, "options": make_game(game, num_players=players)
                         .options()}, {"iteration": 0})
        with pytest.raises(SystemExit, match=f"^losses.py: {ck}: a network for {what}; the "
                                             "records are 2-player Taluva games$"):
            mod.main([str(run), "--agent", "random", "--values", "--checkpoint", str(ck)])
