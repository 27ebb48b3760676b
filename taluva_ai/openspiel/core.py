"""The OpenSpiel games' shared core (:mod:`taluva_ai.openspiel`): the game names, the games'
parameters and the engine games behind them, a state's payload (the engine state, its start
and the line of decisions that led to it), and the registry of the games by engine name.
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import make_game

if TYPE_CHECKING:  # annotations only (the game module imports this one)
    from taluva_ai.openspiel.game import _GameBase



TALUVA = "python_taluva"


THURN_UND_TAXIS = "python_thurn_und_taxis"


class OpenSpielIllegalActionError(IllegalActionError, pyspiel.SpielError):
    """An illegal action applied through OpenSpiel: a ``pyspiel.SpielError`` (as OpenSpiel's own
    games raise) and the project's :class:`~taluva_ai.errors.IllegalActionError`, with the
    engine's message, ``action`` and ``rule``; the engine's error is its ``__cause__``. The
    state is unchanged."""


def _taluva_defaults() -> dict[str, Any]:
    from taluva_ai.games.taluva.rules import SOLO_DEFAULTS, RuleSet

    out: dict[str, Any] = {}
    for f in dataclasses.fields(RuleSet):
        if f.name == "solo" or f.name in SOLO_DEFAULTS:
            continue
        name = "players" if f.name == "num_players" else f.name
        out[name] = 0 if f.name == "tiles_per_player" else f.default
    return out


def _tnt_defaults() -> dict[str, Any]:
    from taluva_ai.games.thurn_und_taxis.rules import TnTRules

    return {("players" if f.name == "num_players" else f.name): f.default
            for f in dataclasses.fields(TnTRules)}


def _engine_options(params: dict[str, Any]) -> dict[str, Any]:
    """OpenSpiel parameters to the engine's keyword options (``players`` -> ``num_players``,
    ``tiles_per_player=0`` -> None)."""
    out = {("num_players" if k == "players" else k): v for k, v in params.items()}
    if out.get("tiles_per_player") == 0:
        out["tiles_per_player"] = None
    return out


@lru_cache(maxsize=64)
def _engine_game(name: str, options_json: str) -> Any:
    """The engine game of ``name`` with these options (shared by every state)."""
    return make_game(name, **json.loads(options_json))


def _options_key(game: Any) -> str:
    return json.dumps(game.options(), sort_keys=True)


class _Step:
    """One action of a state's line (a persistent list, newest last, shared by clones): the
    seat that took it (-1: chance), its id, and what the seats see of it (``token``: a str every
    seat sees, or ``(seat, text)`` seen by that seat only, ``?`` for the others). ``texts``
    caches each seat's view of the line up to here (information-state strings); ``facts`` what
    a resample needs of the line (Thurn und Taxis)."""

    __slots__ = ("action", "facts", "player", "prev", "texts", "token")

    def __init__(self, prev: _Step | None, player: int, action: int, token: Any) -> None:
        self.prev = prev
        self.player = player
        self.action = action
        self.token = token
        self.texts: dict[int, str] | None = None
        self.facts: Any = None


def _steps(log: _Step | None) -> list[_Step]:
    """The line's steps, oldest first."""
    out = []
    while log is not None:
        out.append(log)
        log = log.prev
    return out[::-1]


def _seat_view(token: Any, player: int) -> str:
    if isinstance(token, tuple):
        return token[1] if token[0] == player else "?"
    return token


def _line_text(log: _Step | None, player: int) -> str:
    """``player``'s view of the line, space-separated, from the newest step with it cached
    (kept on ``log`` and dropped from that older step: the next call, and the next step's,
    start from there, and the line holds one text per seat)."""
    views = []
    node = log
    text = None
    while node is not None:
        cached = node.texts.get(player) if node.texts is not None else None
        if cached is not None:
            text = cached
            break
        views.append(_seat_view(node.token, player))
        node = node.prev
    if not views:
        return text or ""
    tail = " ".join(reversed(views))
    text = tail if text is None else f"{text} {tail}"
    assert log is not None
    if log.texts is None:
        log.texts = {}
    log.texts[player] = text
    if node is not None and node.texts is not None:
        # the cache moves forward, so a line holds one copy of each seat's text (caching it at
        # every step held the whole line at each: 702 MB for one 4-player game); a state still
        # at that older step rebuilds its text once
        node.texts.pop(player, None)
    return text


