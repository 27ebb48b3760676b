"""Position strings: the whole Thurn und Taxis state as one line of text, and back
(docs/thurn_und_taxis.md, Position strings).

``format_position(state)`` writes ``key=value`` fields joined by ``;``, in a fixed order;
``parse_position(game, text)`` reads them back into a state of ``game`` (same options), so
``parse_position(game, s.to_position_string()).to_position_string() == s.to_position_string()``.
The string holds hidden information (every hand, the supply's make-up): it is the full state,
for tests, bug reports and tools, not an observation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from taluva_ai.errors import PositionError, echo
from taluva_ai.games.position_fields import parse_int as _int
from taluva_ai.games.thurn_und_taxis import board as B
from taluva_ai.games.thurn_und_taxis import state as S

#: Stacks from this id on (regions, all_provinces, game_end) give a seat one tile at most.
ST_REGION_FIRST = 3

if TYPE_CHECKING:
    from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisGame, ThurnUndTaxisState

FORMAT_VERSION = 1
FIELDS = ("tnt", "players", "seed", "ply", "step", "player", "official", "forced", "chance",
          "close", "round", "turn", "end", "reshuffles", "draws", "plays", "stacks", "supply",
          "display", "discard", "hands", "known", "routes", "houses", "seats", "tiles")
_TARGETS = ("hand", "display")
_RESUMES = ("start", "draw1", "draw2", "administrator")
_MODES = ("per_province", "one_province")


def _digits(row: np.ndarray) -> str:
    return "".join(str(int(x)) for x in row)


def format_position(state: ThurnUndTaxisState) -> str:
    """One line holding every field of ``state`` (see :data:`FIELDS`)."""
    n = state.num_players
    c, m, pl = state.cards, state.meta, state.players
    prov = int(m[S.M_MODE_PROVINCE])
    fields = {
        "tnt": str(FORMAT_VERSION),
        "players": str(n),
        "seed": str(state.seed),
        "ply": str(int(m[S.M_PLY])),
        "step": S.Step(int(m[S.M_STEP])).name.lower(),
        "player": str(int(m[S.M_PLAYER])),
        "official": B.OFFICIALS[int(m[S.M_OFFICIAL])],
        "forced": str(int(m[S.M_FORCED])),
        "chance": f"{_TARGETS[int(m[S.M_CHANCE_TO])]}.{int(m[S.M_CHANCE_LEFT])}."
                  f"{_RESUMES[int(m[S.M_RESUME])]}",
        "close": f"{_MODES[int(m[S.M_MODE])]}.{B.PROVINCES[prov] if prov >= 0 else '-'}."
                 f"{int(m[S.M_TODO])}.{int(m[S.M_LAST])}",
        "round": str(int(m[S.M_ROUND])),
        "turn": str(int(m[S.M_TURN])),
        "end": f"{S.EndReason(int(m[S.M_END])).name.lower()}.{int(m[S.M_END_BY])}",
        "reshuffles": str(int(m[S.M_RESHUFFLES])),
        "draws": str(int(m[S.M_DRAWS])),
        "plays": str(int(m[S.M_PLAYS])),
        "stacks": ".".join(str(int(x)) for x in m[S.M_STACK_TAKEN:S.M_STACK_TAKEN + B.NUM_STACKS]),
        "supply": _digits(c[S.L_SUPPLY]),
        "display": _digits(c[S.L_DISPLAY]),
        "discard": _digits(c[S.L_DISCARD]),
        "hands": "/".join(_digits(c[S.L_HAND + p]) for p in range(n)),
        "known": "/".join(_digits(c[S.L_KNOWN + p]) for p in range(n)),
        "routes": "/".join("-".join(state.route_of(p)) for p in range(n)),
        "houses": "/".join(_digits(state.houses[p]) for p in range(n)),
        "seats": "/".join(f"{int(pl[p, S.P_HOUSES_LEFT])}.{int(pl[p, S.P_CARRIAGE])}."
                          f"{int(pl[p, S.P_PLACE])}" for p in range(n)),
        "tiles": "/".join(
            ".".join(f"{int(pl[p, S.P_STACK_COUNT + s])}:{int(pl[p, S.P_STACK_POINTS + s])}"
                     for s in range(B.NUM_STACKS)) for p in range(n)),
    }
    return ";".join(f"{k}={fields[k]}" for k in FIELDS)


def _name(field: str, text: str, names: tuple[str, ...]) -> int:
    if text not in names:
        raise PositionError(field, f"expected one of {', '.join(names)}, got {echo(text)}")
    return names.index(text)


def _parts(field: str, text: str, sep: str, count: int) -> list[str]:
    parts = text.split(sep)
    if len(parts) != count:
        raise PositionError(field, f"expected {count} parts separated by {sep!r}, got "
                            f"{len(parts)}")
    return parts


def _row(field: str, text: str, hi: int) -> np.ndarray:
    if len(text) != B.NUM_CITIES or not text.isascii() or not text.isdigit():
        raise PositionError(field, f"expected {B.NUM_CITIES} digits (one per city), got "
                            f"{echo(text)}")
    row = np.array([int(ch) for ch in text], dtype=np.int8)
    if (row > hi).any():
        raise PositionError(field, f"a city count above {hi}")
    return row


def parse_position(game: ThurnUndTaxisGame, text: str) -> ThurnUndTaxisState:
    """Read a position string into a state of ``game`` (no history).

    Raises:
        PositionError: a missing, extra, misplaced or malformed field, or a state that breaks
            the game's invariants (card counts, routes, houses, tiles); the error names the
            field.
    """
    if not isinstance(text, str):
        raise PositionError("tnt", f"a position string is a str, got {type(text).__name__}")
    items = text.strip().split(";")
    keys = [it.partition("=")[0] for it in items]
    for i, k in enumerate(FIELDS):
        if i >= len(items) or keys[i] != k:
            raise PositionError(k, f"expected field {i + 1} to be {k!r}, got "
                                f"{echo(keys[i]) if i < len(items) else repr('nothing')}")
        if "=" not in items[i]:
            raise PositionError(k, "expected key=value")
    if len(items) > len(FIELDS):
        raise PositionError(keys[len(FIELDS)], "unknown extra field")
    f = {k: it.partition("=")[2] for k, it in zip(keys, items, strict=True)}
    if f["tnt"] != str(FORMAT_VERSION):
        raise PositionError("tnt", f"expected format version {FORMAT_VERSION}, got "
                            f"{echo(f['tnt'])}")
    n = _int("players", f["players"], 2, 4)
    if n != game.num_players:
        raise PositionError("players", f"{n} players, but the game has {game.num_players}")
    cards, route, houses, players, meta = S.new_arrays(n)
    cards[:] = 0
    seed = _int("seed", f["seed"], 0, 2**64)
    meta[S.M_PLY] = _int("ply", f["ply"], 0, 2**31 - 1)
    meta[S.M_STEP] = _name("step", f["step"], tuple(s.name.lower() for s in S.Step))
    meta[S.M_PLAYER] = _int("player", f["player"], 0, n - 1)
    meta[S.M_OFFICIAL] = _name("official", f["official"], B.OFFICIALS)
    meta[S.M_FORCED] = _int("forced", f["forced"], 0, 1)
    to, left, resume = _parts("chance", f["chance"], ".", 3)
    meta[S.M_CHANCE_TO] = _name("chance", to, _TARGETS)
    meta[S.M_CHANCE_LEFT] = _int("chance", left, 0, 6)
    meta[S.M_RESUME] = _name("chance", resume, _RESUMES)
    mode, prov, todo, last = _parts("close", f["close"], ".", 4)
    meta[S.M_MODE] = _name("close", mode, _MODES)
    meta[S.M_MODE_PROVINCE] = -1 if prov == "-" else _name("close", prov, tuple(B.PROVINCE_ID))
    meta[S.M_TODO] = _int("close", todo, 0, 66)
    meta[S.M_LAST] = _int("close", last, -1, B.NUM_CITIES - 1)
    meta[S.M_ROUND] = _int("round", f["round"], 0, game.rules.max_rounds)
    meta[S.M_TURN] = _int("turn", f["turn"], 0, 2**31 - 1)
    reason, by = _parts("end", f["end"], ".", 2)
    meta[S.M_END] = _name("end", reason, tuple(e.name.lower() for e in S.EndReason))
    meta[S.M_END_BY] = _int("end", by, -1, n - 1)
    meta[S.M_RESHUFFLES] = _int("reshuffles", f["reshuffles"], 0, 2**31 - 1)
    meta[S.M_DRAWS] = _int("draws", f["draws"], 0, 2)
    meta[S.M_PLAYS] = _int("plays", f["plays"], 0, 2)
    taken = _parts("stacks", f["stacks"], ".", B.NUM_STACKS)
    for s in range(B.NUM_STACKS):
        meta[S.M_STACK_TAKEN + s] = _int("stacks", taken[s], 0, int(B.STACK_SIZE[s]))
    cards[S.L_SUPPLY] = _row("supply", f["supply"], B.COPIES)
    cards[S.L_DISPLAY] = _row("display", f["display"], B.COPIES)
    cards[S.L_DISCARD] = _row("discard", f["discard"], B.COPIES)
    for name, base in (("hands", S.L_HAND), ("known", S.L_KNOWN)):
        for p, part in enumerate(_parts(name, f[name], "/", n)):
            cards[base + p] = _row(name, part, B.COPIES)
    for p, part in enumerate(_parts("routes", f["routes"], "/", n)):
        cities = part.split("-") if part else []
        for i, name in enumerate(cities):
            if name not in B.CITY_ID:
                raise PositionError("routes", f"{echo(name)} is not a city")
            c = B.CITY_ID[name]
            if cards[S.L_ROUTE + p, c]:
                raise PositionError("routes", f"seat {p}'s route holds {name} twice")
            if i and not B.ADJACENT[route[p, i - 1], c]:
                raise PositionError("routes", f"seat {p}'s route joins {B.CITIES[route[p, i - 1]]} "
                                    f"and {name}, which no road joins")
            route[p, i] = c
            cards[S.L_ROUTE + p, c] = 1
        players[p, S.P_ROUTE_LEN] = len(cities)
    for p, part in enumerate(_parts("houses", f["houses"], "/", n)):
        houses[p] = _row("houses", part, 1)
    for p, part in enumerate(_parts("seats", f["seats"], "/", n)):
        hl, car, place = _parts("seats", part, ".", 3)
        players[p, S.P_HOUSES_LEFT] = _int("seats", hl, 0, B.HOUSES)
        players[p, S.P_CARRIAGE] = _int("seats", car, 0, 7)
        players[p, S.P_PLACE] = _int("seats", place, -1, n - 1)
        if players[p, S.P_CARRIAGE] in (1, 2):
            raise PositionError("seats", f"seat {p}: carriages run from 3 to 7 (0: none)")
        if B.HOUSES - int(houses[p].sum()) != players[p, S.P_HOUSES_LEFT]:
            raise PositionError("seats", f"seat {p}: {int(players[p, S.P_HOUSES_LEFT])} houses "
                                f"left, but {int(houses[p].sum())} placed of {B.HOUSES}")
    held = np.zeros(B.NUM_STACKS, dtype=np.int64)
    for p, part in enumerate(_parts("tiles", f["tiles"], "/", n)):
        for s, item in enumerate(_parts("tiles", part, ".", B.NUM_STACKS)):
            k, pts = _parts("tiles", item, ":", 2)
            players[p, S.P_STACK_COUNT + s] = _int("tiles", k, 0, int(B.STACK_SIZE[s]))
            players[p, S.P_STACK_POINTS + s] = _int("tiles", pts, 0, int(B.STACK_VALUES[s].sum()))
            held[s] += int(players[p, S.P_STACK_COUNT + s])
        players[p, S.P_TILE_POINTS] = int(
            players[p, S.P_STACK_POINTS:S.P_STACK_POINTS + B.NUM_STACKS].sum())
    taken_arr = meta[S.M_STACK_TAKEN:S.M_STACK_TAKEN + B.NUM_STACKS]
    if (held != taken_arr).any():
        s = int(np.flatnonzero(held != taken_arr)[0])
        raise PositionError("tiles", f"seats hold {int(held[s])} tiles of stack {s}, but "
                            f"{int(taken_arr[s])} were taken from it (field stacks)")
    located = cards[S.L_SUPPLY:S.L_ROUTE + n].astype(np.int64).sum(axis=0)
    if (located != B.COPIES).any():
        c = int(np.flatnonzero(located != B.COPIES)[0])
        raise PositionError("supply", f"{int(located[c])} copies of {B.CITIES[c]} are located "
                            f"(supply, display, discard, hands, routes); the game has {B.COPIES}")
    if (cards[S.L_KNOWN:S.L_KNOWN + n] > cards[S.L_HAND:S.L_HAND + n]).any():
        raise PositionError("known", "a seat's known cards exceed its hand")
    _check_tiles(game, houses, players, meta)
    _check_end(game, players, meta)
    _check_turn(game, cards, players, meta)
    state = game.state_from_arrays(cards, route, houses, players, meta, seed=seed)
    _check_playable(state)
    return state


def _check_tiles(game: ThurnUndTaxisGame, houses: np.ndarray, players: np.ndarray,
                 meta: np.ndarray) -> None:
    """The bonus tiles each seat holds against the stacks (§5: tiles are taken from the top,
    at most one of each region, all_provinces and game_end) and its houses.

    Raises:
        PositionError: naming ``tiles`` (or ``end``).
    """
    n = game.num_players
    for s in range(B.NUM_STACKS):
        taken = int(meta[S.M_STACK_TAKEN + s])
        pts = int(players[:n, S.P_STACK_POINTS + s].sum())
        if pts != int(B.STACK_VALUES[s, :taken].sum()):
            raise PositionError("tiles", f"stack {B.STACKS[s]}: the seats hold {pts} points, but "
                                f"its top {taken} tile(s) are worth "
                                f"{int(B.STACK_VALUES[s, :taken].sum())}")
        if s < ST_REGION_FIRST:
            continue  # route tiles: any number per seat
        for p in range(n):
            k = int(players[p, S.P_STACK_COUNT + s])
            if k > 1:
                raise PositionError("tiles", f"seat {p} holds {k} {B.STACKS[s]} tiles (one at "
                                    "most)")
            if k and s in B.GROUP_PROVINCES and not houses[p, B.GROUP_CITIES[s]].all():
                raise PositionError("tiles", f"seat {p} holds the {B.STACKS[s]} tile without a "
                                    "house in each city of the region")
            if k and s == B.ST_ALL_PROVINCES:
                need = [q for q in range(len(B.PROVINCES))
                        if not (q == B.BAIERN and game.rules.all_provinces_rule != "all")]
                have = {int(B.CITY_PROVINCE[c]) for c in np.flatnonzero(houses[p])}
                if not set(need) <= have:
                    raise PositionError("tiles", f"seat {p} holds the all_provinces tile "
                                        "without a house in each province")


def _check_end(game: ThurnUndTaxisGame, players: np.ndarray, meta: np.ndarray) -> None:
    """The end trigger (§7), the game_end tile, the round and turn counters and the places.

    Raises:
        PositionError: naming the first inconsistent field.
    """
    n = game.num_players
    step, end, by = int(meta[S.M_STEP]), int(meta[S.M_END]), int(meta[S.M_END_BY])
    rnd, player = int(meta[S.M_ROUND]), int(meta[S.M_PLAYER])
    over = step == S.S_TERMINAL
    triggered = end in (S.END_CARRIAGE_7, S.END_LAST_HOUSE)
    if (triggered != (by >= 0) or (end == S.END_TRUNCATED and not over)
            or (over and end == S.END_NONE)):
        raise PositionError("end", "a trigger (carriage_7, last_house) names its seat, "
                            "truncated is a finished game's, and a finished game has a reason")
    if int(meta[S.M_STACK_TAKEN + B.ST_GAME_END]) != int(triggered) or (
            triggered and players[by, S.P_STACK_COUNT + B.ST_GAME_END] != 1):
        raise PositionError("end", "the seat that triggered the end holds the game_end tile, "
                            "and only then is it taken")
    if triggered:
        if end == S.END_CARRIAGE_7 and players[by, S.P_CARRIAGE] != 7:
            raise PositionError("end", f"carriage_7, but seat {by} has no 7 carriage")
        if end == S.END_LAST_HOUSE and players[by, S.P_HOUSES_LEFT] != 0:
            raise PositionError("end", f"last_house, but seat {by} has houses left")
    elif ((players[:n, S.P_CARRIAGE] == 7) | (players[:n, S.P_HOUSES_LEFT] == 0)).any():
        raise PositionError("end", "a seat has a 7 carriage or no house left: the end is "
                            "triggered")
    if over:
        if player != n - 1 or rnd < 1 or (end == S.END_TRUNCATED
                                          and rnd != game.rules.max_rounds):
            raise PositionError("round", f"a game ends after seat {n - 1}'s turn, truncated "
                                f"after exactly {game.rules.max_rounds} rounds")
        want = rnd * n
    else:
        if rnd >= game.rules.max_rounds:
            raise PositionError("round", f"{rnd} rounds: the game stops after "
                                f"{game.rules.max_rounds} (max_rounds)")
        want = rnd * n + player
    if meta[S.M_TURN] != want:
        raise PositionError("turn", f"{int(meta[S.M_TURN])} turns, but {rnd} rounds and seat "
                            f"{player} to move make {want}")
    places = players[:n, S.P_PLACE].copy()
    if over:
        from taluva_ai.games.thurn_und_taxis.kernels import _finish_game

        p2, m2 = players.copy(), meta.copy()
        _finish_game(p2, m2, game.rules_array)
        want_places = p2[:n, S.P_PLACE]
    else:
        want_places = np.full(n, -1, dtype=places.dtype)
    if not np.array_equal(places, want_places):
        raise PositionError("seats", f"places {places.tolist()}, but "
                            f"{'the scores make them' if over else 'before the end they are'} "
                            f"{want_places.tolist()}")


def _check_turn(game: ThurnUndTaxisGame, cards: np.ndarray, players: np.ndarray,
                meta: np.ndarray) -> None:
    """The step against the turn's counters (officials, draws, plays), the pending chance
    and the close in progress (§3, §4, §6).

    Raises:
        PositionError: naming the first inconsistent field.
    """
    step, p = int(meta[S.M_STEP]), int(meta[S.M_PLAYER])
    official, forced = int(meta[S.M_OFFICIAL]), int(meta[S.M_FORCED])
    draws, plays, todo, last = (int(meta[S.M_DRAWS]), int(meta[S.M_PLAYS]), int(meta[S.M_TODO]),
                                int(meta[S.M_LAST]))
    to, left, resume = int(meta[S.M_CHANCE_TO]), int(meta[S.M_CHANCE_LEFT]), int(meta[S.M_RESUME])
    length = int(players[p, S.P_ROUTE_LEN])
    display = int(cards[S.L_DISPLAY].sum())
    supply = int(cards[S.L_SUPPLY].sum())
    hand = int(cards[S.L_HAND + p].sum())
    if forced and official != B.OF_POSTMASTER:
        raise PositionError("forced", "a forced postmaster is the turn's official")
    if plays == 2 and official != B.OF_POSTAL_CARRIER:
        raise PositionError("plays", "a second play is the postal carrier's")
    if step not in (S.S_HOUSE, S.S_DISCARD) and todo != 0:
        raise PositionError("close", "houses or discards are due only at the house and discard "
                            "steps")
    if (step in (S.S_CHANCE, S.S_DRAW, S.S_DRAW2, S.S_PLAY, S.S_AFTER_PLAY, S.S_TERMINAL)
            and last != -1):
        raise PositionError("close", "no pick is made outside a close")
    if step == S.S_CHANCE:
        if left < 1 or supply < 1:
            raise PositionError("chance", f"a chance step deals from the supply ({supply} "
                                f"card(s)) at least one card (got {left} to deal)")
        if to == S.TO_HAND and (left != 1 or resume not in (S.RS_DRAW1, S.RS_DRAW2)):
            raise PositionError("chance", "a card to the hand is one draw (resume draw1 or "
                                "draw2)")
        if to == S.TO_DISPLAY and display + left > B.DISPLAY_SIZE:
            raise PositionError("chance", f"{display} display card(s) and {left} to deal "
                                f"exceed the display's {B.DISPLAY_SIZE}")
        if resume == S.RS_START and (meta[S.M_TURN] != 0 or to != S.TO_DISPLAY or plays or draws
                                     or official != B.OF_NONE
                                     or meta[S.M_PLY] != B.DISPLAY_SIZE - left
                                     or display != B.DISPLAY_SIZE - left):
            raise PositionError("chance", "the first display is dealt before any action")
        if resume == S.RS_ADMIN and (official != B.OF_ADMINISTRATOR or to != S.TO_DISPLAY
                                   or display + left != B.DISPLAY_SIZE):
            raise PositionError("chance", f"the administrator's refill deals a new display of "
                                f"{B.DISPLAY_SIZE} cards")
        want = {S.RS_START: 0, S.RS_ADMIN: 0, S.RS_DRAW1: 1, S.RS_DRAW2: 2}[resume]
        if draws != want or plays != 0:
            raise PositionError("draws", f"the cards of a chance with resume "
                                f"{_RESUMES[resume]} are dealt after {want} draw(s) and no play")
        if resume == S.RS_DRAW2 and official != B.OF_POSTMASTER:
            raise PositionError("official", "the second draw's card is the postmaster's")
    elif step == S.S_DRAW:
        if draws != 0 or plays != 0:
            raise PositionError("draws", "the first draw comes first in a turn (draws=0, "
                                "plays=0)")
    elif step == S.S_DRAW2:
        if draws != 1 or plays != 0 or official not in (B.OF_NONE, B.OF_POSTMASTER) or (
                official == B.OF_POSTMASTER and not forced):
            raise PositionError("draws", "the second draw follows one draw, with no official "
                                "yet or a forced postmaster")
    elif step == S.S_PLAY:
        if plays != 0 or hand == 0:
            raise PositionError("plays", "the play step comes once a turn, with cards in hand")
    elif step == S.S_AFTER_PLAY:
        if plays < 1 or length < 1 or (official != B.OF_NONE and length < 3):
            raise PositionError("plays", "after a play the route has a card (and 3 or more when "
                                "an official was used)")
    elif step == S.S_HOUSE:
        if todo < 1 or length < 3:
            raise PositionError("close", "a house step of a close of a route of 3 or more with "
                                "houses due")
        if (meta[S.M_MODE] == 1) != (meta[S.M_MODE_PROVINCE] >= 0):
            raise PositionError("close", "a one_province close names its province, and only it")
    elif step == S.S_CARRIAGE:
        if official != B.OF_NONE or length < 3 or players[p, S.P_CARRIAGE] == 7:
            raise PositionError("official", "the cartwright is offered when no official was "
                                "used this turn, for a closed route and a carriage to take")
    elif step == S.S_DISCARD and (todo < 1 or length != 0 or hand - todo != B.HAND_KEEP):
        raise PositionError("close", f"after a close the hand is discarded down to "
                            f"{B.HAND_KEEP} cards (todo: hand - {B.HAND_KEEP}), the route gone")
    if display > B.DISPLAY_SIZE:
        raise PositionError("display", f"{display} cards, but the display holds "
                            f"{B.DISPLAY_SIZE} at most")
    if step in (S.S_DRAW, S.S_DRAW2) and display + supply + int(cards[S.L_DISCARD].sum()) == 0:
        raise PositionError("step", f"{S.Step(step).name.lower()}, but the display, the supply "
                            "and the discard pile are empty: with no card available at all "
                            "the draw is skipped (§3 Deck)")


def _check_playable(state: ThurnUndTaxisState) -> None:
    """A decision step has a choice: one legal action at least (two at the house and discard
    steps, whose single options are taken automatically).

    Raises:
        PositionError: naming the step.
    """
    step = int(state.meta[S.M_STEP])
    if step in (S.S_CHANCE, S.S_TERMINAL):
        return
    k = state.legal_actions().size
    need = 2 if step in (S.S_HOUSE, S.S_DISCARD) else 1
    if k < need:
        raise PositionError("step", f"{S.Step(step).name.lower()}, but {k} legal action(s): the "
                            f"step waits for a choice of {need} or more")
