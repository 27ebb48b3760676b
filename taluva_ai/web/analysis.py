"""The analysis of positions in the browser board (``taluva serve``, docs/web.md): the server
side of the analysis panel and of the value graph.

:func:`analyse` runs an agent's search on a position (a copy) and returns its candidate moves
(:meth:`taluva_ai.agents.base.Agent.search_candidates`) with the hexes they concern, for the
page's heat map. :class:`GameAnalysis` runs it at every position of a record for the value
graph. :func:`search_position` runs an MCTS search in chunks of simulations so that a cancel
(a ``threading.Event``) stops it between chunks; :class:`AnalysisJob` runs either in a worker
thread with its progress, for the page to poll and cancel (and says while the server compiles
the search, on its first use). The agents are checked and made by :mod:`taluva_ai.web.specs`.

Every refusal is a :class:`~taluva_ai.web.errors.WebError` (status and one line).
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from taluva_ai.errors import IllegalActionError, NotationError
from taluva_ai.protocol import CHANCE, GameState
from taluva_ai.web.cancel import CancelFlag, Cancelled, section
from taluva_ai.web.errors import WebError, _one_line
from taluva_ai.web.play import board_picture, move_info
from taluva_ai.web.specs import AgentPolicy, analysis_agent

#: Candidate moves an analysis returns at most (the most visited).
MAX_CANDIDATES = 400
#: Simulations per chunk of an analysis's search: a cancel is seen between chunks.
CHUNK_SIMS = 1000
#: Simulations per chunk of a search with a time budget (about a tenth of a second of the
#: compiled search): the time is checked, and a cancel seen, between chunks.
CHUNK_SIMS_TIMED = 200
#: The most positions a whole-game analysis (the value graph) may have.
MAX_GAME_POSITIONS = 400
#: The most simulations a whole-game analysis may run in all (positions x sims).
MAX_GAME_SIMS = 200_000
#: The most seconds a whole-game analysis may ask for in all (positions x time).
MAX_GAME_SECONDS = 600.0
#: Analysis jobs kept in memory (finished ones dropped first).
MAX_JOBS = 32


def _num_players(state: GameState) -> int:
    return int(getattr(state, "num_players", None) or len(state.returns()))


def planned_sims(agent: Any) -> int | None:
    """The simulations an analysis by ``agent`` runs per position (None: a time budget, or an
    agent that does not say)."""
    from taluva_ai.agents.mcts import MCTSAgent

    if isinstance(agent, MCTSAgent):
        return None if agent.config.time is not None else int(agent.config.sims)
    sims = getattr(agent, "sims", None)
    return sims if isinstance(sims, int) and not isinstance(sims, bool) else None


def search_position(agent: Any, state: GameState, cancel: threading.Event | None = None,
                    on_sims: Any = None, searched: dict[str, Any] | None = None
                    ) -> tuple[int, list[float | None]] | None:
    """Search ``state`` (not modified) with ``agent``; the chosen action and the value of every
    seat at the root (the mean return over the root's simulations, on the game's returns
    scale; ``float`` per seat, None where the agent does not tell), or None when ``cancel`` was
    set before the search ended.

    An :class:`~taluva_ai.agents.mcts.MCTSAgent` (AlphaZero too) with a ``sims`` budget, a
    PUCT root and a position without hidden information searches one tree in chunks of
    :data:`CHUNK_SIMS` simulations (:meth:`MCTSAgent.search` continues a tree), looks at
    ``cancel`` before each chunk and calls ``on_sims(simulations done)`` after it; one chunk
    is exactly ``agent.act``. With a ``time`` budget and a PUCT root it searches in chunks of
    :data:`CHUNK_SIMS_TIMED` until the time is up (at least one chunk), so a cancel stops it
    too. A Gumbel root (whose sequential halving plans the whole budget) searches in one
    call that reports after every batch of leaves (:meth:`MCTSAgent.search`'s ``progress``):
    ``on_sims`` then, and ``cancel`` stops it there. A position with hidden information (a
    Thurn und Taxis hand, ``tile_preview``) is searched so on one determinization from the
    mover's view (``state.resample``, as :meth:`MCTSAgent.act` does). Any other agent runs
    ``agent.act`` whole (bounded by :data:`MAX_ANALYSIS_SECONDS` or
    :data:`MAX_ANALYSIS_SIMS`); ``cancel`` is seen before it.

    A :class:`~taluva_ai.web.cancel.CancelFlag` ``cancel`` that is interrupted (a departed
    client, the server's shutdown) stops any of them at once (:mod:`taluva_ai.web.cancel`).

    ``searched`` (a dict), when given, receives ``"state"``: the position searched (a copy; the
    determinization for hidden information), and ``"tree"``: the search tree when the search
    ran here (an MCTS agent), for the lines of :func:`analyse_with`.
    """
    try:
        with section(cancel):
            return _search_position(agent, state, cancel, on_sims, searched)
    except Cancelled:
        return None


def _search_position(agent: Any, state: GameState, cancel: threading.Event | None,
                     on_sims: Any, searched: dict[str, Any] | None = None
                     ) -> tuple[int, list[float | None]] | None:
    from taluva_ai.agents.mcts import MCTSAgent
    from taluva_ai.agents.search.tree import Tree

    n = _num_players(state)
    hidden = getattr(state, "has_hidden_information", lambda: False)()
    if hidden and isinstance(agent, MCTSAgent) and state.current_player >= 0:
        # one determinization from the mover's view, as MCTSAgent.act searches it
        rng = np.random.default_rng(int(agent.rng.integers(2**31 - 1)))
        state = state.resample(state.current_player, rng)  # type: ignore[attr-defined]
        hidden = False
    if searched is not None:
        searched["state"] = state.clone()
    timed = isinstance(agent, MCTSAgent) and agent.config.time is not None
    if isinstance(agent, MCTSAgent) and not hidden and agent.config.root != "puct":
        root = state.clone()
        tree = Tree(n)
        if searched is not None:
            searched["tree"] = tree

        def progress(done: int) -> bool:
            if on_sims is not None and done:
                on_sims(done)
            return cancel is None or not cancel.is_set()

        if not progress(0) or not agent.search(root, tree, progress=progress):
            return None
        return _root_values(agent, tree, root, n)
    if isinstance(agent, MCTSAgent) and not hidden:
        root = state.clone()
        tree = Tree(n)
        if searched is not None:
            searched["tree"] = tree
        deadline = None
        if timed:  # a time budget: chunks of CHUNK_SIMS_TIMED until the time is up
            deadline = time.perf_counter() + float(agent.config.time)
            agent.config = dataclasses.replace(agent.config, time=None)
        total = int(agent.config.sims)
        done = 0
        while (done < total) if deadline is None else (done == 0
                                                         or time.perf_counter() < deadline):
            if cancel is not None and cancel.is_set():
                return None
            k = CHUNK_SIMS_TIMED if deadline is not None else min(CHUNK_SIMS, total - done)
            agent.search(root, tree, sims=k, noise=done == 0)
            done += k
            if on_sims is not None:
                on_sims(done)
        return _root_values(agent, tree, root, n)
    if cancel is not None and cancel.is_set():
        return None
    action = int(agent.act(state.clone()))
    values: list[float | None] = [None] * n
    v = agent.stats().get("root_value")
    if isinstance(v, (int, float)) and 0 <= state.current_player < n:
        values[state.current_player] = round(float(v), 4)
    return action, values


def _root_values(agent: Any, tree: Any, root: GameState, n: int
                 ) -> tuple[int, list[float | None]]:
    """The agent's choice from a searched ``tree`` and each seat's mean return at the root."""
    from taluva_ai.protocol import value_normalization

    action = agent.choose(tree, root)
    offset, scale = value_normalization(root)
    visits = max(float(tree.N[0]), 1.0)
    return action, [round(float(tree.W[0, s]) / visits * scale + offset, 4) for s in range(n)]


def analyse(state: GameState, spec: Any, seed: int = 0, cancel: threading.Event | None = None,
            on_sims: Any = None, policy: AgentPolicy | None = None) -> dict[str, Any] | None:
    """Run the agent ``spec``'s search on a copy of ``state`` and return its view:
    ``{"agent", "chosen", "summary", "simulations", "root_value", "values", "candidates":
    [{"notation", "visits", "value", "prior", "share", "hex", "cells"}...]}`` (``values``: the
    root value of every seat, :func:`search_position`; ``share``: the move's part of the root's
    visits; ``hex``/``cells`` as :func:`move_info`; at most :data:`MAX_CANDIDATES`, the most
    visited). None when ``cancel`` was set before the search ended; ``on_sims`` as
    :func:`search_position`.

    Raises:
        WebError: 400 a bad or unbounded spec (``sims`` above :data:`MAX_ANALYSIS_SIMS`,
            ``time`` above :data:`MAX_ANALYSIS_SECONDS`), an agent that does not search
            (no candidates), or a position where nobody is to move; 500 the agent failed.
    """
    if state.current_player < 0:
        raise WebError(400, "nobody is to move in this position (a chance draw or the end): "
                        "analyse a position where a seat is to move")
    spec, agent = analysis_agent(state, spec, seed, policy)
    return analyse_with(agent, spec, state, cancel, on_sims)


#: The longest line (principal variation) an analysis gives per candidate, in actions.
MAX_LINE = 12
#: The candidates (the most visited) an analysis gives a line for.
MAX_LINES = 30


def tree_lines(tree: Any) -> dict[int, list[int]]:
    """Each searched root move's line in an MCTS ``tree``: its action, then at each node the
    most visited child's (chance outcomes included), while that child was visited, at most
    :data:`MAX_LINE` actions (as :meth:`MCTSAgent._stats` finds the principal variation)."""
    from taluva_ai.agents.search.tree import CHANCE as K_CHANCE
    from taluva_ai.agents.search.tree import DECISION

    out: dict[int, list[int]] = {}
    for c in tree.children(0):
        if tree.N[c] <= 0:
            continue
        line = [int(tree.action[c])]
        node = int(c)
        while len(line) < MAX_LINE and tree.kind[node] in (DECISION, K_CHANCE):
            kids = list(tree.children(node))
            if not kids:
                break
            best = max(kids, key=lambda k: tree.N[k])
            if tree.N[best] <= 0:
                break
            line.append(int(tree.action[best]))
            node = int(best)
        out[int(tree.action[c])] = line
    return out


def line_steps(state: GameState, actions: Sequence[int]) -> list[dict[str, Any]]:
    """A line of actions from ``state`` (not modified) as the page draws it: per action
    ``{"notation", "player" (a seat or "chance"), "at" (its hex's centre in the board
    picture, or None)}``; it stops at the first action that is not legal (a line read from
    another determinization)."""
    s = state.clone()
    out: list[dict[str, Any]] = []
    for a in actions:
        if s.is_terminal() or not np.any(s.legal_actions() == int(a)):
            break
        p = s.current_player
        info = move_info(s, int(a))
        out.append({"notation": info["notation"], "player": "chance" if p == CHANCE else int(p),
                    "at": info.get("at")})
        s.apply(int(a))
    return out


def analyse_with(agent: Any, spec: str, state: GameState, cancel: threading.Event | None,
                 on_sims: Any, searched: dict[str, Any] | None = None
                 ) -> dict[str, Any] | None:
    """The search of :func:`analyse` with an agent made already; ``searched`` (a dict) gets
    the position searched (``"state"``) as :func:`search_position` gives it, whose moves the
    candidates' lines are."""
    searched = {} if searched is None else searched
    try:
        found = search_position(agent, state, cancel, on_sims, searched=searched)
        if found is None:
            return None
        chosen, values = found
        stats = agent.stats()
        cands = agent.search_candidates()
    except (IllegalActionError, Exception) as e:
        raise WebError(500, f"agent {spec!r} failed: {type(e).__name__}: {_one_line(e)}") \
            from None
    if not cands:
        raise WebError(400, f"agent {spec!r} does not search (it gives no candidate moves): "
                        "use mcts:... or az:...")
    total = sum(c["visits"] for c in cands) or 1
    root = searched.get("state", state)
    tree = searched.get("tree")
    lines = tree_lines(tree) if tree is not None else {}
    pv = [str(m) for m in stats.get("pv", []) if isinstance(m, str)]
    out = []
    for i, c in enumerate(cands[:MAX_CANDIDATES]):
        info = move_info(state, c["action"])
        line = lines.get(int(c["action"]), [int(c["action"])])
        if tree is None and int(c["action"]) == int(chosen) and pv[:1] == [info["notation"]]:
            line = _parse_line(root, pv)  # the agent's own principal variation
        out.append({"notation": info["notation"], "visits": c["visits"], "value": c["value"],
                    "prior": c["prior"], "share": round(c["visits"] / total, 4),
                    "hex": info["hex"], "at": info.get("at"), "cells": info["cells"],
                    "cells_at": info.get("cells_at", []),
                    "line": line_steps(root, line) if i < MAX_LINES else []})
    return {"agent": spec, "chosen": state.action_to_string(chosen),
            "summary": str(stats.get("summary", "")), "pv": pv,
            "simulations": stats.get("simulations"), "root_value": stats.get("root_value"),
            "values": values, "candidates": out}


def _parse_line(state: GameState, notations: Sequence[str]) -> list[int]:
    """The actions of a line in notation from ``state``, up to the first one that does not
    parse or is not legal."""
    s = state.clone()
    out: list[int] = []
    for text in notations:
        try:
            a = int(s.parse_action(text))
        except (NotationError, ValueError, IndexError):
            break
        if s.is_terminal() or not np.any(s.legal_actions() == a):
            break
        out.append(a)
        s.apply(a)
    return out


def check_game_budget(spec: str, agent: Any, positions: int) -> None:
    """Refuse a whole-game analysis over its bounds: more than :data:`MAX_GAME_POSITIONS`
    positions, ``positions * sims`` over :data:`MAX_GAME_SIMS`, ``positions * time`` over
    :data:`MAX_GAME_SECONDS`.

    Raises:
        WebError: 400 naming the bound.
    """
    if positions > MAX_GAME_POSITIONS:
        raise WebError(400, f"the record has {positions} positions to analyse, more than the "
                        f"{MAX_GAME_POSITIONS} a game analysis may have")
    sims = planned_sims(agent)
    if sims is not None and sims * positions > MAX_GAME_SIMS:
        raise WebError(400, f"agent {spec!r}: {positions} positions x {sims} sims = "
                        f"{positions * sims} simulations, more than the {MAX_GAME_SIMS} of a "
                        f"game analysis: use sims<={MAX_GAME_SIMS // max(positions, 1)}")
    t = getattr(getattr(agent, "config", None), "time", None)
    if isinstance(t, (int, float)) and t * positions > MAX_GAME_SECONDS:
        raise WebError(400, f"agent {spec!r}: {positions} positions x {t:g} s is more than "
                        f"the {MAX_GAME_SECONDS:g} s of a game analysis: use "
                        f"time<={MAX_GAME_SECONDS / max(positions, 1):.3g}")


class GameAnalysis:
    """The value graph of a record (``POST /api/analysis/game``): the agent ``spec``'s search
    at every position where a seat is to move (each with the same ``seed``, so a point equals
    ``POST /api/analysis`` at that ply), one position after another.

    ``points`` grows as the positions are done: ``{"ply", "player", "values": [per seat],
    "chosen", "played", "simulations"}`` (``played``: the record's move there). :meth:`run`
    looks at ``cancel`` before each position and between the search's chunks; a position
    cut short is dropped, so ``points`` holds only whole searches.

    Raises:
        WebError: (at construction) as :func:`analyse` for the spec, 400 a record without a
            position to analyse or over :func:`check_game_budget`.
    """

    def __init__(self, positions: Sequence[tuple[GameState, Any]], players: Sequence[str],
                 spec: Any, seed: int = 0, policy: AgentPolicy | None = None) -> None:
        self.plies = [k for k, (s, _) in enumerate(positions) if s.current_player >= 0]
        if not self.plies:
            raise WebError(400, "the record has no position where a seat is to move")
        first = positions[self.plies[0]][0]
        self.spec, self.agent = analysis_agent(first, spec, seed, policy)
        check_game_budget(self.spec, self.agent, len(self.plies))
        self.positions = positions
        self.players = list(players)
        self.seed = seed
        self.num_players = _num_players(first)
        self.points: list[dict[str, Any]] = []

    @property
    def total(self) -> int:
        return len(self.plies)

    def result(self) -> dict[str, Any]:
        """``{"agent", "seed", "players", "seats", "total", "done", "points"}``."""
        return {"agent": self.spec, "seed": self.seed, "players": self.players,
                "seats": self.num_players, "total": self.total, "done": len(self.points),
                "points": list(self.points)}

    def run(self, cancel: threading.Event | None = None, on_done: Any = None) -> bool:
        """Analyse the positions not done yet; ``on_done(points done)`` after each. True when
        all are done, False when ``cancel`` stopped it.

        Raises:
            WebError: 500 the agent failed (the points before it are kept).
        """
        for k in self.plies[len(self.points):]:
            if cancel is not None and cancel.is_set():
                return False
            state, _ = self.positions[k]
            self.agent.reset(self.seed)
            try:
                found = search_position(self.agent, state, cancel)
            except Exception as e:
                raise WebError(500, f"agent {self.spec!r} failed at ply {k}: "
                                f"{type(e).__name__}: {_one_line(e)}") from None
            if found is None:
                return False
            chosen, values = found
            nxt = self.positions[k + 1][1] if k + 1 < len(self.positions) else None
            self.points.append({
                "ply": k, "player": int(state.current_player), "values": values,
                "chosen": state.action_to_string(chosen),
                "played": None if nxt is None else nxt.notation,
                "simulations": self.agent.stats().get("simulations")})
            if on_done is not None:
                on_done(len(self.points))
        return True


class AnalysisLines:
    """The candidates' lines of a finished position analysis, for the page to step through
    (``GET /api/analysis/{id}/line``): the position searched (the determinization of a
    position with hidden information, shown from the mover's view), the players' names, and
    per candidate its line as :func:`line_steps` gives it."""

    def __init__(self, state: GameState, players: Sequence[str],
                 lines: Sequence[Sequence[dict[str, Any]]]) -> None:
        self.state = state.clone()
        self.players = list(players)
        self.lines = [list(line) for line in lines] or [[]]
        self.mover = int(state.current_player)

    def view(self, cand: int, step: int) -> dict[str, Any]:
        """``{"cand", "step", "steps", "line", "last", "svg"}``: the picture of the position
        after the first ``step`` moves of candidate ``cand``'s line (``step`` 0: the position
        analysed), its last move marked."""
        line = self.lines[cand]
        s = self.state.clone()
        previous = None
        for item in line[:step]:
            previous = s.clone()
            s.apply(int(s.parse_action(item["notation"])))
        last = line[step - 1]["notation"] if step > 0 else None
        hidden = getattr(s, "has_hidden_information", lambda: False)()
        return {"cand": cand, "step": step, "steps": len(line),
                "line": [m["notation"] for m in line], "last": last,
                "svg": board_picture(s, self.players, last, previous, (),
                                     self.mover if hidden else None)}


class AnalysisJob:
    """An analysis running in a worker thread (``POST /api/analysis`` with ``background``, and
    ``POST /api/analysis/game``), polled by ``GET /api/analysis/{id}`` and cancelled by
    ``DELETE /api/analysis/{id}``.

    ``kind`` is ``position`` (``unit`` ``simulations``; ``total`` None for a time budget) or
    ``game`` (``unit`` ``positions``); ``status`` ``running``, ``done``, ``cancelled`` or
    ``failed`` (``error``, ``error_status``).
    """

    def __init__(self, kind: str, unit: str, total: int | None) -> None:
        self.id = secrets.token_hex(8)
        self.kind = kind
        self.unit = unit
        self.total = total
        self.done = 0
        self.status = "running"
        self.result: dict[str, Any] | None = None
        self.partial: Any = None  # a callable giving the result so far (the game's points)
        self.lines: AnalysisLines | None = None  # a finished position analysis's lines
        self.error: str | None = None
        self.error_status = 500
        self.cancel = CancelFlag()  # DELETE sets it; the server's shutdown interrupts it
        self.finished = threading.Event()
        self.lock = threading.Lock()

    def progress(self, done: int) -> None:
        with self.lock:
            self.done = done

    def view(self) -> dict[str, Any]:
        """``{"id", "kind", "status", "unit", "done", "total", "cancel_requested", "result",
        "error", "compiling"}`` (``result``: the finished analysis; for a game also the points
        so far; ``compiling``: ``{"kernel", "seconds"}`` while the server compiles the engine's
        kernels, on a first search, else None)."""
        from taluva_ai.games.compiling import compiling_now

        busy = compiling_now()
        with self.lock:
            result = self.result
            if result is None and self.partial is not None:
                result = self.partial()
            return {"id": self.id, "kind": self.kind, "status": self.status, "unit": self.unit,
                    "done": self.done, "total": self.total,
                    "cancel_requested": self.cancel.is_set(), "result": result,
                    "error": self.error,
                    "compiling": None if busy is None or self.status != "running" else
                    {"kernel": busy[0], "seconds": round(busy[1], 1)}}

    def start(self, work: Any, release: Any = None) -> None:
        """Run ``work(job) -> (result, finished: bool)`` in a daemon thread; ``release()``
        after it, whatever happens."""

        def main() -> None:
            try:
                result, whole = work(self)
                with self.lock:
                    self.result = result
                    self.status = "done" if whole else "cancelled"
            except WebError as e:
                with self.lock:
                    self.status, self.error, self.error_status = "failed", e.message, e.status
            except Exception as e:  # reported on the page, never a traceback
                with self.lock:
                    self.status = "failed"
                    self.error = f"internal error: {type(e).__name__}: {_one_line(e)}"
            finally:
                with self.lock:
                    self.partial = None
                self.finished.set()
                if release is not None:
                    release()

        threading.Thread(target=main, name=f"analysis-{self.id}", daemon=True).start()


class AnalysisJobs:
    """The analysis jobs by id; past ``limit`` the oldest finished ones are dropped."""

    def __init__(self, limit: int = MAX_JOBS) -> None:
        self.limit = limit
        self._jobs: OrderedDict[str, AnalysisJob] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, job: AnalysisJob) -> None:
        with self._lock:
            self._jobs[job.id] = job
            for old in [j for j in self._jobs.values() if j.finished.is_set()]:
                if len(self._jobs) <= self.limit:
                    break
                del self._jobs[old.id]

    def interrupt_all(self) -> None:
        """Interrupt every running job (the server is stopping)."""
        with self._lock:
            running = [j for j in self._jobs.values() if not j.finished.is_set()]
        for job in running:
            job.cancel.interrupt()

    def get(self, job_id: str) -> AnalysisJob:
        """The job ``job_id``.

        Raises:
            WebError: 404 no such job (never started, or dropped).
        """
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise WebError(404, f"no analysis {job_id!r} (analyses live in the server's memory)")
        return job