class _Replay:
    """Stands in for the engine while a state is given a known line without playing it (a
    resample): ``current_player`` is the seat of the step being recorded."""

    current_player = 0


class _Core:
    """The engine state inside an OpenSpiel state, the position its OpenSpiel history starts
    from (``start``: the game's initial state, or the position given to ``state_from_engine``;
    never changed), the line played from there (``log``, :class:`_Step`), the legal ids of the
    position and the strings asked for at it (caches, dropped when an action is applied).

    OpenSpiel clones a Python state by deep-copying its attributes: a clone copies the engine
    state's arrays and shares the rest. OpenSpiel's C++ serialization pickles them: a pickle
    holds this module's text form (:meth:`OpenSpielState.serialize`), loaded back through the
    same checks as ``game.deserialize_state``.
    """

    __slots__ = ("cache", "engine", "legal", "log", "start")

    def __init__(self, engine: Any, start: Any, log: _Step | None = None) -> None:
        self.engine = engine
        if not isinstance(engine, _Replay):
            engine.record_history = False  # OpenSpiel keeps the history
        self.start = start
        self.log = log
        self.legal: tuple[int, np.ndarray] | None = None
        self.cache: dict[Any, str] | None = None

    def __deepcopy__(self, memo: dict) -> _Core:
        out = _Core(self.engine.clone(), self.start, self.log)
        out.legal = self.legal
        out.cache = self.cache  # same position: entries hold for both; apply drops it
        return out

    def __reduce__(self) -> tuple:
        game = self.engine.game
        return (_core_from_text, (game.name, _options_key(game), _state_text(self)))


def _state_text(core: _Core) -> str:
    """The serialized form of a state (docs/openspiel.md, Serialization)."""
    steps = _steps(core.log)
    history = ",".join(f"{s.player}:{s.action}" for s in steps)
    return (f"history={history}\nmove_number={len(steps)}\n"
            f"start={core.start.to_position_string()}\n"
            f"position={core.engine.to_position_string()}")


def _core_from_text(name: str, options_json: str, text: str) -> _Core:
    """The core of :func:`_state_text`'s ``text`` (OpenSpiel's C++ deserialization: the
    pickle's only call)."""
    game = _openspiel_game(name, options_json)
    core: _Core = game.deserialize_state(text)._core
    return core


def _to_move(p: int) -> str:
    """Who is to move, for messages (an OpenSpiel player id)."""
    if p == int(pyspiel.PlayerId.CHANCE):
        return "chance is to move"
    if p == int(pyspiel.PlayerId.TERMINAL):
        return "the game is over"
    return f"seat {p} is to move"


_SPECS: dict[str, type[_GameBase]] = {}


def openspiel_game(engine_game: Any) -> Any:
    """The OpenSpiel game (``python_taluva`` / ``python_thurn_und_taxis``) of an engine game
    with the same options (cached).

    Raises:
        ValueError: a game with no OpenSpiel counterpart (the Taluva solo variant, a game of
            your own).
    """
    return _openspiel_game(engine_game.name, _options_key(engine_game))


@lru_cache(maxsize=64)
def _openspiel_game(name: str, options_json: str) -> Any:
    options = json.loads(options_json)
    spec = _SPECS.get(name)
    if spec is None or options.get("solo"):
        what = "the solo variant" if options.get("solo") else f"game {name!r}"
        raise ValueError(f"{what} has no OpenSpiel game here (python_taluva takes the "
                         "multiplayer options, python_thurn_und_taxis the Thurn und Taxis ones)")
    params = {("players" if k == "num_players" else k): v for k, v in options.items()}
    if "tiles_per_player" in params and params["tiles_per_player"] is None:
        params["tiles_per_player"] = 0
    return pyspiel.load_game(spec.short_name, params)
