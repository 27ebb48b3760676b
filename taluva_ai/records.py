"""Game records as JSON Lines, for any game of :mod:`taluva_ai.protocol` (docs/notation.md).

A record is a text file (UTF-8, ``\\n`` line ends), one JSON object a line:

1. the header::

       {"type": "header", "format": "taluva-ai-record/1", "game": "taluva",
        "rules": {...}, "seed": 7, "players": ["greedy", "random"],
        "agent_seeds": [...], "meta": {...}}

   ``game`` and ``rules`` rebuild the game with ``make_game(game, **rules)`` (for Taluva the
   rules are :meth:`RuleSet.to_dict`); ``seed`` (int or null) is the seed of
   ``game.new_initial_state``; ``players`` one string per seat (agent specs). ``agent_seeds``
   (ints, one per seat), ``meta`` (any object, e.g. a tournament's game id) and ``deck`` (a
   list of strings: an explicit draw order, for a game with a deck, e.g. Taluva's tile names
   ``"JC"``; the initial state is then ``game.new_initial_state(seed,
   deck=game.parse_deck(deck))``, as in a tournament played from a deal file) are optional.
2. one line per action, chance outcomes included, in order::

       {"type": "action", "ply": 0, "player": "chance", "action": "draw:JC"}
       {"type": "action", "ply": 1, "player": 0, "action": "tile@0,0:N"}

   ``ply`` counts the actions before this one (0-based); ``player`` is the seat to move or
   ``"chance"``; ``action`` is the notation of ``state.action_to_string`` /
   ``state.parse_action``.
3. the result::

       {"type": "result", "returns": [1.0, -1.0], "winners": [0], "end_reason":
        "early_victory", "places": [0, 1], "plies": 99}

   ``end_reason`` is one of ``early_victory``, ``last_standing``, ``tiles_out``, ``truncated``
   for Taluva (the lower-case name of the game's ``end_reason``).

:class:`RecordWriter` writes a record while a game is played (each line is flushed, so an
interrupted game leaves a record without a result line; with ``atomic=True`` the lines go to a
temporary file in the same folder, renamed onto the record once the result line is written, so
an existing record is never truncated by a game that does not finish); :func:`replay_record`
re-applies every action and checks it. Every field is checked: a problem raises
:class:`~taluva_ai.errors.RecordError` with the 1-based line number and the field's name.
The readers take regular files only (a FIFO or a device is refused before it is read) and
lines of at most :data:`MAX_LINE_BYTES` bytes, read one at a time, so a damaged or hostile file
costs bounded memory.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from taluva_ai.errors import IllegalActionError, NotationError, RecordError
from taluva_ai.protocol import CHANCE, Game, GameState, make_game
from taluva_ai.runfiles import open_regular, refuse_special

#: Value of the header's ``format`` field.
RECORD_FORMAT = "taluva-ai-record/1"

HEADER_REQUIRED = ("type", "format", "game", "rules", "seed", "players")
HEADER_OPTIONAL = ("agent_seeds", "meta", "deck")
ACTION_FIELDS = ("type", "ply", "player", "action")
RESULT_FIELDS = ("type", "returns", "winners", "end_reason", "places", "plies")
#: The longest line a record may have, in bytes (its line end not counted). The longest line
#: a game writes is its header (agent specs, ``meta``, a deck of tiles), a few KiB at most; a
#: longer line is refused before it is held in memory whole.
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended, as a record's result line states it.

    Attributes:
        returns: final value per seat (``state.returns()``).
        winners: seats that share first place (empty for a truncated game).
        end_reason: why the game ended, e.g. ``"early_victory"``, ``"last_standing"``,
            ``"tiles_out"``, ``"truncated"``; ``""`` for a game that does not say.
        places: final place per seat (0 best; -1 undecided, e.g. truncated).
        plies: number of actions applied, chance outcomes included.
    """

    returns: tuple[float, ...]
    winners: tuple[int, ...]
    end_reason: str
    places: tuple[int, ...]
    plies: int

    def to_json(self) -> dict[str, Any]:
        """The result line's object (``type`` first)."""
        return {
            "type": "result",
            "returns": [float(x) for x in self.returns],
            "winners": list(self.winners),
            "end_reason": self.end_reason,
            "places": list(self.places),
            "plies": self.plies,
        }


