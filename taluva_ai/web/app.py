"""The Starlette app of ``taluva serve`` (docs/web.md): a replay view of the game records under
the directories named at start.

Routes:

- ``GET /``: the page (``static/index.html``; its script and style under ``/static/``).
- ``GET /api/records``: ``{"dirs": [...], "records": [{"path", "dir", "name", "game",
  "players", "result"}...]}``, every game record under the served directories (a ``*.jsonl``
  file whose first line is a record's header; ``path`` is ``"<dir index>/<relative path>"``,
  the name the other routes take).
- ``GET /api/record?path=P``: the record replayed and checked
  (:func:`taluva_ai.records.replay_record`): ``{"path", "game", "players", "positions",
  "moves": [{"ply", "player", "notation"}...], "result"}``.
- ``GET /api/board?path=P&ply=K``: the position after ``K`` actions as SVG
  (:func:`taluva_ai.pictures.position_svg`: the game's own SVG picture, what the last action
  changed marked).
- ``GET /api/position?path=P&ply=K``: the same picture in JSON with what the page writes
  beside it (``{"ply", "last", "notes", "svg"}``; ``notes``:
  :func:`taluva_ai.web.play.position_notes`, a solo game's running score).

- ``GET /api/games/{id}/position?ply=K``: a game in play as it was after ``K`` actions
  (:meth:`taluva_ai.web.play.GameSession.position_view`), for the page's address.

- ``POST /api/analysis``: an agent's search of one position (``{"agent", "path", "ply"}`` or
  ``{"agent", "game_id"}``; :func:`taluva_ai.web.play.analyse`); with ``"background": true``
  it answers 202 and a job at once (below).
- ``POST /api/analysis/game``: the value graph of a record (``{"agent", "path", "seed"}``;
  :class:`taluva_ai.web.play.GameAnalysis`), answered 202 with a job.
- ``GET /api/analysis/{id}``: a job's progress (``done`` of ``total`` simulations or
  positions), status and result (:meth:`taluva_ai.web.play.AnalysisJob.view`); a failed job
  answers its error. ``DELETE /api/analysis/{id}`` cancels it: the search stops at its next
  chunk of simulations (or position), and the job's status turns ``cancelled``.
- ``GET /api/analysis/{id}/line?cand=K&step=J``: the position after the first ``J`` moves
  of candidate ``K``'s line, of a finished position analysis
  (:class:`taluva_ai.web.play.AnalysisLines`).

Security (docs/web.md, Security): :class:`~taluva_ai.web.guard.Guard` refuses a request to
another ``Host`` (DNS rebinding), a state-changing request that is not ``application/json`` or
comes from another ``Origin``, and a declared body over :data:`MAX_BODY_BYTES`; a body sent in
chunks is refused as it streams past the limit (:func:`_json_body`). Agent specs are checked by
:func:`taluva_ai.web.play.check_spec` (registered agents, ``module:Class`` only from the modules
given to :func:`create_app`, every costly parameter bounded). An agent's move and a same-request
analysis run in a daemon thread, interrupted when the client leaves or the server stops
(:mod:`taluva_ai.web.cancel`). Pictures are served with ``Content-Security-Policy: sandbox``;
a save never goes through a symbolic link (:func:`save_folder`).

Every error is a JSON object ``{"error": "<one line>"}``: 400 a bad query, 403 a path outside
the served directories (``..``, an absolute path, a symbolic link that leads out), a refused
spec, host or origin, 404 an unknown record or route, 409 a game busy or in the wrong state,
413 a body too large, 415 a state-changing request that is not JSON, 422 a malformed record
(the line and field, as ``taluva replay`` says it), 429 too many searches at once, 503 a move
cancelled, 500 anything else (the exception's type and first line, never a traceback).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from taluva_ai.errors import RecordError
from taluva_ai.protocol import CHANCE
from taluva_ai.records import read_header, read_result, replay_record
from taluva_ai.web.cancel import CancelFlag, Cancelled
from taluva_ai.web.guard import Guard, HostRule
from taluva_ai.web.play import WebError, _one_line

STATIC = Path(__file__).parent / "static"
#: Records larger than this are refused (bytes).
MAX_RECORD_BYTES = 50 * 1024 * 1024
#: At most this many records are listed.
MAX_LISTED = 5000
#: Replayed records kept in memory.
CACHE_SIZE = 8
#: The table file of a tournament run directory (``taluva tournament --out DIR``).
RUN_TABLE = "results.json"
#: The pictures a run page shows (files a tournament writes), by suffix.
PICTURE_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}
#: The folder (under the first served directory unless the page names another) where games
#: played in the page are saved.
SAVE_DIR = "web-games"
#: Analyses that may run at once (each a search in a worker thread).
MAX_ANALYSES = 2
#: The largest request body accepted (bytes); a longer one is refused while it streams in.
MAX_BODY_BYTES = 64 * 1024
#: Agents' moves that may run at once (each a search in a worker thread).
MAX_MOVES = 4
#: How often (seconds) a request whose search runs looks whether its client left.
DISCONNECT_POLL = 0.25
#: The headers of a picture (a run's ``*.svg``/``*.png``, a board): an SVG opened on its
#: own address runs no script and reaches nothing of the board's origin.
PICTURE_HEADERS = {"Content-Security-Policy": "sandbox", "X-Content-Type-Options": "nosniff"}


@dataclass
class Replayed:
    """A record replayed once: its header and a copy of every position with the action that
    led to it (None for the initial one)."""

    header: Any
    positions: list[tuple[Any, Any]]
    result: str


class RecordStore:
    """The served directories: lists, resolves and replays their records (module docstring).

    Args:
        dirs: the directories; each must exist.

    Raises:
        ValueError: a directory that does not exist or is not a directory.
    """

    def __init__(self, dirs: Sequence[str | Path]) -> None:
        self.roots: list[Path] = []
        for d in dirs:
            p = Path(d)
            if not p.is_dir():
                raise ValueError(f"{d}: not a directory")
            self.roots.append(p.resolve())
        self._cache: OrderedDict[tuple[str, int, int], Replayed] = OrderedDict()
        self._lock = threading.Lock()
        # what the listing says of each file, by (path, mtime, size): None for a file that is
        # not a game record
        self._about: dict[tuple[str, int, int], dict[str, Any] | None] = {}

    def listing(self) -> list[dict[str, Any]]:
        """The game records under the roots that resolve inside them, sorted: the ``*.jsonl``
        files whose first line is a record's header (not a tournament's ``results.jsonl`` or
        ``deals.jsonl``), each with its game, players and result (:meth:`about`)."""
        out: list[dict[str, Any]] = []
        for i, root in enumerate(self.roots):
            for f in sorted(root.rglob("*.jsonl")):
                if len(out) >= MAX_LISTED:
                    return out
                try:
                    real = f.resolve()
                except OSError:
                    continue
                if not real.is_relative_to(root) or not real.is_file():
                    continue  # a link that leads out of the directory
                about = self.about(real)
                if about is None:
                    continue  # not a game record
                rel = f.relative_to(root).as_posix()
                out.append({"path": f"{i}/{rel}", "dir": str(root), "name": rel, **about})
        return out

    def about(self, path: Path) -> dict[str, Any] | None:
        """``{"game", "players", "result"}`` of a game record read from its first and last
        lines (nothing replayed; ``result`` "no result" for a game without a result line, "?"
        for a record too large to read here), or None when the file's first line is no record
        header. A header that is one but malformed is listed (``game`` "?"): opening it says
        what is wrong. Kept by the file's modification time and size."""
        try:
            st = path.stat()
        except OSError:
            return None
        key = (str(path), st.st_mtime_ns, st.st_size)
        with self._lock:
            if key in self._about:
                return self._about[key]
        found = _about_record(path, st.st_size)
        with self._lock:
            if len(self._about) > 4 * MAX_LISTED:
                self._about.clear()
            self._about[key] = found
        return found

    def resolve(self, ref: str | None) -> Path:
        """The file of a listing's ``path``, checked to lie under its root.

        Raises:
            WebError: 400 no or a malformed path, 403 one that leaves the root, 404 no such
                record.
        """
        return self.resolve_path(ref, (".jsonl",), "record")

    def resolve_path(self, ref: str | None, suffixes: Sequence[str] | None, what: str) -> Path:
        """The file (``suffixes``: the endings allowed) or directory (``suffixes`` None) that
        ``ref`` (``"<dir index>/<relative path>"``) names, checked to lie under its root.

        Raises:
            WebError: 400 no or a malformed path, 403 one that leaves the root or a file of
                another kind, 404 nothing there.
        """
        if not ref:
            raise WebError(400, "missing path (a path from /api/records: the query parameter "
                           "'path', or the field 'path' of an analysis)")
        if not isinstance(ref, str):
            raise WebError(400, f"path must be a string '<dir index>/<file>', got {ref!r}")
        head, _, rest = ref.partition("/")
        if not (head.isascii() and head.isdigit()) or (not rest and suffixes is not None):
            raise WebError(400, f"path must be '<dir index>/<file>', got {ref!r}")
        i = int(head)
        if i >= len(self.roots):
            raise WebError(404, f"no served directory number {i} (0..{len(self.roots) - 1})")
        root = self.roots[i]
        rel = PurePosixPath(rest or ".")
        if rel.is_absolute() or "\\" in rest or "\x00" in rest or ".." in rel.parts:
            raise WebError(403, f"refused path {ref!r}: only files under the served "
                           "directories are read (no '..', no absolute paths)")
        try:
            real = (root / rel).resolve()
        except (OSError, RuntimeError) as e:
            raise WebError(404, f"no {what} {ref!r}: {_one_line(str(e))}") from None
        if not real.is_relative_to(root):
            raise WebError(403, f"refused path {ref!r}: it leads outside the served "
                           "directories")
        if suffixes is None:
            if not real.is_dir():
                raise WebError(404, f"no {what} {ref!r}")
            return real
        if real.suffix.lower() not in suffixes:
            kinds = {".jsonl": "game records (.jsonl)"}
            allowed = ", ".join(kinds.get(x, x) for x in suffixes)
            raise WebError(403, f"refused path {ref!r}: only {allowed} are read"
                           if suffixes == (".jsonl",) else
                           f"refused path {ref!r}: only {allowed} files are served here")
        if not real.is_file():
            raise WebError(404, f"no {what} {ref!r}")
        return real

    def ref_of(self, path: Path) -> str | None:
        """The listing's name of a file under a root (None if under none)."""
        real = path.resolve()
        for i, root in enumerate(self.roots):
            if real.is_relative_to(root):
                rel = real.relative_to(root).as_posix()
                return f"{i}/{rel}" if rel != "." else f"{i}/"
        return None

    def runs(self) -> list[dict[str, str]]:
        """The tournament run directories under the roots (a ``results.json`` beside a
        ``games/`` folder), sorted."""
        out: list[dict[str, str]] = []
        for i, root in enumerate(self.roots):
            for f in sorted(root.rglob(RUN_TABLE)):
                if len(out) >= MAX_LISTED:
                    return out
                d = f.parent
                try:
                    real = d.resolve()
                except OSError:
                    continue
                if not real.is_relative_to(root) or not (d / "games").is_dir():
                    continue
                rel = d.relative_to(root).as_posix()
                out.append({"path": f"{i}/{rel}" if rel != "." else f"{i}/",
                            "dir": str(root), "name": rel if rel != "." else "(top)"})
        return out

    def replayed(self, ref: str | None) -> tuple[str, Replayed]:
        """Replay (or take from the cache) the record ``ref``.

        Raises:
            WebError: as :meth:`resolve`; 422 a malformed or too large record.
        """
        path = self.resolve(ref)
        assert ref is not None
        try:
            st = path.stat()
        except OSError as e:
            raise WebError(404, f"{ref}: cannot read the record: {e.strerror or e}") from None
        if st.st_size > MAX_RECORD_BYTES:
            raise WebError(422, f"{ref}: {st.st_size} bytes, more than the "
                           f"{MAX_RECORD_BYTES} a record may have here")
        key = (str(path), st.st_mtime_ns, st.st_size)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return ref, self._cache[key]
        positions: list[tuple[Any, Any]] = []

        def keep(state: Any, event: Any) -> None:
            positions.append((state.clone(), event))

        try:
            header = read_header(path)
            final = replay_record(path, keep)
            outcome = read_result(path)
        except RecordError as e:
            raise WebError(422, f"{ref}: line {e.line}: field {e.field!r}: "
                           f"{_one_line(e.reason)}") from None
        except OSError as e:
            raise WebError(404, f"{ref}: cannot read the record: {e.strerror or e}") from None
        result = _result_line(final, header.players, outcome)
        rep = Replayed(header, positions, result)
        with self._lock:
            self._cache[key] = rep
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return ref, rep


