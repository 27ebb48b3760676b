"""Games played in the browser board (``taluva serve``, docs/web.md) and the analysis of a
position: the server side of the Play view and of the analysis panel.

A :class:`GameSession` holds one game in memory: the game (:func:`taluva_ai.protocol.make_game`
with the page's rule options), its seats (``"human"`` or an agent spec made through the agent
registry, :func:`taluva_ai.tournament.make_agent`), the state and the actions played. Chance nodes
are resolved at once by the state's seeded draw (as :func:`taluva_ai.tournament.play_game` does),
so the page only ever sees a seat to move or the end. A person's move arrives in notation and is
checked against the legal moves before it reaches the engine (:meth:`GameSession.play`); an agent's
move is asked for by the page one at a time (:meth:`GameSession.agent_move`), so it can show each
one. :class:`Sessions` keeps the games by id (the oldest dropped past a bound).

:func:`analyse` runs an agent's search on a position (a copy) and returns its candidate moves
(:meth:`taluva_ai.agents.base.Agent.search_candidates`) with the hexes they concern, for the
page's heat map. :class:`GameAnalysis` runs it at every position of a record for the value
graph. :func:`search_position` runs an MCTS search in chunks of simulations so that a cancel
(a ``threading.Event``) stops it between chunks; :class:`AnalysisJob` runs either in a worker
thread with its progress, for the page to poll and cancel.

Agent specs that arrive over HTTP are checked by :func:`check_spec` before anything is made
of them: the registered agents only, ``package.module:Class`` only from the modules an
:class:`AgentPolicy` allows (``taluva serve --allow-agent-module``), every parameter that costs
time bounded (:data:`INT_BOUNDS`). A move or a search given a
:class:`~taluva_ai.web.cancel.CancelFlag` stops when it is interrupted.

Every refusal is a :class:`WebError` (status and one line).
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai import tournament
from taluva_ai.errors import IllegalActionError, NotationError
from taluva_ai.protocol import CHANCE, TERMINAL, GameState, chance_observers, make_game
from taluva_ai.records import RecordWriter, outcome_of
from taluva_ai.tournament import agent_seeds, check_fits
from taluva_ai.web.cancel import CancelFlag, Cancelled, section

#: The seat spec of a person playing in the page.
HUMAN = "human"
#: :meth:`GameSession.viewer` when the page shows no seat's hidden information.
SPECTATOR = -1
#: Games kept in memory; past it the least recently used is dropped.
MAX_SESSIONS = 64
#: The most simulations an analysis may ask for (``sims=`` of the agent spec).
MAX_ANALYSIS_SIMS = 20000
#: The most seconds an analysis may ask for (``time=`` of the agent spec).
MAX_ANALYSIS_SECONDS = 60.0
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
#: Seconds a request waits for a game's lock (held while an agent of it moves) before it is
#: refused with 409.
LOCK_WAIT = 2.0


#: The longest error message the board sends (characters; a longer one, e.g. echoing a huge
#: spec, is cut and ends with "…").
MAX_MESSAGE = 500


class WebError(Exception):
    """A request the board refuses (the app's routes and the games here): ``status`` (HTTP)
    and ``message``, made one line of at most :data:`MAX_MESSAGE` characters (what the client
    sent is echoed in it, bounded)."""

    def __init__(self, status: int, message: str) -> None:
        message = _one_line(message)
        super().__init__(message)
        self.status = status
        self.message = message


def _one_line(text: object) -> str:
    """``text`` on one line (runs of whitespace made one space), cut to :data:`MAX_MESSAGE`
    characters with a closing "…"."""
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_MESSAGE else line[:MAX_MESSAGE - 1] + "…"


def _seat_label(spec: str, seat: int) -> str:
    return f"seat {seat} ({spec})"


def make_rules(game_name: str, num_players: int, rules: Any) -> Any:
    """The game ``game_name`` for ``num_players`` with the page's rule options (a JSON object
    of the game's keyword options, docs/engine.md; ``num_players`` is set from the seats).

    Raises:
        WebError: 400 an unknown game or a bad option (the game's own message).
    """
    if rules is None:
        rules = {}
    if not isinstance(rules, dict):
        raise WebError(400, f"rules must be a JSON object of rule options, got "
                        f"{type(rules).__name__}")
    if "num_players" in rules and rules["num_players"] != num_players:
        raise WebError(400, f"rules: num_players is {rules['num_players']!r} but "
                        f"{num_players} seats are given")
    opts = {**rules, "num_players": num_players}
    try:
        return make_game(str(game_name), **opts)
    except KeyError as e:
        raise WebError(400, f"game: {_one_line(e.args[0] if e.args else e)}") from None
    except (ValueError, TypeError) as e:
        raise WebError(400, f"rules: {_one_line(e)}") from None


def _make_seat(spec: Any, seat: int, game: Any, seed: int | None,
               policy: AgentPolicy | None = None) -> Any:
    if not isinstance(spec, str) or not spec.strip():
        raise WebError(400, f"seats[{seat}]: an agent spec or \"human\", got {spec!r}")
    if spec.strip() == HUMAN:
        return None
    return _board_agent(spec.strip(), game, seed, f"seats[{seat}]", policy)


def _board_agent(spec: str, game: Any, seed: int | None, field: str,
                 policy: AgentPolicy | None = None) -> Any:
    """The agent ``spec`` for ``game``, checked first (:func:`check_spec`: only what
    ``policy`` allows, within the board's bounds), reset with ``seed``; made through
    ``tournament.make_agent`` at call time (the one registry).

    Raises:
        WebError: naming ``field``: 403 a ``module:Class`` spec the server was not started to
            allow, a checkpoint outside the served directories; 400 an unbounded spec, an
            unknown agent or parameter, an agent that does not fit the game; 404 no such
            checkpoint.
    """
    made = check_spec(spec, field, policy)
    try:
        agent = tournament.make_agent(made, seed=seed)
        check_fits(agent, game)
        agent.reset(seed)
    except (ValueError, ImportError, AttributeError, TypeError) as e:
        raise WebError(400, f"{field}: {_one_line(str(e).replace(made, spec))}") from None
    return agent


#: What a move does, by its notation's word (and, for a few, its argument), for the page's
#: buttons and tooltips: moves that name no hex above all (docs/notation.md, docs/solo.md,
#: docs/thurn_und_taxis.md). ``{x}``: the move's argument (a city, a province, a piece);
#: ``{y}``: what follows its ``@`` (a route's end).
MOVE_HELP: dict[str, str] = {
    "tile": "place the tile in hand with its volcano here",
    "hut": "found a settlement here: one hut on this hex",
    "temple": "build a temple here, beside a settlement of 3 hexes or more",
    "tower": "build a tower here, beside a settlement, on level 3 or higher",
    "expand": "expand a settlement over every hex of terrain {x} next to it",
    "bonus:pile": "take a bonus tile from the draw pile (solo: a class 3-4 tile or a tile "
                  "placed higher offers one)",
    "bonus:faceup": "take the face-up tile as a bonus tile (a new one is turned up)",
    "bonus:stop": "take no bonus tile: go on to the build",
    "box": "put a {x} into the box (solo: the cost of a class-1 tile); a boxed piece is never "
           "built, and every piece built and none boxed scores 5",
    "take": "take the {x} card from the display into your hand",
    "take:supply": "take the top card of the face-down supply",
    "administrator": "the administrator: replace the display's six cards before drawing",
    "postmaster": "the postmaster: take a second card, {x} from the display",
    "postmaster:supply": "the postmaster: take a second card from the face-down supply",
    "start": "start a route with the {x} card",
    "abandon": "abandon your route (unscored) and start a new one with the {x} card",
    "extend": "extend your route with the {x} card, next to its end {y}",
    "carrier": "the postal carrier: play a second card, {x}, next to your route's end {y}",
    "pass": "end the turn without closing your route (or decline the cartwright)",
    "close:per_province": "close the route, placing a house in one of its cities per province",
    "close": "close the route, placing its houses in {x}",
    "house": "put the close's next house in {x}",
    "cartwright": "the cartwright: take the next carriage with a route up to 2 cards short",
    "discard": "discard the {x} card (a hand keeps 3 after a close)",
    "draw": "a tile drawn from the deck",
    "deal": "a card dealt from the supply",
}


def move_help(notation: str) -> str:
    """What the move ``notation`` does, in a line (:data:`MOVE_HELP`; "" when unknown)."""
    word, _, rest = notation.partition(":")
    word = word.split("@")[0]
    text = MOVE_HELP.get(notation) or MOVE_HELP.get(word, "")
    arg, _, end = rest.partition("@")
    if word == "expand":
        from taluva_ai.games.taluva.tiles import TERRAIN_LETTER

        names = {letter: t.name.lower() for t, letter in TERRAIN_LETTER.items()}
        arg = names.get(rest.upper(), rest)
    return text.replace("{x}", arg).replace("{y}", end)


def move_info(state: GameState, action: int) -> dict[str, Any]:
    """What the page needs to draw and click an action of the player to move: ``{"id",
    "notation", "kind", "hex": [q, r] or None, "cells": [[q, r], ...]}``. For Taluva ``kind``
    is the notation's word (``tile``, ``hut``, ``temple``, ``tower``, ``expand``, ``bonus``,
    ``box``), ``hex`` the hex it names (a tile's volcano hex, a build's hex) and ``cells`` the
    hexes it changes (found by applying it to a copy: the tile's three hexes, an expansion's
    new huts); ``at`` and ``cells_at`` are those hexes' centres in the board picture's
    coordinates (:func:`~taluva_ai.games.taluva.svg.hex_pixel`); ``cells_terrain``,
    ``cells_fill`` and ``cells_level`` what each of those hexes shows once the action is
    played (its top terrain, that terrain's colour on the board, its level), so the page
    draws a tile in the orientation chosen before it is placed. Another game gives only the
    id, notation and kind."""
    text = state.action_to_string(int(action))
    kind = text.split("@")[0].split(":")[0]
    out: dict[str, Any] = {"id": int(action), "notation": text, "kind": kind, "hex": None,
                           "cells": [], "help": move_help(text)}
    name = getattr(getattr(state, "game", None), "name", "")
    if name == "thurn_und_taxis":
        return _city_info(out, text)
    if name != "taluva":
        return out
    from taluva_ai.games.taluva.actions import Action
    from taluva_ai.games.taluva.draw import TERRAIN_COLOURS, TERRAIN_NAMES
    from taluva_ai.games.taluva.state import C_LEVEL, C_TERRAIN
    from taluva_ai.games.taluva.svg import changed_cells, hex_pixel

    act = Action.parse(text)
    if "@" in text:
        out["hex"] = [act.q, act.r]
        out["at"] = [round(v, 1) for v in hex_pixel(act.q, act.r)]
    after = state.clone()
    after.apply(int(action))
    board = state.game.board  # type: ignore[attr-defined]
    cells = changed_cells(state.cells, after.cells)  # type: ignore[attr-defined]
    out["cells"] = [[int(v) for v in board.hex(int(c))] for c in cells]
    out["cells_at"] = [[round(v, 1) for v in hex_pixel(q, r)] for q, r in out["cells"]]
    tops = [int(after.cells[int(c), C_TERRAIN]) for c in cells]  # type: ignore[attr-defined]
    out["cells_terrain"] = [TERRAIN_NAMES.get(t, "?") for t in tops]
    out["cells_fill"] = [TERRAIN_COLOURS.get(t, "#ffffff") for t in tops]
    out["cells_level"] = [int(after.cells[int(c), C_LEVEL])  # type: ignore[attr-defined]
                          for c in cells]
    return out


def position_notes(state: GameState) -> dict[str, Any]:
    """What the page writes beside a position besides the picture's own panel: for a solo
    Taluva game (docs/solo.md) ``{"solo": {"score", "band", "to_beat", "next", "lines",
    "counts", "final"}}``: the running score (the score of the position as if the game ended
    now; the final score at the end), its band, the score to beat (40, a win; once won, the
    next band's lowest score: ``next`` ``{"band", "score"}``, None past the last), the score
    by line of the scoring table (``[{"line", "text", "points"}]``, the lines that score) and
    the public counters (:meth:`solo_counts`). ``{}`` for any other game."""
    score_of = getattr(state, "score_breakdown", None)
    if score_of is None:
        return {}
    try:
        lines = score_of()
        counts = state.solo_counts()  # type: ignore[attr-defined]
    except (ValueError, AttributeError):
        return {}  # not a solo game
    from taluva_ai.games.taluva.solo import RESULT_BANDS, SCORE_LINE_TEXT, result_band

    score = int(sum(lines.values()))
    above = [(name, low) for name, low in RESULT_BANDS if low > score]
    nxt = {"band": above[-1][0], "score": above[-1][1]} if above else None
    win = min(low for name, low in RESULT_BANDS if name == "win")
    return {"solo": {
        "score": score, "band": result_band(score), "to_beat": win if score < win else
        (nxt["score"] if nxt else None), "next": nxt, "final": bool(state.is_terminal()),
        "lines": [{"line": k, "text": SCORE_LINE_TEXT.get(k, k), "points": int(v)}
                  for k, v in lines.items() if v],
        "counts": counts}}


#: The search statistics of an agent's move the page shows (``Agent.stats()``'s keys).
SUMMARY_KEYS = ("summary", "simulations", "root_value", "top", "pv")


def _search_summary(stats: dict[str, Any], seat: int, spec: str, ply: int) -> dict[str, Any]:
    """What the page shows of an agent's move: its seat, spec and ply, and of its ``stats()``
    the :data:`SUMMARY_KEYS` (the top moves with visits, value and prior, the principal
    variation, the root value) that are plain JSON; ``{}`` for an agent that tells none."""
    import json

    out: dict[str, Any] = {}
    for k in SUMMARY_KEYS:
        if k not in stats:
            continue
        try:
            json.dumps(stats[k], allow_nan=False)
        except (TypeError, ValueError):
            continue
        out[k] = stats[k]
    if not out:
        return {}
    return {"seat": seat, "spec": spec, "ply": ply, **out}


def seat_colours(game_name: str, num_players: int) -> list[str]:
    """The colour of each seat in the game's picture (Taluva: white, black, orange, purple;
    Thurn und Taxis: red, blue, green, orange), for the page's own marks, panels and value
    graph; grey for a game without a picture."""
    colours: tuple[str, ...] = ("#777777",)
    if game_name == "taluva":
        from taluva_ai.games.taluva.draw import PLAYER_COLOURS
        colours = PLAYER_COLOURS
    elif game_name == "thurn_und_taxis":
        from taluva_ai.games.thurn_und_taxis.draw import SEAT_COLOURS
        colours = SEAT_COLOURS
    return [colours[p % len(colours)] for p in range(num_players)]


def _city_info(out: dict[str, Any], text: str) -> dict[str, Any]:
    """A Thurn und Taxis move's city (the first one its notation names: the card taken or
    played, the house's city) and that city's centre in the map's picture, ``"city"`` and
    ``"at"``, so the page can mark and click cities as it does Taluva's hexes."""
    from taluva_ai.games.thurn_und_taxis.board import CITY_ID
    from taluva_ai.games.thurn_und_taxis.svg import city_pixel

    _, _, rest = text.partition(":")
    city = rest.split("@")[0]
    if city in CITY_ID:
        out["city"] = city
        out["at"] = [round(v, 1) for v in city_pixel(CITY_ID[city])]
    return out


def board_picture(state: GameState, players: Sequence[str], last: str | None,
                  previous: GameState | None, spots: Sequence[Sequence[int]] = (),
                  player: int | None = None) -> str:
    """The SVG of a position (:func:`taluva_ai.pictures.position_svg`), what the last action
    changed since ``previous`` marked, Taluva's hexes ``spots`` ``(q, r)`` kept in view, the
    hidden information of seat ``player`` shown (None: all)."""
    from taluva_ai.pictures import position_svg

    return position_svg(state, players, last, previous,
                        extra=[(int(q), int(r)) for q, r in spots], player=player)


class GameSession:
    """One game played from the page (module docstring).

    Args:
        game_name: a registered game (``taluva``, ``thurn_und_taxis``).
        seats: per seat ``"human"`` or an agent spec; 2 to 4 seats (1 for the solo variant).
        rules: the game's keyword options (a dict; ``num_players`` comes from the seats).
        seed: the game seed (the deck's shuffle; each agent gets its seat's seed from
            :func:`~taluva_ai.tournament.agent_seeds`); None draws one.
        policy: the agent specs allowed (:class:`AgentPolicy`; default: the registered
            agents, ``az:builtin``).

    Raises:
        WebError: 400 a bad seat list, agent spec, game or rule option; 403 a spec the policy
            refuses.
    """

    def __init__(self, game_name: str, seats: Any, rules: Any, seed: Any = None,
                 policy: AgentPolicy | None = None) -> None:
        if not isinstance(seats, list) or not seats:
            raise WebError(400, "seats must be a list of 1 to 4 entries, each \"human\" or an "
                            "agent spec")
        solo = isinstance(rules, dict) and bool(rules.get("solo"))
        if not solo and not 2 <= len(seats) <= 4:
            raise WebError(400, f"seats: give 2 to 4 seats, got {len(seats)} (one seat plays "
                            "the solo variant: rules {\"solo\": true})")
        if solo and len(seats) != 1:
            raise WebError(400, f"seats: the solo variant has one seat, got {len(seats)}")
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise WebError(400, f"seed must be an integer 0..2**63-1 or null, got {seed!r}")
        self.game = make_rules(game_name, len(seats), rules)
        self.seed = seed
        seeds = agent_seeds(seed, len(seats))
        self.seats = [str(s).strip() if isinstance(s, str) else s for s in seats]
        self.agents = [_make_seat(s, i, self.game, None if seeds is None else seeds[i], policy)
                       for i, s in enumerate(seats)]
        self.agent_seeds = seeds
        self.id = secrets.token_hex(8)
        try:
            self.state = self.game.new_initial_state(seed=seed)
        except (ValueError, TypeError, OverflowError) as e:
            raise WebError(400, f"seed: {_one_line(e)}") from None
        self.history: list[tuple[int, str]] = []  # (player, notation) per action, in order
        # per action: the seats that saw it (a chance outcome only some seats see: a Thurn und
        # Taxis card dealt to a hand, a tile_preview tile), None when every seat did
        self.seen: list[tuple[int, ...] | None] = []
        self.previous: GameState | None = None  # the state before the last action (its marks)
        # every position, by ply: positions[k] is the state after k actions (the page's
        # address names one, docs/web.md, "The address")
        self.positions: list[GameState] = [self.state.clone()]
        self.last_stats: dict[str, Any] = {}
        # per agent move: the root value of its search (the game's live value graph)
        self.values: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._resolve_chance()

    # -- moves ------------------------------------------------------------------------------

    def _apply(self, action: int) -> None:
        text = self.state.action_to_string(action)
        player = self.state.current_player
        seen = chance_observers(self.state) if player == CHANCE else None
        previous = self.state.clone()
        self.state.apply(action)
        self.previous = previous
        self.history.append((player, text))
        self.seen.append(seen)
        self.positions.append(self.state.clone())

    def shown(self, ply: int) -> str:
        """The notation of action ``ply`` as the page shows it: a chance outcome the
        :meth:`viewer` does not see is ``deal:?`` (its kind, not its value)."""
        text = self.history[ply][1]
        seen = self.seen[ply]
        viewer = self.viewer()
        if seen is None or viewer is None or viewer in seen:
            return text
        return text.split(":", 1)[0] + ":?" if ":" in text else "?"

    def _resolve_chance(self) -> None:
        while self.state.current_player == CHANCE:
            a = self.state.clone().draw()  # the seeded deck decides (as play_game does)
            self._apply(a)

    def play(self, notation: Any) -> None:
        """A person's move, in notation, for the seat to move; chance resolved after it.

        Raises:
            WebError: 400 not notation; 409 the game is over, an agent is to move, or the
                move is not legal here (the message names the rule it breaks).
        """
        if not isinstance(notation, str) or not notation.strip():
            raise WebError(400, f"move must be an action in notation (docs/notation.md), got "
                            f"{notation!r}")
        p = self.state.current_player
        if p == TERMINAL or self.state.is_terminal():
            raise WebError(409, "the game is over")
        if self.agents[p] is not None:
            raise WebError(409, f"{_seat_label(self.seats[p], p)} is an agent: ask it to move")
        try:
            a = int(self.state.parse_action(notation.strip()))
        except (NotationError, ValueError, IndexError) as e:
            raise WebError(400, f"move {notation.strip()!r}: {_one_line(e)}") from None
        legal = self.state.legal_actions()
        if not np.any(legal == a):
            explain = getattr(self.state, "explain_illegal", None)
            why = ""
            if explain is not None:
                try:
                    why = _one_line(explain(a))
                except (ValueError, IndexError):
                    why = ""
            raise WebError(409, f"{notation.strip()} is not legal here"
                            + (f": {why}" if why else ""))
        self._apply(a)
        self.last_stats = {}
        self._resolve_chance()

    @contextmanager
    def locked(self, wait: float = LOCK_WAIT) -> Iterator[None]:
        """Hold the game's lock, waiting at most ``wait`` seconds for it.

        Raises:
            WebError: 409 the game stays busy (an agent of it is moving)."""
        if not self.lock.acquire(timeout=wait):
            raise WebError(409, "this game is busy: an agent of it is moving; wait for its "
                           "move")
        try:
            yield
        finally:
            self.lock.release()

    def agent_move(self, cancel: threading.Event | None = None) -> None:
        """The agent of the seat to move plays one move; chance resolved after it. A
        :class:`~taluva_ai.web.cancel.CancelFlag` ``cancel`` interrupted during the agent's
        search stops it: the game stays as it was and the seat's agent is reset.

        Raises:
            WebError: 409 the game is over or a person is to move; 500 the agent failed or
                chose an illegal action (named, in one line); 503 the move was interrupted.
        """
        p = self.state.current_player
        if p == TERMINAL or self.state.is_terminal():
            raise WebError(409, "the game is over")
        agent = self.agents[p]
        if agent is None:
            raise WebError(409, f"seat {p} is a person: play a move")
        try:
            with section(cancel):
                raw = agent.act(self.state.clone())
            stats = agent.stats()
        except Cancelled:
            agent.reset(None if self.agent_seeds is None else self.agent_seeds[p])
            raise WebError(503, f"{_seat_label(self.seats[p], p)}: its move was cancelled "
                           "(the client left or the server is stopping); the game is as it "
                           "was") from None
        except Exception as e:  # an agent's own failure: reported, the game kept as it was
            raise WebError(500, f"{_seat_label(self.seats[p], p)} failed: "
                            f"{type(e).__name__}: {_one_line(e)}") from None
        legal = self.state.legal_actions()
        if isinstance(raw, bool) or not isinstance(raw, (int, np.integer)) \
                or not np.any(legal == int(raw)):
            raise WebError(500, f"{_seat_label(self.seats[p], p)} chose {raw!r}, not a legal "
                            "action here")
        ply = len(self.history)
        self._apply(int(raw))
        self.last_stats = _search_summary(stats, p, self.seats[p], ply)
        value = self.last_stats.get("root_value")
        if isinstance(value, (int, float)):
            n = len(self.seats)
            values: list[float | None] = [None] * n
            values[p] = float(value)
            if n == 2:  # two seats: one's value is the other's loss (the returns +1 / -1)
                values[1 - p] = -float(value)
            self.values.append({"ply": ply, "player": p, "values": values,
                                "chosen": self.history[ply][1], "played": self.history[ply][1]})
        self._resolve_chance()

    # -- views ------------------------------------------------------------------------------

    def result_line(self) -> str | None:
        """``"<end reason> after N plies; winners: seat 0 (human)"``, None while playing."""
        if not self.state.is_terminal():
            return None
        out = outcome_of(self.state, len(self.history))
        won = ", ".join(_seat_label(self.seats[w], w) for w in out.winners)
        return f"{out.end_reason or 'over'} after {out.plies} plies; winners: {won or 'none'}"

    def view(self) -> dict[str, Any]:
        """The JSON of ``GET /api/games/ID`` (docs/web.md)."""
        from taluva_ai.games.taluva.svg import SCALE

        s = self.state
        p = s.current_player
        over = s.is_terminal()
        human = (not over) and p >= 0 and self.agents[p] is None
        moves = [move_info(s, int(a)) for a in s.legal_actions()] if human else []
        spots = [m["hex"] for m in moves if m["hex"] is not None]
        spots += [c for m in moves for c in m["cells"]]
        last = self.shown(len(self.history) - 1) if self.history else None
        step = getattr(getattr(s, "step", None), "name", "")
        return {
            "id": self.id, "game": self.game.name, "seats": list(self.seats),
            "humans": [a is None for a in self.agents], "seed": self.seed,
            "rules": self.game.options(), "ply": len(self.history),
            "seat_colours": seat_colours(self.game.name, len(self.seats)),
            "to_move": None if over or p < 0 else p, "step": str(step).lower(),
            "human_to_move": human, "over": over, "result": self.result_line(),
            "moves": moves, "hex_radius": SCALE,
            "history": [{"ply": i, "player": "chance" if pl == CHANCE else pl,
                         "notation": self.shown(i), "help": move_help(self.shown(i))}
                        for i, (pl, _) in enumerate(self.history)],
            "notes": position_notes(s),
            "last_stats": self.last_stats if self.search_shown() else {},
            "values": self.values if self.search_shown() else [],
            "svg": board_picture(s, self.seats, last, self.previous, spots, self.viewer()),
        }

    def position_view(self, ply: int) -> dict[str, Any]:
        """The JSON of ``GET /api/games/ID/position?ply=K``: the position after ``ply``
        actions as the page shows it (``{"ply", "svg", "last"}``; hidden information as
        :meth:`viewer` sees it now), for a look back at a game in play or at its end.

        Raises:
            WebError: 400 ``ply`` out of ``0..ply of the game``.
        """
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply < len(self.positions):
            raise WebError(400, f"ply must be an integer 0..{len(self.positions) - 1}, got "
                           f"{_one_line(repr(ply))[:40]}")
        state = self.positions[ply]
        last = self.shown(ply - 1) if ply > 0 else None
        previous = self.positions[ply - 1] if ply > 0 else None
        return {"ply": ply, "last": last, "notes": position_notes(state),
                "svg": board_picture(state, self.seats, last, previous, (), self.viewer())}

    def search_shown(self) -> bool:
        """Whether the page shows the agents' searches (their summary, line and values): not
        in a game with hidden information that a person plays (an agent's line would tell its
        hand, or its held tile)."""
        hidden = getattr(self.state, "has_hidden_information", lambda: False)()
        return not hidden or self.viewer() is None

    def viewer(self) -> int | None:
        """The seat whose hidden information the page shows (Thurn und Taxis: its hand; the
        chance outcomes dealt to it): the one human seat; with several (hot seat), the human
        to move, and while an agent moves, :data:`SPECTATOR` (no seat's); None (everything)
        when only agents play."""
        humans = [i for i, a in enumerate(self.agents) if a is None]
        if not humans:
            return None
        if len(humans) == 1:
            return humans[0]
        p = self.state.current_player
        return p if p in humans else SPECTATOR

    def analysis_position(self) -> GameState:
        """A copy of the position for an analysis.

        Raises:
            WebError: 409 a game with hidden information where a seat the page does not show
                is to move (its search would read that seat's hand: an agent's, or another
                person's in a hot-seat game).
        """
        with self.locked():
            state = self.state.clone()
            viewer = self.viewer()
        hidden = getattr(state, "has_hidden_information", lambda: False)()
        p = state.current_player
        if hidden and viewer is not None and p >= 0 and p != viewer:
            raise WebError(409, f"{_seat_label(self.seats[p], p)} is to move and holds hidden "
                           "information (its hand): analyse on your own turn")
        return state

    def write_record(self, path: Path) -> None:
        """Write the finished game as a record (:class:`~taluva_ai.records.RecordWriter`).

        Raises:
            WebError: 409 the game is not over.
            OSError: the file cannot be written.
        """
        if not self.state.is_terminal():
            raise WebError(409, "the game is not over: a record is saved once it ends")
        with RecordWriter(path, self.game, self.seed, self.seats, agent_seeds=self.agent_seeds,
                          meta={"source": "taluva serve"}, atomic=True) as w:
            for player, text in self.history:
                w.write_notation(player, text)
            w.write_result(self.state)

    def record_text(self, tmp_dir: Path) -> str:
        """The record as text (for a download), written through a temporary file."""
        path = tmp_dir / f"{self.id}.jsonl"
        self.write_record(path)
        try:
            return path.read_text(encoding="utf-8")
        finally:
            path.unlink(missing_ok=True)


class Sessions:
    """The games in memory, by id; the least recently used dropped past ``limit``."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._games: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session: GameSession) -> None:
        with self._lock:
            self._games[session.id] = session
            while len(self._games) > self.limit:
                self._games.popitem(last=False)

    def get(self, game_id: str) -> GameSession:
        """The game ``game_id``.

        Raises:
            WebError: 404 no such game (never started, or dropped).
        """
        with self._lock:
            s = self._games.get(game_id)
            if s is None:
                raise WebError(404, f"no game {_one_line(game_id)[:80]!r} (games live in the "
                                f"server's memory, the {self.limit} last used; this one was never "
                                "started or was dropped: start a new one)")
            self._games.move_to_end(game_id)
            return s


# -- analysis ---------------------------------------------------------------------------------


#: Bounds of the spec parameters that cost time or processors, for every agent made over HTTP
#: (a registered one or an allowed ``module:Class``): parameter -> (least, most) integer.
#: ``sims`` and ``time`` (below) bound a move; ``rollouts`` (OpenSpiel's random games per
#: leaf), ``samples`` (tile placements sampled per greedy-rollout decision), ``leaf_batch``
#: (leaves evaluated together) and ``threads`` (a network's CPU threads) multiply its cost.
INT_BOUNDS: dict[str, tuple[int, int]] = {
    "sims": (1, MAX_ANALYSIS_SIMS),
    "rollouts": (1, 100),
    "samples": (1, 64),
    "leaf_batch": (1, 256),
    "threads": (1, 8),
}
#: The most simulations x rollouts of a move (OpenSpiel's ``sims`` x ``rollouts``: each
#: simulation plays that many random games to the end).
MAX_SIMS_X_ROLLOUTS = MAX_ANALYSIS_SIMS
#: The checkpoint suffixes ``az:path=<dir index>/<file>`` may name.
CHECKPOINT_SUFFIXES = (".pt",)


@dataclass(frozen=True)
class AgentPolicy:
    """Which agent specs the board makes (docs/web.md, Security).

    The registered agents (``random``, ``greedy``, ``mcts``, ``ismcts``, ``az``, ``openspiel``
    and any other the process registered, :func:`taluva_ai.agents.register_agent`) always;
    a ``package.module:Class`` spec only when its module is one of ``modules`` or inside one
    of them (``taluva serve --allow-agent-module``), never otherwise: checking such a spec
    imports nothing. ``az:path=`` may name ``builtin`` or, when ``checkpoint`` is given, a
    checkpoint under the served directories as ``<dir index>/<file>.pt`` (``checkpoint``
    resolves that name to the file, raising :class:`WebError` for one outside them).
    """

    modules: tuple[str, ...] = ()
    checkpoint: Callable[[str], Path] | None = None

    def allows_module(self, module: str) -> bool:
        return any(module == m or module.startswith(m + ".") for m in self.modules)


#: The policy of a board started without flags: registered agents, ``az:builtin`` only.
DEFAULT_POLICY = AgentPolicy()


def _is_dotted_name(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def check_spec(spec: str, field: str = "agent", policy: AgentPolicy | None = None) -> str:
    """Check an agent spec that arrived over HTTP before anything is made of it, and return
    the spec to make (``az:path=<dir index>/<file>`` turned into the file's path).

    The spec must name a registered agent, or a ``module:Class`` of a module ``policy``
    allows (nothing is imported to check it); every parameter of :data:`INT_BOUNDS` must be
    an integer in its range, ``time`` a number of seconds in ``(0,``
    :data:`MAX_ANALYSIS_SECONDS` ``]``, ``sims x rollouts`` at most
    :data:`MAX_SIMS_X_ROLLOUTS` (each refused in one line naming the parameter and the
    bound), and ``path`` ``builtin`` or a checkpoint under the served directories.

    Raises:
        WebError: naming ``field``: 403 a ``module:Class`` not allowed, a checkpoint outside
            the served directories; 400 an unknown agent, a malformed or unbounded
            parameter; 404 no such checkpoint.
    """
    from taluva_ai.agents import known_agents, parse_agent_spec, registered_agent_parameters

    policy = DEFAULT_POLICY if policy is None else policy
    head, _, rest = spec.partition(":")
    head = head.strip()
    known = known_agents()
    defaults: dict[str, Any] = {}
    prefix = head  # what the spec's parameters follow: the name, or module:Class
    if head in known:
        try:
            _, params = parse_agent_spec(spec)
        except ValueError as e:
            raise WebError(400, f"{field}: {_one_line(e)}") from None
        try:
            defaults = registered_agent_parameters(head)
        except (KeyError, ImportError, ValueError):
            defaults = {}
    else:
        cls_name, _, param_text = rest.partition(":")
        if not rest or not _is_dotted_name(head) or not cls_name.strip().isidentifier():
            raise WebError(400, f"{field}: unknown agent {head!r}; known: {', '.join(known)}"
                           + (", or package.module:Class when the server allows its module"
                              if policy.modules else ""))
        if not policy.allows_module(head):
            allowed = (f"the modules allowed are {', '.join(policy.modules)}"
                       if policy.modules else "start the server with --allow-agent-module "
                       f"{head} to allow that module")
            raise WebError(403, f"{field}: {spec!r} names a Python class (module:Class), which "
                           f"the board runs only from the modules its server allows: "
                           f"{allowed}; the registered agents are {', '.join(known)}")
        prefix = f"{head}:{cls_name.strip()}"
        try:
            params = _parse_params(param_text, spec)
        except ValueError as e:
            raise WebError(400, f"{field}: {_one_line(e)}") from None
    for name, (low, high) in INT_BOUNDS.items():
        v = params.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                              or not low <= v <= high):
            raise WebError(400, f"{field}: {name} must be an integer {low}..{high} on the "
                           f"board, got {_one_line(repr(v))[:40]}")
    t = params.get("time")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))
                          or not 0 < t <= MAX_ANALYSIS_SECONDS):
        raise WebError(400, f"{field}: time must be a number of seconds in (0, "
                       f"{MAX_ANALYSIS_SECONDS:g}] on the board, got {_one_line(repr(t))[:40]}")
    rollouts = params.get("rollouts", defaults.get("rollouts"))
    sims = params.get("sims", defaults.get("sims"))
    if isinstance(rollouts, int) and isinstance(sims, int) \
            and sims * rollouts > MAX_SIMS_X_ROLLOUTS:
        raise WebError(400, f"{field}: sims x rollouts must be at most {MAX_SIMS_X_ROLLOUTS} "
                       f"on the board (each simulation plays rollouts random games), got "
                       f"{sims} x {rollouts} = {sims * rollouts}")
    path = params.get("path")
    if path is None or path == "builtin":
        return spec
    if policy.checkpoint is None or not isinstance(path, str):
        raise WebError(400, f"{field}: the board plays only the built-in network "
                       "(az:builtin), not a file (path=...); play a checkpoint with "
                       "`taluva play`")
    if not re.fullmatch(r"[0-9]+/[^,]+", path):
        raise WebError(400, f"{field}: the board plays only the built-in network "
                       "(az:builtin), not a file outside the served directories: give "
                       "path=builtin or a checkpoint under them as <dir index>/<file>.pt "
                       f"(path=0/run/best.pt), got path={_one_line(repr(path))[:80]}")
    try:
        real = policy.checkpoint(path)
    except WebError as e:
        raise WebError(e.status, f"{field}: checkpoint: {e.message}") from None
    if "," in str(real) or "=" in str(real):
        raise WebError(400, f"{field}: the checkpoint's path {str(real)!r} holds ',' or '=', "
                       "which an agent spec cannot carry")
    items = [f"path={real}" if k == "path" else f"{k}={_spec_value(v)}"
             for k, v in params.items()]
    return f"{prefix}:{','.join(items)}"


def _spec_value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _parse_params(text: str, spec: str) -> dict[str, Any]:
    """The typed parameters of a ``module:Class:key=value,...`` spec (as the registry reads
    them), without importing anything."""
    from taluva_ai.agents import spec_key

    return dict(spec_key(spec)[1]) if text.strip() else {}


def analysis_agent(state: GameState, spec: Any, seed: int,
                   policy: AgentPolicy | None = None) -> tuple[str, Any]:
    """The checked spec and its agent, made for ``state``'s game and reset with ``seed``.

    Raises:
        WebError: 400 a bad or unbounded spec, or an agent that does not search (it keeps
            :meth:`Agent.search_candidates` of the base class).
    """
    from taluva_ai.agents.base import Agent

    if not isinstance(spec, str) or not spec.strip():
        raise WebError(400, f"agent must be an agent spec such as 'mcts:sims=200', got {spec!r}")
    spec = spec.strip()
    agent = _board_agent(spec, state.game, seed, "agent",  # type: ignore[attr-defined]
                         policy)
    if type(agent).search_candidates is Agent.search_candidates:
        raise WebError(400, f"agent {spec!r} does not search (it gives no candidate moves): "
                        "use mcts:... or az:...")
    return spec, agent


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
