"""The ``taluva`` command: every subcommand, its --help, and its exit codes."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from taluva_ai.cli import main

GOLDEN = Path(__file__).parent / "data" / "golden_greedy_random_seed7.jsonl"


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return int(info.value.code or 0)


@pytest.mark.parametrize("command", [[], ["play"], ["replay"], ["tournament"], ["bench"]])
def test_help_explains_each_command(command: list[str], capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    assert _exit_code([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: taluva {' '.join(command)}".rstrip())
    assert "example" in out
    assert "taluva " + (command[0] if command else "play") in out.split("example")[-1]


@pytest.mark.parametrize("command", ["play", "tournament"])
def test_help_lists_every_registered_agent_and_its_parameters(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """issue 19 A.8: the list comes from the agent registry (a newly registered agent shows
    up), with every parameter and its default."""
    from taluva_ai.agents import base
    from taluva_ai.agents.simple import GreedyAgent

    class _Probe(GreedyAgent):
        """a probe agent"""

        def __init__(self, seed: int | None = None, depth: int = 3, style: str = "calm",
                     path: str | None = None) -> None:
            super().__init__(seed)

    base.register_agent("probe", _Probe)
    try:
        assert _exit_code([command, "--help"]) == 0
    finally:
        del base._AGENTS["probe"], base._ABOUT["probe"]
    out = capsys.readouterr().out
    listing = out.split("\nagents: ")[1]
    names = [line.split()[0] for line in listing.splitlines() if line.startswith("  ")
             and not line.startswith("   ")]
    assert names == ["random", "greedy", "mcts", "ismcts", "az", "openspiel", "probe"]
    flat = " ".join(listing.split())
    assert "probe a probe agent depth=3 style=calm path=unset" in flat
    assert "random uniformly random legal action (no parameters)" in flat
    assert ("az:builtin: the packaged network for the table's player count (2 players today"
            in flat)  # issue 20 item 5
    assert "epsilon=0.0 mcts" in flat
    assert ("sims=400 time=unset rollout=random c=1.0 fpu=0.0 chance=expand temperature=0.0 "
            "dirichlet_alpha=0.0 dirichlet_frac=0.25 reuse_tree=false leaf_batch=1 samples=8 "
            "prior=heuristic prior_temperature=10.0 compiled=true root=puct gumbel_m=16 "
            "gumbel_c_visit=50.0 gumbel_c_scale=0.1 ismcts") in flat
    assert ("sims=400 time=unset c=0.7 rollout=greedy prior=heuristic prior_temperature=10.0 "
            "az") in flat
    assert ("path=REQUIRED rollout=unset lambda=unset samples=unset device=auto threads=1 "
            "backend=auto sims=200 time=unset c=1.25 fpu=0.0 chance=expand temperature=0.0 "
            "dirichlet_alpha=0.0 dirichlet_frac=0.25 reuse_tree=false leaf_batch=8 "
            "compiled=true root=puct gumbel_m=16 gumbel_c_visit=50.0 gumbel_c_scale=0.1 "
            "openspiel") in flat
    assert "bot=mcts sims=400 uct_c=2.0 rollouts=1 solve=true probe" in flat
    assert max(len(line) for line in listing.splitlines()) <= 88


def test_registry_parameters_are_the_agents_own() -> None:
    """The registry's parameter lists are those the agents accept: the config dataclasses'
    fields, and for az (listed without importing PyTorch) the agent's own signature."""
    from dataclasses import fields

    from taluva_ai.agents import ISMCTSConfig, MCTSConfig, registered_agent_parameters
    from taluva_ai.agents.alphazero.agent import AlphaZeroAgent

    assert registered_agent_parameters("mcts") == {f.name: f.default for f in fields(MCTSConfig)}
    assert list(registered_agent_parameters("ismcts")) == [f.name for f in fields(ISMCTSConfig)]
    assert registered_agent_parameters("greedy") == {"epsilon": 0.0}
    assert registered_agent_parameters("random") == {}
    assert registered_agent_parameters("az") == AlphaZeroAgent.spec_parameters()


