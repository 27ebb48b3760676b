"""Taluva and Thurn und Taxis as OpenSpiel games (``pip install 'taluva-ai[openspiel]'``).

Importing this module registers two OpenSpiel Python games whose states delegate every rule to
this project's engines (:func:`taluva_ai.protocol.make_game`); nothing of the rules is written
twice::

    import pyspiel
    import taluva_ai.openspiel  # registers the games
    game = pyspiel.load_game("python_taluva(players=3,tiles_per_player=12)")
    tnt = pyspiel.load_game("python_thurn_und_taxis(players=2)")

``python_taluva`` takes every multiplayer rule option of docs/engine.md as a game parameter
(``players`` for ``num_players``; ``tiles_per_player=0`` for all 48 tiles); the solo variant
(one player, a score without a declared bound) is not offered. ``python_thurn_und_taxis`` takes
the options of docs/thurn_und_taxis.md (``players``, ``all_provinces_rule``,
``route_tile_fallback``, ``max_rounds``). An invalid value raises the engine's one-line
``RuleError`` / ``TnTRuleError``.

The facts declared (docs/openspiel.md): sequential, explicit stochastic chance (a tile drawn,
a card leaving the supply), terminal rewards, zero-sum returns in ``[-1, 1]``; information
perfect for Taluva and imperfect for Thurn und Taxis and for Taluva with ``tile_preview``.
Observation tensors are the project's encoders (Taluva: :func:`taluva_ai.encoding.encode`
planes ``[C, S, S]`` of a view of radius ``view_radius``, an observation parameter, default
13; Thurn und Taxis: ``float32[536]``). ``state.serialize()`` is text (the history, the move
number, the start and current position strings); ``game.deserialize_state`` replays and checks
it and never unpickles (:class:`SerializedStateError` for anything else).
``resample_from_infostate`` gives a state with a line of its own: only the sampled hidden cards
or tiles, in its history, strings and tensors. ``chance_outcomes()`` away from a chance node
raises ``pyspiel.SpielError``. OpenSpiel 2.0.2's C++ ``pyspiel.MCTSBot`` and
``pyspiel.ISMCTSBot`` crash on Python games: use the Python bots. An illegal action raises
:class:`OpenSpielIllegalActionError` (both a ``pyspiel.SpielError`` and the project's
``IllegalActionError``) with the project's message, and leaves the state as it was.

Interop: :class:`OpenSpielMCTSAgent` (the ``openspiel`` agent of the registry, OpenSpiel's
``MCTSBot`` with random rollouts) plays in ``taluva play`` / ``taluva tournament``;
:class:`AgentBot` lets any agent of this project play in OpenSpiel's ``evaluate_bots``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from functools import lru_cache
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError:  # pragma: no cover - exercised by test_openspiel_missing
    raise ImportError("taluva_ai.openspiel needs OpenSpiel: pip install 'taluva-ai[openspiel]' "
                      "(the open_spiel package)") from None

from taluva_ai.agents.base import Agent
from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import CHANCE, TERMINAL, GameState, chance_observers, make_game

TALUVA = "python_taluva"
THURN_UND_TAXIS = "python_thurn_und_taxis"


class OpenSpielIllegalActionError(IllegalActionError, pyspiel.SpielError):
    """An illegal action applied through OpenSpiel: a ``pyspiel.SpielError`` (as OpenSpiel's own
    games raise) and the project's :class:`~taluva_ai.errors.IllegalActionError`, with the
    engine's message, ``action`` and ``rule``; the engine's error is its ``__cause__``. The
    state is unchanged."""


# -- parameters --------------------------------------------------------------------------------


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


# -- the state's payload -----------------------------------------------------------------------


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


class SerializedStateError(ValueError, pyspiel.SpielError):
    """A string refused by ``game.deserialize_state`` (a ``ValueError`` and OpenSpiel's
    ``pyspiel.SpielError``): not this module's serialized form, a field out of range, a history
    that does not replay legally from its start, or that does not end at its position. The
    message is one line and names the field."""


#: The longest serialized state accepted (characters): a full game of either game is some
#: tens of kilobytes.
MAX_SERIALIZED_CHARS = 4_000_000
_FIELDS = ("history", "move_number", "start", "position")
_HISTORY_ITEM = re.compile(r"(-?[0-9]{1,12}):(-?[0-9]{1,12})")
_COUNT = re.compile(r"[0-9]{1,12}")


def _clip(text: str, most: int = 40) -> str:
    """``text`` quoted, cut to ``most`` characters (a field of the input, in a message)."""
    return repr(_shorten(text, most))


def _shorten(text: str, most: int = 200) -> str:
    """``text`` cut to ``most`` characters, on one line (a message quoted in a message)."""
    text = " ".join(text.split("\n"))
    return text if len(text) <= most else text[:most] + "..."


def _parse_start(engine_game: Any, text: str) -> Any:
    if hasattr(engine_game, "state_from_position"):
        return engine_game.state_from_position(text)
    from taluva_ai.games.taluva.position import parse_position

    return parse_position(engine_game, text)


# -- observers ---------------------------------------------------------------------------------


class _InfoStateObserver:
    """Information-state strings (no tensor)."""

    tensor = None

    def __init__(self) -> None:
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: Any, player: int) -> None:
        pass

    def string_from(self, state: Any, player: int) -> str:
        return state.information_state_text(player)


class _Observer:
    """The default observation: the project's encoder as the tensor, the engine's view of
    ``player`` as the string."""

    def __init__(self, game: _GameBase, params: dict[str, Any]) -> None:
        self._game = game
        self._params = game.observer_params(params)
        shape = game.observation_shape(self._params)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: Any, player: int) -> None:
        self.tensor[:] = self._game.observation_values(state._core.engine, player,
                                                       self._params).ravel()

    def string_from(self, state: Any, player: int) -> str:
        return state.observation_text(player)


# -- games -------------------------------------------------------------------------------------


class _GameBase(pyspiel.Game):
    """What both games share; subclasses give the game's facts and texts."""

    engine_name = ""
    short_name = ""
    long_name = ""

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        raise NotImplementedError

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**self.defaults(), **(params or {})}
        unknown = sorted(set(p) - set(self.defaults()))
        if unknown:
            raise ValueError(f"{self.short_name}: unknown parameter(s) {', '.join(unknown)}; "
                             f"known: {', '.join(self.defaults())}")
        options = _engine_options(p)
        self.engine_game = _engine_game(self.engine_name, json.dumps(options, sort_keys=True))
        template = self.engine_game.new_initial_state(seed=0)
        template.record_history = False
        self._template = template
        super().__init__(self.game_type(self.imperfect()), self.game_info(), p)

    # the facts
    def imperfect(self) -> bool:
        return self.imperfect_rules(self.engine_game)

    @classmethod
    def imperfect_rules(cls, engine_game: Any) -> bool:
        raise NotImplementedError

    @classmethod
    def game_type(cls, imperfect: bool) -> pyspiel.GameType:
        info = pyspiel.GameType.Information
        return pyspiel.GameType(
            short_name=cls.short_name,
            long_name=cls.long_name,
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
            information=(info.IMPERFECT_INFORMATION if imperfect
                         else info.PERFECT_INFORMATION),
            utility=pyspiel.GameType.Utility.ZERO_SUM,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=4,
            min_num_players=2,
            provides_information_state_string=True,
            provides_information_state_tensor=False,
            provides_observation_string=True,
            provides_observation_tensor=True,
            parameter_specification=cls.defaults(),
        )

    def game_info(self) -> pyspiel.GameInfo:
        g = self.engine_game
        return pyspiel.GameInfo(
            num_distinct_actions=g.num_actions,
            max_chance_outcomes=g.max_chance_outcomes,
            num_players=g.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.max_decisions(),
        )

    def max_decisions(self) -> int:
        """Most player decisions in a game (OpenSpiel's ``max_game_length``)."""
        return int(self.engine_game.max_game_length)

    def max_chance_nodes_in_history(self) -> int:
        return int(self.engine_game.max_game_length)

    # states
    def new_initial_state(self) -> OpenSpielState:
        return OpenSpielState(self, _Core(self._template.clone(), self._template))

    def state_from_engine(self, engine_state: GameState) -> OpenSpielState:
        """An OpenSpiel state holding a copy of the engine state ``engine_state`` (a position
        of a game with these options); its OpenSpiel history is empty, and its information-
        state strings start at this position.

        Raises:
            ValueError: the state belongs to another game or other options.
        """
        g = getattr(engine_state, "game", None)
        if g is None or g.name != self.engine_name or \
                _options_key(g) != _options_key(self.engine_game):
            raise ValueError(f"{self.short_name}: the state belongs to another game or other "
                             f"options ({g!r}, this game: {self.engine_game!r})")
        return OpenSpielState(self, _Core(engine_state.clone(), engine_state.clone()))

    def deserialize_state(self, text: str) -> OpenSpielState:
        """The state of ``state.serialize()``'s ``text``: its start position is parsed by the
        engine's checked parser, its history replayed from there action by action (each one
        legal for the seat to move), and the end compared with its position. Nothing in it is
        unpickled or run.

        Raises:
            SerializedStateError: any other string (one line naming the field), among them
                OpenSpiel's default ``__dict__=`` (pickle) form of Python states.
        """
        name = self.short_name

        def refuse(why: str) -> SerializedStateError:
            return SerializedStateError(f"{name}: serialized state refused: {why}")

        if not isinstance(text, str):
            raise refuse(f"expected a str, got {type(text).__name__}")
        if len(text) > MAX_SERIALIZED_CHARS:
            raise refuse(f"{len(text)} characters, more than {MAX_SERIALIZED_CHARS}")
        if "__dict__=" in text:
            raise refuse("it holds '__dict__=' (a pickle, OpenSpiel's default form for Python "
                         "states), which is never loaded; states serialize as history, "
                         "move_number, start and position lines")
        lines = text.split("\n")
        if len(lines) == len(_FIELDS) + 1 and lines[-1] == "":
            lines.pop()
        if len(lines) != len(_FIELDS):
            raise refuse(f"expected {len(_FIELDS)} lines ({', '.join(f + '=' for f in _FIELDS)}"
                         f"), got {len(lines)}")
        values = {}
        for i, (line, key) in enumerate(zip(lines, _FIELDS, strict=True)):
            if not line.startswith(key + "="):
                raise refuse(f"line {i + 1}: expected '{key}=...', got {_clip(line)}")
            values[key] = line[len(key) + 1:]
        g = self.engine_game
        n = g.num_players
        most = self.max_decisions() + self.max_chance_nodes_in_history()
        items = values["history"].split(",") if values["history"] else []
        if len(items) > most:
            raise refuse(f"history: {len(items)} actions, more than a game has ({most})")
        history = []
        for i, item in enumerate(items):
            m = _HISTORY_ITEM.fullmatch(item)
            if m is None:
                raise refuse(f"history item {i + 1}: {_clip(item)} is not 'player:action'")
            player, action = int(m.group(1)), int(m.group(2))
            if not -1 <= player < n:
                raise refuse(f"history item {i + 1}: player {player} is not -1 (chance) or a "
                             f"seat 0..{n - 1}")
            top = g.max_chance_outcomes if player == -1 else g.num_actions
            if not 0 <= action < top:
                raise refuse(f"history item {i + 1}: action {action} is outside 0..{top - 1}")
            history.append((player, action))
        if _COUNT.fullmatch(values["move_number"]) is None:
            raise refuse(f"move_number: {_clip(values['move_number'])} is not a count")
        if int(values["move_number"]) != len(history):
            raise refuse(f"move_number: {int(values['move_number'])}, but the history has "
                         f"{len(history)} actions")
        try:
            start = _parse_start(g, values["start"])
        except (ValueError, KeyError, IndexError) as e:
            raise refuse(f"start: {_shorten(str(e))}") from None
        state = OpenSpielState(self, _Core(start.clone(), start))
        for i, (player, action) in enumerate(history):
            to_move = state.current_player()
            if to_move != player:
                raise refuse(f"history item {i + 1}: {player}:{action}, but "
                             f"{_to_move(to_move)}")
            try:
                state.apply_action(action)
            except OpenSpielIllegalActionError as e:
                raise refuse(f"history item {i + 1}: {_shorten(str(e))}") from None
        if str(state) != values["position"]:
            raise refuse("position: not the position the history leads to from start")
        return state

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: dict[str, Any] | None = None) -> Any:
        """The default observation (``iig_obs_type`` None, or public and private information
        without perfect recall) or information-state strings (``perfect_recall``); None for
        the other kinds (no factored observations)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall
                                    and iig_obs_type.private_info
                                    == pyspiel.PrivateInfoType.SINGLE_PLAYER):
            return _Observer(self, params or {})
        if iig_obs_type.perfect_recall:
            if params:
                raise ValueError(f"{self.short_name}: information states take no parameters, "
                                 f"got {params}")
            return _InfoStateObserver()
        return None

    # texts and tensors (game-specific)
    def observer_params(self, params: dict[str, Any]) -> dict[str, Any]:
        if {k for k in params if k != "name"}:
            raise ValueError(f"{self.short_name}: observations take no parameters, got {params}")
        return {}

    def observation_shape(self, params: dict[str, Any]) -> tuple[int, ...]:
        raise NotImplementedError

    def observation_values(self, engine: Any, player: int, params: dict[str, Any]
                           ) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def observation_text(cls, engine: Any, player: int) -> str:
        raise NotImplementedError

    @classmethod
    def chance_text(cls, outcome: int) -> str:
        raise NotImplementedError

    @classmethod
    def chance_receiver(cls, engine: Any) -> int | None:
        """At a chance node: the one seat that sees the outcome (the engine's
        ``chance_visible_to``), or None when all do."""
        seen = chance_observers(engine)
        return seen[0] if seen is not None and len(seen) == 1 else None

    @classmethod
    def decision_token(cls, engine: Any, action: int) -> str:
        """What every seat sees of a decision (applied next in ``engine``)."""
        return engine.game.action_to_string(action)

    @classmethod
    def resample_line(cls, core: _Core, steps: list[_Step], player: int,
                      rng: np.random.Generator) -> tuple[Any, Any, dict[int, int]]:
        """A line consistent with what ``player`` has seen of ``core``'s: ``(start, engine,
        changed)``, the start position, the engine state it leads to and the new outcome of
        each chance step (by index in ``steps``) whose outcome was redrawn; every other step
        is kept. Nothing of the true hidden outcomes is left in them."""
        raise NotImplementedError


class TaluvaOpenSpielGame(_GameBase):
    """``python_taluva``: Taluva (docs/rules.md) with the options of docs/engine.md.

    Facts: 2-4 players; ``num_distinct_actions`` = the engine's ``14 H`` (``H`` hexes of the
    board of ``board_radius``); 25 chance outcomes (tile types); ``max_game_length`` = 2 per
    tile in play (place, build); perfect information unless ``tile_preview``.
    """

    engine_name = "taluva"
    short_name = TALUVA
    long_name = "Taluva (taluva-ai engine)"

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return _taluva_defaults()

    @classmethod
    def imperfect_rules(cls, engine_game: Any) -> bool:
        return bool(engine_game.rules.tile_preview)

    def max_decisions(self) -> int:
        return 2 * int(self.engine_game.rules.deck_size)

    def max_chance_nodes_in_history(self) -> int:
        return int(self.engine_game.rules.deck_size)

    def observer_params(self, params: dict[str, Any]) -> dict[str, Any]:
        from taluva_ai.games.taluva.encoding import DEFAULT_VIEW_RADIUS

        params = {k: v for k, v in params.items() if k != "name"}  # from a "name(k=v)" string
        unknown = sorted(set(params) - {"view_radius"})
        if unknown:
            raise ValueError(f"{TALUVA}: unknown observation parameter(s) {', '.join(unknown)}; "
                             "known: view_radius")
        r = params.get("view_radius", DEFAULT_VIEW_RADIUS)
        if not isinstance(r, int) or isinstance(r, bool) or not 1 <= r <= 40:
            raise ValueError(f"{TALUVA}: view_radius must be an integer in 1..40, got {r!r}")
        return {"view_radius": r}

    def observation_shape(self, params: dict[str, Any]) -> tuple[int, ...]:
        from taluva_ai.games.taluva.encoding import num_planes

        side = 2 * params["view_radius"] + 1
        return (num_planes(self.engine_game.num_players), side, side)

    def observation_values(self, engine: Any, player: int, params: dict[str, Any]
                           ) -> np.ndarray:
        from taluva_ai.games.taluva.encoding import encode

        return encode(engine, player, view_radius=params["view_radius"])[0]

    @classmethod
    def observation_text(cls, engine: Any, player: int) -> str:
        from taluva_ai.games.taluva.tiles import tile_name

        lines = [f"seat {player} | {engine.summary()}"]
        if engine.game.rules.tile_preview:
            held = engine.observation(player)["hands"][player]
            lines.append(f"seat {player} holds {tile_name(held) if held >= 0 else '-'}")
        lines.append(engine.to_text(legend=False).rstrip("\n"))
        return "\n".join(lines)

    @classmethod
    def chance_text(cls, outcome: int) -> str:
        from taluva_ai.games.taluva.actions import Action, ActionKind

        return str(Action(ActionKind.DRAW, tile=int(outcome)))

    @classmethod
    def resample_line(cls, core: _Core, steps: list[_Step], player: int,
                      rng: np.random.Generator) -> tuple[Any, Any, dict[int, int]]:
        """Taluva: what ``player`` has not seen is the undrawn tiles' order and, with
        ``tile_preview``, the tile each other seat holds (not yet in play). Those held tiles
        and the undrawn tiles are dealt again (the engine's ``resample``); a held tile drawn
        within the line changes its draw there (and its place in the deck's drawn part); the
        start's deck is the new deck, so that every draw of the line finds its tile next."""
        from taluva_ai.games.taluva.game import TaluvaState
        from taluva_ai.games.taluva.state import M_BOTTOM, M_DRAWN, M_PLACED, P_HAND, Step
        from taluva_ai.games.taluva.tiles import NUM_TILES

        engine, start = core.engine, core.start
        drawn = int(engine.meta[M_DRAWN])
        end = NUM_TILES - int(engine.meta[M_BOTTOM])
        first = int(start.meta[M_DRAWN])  # deck index of the line's first draw
        others = []  # the seats whose held tile `player` has not seen (as the engine's resample)
        if engine.game.rules.tile_preview:
            in_play = engine.current_player if engine.step in (Step.TILE, Step.BUILD) else None
            others = [q for q in range(engine.num_players)
                      if q != player and q != in_play and engine.players[q, P_HAND] >= 0]
        # the line's draw of each such held tile: the seat's last draw (None: held since start)
        last_draw: dict[int, tuple[int, int]] = {}
        k = 0
        for i, s in enumerate(steps):
            if s.player == -1:
                if isinstance(s.token, tuple):
                    last_draw[s.token[0]] = (i, first + k)
                k += 1
        pool = np.concatenate([engine.deck[drawn:end],
                               engine.players[others, P_HAND].astype(np.int8)])
        pool = rng.permutation(np.sort(pool))  # sorted first: depends only on what is known
        out = TaluvaState(engine.game, engine.cells.copy(), engine.players.copy(),
                          engine.deck.copy(), engine.meta.copy())
        new_start = TaluvaState(start.game, start.cells.copy(), start.players.copy(),
                                start.deck.copy(), start.meta.copy())
        changed = {}
        placed = int(start.meta[M_PLACED])
        region = [int(t) for t in start.deck[placed:first]]
        redealt = False
        for j, q in enumerate(others):
            tile = pool[j]
            out.players[q, P_HAND] = tile
            if q in last_draw:
                i, d = last_draw[q]
                out.deck[d] = tile
                changed[i] = int(tile)
            else:  # held since the start: its draw is among the start's drawn, unplaced tiles
                true = int(start.players[q, P_HAND])
                new_start.players[q, P_HAND] = tile
                if true in region:
                    region.remove(true)
                else:  # pragma: no cover - a start whose drawn tiles are not placed in order
                    k = int(np.flatnonzero(new_start.deck[:first] == true)[-1])
                    new_start.deck[k] = tile
                    continue
                region.append(int(tile))
                redealt = True
        if redealt:  # in an order that says nothing of which seat holds which tile
            new_start.deck[placed:first] = sorted(region)
        out.deck[drawn:end] = pool[len(others):]
        new_start.deck[first:] = out.deck[first:]
        out.deck[:first] = new_start.deck[:first]
        return new_start, out, changed

    @classmethod
    def decision_token(cls, engine: Any, action: int) -> str:
        text = engine.game.action_to_string(action)
        if engine.tile >= 0:  # the tile placed is public (with tile_preview it was hidden)
            from taluva_ai.games.taluva.tiles import tile_name

            return f"{tile_name(engine.tile)}:{text}"
        return text


class ThurnUndTaxisOpenSpielGame(_GameBase):
    """``python_thurn_und_taxis``: Thurn und Taxis (docs/thurn_und_taxis.md).

    Facts: 2-4 players; 327 distinct actions; 22 chance outcomes (the city of a card leaving the
    supply); imperfect information (hands and the supply are hidden); ``max_game_length`` the
    engine's bound on actions (``6 + 100 x max_rounds x players``).
    """

    engine_name = "thurn_und_taxis"
    short_name = THURN_UND_TAXIS
    long_name = "Thurn und Taxis (taluva-ai engine)"

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return _tnt_defaults()

    @classmethod
    def imperfect_rules(cls, engine_game: Any) -> bool:
        return True

    def observation_shape(self, params: dict[str, Any]) -> tuple[int, ...]:
        return tuple(self.engine_game.observation_tensor_shape)

    def observation_values(self, engine: Any, player: int, params: dict[str, Any]
                           ) -> np.ndarray:
        return engine.observation_tensor(player)

    @classmethod
    def observation_text(cls, engine: Any, player: int) -> str:
        parts = []
        for key, v in engine.observation(player).items():
            if isinstance(v, np.ndarray):
                rows = (v.reshape(-1, v.shape[-1]) if v.ndim > 1 else v[None]).tolist()
                v = "/".join(",".join(map(str, row)) for row in rows)
            parts.append(f"{key}={v}")
        return " ".join(parts)

    @classmethod
    def chance_text(cls, outcome: int) -> str:
        from taluva_ai.games.thurn_und_taxis.actions import chance_to_string

        return chance_to_string(outcome)

    #: Deals tried by :meth:`resample_line` before it gives up.
    RESAMPLE_TRIES = 1000

    @classmethod
    def resample_line(cls, core: _Core, steps: list[_Step], player: int,
                      rng: np.random.Generator) -> tuple[Any, Any, dict[int, int]]:
        """Thurn und Taxis: what ``player`` has not seen is the city of each card dealt to
        another hand from the supply (and of the other hands' unknown cards at the start).
        A deal of those (:func:`_tnt_deal`) respects the cards later seen leaving those hands
        and the make-up of each reshuffled supply; the line is then replayed from its start
        with the new deal, and a deal under which the line does not replay exactly (another
        hand would have changed what was forced: a surplus discard the engine makes by itself
        when only one card may go) is drawn again.

        Raises:
            RuntimeError: no deal replayed the line in :attr:`RESAMPLE_TRIES` tries.
        """
        from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisState
        from taluva_ai.games.thurn_und_taxis.state import L_DISCARD, L_HAND, L_KNOWN, L_SUPPLY

        facts = _tnt_facts(core, steps)
        piles = facts[4]

        def same_pile(engine: Any, i: int) -> bool:  # what the engine discarded by itself
            return bool(np.array_equal(engine.cards[L_DISCARD], piles[i]))

        start = core.start
        n = start.num_players
        start_unknown, supplies = facts[0], facts[1]
        unseen = supplies[0] + sum(start_unknown[q] for q in range(n) if q != player)
        for _ in range(cls.RESAMPLE_TRIES):
            changed, dealt = _tnt_deal(facts, player, n, rng)
            cards, route, houses, players, meta = start._copy_arrays()
            # a seed of its own: the true one, with the public line, would replay the true deal
            new_start = ThurnUndTaxisState(start.game, cards, route, houses, players, meta,
                                           seed=int(rng.integers(2**62)))
            c = new_start.cards
            for q in range(n):
                if q != player:
                    c[L_HAND + q] = c[L_KNOWN + q] + dealt[q]
            c[L_SUPPLY] = unseen - dealt.sum(axis=0)
            # before the first unseen card of the line (when none is held at the start) the
            # line is the true one
            trusted = 0 if dealt.any() else min(changed, default=len(steps))
            engine = _replay_line(new_start, steps, changed, trusted, same_pile)
            if engine is not None:
                return new_start, engine, changed
        raise RuntimeError(f"resample_from_infostate: no deal of the unseen cards replayed the "
                           f"line in {cls.RESAMPLE_TRIES} tries")


# -- states ------------------------------------------------------------------------------------


def _replay_line(start: Any, steps: list[_Step], changed: dict[int, int], trusted: int = 0,
                 check: Any = None) -> Any:
    """The engine state ``steps`` lead to from ``start`` with the outcomes of ``changed``, or
    None when the line does not replay (a step by another seat than the one to move, an
    illegal action, or ``check(engine, i)`` false after step ``i``). The first ``trusted``
    steps are known to replay (unchecked)."""
    engine = start.clone()
    engine.record_history = False
    for s in steps[:trusted]:
        engine.apply_unchecked(s.action)
    for i, s in enumerate(steps[trusted:], trusted):
        if engine.current_player != s.player:
            return None
        try:
            engine.apply(changed.get(i, s.action))
        except IllegalActionError:
            return None
        if check is not None and not check(engine, i):
            return None
    return engine


def _tnt_deal(facts: tuple, player: int, n: int, rng: np.random.Generator
              ) -> tuple[dict[int, int], np.ndarray]:
    """One random deal of what ``player`` has not seen of a Thurn und Taxis line
    (:func:`_tnt_facts`): ``(changed, dealt)``, the city of each card dealt to another hand
    within the line (by step index) and the unknown cards of each other hand at the start.

    Each card another seat played or discarded while none of its known cards was of that city
    came from one of its unseen draws before: tied to one at random among those whose
    stretch (the supply between two reshuffles) still holds that city. The other unseen draws
    of a stretch get, in random order, the cities of that stretch's supply that ``player``
    did not see drawn; what is left of the last stretch is the supply now."""
    start_unknown, supplies, draws, leaves, _ = facts
    cities = len(supplies[0])
    pools = [s.copy() for s in supplies]
    slots: list[tuple[int, int, int]] = []  # (step index, -1 at the start; seat; stretch)
    for q in range(n):
        if q != player:
            pools[0] += start_unknown[q]
            slots += [(-1, q, 0)] * int(start_unknown[q].sum())
    for i, to, city, stretch in draws:
        if to == -1 or to == player:
            pools[stretch][city] -= 1
        else:
            slots.append((i, to, stretch))
    city_of: list[int] = [-1] * len(slots)
    # the unseen draws of one seat and stretch made before a leave are interchangeable for every
    # later leave, so the search branches on the stretch only
    open_slots: dict[tuple[int, int], list[int]] = {}
    for k, (_, q, stretch) in enumerate(slots):
        open_slots.setdefault((q, stretch), []).append(k)
    todo = [(i, q, c) for i, q, c in leaves if q != player]
    cap = pools
    # depth-first over the leaves in order: frames[t] = [stretches still to try, choice made]
    frames: list[list[Any]] = []
    t = 0
    while t < len(todo):
        i, q, c = todo[t]
        if len(frames) == t:
            stretches = [e for e in range(len(cap)) if cap[e][c] > 0 and any(
                slots[k][0] <= i for k in open_slots.get((q, e), ()))]
            rng.shuffle(stretches)
            frames.append([stretches, None])
        frame = frames[t]
        if frame[1] is not None:  # back here: undo the choice that led nowhere
            e, k = frame[1]
            frame[1] = None
            city_of[k] = -1
            cap[e][c] += 1
            open_slots[(q, e)].append(k)
        if not frame[0]:
            frames.pop()
            t -= 1
            if t < 0:  # the true deal is one answer, so this cannot happen
                raise RuntimeError("resample_from_infostate: no deal fits the cards seen")
            continue
        e = frame[0].pop()
        ready = [k for k in open_slots[(q, e)] if slots[k][0] <= i]
        k = ready[int(rng.integers(len(ready)))]
        open_slots[(q, e)].remove(k)
        cap[e][c] -= 1
        city_of[k] = c
        frame[1] = (e, k)
        t += 1
    tied = [c >= 0 for c in city_of]
    for e, left in enumerate(cap):
        free = [k for k in range(len(slots)) if not tied[k] and slots[k][2] == e]
        cards = rng.permutation(np.repeat(np.arange(cities), left))
        for k, city in zip(free, cards[:len(free)], strict=True):
            city_of[k] = int(city)
    changed = {}
    dealt = np.zeros((n, cities), np.int64)
    for k, (i, q, _) in enumerate(slots):
        if i >= 0:
            changed[i] = city_of[k]
        else:
            dealt[q, city_of[k]] += 1
    return changed, dealt


def _tnt_facts(core: _Core, steps: list[_Step]) -> tuple:
    """What a Thurn und Taxis resample needs of the line, whoever asks (cached on its last
    step): ``(start_unknown, supplies, draws, leaves, piles)``: the unknown cards of each hand
    at the start (``int64[n, 22]``, hand less known cards), the supply at the start and after
    each reshuffle, each card dealt from the supply ``(step index, seat of the hand or -1 for the
    display, city, reshuffles before it)``, each unknown card that left a hand ``(step
    index, seat, city)``, and the discard pile after each step (``int8[steps, 22]``). Found by
    replaying the line from its start."""
    from taluva_ai.games.thurn_und_taxis.state import (
        L_DISCARD,
        L_HAND,
        L_KNOWN,
        L_SUPPLY,
        M_CHANCE_TO,
        M_PLAYER,
        M_RESHUFFLES,
        TO_HAND,
    )

    last = steps[-1] if steps else None
    if last is not None and last.facts is not None:
        return last.facts
    eng = core.start.clone()
    eng.record_history = False
    n = eng.num_players

    def unknown() -> np.ndarray:
        c = eng.cards.astype(np.int64)
        return c[L_HAND:L_HAND + n] - c[L_KNOWN:L_KNOWN + n]

    before = unknown()
    start_unknown = before.copy()
    supplies = [eng.cards[L_SUPPLY].astype(np.int64)]
    draws = []
    leaves = []
    piles = np.empty((len(steps), eng.cards.shape[1]), eng.cards.dtype)
    for i, s in enumerate(steps):
        reshuffles = int(eng.meta[M_RESHUFFLES])
        if s.player == -1:
            to = int(eng.meta[M_PLAYER]) if eng.meta[M_CHANCE_TO] == TO_HAND else -1
            draws.append((i, to, s.action, len(supplies) - 1))
            if to >= 0:
                before[to, s.action] += 1
        eng.apply_unchecked(s.action)
        after = unknown()
        for q, c in zip(*np.nonzero(before > after), strict=True):
            leaves += [(i, int(q), int(c))] * int(before[q, c] - after[q, c])
        if int(eng.meta[M_RESHUFFLES]) != reshuffles:
            supplies.append(eng.cards[L_SUPPLY].astype(np.int64))
        before = after
        piles[i] = eng.cards[L_DISCARD]
    facts = (start_unknown, supplies, draws, leaves, piles)
    if last is not None:
        last.facts = facts
    return facts


class OpenSpielState(pyspiel.State):
    """An OpenSpiel state over one engine state (:attr:`engine_state`)."""

    def __init__(self, game: _GameBase, core: _Core | None = None) -> None:
        super().__init__(game)
        self._core = core if core is not None else _Core(game._template.clone(), game._template)

    @property
    def engine_state(self) -> Any:
        """The engine state (live: apply actions through OpenSpiel, not on it)."""
        return self._core.engine

    def _spec(self) -> type[_GameBase]:
        return _SPECS[self._core.engine.game.name]

    def current_player(self) -> int:
        p = self._core.engine.current_player
        if p == CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        if p == TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        return int(p)

    def _legal(self) -> np.ndarray:
        core = self._core
        ply = core.engine.ply
        if core.legal is None or core.legal[0] != ply:
            core.legal = (ply, core.engine.legal_actions())
        return core.legal[1]

    def _legal_actions(self, player: int) -> list[int]:
        return self._legal().tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``[(outcome, probability)]`` of the chance node (the engine's).

        Raises:
            pyspiel.SpielError: not a chance node (a decision or the end), as OpenSpiel's own
                games do.
        """
        engine = self._core.engine
        p = engine.current_player
        if p != CHANCE:
            raise pyspiel.SpielError(f"chance_outcomes(): not a chance node "
                                     f"({_to_move(self.current_player())})")
        return engine.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        core = self._core
        engine = core.engine
        if engine.__class__ is _Replay:  # a known line being recorded (_with_line)
            return
        spec = self._spec()
        a = int(action)
        chance = engine.current_player == CHANCE
        player = -1 if chance else int(engine.current_player)
        seat = spec.chance_receiver(engine) if chance else None
        token: Any = ""
        fast = False
        if not chance and not engine.is_terminal():
            legal = self._legal()
            i = int(np.searchsorted(legal, a))
            fast = i < legal.size and legal[i] == a
            token = spec.decision_token(engine, a) if fast else ""
        try:
            if fast:
                engine.apply_unchecked(a)  # a legal id of this very position
            else:
                engine.apply(a)
        except IllegalActionError as e:
            raise OpenSpielIllegalActionError(e.action, e.rule, str(e)) from e
        if chance:
            token = spec.chance_text(a) if seat is None else (seat, spec.chance_text(a))
        core.log = _Step(core.log, player, a, token)
        core.cache = None

    def _action_to_string(self, player: int, action: int) -> str:
        spec = self._spec()
        if player == pyspiel.PlayerId.CHANCE:
            return spec.chance_text(action)
        return self._core.engine.game.action_to_string(action)

    def is_terminal(self) -> bool:
        return self._core.engine.is_terminal()

    def returns(self) -> list[float]:
        return self._core.engine.returns().tolist()

    def __str__(self) -> str:
        """The engine's position string (the whole state, hidden information included)."""
        return self._core.engine.to_position_string()

    def serialize(self) -> str:
        """This state as text, for ``game.deserialize_state``: four lines, ``history=`` (the
        OpenSpiel history, ``player:action`` comma-separated, -1 for chance), ``move_number=``,
        ``start=`` (the engine's position string of the position the history starts from) and
        ``position=`` (the engine's position string now). No pickle."""
        return _state_text(self._core)

    def _cached(self, key: Any, make: Any) -> str:
        core = self._core
        if core.cache is None:
            core.cache = {}
        text = core.cache.get(key)
        if text is None:
            text = core.cache[key] = make()
        return text

    def observation_text(self, player: int) -> str:
        """The observation string of ``player`` (cached at this position)."""
        return self._cached(("obs", player),
                            lambda: self._spec().observation_text(self._core.engine, player))

    def information_state_text(self, player: int) -> str:
        """What ``player`` has seen: its seat, every action and chance outcome in order (an
        outcome seen by another seat only as ``?``; a Taluva placement with its tile), and with
        imperfect information its current observation string. Cached per position and seat;
        the line's part grows step by step from the last string asked for."""
        return self._cached(("info", player), lambda: self._information_state_text(player))

    def _information_state_text(self, player: int) -> str:
        text = f"seat {player}: " + _line_text(self._core.log, player)
        if self._spec().imperfect_rules(self._core.engine.game):
            text += "\n" + self.observation_text(player)
        return text

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> Any:
        """A state consistent with everything ``player_id`` has seen, with a line of its own:
        the chance outcomes hidden from that seat (cards dealt to other hands, other seats'
        held tiles) and the hidden order of what is left are drawn again at random (seeded
        from one draw of ``probability_sampler``), so the copy's ``history()``, every seat's
        information-state string, its observations and its position string hold the sampled
        cards or tiles, never the true ones, and its history replays from its start to it
        (``serialize`` / ``deserialize_state`` round-trip). The seat's own information state
        and observation are unchanged. A draw respects what the seat saw later (a card another
        seat played from its hand, the make-up of a reshuffled supply, a tile put in play); it
        is not weighted by how likely the other seats' moves made each deal. Python only
        (OpenSpiel's C++ algorithms do not call it).

        Raises:
            ValueError: ``player_id`` is not a seat.
        """
        core = self._core
        n = core.engine.num_players
        p = int(player_id)
        if not 0 <= p < n:
            raise ValueError(f"resample_from_infostate: player must be a seat 0..{n - 1}, "
                             f"got {player_id}")
        seed = int(float(probability_sampler()) * 2**32) % 2**32
        rng = np.random.default_rng(seed)
        steps = _steps(core.log)
        spec = self._spec()
        start, engine, changed = spec.resample_line(core, steps, p, rng)
        line = []
        for i, s in enumerate(steps):
            if i in changed:
                a = changed[i]
                line.append((s.player, a, (s.token[0], spec.chance_text(a))))
            else:
                line.append((s.player, s.action, s.token))
        return _with_line(self.get_game(), start, engine, line)


def _with_line(game: _GameBase, start: Any, engine: Any, line: list[tuple[int, int, Any]]
               ) -> OpenSpielState:
    """A state at ``engine`` whose OpenSpiel history is ``line`` (``(player, action, token)``
    from ``start``), recorded without playing it: the caller knows the line leads there."""
    replay = _Replay()
    out = OpenSpielState(game, _Core(replay, start))
    for player, action, _ in line:
        replay.current_player = player
        out.apply_action(action)
    log = None
    for player, action, token in line:
        log = _Step(log, player, action, token)
    out._core = _Core(engine, start, log)
    return out


def _to_move(p: int) -> str:
    """Who is to move, for messages (an OpenSpiel player id)."""
    if p == int(pyspiel.PlayerId.CHANCE):
        return "chance is to move"
    if p == int(pyspiel.PlayerId.TERMINAL):
        return "the game is over"
    return f"seat {p} is to move"


_SPECS: dict[str, type[_GameBase]] = {}


def _register() -> None:
    for cls in (TaluvaOpenSpielGame, ThurnUndTaxisOpenSpielGame):
        _SPECS[cls.engine_name] = cls
        pyspiel.register_game(cls.game_type(cls is ThurnUndTaxisOpenSpielGame), cls)


_register()


# -- interop: OpenSpiel's MCTS as an agent, agents as OpenSpiel bots -----------------------------


_ENVELOPE_HEAD = ("# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\n"
                  "Version: 1\n\n[Game]\n")


def serialize_game_and_state(game: Any, state: OpenSpielState) -> str:
    """``pyspiel.serialize_game_and_state``'s layout (meta, game string, state) with the state
    in this module's text form (:meth:`OpenSpielState.serialize`), for
    :func:`deserialize_game_and_state`."""
    return f"{_ENVELOPE_HEAD}{game}\n[State]\n{state.serialize()}"


def deserialize_game_and_state(text: str) -> tuple[Any, OpenSpielState]:
    """The game and state of :func:`serialize_game_and_state`'s ``text``, loaded without
    unpickling: use it, not ``pyspiel.deserialize_game_and_state`` (OpenSpiel's C++ code
    unpickles the ``__dict__=`` line of any Python game's state), for text you did not write.

    Raises:
        SerializedStateError: not that layout, a game other than ``python_taluva`` and
            ``python_thurn_und_taxis``, a game parameter out of range, of a wrong type or
            unknown (named), or a state refused by ``game.deserialize_state``.
    """
    if not isinstance(text, str) or not text.startswith(_ENVELOPE_HEAD):
        raise SerializedStateError("serialized game and state refused: it does not start "
                                   "with OpenSpiel's header ([Meta] Version: 1, [Game])")
    game_string, sep, state_text = text[len(_ENVELOPE_HEAD):].partition("\n[State]\n")
    name = game_string.split("(", 1)[0]
    if not sep or name not in (TALUVA, THURN_UND_TAXIS) or "\n" in game_string:
        raise SerializedStateError(f"serialized game and state refused: the game is "
                                   f"{_clip(game_string)}, not {TALUVA} or {THURN_UND_TAXIS}")
    try:
        game = pyspiel.load_game(game_string)
    except (ValueError, pyspiel.SpielError) as e:  # RuleError, TnTRuleError; a parameter of
        # a wrong type or name: the message names the parameter
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SerializedStateError(f"serialized game and state refused: a parameter of "
                                   f"[Game] {name}: {_shorten(reason, 400)}") from None
    return game, game.deserialize_state(state_text)


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


@dataclasses.dataclass(frozen=True)
class OpenSpielMCTSConfig:
    """Parameters of the ``openspiel`` agent (``openspiel:sims=400,uct_c=2``).

    Attributes:
        bot: the OpenSpiel bot; ``mcts`` (``open_spiel.python.algorithms.mcts.MCTSBot``).
        sims: simulations per move (MCTSBot's ``max_simulations``).
        uct_c: UCT's exploration constant (OpenSpiel's MCTS example uses 2).
        rollouts: random rollouts per leaf (``RandomRolloutEvaluator``'s ``n_rollouts``).
        solve: back up solved subtrees (MCTS-Solver), MCTSBot's ``solve``.
    """

    bot: str = "mcts"
    sims: int = 400
    uct_c: float = 2.0
    rollouts: int = 1
    solve: bool = True

    def __post_init__(self) -> None:
        if self.bot != "mcts":
            raise ValueError(f"openspiel parameter bot={self.bot!r}: the bot offered is 'mcts'")
        for name in ("sims", "rollouts"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"openspiel parameter {name}={v!r} must be a positive integer")
        c = self.uct_c
        if not isinstance(c, (int, float)) or isinstance(c, bool) or not 0 <= c < float("inf"):
            raise ValueError(f"openspiel parameter uct_c={c!r} must be a finite number >= 0")
        if not isinstance(self.solve, bool):
            raise ValueError(f"openspiel parameter solve={self.solve!r} must be true or false")


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's ``MCTSBot`` with random rollouts (``RandomRolloutEvaluator``), searching
    through the OpenSpiel game of the state's game: the ``openspiel`` agent of the registry
    (``taluva tournament --agents mcts:sims=100 openspiel:sims=100``).

    With hidden information (Thurn und Taxis, Taluva's ``tile_preview``) it searches a
    determinization, ``state.resample(player)``, like this project's MCTS (OpenSpiel's MCTS is
    a perfect-information search). The bot's randomness comes from the agent's seed.

    Args:
        seed: the agent's seed. The other arguments: :class:`OpenSpielMCTSConfig`.

    Raises:
        ValueError: a bad parameter (named); at :meth:`act`, a game with no OpenSpiel game.
    """

    name = "openspiel"

    @staticmethod
    def spec_parameters() -> dict[str, Any]:
        return {f.name: f.default for f in dataclasses.fields(OpenSpielMCTSConfig)}

    def __init__(self, seed: int | None = None, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.spec_parameters()))
        if unknown:
            raise ValueError(f"unknown openspiel parameter(s) {', '.join(unknown)}; known: "
                             f"{', '.join(self.spec_parameters())}")
        self.config = OpenSpielMCTSConfig(**params)
        self.reset(seed)
        self._last: dict[str, Any] = {}

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self._random_state = np.random.RandomState(int(self.rng.integers(2**32)))

    def act(self, state: GameState) -> int:
        from open_spiel.python.algorithms.mcts import MCTSBot, RandomRolloutEvaluator

        game = openspiel_game(state.game)  # type: ignore[attr-defined]
        player = state.current_player
        hidden = getattr(state, "has_hidden_information", lambda: False)()
        engine = state.resample(player, self.rng) if hidden else state  # type: ignore[attr-defined]
        root = game.state_from_engine(engine)
        c = self.config
        evaluator = RandomRolloutEvaluator(c.rollouts, random_state=self._random_state)
        bot = MCTSBot(game, float(c.uct_c), c.sims, evaluator, solve=c.solve,
                      random_state=self._random_state)
        action = int(bot.step(root))
        self._last = {"sims": c.sims, "determinized": bool(hidden)}
        return action

    def stats(self) -> dict[str, Any]:
        return dict(self._last)


class AgentBot(pyspiel.Bot):
    """An agent of this project as an OpenSpiel bot, for ``evaluate_bots`` and OpenSpiel's
    other bot tools: ``AgentBot("mcts:sims=100", player_id=0, seed=1)``.

    The agent sees the engine state inside the OpenSpiel state (the states of
    ``python_taluva`` / ``python_thurn_und_taxis``) and answers with its action id; agents read
    only what the player to move may know (hidden information through ``resample``).

    Args:
        agent: an :class:`~taluva_ai.agents.Agent` or an agent spec (``make_agent``).
        player_id: the seat the bot plays.
        seed: the agent's seed (a spec's agent is made with it; ``restart_at`` resets it).

    An agent that keeps its search tree between moves (``mcts:reuse_tree=true``) is given an
    engine state that records the game's history, replayed from the OpenSpiel state's start
    at each step, so it finds its subtree as it does in this project's arena.

    Raises:
        ValueError: a bad agent spec. At ``step``: TypeError for a state of another game.
    """

    def __init__(self, agent: Agent | str, player_id: int, seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        if isinstance(agent, str):
            from taluva_ai.agents.base import make_agent

            agent = make_agent(agent, seed=seed)
        self.agent = agent
        self._player_id = int(player_id)
        self._seed = seed

    def player_id(self) -> int:
        return self._player_id

    def provides_policy(self) -> bool:
        return False

    def restart_at(self, state: Any) -> None:
        self.agent.reset(self._seed)

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass

    def step(self, state: Any) -> int:
        core = getattr(state, "_core", None)
        if core is None:
            raise TypeError(f"AgentBot plays the states of {TALUVA} and {THURN_UND_TAXIS}, got "
                            f"{type(state).__name__}")
        engine = core.engine.clone()
        if getattr(getattr(self.agent, "config", None), "reuse_tree", False):
            engine = _engine_with_history(core)
        return int(self.agent.act(engine))


def _engine_with_history(core: _Core) -> Any:
    """A copy of ``core``'s engine state whose ``history()`` (and undo) holds the OpenSpiel
    history: the line replayed from its start with the engine recording it, so that an agent
    that keeps its tree between moves (``mcts:reuse_tree=true``) finds the moves since its
    last search."""
    engine = core.start.clone()
    engine.record_history = True
    for s in _steps(core.log):
        engine.apply_unchecked(s.action)
    return engine


# -- golden playthroughs -----------------------------------------------------------------------

#: The golden playthroughs checked by tests/test_openspiel_conformance.py: file name, game
#: string, observation parameters, seed of OpenSpiel's playthrough tool (short games, so the
#: files stay small: the tool prints every observation tensor of the states it shows).
PLAYTHROUGHS = (
    ("python_taluva.txt", "python_taluva(tiles_per_player=3)", "obs(view_radius=2)", 1),
    ("python_thurn_und_taxis.txt", "python_thurn_und_taxis(max_rounds=2)", None, 1),
)


def write_playthroughs(out_dir: str) -> list[str]:
    """Generate the golden playthroughs of :data:`PLAYTHROUGHS` into ``out_dir`` with
    OpenSpiel's playthrough tool (``open_spiel.python.algorithms.generate_playthrough``);
    returns the paths written."""
    import os

    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()  # the tool reads an absl flag
    from open_spiel.python.algorithms import generate_playthrough

    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, game_string, obs_params, seed in PLAYTHROUGHS:
        text = generate_playthrough.playthrough(game_string, [],
                                                observation_params_string=obs_params, seed=seed)
        path = os.path.join(out_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        paths.append(path)
    return paths


def bench(game_string: str = "python_taluva", games: int = 3, seed: int = 0) -> dict[str, Any]:
    """Steps per second of uniformly random play (chance by its distribution) through the
    OpenSpiel game ``game_string`` and through the engine directly, on the same games (the same
    seeded choices give the same actions every way), after one untimed warm-up game.

    Ways: ``openspiel``: ``legal_actions`` / ``chance_outcomes`` and ``apply_action`` of the
    OpenSpiel state; ``native``: the same calls of the engine state with ``apply`` (which
    checks legality); ``native_unchecked``: ``apply_unchecked`` (what this project's search
    uses). Engine states record no undo history here.

    Returns:
        ``{"game", "games", "steps", "openspiel_steps_per_s", "native_steps_per_s",
        "native_unchecked_steps_per_s", "slowdown"}`` (``slowdown``: native rate / OpenSpiel
        rate).

    Raises:
        ValueError: ``games`` < 1.
    """
    import time

    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    game = pyspiel.load_game(game_string)

    def pick(outs: list[tuple[int, float]], u: float) -> int:
        cum = np.cumsum([p for _, p in outs])
        return int(outs[min(int(np.searchsorted(cum, u * cum[-1])), len(outs) - 1)][0])

    def native(picks: np.ndarray, checked: bool) -> tuple[int, str]:
        engine = game.new_initial_state().engine_state.clone()
        engine.record_history = False
        apply = engine.apply if checked else engine.apply_unchecked
        n = 0
        while not engine.is_terminal():
            if engine.current_player == CHANCE:
                a = pick(engine.chance_outcomes(), picks[n])
            else:
                legal = engine.legal_actions()
                a = int(legal[int(picks[n] * legal.size)])
            apply(a)
            n += 1
        return n, engine.to_position_string()

    def spiel(picks: np.ndarray) -> tuple[int, str]:
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            if state.is_chance_node():
                a = pick(state.chance_outcomes(), picks[n])
            else:
                legal = state.legal_actions()
                a = legal[int(picks[n] * len(legal))]
            state.apply_action(a)
            n += 1
        return n, str(state)

    ways = {"openspiel": lambda p: spiel(p), "native": lambda p: native(p, True),
            "native_unchecked": lambda p: native(p, False)}
    warm = np.random.default_rng([seed, games]).random(100_000)
    for run in ways.values():
        run(warm)
    seconds = dict.fromkeys(ways, 0.0)
    steps = 0
    for g in range(games):
        picks = np.random.default_rng([seed, g]).random(100_000)  # one number per step
        ends = set()
        for name, run in ways.items():
            t = time.perf_counter()
            n, end = run(picks)
            seconds[name] += time.perf_counter() - t
            ends.add(end)
        if len(ends) != 1:
            raise AssertionError("the OpenSpiel game and the engine played different games")
        steps += n
    rate = {name: steps / s for name, s in seconds.items()}
    return {"game": str(game), "games": games, "steps": steps,
            **{f"{name}_steps_per_s": round(r, 1) for name, r in rate.items()},
            "slowdown": round(rate["native"] / rate["openspiel"], 2)}


def main(argv: list[str] | None = None) -> int:
    """``python -m taluva_ai.openspiel playthrough [--out DIR]`` regenerates the golden
    playthroughs; ``... bench [--game G] [--games N] [--seed S]`` prints :func:`bench` as
    JSON."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m taluva_ai.openspiel",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    pt = sub.add_parser("playthrough", help="regenerate the golden playthrough files")
    pt.add_argument("--out", default="tests/data/openspiel",
                    help="folder of the files (default tests/data/openspiel)")
    bp = sub.add_parser("bench", help="steps/s of random play through OpenSpiel and natively "
                        "(JSON)")
    bp.add_argument("--game", default="python_taluva",
                    help="OpenSpiel game string (default python_taluva)")
    bp.add_argument("--games", type=int, default=3, help="games (default 3)")
    bp.add_argument("--seed", type=int, default=0, help="seed of the choices (default 0)")
    args = parser.parse_args(argv)
    if args.command == "playthrough":
        for path in write_playthroughs(args.out):
            print(path)
    else:
        if args.games < 1:
            parser.error(f"--games must be at least 1, got {args.games}")
        print(json.dumps(bench(args.game, args.games, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
