"""The first run's cost and what it says (issue 47): ``taluva bench --compile`` measures a command
with an empty kernel cache; a cold process announces compilation before it compiles."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taluva_ai import make_game
from taluva_ai import warmup as W
from taluva_ai.cli import main
from taluva_ai.compile_bench import kernel_table
from taluva_ai.games import compiling as C


def test_bench_compile_json(capsys: pytest.CaptureFixture[str]) -> None:
    # a command that compiles nothing: the figures' shape, quickly
    assert main(["bench", "--compile", "--json", "--compile-command", "taluva bench --help"]) == 0
    out = json.loads(capsys.readouterr().out)
    (c,) = out["compile"]["commands"]
    assert c["command"] == "taluva bench --help"
    assert c["cold"]["rc"] == 0 and c["warm"]["rc"] == 0
    assert c["cold"]["cpu_s"] > 0 and c["cold"]["kernels_compiled"] == 0
    assert c["cold"]["kernels"] == []
    assert len(c["load_avg"]) == 2 and len(c["load_avg"][0]) == 3
    assert "engine" not in out and "machine" in out


def test_compile_command_needs_compile(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["bench", "--compile-command", "play --players random random"])
    assert e.value.code == 2
    assert "--compile-command goes with --compile" in capsys.readouterr().err


def test_kernel_table_own_and_total() -> None:
    # a callee (depth 1) ends before its caller (depth 0); Numba's own kernels count as their
    # caller's own time
    rows = [{"kernel": "m.leaf", "cpu_s": 2.0, "depth": 1},
            {"kernel": "numba.np.impl", "cpu_s": 0.5, "depth": 1},
            {"kernel": "m.entry", "cpu_s": 5.0, "depth": 0}]
    t = {r["kernel"]: r for r in kernel_table(rows)}
    assert t["m.leaf"]["own_cpu_s"] == 2.0 and t["m.leaf"]["total_cpu_s"] == 0.0
    assert t["m.entry"]["own_cpu_s"] == 3.0 and t["m.entry"]["total_cpu_s"] == 5.0
    assert set(t) == {"m.leaf", "m.entry"}


# -- nothing silent: the notices ----------------------------------------------------------------

#: Child code: report each compile's end on stderr, so that its order against the notices shows.
_MARK = """
import sys
from numba.core import event
class _Mark(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        f = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
        print(f"[compiled {getattr(f, '__qualname__', '?')}]", file=sys.stderr, flush=True)
event.register("numba:compile", _Mark())
"""


def _cold_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment with an empty kernel cache of its own under ``tmp_path``."""
    cache = tmp_path / "numba_cache"
    cache.mkdir()
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache))