@dataclass(frozen=True)
class MoveEvent:
    """One applied action, as handed to ``on_state`` callbacks (arena and replay).

    Attributes:
        ply: number of actions applied before this one (0-based).
        player: seat that acted, or ``CHANCE`` (-1) for a chance outcome.
        action: the action id (or chance outcome) applied.
        notation: its notation, as in records.
        stats: what the agent told of its decision (``agent.stats()``; empty for chance and in
            replays).
    """

    ply: int
    player: int
    action: int
    notation: str
    stats: dict[str, Any] = field(default_factory=dict)


#: ``on_state(state, event)``: called with the initial state (``event`` None) and after every
#: action with the action just applied.
StateCallback = Callable[[GameState, "MoveEvent | None"], None]


def outcome_of(state: GameState, plies: int) -> Outcome:
    """The :class:`Outcome` of a finished game.

    Uses the optional state methods ``winners()``, ``places()`` and ``end_reason`` where the
    game has them (Taluva does); otherwise winners are the seats of highest return, places are
    ranks by return and the end reason is ``""``.

    Args:
        state: a terminal state.
        plies: number of actions applied (chance outcomes included).

    Raises:
        ValueError: the game is not over.
    """
    if not state.is_terminal():
        raise ValueError("the game is not over: no outcome yet")
    rets = tuple(float(x) for x in state.returns())
    if hasattr(state, "winners"):
        winners = tuple(int(p) for p in state.winners())
    else:
        best = max(rets)
        winners = tuple(p for p, r in enumerate(rets) if r == best)
    if hasattr(state, "places"):
        places = tuple(int(p) for p in state.places())
    else:
        places = tuple(sum(1 for r2 in rets if r2 > r) for r in rets)
    reason = getattr(state, "end_reason", None)
    if reason is None:
        reason_s = ""
    elif hasattr(reason, "name"):
        reason_s = str(reason.name).lower()
    else:
        reason_s = str(reason)
    return Outcome(rets, winners, reason_s, places, int(plies))


def _dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=True, allow_nan=False)