def _about_record(path: Path, size: int) -> dict[str, Any] | None:
    """:meth:`RecordStore.about` of one file, read now."""
    try:
        header = read_header(path)
    except OSError:
        return None
    except RecordError:
        try:
            with path.open("rb") as f:
                first = json.loads(f.readline(MAX_BODY_BYTES))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if not isinstance(first, dict) or first.get("type") != "header":
            return None
        return {"game": "?", "players": [], "result": "malformed header"}
    players = [str(p) for p in header.players]
    return {"game": header.game, "players": players,
            "result": _result_line(None, players, _tail_result(path, size))}


#: The bytes read from a record's end for the listing's result (a result line is ~150).
TAIL_BYTES = 4096


def _tail_result(path: Path, size: int) -> Any:
    """The outcome a record's last line states (``winners``, ``end_reason``, ``plies``), read
    from its last :data:`TAIL_BYTES` bytes alone (a listing of many long records reads
    little); None when that line is no well-formed result line. Opening the record checks
    it whole."""
    from types import SimpleNamespace

    try:
        with path.open("rb") as f:
            f.seek(max(0, size - TAIL_BYTES))
            tail = f.read(TAIL_BYTES)
        lines = [line for line in tail.splitlines() if line.strip()]
        obj = json.loads(lines[-1]) if lines else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict) or obj.get("type") != "result":
        return None
    winners, reason, plies = obj.get("winners"), obj.get("end_reason"), obj.get("plies")
    if not isinstance(winners, list) or not all(isinstance(w, int) and not isinstance(w, bool)
                                                for w in winners) \
            or not isinstance(reason, str) or not isinstance(plies, int):
        return None
    return SimpleNamespace(winners=winners, end_reason=reason, plies=plies)


