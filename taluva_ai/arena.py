"""Matches and tournaments between agents, for any game of :mod:`taluva_ai.protocol`.

:func:`play_game` plays one game (and writes its record); :func:`run_tournament` plays a
round robin with shared deals and seat rotations, in parallel, resumably, and rates the agents
(:mod:`taluva_ai.ratings`).

Seeds (all derived with :class:`numpy.random.SeedSequence`, so every game is reproducible on
its own):

- a game's seed shuffles the deck (``game.new_initial_state(seed)``; chance nodes are resolved
  by ``state.draw()``, so one seed gives one tile sequence whatever the players do, as long as
  the game lasts) and, through ``SeedSequence(seed).spawn(num_players)``, seeds the agent of
  each seat (``agent.reset(seed)``);
- in a tournament, deal ``d`` has seed ``SeedSequence([seed, d]).generate_state(1)[0]``; every
  group of agents plays the same deals, each deal once per seat rotation.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import itertools
import json
import math
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from taluva_ai.errors import IllegalActionError, RecordError, RunConfigError
from taluva_ai.protocol import CHANCE, Game, make_game
from taluva_ai.records import (
    MoveEvent,
    Outcome,
    RecordWriter,
    StateCallback,
    outcome_of,
    read_header,
    replay_record,
)

try:  # POSIX; elsewhere tournaments run without the lock of their run directory
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

#: Value of ``config.json``'s ``format`` field in a tournament directory.
TOURNAMENT_FORMAT = "taluva-ai-tournament/1"


@dataclass(frozen=True)
class GameResult:
    """The result of one game.

    Attributes:
        returns: final value per seat (``state.returns()``; zeros for a truncated game).
        winners: seats that share first place (empty when truncated).
        end_reason: e.g. ``"early_victory"``, ``"last_standing"``, ``"tiles_out"``,
            ``"truncated"`` (:class:`taluva_ai.records.Outcome`).
        places: final place per seat (0 best).
        plies: actions applied, chance outcomes included.
        players: agent name (spec) per seat.
        seed: the game seed.
    """

    returns: tuple[float, ...]
    winners: tuple[int, ...]
    end_reason: str
    places: tuple[int, ...]
    plies: int
    players: tuple[str, ...]
    seed: int | None


def agent_seeds(seed: int | None, num_players: int) -> list[int] | None:
    """Per-seat agent seeds derived from a game seed (``SeedSequence(seed).spawn(n)``, each
    child's first 32-bit word); None when ``seed`` is None (agents then draw fresh entropy)."""
    if seed is None:
        return None
    children = np.random.SeedSequence(seed).spawn(num_players)
    return [int(c.generate_state(1)[0]) for c in children]


def play_game(
    game: Game,
    agents: Sequence[Any],
    seed: int | None,
    record_path: str | Path | None = None,
    on_state: StateCallback | None = None,
    meta: dict[str, Any] | None = None,
) -> GameResult:
    """Play one game between ``agents`` (one per seat, seat order).

    Chance nodes are resolved by ``state.draw()`` (the deck shuffled from ``seed``); each agent
    is reset with its seat's seed from :func:`agent_seeds` before the game, so the same seed
    and agents give the same game.

    Args:
        game: the game (its ``num_players`` must equal ``len(agents)``).
        agents: :class:`taluva_ai.agents.Agent` objects (``act``, ``reset``, ``stats``,
            ``name``).
        seed: game seed (int), or None for a fresh random game.
        record_path: write the game record there (:mod:`taluva_ai.records`).
        on_state: ``on_state(state, event)``, called with the initial state (``event`` None)
            and after every action (:class:`~taluva_ai.records.MoveEvent`, with the agent's
            ``stats()``). ``state`` is always the same object, updated in place; the callback
            must not modify it.
        meta: stored in the record header's ``meta``.

    The record is written to a temporary file next to ``record_path`` and renamed onto it
    when the game is over, so an existing file is replaced only by a finished record. Every
    action is applied (and so validated) before its line is written.

    Returns:
        The :class:`GameResult`.

    Raises:
        ValueError: the number of agents does not match the game.
        taluva_ai.errors.IllegalActionError: an agent chose an illegal action, or returned
            something that is not an action id (an integer); the message names the agent.
        OSError: ``record_path`` cannot be written (raised before the game starts).
    """
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"{len(agents)} agents for a game of {n} players")
    names = tuple(str(getattr(a, "name", type(a).__name__)) for a in agents)
    seeds = agent_seeds(seed, n)
    for i, agent in enumerate(agents):
        agent.reset(None if seeds is None else seeds[i])
    state = game.new_initial_state(seed=seed)
    writer = (
        RecordWriter(record_path, game, seed, names, agent_seeds=seeds, meta=meta, atomic=True)
        if record_path is not None else None
    )
    try:
        if on_state is not None:
            on_state(state, None)
        plies = 0
        while not state.is_terminal():
            p = state.current_player
            stats: dict[str, Any] = {}
            if p == CHANCE:
                a = state.clone().draw()  # the seeded deck decides; applied below like any action
            else:
                a = _action_id(agents[p].act(state), names[p], p)
                stats = agents[p].stats()
            text = ""
            if writer is not None or on_state is not None:
                try:
                    text = state.action_to_string(a)
                except (ValueError, IndexError) as e:
                    raise IllegalActionError(
                        a, str(e), f"agent {names[p]!r} (seat {p}) chose {a}, which is not an "
                        f"action here: {e}") from None
            try:
                state.apply(a)
            except IllegalActionError as e:
                if p == CHANCE:
                    raise
                raise IllegalActionError(
                    a, e.rule, f"agent {names[p]!r} (seat {p}) chose the illegal action "
                    f"{e.action}: {e.rule}") from e
            if writer is not None:
                writer.write_notation(p, text)
            if on_state is not None:
                on_state(state, MoveEvent(plies, p, a, text, stats))
            plies += 1
        out = writer.write_result(state) if writer is not None else outcome_of(state, plies)
    finally:
        if writer is not None:
            writer.close()
    return GameResult(out.returns, out.winners, out.end_reason, out.places, out.plies, names,
                      seed)


