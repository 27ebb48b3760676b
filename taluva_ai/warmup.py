"""Loading the compiled code a command uses before it plays (on the first run: compiling it).

The rules, the heuristic and the searches are Numba kernels compiled on their first call and
cached on disk (``__pycache__/*.nbi``, ``*.nbc``) afterwards. On a fresh install the first call
compiles for seconds to minutes; without a warm-up that time would land silently in the first
game, and in the first move's thinking time of the tournament's timing table.

:func:`warm_up` runs, untimed and before the first game, every piece of compiled code a game
between some agents uses: a deal, the legal moves, a move, a whole game (with its record), and
one decision of each agent at two positions. Only what those agents use is compiled (Numba
compiles a kernel on its first call). When anything has to be compiled it says so on stderr,
once (:data:`COMPILING`), and shows a progress bar over the warm-up steps with the kernel being
compiled and the count so far; when everything comes from the cache it prints nothing and takes
a moment.

The bar counts the kernels compiled (one tick each, within a step too) and its clock runs while a
long kernel compiles; in a log (not a terminal) a line is printed for each step that compiled
and, within a long step, at least every :data:`LOG_EVERY` seconds while compiling, so nothing
sits silent for long.

Outside the command line (the Python API, the environments), the first compile of one of this
package's kernels in a process logs one line on the ``taluva_ai`` logger instead
(:mod:`taluva_ai.games.compiling`); the command line's notice and warm-up keep it quiet.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from taluva_ai.games import compiling
from taluva_ai.protocol import CHANCE, Game, GameState

#: What is printed (stderr) when a warm-up has to compile.
COMPILING = ("compiling the engine's kernels, first run only (cached afterwards; from under a "
             "minute for a tournament to a few minutes for training, more on a busy machine)")

#: In a log, the longest a warm-up stays silent while it compiles (seconds).
LOG_EVERY = 5.0

#: How often the warm-up's heartbeat runs while it compiles (seconds).
_BEAT_S = 1.0


class CompileWatch:
    """Watches Numba compile kernels (its ``numba:compile`` events) while active.

    Attributes:
        compiled: the qualified names of the kernels compiled so far, in order (a kernel
            loaded from the cache is not compiled and not listed).
        current: the kernel being compiled now, or None.
        on_change: called with no argument when a kernel starts or ends compiling.
    """

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self.compiled: list[str] = []
        self.current: str | None = None
        self._stack: list[str] = []
        self.on_change = on_change

    @staticmethod
    def _name(event: Any) -> str | None:
        """``module.function`` of the kernel of a compile event; None for Numba's own
        implementations (of NumPy functions, say) that it compiles on the way."""
        d = (event.data or {}).get("dispatcher")
        f = getattr(d, "py_func", None)
        module = str(getattr(f, "__module__", None) or "")
        if f is None or module == "numba" or module.startswith("numba."):
            return None
        return f"{module.rsplit('.', 1)[-1]}.{f.__qualname__}"

    @contextmanager
    def active(self) -> Iterator[CompileWatch]:
        """Listen to Numba's compile events inside the ``with`` block."""
        from numba.core import event

        watch = self

        class _Listener(event.Listener):
            def on_start(self, ev: Any) -> None:
                name = watch._name(ev)
                if name is None:
                    return
                watch._stack.append(name)
                watch.current = name
                if watch.on_change is not None:
                    watch.on_change()

            def on_end(self, ev: Any) -> None:
                if watch._name(ev) is None or not watch._stack:
                    return
                watch.compiled.append(watch._stack.pop())
                watch.current = watch._stack[-1] if watch._stack else None
                if watch.on_change is not None:
                    watch.on_change()

        with event.install_listener("numba:compile", _Listener()):
            yield self


_announced = False


def announce(stream: TextIO | None = None) -> bool:
    """Print :data:`COMPILING` on ``stream`` (default stderr), once per process; whether this
    call printed it. The Python API's notice (:mod:`taluva_ai.games.compiling`) is not logged
    after it."""
    global _announced
    if _announced:
        return False
    _announced = True
    compiling.announced()
    print(COMPILING, file=stream if stream is not None else sys.stderr, flush=True)
    return True


@contextmanager
def compile_notice(stream: TextIO | None = None) -> Iterator[CompileWatch]:
    """Inside the ``with`` block, print :data:`COMPILING` (once per process) as soon as Numba
    starts compiling a kernel, so a first run never sits silent (``taluva replay``, ``bench``,
    ``train``)."""
    def on_change() -> None:
        announce(stream)

    watch = CompileWatch(on_change)
    with compiling.command_line(), watch.active():
        yield watch