def _result_line(state: Any, players: Sequence[str], outcome: Any) -> str:
    if outcome is None:
        return "no result"
    won = ", ".join(f"seat {w} ({players[w]})" for w in outcome.winners if w < len(players))
    return f"{outcome.end_reason} after {outcome.plies} plies; winners: {won or 'none'}"


def board_svg(rep: Replayed, ply: int) -> str:
    """The SVG of position ``ply`` of a replayed record (module docstring)."""
    from taluva_ai.pictures import position_svg

    state, event = rep.positions[ply]
    last = None if event is None else event.notation
    previous = rep.positions[ply - 1][0] if ply > 0 else None
    return position_svg(state, rep.header.players, last, previous)


async def _json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object body, read chunk by chunk: one past :data:`MAX_BODY_BYTES`
    is refused as soon as it gets there (the rest is never read).

    Raises:
        WebError: 400 a body that is not a JSON object or a client that left in the middle
            of it; 413 a body over the limit.
    """
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise WebError(413, f"request body over {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        raise WebError(400, "the client closed the connection in the middle of its request "
                       "body") from None
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise WebError(400, f"the request body is not JSON: {_one_line(str(e))}") from None
    except RecursionError:
        raise WebError(400, "the request body is nested too deeply") from None
    if not isinstance(body, dict):
        raise WebError(400, f"the request body must be a JSON object, got "
                       f"{type(body).__name__}")
    return body


def _ply(text: Any, last: int) -> int:
    """``text`` (a query parameter or a JSON field) as a ply ``0..last``.

    Raises:
        WebError: 400 anything but ASCII digits (at most 9) naming a ply in range."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    text = "0" if text is None else text
    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{1,9}", text) or int(text) > last:
        raise WebError(400, f"ply must be an integer 0..{last}, got {text!r}")
    return int(text)


