"""Mutation fuzzing of position strings (Taluva, its solo variant, Thurn und Taxis).

Real position strings, taken along random games, are mutated one field at a time (a number
nudged or replaced by an extreme, a word swapped for another of the same field, a field taken
from another position, two entries of a list swapped). Each mutation must be either refused
with a one-line :class:`PositionError` naming a field of the format, or playable to the end with
random legal moves, every state along the way keeping the game's invariants: its position
string parses back to the same string (so the validator accepts whatever play reaches from a
position it accepted; checked at every 25th state by default, every 4th in the slow run, and at
the last), a decision has a legal action, a chance node outcomes that sum to 1, and the game
ends within its length bound with finite returns. Nothing else may happen: no other exception,
no crash of the compiled kernels, no endless game.

A few hundred mutations per game run by default; 10,000 per game with ``-m slow``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.errors import PositionError

#: (name, make_game arguments) of the fuzzed games.
GAMES: dict[str, tuple[str, dict[str, Any]]] = {
    "taluva": ("taluva", {"num_players": 2}),
    "taluva_preview_ranked": ("taluva", {"num_players": 3, "tile_preview": True,
                                         "ranked": True}),
    "taluva_4p": ("taluva", {"num_players": 4, "tiles_per_player": 12,
                             "destroyed_huts_return": True, "no_lake_building": True}),
    "solo": ("taluva", {"solo": True}),
    "solo_bottom": ("taluva", {"solo": True, "unplaceable": "bottom", "box_piece": "hut"}),
    "tnt": ("thurn_und_taxis", {"num_players": 2, "max_rounds": 30}),
    "tnt_3p": ("thurn_und_taxis", {"num_players": 3, "max_rounds": 6}),
}
_TOKEN = re.compile(r"-?\d+|[A-Za-z_]+")
_EXTREMES = (-(10**6), -2, -1, 0, 1, 2, 3, 4, 5, 47, 48, 49, 2**15, 10**6, 2**31)


def _parse(game: Any, text: str) -> Any:
    if game.name == "taluva":
        from taluva_ai.games.taluva.position import parse_position
    else:
        from taluva_ai.games.thurn_und_taxis.position import parse_position
    return parse_position(game, text)


def _fields_of(game: Any) -> set[str]:
    if game.name == "taluva":
        names = {"taluva", "players", "step", "player", "tile", "drawn", "placed", "ply", "end",
                 "nelim", "best", "worst", "drawfor", "setup", "bbox", "seats", "deck", "cells",
                 "solo"}
    else:
        from taluva_ai.games.thurn_und_taxis.position import FIELDS

        names = set(FIELDS)
    return names | {"(whole)"}


def _step(state: Any, rng: np.random.Generator) -> None:
    """One random legal move (a chance outcome drawn by its probability at a chance node)."""
    if state.current_player == -1:
        outcomes = state.chance_outcomes()
        assert outcomes, "a chance node without an outcome"
        probs = np.array([p for _, p in outcomes])
        assert math.isclose(probs.sum(), 1.0, abs_tol=1e-9)
        state.apply(int(outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0]))
        return
    legal = state.legal_actions()
    assert legal.size > 0, f"no legal action at {state.to_position_string()}"
    state.apply(int(legal[rng.integers(legal.size)]))


def corpus(name: str, games: int = 3, seed: int = 0) -> list[str]:
    """Position strings along ``games`` random games of ``GAMES[name]``: every few plies and
    the last one."""
    game_name, opts = GAMES[name]
    game = make_game(game_name, **opts)
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        s = game.new_initial_state(seed=seed * 100 + g)
        k = 0
        while not s.is_terminal():
            if k % 7 == g % 7 or (s.current_player == -1 and k % 5 == 0):
                out.append(s.to_position_string())
            _step(s, rng)
            k += 1
        out.append(s.to_position_string())
    return out


def _vocabulary(texts: list[str]) -> dict[str, list[str]]:
    """Per field, the words (non-numeric tokens) and whole values seen in ``texts``."""
    vocab: dict[str, set[str]] = {}
    for t in texts:
        for item in t.split(";"):
            key, _, val = item.partition("=")
            vocab.setdefault(key, set()).update(x for x in _TOKEN.findall(val)
                                                if not x.lstrip("-").isdigit())
            vocab.setdefault("=" + key, set()).add(val)
    return {k: sorted(v) for k, v in vocab.items()}


def mutate(text: str, vocab: dict[str, list[str]], rng: np.random.Generator) -> str:
    """One random mutation of one field of ``text``."""
    items = text.split(";")
    i = int(rng.integers(len(items)))
    key, _, val = items[i].partition("=")
    kind = int(rng.integers(10))
    if kind == 0 and vocab.get("=" + key):  # the field of another position
        others = vocab["=" + key]
        val = others[int(rng.integers(len(others)))]
    elif kind == 1 and len(val) > 3:  # two entries (or two characters) swapped
        for sep in "/.,-":
            parts = val.split(sep)
            if len(parts) > 1:
                break
        else:
            parts, sep = list(val), ""
        a, b = rng.choice(len(parts), 2, replace=False)
        parts[a], parts[b] = parts[b], parts[a]
        val = sep.join(parts)
    elif kind == 2 and len(val) > 0:  # an entry dropped or doubled
        parts = val.split("/")
        j = int(rng.integers(len(parts)))
        if rng.random() < 0.5:
            del parts[j]
        else:
            parts.insert(j, parts[j])
        val = "/".join(parts)
    else:  # one token: a number nudged or replaced, a word replaced
        spans = [m.span() for m in _TOKEN.finditer(val)]
        if not spans:
            val = str(int(rng.choice(_EXTREMES)))
        else:
            a, b = spans[int(rng.integers(len(spans)))]
            tok = val[a:b]
            if tok.lstrip("-").isdigit():
                v = int(tok)
                r = rng.random()
                if r < 0.5:
                    new = v + int(rng.choice([-2, -1, 1, 2]))
                elif r < 0.8:
                    new = int(rng.choice(_EXTREMES))
                else:
                    new = int(rng.integers(-3, 60))
                rep = str(new)
            else:
                words = vocab.get(key) or [tok]
                rep = words[int(rng.integers(len(words)))]
            val = val[:a] + rep + val[b:]
    items[i] = f"{key}={val}"
    return ";".join(items)


def check_state(game: Any, state: Any) -> None:
    """The invariants checked at every state of a played-out mutation."""
    text = state.to_position_string()
    again = _parse(game, text)
    assert again.to_position_string() == text
    if game.name == "thurn_und_taxis":
        from tests.tnt_helpers import check_invariants

        check_invariants(state)


def play_out(game: Any, state: Any, rng: np.random.Generator, every: int) -> None:
    """Random legal moves to the end, checking the invariants at every ``every``-th state
    and at the last."""
    for k in range(game.max_game_length + 1):
        if state.is_terminal():
            break
        if k % every == 0:
            check_state(game, state)
        _step(state, rng)
    else:
        raise AssertionError(f"not over after {game.max_game_length} actions")
    check_state(game, state)
    r = state.returns()
    assert r.shape == (game.num_players,) and np.isfinite(r).all()
    if game.num_players > 1:
        assert math.isclose(float(r.sum()), 0.0, abs_tol=1e-9)
    assert state.legal_actions().size == 0


def fuzz(name: str, mutations: int, seed: int, every: int,
         on_accept: Callable[[str], None] | None = None) -> dict[str, int]:
    """Mutate positions of ``GAMES[name]`` ``mutations`` times; returns the counts of refused
    and accepted (played out) mutations."""
    game_name, opts = GAMES[name]
    game = make_game(game_name, **opts)
    texts = corpus(name, seed=seed)
    vocab = _vocabulary(texts)
    rng = np.random.default_rng(seed)
    fields = _fields_of(game)
    counts = {"refused": 0, "accepted": 0, "unchanged": 0}
    for _ in range(mutations):
        base = texts[int(rng.integers(len(texts)))]
        text = mutate(base, vocab, rng)
        if text == base:
            counts["unchanged"] += 1
            continue
        try:
            state = _parse(game, text)
        except PositionError as e:
            assert e.field in fields, (e.field, text)
            assert "\n" not in str(e)
            counts["refused"] += 1
            continue
        if on_accept is not None:
            on_accept(text)
        counts["accepted"] += 1
        try:
            play_out(game, state, rng, every)
        except Exception as e:
            raise AssertionError(f"accepted mutation of {name} failed in play: {e!r}\n"
                                 f"{text}") from e
    return counts


@pytest.mark.parametrize("name", sorted(GAMES))
def test_mutated_positions_are_refused_or_playable(name: str) -> None:
    counts = fuzz(name, 300, seed=1, every=25)
    assert counts["refused"] + counts["accepted"] + counts["unchanged"] == 300
    assert counts["refused"] > 100


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GAMES))
def test_mutated_positions_are_refused_or_playable_10000(name: str) -> None:
    counts = fuzz(name, 10_000, seed=2, every=4)
    assert counts["refused"] > 3000


# -- the hostile tester's positions (issue 19, B.11) --------------------------------------------


def _position(game: Any, seed: int, plies: int, step: str) -> str:
    """The position string of a random game of ``game`` after ``plies`` actions or more, at
    the first ``step`` step from there."""
    s = game.new_initial_state(seed=seed)
    rng = np.random.default_rng(seed)
    k = 0
    while k < plies or s.step.name.lower() != step:
        assert not s.is_terminal()
        _step(s, rng)
        k += 1
    return s.to_position_string()


def _with(text: str, **fields: str) -> str:
    return ";".join(f"{k}={fields[k]}" if k in fields else f"{k}={v}"
                    for k, _, v in (f.partition("=") for f in text.split(";")))


@pytest.mark.parametrize(("opts", "step", "fields", "field", "reason"), [
    ({"tile_preview": True}, "tile", {"drawfor": "5"}, "drawfor", "5 is outside 0..1"),
    ({"tile_preview": True}, "tile", {"drawfor": "1000000"}, "drawfor",
     "1000000 is outside 0..1"),
    ({}, "tile", {"best": "1000000"}, "best", "1000000 is outside 0..2"),
    ({}, "tile", {"worst": "1000000"}, "worst", "1000000 is outside -1..1"),
    ({}, "tile", {"nelim": "1000000"}, "nelim", "1000000 is outside 0..1"),
    ({"num_players": 3, "ranked": True}, "build", {"best": "1"}, "best",
     "1, but 0 finished seat(s) make the next best place 0"),
    ({}, "build", {"step": "bonus"}, "step",
     "'bonus' is not one of chance, tile, build, terminal (bonus and box are solo steps)"),
    ({}, "build", {"step": "box"}, "step",
     "'box' is not one of chance, tile, build, terminal (bonus and box are solo steps)"),
    ({}, "chance", {"drawn": "48"}, "drawn",
     "the chance step needs a tile left to draw, but 48 of 48 are drawn"),
    ({}, "chance", {"step": "terminal", "end": "tiles_out"}, "end",
     "tiles_out, but only 10 of 48 tiles are drawn"),
    ({}, "chance", {"step": "terminal", "end": "early_victory", "tile": "-",
                    "seats": "15.3.2.0.0.0.-1.-1/15.3.2.0.0.1.-1.-1"}, "seats",
     "seat 0: 0 kind(s) of pieces all built (2 win early), but status 0 and place 0"),
])
def test_crafted_taluva_positions_are_refused(opts: dict[str, Any], step: str,
                                              fields: dict[str, str], field: str,
                                              reason: str) -> None:
    game = make_game("taluva", **opts)
    text = _position(game, 4, 30, step)
    _parse(game, text)  # the position itself is fine
    with pytest.raises(PositionError) as e:
        _parse(game, _with(text, **fields))
    assert (e.value.field, e.value.reason) == (field, reason)


def test_a_finished_seat_does_not_play_on() -> None:
    """Ranked play: the seat to draw for has finished (status 2, place 0)."""
    game = make_game("taluva", num_players=3, ranked=True)
    text = _position(game, 4, 30, "chance")
    fields = dict(f.split("=", 1) for f in text.split(";"))
    p = int(fields["player"])
    seats = [x.split(".") for x in fields["seats"].split("/")]
    seats[p][3], seats[p][5] = "2", "0"
    bad = _with(text, best="1", seats="/".join(".".join(x) for x in seats))
    with pytest.raises(PositionError) as e:
        _parse(game, bad)
    assert (e.value.field, e.value.reason) == ("drawfor", f"seat {p} is not active")


def test_solo_positions_are_checked_against_the_engine() -> None:
    game = make_game("taluva", solo=True)
    s = game.new_initial_state(seed=3)
    rng = np.random.default_rng(3)
    while not s.is_terminal():
        _step(s, rng)
    text = s.to_position_string()
    head, counters = text.rsplit(";solo=", 1)
    xs = counters.split(".")
    score = int(xs[15])
    xs[15] = str(score + 100)  # a final score the island does not make
    with pytest.raises(PositionError) as e:
        _parse(game, head + ";solo=" + ".".join(xs))
    assert e.value.field == "solo"
    assert e.value.reason == (f"counter 16 (score): the final score is {score}, place "
                              f"{0 if score >= 40 else 1}")
    mid = _position(game, 3, 6, "build")
    with pytest.raises(PositionError) as e:
        _parse(game, _with(mid, step="terminal", end="pile_out"))
    assert e.value.field == "end"


def test_crafted_tnt_positions_are_refused() -> None:
    game = make_game("thurn_und_taxis")
    text = _position(game, 2, 40, "draw")
    _parse(game, text)
    # the game_end tile taken without a trigger: its next tile would be read past the stack
    stacks = _with(text, stacks="0.0.0.0.0.0.0.0.0.1").split(";")
    with pytest.raises(PositionError) as e:
        _parse(game, ";".join(stacks))
    assert e.value.field == "tiles"
    with pytest.raises(PositionError) as e:
        _parse(game, _with(text, step="chance"))
    assert e.value.field == "chance"


@pytest.mark.parametrize("name", ["taluva", "solo", "tnt"])
def test_apply_unchecked_checks_the_range_of_the_id(name: str) -> None:
    from taluva_ai.errors import ActionOutOfRangeError, WrongStepError

    game_name, opts = GAMES[name]
    game = make_game(game_name, **opts)
    s = game.new_initial_state(seed=1)
    rng = np.random.default_rng(1)
    while s.current_player == -1:
        _step(s, rng)
    before = s.to_position_string()
    for bad in (-1, 10**6, game.num_actions):
        with pytest.raises(ActionOutOfRangeError):
            s.apply_unchecked(bad)
    if game_name == "taluva":  # a build id at the tile step is out of the step's range
        h = game.num_cells
        with pytest.raises(ActionOutOfRangeError, match=f"ids of the tile step run from 0 to "
                                                        f"{6 * h - 1}"):
            s.apply_unchecked(6 * h)
    assert s.to_position_string() == before
    s.apply_unchecked(int(s.legal_actions()[0]))  # a legal id still applies
    while not s.is_terminal():
        _step(s, rng)
    with pytest.raises(WrongStepError):
        s.apply_unchecked(0)


def test_tile_preview_hands_follow_the_deal() -> None:
    """Without its set-up deal, a preview game would end tiles_out after one draw."""
    game = make_game("taluva", num_players=3, tile_preview=True)
    text = game.new_initial_state(seed=1).to_position_string()
    _parse(game, text)
    with pytest.raises(PositionError) as e:
        _parse(game, _with(text, setup="0"))
    assert e.value.field == "seats"
    assert e.value.reason.startswith("with tile_preview, while the deck lasts, every active "
                                     "seat holds its next tile")


# -- issue 49: numbers are ASCII digits, echoed input is cut -----------------------------------


#: Spellings of a digit ``d`` that Python's int() takes and a position string does not: other
#: scripts' digits (Arabic-Indic, fullwidth, Devanagari), a sign, an underscore, spaces.
_LENIENT: dict[str, Callable[[str], str]] = {
    "arabic": lambda d: chr(0x0660 + int(d)), "fullwidth": lambda d: chr(0xFF10 + int(d)),
    "devanagari": lambda d: chr(0x0966 + int(d)), "plus": lambda d: "+" + d,
    "underscore": lambda d: "0_" + d, "space": lambda d: " " + d, "tab": lambda d: "\t" + d,
    "trailing": lambda d: d + " ",
}


@pytest.mark.parametrize("spelling", sorted(_LENIENT))
@pytest.mark.parametrize(("name", "step", "field"), [
    ("taluva", "tile", "drawn"), ("taluva", "tile", "bbox"), ("taluva", "tile", "seats"),
    ("taluva", "tile", "cells"), ("solo", "tile", "solo"), ("tnt", "draw", "round"),
    ("tnt", "draw", "seats"), ("tnt", "draw", "supply"),
])
def test_a_number_spelled_as_only_python_reads_it_is_refused(
    name: str, step: str, field: str, spelling: str
) -> None:
    game_name, options = GAMES[name]
    game = make_game(game_name, **options)
    text = _position(game, 4, 30, step)
    value = dict(f.split("=", 1) for f in text.split(";"))[field]
    m = re.search(r"(?<![-0-9])[0-9]", value)  # the first digit of a number not negative
    assert m is not None
    bad = _with(text, **{field: value[:m.start()] + _LENIENT[spelling](m.group(0))
                         + value[m.end():]})
    with pytest.raises(PositionError) as e:
        _parse(game, bad)
    assert e.value.field == field


@pytest.mark.parametrize(("field", "value"), [("drawn", "-0"), ("drawn", "-3"),
                                             ("worst", "+0"), ("worst", "--1")])
def test_a_minus_sign_only_where_a_number_may_be_negative(field: str, value: str) -> None:
    game = make_game("taluva")
    text = _position(game, 4, 30, "tile")
    assert "-" in dict(f.split("=", 1) for f in text.split(";"))["bbox"]
    _parse(game, text)  # negative numbers where they are legal (the island's bounding box)
    with pytest.raises(PositionError) as e:
        _parse(game, _with(text, **{field: value}))
    assert e.value.field == field


@pytest.mark.parametrize(("name", "step", "field"), [
    ("taluva", "tile", "step"), ("taluva", "tile", "drawn"), ("taluva", "tile", "cells"),
    ("taluva", "tile", "deck"), ("taluva", "tile", "tile"), ("taluva", "tile", "taluva"),
    ("tnt", "draw", "round"), ("tnt", "draw", "supply"), ("tnt", "draw", "routes"),
    ("tnt", "draw", "official"), ("tnt", "draw", "tnt"),
])
def test_an_error_repeats_a_long_field_cut_short(name: str, step: str, field: str) -> None:
    game_name, options = GAMES[name]
    game = make_game(game_name, **options)
    text = _position(game, 4, 30, step)
    huge = "9" * 1_000_000 if field in ("drawn", "round") else "Q" * 1_000_000
    with pytest.raises(PositionError) as e:
        _parse(game, _with(text, **{field: huge}))
    assert e.value.field == field
    message = str(e.value)
    assert len(message) < 600 and "\n" not in message, message[:1000]