@contextmanager
def compile_lines(label: str, stream: TextIO | None = None,
                  every: float = LOG_EVERY) -> Iterator[CompileWatch]:
    """Inside the ``with`` block, while Numba compiles, print :data:`COMPILING` (once per
    process) and then a line at least every ``every`` seconds: ``LABEL: compiling
    kernels.apply_action (12 kernels compiled so far, 15 s)``; nothing when all comes from
    the cache. For compiled code that no agent's warm-up (:func:`warm_up`) reaches: the
    vector environments of ``taluva bench --env``."""
    out = stream if stream is not None else sys.stderr
    watch = CompileWatch()
    t0 = time.monotonic()
    last = [t0]

    def beat() -> None:
        now = time.monotonic()
        if watch.current is not None and now - last[0] >= every:
            last[0] = now
            print(f"{label}: {_compiling(watch.current, len(watch.compiled), now - t0)}",
                  file=out, flush=True)

    def on_change() -> None:
        if announce(out):
            last[0] = time.monotonic()
        beat()

    watch.on_change = on_change
    beat_thread = _Heartbeat(beat, _BEAT_S)
    try:
        with watch.active():
            yield watch
    finally:
        beat_thread.stop()


def warmup_steps(game: Game, specs: Sequence[str], seed: int = 0
                 ) -> list[tuple[str, Callable[[], None]]]:
    """The warm-up of games of ``game`` between the agents ``specs``, as named steps (each a
    callable): a deal (which compiles most of the rules: the kernel that applies any action),
    the legal moves, a move, a whole game (random players, its record written to a temporary
    file), then ``agent <spec>`` for each distinct spec: one decision at the first position
    where a player moves and one at the next (e.g. Taluva's tile and build steps)."""
    from taluva_ai.tournament.agents import make_agent
    from taluva_ai.tournament.play import play_game

    box: dict[str, Any] = {}

    def deal() -> None:
        state = game.new_initial_state(seed=seed)
        _resolve_chance(state)
        box["state"] = state

    def legal() -> None:
        box["legal"] = box["state"].legal_actions()

    def move() -> None:
        state = box["state"]
        first = state.clone()
        state.apply(int(box["legal"][0]))
        _resolve_chance(state)
        box["positions"] = [first] + ([state.clone()] if not state.is_terminal() else [])
        if not state.is_terminal():
            state.legal_actions()

    def whole_game() -> None:
        agents = [make_agent("random") for _ in range(game.num_players)]
        with tempfile.TemporaryDirectory() as tmp:
            play_game(game, agents, seed, record_path=Path(tmp) / "warmup.jsonl")

    def agent_step(spec: str) -> Callable[[], None]:
        def run() -> None:
            agent = make_agent(spec)
            for i, position in enumerate(box.get("positions", [])):
                agent.reset(seed + i)
                agent.act(position.clone())
                agent.stats()

        return run

    steps: list[tuple[str, Callable[[], None]]] = [
        ("the rules: a deal", deal), ("legal moves", legal), ("a move", move),
        ("a whole game", whole_game)]
    seen: set[str] = set()
    for spec in specs:
        if spec not in seen:
            seen.add(spec)
            steps.append((f"agent {spec}", agent_step(spec)))
    return steps


def _resolve_chance(state: GameState) -> None:
    while state.current_player == CHANCE and not state.is_terminal():
        state.draw()


def _is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that can show a bar (not a log file, a pipe, a closed
    stream, or a terminal that reports no width: a pseudo-terminal of 0 x 0, as ``script`` or
    ``docker exec -t`` may give, where tqdm draws nothing, so it gets log lines)."""
    isatty = getattr(stream, "isatty", None)
    try:
        if isatty is None or not isatty():
            return False
    except ValueError:  # closed
        return False
    try:
        return os.get_terminal_size(stream.fileno()).columns > 0
    except (AttributeError, OSError, ValueError):  # no descriptor: take the stream's word
        return True


#: ANSI cursor moves (CSI sequences) that tqdm writes for a bar below another.
_CURSOR_MOVES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


#: The times in a tqdm line's brackets: ``[00:16<00:16, 2.00it/s`` of ``[00:16<00:16, 2.00it/s,
#: postfix]`` (what a repeated redraw changes).
_TIMES = re.compile(r"\[[^<\]]*<[^,\]]*(?:, [^,\]]*)?")


class LogLines:
    """A stream for a tqdm bar writing into a log: each redraw (tqdm starts one with a carriage
    return) becomes a line of its own, trailing padding dropped, instead of all of them piling
    up on one line of the file; a redraw that repeats the line before but for its times
    (elapsed, remaining, rate) is left out.

    Args:
        stream: where the lines go (a text stream that is not a terminal).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._open = False  # a line written and not ended yet
        self._last = ""  # the last line written, without its times (:data:`_TIMES`)

    def write(self, text: str) -> int:
        n = len(text)
        text = _CURSOR_MOVES.sub("", text)  # a nested bar's moves to its row and back
        for i, part in enumerate(text.split("\r")):
            if i > 0 and self._open:
                self.stream.write("\n")
                self._open = False
            part = part.rstrip(" ")
            key = _TIMES.sub("[", part).strip()
            if part.strip() and key == self._last:
                continue
            if part.strip():
                self.stream.write(part)
                self._open = not part.endswith("\n")
                self._last = key
            elif "\n" in part and self._open:  # the bar's closing newline
                self.stream.write("\n")
                self._open = False
        return n

    def flush(self) -> None:
        self.stream.flush()