def _action_id(action: Any, name: str, seat: int) -> int:
    """An agent's chosen action as an int; anything but an integer (a float, a numpy float, a
    bool, None, ...) is refused rather than truncated."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    raise IllegalActionError(
        action, "an action is an integer id",
        f"agent {name!r} (seat {seat}) returned {action!r} ({type(action).__name__}), not an "
        "action id (an integer)")


def make_agent(spec: str, seed: int | None = None) -> Any:
    """Make an agent from its spec (``"random"``, ``"greedy:epsilon=0.1"``, ``"module:Class"``)
    with the agent registry of ``taluva_ai.agents``, looked up by name at run time: the core
    reaches agents only through names, never by a static import (DESIGN.md, Layout).

    Raises:
        ValueError: an unknown agent or a bad parameter (the message lists the known names).
        ImportError, AttributeError: a ``module:Class`` spec that does not resolve.
    """
    registry = importlib.import_module("taluva_ai.agents")
    return registry.make_agent(spec, seed=seed)


# -- tournaments ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _GameTask:
    """One scheduled tournament game."""

    game_id: str
    group: tuple[int, ...]  # agent indices of the group, ascending
    deal: int
    rotation: int
    seats: tuple[str, ...]  # agent spec per seat
    seed: int


def deal_seed(seed: int, deal: int) -> int:
    """Seed of deal ``deal`` of a tournament of seed ``seed`` (shared by all groups)."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1)[0])


def schedule(
    agent_specs: Sequence[str], games: int, players_per_game: int, seed: int
) -> list[_GameTask]:
    """The tournament's games, in game-id order.

    Every group of ``players_per_game`` agents (all pairs, triples or quadruples, in
    :func:`itertools.combinations` order) plays ``ceil(games / k)`` deals, ``k =
    players_per_game``, each deal once per cyclic seat rotation (rotation ``r`` seats the
    group's agents ``r, r+1, ...``), so ``games`` is rounded up to a multiple of ``k``.
    Game ids are ``"<group:03d>-<deal:04d>-<rotation>"``.
    """
    k = players_per_game
    deals = math.ceil(games / k)
    tasks = []
    for gi, group in enumerate(itertools.combinations(range(len(agent_specs)), k)):
        for d in range(deals):
            s = deal_seed(seed, d)
            for r in range(k):
                order = group[r:] + group[:r]
                tasks.append(_GameTask(f"{gi:03d}-{d:04d}-{r}", group, d, r,
                                       tuple(agent_specs[i] for i in order), s))
    return tasks


_WORKER_CACHE: dict[str, Any] = {}


