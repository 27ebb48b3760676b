"""The first run's cost and what it says (issue 47): ``taluva bench --compile`` measures a command
with an empty kernel cache; a cold process announces compilation before it compiles."""

from __future__ import annotations

import json

import pytest

from taluva_ai.cli import main
from taluva_ai.compile_bench import kernel_table


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
