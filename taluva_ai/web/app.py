"""The Starlette app of ``taluva serve`` (docs/web.md): a replay view of the game records under
the directories named at start.

Routes:

- ``GET /``: the page (``static/index.html``; its script and style under ``/static/``).
- ``GET /api/records``: ``{"dirs": [...], "records": [{"path", "dir", "name"}...]}``, every
  ``*.jsonl`` file under the served directories (``path`` is ``"<dir index>/<relative path>"``,
  the name the other routes take).
- ``GET /api/record?path=P``: the record replayed and checked
  (:func:`taluva_ai.records.replay_record`): ``{"path", "game", "players", "positions",
  "moves": [{"ply", "player", "notation"}...], "result"}``.
- ``GET /api/board?path=P&ply=K``: the position after ``K`` actions as SVG
  (:func:`taluva_ai.games.taluva.svg.state_svg` for Taluva; for another game its matplotlib
  picture through ``taluva_ai.games.<game>.draw``, else its text).

Every error is a JSON object ``{"error": "<one line>"}``: 400 a bad query, 403 a path outside
the served directories (``..``, an absolute path, a symbolic link that leads out), 404 an unknown
record or route, 422 a malformed record (the line and field, as ``taluva replay`` says it), 500
anything else (the exception's type and first line, never a traceback).
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from taluva_ai.errors import RecordError
from taluva_ai.protocol import CHANCE
from taluva_ai.records import read_header, read_result, replay_record

STATIC = Path(__file__).parent / "static"
#: Records larger than this are refused (bytes).
MAX_RECORD_BYTES = 50 * 1024 * 1024
#: At most this many records are listed.
MAX_LISTED = 5000
#: Replayed records kept in memory.
CACHE_SIZE = 8


class WebError(Exception):
    """A request the app refuses: ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Replayed:
    """A record replayed once: its header and a copy of every position with the action that
    led to it (None for the initial one)."""

    header: Any
    positions: list[tuple[Any, Any]]
    result: str


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:500]


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

    def listing(self) -> list[dict[str, str]]:
        """The ``*.jsonl`` files under the roots that resolve inside them, sorted."""
        out: list[dict[str, str]] = []
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
                rel = f.relative_to(root).as_posix()
                out.append({"path": f"{i}/{rel}", "dir": str(root), "name": rel})
        return out

    def resolve(self, ref: str | None) -> Path:
        """The file of a listing's ``path``, checked to lie under its root.

        Raises:
            WebError: 400 no or a malformed path, 403 one that leaves the root, 404 no such
                record.
        """
        if not ref:
            raise WebError(400, "missing query parameter 'path' (a path from /api/records)")
        head, _, rest = ref.partition("/")
        if not head.isdigit() or not rest:
            raise WebError(400, f"path must be '<dir index>/<file>', got {ref!r}")
        i = int(head)
        if i >= len(self.roots):
            raise WebError(404, f"no served directory number {i} (0..{len(self.roots) - 1})")
        root = self.roots[i]
        rel = PurePosixPath(rest)
        if rel.is_absolute() or "\\" in rest or "\x00" in rest or ".." in rel.parts:
            raise WebError(403, f"refused path {ref!r}: only files under the served "
                           "directories are read (no '..', no absolute paths)")
        try:
            real = (root / rel).resolve()
        except (OSError, RuntimeError) as e:
            raise WebError(404, f"no record {ref!r}: {_one_line(str(e))}") from None
        if not real.is_relative_to(root):
            raise WebError(403, f"refused path {ref!r}: it leads outside the served "
                           "directories")
        if real.suffix != ".jsonl":
            raise WebError(403, f"refused path {ref!r}: only game records (.jsonl) are read")
        if not real.is_file():
            raise WebError(404, f"no record {ref!r}")
        return real

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


