"""Playing a tournament's scheduled games, in this process or in worker processes.

:func:`_play_stream` feeds the games to an executor of :mod:`taluva_ai.parallel` (this
machine's processes, or Ray tasks) and yields each game's results line as it ends, stopping
the workers when the run stops early or is interrupted. In each worker, :func:`_play_task`
makes the game once per process, warms up the agents' compiled code before their first timed
move, checks the files they loaded against the run's pins, and plays the game with forfeits
on, writing its record.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Generator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from taluva_ai.parallel import Backend, LocalBackend, exit_if_orphaned, sigint_deferred
from taluva_ai.protocol import Game, make_game
from taluva_ai.runfiles import naming, sha256_file
from taluva_ai.tournament.agents import _check_pins, make_agent, pinned_files, time_budget
from taluva_ai.tournament.play import DEFAULT_TIME_MARGIN, _outcome, play_game
from taluva_ai.tournament.rundir import _log_entry, _remove_parts, _task_meta
from taluva_ai.tournament.schedules import _GameTask

_WORKER_CACHE: dict[str, Any] = {}


_WARMED: set[tuple[str, str]] = set()  # (game key, agent spec) warmed up in this process


def _worker_init() -> None:
    """Worker processes leave SIGINT (Ctrl-C reaches the whole process group) to the main
    process, which stops them; no worker prints a KeyboardInterrupt traceback. (They start
    with SIGINT blocked, see :func:`taluva_ai.parallel.sigint_blocked`, so a Ctrl-C while
    they start up is held back too, then ignored.)"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _process_game(game_name: str, rules: dict[str, Any]) -> tuple[str, Game]:
    """The game of ``game_name`` with ``rules``, made once per process, and its key."""
    key = json.dumps([game_name, rules], sort_keys=True)
    game = _WORKER_CACHE.get(key)
    if game is None:
        game = make_game(game_name, **rules)
        _WORKER_CACHE.clear()
        _WORKER_CACHE[key] = game
    return key, game


def _warm_up(game: Game, key: str, specs: Sequence[str], progress: bool = False) -> None:
    """Before the first timed game of these agents in this process, run untimed everything
    compiled that their games use (:func:`taluva_ai.warmup.warm_up`: a whole game, and a
    decision of each agent, as chess engines get ``isready`` before the clock starts), so
    neither compiling nor loading compiled code counts as an agent's thinking time or
    against its first move's budget. Errors are left to the real games."""
    todo = [s for s in specs if (key, s) not in _WARMED]
    if not todo:
        return
    from taluva_ai.warmup import warm_up

    warm_up(game, todo, progress=progress)
    _WARMED.update((key, s) for s in todo)


def _play_task(game_name: str, rules: dict[str, Any], task: _GameTask, path: str,
               time_margin: float = DEFAULT_TIME_MARGIN,
               pins: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, Any]:
    """Worker: play one scheduled game (forfeits on), write its record; returns its entry of
    the results log (:func:`_log_entry`). A worker whose tournament process has died ends
    here instead, before it writes anything (:func:`taluva_ai.parallel.exit_if_orphaned`).
    ``pins``: agent spec -> the files it must have loaded (``config.json``'s
    ``agent_files``); an agent whose files differ stops the tournament before the game
    (:class:`RunConfigError`)."""
    exit_if_orphaned()
    key, game = _process_game(game_name, rules)
    limits = [time_budget(spec) for spec in task.seats]
    _warm_up(game, key, task.seats)
    agents = [make_agent(spec) for spec in task.seats]
    loaded = {}
    for spec, agent in zip(task.seats, agents, strict=True):
        loaded[spec] = pinned_files(agent)
        _check_pins(spec, loaded[spec], (pins or {}).get(spec))
    meta = _task_meta(task, loaded)
    with naming(path):  # a failed write (disk full) names the record
        res = play_game(game, agents, task.seed, record_path=path, meta=meta,
                        time_limits=limits, time_margin=time_margin, forfeits=True,
                        deck=task.deck)
        digest = None if res.forfeit is not None else sha256_file(path)
    return _log_entry(task, _outcome(res), res.forfeit, res, digest, meta.get("agent_files"))


def _play_stream(
    todo: Iterable[_GameTask], paths: Mapping[str, Path], game_name: str,
    rules: dict[str, Any], concurrency: int, margin: float, backend: Backend | None = None,
    count: int | None = None, pins: Mapping[str, Mapping[str, str]] | None = None,
) -> Generator[tuple[_GameTask, dict[str, Any]], None, None]:
    """Play ``todo``, yielding ``(task, log entry)`` as each game ends, through ``backend``'s
    executor (:mod:`taluva_ai.parallel`; default: this machine, in this process when
    ``concurrency`` is 1 or a single game is left, else in up to ``concurrency`` worker
    processes), with at most ``2 * concurrency`` games queued at a time (so an SPRT stops
    soon after its decision). When the generator is closed early or an exception (a worker's error,
    KeyboardInterrupt) passes through, the queued games are cancelled and the workers
    stopped: no worker outlives the tournament. A game whose worker died (a Ray task,
    retried) is counted once, from the one result that comes back. ``todo`` is taken lazily;
    ``count``: its length, when it is not a sequence; ``pins``: as :func:`_play_task`'s."""
    if count is None:
        todo = list(todo)
        count = len(todo)
    slots = max(1, min(concurrency, count))
    ex = (backend or LocalBackend()).executor(slots, initializer=_worker_init) if count else None
    pending: dict[Any, _GameTask] = {}
    submitted: list[_GameTask] = []  # the games whose records a worker may have begun
    queue = iter(todo)
    try:
        with sigint_deferred(ex is not None and not ex.in_process) as interrupted:
            while ex is not None:
                while len(pending) < 2 * slots:
                    nxt = next(queue, None)
                    if nxt is None:
                        break
                    pending[ex.submit(_play_task, game_name, rules, nxt,
                                      str(paths[nxt.game_id]), margin, pins)] = nxt
                    submitted.append(nxt)
                if not pending:
                    break
                finished = ex.wait(pending, timeout=0.2)
                if interrupted.is_set():
                    raise KeyboardInterrupt
                for h in sorted(finished, key=lambda h: pending[h].game_id):
                    t = pending.pop(h)
                    yield t, ex.result(h)
    except BaseException:
        if ex is not None:
            ex.close(cancel=True)
        _remove_parts(submitted, paths)  # the records of the games the workers were playing
        raise
    if ex is not None:
        ex.close()
    _remove_parts(submitted, paths)  # left by a worker that died and whose game was replayed