class RecordWriter:
    """Writes a record line by line while a game is played (each line flushed).

    Usage::

        with RecordWriter(path, game, seed, ["greedy", "random"]) as w:
            ...
            w.write_action(state, a)   # before state.apply(a)
            state.apply(a)
            ...
            w.write_result(state)

    Args:
        path: the file to write (overwritten; parent folders are made).
        atomic: write to a temporary file in the same folder (``.<name>.<random>.part``) and
            rename it onto ``path`` when the result line is written; closing the writer
            before that removes the temporary file and leaves ``path`` as it was.
        game: the game; ``game.name`` and ``game.options()`` go to the header.
        seed: the seed given to ``game.new_initial_state`` (int or None).
        players: one string per seat (agent specs).
        agent_seeds: optional, the seed each seat's agent was reset with.
        meta: optional JSON-ready object stored in the header (e.g. a tournament game id).
        deck: optional, the explicit draw order the initial state was made with (strings:
            ``game.parse_deck`` reads them back).

    Raises:
        ValueError: ``players`` does not hold one string per seat.
        OSError: the file cannot be written (``path`` is a directory, a parent is a file, no
            permission, ...); raised here, before any move is played.
    """

    def __init__(
        self,
        path: str | Path,
        game: Game,
        seed: int | None,
        players: Sequence[str],
        agent_seeds: Sequence[int] | None = None,
        meta: dict[str, Any] | None = None,
        atomic: bool = False,
        deck: Sequence[str] | None = None,
    ) -> None:
        if len(players) != game.num_players:
            raise ValueError(f"players: {len(players)} names for {game.num_players} seats")
        self.path = Path(path)
        refuse_special(self.path)  # a rename or a write would replace or feed /dev/null, a FIFO
        _prepare_parent(self.path)
        self.plies = 0
        self._tmp: Path | None = None
        if atomic:
            tmp = self.path.parent / f".{self.path.name}.{secrets.token_hex(4)}.part"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            self._tmp = tmp
            self._file: IO[str] | None = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        else:
            self._file = self.path.open("w", encoding="utf-8", newline="\n")
        header: dict[str, Any] = {
            "type": "header",
            "format": RECORD_FORMAT,
            "game": game.name,
            "rules": game.options(),
            "seed": None if seed is None else int(seed),
            "players": [str(p) for p in players],
        }
        if agent_seeds is not None:
            header["agent_seeds"] = [int(s) for s in agent_seeds]
        if meta is not None:
            header["meta"] = meta
        if deck is not None:
            header["deck"] = [str(t) for t in deck]
        self._line(header)

    def _line(self, obj: dict[str, Any]) -> None:
        if self._file is None:
            raise ValueError(f"{self.path}: the record is closed")
        self._file.write(_dumps(obj) + "\n")
        self._file.flush()

    def write_action(self, state: GameState, action: int) -> str:
        """Write the action line of ``action`` in ``state`` (call it before applying it).

        Returns:
            The notation written.
        """
        text = state.action_to_string(int(action))
        self.write_notation(state.current_player, text)
        return text

    def write_notation(self, player: int, notation: str) -> None:
        """Write an action line from its notation and the seat that played it (``CHANCE`` for
        a chance outcome); for a caller that applies (and so validates) the action first."""
        self._line(
            {
                "type": "action",
                "ply": self.plies,
                "player": "chance" if player == CHANCE else int(player),
                "action": str(notation),
            }
        )
        self.plies += 1

    def write_result(self, state: GameState) -> Outcome:
        """Write the result line of the finished game and close the file.

        Raises:
            ValueError: the game is not over.
        """
        out = outcome_of(state, self.plies)
        self._line(out.to_json())
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._tmp is not None:
            os.replace(self._tmp, self.path)
            self._tmp = None
        return out

    def close(self) -> None:
        """Close the file. A record closed before its result line stays incomplete; with
        ``atomic``, its temporary file is removed instead and ``path`` is left untouched."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _prepare_parent(path: Path) -> None:
    """Refuse a ``path`` that cannot be a file (a directory, a parent that is a file) and make
    its missing parent folders; raises OSError naming the offending path."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(path))
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(parent))
            break
    path.parent.mkdir(parents=True, exist_ok=True)


# -- reading ----------------------------------------------------------------------------------


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_finite_number(x: Any) -> bool:
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:  # an integer too large for a float
        return False


def _check_fields(
    obj: dict[str, Any], line: int, required: Sequence[str], optional: Sequence[str] = ()
) -> None:
    for name in required:
        if name not in obj:
            raise RecordError(line, name, f"missing field (a {obj['type']} line needs "
                              f"{', '.join(required)})")
    extra = [k for k in obj if k not in required and k not in optional]
    if extra:
        raise RecordError(line, extra[0], f"unknown field in a {obj['type']} line")


