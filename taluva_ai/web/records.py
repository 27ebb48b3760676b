"""The game records and tournament runs under the browser board's served directories
(``taluva serve DIR...``, docs/web.md): what the replay view and the run pages read.

:class:`RecordStore` lists the records under the directories named at start, resolves the
names the page sends (``"<dir index>/<relative path>"``; never a path outside them: ``..``,
an absolute path, a symbolic link that leads out) and replays a record once, checked
(:func:`taluva_ai.records.replay_record`), keeping the last few (:class:`Replayed`).
:func:`board_svg` draws a replayed position, :func:`run_view` a tournament run directory's
table and pictures, :func:`save_folder` is where the games played in the page are saved (never
through a symbolic link). The routes over them are :mod:`taluva_ai.web.app`'s.

Every refusal is a :class:`~taluva_ai.web.errors.WebError` (status and one line).
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from taluva_ai.errors import RecordError
from taluva_ai.records import read_header, read_result, replay_record
from taluva_ai.web.errors import WebError, _one_line

#: The most of a record's first line read to tell a malformed record's game and players
#: (bytes).
MAX_HEADER_BYTES = 64 * 1024
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
                first = json.loads(f.readline(MAX_HEADER_BYTES))
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