def _cold(code: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new Python with an empty kernel cache of its own."""
    return subprocess.run([sys.executable, "-c", _MARK + code, *args], capture_output=True,
                          text=True, timeout=900, env=_cold_env(tmp_path), check=True)


def test_a_cold_python_api_process_says_it_compiles_before_it_does(tmp_path: Path) -> None:
    # two cheap kernels through the API (each game's returns), so the run stays short
    r = _cold("from taluva_ai import make_game\n"
              "make_game('taluva', num_players=2).new_initial_state(seed=1).returns()\n"
              "make_game('thurn_und_taxis').new_initial_state(seed=1).returns()\n", tmp_path)
    lines = r.stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("[compiled "))
    assert C.API_COMPILING in lines[:first]
    assert lines.count(C.API_COMPILING) == 1  # once per process
    assert sum(line.startswith("[compiled ") for line in lines) >= 2


def test_a_cold_command_says_it_compiles_before_it_does(tmp_path: Path) -> None:
    # read until the first warm-up step has been logged (the rules compiled), then stop the
    # command: the rest of its warm-up and game add nothing to what is checked
    proc = subprocess.Popen(
        [sys.executable, "-c", _MARK + "from taluva_ai.cli import main\n"
         "sys.exit(main(sys.argv[1:]))\n", "play", "--players", "random", "random", "--seed",
         "1", "--tiles-per-player", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=_cold_env(tmp_path))
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if line.startswith("warm-up step "):
                break
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    first = next(i for i, line in enumerate(lines) if line.startswith("[compiled "))
    assert W.COMPILING in lines[:first]
    assert C.API_COMPILING not in lines  # the command line's notice speaks for it
    assert any(line.startswith("warm-up step ") for line in lines)  # a log: its lines


def test_the_api_notice_is_a_warning_of_the_taluva_ai_logger_once(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import types

    def event(module: str) -> object:
        f = types.SimpleNamespace(__module__=module, __qualname__="k")
        return types.SimpleNamespace(data={"dispatcher": types.SimpleNamespace(py_func=f)})

    monkeypatch.setattr(C, "_announced", False)
    with caplog.at_level(logging.WARNING, logger="taluva_ai"):
        assert not C.notice(event("mypackage.kernels"))  # not one of ours
        with C.command_line():  # a command line speaks for itself
            assert not C.notice(event("taluva_ai.games.taluva.kernels"))
        assert C.notice(event("taluva_ai.games.taluva.kernels"))
        assert not C.notice(event("taluva_ai.games.taluva.kernels"))  # once
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("taluva_ai", logging.WARNING, C.API_COMPILING)]
    # silenced as the notice says
    monkeypatch.setattr(C, "_announced", False)
    caplog.clear()
    logging.getLogger("taluva_ai").setLevel(logging.ERROR)
    try:
        assert C.notice(event("taluva_ai.envs.core"))
    finally:
        logging.getLogger("taluva_ai").setLevel(logging.NOTSET)
    assert not caplog.records


def test_a_long_compile_in_a_log_prints_lines_within_its_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import warmup_agents

    monkeypatch.setattr(W, "_announced", False)
    monkeypatch.setattr(W, "LOG_EVERY", 0.0)
    monkeypatch.setattr(W, "_BEAT_S", 0.002)

    def slow(ids):  # type: ignore[no-untyped-def]  # a kernel whose compile takes a while
        best = ids[0]
        for a in ids:
            best = max(best, a)
        return best

    fresh = warmup_agents.njit(cache=False)(slow)
    monkeypatch.setattr(warmup_agents, "probe_kernel", fresh)
    real_compile = type(fresh).compile

    def compile_slowly(self, sig):  # type: ignore[no-untyped-def]
        if self is fresh:
            time.sleep(0.2)
        return real_compile(self, sig)

    monkeypatch.setattr(type(fresh), "compile", compile_slowly)
    out = io.StringIO()
    W.warm_up(make_game("taluva", num_players=2), ["random", "tests.warmup_agents:"
                                                   "CompilingAgent"], stream=out)
    lines = out.getvalue().splitlines()
    within = [line for line in lines if "compiling" in line and line.startswith("warm-up step")]
    assert within, lines
    assert within[-1].endswith(" s)") and "kernels compiled so far" in within[-1]
    assert W._progress_line(5, 6, "agent az:builtin", "batched.collect", 31, 40.2) == (
        "warm-up step 5/6, agent az:builtin: compiling batched.collect (31 kernels "
        "compiled so far, 40 s)")


def test_bench_net_says_each_network_and_batch_size() -> None:
    pytest.importorskip("torch")
    from taluva_ai.bench import bench_net

    said: list[str] = []
    res = bench_net(batch_sizes=(1, 2), repeats=1, min_seconds=0.0, say=said.append)
    presets = [k for k, v in res.items() if isinstance(v, dict)]
    assert said == [f"bench --net: {p} ({i + 1}/{len(presets)}), batch {b} ({j + 1}/2)"
                    for i, p in enumerate(presets) for j, b in enumerate((1, 2))]


def test_compiling_now_names_the_kernel_and_the_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    monkeypatch.setattr(C, "_busy", {"depth": 0, "kernel": None, "since": 0.0, "ended": -1e9})
    assert C.compiling_now() is None
    f = types.SimpleNamespace(__module__="taluva_ai.agents.search.batched", __qualname__="collect")
    C._busy_start(types.SimpleNamespace(data={"dispatcher": types.SimpleNamespace(py_func=f)}))
    kernel, seconds = C.compiling_now()  # type: ignore[misc]
    assert kernel == "batched.collect" and 0 <= seconds < 60


def test_the_board_shows_a_compiling_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """An analysis job polled while the server compiles says so (the page shows 'compiling the
    search (first use, ...)' instead of 'searching...')."""
    pytest.importorskip("starlette")
    from taluva_ai.web.analysis import AnalysisJob

    job = AnalysisJob("position", "simulations", 100)
    assert job.view()["compiling"] is None
    monkeypatch.setattr(C, "compiling_now", lambda: ("batched.collect", 12.34))
    assert job.view()["compiling"] == {"kernel": "batched.collect", "seconds": 12.3}
    job.status = "done"
    assert job.view()["compiling"] is None


# -- issue 47's small findings -----------------------------------------------------------------

def test_thurn_und_taxis_result_lines_say_1_house_left() -> None:
    from taluva_ai.games.thurn_und_taxis.state import P_HOUSES_LEFT

    s = make_game("thurn_und_taxis", num_players=2).new_initial_state(seed=1)
    for left, said in ((1, "1 house left"), (2, "2 houses left"), (0, "0 houses left")):
        s.players[0, P_HOUSES_LEFT] = left
        assert s.seat_summary(0).endswith(f", {said})")
