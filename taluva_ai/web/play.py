"""Games played in the browser board (``taluva serve``, docs/web.md): the server side of the
Play view.

A :class:`GameSession` holds one game in memory: the game (:func:`taluva_ai.protocol.make_game`
with the page's rule options), its seats (``"human"`` or an agent spec made through the agent
registry, :func:`taluva_ai.tournament.make_agent`, checked by :mod:`taluva_ai.web.specs`), the
state and the actions played. Chance nodes are resolved at once by the state's seeded draw (as
:func:`taluva_ai.tournament.play_game` does), so the page only ever sees a seat to move or the
end. A person's move arrives in notation and is checked against the legal moves before it
reaches the engine (:meth:`GameSession.play`); an agent's move is asked for by the page one at a
time (:meth:`GameSession.agent_move`), so it can show each one; while an agent's first move
compiles the engine's kernels, :func:`compiling_view` says so (the page polls it). A move given a
:class:`~taluva_ai.web.cancel.CancelFlag` stops when it is interrupted. :class:`Sessions`
keeps the games by id (the oldest dropped past a bound). The pictures and notes of a position
(:func:`board_picture`, :func:`move_info`, :func:`position_notes`) serve the analysis too
(:mod:`taluva_ai.web.analysis`).

Every refusal is a :class:`~taluva_ai.web.errors.WebError` (status and one line).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.errors import NotationError
from taluva_ai.protocol import CHANCE, TERMINAL, GameState, chance_observers, make_game
from taluva_ai.records import RecordWriter, outcome_of
from taluva_ai.tournament import agent_seeds
from taluva_ai.web.cancel import Cancelled, section
from taluva_ai.web.errors import WebError, _one_line
from taluva_ai.web.specs import AgentPolicy, _board_agent

#: The seat spec of a person playing in the page.
HUMAN = "human"
#: :meth:`GameSession.viewer` when the page shows no seat's hidden information.
SPECTATOR = -1
#: Games kept in memory; past it the least recently used is dropped.
MAX_SESSIONS = 64
#: Seconds a request waits for a game's lock (held while an agent of it moves) before it is
#: refused with 409.
LOCK_WAIT = 2.0


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


#: About how long an agent's first move compiles the engine's kernels, in seconds of CPU on
#: the 2-core machine of docs/benchmarks.md ("Compile time": a cold ``taluva play`` of that agent
#: against ``random`` or ``greedy``, less its game), by the agent's registered name; other
#: agents: :data:`FIRST_USE_DEFAULT_S`.
FIRST_USE_S: dict[str, int] = {"random": 12, "greedy": 15, "mcts": 30, "ismcts": 30, "az": 35}
#: :data:`FIRST_USE_S` of an agent it does not name.
FIRST_USE_DEFAULT_S = 30


def first_use_seconds(spec: str | None) -> int:
    """About how long the first move of the agent ``spec`` (``name:key=value,...``) compiles
    the engine's kernels on a fresh install, in seconds (:data:`FIRST_USE_S`)."""
    name = str(spec or "").split(":", 1)[0].strip()
    return FIRST_USE_S.get(name, FIRST_USE_DEFAULT_S)


def compiling_view(spec: str | None = None) -> dict[str, Any] | None:
    """What the Play view shows while an agent's first move compiles (``GET /api/compiling``):
    ``{"kernel", "seconds", "about_s"}`` while this process compiles one of the engine's
    kernels (:func:`taluva_ai.games.compiling.compiling_now`: the kernel, the seconds this
    stretch of compiling has lasted; ``about_s``: :func:`first_use_seconds` of the agent
    ``spec`` that moves), None when it does not."""
    from taluva_ai.games import compiling

    busy = compiling.compiling_now()
    if busy is None:
        return None
    return {"kernel": busy[0], "seconds": round(busy[1], 1), "about_s": first_use_seconds(spec)}


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

