"""The warm-up before the first move (issue 19 A.3): a first run says that it compiles and
shows its progress; compiling is never counted as an agent's thinking time; only what the
command's agents use is loaded."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai import warmup as W

SPEC = "tests.warmup_agents:CompilingAgent"


def test_a_compiling_warm_up_says_so_and_shows_the_kernels(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    from tests import warmup_agents

    monkeypatch.setattr(W, "_announced", False)
    game = make_game("taluva", num_players=2)
    fresh = warmup_agents.njit(cache=False)(warmup_agents.probe_kernel.py_func)
    monkeypatch.setattr(warmup_agents, "probe_kernel", fresh)
    out = io.StringIO()
    compiled = W.warm_up(game, ["random", SPEC], stream=out)
    text = out.getvalue()
    # the agent's kernel compiles in its step, the last (on a first run the engine's before)
    assert compiled[-1] == "warmup_agents.probe_kernel"
    assert compiled.count("warmup_agents.probe_kernel") == 1
    assert text.startswith(W.COMPILING + "\n")
    assert "warm-up" in text and "compiled warmup_agents.probe_kernel" in text
    assert "6/6" in text and f"{len(compiled)} kernels compiled" in text
    # not a terminal (a log): one line per step that compiled, no redrawn bar
    assert "\r" not in text
    assert text.splitlines()[-1] == W._step_line(6, 6, f"agent {SPEC}",
                                                  ["warmup_agents.probe_kernel"], len(compiled))
    # all loaded now: a second warm-up compiles and prints nothing
    out2 = io.StringIO()
    assert W.warm_up(game, ["random", SPEC], stream=out2) == []
    assert out2.getvalue() == ""


def test_compile_lines_say_what_compiles_and_nothing_when_cached(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import warmup_agents

    monkeypatch.setattr(W, "_announced", False)
    fresh = warmup_agents.njit(cache=False)(warmup_agents.probe_kernel.py_func)
    out = io.StringIO()
    ids = np.arange(3)
    with W.compile_lines("bench --env", stream=out, every=0.0) as watch:
        assert fresh(ids) == 2
    assert watch.compiled == ["warmup_agents.probe_kernel"]
    lines = out.getvalue().splitlines()
    assert lines[0] == W.COMPILING
    assert lines[1].startswith("bench --env: compiling warmup_agents.probe_kernel (0 kernels "
                               "compiled so far, ")
    out2 = io.StringIO()
    with W.compile_lines("bench --env", stream=out2, every=0.0):
        assert fresh(ids) == 2  # compiled already: silent
    assert out2.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_warm_up_draws_a_bar_naming_the_kernel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import warmup_agents

    monkeypatch.setattr(W, "_announced", False)
    fresh = warmup_agents.njit(cache=False)(warmup_agents.probe_kernel.py_func)
    monkeypatch.setattr(warmup_agents, "probe_kernel", fresh)
    out = _Terminal()
    compiled = W.warm_up(make_game("taluva", num_players=2), ["random", SPEC], stream=out)
    text = out.getvalue()
    assert "\r" in text and "compiling warmup_agents.probe_kernel" in text
    assert "6/6" in text and f"{len(compiled)} kernels compiled" in text


def test_a_step_line_names_at_most_three_kernels() -> None:
    assert W._step_line(2, 6, "legal moves", ["k.a", "k.b"], 9) == \
        "warm-up step 2/6, legal moves: compiled k.a, k.b (9 kernels compiled so far)"
    assert W._step_line(1, 6, "the rules: a deal", ["k.a", "k.b", "k.c", "k.d", "k.e"], 5) == (
        "warm-up step 1/6, the rules: a deal: compiled k.a, k.b, k.c and 2 more (5 kernels "
        "compiled so far)")


def test_the_steps_cover_the_rules_and_each_agent_once() -> None:
    game = make_game("taluva", num_players=2)
    names = [n for n, _ in W.warmup_steps(game, ["greedy", "random", "greedy"])]
    assert names == ["the rules: a deal", "legal moves", "a move", "a whole game",
                     "agent greedy", "agent random"]


@pytest.mark.parametrize("concurrency", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_no_timed_move_compiles(concurrency: int, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compile of the agent's own kernel happens in a warm-up, in the main process and
    in each worker process, never in a timed move of a tournament game."""
    from taluva_ai.tournament import run_tournament

    log = tmp_path / "acts.jsonl"
    monkeypatch.setenv("TALUVA_WARMUP_LOG", str(log))
    run_tournament(["random", SPEC], 2, tmp_path / "t", concurrency=concurrency,
                   rules={"tiles_per_player": 2}, progress=False, plots=False)
    acts = [json.loads(line) for line in log.read_text().splitlines()]
    timed = [a for a in acts if not a["warm_up"]]
    assert len(timed) >= 2 and not any(a["compiles"] for a in timed)
    # each process that played warmed up first
    assert {a["pid"] for a in timed} <= {a["pid"] for a in acts if a["warm_up"]}
    timing = json.loads((tmp_path / "t" / "timing.json").read_text())
    assert timing["agents"][SPEC]["moves"] == len(timed)