def test_console_script_runs_as_a_module() -> None:
    r = subprocess.run([sys.executable, "-m", "taluva_ai.cli", "--version"],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0
    assert r.stdout.strip() == "taluva-ai 0.1.0"



def test_the_web_app_imports_nothing_from_the_command() -> None:
    """Two front ends, neither importing the other (CONTRIBUTING.md, the layers): the table
    the web board shows comes from taluva_ai.reports."""
    import ast

    web = Path(__file__).resolve().parents[1] / "taluva_ai" / "web"
    found = []
    for path in sorted(web.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):  # from taluva_ai import cli: taluva_ai.cli
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            found += [f"{path.name}: {n}" for n in names
                      if n == "taluva_ai.cli" or n.startswith("taluva_ai.cli.")]
    assert found == []

def test_play_prints_the_result_and_writes_the_golden_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "game.jsonl"
    assert main(["play", "--players", "greedy", "random", "--seed", "7", "--record",
                 str(rec)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "taluva: 2 players, seed 7",
        "seat 0  greedy        built 3 temples, 0 towers, 20 huts  active",
        "seat 1  random        built 0 temples, 0 towers, 14 huts (4 destroyed)  active",
        "result: early_victory after 81 plies; winners: seat 0 (greedy)",
        "returns: [1.0, -1.0]  places: [0, 1]",
        f"record: {rec}",
    ]
    assert rec.read_bytes() == GOLDEN.read_bytes()


def test_play_show_prints_positions_actions_and_stats(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    assert main(["play", "--players", "greedy", "random", "--seed", "7", "--show",
                 "--tiles-per-player", "3"]) == 0
    out = capsys.readouterr().out
    assert "[0] chance: draw:JS" in out
    assert '[1] seat 0 (greedy): tile@0,0:SE  {"ties": ' in out
    assert "[4] seat 1 (random): tile@" in out
    assert out.count("ply ") >= 19  # every position's summary line (18 actions + the start)
    assert "result: tiles_out after 18 plies" in out


def test_play_with_rule_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--players", "random", "random", "greedy", "--seed", "2", "--ranked",
                 "--tiles-per-player", "4", "--tile-preview", "--no-lake-building",
                 "--early-victory-kinds", "3", "--board-radius", "20",
                 "--no-new-hut-isolated", "--tiebreak-towers-first",
                 "--destroyed-huts-return"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("taluva: 3 players, seed 2\n")
    assert "seat 2  greedy" in out
    assert "result: tiles_out after 36 plies" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--players", "greedy", "nobody"], "unknown agent 'nobody'"),
        (["play", "--players", "greedy", "randm"], "unknown agent 'randm' (did you mean random?)"),
        (["play", "--players", "greedy"], "give 2 to 4 agents"),
        (["play", "--players", "random", "random", "--tiles-per-player", "30"],
         "tiles_per_player=30"),
        (["play", "--players", "random", "random", "--board-radius", "2"], "board_radius"),
        (["play", "--players", "greedy:epsilon=7", "random"], "epsilon"),
        (["play", "--players", "random", "random", "--seed", "x"], "'x' is not an integer"),
        (["play", "--players", "random", "random", "--seed", "-1"], "-1 is negative"),
        (["tournament", "--agents", "random", "greedy", "--seed", "-3", "--out", "/tmp/x"],
         "-3 is negative"),
        (["play", "--players", "mcts:sims=abc", "random"], "sims='abc' must be int"),
        (["play", "--players", "random:seed=3", "random"], "the seed is set by the caller"),
        (["play", "--players", "nosuch.module:Agent", "random"], "cannot import"),
        (["tournament", "--agents", "random", "random", "--out", "x"], "distinct"),
        (["tournament", "--agents", "random", "--out", "x"], "1 agents for games of 2"),
        (["bench", "--games", "0"], "must be >= 1"),
        (["bench", "--max-batch", "8"], "--max-batch goes with --selfplay"),
        (["bench", "--selfplay", "--max-batch", "0"], "--max-batch goes with --selfplay and "
                                                      "must be >= 1"),
        (["bench", "--game", "chess"], "--game: no benchmark for 'chess'"),
        (["bench", "--game", "thurn_und_taxis", "--solo"], "--solo: Taluva only"),
        (["bench", "--game", "thurn_und_taxis", "--selfplay", "--inference"],
         "--selfplay, --inference: Taluva only; use without --game thurn_und_taxis"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_one_error_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("taluva")
    assert ": error: " in last and message in last



def test_a_mistyped_option_shows_the_subcommands_usage_and_the_option_meant(
    capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit_code(["play", "--players", "greedy", "random", "--seeed", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: taluva play [-h] --players AGENT")  # not `taluva [-h]`
    assert err[-1] == ("taluva play: error: unrecognized arguments: --seeed 3; did you mean "
                       "--seed?")
    # --opt=value, one hint per mistyped option, and no hint where none is near
    assert _exit_code(["bench", "--jsn", "--gmes=3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: taluva bench ")
    assert err[-1] == ("taluva bench: error: unrecognized arguments: --jsn --gmes=3; did you "
                       "mean --json (for --jsn), --games (for --gmes)?")
    assert _exit_code(["replay", "a.jsonl", "b.jsonl", "--frobnicate"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: taluva replay ")
    assert err[-1] == "taluva replay: error: unrecognized arguments: b.jsonl --frobnicate"

def test_custom_agent_class_by_module_path(capsys: pytest.CaptureFixture[str]) -> None:
    spec = "taluva_ai.agents.simple:GreedyAgent:epsilon=0.5"
    assert main(["play", "--players", spec, "random", "--seed", "3"]) == 0
    assert f"seat 0  {spec}" in capsys.readouterr().out


def test_replay_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(GOLDEN)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-3:] == [
        "result: early_victory after 81 plies; winners: seat 0 (greedy)",
        "returns: [1.0, -1.0]  places: [0, 1]",
        f"record OK: {GOLDEN}",
    ]
    assert main(["replay", str(GOLDEN), "--show"]) == 0
    out2 = capsys.readouterr().out
    assert "[80] seat 0 (greedy): expand@-1,-1:J" in out2


def test_replay_of_a_bad_record_exits_1(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    lines = GOLDEN.read_text().splitlines()
    obj = json.loads(lines[5])
    obj["player"] = 0
    lines[5] = json.dumps(obj)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err == (f"{bad}: line 6: field 'player': the record says 0, but seat 1 is to "
                   "move\n")
    missing = tmp_path / "none.jsonl"
    assert main(["replay", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err == f"{missing}: cannot read the record: No such file or directory\n"


def test_tournament_prints_the_table_and_refuses_other_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "t"
    argv = ["tournament", "--agents", "random", "greedy", "--games", "2", "--seed", "1",
            "--out", str(out_dir), "--no-progress", "--bootstrap", "50"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2 games; endings: early_victory 2"
    assert "  random vs greedy: 0-0-2  score 0.000  (2 games)" in out
    assert any(line.startswith("  greedy ") and "1.000" in line for line in out)
    assert "ratings (Elo anchored: random = 0):" in out
    assert sorted(p.name for p in (out_dir / "games").iterdir()) == ["000-0000-0.jsonl",
                                                                     "000-0000-1.jsonl"]
    table = json.loads((out_dir / "results.json").read_text())
    assert table["agents"]["greedy"]["elo"] == round(400 * math.log10(5), 1)
    assert main(argv) == 0  # resumed: nothing left to play, same table
    capsys.readouterr()
    assert json.loads((out_dir / "results.json").read_text()) == table
    other = ["tournament", "--agents", "random", "greedy", "--games", "2", "--seed", "2",
             "--out", str(out_dir), "--no-progress"]
    assert _exit_code(other) == 2
    assert "other settings (they differ in: seed)" in capsys.readouterr().err


def test_bench_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "bench.json"
    assert main(["bench", "--json", "--games", "2", "--repeats", "1", "--out", str(dest)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res == json.loads(dest.read_text())
    e = res["engine"]
    assert set(e["games_per_s"]) == {"2", "3", "4"}
    assert all(v > 0 for v in e["games_per_s"].values())
    assert e["tile_mask_us"] > 0 and e["build_mask_us"] > 0
    assert set(res["machine"]) >= {"cpu", "threads", "versions"}
    assert main(["bench", "--games", "2", "--repeats", "1"]) == 0
    text = capsys.readouterr().out
    assert "2 players:" in text and "tile-step legal mask" in text
    assert text.startswith("engine (one run, 2 random games each):")
    from taluva_ai.cli.bench import _median_of
    assert _median_of(5, "run") == "median of 5 runs"
    assert _median_of(3, "search", "searches") == "median of 3 searches"


# -- bad paths, interrupts, concurrent runs: one line, no traceback, nothing lost ---------------


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_play_record_paths_that_cannot_be_files_exit_2_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "f").write_text("x")
    base = ["play", "--players", "random", "random", "--seed", "1", "--record"]
    for path, message in [("", "--record: empty file name"),
                          (str(tmp_path), f"--record: {tmp_path} is a directory, not a file"),
                          (str(tmp_path / "f" / "g.jsonl"),
                           f"--record: {tmp_path / 'f'} is not a directory")]:
        assert _exit_code([*base, path]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""  # refused before the game
        assert _one_error_line(captured.err) == f"taluva play: error: {message}"


def test_play_record_unwritable_exits_1_and_keeps_the_old_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import taluva_ai.records as records

    rec = tmp_path / "game.jsonl"
    rec.write_text("an older record\n")

    def refuse(path: object, *args: object) -> int:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(records.os, "open", refuse)
    assert main(["play", "--players", "random", "random", "--seed", "1", "--record",
                 str(rec)]) == 1
    err = capsys.readouterr().err
    assert _one_error_line(err) == f"{rec}: cannot write the record: Permission denied"
    assert rec.read_text() == "an older record\n"


def test_bench_names_the_extra_of_the_figure_asked_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import taluva_ai.bench

    def missing(**kw: object) -> None:
        raise ImportError("No module named 'torch'")

    monkeypatch.setattr(taluva_ai.bench, "run_bench", missing)
    with pytest.raises(SystemExit):
        main(["bench", "--net"])
    err = capsys.readouterr().err
    assert "--net needs the train extra (pip install -e '.[train]'): No module named" in err
    assert "--env" not in err


def test_bench_mcts_reports_both_searches(capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import taluva_ai.warmup as warmup

    warmed: list[tuple[str, list[str]]] = []  # the compile's progress (bar or lines) comes first
    monkeypatch.setattr(warmup, "warm_up", lambda game, specs: warmed.append((game.name, specs)))
    assert main(["bench", "--mcts", "--mcts-sims", "50", "--repeats", "1", "--games", "1",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    assert warmed == [("taluva", ["mcts:sims=50,prior=none,rollout=random",
                                  "mcts:sims=400,rollout=greedy,root=gumbel"])]
    mc = json.loads(out)["mcts"]
    # not silent: the section says what it measures before it does (stderr; stdout is JSON)
    assert err.splitlines() == ["bench --mcts: UCT with random rollouts, 1 search of 50 "
                                "simulations, then the ladder's MCTS-400 with greedy rollouts"]
    assert mc["spec"] == "mcts:sims=50,prior=none,rollout=random" and mc["sims_per_s"] > 0
    assert mc["ladder"]["spec"] == "mcts:sims=400,rollout=greedy,root=gumbel"
    assert mc["ladder"]["sims_per_s"] > 0 and mc["ladder"]["greedy_rollout_ms"] > 0


def test_bench_out_is_checked_first_and_the_figures_are_never_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import taluva_ai.bench as bench
    import taluva_ai.cli.bench as cli_bench

    ran: list[int] = []
    fake = {"machine": {"cpu": "x", "threads": 1, "versions": {}}}
    monkeypatch.setattr(bench, "run_bench", lambda **kw: ran.append(1) or fake)
    (tmp_path / "f").write_text("x")
    for path, message in [(str(tmp_path), f"--out: {tmp_path} is a directory, not a file"),
                          ("", "--out: empty file name"),
                          (str(tmp_path / "f" / "b.json"), f"--out: {tmp_path / 'f'} is not a "
                           "directory")]:
        assert _exit_code(["bench", "--json", "--out", path]) == 2
        assert _one_error_line(capsys.readouterr().err) == f"taluva bench: error: {message}"
    assert ran == []  # refused before the benchmark ran
    # a write that fails after the run: the figures are printed first
    monkeypatch.setattr(cli_bench, "_check_output_path", lambda option, value: Path(value))
    assert main(["bench", "--json", "--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out) == fake
    assert _one_error_line(captured.err) == (f"{tmp_path}: cannot write the figures (printed "
                                             "above): Is a directory")


@pytest.mark.parametrize(
    ("setup", "extra", "message"),
    [
        (lambda d: d.write_text("x"), [], "{d}: not a directory; give a directory as the run "
         "directory"),
        (lambda d: (d.mkdir(), (d / "config.json").write_text("[1, 2]")), [],
         "{d}/config.json: unreadable (a JSON list, not a tournament's settings object); use "
         "another --out"),
        (lambda d: (d.mkdir(), (d / "config.json").mkdir()), [],
         "{d}/config.json: unreadable (not a regular file (a directory)); use another --out"),
        (lambda d: (d.mkdir(), (d / "games").write_text("x")), [],
         "{d}/games: not a directory (the tournament keeps its records there); move it away "
         "or use another --out"),
        (lambda d: (d.mkdir(), (d / "results.json").mkdir()), [],
         "{d}/results.json: not a file (the tournament writes its table there); move it away "
         "or use another --out"),
        (lambda d: (d / "games" / "000-0000-1.jsonl").mkdir(parents=True), [],
         "{d}/games/000-0000-1.jsonl: not a file (the record of a game goes there); move it "
         "away or use another --out"),
        (None, ["--bootstrap", "-1"], "--bootstrap must be >= 0 (0: no bootstrap intervals), got "
         "-1"),
        (None, ["--agents", "random", " random "], "agent specs must be distinct, got "
         "['random', 'random']"),
    ],
)
def test_tournament_bad_paths_and_arguments_exit_2_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: object, extra: list[str],
    message: str,
) -> None:
    d = tmp_path / "run"
    if setup is not None:
        setup(d)  # type: ignore[operator]
    argv = ["tournament", "--agents", "random", "greedy", "--games", "2", "--no-progress",
            "--out", str(d), *extra]
    assert _exit_code(argv) == 2
    err = _one_error_line(capsys.readouterr().err)
    assert err == f"taluva tournament: error: {message.format(d=d)}"
    assert not [p for p in d.glob("games/*.jsonl") if p.is_file()]  # no game was played


def test_tournament_out_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["tournament", "--agents", "random", "greedy", "--games", "2", "--no-progress"]
    assert _exit_code([*base, "--out", ""]) == 2
    assert _one_error_line(capsys.readouterr().err) == ("taluva tournament: error: --out: "
                                                        "empty directory name")
    assert main([*base, "--out", "/sys/taluva-run"]) == 1  # sysfs: no folder can be made
    assert _one_error_line(capsys.readouterr().err).startswith("/sys/taluva-run: ")


def test_a_second_tournament_on_the_same_out_fails_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import fcntl
    import os

    fd = os.open(tmp_path / ".lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running tournament holds it
        assert _exit_code(["tournament", "--agents", "random", "greedy", "--games", "2",
                           "--no-progress", "--out", str(tmp_path)]) == 2
    finally:
        os.close(fd)
    assert _one_error_line(capsys.readouterr().err) == (
        f"taluva tournament: error: {tmp_path} is in use by another tournament (it holds "
        f"{tmp_path / '.lock'}); wait for it to finish or use another --out")


def test_sigterm_interrupts_a_tournament_like_ctrl_c(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import signal
    import time

    import taluva_ai.tournament.workers as workers

    def terminated(*args: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises KeyboardInterrupt before this ends
        raise AssertionError("SIGTERM was not turned into KeyboardInterrupt")

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(workers, "_play_task", terminated)
    argv = ["tournament", "--agents", "random", "greedy", "--games", "2", "--no-progress",
            "--out", str(tmp_path)]
    assert main(argv) == 130
    assert capsys.readouterr().err == ("\ntaluva tournament: interrupted (run the same command "
                                       "again to resume)\n")
    assert signal.getsignal(signal.SIGTERM) is before
    monkeypatch.undo()
    assert main([*argv, "--bootstrap", "0"]) == 0  # the lock was released; resumed


def test_ctrl_c_stops_a_parallel_tournament_and_its_workers(tmp_path: Path) -> None:
    import os
    import signal
    import time

    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "taluva_ai.cli", "tournament", "--agents", "random", "greedy",
         "--games", "2000", "--concurrency", "2", "--no-progress", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # wait until games are being played (workers started and compiled; on a loaded
        # machine with a cold Numba cache that takes a while)
        results = out / "results.jsonl"
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None and (
                not results.exists() or len(results.read_text().splitlines()) < 2):
            time.sleep(0.05)
        assert proc.poll() is None, "the tournament ended before it could be interrupted"
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole process group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    from taluva_ai.warmup import COMPILING  # printed first when the cache was cold

    assert err.removeprefix(COMPILING + "\n") == (
        "\ntaluva tournament: interrupted (run the same command again to resume)\n")
    time.sleep(0.2)
    for pid in children:  # no worker left running (a zombie left to init is harmless)
        status = Path(f"/proc/{pid}/status")
        assert not status.exists() or "State:\tZ" in status.read_text()
    assert not list(out.glob("games/.*.part"))
    from taluva_ai.records import replay_record

    for rec in out.glob("games/*.jsonl"):
        assert replay_record(rec, seeded_draws=True).is_terminal()