def _parse_line(raw: bytes, line: int) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordError(line, "json", f"not UTF-8 text: {e}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(line, "json", f"not valid JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        raise RecordError(line, "json", "not valid JSON: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as e:  # e.g. an integer of 5000 digits
        raise RecordError(line, "json", f"not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise RecordError(line, "json", f"expected a JSON object, got {type(obj).__name__}")
    t = obj.get("type")
    if t not in ("header", "action", "result"):
        raise RecordError(line, "type", f"expected 'header', 'action' or 'result', got {t!r}")
    return obj


@dataclass(frozen=True)
class RecordHeader:
    """A record's parsed header line.

    Attributes:
        game: registered game name.
        rules: the game's options (``make_game(game, **rules)``).
        seed: seed of the initial state, or None.
        players: one string per seat.
        agent_seeds: per seat, or None.
        meta: free-form object, or None.
        deck: the explicit draw order of the initial state, or None (the seed's).
    """

    game: str
    rules: dict[str, Any]
    seed: int | None
    players: tuple[str, ...]
    agent_seeds: tuple[int, ...] | None
    meta: dict[str, Any] | None
    deck: tuple[str, ...] | None = None


def _parse_header(obj: dict[str, Any]) -> RecordHeader:
    if obj["type"] != "header":
        raise RecordError(1, "type", f"the first line must be the header, got {obj['type']!r}")
    _check_fields(obj, 1, HEADER_REQUIRED, HEADER_OPTIONAL)
    if obj["format"] != RECORD_FORMAT:
        raise RecordError(1, "format", f"expected {RECORD_FORMAT!r}, got {obj['format']!r}")
    if not isinstance(obj["game"], str):
        raise RecordError(1, "game", "expected a game name (string)")
    if not isinstance(obj["rules"], dict):
        raise RecordError(1, "rules", "expected an object of rule options")
    seed = obj["seed"]
    if seed is not None and not (_is_int(seed) and seed >= 0):
        raise RecordError(1, "seed", f"expected a non-negative integer or null, got {seed!r}")
    players = obj["players"]
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise RecordError(1, "players", "expected a list of strings, one per seat")
    agent_seeds = obj.get("agent_seeds")
    if agent_seeds is not None and (
        not isinstance(agent_seeds, list) or not all(_is_int(s) for s in agent_seeds)
    ):
        raise RecordError(1, "agent_seeds", "expected a list of integers, one per seat")
    meta = obj.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise RecordError(1, "meta", "expected an object")
    deck = obj.get("deck")
    if deck is not None and (not isinstance(deck, list)
                             or not all(isinstance(t, str) for t in deck)):
        raise RecordError(1, "deck", "expected a list of strings (the draw order)")
    return RecordHeader(
        obj["game"], obj["rules"], seed, tuple(players),
        None if agent_seeds is None else tuple(agent_seeds), meta,
        None if deck is None else tuple(deck),
    )


def _open_record(path: str | Path) -> IO[bytes]:
    """``path`` opened for reading in binary, if it is a regular file
    (:func:`taluva_ai.runfiles.open_regular`).

    Raises:
        OSError: the file cannot be opened, or it is not a regular file (a FIFO, a device, a
            socket, a directory): its ``strerror`` says which.
    """
    return open_regular(path, "a record")


def _record_lines(f: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for each line of ``f`` (1-based; the line without its line
    end), read one at a time. Lines end at ``\\n``, ``\\r\\n`` or ``\\r``
    (``bytes.splitlines``).

    Raises:
        RecordError: a line longer than :data:`MAX_LINE_BYTES` bytes (found before more of
            it than that is read; a run of lines split by ``\\r`` alone counts as one).
    """
    number = 0
    while True:
        chunk = f.readline(MAX_LINE_BYTES + 2)  # the longest line and its "\r\n"
        if not chunk:
            return
        lines = chunk.splitlines()
        if (len(chunk) == MAX_LINE_BYTES + 2 and not chunk.endswith(b"\n")) or \
                any(len(line) > MAX_LINE_BYTES for line in lines):
            raise RecordError(number + 1, "json", f"a line longer than {MAX_LINE_BYTES} bytes "
                              "(a record's lines are a few KiB at most): not a game record")
        for line in lines:
            number += 1
            yield number, line


def read_header(path: str | Path) -> RecordHeader:
    """The parsed header (line 1) of a record, without replaying it.

    Raises:
        RecordError: a malformed header (or a first line longer than :data:`MAX_LINE_BYTES`).
        OSError: the file cannot be read, or it is not a regular file.
    """
    with _open_record(path) as f:
        first = next(_record_lines(f), (1, b""))[1]
    if not first.strip():
        raise RecordError(1, "type", "empty record: expected the header line")
    return _parse_header(_parse_line(first, 1))


def read_result(path: str | Path) -> Outcome | None:
    """The outcome stated by a record's last line, or None when the record has no (valid)
    result line (e.g. a game interrupted while it was written, or a line longer than
    :data:`MAX_LINE_BYTES`). Nothing is replayed; use :func:`replay_record` to check a record.

    Raises:
        OSError: the file cannot be read, or it is not a regular file.
    """
    count, last = 0, b""
    with _open_record(path) as f:
        try:
            for count, last in _record_lines(f):  # noqa: B007  (the last one is wanted)
                pass
        except RecordError:
            return None
    if count < 2:
        return None
    try:
        obj = _parse_line(last, count)
        if obj["type"] != "result":
            return None
        return _parse_result(obj, count)
    except RecordError:
        return None


def _parse_result(obj: dict[str, Any], line: int) -> Outcome:
    _check_fields(obj, line, RESULT_FIELDS)
    rets = obj["returns"]
    if not isinstance(rets, list) or not all(_is_finite_number(x) for x in rets):
        raise RecordError(line, "returns", "expected a list of (finite) numbers")
    for name in ("winners", "places"):
        v = obj[name]
        if not isinstance(v, list) or not all(_is_int(x) for x in v):
            raise RecordError(line, name, "expected a list of integers")
    if not isinstance(obj["end_reason"], str):
        raise RecordError(line, "end_reason", "expected a string")
    if not _is_int(obj["plies"]):
        raise RecordError(line, "plies", "expected an integer")
    return Outcome(
        tuple(float(x) for x in rets), tuple(obj["winners"]), obj["end_reason"],
        tuple(obj["places"]), obj["plies"],
    )


_KINDS = {
    "draw": "a draw",
    "tile": "a tile placement",
    "hut": "a build",
    "temple": "a build",
    "tower": "a build",
    "expand": "a build",
}


def _kind(text: str) -> str:
    """The kind of an action in notation: the word before ``@`` or ``:`` (``"tile"``,
    ``"draw"``, ``"hut"``, ...), lower case."""
    return re.split(r"[@:]", text.strip(), maxsplit=1)[0].strip().lower()


def _describe(kind: str) -> str:
    return _KINDS.get(kind, f"a {kind!r} action")


def _where(state: GameState, player: int) -> str:
    if player == CHANCE:
        return "at a chance node"
    step = getattr(state, "step", None)
    name = getattr(step, "name", None)
    if isinstance(name, str):
        return f"at the {name.lower()} step (seat {player} to move)"
    return f"with seat {player} to move"


def _chance_example(state: GameState) -> str | None:
    """The notation of one chance outcome of ``state`` (a chance node), or None."""
    try:
        outcomes = state.chance_outcomes()
        return state.action_to_string(int(outcomes[0][0])) if outcomes else None
    except (ValueError, IndexError, TypeError):
        return None


def _build_game(header: RecordHeader) -> Game:
    """``make_game(game, **rules)`` with every failure turned into a RecordError (line 1)."""
    if "name" in header.rules:
        raise RecordError(1, "rules", "unknown rule option 'name'")
    try:
        return make_game(header.game, **header.rules)
    except KeyError as e:
        raise RecordError(1, "game", str(e.args[0]) if e.args else str(e)) from None
    except TypeError as e:
        m = re.search(r"unexpected keyword argument '([^']*)'", str(e))
        if m:
            raise RecordError(1, "rules", f"unknown rule option {m.group(1)!r}") from None
        raise RecordError(1, "rules", str(e)) from None
    except (ValueError, AttributeError, LookupError, OverflowError, RecursionError) as e:
        raise RecordError(1, "rules", str(e) or type(e).__name__) from None


def initial_state(game: Game, header: RecordHeader) -> GameState:
    """The initial state a record's header describes: ``game.new_initial_state(seed)``, or
    with the header's ``deck`` ``game.new_initial_state(seed, deck=game.parse_deck(deck))``.

    Raises:
        RecordError: a bad seed or deck (line 1), or a deck for a game without one.
    """
    if header.deck is None:
        try:
            return game.new_initial_state(seed=header.seed)
        except (ValueError, TypeError, OverflowError) as e:
            raise RecordError(1, "seed", str(e)) from None
    parse = getattr(game, "parse_deck", None)
    if parse is None:
        raise RecordError(1, "deck", f"game {game.name!r} has no deck")
    try:
        deck = parse(list(header.deck))
    except ValueError as e:
        raise RecordError(1, "deck", str(e)) from None
    try:
        return game.new_initial_state(seed=header.seed, deck=deck)  # type: ignore[call-arg]
    except (ValueError, TypeError, OverflowError) as e:
        raise RecordError(1, "seed", str(e)) from None


def replay_record(
    path: str | Path, on_state: StateCallback | None = None, seeded_draws: bool = False
) -> GameState:
    """Replay a record and check it; returns the final state.

    Rebuilds the game from the header (``make_game(game, **rules)``, initial state from
    ``seed`` and the optional ``deck``: :func:`initial_state`), then for every action line
    checks the ply count, the seat to move and the action's legality before applying it;
    finally checks that the result line matches the replayed outcome (returns, winners, end
    reason, places, plies) and that nothing follows it.
    Chance outcomes are applied as recorded (they need not follow the seeded deck, unless
    ``seeded_draws``). The notation must be of the step's kind: at a chance node only a chance
    outcome (``draw:AB``), elsewhere never one.

    Args:
        path: the record file.
        on_state: optional ``on_state(state, event)``, called with the initial state
            (``event`` None) and after each action (:class:`MoveEvent`).
        seeded_draws: also check that every chance outcome is the one ``state.draw()`` gives
            (the deck shuffled from the header's seed, or the header's ``deck``), as in records
            written by :func:`taluva_ai.tournament.play_game`.

    Raises:
        RecordError: malformed JSON, a missing or unknown field, a wrong type, an unknown game
            or rule option, a wrong ply or seat, malformed notation, an illegal action, a
            missing, early or mismatching result line, or a line after it. ``line`` is 1-based;
            a record that ends without a result line reports the line after its last one.
        OSError: the file cannot be read (e.g. FileNotFoundError), or it is not a regular
            file (a FIFO, a device: refused before it is read).
    """
    with _open_record(path) as f:
        return _replay(_record_lines(f), on_state, seeded_draws)


def _replay(
    lines: Iterator[tuple[int, bytes]], on_state: StateCallback | None, seeded_draws: bool
) -> GameState:
    """:func:`replay_record` of a record's ``(line number, line)`` pairs, read as needed."""
    first = next(lines, (1, b""))[1]
    if not first.strip():
        raise RecordError(1, "type", "empty record: expected the header line")
    header = _parse_header(_parse_line(first, 1))
    game = _build_game(header)
    if len(header.players) != game.num_players:
        raise RecordError(1, "players", f"{len(header.players)} players for a game of "
                          f"{game.num_players} seats (rules)")
    if header.agent_seeds is not None and len(header.agent_seeds) != game.num_players:
        raise RecordError(1, "agent_seeds", f"{len(header.agent_seeds)} seeds for "
                          f"{game.num_players} seats")
    state = initial_state(game, header)
    if on_state is not None:
        on_state(state, None)
    chance_kinds = {"draw"}
    line = 1
    for line, raw in lines:  # every line before the result is an action
        plies = line - 2
        obj = _parse_line(raw, line)
        kind = obj["type"]
        if kind == "header":
            raise RecordError(line, "type", "a second header line")
        if kind == "result":
            _check_result(obj, line, state, plies)
            if next(lines, None) is not None:
                raise RecordError(line + 1, "type", "a line after the result line")
            return state
        _check_fields(obj, line, ACTION_FIELDS)
        ply, player, text = obj["ply"], obj["player"], obj["action"]
        if not _is_int(ply):
            raise RecordError(line, "ply", f"expected an integer, got {ply!r}")
        if ply != plies:
            raise RecordError(line, "ply", f"expected ply {plies}, got {ply}")
        if not isinstance(text, str):
            raise RecordError(line, "action", f"expected notation (a string), got {text!r}")
        if state.is_terminal():
            raise RecordError(line, "type", f"the game is over after ply {plies - 1}; "
                              "expected the result line")
        cp = state.current_player
        want: int | str = "chance" if cp == CHANCE else cp
        if player != want or isinstance(player, bool):
            raise RecordError(line, "player", f"the record says {player!r}, but "
                              f"{'chance' if cp == CHANCE else f'seat {cp}'} is to move")
        a = _check_action(state, cp, text, line, chance_kinds)
        if seeded_draws and cp == CHANCE:
            expected = state.clone().draw()
            if expected != a:
                raise RecordError(line, "action", f"{text!r} does not follow the seeded deck: "
                                  f"the deal draws {state.action_to_string(expected)!r} here")
        try:
            state.apply(a)
        except IllegalActionError as e:
            raise RecordError(line, "action", f"{text!r} is not legal here: {e}") from None
        except (ValueError, IndexError, TypeError) as e:
            raise RecordError(line, "action", f"{text!r} cannot be applied here: {e}") from None
        if on_state is not None:
            on_state(state, MoveEvent(plies, cp, int(a), text))
    raise RecordError(line + 1, "type",
                      f"the record ends after line {line} without a result line")


def _check_action(
    state: GameState, cp: int, text: str, line: int, chance_kinds: set[str]
) -> int:
    """The id of ``text`` in ``state``, checked to be of the step's kind: a chance outcome at
    a chance node, a player's action elsewhere (``parse_action`` alone would map
    ``tile@0,-32:SW`` at a chance node, or ``draw:JC`` at the tile step, to some id)."""
    kind = _kind(text)
    where = _where(state, cp)
    if cp == CHANCE:
        example = _chance_example(state)
        if example is not None:
            chance_kinds.add(_kind(example))
        if kind not in chance_kinds:
            hint = f", e.g. {example!r}" if example else ""
            raise RecordError(line, "action", f"{text!r} is {_describe(kind)} {where}: "
                              f"expected a chance outcome{hint}")
    elif kind in chance_kinds:
        raise RecordError(line, "action", f"{text!r} is {_describe(kind)} {where}: chance "
                          "outcomes belong only at chance nodes")
    try:
        a = state.parse_action(text)
    except (NotationError, IllegalActionError) as e:
        raise RecordError(line, "action", str(e)) from None
    except (ValueError, IndexError, TypeError) as e:
        raise RecordError(line, "action", f"{text!r}: {e}") from None
    try:
        canon = state.action_to_string(a)
    except (ValueError, IndexError, TypeError) as e:
        raise RecordError(line, "action", f"{text!r} is not an action here: {e}") from None
    if _kind(canon) != kind:
        raise RecordError(line, "action", f"{text!r} is {_describe(kind)} {where}: expected "
                          f"{_describe(_kind(canon))}")
    return int(a)


def _check_result(obj: dict[str, Any], line: int, state: GameState, plies: int) -> None:
    stated = _parse_result(obj, line)
    if not state.is_terminal():
        raise RecordError(line, "type", f"a result line after ply {plies - 1}, but the game "
                          f"is not over (player {state.current_player} to move)")
    actual = outcome_of(state, plies)
    for name in ("plies", "end_reason", "winners", "places", "returns"):
        a, s = getattr(actual, name), getattr(stated, name)
        if a != s:
            show_a = list(a) if isinstance(a, tuple) else a
            show_s = list(s) if isinstance(s, tuple) else s
            raise RecordError(line, name, f"the record says {show_s!r}, the replay gives "
                              f"{show_a!r}")