def _seed(body: dict[str, Any]) -> int:
    seed = body.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise WebError(400, f"seed must be an integer 0..2**63-1, got {seed!r}")
    return seed


def save_folder(root: Path) -> Path:
    """The folder of saved games under the served directory ``root`` (:data:`SAVE_DIR`),
    made when missing: a real folder inside ``root``, never a symbolic link (a save never
    writes outside the served directories).

    Raises:
        WebError: 403 the folder is a symbolic link or leads outside ``root``; 500 it cannot
            be made (or is a file).
    """
    folder = root / SAVE_DIR

    def check() -> None:
        if folder.is_symlink() or (folder.exists()
                                   and not folder.resolve().is_relative_to(root)):
            raise WebError(403, f"refused to save: {folder} is a symbolic link; games are "
                           f"saved only into a real {SAVE_DIR} folder inside the served "
                           "directory (remove the link)")

    check()
    try:
        folder.mkdir(exist_ok=True)
    except OSError as e:
        raise WebError(500, f"cannot make {folder}: {e.strerror or e}") from None
    check()
    return folder


def run_view(store: RecordStore, ref: str | None) -> dict[str, Any]:
    """The JSON of ``GET /api/run?path=P``: a tournament run directory's table (``results.json``
    as :func:`taluva_ai.cli.format_table` writes it, and the ratings as rows), its pictures,
    its summary and its games (each a record path for the replay view, with its line of
    ``results.jsonl`` when there is one).

    Raises:
        WebError: as :meth:`RecordStore.resolve_path`; 404 no ``results.json`` there; 422 one
            that cannot be read.
    """
    from taluva_ai.reports import format_table, ranked_agents

    d = store.resolve_path(ref, None, "run directory")
    table_path = d / RUN_TABLE
    if not table_path.is_file() or not table_path.resolve().is_relative_to(d):
        raise WebError(404, f"{ref}: not a tournament run directory (no {RUN_TABLE})")
    try:
        table = json.loads(table_path.read_text(encoding="utf-8"))
        text = format_table(table)
        ratings = [{"agent": name, "elo": a.get("elo"), "elo_ci95": a.get("elo_ci95"),
                    "score": a.get("score"), "games": a.get("games")}
                   for name, a in ranked_agents(table)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise WebError(422, f"{ref}/{RUN_TABLE}: cannot be read: {type(e).__name__}: "
                       f"{_one_line(str(e))}") from None
    entries: dict[str, dict[str, Any]] = {}
    log = d / "results.jsonl"
    if log.is_file() and log.resolve().is_relative_to(d):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
                entries[str(entry["id"])] = entry
            except (ValueError, KeyError, TypeError):
                continue
    games = []
    for f in sorted((d / "games").glob("*.jsonl")):
        ref_f = store.ref_of(f)
        if ref_f is None or not f.resolve().is_relative_to(d):
            continue
        got = entries.get(f.stem, {})
        games.append({"path": ref_f, "id": f.stem, "seats": got.get("seats"),
                      "winners": got.get("winners"), "end_reason": got.get("end_reason"),
                      "plies": got.get("plies")})
    pictures = []
    for name in sorted(os.listdir(d)):
        p = d / name
        if p.suffix.lower() in PICTURE_TYPES and p.is_file() \
                and p.resolve().is_relative_to(d):
            pictures.append(store.ref_of(p))
    summary = d / "summary.md"
    cfg = table.get("config", {}) if isinstance(table.get("config"), dict) else {}
    return {"path": ref, "name": str(d), "game": cfg.get("game"), "agents": cfg.get("agents"),
            "table_text": text, "ratings": ratings, "pictures": pictures,
            "summary": summary.read_text(encoding="utf-8", errors="replace")
            if summary.is_file() and summary.resolve().is_relative_to(d) else None,
            "games": games}


def create_app(dirs: Sequence[str | Path], *, hosts: Sequence[str] | None = None,
               agent_modules: Sequence[str] = ()) -> Starlette:
    """The app serving the records under ``dirs`` (module docstring).

    Args:
        hosts: the ``Host`` header values answered (:class:`~taluva_ai.web.guard.HostRule`:
            ``NAME:PORT``, ``NAME`` on any port, ``*:PORT`` any IP address); None:
            ``127.0.0.1``, ``localhost`` and ``[::1]`` on any port.
        agent_modules: the Python modules whose classes may play or analyse as
            ``module:Class`` specs (``taluva serve --allow-agent-module``); none by default:
            only the registered agents (:class:`~taluva_ai.web.play.AgentPolicy`).

    Raises:
        ValueError: a directory that does not exist, or a malformed module name.
    """
    from taluva_ai.web.play import (
        CHECKPOINT_SUFFIXES,
        AgentPolicy,
        AnalysisJob,
        AnalysisJobs,
        AnalysisLines,
        GameAnalysis,
        GameSession,
        Sessions,
        analyse,
        analyse_with,
        analysis_agent,
        move_help,
        planned_sims,
        position_notes,
        seat_colours,
    )

    for m in agent_modules:
        if not m or not all(part.isidentifier() for part in m.split(".")):
            raise ValueError(f"agent module {m!r} is not a dotted module name (package.module)")
    store = RecordStore(dirs)
    sessions = Sessions()
    analyses = threading.BoundedSemaphore(MAX_ANALYSES)
    moves = threading.BoundedSemaphore(MAX_MOVES)
    jobs = AnalysisJobs()
    running: set[CancelFlag] = set()  # the searches of requests in flight

    def checkpoint(ref: str) -> Path:
        return store.resolve_path(ref, CHECKPOINT_SUFFIXES, "checkpoint")

    policy = AgentPolicy(tuple(agent_modules), checkpoint)

    async def watched(request: Request, work: Any, cancel: CancelFlag,
                      release: Any = None) -> Any:
        """``work()`` in a daemon thread (never the server's thread pool, so that a stopping
        server does not wait for it); ``cancel`` interrupted when the client leaves or the
        request is cancelled (the server stopping); ``release()`` when the thread ends."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def deliver(ok: bool, value: Any) -> None:
            if done.done():
                return
            if ok:
                done.set_result(value)
            else:
                done.set_exception(value)

        def main() -> None:
            try:
                value, ok = work(), True
            except Cancelled:
                value, ok = WebError(503, "cancelled (the client left or the server is "
                                     "stopping)"), False
            except BaseException as e:  # handed to the request, answered there
                value, ok = e, False
            finally:
                if release is not None:
                    release()
            with contextlib.suppress(RuntimeError):  # a closed loop: the server stopped
                loop.call_soon_threadsafe(deliver, ok, value)

        running.add(cancel)
        try:
            try:
                threading.Thread(target=main, name="board-search", daemon=True).start()
            except RuntimeError:  # no thread to be had
                if release is not None:
                    release()
                raise WebError(503, "the server cannot start a search now: try again") \
                    from None
            while not done.done():
                await asyncio.wait({done}, timeout=DISCONNECT_POLL)
                if not done.done() and not cancel.is_set() and \
                        await request.is_disconnected():
                    cancel.interrupt()  # the client left: stop its search
            return done.result()
        except asyncio.CancelledError:
            cancel.interrupt()
            raise
        finally:
            running.discard(cancel)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for flag in list(running):  # the server is stopping: stop every search
            flag.interrupt()
        jobs.interrupt_all()

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    def records(request: Request) -> Response:
        return JSONResponse({"dirs": [str(r) for r in store.roots],
                             "records": store.listing()})

    def record(request: Request) -> Response:
        ref, rep = store.replayed(request.query_params.get("path"))
        moves = [{"ply": ev.ply, "player": "chance" if ev.player == CHANCE else ev.player,
                  "notation": ev.notation, "help": move_help(ev.notation)}
                 for _, ev in rep.positions[1:]]
        return JSONResponse({"path": ref, "game": rep.header.game,
                             "players": list(rep.header.players),
                             "seat_colours": seat_colours(rep.header.game,
                                                          len(rep.header.players)),
                             "positions": len(rep.positions), "moves": moves,
                             "result": rep.result})

    def board(request: Request) -> Response:
        _, rep = store.replayed(request.query_params.get("path"))
        ply = _ply(request.query_params.get("ply", "0"), len(rep.positions) - 1)
        svg = board_svg(rep, ply)
        return Response(svg, media_type="image/svg+xml",
                        headers={"Cache-Control": "no-store", **PICTURE_HEADERS})

    def position(request: Request) -> Response:
        _, rep = store.replayed(request.query_params.get("path"))
        ply = _ply(request.query_params.get("ply", "0"), len(rep.positions) - 1)
        state, event = rep.positions[ply]
        return JSONResponse({"ply": ply, "last": None if event is None else event.notation,
                             "notes": position_notes(state), "svg": board_svg(rep, ply)},
                            headers={"Cache-Control": "no-store"})

    async def new_game(request: Request) -> Response:
        body = await _json_body(request)
        unknown = sorted(set(body) - {"game", "seats", "rules", "seed"})
        if unknown:
            raise WebError(400, f"unknown field(s) {', '.join(unknown)}; a new game takes "
                           "game, seats, rules, seed")

        def make() -> GameSession:
            return GameSession(str(body.get("game", "taluva")), body.get("seats"),
                               body.get("rules"), body.get("seed"), policy=policy)

        session = await run_in_threadpool(make)
        sessions.add(session)
        return await run_in_threadpool(_view, session)

    def _view(session: GameSession) -> Response:
        with session.locked():
            return JSONResponse(session.view())

    def game_state(request: Request) -> Response:
        return _view(sessions.get(request.path_params["gid"]))

    def game_position(request: Request) -> Response:
        session = sessions.get(request.path_params["gid"])
        with session.locked():
            ply = _ply(request.query_params.get("ply"), len(session.positions) - 1)
            return JSONResponse(session.position_view(ply))

    async def game_move(request: Request) -> Response:
        session = sessions.get(request.path_params["gid"])
        body = await _json_body(request)

        def move() -> Response:
            with session.locked():
                session.play(body.get("move"))
                return JSONResponse(session.view())

        return await run_in_threadpool(move)

    async def game_agent(request: Request) -> Response:
        session = sessions.get(request.path_params["gid"])
        body = await _json_body(request)
        if body:
            raise WebError(400, f"unknown field(s) {', '.join(sorted(body))}; an agent's move "
                           "takes none")
        if not moves.acquire(blocking=False):
            raise WebError(429, f"{MAX_MOVES} agents are moving already: wait for one of "
                           "their moves")
        cancel = CancelFlag()

        def move() -> dict[str, Any]:
            with session.locked():
                session.agent_move(cancel)
                return session.view()

        return JSONResponse(await watched(request, move, cancel, moves.release))

    async def game_save(request: Request) -> Response:
        session = sessions.get(request.path_params["gid"])
        body = await _json_body(request)
        unknown = sorted(set(body) - {"dir"})
        if unknown:
            raise WebError(400, f"unknown field(s) {', '.join(unknown)}; a save takes dir")
        i = body.get("dir", 0)
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(store.roots):
            raise WebError(400, f"dir must be a served directory number 0.."
                           f"{len(store.roots) - 1}, got {i!r}")

        def save() -> Response:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            path = save_folder(store.roots[i]) / f"{stamp}-{session.id}.jsonl"
            with session.locked():
                try:
                    session.write_record(path)
                except OSError as e:
                    raise WebError(500, f"cannot write {path}: {e.strerror or e}") from None
            return JSONResponse({"path": store.ref_of(path), "file": str(path)})

        return await run_in_threadpool(save)

    def game_record(request: Request) -> Response:
        session = sessions.get(request.path_params["gid"])
        import tempfile

        with session.locked(), tempfile.TemporaryDirectory() as tmp:
            try:
                text = session.record_text(Path(tmp))
            except OSError as e:
                raise WebError(500, f"cannot write the record: {e.strerror or e}") from None
        name = f"{session.game.name}-{session.id}.jsonl"
        return Response(text, media_type="application/x-ndjson", headers={
            "Content-Disposition": f'attachment; filename="{name}"'})

    def _slot() -> None:
        if not analyses.acquire(blocking=False):
            raise WebError(429, f"{MAX_ANALYSES} analyses are running already: wait for "
                           "one to end or cancel it")

    async def analysis(request: Request) -> Response:
        body = await _json_body(request)
        unknown = sorted(set(body) - {"agent", "path", "ply", "game_id", "seed", "background"})
        if unknown:
            raise WebError(400, f"unknown field(s) {', '.join(unknown)}; an analysis takes "
                           "agent, and path and ply (a record) or game_id (a game in play), "
                           "seed, background")
        if body.get("game_id") is not None and body.get("path") is not None:
            raise WebError(400, "give either path and ply (a record) or game_id (a game in "
                           "play), not both")
        seed = _seed(body)
        background = body.get("background", False)
        if not isinstance(background, bool):
            raise WebError(400, f"background must be true or false, got {background!r}")

        def position() -> tuple[Any, list[str]]:
            if body.get("game_id") is not None:
                session = sessions.get(str(body["game_id"]))
                return session.analysis_position(), list(session.seats)
            _, rep = store.replayed(body.get("path"))
            ply = _ply(body.get("ply"), len(rep.positions) - 1)
            return rep.positions[ply][0].clone(), list(rep.header.players)

        cancel = CancelFlag()

        def run() -> dict[str, Any] | None:
            state, _ = position()
            _slot()
            try:
                return analyse(state, body.get("agent"), seed, cancel, policy=policy)
            finally:
                analyses.release()

        if not background:
            return JSONResponse(await watched(request, run, cancel))

        def start() -> Response:
            state, players = position()
            if state.current_player < 0:
                raise WebError(400, "nobody is to move in this position (a chance draw or the "
                               "end): analyse a position where a seat is to move")
            spec, agent = analysis_agent(state, body.get("agent"), seed, policy)
            _slot()
            job = AnalysisJob("position", "simulations", planned_sims(agent))

            def work(j: AnalysisJob) -> tuple[Any, bool]:
                searched: dict[str, Any] = {}
                res = analyse_with(agent, spec, state, j.cancel, j.progress, searched)
                if res is not None:
                    j.progress(int(res.get("simulations") or j.done))
                    j.lines = AnalysisLines(searched.get("state", state), players,
                                            [c["line"] for c in res["candidates"]])
                return res, res is not None

            jobs.add(job)
            job.start(work, analyses.release)
            return JSONResponse(job.view(), status_code=202)

        return await run_in_threadpool(start)

    async def game_analysis(request: Request) -> Response:
        body = await _json_body(request)
        unknown = sorted(set(body) - {"agent", "path", "seed"})
        if unknown:
            raise WebError(400, f"unknown field(s) {', '.join(unknown)}; a game analysis takes "
                           "agent, path (a record), seed")
        seed = _seed(body)

        def start() -> Response:
            _, rep = store.replayed(body.get("path"))
            graph = GameAnalysis(rep.positions, rep.header.players, body.get("agent"), seed,
                                 policy)
            _slot()
            job = AnalysisJob("game", "positions", graph.total)
            job.partial = graph.result

            def work(j: AnalysisJob) -> tuple[Any, bool]:
                whole = graph.run(j.cancel, j.progress)
                return graph.result(), whole

            jobs.add(job)
            job.start(work, analyses.release)
            return JSONResponse(job.view(), status_code=202)

        return await run_in_threadpool(start)

    def analysis_line(request: Request) -> Response:
        job = jobs.get(request.path_params["aid"])
        if job.lines is None:
            raise WebError(409, "this analysis has no lines to show (it is not a finished "
                           "analysis of a position)")
        cand = _ply(request.query_params.get("cand", "0"), len(job.lines.lines) - 1)
        step = _ply(request.query_params.get("step", "0"), len(job.lines.lines[cand]))
        return JSONResponse(job.lines.view(cand, step))

    async def analysis_job(request: Request) -> Response:
        job = jobs.get(request.path_params["aid"])
        if request.method == "DELETE":
            job.cancel.set()
            return JSONResponse(job.view())
        v = job.view()
        if v["status"] == "failed":
            raise WebError(job.error_status, str(v["error"]))
        return JSONResponse(v)

    def runs(request: Request) -> Response:
        return JSONResponse({"runs": store.runs()})

    def run(request: Request) -> Response:
        return JSONResponse(run_view(store, request.query_params.get("path")))

    def picture(request: Request) -> Response:
        path = store.resolve_path(request.query_params.get("path"), tuple(PICTURE_TYPES),
                                  "picture")
        return FileResponse(path, media_type=PICTURE_TYPES[path.suffix.lower()],
                            headers=PICTURE_HEADERS)

    async def web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = "not found" if exc.status_code == 404 else _one_line(str(exc.detail))
        return JSONResponse({"error": f"{message}: {request.url.path}"},
                            status_code=exc.status_code)

    async def client_gone(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "the client closed the connection in the middle of its "
                             "request"}, status_code=400)

    async def internal_error(request: Request, exc: Exception) -> Response:
        first = _one_line(str(exc).splitlines()[0] if str(exc) else "")
        return JSONResponse({"error": f"internal error: {type(exc).__name__}: {first}"},
                            status_code=500)

    routes = [
        Route("/", index),
        Route("/api/records", records),
        Route("/api/record", record),
        Route("/api/board", board),
        Route("/api/position", position),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{gid}", game_state),
        Route("/api/games/{gid}/position", game_position),
        Route("/api/games/{gid}/move", game_move, methods=["POST"]),
        Route("/api/games/{gid}/agent", game_agent, methods=["POST"]),
        Route("/api/games/{gid}/save", game_save, methods=["POST"]),
        Route("/api/games/{gid}/record", game_record),
        Route("/api/analysis", analysis, methods=["POST"]),
        Route("/api/analysis/game", game_analysis, methods=["POST"]),
        Route("/api/analysis/{aid}", analysis_job, methods=["GET", "DELETE"]),
        Route("/api/analysis/{aid}/line", analysis_line),
        Route("/api/runs", runs),
        Route("/api/run", run),
        Route("/api/picture", picture),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers={
        WebError: web_error, HTTPException: http_error, ClientDisconnect: client_gone,
        Exception: internal_error},
        middleware=[Middleware(Guard, hosts=HostRule(hosts), max_body=MAX_BODY_BYTES)])