def _worker_init() -> None:
    """Worker processes leave SIGINT (Ctrl-C reaches the whole process group) to the main
    process, which stops them; no worker prints a KeyboardInterrupt traceback. (They start
    with SIGINT blocked, see :func:`_sigint_blocked`, so a Ctrl-C while they start up is
    held back too, then ignored.)"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while worker processes are started: they inherit the
    blocked mask until :func:`_worker_init`; a Ctrl-C meanwhile is delivered to this process
    (KeyboardInterrupt) as soon as the block is lifted."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _play_task(game_name: str, rules: dict[str, Any], task: _GameTask, path: str
               ) -> GameResult:
    """Worker: play one scheduled game and write its record; returns its result."""
    key = json.dumps([game_name, rules], sort_keys=True)
    game = _WORKER_CACHE.get(key)
    if game is None:
        game = make_game(game_name, **rules)
        _WORKER_CACHE.clear()
        _WORKER_CACHE[key] = game
    agents = [make_agent(spec) for spec in task.seats]
    return play_game(game, agents, task.seed, record_path=path, meta=_task_meta(task))


def _task_meta(task: _GameTask) -> dict[str, Any]:
    return {"id": task.game_id, "deal": task.deal, "rotation": task.rotation}


def _kept_outcome(
    path: Path, task: _GameTask, game_name: str, rules: dict[str, Any]
) -> tuple[Outcome | None, str | None]:
    """``(outcome, None)`` when ``path`` holds a valid finished record of ``task``: its header
    is the one :func:`play_game` writes for the task, and it replays (every action legal, the
    draws those of the deal's seeded deck, the result line that of the replayed game).
    Otherwise ``(None, why)``, ``why`` None when there is no record at all."""
    if not path.exists():
        return None, None
    try:
        h = read_header(path)
        seeds = agent_seeds(task.seed, len(task.seats))
        want = (game_name, rules, task.seed, task.seats,
                None if seeds is None else tuple(seeds), _task_meta(task))
        got = (h.game, h.rules, h.seed, h.players, h.agent_seeds, h.meta)
        if got != want:
            names = ("game", "rules", "seed", "players", "agent_seeds", "meta")
            diff = [n for n, a, b in zip(names, got, want, strict=True) if a != b]
            return None, f"line 1: the header is not this game's (it differs in: " \
                f"{', '.join(diff)})"
        plies = [0]

        def count(state: Any, event: MoveEvent | None) -> None:
            if event is not None:
                plies[0] += 1

        state = replay_record(path, on_state=count, seeded_draws=True)
        return outcome_of(state, plies[0]), None
    except RecordError as e:
        return None, f"line {e.line}: field {e.field!r}: {e.reason}"
    except OSError as e:
        return None, f"cannot read the record: {e.strerror or e}"


def tournament_config(
    agent_specs: Sequence[str],
    games: int,
    players_per_game: int,
    seed: int,
    game_name: str,
    rules: dict[str, Any],
) -> dict[str, Any]:
    """The settings that define a tournament's games (``out_dir/config.json``)."""
    return {
        "format": TOURNAMENT_FORMAT,
        "game": game_name,
        "rules": rules,
        "agents": list(agent_specs),
        "games_per_group": games,
        "players_per_game": players_per_game,
        "seed": seed,
    }


def run_tournament(
    agent_specs: Sequence[str],
    games: int,
    out_dir: str | Path,
    players_per_game: int = 2,
    concurrency: int = 1,
    seed: int = 0,
    rules: dict[str, Any] | None = None,
    game_name: str = "taluva",
    bootstrap: int = 1000,
    progress: bool = True,
) -> dict[str, Any]:
    """Round-robin tournament: every group of ``players_per_game`` agents plays ``games``
    games (rounded up to a multiple of the seat rotations, see :func:`schedule`).

    Writes, under ``out_dir``: ``config.json`` (the settings), ``games/<id>.jsonl`` (every
    game record) and ``results.json`` (the table of :func:`taluva_ai.ratings.tournament_table`).
    Resumable: run again with the same arguments, it keeps the games whose records are complete
    and plays the rest. The table is computed from the records in game-id order, so it depends
    neither on ``concurrency`` nor on the order in which games finish: the same seed and
    settings give identical records and table.

    Args:
        agent_specs: distinct agent specs (``"random"``, ``"greedy:epsilon=0.1"``,
            ``"module:Class"``); at least ``players_per_game``. The first is the Elo anchor.
        games: games per group (>= 1).
        out_dir: the run directory.
        players_per_game: 2, 3 or 4 (sets the game's ``num_players``).
        concurrency: worker processes (1 plays in this process).
        seed: tournament seed (deals and agent seeds derive from it).
        rules: the game's options other than ``num_players`` (e.g. ``{"ranked": True}``).
        game_name: registered game name.
        bootstrap: bootstrap resamples for the Elo intervals.
        progress: show a tqdm progress bar (on stderr).

    Every kept record is checked by replaying it (:func:`taluva_ai.records.replay_record`,
    with the deal's draws); one that fails is named in a warning line on stderr and its game
    is played again, so the table never rests on a corrupted record. The run directory is
    locked (``out_dir/.lock``) while the tournament runs: a second tournament on the same
    directory fails at once. On KeyboardInterrupt (SIGINT, and SIGTERM, which is turned into
    one while the tournament runs) the worker processes are stopped and the games in progress
    discarded; finished records are kept for the resume.

    Returns:
        The results table (also written to ``out_dir/results.json``).

    Raises:
        ValueError: bad arguments (unknown agent, duplicate specs, too few agents, bad rules,
            a negative ``bootstrap``, an empty ``out_dir``).
        RunConfigError: ``out_dir`` holds a tournament made with other settings, is in use by
            another tournament, or holds something else where the tournament's files go
            (e.g. ``out_dir/games`` is a file, ``config.json`` is unreadable).
        OSError: a file of the run directory cannot be written (e.g. no permission).
    """
    from tqdm import tqdm

    from taluva_ai.ratings import tournament_table

    specs = [str(s).strip() for s in agent_specs]
    if any(not s for s in specs):
        raise ValueError(f"agent specs must not be empty, got {list(agent_specs)}")
    if len(set(specs)) != len(specs):
        raise ValueError(f"agent specs must be distinct, got {specs}")
    if players_per_game not in (2, 3, 4):
        raise ValueError(f"players_per_game must be 2, 3 or 4, got {players_per_game}")
    if len(specs) < players_per_game:
        raise ValueError(f"{len(specs)} agents for games of {players_per_game} players")
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError(f"bootstrap must be an integer >= 0, got {bootstrap!r}")
    if str(out_dir) == "":
        raise ValueError("out_dir: empty path")
    for s in specs:
        make_agent(s)  # raises ValueError for an unknown agent or a bad parameter
    opts = dict(rules or {})
    if opts.get("num_players", players_per_game) != players_per_game:
        raise ValueError("rules' num_players differs from players_per_game")
    opts["num_players"] = players_per_game
    game = make_game(game_name, **opts)
    full_rules = game.options()

    out = Path(out_dir)
    config = tournament_config(specs, games, players_per_game, seed, game_name, full_rules)
    if out.exists() and not out.is_dir():
        raise RunConfigError(f"{out}: not a directory; give a directory as the run directory")
    out.mkdir(parents=True, exist_ok=True)
    with _run_lock(out), _sigterm_as_interrupt():
        return _run_locked(out, config, specs, games, players_per_game, concurrency, seed,
                           game_name, full_rules, bootstrap, progress, tqdm, tournament_table)


def _run_locked(
    out: Path, config: dict[str, Any], specs: list[str], games: int, players_per_game: int,
    concurrency: int, seed: int, game_name: str, full_rules: dict[str, Any], bootstrap: int,
    progress: bool, tqdm: Any, tournament_table: Any,
) -> dict[str, Any]:
    """The tournament, once its run directory is made and locked."""
    cfg_path = out / "config.json"
    games_dir = out / "games"
    results_path = out / "results.json"
    if cfg_path.exists():
        try:
            old = json.loads(cfg_path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            raise RunConfigError(f"{cfg_path}: unreadable ({e}); use another --out") from None
        except OSError as e:
            raise RunConfigError(f"{cfg_path}: unreadable ({e.strerror or e}); use another "
                                 "--out") from None
        if not isinstance(old, dict):
            raise RunConfigError(f"{cfg_path}: unreadable (a JSON {type(old).__name__}, not "
                                 "a tournament's settings object); use another --out")
        if old != config:
            keys = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
            raise RunConfigError(
                f"{out} holds a tournament made with other settings (they differ in: "
                f"{', '.join(keys)}); use another output directory or the same arguments"
            )
    if games_dir.exists() and not games_dir.is_dir():
        raise RunConfigError(f"{games_dir}: not a directory (the tournament keeps its records "
                             "there); move it away or use another --out")
    if results_path.exists() and not results_path.is_file():
        raise RunConfigError(f"{results_path}: not a file (the tournament writes its table "
                             "there); move it away or use another --out")
    for path in (results_path, out):
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(13, "Permission denied", str(path))
    tasks = schedule(specs, games, players_per_game, seed)
    paths = {t.game_id: games_dir / f"{t.game_id}.jsonl" for t in tasks}
    for path in paths.values():
        if path.exists() and not path.is_file():
            raise RunConfigError(f"{path}: not a file (the record of a game goes there); move "
                                 "it away or use another --out")
    games_dir.mkdir(exist_ok=True)
    if not cfg_path.exists():
        _write_atomic(cfg_path, json.dumps(config, indent=2) + "\n")
    for part in games_dir.glob(".*.part"):  # records of games interrupted while played
        part.unlink(missing_ok=True)

    outcomes: dict[str, Outcome] = {}
    todo = []
    for t in tasks:
        kept, why = _kept_outcome(paths[t.game_id], t, game_name, full_rules)
        if kept is not None:
            outcomes[t.game_id] = kept
            continue
        if why is not None:
            print(f"{paths[t.game_id]}: {why}; playing this game again", file=sys.stderr)
        todo.append(t)
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), disable=not progress,
               desc="games", unit="game", dynamic_ncols=True)
    try:
        if concurrency == 1 or len(todo) <= 1:
            for t in todo:
                res = _play_task(game_name, full_rules, t, str(paths[t.game_id]))
                outcomes[t.game_id] = _outcome(res)
                bar.update(1)
        else:
            _play_parallel(todo, paths, game_name, full_rules, concurrency, outcomes, bar)
    finally:
        bar.close()

    games_done = []
    for t in tasks:
        res_t = outcomes[t.game_id]
        games_done.append(
            {"id": t.game_id, "group": [specs[i] for i in t.group], "seats": list(t.seats),
             "places": list(res_t.places), "winners": list(res_t.winners),
             "end_reason": res_t.end_reason}
        )
    table = tournament_table(specs, games_done, players_per_game, bootstrap=bootstrap,
                             seed=seed)
    table = {"config": config, "records_sha256": _records_digest(paths, tasks), **table}
    _write_atomic(results_path, json.dumps(table, indent=2) + "\n")
    return table