def test_a_worker_warms_up_before_its_first_game(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's side (what each worker process does before its first timed game), here in
    this process with nothing warmed and the agent's kernel not compiled yet."""
    from taluva_ai.tournament import schedules, workers
    from tests import warmup_agents

    fresh = warmup_agents.njit(cache=False)(warmup_agents.probe_kernel.py_func)
    monkeypatch.setattr(warmup_agents, "probe_kernel", fresh)
    monkeypatch.setattr(workers, "_WARMED", set())
    log = tmp_path / "acts.jsonl"
    monkeypatch.setenv("TALUVA_WARMUP_LOG", str(log))
    rules = {"num_players": 2, "tiles_per_player": 2}
    task = schedules.schedule(["random", SPEC], 2, 2, 0)[0]
    entry = workers._play_task("taluva", rules, task, str(tmp_path / "g.jsonl"))
    acts = [json.loads(line) for line in log.read_text().splitlines()]
    assert next(a["compiles"] for a in acts if a["warm_up"]) is True
    timed = [a for a in acts if not a["warm_up"]]
    assert timed and not any(a["compiles"] for a in timed)
    seat = task.seats.index(SPEC)
    assert entry["time_s"][seat] >= 0.0
    assert {s for _, s in workers._WARMED} == {"random", SPEC}


def test_only_what_the_agents_use_is_loaded() -> None:
    """A random/greedy game loads the rules and the heuristic, not the solo variant's code,
    the searches' kernels, the encoders or the envs' (Numba compiles a kernel on its first
    call; a game that is not solo calls the ``standard_*`` kernels and the enumerators)."""
    code = """
import sys
from taluva_ai import make_game
from taluva_ai.warmup import warm_up
warm_up(make_game("taluva", num_players=2), ["random", "greedy"], progress=False)
from numba.core.registry import CPUDispatcher
loaded = sorted({f"{m}.{k}" for m, mod in list(sys.modules.items())
                 if m.startswith("taluva_ai") for k, v in vars(mod).items()
                 if isinstance(v, CPUDispatcher) and v.overloads})
print("\\n".join(loaded))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=600, check=True)
    loaded = r.stdout.split()
    k = "taluva_ai.games.taluva.kernels."
    h = "taluva_ai.games.taluva.heuristic."
    assert {k + "tile_actions", k + "build_actions_labeled", k + "standard_apply_action",
            h + "action_values"} <= set(loaded)
    # the legal actions come from the enumerators the rules compile anyway, and the greedy
    # player values placements by the definition, without the searches' incremental path
    assert not {k + "standard_legal_actions", h + "fast_action_values",
                h + "placement_value_fast"} & set(loaded)
    # the solo variant's code is reached only through the dispatching kernels
    assert not {k + "legal_actions", k + "apply_action", k + "apply_chance"} & set(loaded)
    assert not [k for k in loaded if ".mcts" in k or ".search_kernels." in k or "solo" in k
                or ".encoding." in k or ".envs." in k or "thurn_und_taxis" in k], loaded


def test_log_lines_turn_each_bar_redraw_into_a_line() -> None:
    out = io.StringIO()
    log = W.LogLines(out)
    for chunk in ["\rgames:   0%| 0/2", "", "\rgames:  50%| 1/2   ", "\rgames: 100%| 2/2",
                  "\n"]:
        log.write(chunk)
    assert out.getvalue() == "games:   0%| 0/2\ngames:  50%| 1/2\ngames: 100%| 2/2\n"
    # a redraw that repeats the count of the line before (the closing one) is left out
    out = io.StringIO()
    log = W.LogLines(out)
    for chunk in ["\rg:  50%| 1/2 [00:01<00:01, 1.00it/s]", "\rg:  50%| 1/2 [00:16<00:16, "
                  "0.06it/s]", "\rg:  50%| 1/2 [00:16<00:16, 0.06it/s, LLR 1.2]",
                  "\rg: 100%| 2/2 [00:20<00:00, 0.10it/s, LLR 3.0]",
                  "\rg: 100%| 2/2 [00:21<00:00, 0.09it/s, LLR 3.0]", "\n"]:
        log.write(chunk)
    # (a change of the postfix at the same count is kept)
    assert out.getvalue().splitlines() == [
        "g:  50%| 1/2 [00:01<00:01, 1.00it/s]", "g:  50%| 1/2 [00:16<00:16, 0.06it/s, LLR 1.2]",
        "g: 100%| 2/2 [00:20<00:00, 0.10it/s, LLR 3.0]"]
    assert W.bar_stream(out)[1] == 15.0 and isinstance(W.bar_stream(out)[0], W.LogLines)
    term = _Terminal()
    assert W.bar_stream(term) == (term, 0.1)


def test_log_lines_drop_the_cursor_moves_of_nested_bars() -> None:
    """A bar below another (training's self-play bar under its iterations bar) moves the
    cursor down and back up around each redraw; in a log those moves are dropped."""
    out = io.StringIO()
    outer = W.progress_bar(out, total=2, desc="iterations", position=0, bar_format="{l_bar}")
    for k in range(2):
        with W.progress_bar(out, total=1, desc=f"self-play {k}", leave=False,
                            bar_format="{l_bar}") as inner:
            inner.update(1)
        outer.update(1)
    outer.close()
    # (redrawn at most every 15 s: here the first and the last of each)
    assert out.getvalue().splitlines() == [
        "iterations:   0%|", "self-play 0:   0%|", "self-play 0: 100%|", "self-play 1:   0%|",
        "self-play 1: 100%|", "iterations: 100%|"]


def test_a_tournament_logs_its_progress_one_line_per_redraw(tmp_path: Path, capsys) -> None:
    from taluva_ai.tournament import run_tournament

    run_tournament(["random", "greedy"], 2, tmp_path / "t", rules={"tiles_per_player": 2},
                   progress=True, plots=False)
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [x for x in err.splitlines() if x.startswith("games:")]
    assert lines[0].startswith("games:   0%") and lines[-1].startswith("games: 100%")
    assert "2/2" in lines[-1]


@pytest.mark.parametrize(("rows", "cols", "terminal"), [(24, 80, True), (0, 0, False)])
def test_a_terminal_without_a_width_gets_log_lines(rows: int, cols: int, terminal: bool) -> None:
    """A pseudo-terminal that reports 0 x 0 (``script``, ``docker exec -t``) shows no tqdm bar,
    so the warm-up writes it log lines instead of drawing nothing for half a minute."""
    import fcntl
    import pty
    import struct
    import termios

    main, side = pty.openpty()
    try:
        fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        with open(side, "w", closefd=False) as stream:
            assert W._is_terminal(stream) is terminal
    finally:
        os.close(main)
        os.close(side)
