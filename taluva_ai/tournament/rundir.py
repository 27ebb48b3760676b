"""The files of a tournament's run directory (docs/tournaments.md), in one place.

Their names; the path of each game's record (``games/<id>.jsonl``) and the cleanup of the
temporary records of games that were interrupted; the ``meta`` of a record's header; the
lines of ``results.jsonl`` (:func:`_log_entry`), appended with their checksums and read back,
checked (:func:`_append`, :func:`_read_log`); the check of a record kept from an earlier run,
replayed, for the resume (:func:`_kept_outcome`); and the digest of the counted records.
The mechanisms a training run shares (atomic writes, checksums, the run lock, SIGTERM as
Ctrl-C) are :mod:`taluva_ai.runfiles`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Container, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from taluva_ai.errors import RecordError, RunConfigError
from taluva_ai.protocol import CHANCE
from taluva_ai.records import MoveEvent, Outcome, outcome_of, read_header, replay_record
from taluva_ai.runfiles import json_sha256, naming, read_regular
from taluva_ai.tournament.agents import _pins_ok
from taluva_ai.tournament.play import Forfeit, GameResult, agent_seeds
from taluva_ai.tournament.schedules import _GameTask

#: File names in a tournament's run directory.
CONFIG_FILE, LOG_FILE, TABLE_FILE, TIMING_FILE, GAMES_DIR = (
    "config.json", "results.jsonl", "results.json", "timing.json", "games")


#: The deals a tournament plays (a deal file, :func:`read_deals`) and its games as PGN.
DEALS_FILE, PGN_FILE = "deals.jsonl", "games.pgn"


def _task_meta(task: _GameTask, pins: Mapping[str, Mapping[str, str]] | None = None
               ) -> dict[str, Any]:
    """The ``meta`` of a game's record header: its id, deal and rotation, and
    ``agent_files``, the ``{file: SHA-256}`` of each of its agents that read files (the
    networks that played it; :func:`pinned_files`), when any did."""
    meta: dict[str, Any] = {"id": task.game_id, "deal": task.deal, "rotation": task.rotation}
    have = pins or {}
    files = {s: dict(have[s]) for s in dict.fromkeys(task.seats) if have.get(s)}
    if files:
        meta["agent_files"] = files
    return meta


def _log_entry(task: _GameTask, out: Outcome, forfeit: Forfeit | None,
               res: GameResult | None, record_sha256: str | None = None,
               agent_files: dict[str, Any] | None = None) -> dict[str, Any]:
    """One line of ``results.jsonl``: the game's result, its forfeit, the time each seat
    used (None for a game recovered from its record alone), the SHA-256 of its record
    (None for a forfeited game, which has none) and, when any of its agents read files, their
    ``agent_files`` as in its record's header (:func:`_task_meta`; a forfeited game's line is
    the only place that names them); :func:`_append` adds the line's own checksum."""
    entry = {
        "id": task.game_id, "deal": task.deal, "rotation": task.rotation,
        "seats": list(task.seats), "places": list(out.places), "winners": list(out.winners),
        "end_reason": out.end_reason, "plies": out.plies,
        "forfeit": None if forfeit is None else forfeit.to_json(),
        "time_s": None if res is None else [round(t, 6) for t in res.time_s],
        "moves": None if res is None else list(res.moves),
        "max_move_s": None if res is None else [round(t, 6) for t in res.max_move_s],
        "record_sha256": record_sha256,
    }
    if agent_files:
        entry["agent_files"] = agent_files
    return entry