_LOG_LINES: weakref.WeakKeyDictionary[Any, LogLines] = weakref.WeakKeyDictionary()


def bar_stream(stream: TextIO | None = None) -> tuple[Any, float]:
    """``(file, mininterval)`` for a tqdm bar on ``stream`` (default stderr): the stream itself
    and tqdm's 0.1 s on a terminal; in a log, :class:`LogLines` and a redraw every 15 s."""
    out = stream if stream is not None else sys.stderr
    if _is_terminal(out):
        return out, 0.1
    try:  # one LogLines a stream: nested bars share whether its last line is ended
        log = _LOG_LINES.get(out)
        if log is None:
            log = _LOG_LINES[out] = LogLines(out)
    except TypeError:  # a stream that takes no weak reference
        log = LogLines(out)
    return log, 15.0


def progress_bar(stream: TextIO | None = None, **kwargs: Any) -> Any:
    """A tqdm bar on ``stream`` (default stderr) drawn for where it goes (:func:`bar_stream`):
    on a terminal as tqdm draws it; in a log, one line per redraw every 15 s, with no carriage
    returns or cursor moves, nested bars included, and each bar's last state kept (``leave``
    is ignored there). ``kwargs`` go to ``tqdm`` (``total``, ``desc``, ``unit``, ``disable``,
    ``leave``, ...); update it with ``update``, not ``refresh``, so that the interval
    holds."""
    from tqdm import tqdm

    file, interval = bar_stream(stream)
    if isinstance(file, LogLines):
        # miniters=1 keeps tqdm's monitor thread from forcing redraws between the intervals
        kwargs.update(leave=True, miniters=1)
    return tqdm(file=file, mininterval=interval, dynamic_ncols=True, **kwargs)


def _step_line(step: int, steps: int, name: str, compiled: Sequence[str], total: int,
               shown: int = 3) -> str:
    """The warm-up's line for a step that compiled ``compiled`` (a log's form of the bar):
    ``warm-up step 2/6, legal moves: compiled kernels.a, kernels.b and 3 more (9 kernels
    compiled so far)``. Steps that compiled nothing print no line."""
    names = ", ".join(compiled[:shown])
    if len(compiled) > shown:
        names += f" and {len(compiled) - shown} more"
    return (f"warm-up step {step}/{steps}, {name}: compiled {names} ({total} kernels "
            f"compiled so far)")


def _progress_line(step: int, steps: int, name: str, current: str | None, total: int,
                   elapsed: float) -> str:
    """A log's line within a long step (:data:`LOG_EVERY`): ``warm-up step 5/6, agent
    az:builtin: compiling batched.collect (31 kernels compiled so far, 40 s)``."""
    return f"warm-up step {step}/{steps}, {name}: {_compiling(current, total, elapsed)}"


def _compiling(current: str | None, total: int, elapsed: float) -> str:
    """``compiling batched.collect (31 kernels compiled so far, 40 s)``: a log line's news."""
    now = f"compiling {current}" if current else "compiling"
    return f"{now} ({total} kernels compiled so far, {elapsed:.0f} s)"