def _outcome(res: GameResult) -> Outcome:
    return Outcome(res.returns, res.winners, res.end_reason, res.places, res.plies)


def _play_parallel(
    todo: Sequence[_GameTask], paths: dict[str, Path], game_name: str, rules: dict[str, Any],
    concurrency: int, outcomes: dict[str, Outcome], bar: Any,
) -> None:
    """Play ``todo`` in ``concurrency`` worker processes. On any exception (a game's error,
    KeyboardInterrupt) the queued games are cancelled and the workers stopped before it
    propagates: no worker outlives the tournament."""
    ctx = multiprocessing.get_context("spawn")
    ex = ProcessPoolExecutor(max_workers=concurrency, mp_context=ctx, initializer=_worker_init)
    futures: dict[Future[GameResult], str] = {}
    try:
        with _sigint_blocked():  # the workers are started by the submits
            for t in todo:
                fut = ex.submit(_play_task, game_name, rules, t, str(paths[t.game_id]))
                futures[fut] = t.game_id
        for fut in as_completed(futures):
            outcomes[futures[fut]] = _outcome(fut.result())
            bar.update(1)
    except BaseException:
        for fut in futures:
            fut.cancel()
        procs = list((getattr(ex, "_processes", None) or {}).values())
        ex.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10)
        for t in todo:  # the records of the games the workers were playing
            for part in paths[t.game_id].parent.glob(f".{paths[t.game_id].name}.*.part"):
                part.unlink(missing_ok=True)
        raise
    ex.shutdown(wait=True)


def _write_atomic(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file renamed onto it (never a half-written file)."""
    tmp = path.with_name(f".{path.name}.part")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _run_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out/.lock`` (``fcntl.flock``, non-blocking).

    Raises:
        RunConfigError: another tournament holds it.
    """
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunConfigError(
                f"{out} is in use by another tournament (it holds {out / '.lock'}); wait for "
                "it to finish or use another --out") from None
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the tournament runs, SIGTERM raises KeyboardInterrupt in the main thread, so it
    stops the workers and leaves the run directory resumable like Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _records_digest(paths: dict[str, Path], tasks: Sequence[_GameTask]) -> str:
    """SHA-256 over every record's bytes in game-id order (identical runs, identical digest)."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(t.game_id.encode())
        h.update(paths[t.game_id].read_bytes())
    return h.hexdigest()

