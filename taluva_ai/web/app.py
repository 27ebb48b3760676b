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

- ``GET /api/compiling?agent=SPEC``: ``{"compiling": null}``, or while the server compiles
  the engine's kernels (an agent's first move on a fresh install) ``{"compiling": {"kernel",
  "seconds", "about_s"}}`` (:func:`taluva_ai.web.play.compiling_view`; ``about_s``: about how
  long the first move of the agent ``SPEC`` compiles), which the Play view polls while an
  agent moves.

- ``POST /api/analysis``: an agent's search of one position (``{"agent", "path", "ply"}`` or
  ``{"agent", "game_id"}``; :func:`taluva_ai.web.analysis.analyse`); with ``"background": true``
  it answers 202 and a job at once (below).
- ``POST /api/analysis/game``: the value graph of a record (``{"agent", "path", "seed"}``;
  :class:`taluva_ai.web.analysis.GameAnalysis`), answered 202 with a job.
- ``GET /api/analysis/{id}``: a job's progress (``done`` of ``total`` simulations or
  positions), status and result (:meth:`taluva_ai.web.analysis.AnalysisJob.view`); a failed job
  answers its error. ``DELETE /api/analysis/{id}`` cancels it: the search stops at its next
  chunk of simulations (or position), and the job's status turns ``cancelled``.
- ``GET /api/analysis/{id}/line?cand=K&step=J``: the position after the first ``J`` moves
  of candidate ``K``'s line, of a finished position analysis
  (:class:`taluva_ai.web.analysis.AnalysisLines`).

Security (docs/web.md, Security): :class:`~taluva_ai.web.guard.Guard` refuses a request to
another ``Host`` (DNS rebinding), a state-changing request that is not ``application/json`` or
comes from another ``Origin``, and a declared body over :data:`MAX_BODY_BYTES`; a body sent in
chunks is refused as it streams past the limit (:func:`_json_body`). Agent specs are checked by
:func:`taluva_ai.web.specs.check_spec` (registered agents, ``module:Class`` only from the modules
given to :func:`create_app`, every costly parameter bounded). An agent's move and a same-request
analysis run in a daemon thread, interrupted when the client leaves or the server stops
(:mod:`taluva_ai.web.cancel`). Pictures are served with ``Content-Security-Policy: sandbox``;
a save never goes through a symbolic link (:func:`taluva_ai.web.records.save_folder`).

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
import re
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from taluva_ai.protocol import CHANCE
from taluva_ai.web.cancel import CancelFlag, Cancelled
from taluva_ai.web.errors import WebError, _one_line
from taluva_ai.web.guard import Guard, HostRule
from taluva_ai.web.records import (
    PICTURE_TYPES,
    RecordStore,
    board_svg,
    run_view,
    save_folder,
)

STATIC = Path(__file__).parent / "static"
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


def create_app(dirs: Sequence[str | Path], *, hosts: Sequence[str] | None = None,
               agent_modules: Sequence[str] = ()) -> Starlette:
    """The app serving the records under ``dirs`` (module docstring).

    Args:
        hosts: the ``Host`` header values answered (:class:`~taluva_ai.web.guard.HostRule`:
            ``NAME:PORT``, ``NAME`` on any port, ``*:PORT`` any IP address); None:
            ``127.0.0.1``, ``localhost`` and ``[::1]`` on any port.
        agent_modules: the Python modules whose classes may play or analyse as
            ``module:Class`` specs (``taluva serve --allow-agent-module``); none by default:
            only the registered agents (:class:`~taluva_ai.web.specs.AgentPolicy`).

    Raises:
        ValueError: a directory that does not exist, or a malformed module name.
    """
    from taluva_ai.web.analysis import (
        AnalysisJob,
        AnalysisJobs,
        AnalysisLines,
        GameAnalysis,
        analyse,
        analyse_with,
        planned_sims,
    )
    from taluva_ai.web.play import (
        GameSession,
        Sessions,
        compiling_view,
        move_help,
        position_notes,
        seat_colours,
    )
    from taluva_ai.web.specs import CHECKPOINT_SUFFIXES, AgentPolicy, analysis_agent

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

    def compiling(request: Request) -> Response:
        agent = request.query_params.get("agent")
        return JSONResponse({"compiling": compiling_view(agent)},
                            headers={"Cache-Control": "no-store"})

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
        Route("/api/compiling", compiling),
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