class _Heartbeat:
    """Calls ``beat`` about every ``interval`` seconds from a daemon thread until
    :meth:`stop`: the terminal bar's clock runs and a log gets its lines while one long kernel
    compiles (Numba sends no event then)."""

    def __init__(self, beat: Callable[[], None], interval: float = 1.0) -> None:
        self._beat = beat
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="warm-up heartbeat",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._beat()
            except Exception:  # a closed stream: the warm-up goes on without its clock
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def warm_up(game: Game, specs: Sequence[str], *, progress: bool = True, seed: int = 0,
            stream: TextIO | None = None) -> list[str]:
    """Load, or on the first run compile and cache, every compiled kernel that games of
    ``game`` between the agents ``specs`` use, before the first (timed) move.

    When a kernel has to be compiled, prints :data:`COMPILING` once on ``stream`` (default
    stderr) and, with ``progress``, a tqdm bar that counts the kernels compiled (one tick each),
    names the warm-up step (:func:`warmup_steps`) and the kernel being compiled, and whose
    clock runs while a long kernel compiles. On a stream that is not a terminal (a log file, a
    pipe) the bar's redraws would pile up on one line, so there it prints one line per step
    that compiled something instead (:func:`_step_line`) and, within a step, a line at least
    every :data:`LOG_EVERY` seconds while compiling (:func:`_progress_line`). Prints nothing
    when everything comes from the cache.

    Args:
        game: the game, with its rules.
        specs: agent specs (repeats are warmed once).
        progress: show the bar or the lines (the message is printed either way).
        seed: seeds the warm-up's deal and agents (it changes no later game).

    Returns:
        The kernels compiled (qualified names; empty when all were cached).

    Raises:
        KeyboardInterrupt: Ctrl-C. Any other error of an agent or the game is left to the real
            games, which report it with their own context (the step is skipped).
    """
    out = stream if stream is not None else sys.stderr
    steps = warmup_steps(game, specs, seed)
    bar: Any = None
    beat: _Heartbeat | None = None
    state = {"step": 0, "started": False, "shown": 0.0, "line": 0.0, "t0": 0.0}
    watch = CompileWatch()
    lines = progress and not _is_terminal(out)
    lock = threading.Lock()

    def desc() -> str:
        i = min(int(state["step"]), len(steps) - 1)
        return f"warm-up step {i + 1}/{len(steps)}, {steps[i][0]}"

    def postfix() -> str:
        now = f"compiling {watch.current}" if watch.current else "loading"
        return f"{now}; {len(watch.compiled)} kernels compiled"

    def tick() -> None:  # the heartbeat: the bar's clock, a log's line while compiling
        with lock:
            if bar is not None:
                bar.set_postfix_str(postfix(), refresh=True)
            elif lines and watch.current and time.monotonic() - state["line"] >= LOG_EVERY:
                i = min(int(state["step"]), len(steps) - 1)
                print(_progress_line(i + 1, len(steps), steps[i][0], watch.current,
                                     len(watch.compiled), time.monotonic() - state["t0"]),
                      file=out, flush=True)
                state["line"] = time.monotonic()

    def show() -> None:
        nonlocal bar, beat
        with lock:
            if not state["started"]:
                state["started"] = True
                state["t0"] = state["line"] = time.monotonic()
                announce(out)
                if progress and not lines:
                    from tqdm import tqdm

                    bar = tqdm(total=None, desc=desc(), unit="kernel", file=out,
                               dynamic_ncols=True, leave=True)
                if progress:
                    beat = _Heartbeat(tick, _BEAT_S)
            if bar is not None:
                if bar.n < len(watch.compiled):
                    bar.update(len(watch.compiled) - bar.n)
                if time.monotonic() - state["shown"] > 0.1:
                    state["shown"] = time.monotonic()
                    bar.set_postfix_str(postfix(), refresh=True)

    watch.on_change = show
    from taluva_ai.tournament.play import _interrupted

    try:
        with compiling.command_line(), watch.active():
            for i, (name, run) in enumerate(steps):
                with lock:
                    state["step"] = i
                    if bar is not None:
                        bar.set_description_str(desc(), refresh=False)
                before = len(watch.compiled)
                try:
                    run()
                except Exception as e:
                    if _interrupted(e):  # Numba stopped mid-compile by Ctrl-C
                        raise KeyboardInterrupt from e
                if lines and len(watch.compiled) > before:
                    with lock:
                        print(_step_line(i + 1, len(steps), name, watch.compiled[before:],
                                         len(watch.compiled)), file=out, flush=True)
                        state["line"] = time.monotonic()
    finally:
        if beat is not None:
            beat.stop()
        if bar is not None:
            bar.set_description_str(f"warm-up {len(steps)}/{len(steps)} steps", refresh=False)
            bar.set_postfix_str(f"{len(watch.compiled)} kernels compiled", refresh=False)
            bar.close()
    return watch.compiled
