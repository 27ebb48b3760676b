"""Thurn und Taxis as SVG (taluva_ai.games.thurn_und_taxis.svg), through
taluva_ai.pictures, ``taluva replay --svg`` and the browser board."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.cli import main
from taluva_ai.games.thurn_und_taxis.board import CITIES, ROADS
from taluva_ai.games.thurn_und_taxis.state import L_HAND, P_ROUTE_LEN
from taluva_ai.games.thurn_und_taxis.svg import state_svg
from taluva_ai.pictures import position_svg, record_svgs, text_svg
from taluva_ai.records import replay_record

TNT = Path(__file__).parent / "data" / "tnt_golden_greedy_random_seed7.jsonl"


def _by_class(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg.encode("utf-8"))
    return [e for e in root.iter() if e.get("class") == cls]


@pytest.fixture(scope="module")
def pictures() -> list[tuple[str, str | None]]:
    return record_svgs(TNT)


def test_every_position_of_a_record_is_drawn_with_its_map_routes_and_houses(
        pictures: list[tuple[str, str | None]]) -> None:
    assert len(pictures) == 301  # 300 actions + the initial position
    final_svg, final_last = pictures[-1]
    final = replay_record(TNT)
    assert len(_by_class(final_svg, "city")) == len(CITIES) == 22
    assert len(_by_class(final_svg, "road")) == len(ROADS) == 45
    routes = {int(e.get("data-seat") or -1): (e.get("data-cities") or "").split()
              for e in _by_class(final_svg, "route")}
    assert routes == {p: [CITIES[int(c)] for c in final.route[p, :final.players[p, P_ROUTE_LEN]]]
                      for p in range(2) if final.players[p, P_ROUTE_LEN] > 0}
    houses = sorted((e.get("data-seat"), e.get("data-city"))
                    for e in _by_class(final_svg, "house"))
    seats, cities = np.nonzero(final.houses[:2])
    assert houses == sorted((str(p), CITIES[c]) for p, c in zip(seats, cities, strict=True))
    assert len(houses) > 0
    assert len(_by_class(final_svg, "seat-row")) == 2
    assert f"last: {final_last}" in final_svg


@pytest.mark.parametrize(("ply", "action", "marked"), [
    (7, "take:supply", []),  # a hidden card: nothing public changed, nothing marked
    (9, "postmaster:supply", []),
    (11, "start:ulm", ["ulm"]),  # a route begun
    (12, "take:wuerzburg", ["wuerzburg"]),  # taken from the display
    (13, "deal:wuerzburg", ["wuerzburg"]),  # dealt to the display
])
def test_the_last_action_marks_only_what_it_visibly_changed(
        pictures: list[tuple[str, str | None]], ply: int, action: str, marked: list[str]) -> None:
    svg, last = pictures[ply]
    assert last == action
    assert [e.get("data-city") for e in _by_class(svg, "last")] == marked


def test_a_seat_sees_its_own_hand_and_the_others_card_counts() -> None:
    state = replay_record(TNT)
    hands = [state.cards[L_HAND + p] for p in range(2)]
    assert hands[0].sum() > 0 and hands[1].sum() > 0
    full = state_svg(state, ["ann", "bob"])
    seen = state_svg(state, ["ann", "bob"], player=0)
    rows = {e.get("data-seat"): "".join(e.itertext()) for e in _by_class(seen, "seat-row")}
    assert f"hand: {int(hands[1].sum())} cards" in rows["1"]
    assert all(CITIES[c] not in rows["1"].split("hand:")[1] for c in np.flatnonzero(hands[1]))
    assert CITIES[int(np.flatnonzero(hands[0])[0])] in rows["0"].split("hand:")[1]
    assert f"{int(hands[1].sum())} cards" not in "".join(
        "".join(e.itertext()) for e in _by_class(full, "seat-row") if e.get("data-seat") == "1")
    nobody = state_svg(state, ["ann", "bob"], player=-1)
    rows = {e.get("data-seat"): "".join(e.itertext()) for e in _by_class(nobody, "seat-row")}
    assert [rows[str(p)].split("hand: ")[1] for p in range(2)] == [
        f"{int(h.sum())} cards" for h in hands]
    with pytest.raises(ValueError, match=r"player must be a seat 0\.\.1, -1 or None, got 2"):
        state_svg(state, player=2)


def test_names_are_escaped_and_a_game_without_a_picture_is_its_text() -> None:
    state = make_game("thurn_und_taxis", num_players=3).new_initial_state(seed=1)
    svg = position_svg(state, ["<b>&", "x", "y"], last="<script>")
    ET.fromstring(svg.encode("utf-8"))
    assert "<script>" not in svg and "&lt;b&gt;&amp;" in svg
    assert len(_by_class(svg, "seat-row")) == 3
    text = text_svg(state, "deal:ulm")
    ET.fromstring(text.encode("utf-8"))
    assert "last: deal:ulm" in text and str(state).splitlines()[0] in text


def test_control_characters_in_names_are_dropped_from_the_xml(tmp_path: Path) -> None:
    """A record's player names may hold characters XML forbids: the pictures leave them out
    (both games) and stay well-formed."""
    import json

    from taluva_ai.pictures import save_svgs

    for src in (TNT, TNT.parent / "golden_greedy_random_seed7.jsonl"):
        lines = src.read_text().splitlines()
        head = json.loads(lines[0])
        head["players"] = ["a\u0001b\u000bc", "d\u001fe\ud800"]
        lines[0] = json.dumps(head)
        rec = tmp_path / src.name
        rec.write_text("\n".join(lines) + "\n")
        files = save_svgs(rec, tmp_path / src.stem)
        for f in (files[0], files[-1]):
            text = f.read_text(encoding="utf-8", errors="surrogatepass")
            ET.fromstring(text.encode("utf-8", errors="surrogatepass"))
            assert "abc" in text and "de" in text


def test_replay_writes_svg_for_thurn_und_taxis_and_refuses_png(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(TNT), "--svg", str(tmp_path / "svg")]) == 0
    assert "pictures: 301 SVG files" in capsys.readouterr().out
    assert _by_class((tmp_path / "svg" / "0300.svg").read_text(encoding="utf-8"), "city")
    with pytest.raises(SystemExit):
        main(["replay", str(TNT), "--png", str(tmp_path / "png")])
    assert ("--png: PNG pictures are drawn for taluva records only (--svg draws every game); "
            "this record is of thurn_und_taxis") in capsys.readouterr().err
    afile = tmp_path / "afile"
    afile.write_text("")
    for out, why in ((str(afile), f"--svg {afile}: exists and is not a directory"),
                     ("", "--svg: give a directory to write the pictures into")):
        with pytest.raises(SystemExit):
            main(["replay", str(TNT), "--svg", out])
        err = capsys.readouterr()
        assert err.err.strip().endswith(why) and "record OK" not in err.out