def _result_line(state: Any, players: Sequence[str], outcome: Any) -> str:
    if outcome is None:
        return "no result"
    won = ", ".join(f"seat {w} ({players[w]})" for w in outcome.winners if w < len(players))
    return f"{outcome.end_reason} after {outcome.plies} plies; winners: {won or 'none'}"


_draw_lock = threading.Lock()


def board_svg(rep: Replayed, ply: int) -> str:
    """The SVG of position ``ply`` of a replayed record (module docstring)."""
    state, event = rep.positions[ply]
    last = None if event is None else event.notation
    if rep.header.game == "taluva":
        from taluva_ai.games.taluva.svg import changed_cells, state_svg

        before = rep.positions[ply - 1][0].cells if ply > 0 else None
        return state_svg(state, rep.header.players, last, changed_cells(before, state.cells))
    return _other_game_svg(state, rep.header.game, last)


def _other_game_svg(state: Any, game: str, last: str | None) -> str:
    """A game without an SVG module: its matplotlib picture (``taluva_ai.games.<game>.draw``,
    through the game protocol), else its text in an SVG."""
    import importlib

    try:
        draw = importlib.import_module(f"taluva_ai.games.{game}.draw")
        import matplotlib.pyplot as plt

        with _draw_lock:  # pyplot keeps global state
            fig = draw.draw_state(state)
            try:
                buf = io.StringIO()
                fig.savefig(buf, format="svg", bbox_inches="tight")
            finally:
                plt.close(fig)
        return buf.getvalue()
    except ImportError:
        pass
    from xml.sax.saxutils import escape

    lines = str(state).splitlines() + ([f"last: {last}"] if last else [])
    body = "".join(f'<text x="8" y="{18 * (i + 1)}">{escape(t)}</text>'
                   for i, t in enumerate(lines))
    width = 8 * max((len(t) for t in lines), default=10) + 16
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{18 * len(lines) + 12}" font-family="monospace" font-size="13" '
            f'xml:space="preserve">{body}</svg>')


def create_app(dirs: Sequence[str | Path]) -> Starlette:
    """The app serving the records under ``dirs`` (module docstring).

    Raises:
        ValueError: a directory that does not exist.
    """
    store = RecordStore(dirs)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    def records(request: Request) -> Response:
        return JSONResponse({"dirs": [str(r) for r in store.roots],
                             "records": store.listing()})

    def record(request: Request) -> Response:
        ref, rep = store.replayed(request.query_params.get("path"))
        moves = [{"ply": ev.ply, "player": "chance" if ev.player == CHANCE else ev.player,
                  "notation": ev.notation} for _, ev in rep.positions[1:]]
        return JSONResponse({"path": ref, "game": rep.header.game,
                             "players": list(rep.header.players),
                             "positions": len(rep.positions), "moves": moves,
                             "result": rep.result})

    def board(request: Request) -> Response:
        _, rep = store.replayed(request.query_params.get("path"))
        text = request.query_params.get("ply", "0")
        last = len(rep.positions) - 1
        if not text.isdigit() or int(text) > last:
            raise WebError(400, f"ply must be an integer 0..{last}, got {text!r}")
        svg = board_svg(rep, int(text))
        return Response(svg, media_type="image/svg+xml",
                        headers={"Cache-Control": "no-store"})

    async def web_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, WebError)
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = "not found" if exc.status_code == 404 else _one_line(str(exc.detail))
        return JSONResponse({"error": f"{message}: {request.url.path}"},
                            status_code=exc.status_code)

    async def internal_error(request: Request, exc: Exception) -> Response:
        first = _one_line(str(exc).splitlines()[0] if str(exc) else "")
        return JSONResponse({"error": f"internal error: {type(exc).__name__}: {first}"},
                            status_code=500)

    routes = [
        Route("/", index),
        Route("/api/records", records),
        Route("/api/record", record),
        Route("/api/board", board),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, exception_handlers={
        WebError: web_error, HTTPException: http_error, Exception: internal_error})