def _kept_outcome(
    path: Path, task: _GameTask, game_name: str, rules: dict[str, Any],
    pins: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[Outcome | None, list[int] | None, str | None]:
    """``(outcome, moves, None)`` when ``path`` holds a valid finished record of ``task``: its
    header is the one :func:`play_game` writes for the task (with ``pins``, the files the
    run pinned, as its agents' files; a record written before records named them is taken
    without), and it replays (every action
    legal, the draws those of the deal's seeded deck, the result line that of the replayed
    game); ``moves`` counts each seat's actions. Otherwise ``(None, None, why)``, ``why`` None
    when there is no record at all."""
    if not path.exists():
        return None, None, None
    try:
        h = read_header(path)
        seeds = agent_seeds(task.seed, len(task.seats))
        meta = _task_meta(task, pins)
        if isinstance(h.meta, dict) and "agent_files" not in h.meta:
            meta.pop("agent_files", None)  # a record of an older version names no files
        elif isinstance(h.meta, dict) and h.meta.get("agent_files") != meta.get("agent_files") \
                and {**h.meta, "agent_files": None} == {**meta, "agent_files": None}:
            return None, None, (
                "line 1: field 'meta.agent_files': " + (
                    "played by another network than the one this run pinned"
                    if _pins_ok(h.meta["agent_files"]) else
                    "not a mapping of agent specs to {file: SHA-256 (64 hex digits)}"))
        want = (game_name, rules, task.seed, task.seats,
                None if seeds is None else tuple(seeds), meta, task.deck)
        got = (h.game, h.rules, h.seed, h.players, h.agent_seeds, h.meta, h.deck)
        if got != want:
            names = ("game", "rules", "seed", "players", "agent_seeds", "meta", "deck")
            diff = [n for n, a, b in zip(names, got, want, strict=True) if a != b]
            return None, None, f"line 1: the header is not this game's (it differs in: " \
                f"{', '.join(diff)})"
        plies = [0]
        moves = [0] * len(task.seats)

        def count(state: Any, event: MoveEvent | None) -> None:
            if event is not None:
                plies[0] += 1
                if event.player != CHANCE:
                    moves[event.player] += 1

        state = replay_record(path, on_state=count, seeded_draws=True)
        return outcome_of(state, plies[0]), moves, None
    except RecordError as e:
        return None, None, f"line {e.line}: field {e.field!r}: {e.reason}"
    except OSError as e:
        return None, None, f"cannot read the record: {e.strerror or e}"


def _read_log(log_path: Path, ids: Container[str]) -> dict[str, dict[str, Any]]:
    """The entries of ``results.jsonl`` by game id (the last line of a game wins). A line
    cut by a crash (the last one, without its newline) is dropped quietly; another line
    that is not an entry is named in a warning and dropped."""
    if not log_path.exists():
        return {}
    try:
        raw = read_regular(log_path)
    except OSError as e:
        raise RunConfigError(f"{log_path}: unreadable ({e.strerror or e}); use "
                             "another --out") from None
    lines = raw.split(b"\n")
    out: dict[str, dict[str, Any]] = {}
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            ok = isinstance(entry, dict) and entry.get("id") in ids and _entry_ok(entry)
        except (ValueError, UnicodeDecodeError, RecursionError):
            ok = False
        if ok and "sha256" in entry and entry["sha256"] != _entry_digest(entry):
            print(f"{log_path}: line {i + 1}: damaged (its content does not match its "
                  "checksum); ignored: its game's record is checked by replaying it, or the "
                  "game played again", file=sys.stderr)
            continue
        if not ok:
            if i < len(lines) - 1:  # a complete line that is not an entry
                print(f"{log_path}: line {i + 1}: not a result entry of this "
                      "tournament; ignored: its game's record is checked by replaying it, "
                      "or the game played again", file=sys.stderr)
            continue
        out[entry["id"]] = entry
    return out


def _entry_digest(entry: dict[str, Any]) -> str:
    """The checksum of a ``results.jsonl`` line: :func:`taluva_ai.runfiles.json_sha256` of
    its other fields."""
    return json_sha256({k: v for k, v in entry.items() if k != "sha256"})


def _entry_ok(e: dict[str, Any]) -> bool:
    """A ``results.jsonl`` line has the fields and types :func:`_log_entry` writes."""
    def ints(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool)
                                           for x in v)

    f = e.get("forfeit")
    return (isinstance(e.get("seats"), list) and ints(e.get("places"))
            and ints(e.get("winners")) and isinstance(e.get("end_reason"), str)
            and isinstance(e.get("plies"), int) and isinstance(e.get("deal"), int)
            and isinstance(e.get("rotation"), int)
            and (f is None or (isinstance(f, dict) and isinstance(f.get("seat"), int)
                               and isinstance(f.get("reason"), str)))
            and isinstance(e.get("agent_files", {}), dict)
            and len(e["places"]) == len(e["seats"]))


def _append(log: Any, entry: dict[str, Any]) -> None:
    """Append one line to the results log, with its checksum (``entry["sha256"]`` is set),
    and push it to the disk (a crash loses at most the line being written, which the resume
    drops).

    Raises:
        OSError: it cannot be written (naming the log).
    """
    entry["sha256"] = _entry_digest(entry)
    with naming(log.name):
        log.write(json.dumps(entry) + "\n")
        log.flush()
        os.fsync(log.fileno())


class _RecordPaths(Mapping[str, Path]):
    """``game id -> record path`` under a tournament's ``games`` folder, computed on demand
    (any id maps to a path; iteration lists nothing)."""

    def __init__(self, games_dir: Path) -> None:
        self.games_dir = games_dir

    def __getitem__(self, game_id: str) -> Path:
        return self.games_dir / f"{game_id}.jsonl"

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _remove_parts(todo: Sequence[_GameTask], paths: Mapping[str, Path]) -> None:
    """Delete the temporary records (``.<name>.<random>.part``) of the games of ``todo``."""
    names = {paths[t.game_id].name for t in todo}
    for folder in {paths[t.game_id].parent for t in todo}:
        for part in folder.glob(".*.part"):
            if part.name[1:].rsplit(".", 2)[0] in names:
                part.unlink(missing_ok=True)


def _records_digest(paths: Mapping[str, Path], tasks: Sequence[_GameTask],
                    done: dict[str, dict[str, Any]]) -> str:
    """SHA-256 over every counted game in game-id order: its record's bytes, or for a
    forfeited game (no record) its forfeit line (identical runs, identical digest)."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(t.game_id.encode())
        f = done[t.game_id].get("forfeit")
        if f is not None:
            h.update(json.dumps(f, sort_keys=True).encode())
        else:
            h.update(paths[t.game_id].read_bytes())
    return h.hexdigest()
