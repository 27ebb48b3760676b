"""The browser board's app (taluva_ai.web.app, ``taluva serve``) through Starlette's TestClient:
the listing, replay and board routes, the path checks, one-line JSON errors."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient

from taluva_ai import web
from taluva_ai.cli import main
from taluva_ai.web.app import create_app

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden_greedy_random_seed7.jsonl"
TNT = DATA / "tnt_golden_greedy_random_seed7.jsonl"
#: The address the clients use: the server answers only its own names (docs/web.md, Security).
BASE = "http://127.0.0.1:8000"
#: A request that changes something is sent as JSON (the server refuses other types).
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def served(tmp_path: Path) -> tuple[Path, TestClient]:
    """runs/ with a Taluva record, a Thurn und Taxis one in a subdirectory, a malformed one and
    a link to a file outside; secret.jsonl lies next to runs/, outside it."""
    runs = tmp_path / "runs"
    (runs / "sub").mkdir(parents=True)
    (runs / "g.jsonl").write_bytes(GOLDEN.read_bytes())
    (runs / "sub" / "tnt.jsonl").write_bytes(TNT.read_bytes())
    (runs / "bad.jsonl").write_text('{"type": "header"\n', encoding="utf-8")
    (runs / "notes.txt").write_text("not a record", encoding="utf-8")
    secret = tmp_path / "secret.jsonl"
    secret.write_bytes(GOLDEN.read_bytes())
    (runs / "link.jsonl").symlink_to(secret)
    (runs / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    client = TestClient(create_app([runs]), base_url=BASE, raise_server_exceptions=False)
    return runs, client


def _error(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert list(body) == ["error"] and "\n" not in body["error"]
    assert "Traceback" not in resp.text
    return str(body["error"])


def test_the_web_tests_alone_need_only_the_web_extra() -> None:
    """tests/conftest.py asks a run of the browser board's tests alone for the web extra only
    (docs/web.md, "Tests and screenshots"), any other run for the test extra."""
    from tests.conftest import missing_requirements, web_tests_only

    assert web_tests_only(["tests/test_web_browser.py"])
    assert web_tests_only(["-q", "tests/test_web.py::test_x", "tests/test_web_security.py"])
    assert not web_tests_only([]) and not web_tests_only(["tests"])
    assert not web_tests_only(["tests/test_web.py", "tests/test_cli.py"])
    assert missing_requirements(extra="web") == []


def test_page_and_static_files(served: tuple[Path, TestClient]) -> None:
    _, client = served
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for name, kind in (("app.js", "javascript"), ("style.css", "text/css")):
        assert f"/static/{name}" in page.text
        resp = client.get(f"/static/{name}")
        assert resp.status_code == 200 and kind in resp.headers["content-type"]


def test_listing_has_only_records_inside(served: tuple[Path, TestClient]) -> None:
    """Only game records are listed (a tournament's results.jsonl and deals.jsonl are not),
    each with its game, players and result, read from its first and last lines."""
    runs, client = served
    (runs / "sub" / "results.jsonl").write_text('{"id": "g1", "winners": [0]}\n',
                                                encoding="utf-8")
    (runs / "sub" / "deals.jsonl").write_text('[3, 1, 2]\n', encoding="utf-8")
    (runs / "header.jsonl").write_text('{"type": "header", "game": 7}\n', encoding="utf-8")
    data = client.get("/api/records").json()
    assert data["dirs"] == [str(runs.resolve())]
    assert [r["path"] for r in data["records"]] == ["0/g.jsonl", "0/header.jsonl",
                                                    "0/sub/tnt.jsonl"]
    g, header, tnt = data["records"]
    assert (g["game"], g["players"], g["result"]) == (
        "taluva", ["greedy", "random"], "early_victory after 81 plies; winners: seat 0 (greedy)")
    assert (header["game"], header["result"]) == ("?", "malformed header")
    assert tnt["game"] == "thurn_und_taxis" and tnt["players"] == ["greedy", "random"]


def test_record_and_every_board(served: tuple[Path, TestClient]) -> None:
    _, client = served
    rec = client.get("/api/record", params={"path": "0/g.jsonl"}).json()
    assert rec["game"] == "taluva" and rec["players"] == ["greedy", "random"]
    assert rec["positions"] == 82 and len(rec["moves"]) == 81
    assert rec["moves"][:3] == [
        {"ply": 0, "player": "chance", "notation": "draw:JS", "help": "a tile drawn from the deck"},
        {"ply": 1, "player": 0, "notation": "tile@0,0:SE",
         "help": "place the tile in hand with its volcano here"},
        {"ply": 2, "player": 0, "notation": "hut@-1,0",
         "help": "found a settlement here: one hut on this hex"}]
    assert rec["result"] == "early_victory after 81 plies; winners: seat 0 (greedy)"
    for ply in (0, 2, 81):
        resp = client.get("/api/board", params={"path": "0/g.jsonl", "ply": ply})
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("image/svg+xml")
        root = ET.fromstring(resp.content)
        hexes = [e for e in root.iter() if e.get("class") == "hex"]
        assert len(hexes) == {0: 0, 2: 3, 81: 69}[ply]
    _error(client.get("/api/board", params={"path": "0/g.jsonl", "ply": 82}), 400)
    msg = _error(client.get("/api/board", params={"path": "0/g.jsonl", "ply": "-1"}), 400)
    assert msg == "ply must be an integer 0..81, got '-1'"
    for odd in ("\u00b2", "\uff11", "1" * 5000, " 1", "1.0"):  # superscript, full-width digits
        msg = _error(client.get("/api/board", params={"path": "0/g.jsonl", "ply": odd}), 400)
        assert msg.startswith("ply must be an integer 0..81, got ")


def test_thurn_und_taxis_opens_and_steps(served: tuple[Path, TestClient]) -> None:
    _, client = served
    rec = client.get("/api/record", params={"path": "0/sub/tnt.jsonl"}).json()
    assert rec["game"] == "thurn_und_taxis" and rec["positions"] == 301
    resp = client.get("/api/board", params={"path": "0/sub/tnt.jsonl", "ply": 12})
    # its own SVG map (taluva_ai.games.thurn_und_taxis.svg), the last action marked
    assert resp.status_code == 200 and b'class="tnt-board"' in resp.content
    assert b'class="last" data-city="wuerzburg"' in resp.content
    assert b"last: take:wuerzburg" in resp.content


def test_malformed_record_is_one_line(served: tuple[Path, TestClient]) -> None:
    _, client = served
    msg = _error(client.get("/api/record", params={"path": "0/bad.jsonl"}), 422)
    assert msg.startswith("0/bad.jsonl: line 1: field 'json': not valid JSON")
    _error(client.get("/api/board", params={"path": "0/bad.jsonl", "ply": 0}), 422)


@pytest.mark.parametrize("path", [
    "0/../secret.jsonl", "0/sub/../../secret.jsonl", "0//etc/passwd", "0/link.jsonl",
    "0/linkdir/secret.jsonl", "0/notes.txt", "0/..\\secret.jsonl",
])
def test_paths_outside_are_refused(served: tuple[Path, TestClient], path: str) -> None:
    _, client = served
    for route in ("/api/record", "/api/board"):
        msg = _error(client.get(route, params={"path": path, "ply": 0}), 403)
        assert msg.startswith(f"refused path {path!r}")


def test_unknown_records_and_routes_404(served: tuple[Path, TestClient]) -> None:
    _, client = served
    assert _error(client.get("/api/record", params={"path": "0/nope.jsonl"}), 404) == \
        "no record '0/nope.jsonl'"
    _error(client.get("/api/record", params={"path": "7/g.jsonl"}), 404)
    _error(client.get("/api/record", params={"path": "x/g.jsonl"}), 400)
    _error(client.get("/api/record"), 400)
    assert _error(client.get("/nothing/here"), 404) == "not found: /nothing/here"
    assert client.get("/static/../app.py").status_code == 404


def test_record_changed_on_disk_is_read_again(served: tuple[Path, TestClient]) -> None:
    runs, client = served
    assert client.get("/api/record", params={"path": "0/g.jsonl"}).status_code == 200
    (runs / "g.jsonl").write_text('{"type": "header"}\n', encoding="utf-8")
    os.utime(runs / "g.jsonl", ns=(1, 1))
    _error(client.get("/api/record", params={"path": "0/g.jsonl"}), 422)


def test_serve_refuses_a_port_in_use_before_announcing_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = web.listen("127.0.0.1", 0)  # a free port, now held
    try:
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as e:
            main(["serve", str(tmp_path), "--port", str(port)])
        assert e.value.code == 1
    finally:
        taken.close()
    out, err = capsys.readouterr()
    assert "open http" not in out
    assert err.startswith(f"taluva serve: error: cannot listen on 127.0.0.1:{port}: ")


def test_serve_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    calls: list[tuple[Any, str, int]] = []
    bound: list[tuple[str, int]] = []

    def listen(host: str, port: int) -> socket.socket:  # no real port taken by the test
        bound.append((host, port))
        return socket.socket()

    monkeypatch.setattr(web, "listen", listen)
    monkeypatch.setattr(web, "run_server", lambda app, sock: calls.append((app, sock)))
    assert main(["serve", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "open http://127.0.0.1:8000/" in out and err == ""
    assert bound[0] == ("127.0.0.1", 8000) and len(calls) == 1
    assert calls[0][1].fileno() == -1  # closed when the server ended
    assert main(["serve", str(tmp_path), "--host", "0.0.0.0", "--port", "9000"]) == 0
    out, err = capsys.readouterr()
    assert "open http://0.0.0.0:9000/" in out
    assert err.startswith("WARNING: listening on 0.0.0.0, not 127.0.0.1")
    with pytest.raises(SystemExit) as e:
        main(["serve", str(tmp_path / "missing")])
    assert e.value.code == 2
    assert "taluva serve: error: DIRS: " in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["serve", "--port", "70000"])
    assert e.value.code == 2
    assert "a TCP port is an integer 1..65535, got '70000'" in capsys.readouterr().err


# -- play, analysis, runs ---------------------------------------------------------------------


def _new_game(client: TestClient, **body: Any) -> dict[str, Any]:
    resp = client.post("/api/games", json={"seats": ["human", "random"],
                                           "rules": {"tiles_per_player": 1}, "seed": 3, **body})
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def test_play_a_game_to_the_end_and_save_it(served: tuple[Path, TestClient]) -> None:
    runs, client = served
    g = _new_game(client)
    assert g["seats"] == ["human", "random"] and g["humans"] == [True, False]
    assert g["history"] == [{"ply": 0, "player": "chance", "notation": "draw:CS",
                             "help": "a tile drawn from the deck"}]
    assert g["to_move"] == 0 and g["step"] == "tile" and g["human_to_move"]
    assert [m["notation"] for m in g["moves"]] == [
        "tile@0,0:N", "tile@0,0:NW", "tile@0,0:SW", "tile@0,0:S", "tile@0,0:SE", "tile@0,0:NE"]
    first = g["moves"][0]
    assert first["kind"] == "tile" and first["hex"] == [0, 0] and first["at"] == [0.0, 0.0]
    assert first["cells"] == [[0, 0], [-1, 1], [0, 1]]
    assert "<svg" in g["svg"]
    assert _error(client.post(f"/api/games/{g['id']}/save", json={}), 409) == \
        "the game is not over: a record is saved once it ends"
    while not g["over"]:
        if g["human_to_move"]:
            resp = client.post(f"/api/games/{g['id']}/move",
                               json={"move": g["moves"][0]["notation"]})
        else:
            assert g["moves"] == []
            resp = client.post(f"/api/games/{g['id']}/agent", json={})
        assert resp.status_code == 200, resp.text
        g = resp.json()
    assert g["result"] == "tiles_out after 6 plies; winners: seat 0 (human), seat 1 (random)"
    assert _error(client.post(f"/api/games/{g['id']}/agent", json={}), 409) == "the game is over"
    assert _error(client.post(f"/api/games/{g['id']}/save", json={"dir": 0, "x": 1}), 400) == \
        "unknown field(s) x; a save takes dir"
    saved = client.post(f"/api/games/{g['id']}/save", json={"dir": 0}).json()
    assert saved["path"].startswith("0/web-games/") and saved["path"].endswith(".jsonl")
    rec = client.get("/api/record", params={"path": saved["path"]}).json()
    assert rec["players"] == ["human", "random"] and rec["positions"] == 7
    assert [m["notation"] for m in rec["moves"]] == [h["notation"] for h in g["history"]]
    text = client.get(f"/api/games/{g['id']}/record")
    assert text.status_code == 200
    assert text.headers["content-disposition"] == f'attachment; filename="taluva-{g["id"]}.jsonl"'
    assert text.text == (runs / saved["path"][2:]).read_text(encoding="utf-8")


def test_a_game_in_play_is_read_back_by_its_id_and_ply(served: tuple[Path, TestClient]) -> None:
    """The page's address names a game and a ply (docs/web.md, "The address"): the game is read
    again by its id, and any of its positions by ply."""
    _, client = served
    g = _new_game(client)
    g = client.post(f"/api/games/{g['id']}/move", json={"move": "tile@0,0:N"}).json()
    assert g["ply"] == 2
    again = client.get(f"/api/games/{g['id']}").json()
    assert again["history"] == g["history"] and again["svg"] == g["svg"]
    url = f"/api/games/{g['id']}/position"
    first = client.get(url, params={"ply": 0}).json()
    assert first["ply"] == 0 and first["last"] is None and "empty table" in first["svg"]
    after = client.get(url, params={"ply": 2}).json()
    assert after["last"] == "tile@0,0:N" and after["svg"].count('class="hex"') == 3
    assert _error(client.get(url, params={"ply": 3}), 400) == "ply must be an integer 0..2, got '3'"
    assert _error(client.get("/api/games/nope/position", params={"ply": 0}), 404).startswith(
        "no game 'nope'")


def test_a_solo_game_tells_its_score_and_the_score_to_beat(
        served: tuple[Path, TestClient]) -> None:
    """The solo variant's running score, its band and the score to beat, in play and along a
    saved record (GET /api/position)."""
    runs, client = served
    g = client.post("/api/games", json={"seats": ["human"], "rules": {"solo": True},
                                        "seed": 3}).json()
    solo = g["notes"]["solo"]
    assert (solo["score"], solo["band"], solo["to_beat"], solo["final"]) == \
        (-64, "lost", 40, False)
    assert solo["next"] == {"band": "win", "score": 40}
    assert sum(line["points"] for line in solo["lines"]) == -64
    assert solo["counts"]["draw_pile"] == 30 and solo["counts"]["face_up"] == "CJ"
    assert _new_game(client)["notes"] == {}  # only the solo variant has a score
    from taluva_ai.web.play import GameSession

    record = runs / "solo.jsonl"
    game = GameSession("taluva", ["greedy"], {"solo": True}, 2)
    while not game.state.is_terminal():
        game.agent_move()
    game.write_record(record)
    rec = client.get("/api/record", params={"path": "0/solo.jsonl"}).json()
    end = client.get("/api/position", params={"path": "0/solo.jsonl",
                                              "ply": rec["positions"] - 1}).json()
    final = end["notes"]["solo"]
    assert final["final"] and final["score"] == int(game.state.score())
    assert end["svg"] == client.get("/api/board", params={
        "path": "0/solo.jsonl", "ply": rec["positions"] - 1}).text
    assert _error(client.get("/api/position", params={"path": "0/solo.jsonl", "ply": 10**6}),
                  400).startswith("ply must be an integer")


def test_moves_say_what_they_do_and_name_their_city(served: tuple[Path, TestClient]) -> None:
    """Every move carries a line saying what it does (the page's tooltips); a Thurn und Taxis
    move names its city, at its place on the map, so the page marks and clicks cities."""
    _, client = served
    g = client.post("/api/games", json={"game": "thurn_und_taxis", "seats": ["human", "random"],
                                        "seed": 3}).json()
    moves = {m["notation"]: m for m in g["moves"]}
    assert moves["take:augsburg"]["city"] == "augsburg" and len(moves["take:augsburg"]["at"]) == 2
    assert moves["take:augsburg"]["help"] == "take the augsburg card from the display into " \
        "your hand"
    assert "city" not in moves["take:supply"] and "at" not in moves["take:supply"]
    from taluva_ai.web.play import move_help

    assert move_help("box:hut").startswith("put a hut into the box (solo: the cost of a class-1")
    assert move_help("bonus:pile").startswith("take a bonus tile from the draw pile")
    assert move_help("bonus:stop") == "take no bonus tile: go on to the build"
    assert move_help("expand@0,2:C") == \
        "expand a settlement over every hex of terrain clearing next to it"
    assert move_help("extend:muenchen@regensburg") == \
        "extend your route with the muenchen card, next to its end regensburg"
    assert move_help("nonsense") == ""


def test_illegal_moves_are_explained_and_change_nothing(served: tuple[Path, TestClient]) -> None:
    _, client = served
    g = _new_game(client)
    url = f"/api/games/{g['id']}/move"
    assert _error(client.post(url, json={"move": "tile@5,5:N"}), 409).startswith(
        "tile@5,5:N is not legal here: ")
    assert _error(client.post(url, json={"move": "hut@0,0"}), 409).startswith(
        "hut@0,0 is not legal here")
    assert _error(client.post(url, json={"move": "nonsense"}), 400).startswith(
        "move 'nonsense': ")
    assert _error(client.post(url, json={}), 400).startswith("move must be an action")
    assert _error(client.post(f"/api/games/{g['id']}/agent", json={}), 409) == \
        "seat 0 is a person: play a move"
    assert client.get(f"/api/games/{g['id']}").json()["history"] == g["history"]
    assert _error(client.get("/api/games/nope"), 404).startswith("no game 'nope'")
    assert _error(client.post("/api/games/nope/move", json={"move": "x"}), 404)


def test_seats_are_made_by_the_registry_at_call_time(served: tuple[Path, TestClient],
                                                     made: list[str]) -> None:
    """The board makes agents through ``tournament.make_agent`` when a game starts, not through a
    name bound when the module was imported: a test that patched ``make_agent`` while the web
    modules were first imported (tests/test_docs_commands.py) left its stand-in in them, and
    later games in that process refused every agent."""
    _, client = served
    resp = client.post("/api/games", json={"seats": ["human", "random"], "seed": 1})
    assert resp.status_code == 200, resp.text
    assert made == ["random"]


def test_a_body_nested_too_deeply_is_refused(served: tuple[Path, TestClient]) -> None:
    _, client = served
    body = b'{"rules": ' + b"[" * 20000 + b"]" * 20000 + b"}"
    assert _error(client.post("/api/games", content=body, headers=JSON), 400) == \
        "the request body is nested too deeply"


@pytest.mark.parametrize(("body", "message"), [
    ({"seats": ["human", "nosuchagent"]}, "seats[1]: unknown agent 'nosuchagent'"),
    ({"seats": ["human"]}, "seats: give 2 to 4 seats, got 1"),
    ({"seats": "human"}, "seats must be a list"),
    ({"seats": ["human", "random"], "rules": {"tiles_per_player": 0}}, "rules: "),
    ({"seats": ["human", "random"], "rules": {"bogus": 1}}, "rules: unknown rule option(s): bogus"),
    ({"seats": ["human", "random"], "game": "chess"}, "game: unknown game 'chess'"),
    ({"seats": ["human", "random"], "seed": -1}, "seed must be an integer"),
    ({"seats": ["human", "random"], "colour": "red"}, "unknown field(s) colour"),
    ({"seats": ["mcts:sims=1000000000000", "human"]},
     "seats[0]: sims must be an integer 1..20000 on the board"),
    ({"seats": ["human", "az:path=/etc/passwd"]},
     "seats[1]: the board plays only the built-in network"),
])
def test_bad_new_games_are_refused(served: tuple[Path, TestClient], body: dict[str, Any],
                                   message: str) -> None:
    _, client = served
    assert _error(client.post("/api/games", json=body), 400).startswith(message)
    _error(client.post("/api/games", content=b"[1", headers=JSON), 400)


def test_agents_only_game_and_thurn_und_taxis_play(served: tuple[Path, TestClient]) -> None:
    _, client = served
    g = _new_game(client, seats=["greedy", "random", "random"])
    assert not g["human_to_move"] and g["to_move"] == 0
    g = client.post(f"/api/games/{g['id']}/agent", json={}).json()
    assert g["history"][1]["player"] == 0 and g["ply"] == 2
    t = client.post("/api/games", json={"game": "thurn_und_taxis", "seats": ["human", "random"],
                                        "seed": 1}).json()
    assert t["human_to_move"] and t["moves"] and all(m["hex"] is None for m in t["moves"])
    t2 = client.post(f"/api/games/{t['id']}/move", json={"move": t["moves"][0]["notation"]})
    assert t2.status_code == 200 and t2.json()["ply"] > t["ply"]
    # the human's picture shows its own hand and only the agent's card count
    rows = re.findall(r'<g class="seat-row" data-seat="(\d)">(.*?)</g>', t2.json()["svg"])
    hands = {seat: re.sub("<[^>]+>", " ", row).split("hand:")[1].strip() for seat, row in rows}
    assert re.fullmatch(r"\d+ cards", hands["1"]) and not re.fullmatch(r"\d+ cards", hands["0"])


def test_analysis_of_a_record_position_and_of_a_game(served: tuple[Path, TestClient]) -> None:
    _, client = served
    res = client.post("/api/analysis", json={"agent": "mcts:sims=30", "path": "0/g.jsonl",
                                             "ply": 4}).json()
    assert res["simulations"] == 30 and res["agent"] == "mcts:sims=30"
    cands = res["candidates"]
    assert sum(c["visits"] for c in cands) == 30
    assert [c["visits"] for c in cands] == sorted((c["visits"] for c in cands), reverse=True)
    assert all(c["notation"].startswith("tile@") and len(c["cells"]) == 3 for c in cands)
    assert res["chosen"] == cands[0]["notation"]
    g = _new_game(client)
    res = client.post("/api/analysis", json={"agent": "mcts:sims=20", "game_id": g["id"]}).json()
    assert {c["notation"] for c in res["candidates"]} == {m["notation"] for m in g["moves"]}


def test_an_analysis_gives_each_candidate_its_line(served: tuple[Path, TestClient]) -> None:
    """Each candidate's line (its principal variation, from the search tree) and, for a
    background analysis, the positions along it."""
    _, client = served
    body = {"agent": "mcts:sims=200", "path": "0/g.jsonl", "ply": 4}
    job = client.post("/api/analysis", json={**body, "background": True}).json()
    v = _finished(client, job["id"])
    res = v["result"]
    best = res["candidates"][0]
    assert best["line"][0] == {"notation": best["notation"], "player": 1, "at": best["at"]}
    assert len(best["line"]) >= 2 and best["line"][1]["player"] == 1  # the build follows
    assert [m["notation"] for m in best["line"]] == res["pv"][:len(best["line"])]
    assert all(c["line"] and c["line"][0]["notation"] == c["notation"]
               for c in res["candidates"] if c["visits"])
    url = f"/api/analysis/{job['id']}/line"
    root = client.get(url, params={"cand": 0, "step": 0}).json()
    assert root["last"] is None and root["steps"] == len(best["line"])
    assert root["svg"].count('class="hex"') == 3
    one = client.get(url, params={"cand": 0, "step": 1}).json()
    assert one["last"] == best["notation"] and one["svg"].count('class="hex"') == 6
    assert _error(client.get(url, params={"cand": 0, "step": len(best["line"]) + 1}), 400) \
        .startswith("ply must be an integer")
    game = client.post("/api/analysis/game", json={"agent": "mcts:sims=5",
                                                   "path": _small_record(client)}).json()
    _finished(client, game["id"])
    assert _error(client.get(f"/api/analysis/{game['id']}/line"), 409).startswith(
        "this analysis has no lines")


def test_an_agents_search_is_shown_after_its_move(served: tuple[Path, TestClient]) -> None:
    """In Play, the last agent move's search (its top moves, line, value) and the game's
    value graph so far; none of it in a game with hidden information a person plays."""
    _, client = served
    g = _new_game(client, seats=["human", "mcts:sims=40"])
    g = client.post(f"/api/games/{g['id']}/move", json={"move": "tile@0,0:N"}).json()
    g = client.post(f"/api/games/{g['id']}/move", json={"move": g["moves"][0]["notation"]}).json()
    assert g["last_stats"] == {} and g["values"] == []
    g = client.post(f"/api/games/{g['id']}/agent", json={}).json()
    st = g["last_stats"]
    assert (st["seat"], st["spec"], st["ply"], st["simulations"]) == (1, "mcts:sims=40", 4, 40)
    assert st["pv"][0] == g["history"][4]["notation"] == st["top"][0]["move"]
    assert "sims, value" in st["summary"]
    assert g["values"] == [{"ply": 4, "player": 1, "values": [-st["root_value"], st["root_value"]],
                            "chosen": st["pv"][0], "played": st["pv"][0]}]
    hidden = _new_game(client, seats=["human", "mcts:sims=10"],
                       rules={"tiles_per_player": 2, "tile_preview": True})
    hidden = client.post(f"/api/games/{hidden['id']}/move",
                         json={"move": hidden["moves"][0]["notation"]}).json()
    hidden = client.post(f"/api/games/{hidden['id']}/move",
                         json={"move": hidden["moves"][0]["notation"]}).json()
    hidden = client.post(f"/api/games/{hidden['id']}/agent", json={}).json()
    assert hidden["last_stats"] == {} and hidden["values"] == []


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"agent": "greedy", "path": "0/g.jsonl", "ply": 4}, 400, "agent 'greedy' does not search"),
    ({"agent": "mcts:sims=999999", "path": "0/g.jsonl", "ply": 4}, 400,
     "agent: sims must be an integer 1..20000"),
    ({"agent": "mcts:time=1000", "path": "0/g.jsonl", "ply": 4}, 400, "agent: time must be"),
    ({"agent": "nope", "path": "0/g.jsonl", "ply": 4}, 400, "agent: unknown agent 'nope'"),
    ({"agent": "mcts", "path": "0/g.jsonl", "ply": 0}, 400, "nobody is to move"),
    ({"agent": "mcts", "path": "0/g.jsonl", "ply": 99}, 400, "ply must be an integer 0..81"),
    ({"agent": "mcts", "path": "0/../secret.jsonl", "ply": 1}, 403, "refused path"),
    ({"agent": "mcts", "game_id": "nope"}, 404, "no game 'nope'"),
    ({"agent": "mcts"}, 400, "missing path (a path from /api/records: the query parameter "
     "'path', or the field 'path' of an analysis)"),
    ({"agent": "mcts", "path": "0/g.jsonl", "ply": "1" * 5000}, 400, "ply must be an integer"),
    ({"agent": "mcts:sims=5", "path": 5, "ply": 1}, 400, "path must be a string"),
    ({"agent": "mcts", "game_id": "x", "path": "0/g.jsonl", "ply": 4}, 400,
     "give either path and ply (a record) or game_id (a game in play), not both"),
    ({"agent": "az:path=/etc/passwd", "path": "0/g.jsonl", "ply": 4}, 400,
     "agent: the board plays only the built-in network (az:builtin), not a file"),
])
def test_bad_analyses_are_refused(served: tuple[Path, TestClient], body: dict[str, Any],
                                  status: int, message: str) -> None:
    _, client = served
    assert _error(client.post("/api/analysis", json=body), status).startswith(message)


@pytest.fixture(scope="module")
def tournament_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small tournament run directory (random vs greedy, 2 games of 1 tile each), written by
    ``taluva tournament``."""
    root = tmp_path_factory.mktemp("served")
    out = root / "t1"
    assert main(["tournament", "--agents", "random", "greedy", "--games", "2",
                 "--tiles-per-player", "1", "--seed", "1", "--out", str(out)]) == 0
    return root


def test_run_page(tournament_run: Path) -> None:
    client = TestClient(create_app([tournament_run]), base_url=BASE,
                        raise_server_exceptions=False)
    assert client.get("/api/runs").json()["runs"] == [
        {"path": "0/t1", "dir": str(tournament_run.resolve()), "name": "t1"}]
    run = client.get("/api/run", params={"path": "0/t1"}).json()
    assert run["game"] == "taluva" and run["agents"] == ["random", "greedy"]
    assert sorted(r["agent"] for r in run["ratings"]) == ["greedy", "random"]
    assert run["table_text"].startswith("2 games; endings: ")
    assert run["pictures"] == ["0/t1/ratings.png", "0/t1/scores.png"]
    assert len(run["games"]) == 2 and all(g["path"].startswith("0/t1/games/")
                                          for g in run["games"])
    assert run["games"][0]["seats"] is not None
    for g in run["games"]:
        assert client.get("/api/record", params={"path": g["path"]}).status_code == 200
    pic = client.get("/api/picture", params={"path": "0/t1/ratings.png"})
    assert pic.status_code == 200 and pic.headers["content-type"] == "image/png"
    assert _error(client.get("/api/picture", params={"path": "0/t1/results.json"}), 403)
    assert _error(client.get("/api/picture", params={"path": "0/../x.png"}), 403)
    assert _error(client.get("/api/run", params={"path": "0/t1/games"}), 404).endswith(
        "not a tournament run directory (no results.json)")
    assert _error(client.get("/api/run", params={"path": "0/.."}), 403)


# -- the value graph (a whole game's analysis) and cancelling analyses -------------------------


def _small_record(client: TestClient) -> str:
    """A record of random against random, two tiles each (seed 3), saved by the play routes:
    8 positions with a seat to move (plies 1 2 4 5 7 8 10 11)."""
    g = client.post("/api/games", json={"seats": ["random", "random"],
                                        "rules": {"tiles_per_player": 2}, "seed": 3}).json()
    while not g["over"]:
        g = client.post(f"/api/games/{g['id']}/agent", json={}).json()
    return str(client.post(f"/api/games/{g['id']}/save", json={"dir": 0}).json()["path"])


def _finished(client: TestClient, job_id: str) -> dict[str, Any]:
    """Poll ``GET /api/analysis/ID`` until the job is no longer running (at most 10 minutes: a
    cold first search compiles, and a busy machine slows it); a failed job answers its error
    (``{"error"}``)."""
    import time

    deadline = time.monotonic() + 600
    while True:
        v = client.get(f"/api/analysis/{job_id}").json()
        if v.get("status") != "running" or time.monotonic() > deadline:
            return dict(v)
        time.sleep(0.02)


def test_game_analysis_gives_the_value_graph(served: tuple[Path, TestClient]) -> None:
    _, client = served
    path = _small_record(client)
    start = client.post("/api/analysis/game", json={"agent": "mcts:sims=50", "path": path})
    assert start.status_code == 202
    job = start.json()
    assert (job["kind"], job["unit"], job["total"]) == ("game", "positions", 8)
    v = _finished(client, job["id"])
    assert (v["status"], v["done"], v["total"], v["error"]) == ("done", 8, 8, None)
    res = v["result"]
    assert (res["agent"], res["seed"], res["seats"], res["players"]) == \
        ("mcts:sims=50", 0, 2, ["random", "random"])
    assert [(p["ply"], p["player"], p["values"], p["chosen"], p["played"])
            for p in res["points"]] == [
        (1, 0, [0.0, 0.0], "tile@0,0:SW", "tile@0,0:N"),
        (2, 0, [-0.06, 0.06], "hut@0,1", "hut@-1,1"),
        (4, 1, [0.02, -0.02], "tile@-2,0:N", "tile@1,2:S"),
        (5, 1, [0.02, -0.02], "hut@0,1", "hut@2,1"),
        (7, 0, [0.0, 0.0], "tile@4,-1:NE", "tile@1,-1:NW"),
        (8, 0, [-0.04, 0.04], "hut@1,1", "expand@-1,1:S"),
        (10, 1, [0.0, 0.0], "tile@0,0:NW", "tile@1,-3:N"),
        (11, 1, [0.0, 0.0], "hut@1,-2", "hut@1,-2")]
    assert all(p["simulations"] == 50 for p in res["points"])
    # a point is the analysis of that one position (same agent and seed)
    one = client.post("/api/analysis", json={"agent": "mcts:sims=50", "path": path,
                                             "ply": 4}).json()
    assert (one["values"], one["root_value"], one["chosen"]) == \
        ([0.02, -0.02], -0.02, "tile@-2,0:N")


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"agent": "greedy", "path": "0/g.jsonl"}, 400, "agent 'greedy' does not search"),
    ({"agent": "nope", "path": "0/g.jsonl"}, 400, "agent: unknown agent 'nope'"),
    ({"agent": "mcts:sims=5000", "path": "0/g.jsonl"}, 400,
     "agent 'mcts:sims=5000': 54 positions x 5000 sims = 270000 simulations, more than the "
     "200000 of a game analysis: use sims<=3703"),
    ({"agent": "mcts:time=20", "path": "0/g.jsonl"}, 400,
     "agent 'mcts:time=20': 54 positions x 20 s is more than the 600 s of a game analysis: "
     "use time<=11.1"),
    ({"agent": "mcts:sims=99999", "path": "0/g.jsonl"}, 400, "agent: sims must be"),
    ({"agent": "mcts", "path": "0/bad.jsonl"}, 422, "0/bad.jsonl: line 1"),
    ({"agent": "mcts", "path": "0/../secret.jsonl"}, 403, "refused path"),
    ({"agent": "mcts", "path": "0/g.jsonl", "ply": 3}, 400, "unknown field(s) ply"),
])
def test_bad_game_analyses_are_refused(served: tuple[Path, TestClient], body: dict[str, Any],
                                       status: int, message: str) -> None:
    _, client = served
    assert _error(client.post("/api/analysis/game", json=body), status).startswith(message)


def test_unknown_analysis_jobs_404(served: tuple[Path, TestClient]) -> None:
    _, client = served
    assert _error(client.get("/api/analysis/nope"), 404).startswith("no analysis 'nope'")
    assert _error(client.delete("/api/analysis/nope", headers=JSON), 404).startswith(
        "no analysis 'nope'")


def test_cancel_stops_a_game_analysis_between_positions(
        served: tuple[Path, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker is held before its third position; the cancel arrives there: exactly the two
    positions done before it are kept and the third search returns at once."""
    import threading

    from taluva_ai.web import analysis

    _, client = served
    path = _small_record(client)
    reached, go = threading.Event(), threading.Event()
    calls: list[int] = []
    search = analysis.search_position

    def held(agent: Any, state: Any, cancel: Any = None, on_sims: Any = None) -> Any:
        calls.append(1)
        if len(calls) == 3:
            reached.set()
            go.wait(30)
        return search(agent, state, cancel, on_sims)

    monkeypatch.setattr(analysis, "search_position", held)
    job = client.post("/api/analysis/game", json={"agent": "mcts:sims=20", "path": path}).json()
    assert reached.wait(60)
    v = client.get(f"/api/analysis/{job['id']}").json()
    assert (v["status"], v["done"], v["total"], v["cancel_requested"]) == \
        ("running", 2, 8, False)
    assert [p["ply"] for p in v["result"]["points"]] == [1, 2]
    v = client.delete(f"/api/analysis/{job['id']}", headers=JSON).json()
    assert (v["status"], v["cancel_requested"]) == ("running", True)
    go.set()
    v = _finished(client, job["id"])
    assert (v["status"], v["done"], v["total"]) == ("cancelled", 2, 8)
    assert [p["ply"] for p in v["result"]["points"]] == [1, 2]
    assert len(calls) == 3


def test_cancel_stops_a_position_analysis_between_chunks(
        served: tuple[Path, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    """sims=50 in chunks of 10: held before its third chunk, cancelled there, the search ends
    after that chunk (30 simulations), without a result."""
    import threading

    from taluva_ai.agents.mcts import MCTSAgent
    from taluva_ai.web import analysis

    _, client = served
    monkeypatch.setattr(analysis, "CHUNK_SIMS", 10)
    reached, go = threading.Event(), threading.Event()
    calls: list[int] = []
    search = MCTSAgent.search

    def held(self: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 3:
            reached.set()
            go.wait(30)
        search(self, *args, **kwargs)

    monkeypatch.setattr(MCTSAgent, "search", held)
    body = {"agent": "mcts:sims=50", "path": "0/g.jsonl", "ply": 4, "background": True}
    start = client.post("/api/analysis", json=body)
    assert start.status_code == 202
    job = start.json()
    assert (job["kind"], job["unit"], job["total"]) == ("position", "simulations", 50)
    assert reached.wait(60)
    v = client.get(f"/api/analysis/{job['id']}").json()
    assert (v["status"], v["done"], v["total"]) == ("running", 20, 50)
    client.delete(f"/api/analysis/{job['id']}", headers=JSON)
    go.set()
    v = _finished(client, job["id"])
    assert (v["status"], v["done"], v["result"]) == ("cancelled", 30, None)
    assert len(calls) == 3


def test_position_analysis_in_chunks_and_in_the_background(
        served: tuple[Path, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks continue one tree (35 sims in chunks of 10 = 35 root visits); a background job's
    result is the synchronous route's; a failing one answers its error on GET."""
    from taluva_ai.web import analysis

    _, client = served
    body = {"agent": "mcts:sims=35", "path": "0/g.jsonl", "ply": 4}
    whole = client.post("/api/analysis", json=body).json()
    job = client.post("/api/analysis", json={**body, "background": True}).json()
    v = _finished(client, job["id"])
    assert (v["status"], v["done"], v["total"]) == ("done", 35, 35)
    assert v["result"] == whole
    monkeypatch.setattr(analysis, "CHUNK_SIMS", 10)
    res = client.post("/api/analysis", json=body).json()
    assert res["simulations"] == 35 and sum(c["visits"] for c in res["candidates"]) == 35
    assert _error(client.post("/api/analysis", json={**body, "background": 1}), 400) == \
        "background must be true or false, got 1"
    assert _error(client.post("/api/analysis", json={**body, "agent": "greedy",
                                                     "background": True}), 400) \
        .startswith("agent 'greedy' does not search")


def test_a_failing_game_analysis_answers_its_error(served: tuple[Path, TestClient],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from taluva_ai.web import analysis

    _, client = served

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(analysis, "search_position", broken)
    job = client.post("/api/analysis/game", json={"agent": "mcts:sims=5", "path": "0/g.jsonl"})
    assert job.status_code == 202
    _finished(client, job.json()["id"])
    assert _error(client.get(f"/api/analysis/{job.json()['id']}"), 500) == \
        "agent 'mcts:sims=5' failed at ply 1: RuntimeError: boom second line"


def test_a_timed_search_runs_in_chunks_until_its_time_and_stops_on_cancel() -> None:
    """``mcts:time=...`` (PUCT root) searches in chunks of CHUNK_SIMS_TIMED until the time is
    up, so a cancel stops it between chunks (it used to run whole)."""
    import threading

    from taluva_ai.agents import make_agent
    from taluva_ai.games.taluva import TaluvaGame
    from taluva_ai.web import analysis

    state = TaluvaGame().new_initial_state(seed=3)
    state.draw()
    seen: list[int] = []
    cancel = threading.Event()

    def progress(done: int) -> None:
        seen.append(done)
        cancel.set()  # cancel after the first chunk

    agent = make_agent("mcts:time=30", seed=0)
    assert analysis.search_position(agent, state, cancel=cancel, on_sims=progress) is None
    assert seen == [analysis.CHUNK_SIMS_TIMED]
    agent = make_agent("mcts:time=0.2", seed=0)
    seen.clear()
    action, values = analysis.search_position(agent, state, on_sims=seen.append)
    assert action in state.legal_actions() and values[0] is not None
    assert len(seen) >= 1
    assert seen == [analysis.CHUNK_SIMS_TIMED * (i + 1) for i in range(len(seen))]


@pytest.mark.parametrize("spec", [
    "mcts:sims=64,root=gumbel,prior=heuristic,leaf_batch=8",  # the Python search's batches
    "az:builtin,sims=64,root=gumbel",  # the compiled network-guided search's rounds
])
def test_a_gumbel_root_search_reports_each_batch_and_stops_on_cancel(spec: str) -> None:
    """A Gumbel root plans its whole budget, so it is searched in one call whose ``progress``
    is seen after every batch of leaves: the simulations done grow in steps of at most the
    leaf batch, and a cancel stops it at the next batch, without a result."""
    import threading

    from taluva_ai.agents import make_agent
    from taluva_ai.games.taluva import TaluvaGame
    from taluva_ai.web import analysis

    state = TaluvaGame().new_initial_state(seed=3)
    state.draw()
    agent = make_agent(spec, seed=0)
    batch = int(agent.config.leaf_batch)
    seen: list[int] = []
    action, values = analysis.search_position(agent, state, on_sims=seen.append)
    assert action in state.legal_actions() and values[0] is not None
    assert seen[-1] == 64 and len(seen) >= 64 // batch
    steps = np.diff([0, *seen])
    assert steps.min() >= 1 and steps.max() <= batch
    cancel = threading.Event()
    seen.clear()

    def cancel_at_16(done: int) -> None:
        seen.append(done)
        if done >= 16:
            cancel.set()

    agent = make_agent(spec, seed=0)
    assert analysis.search_position(agent, state, cancel=cancel, on_sims=cancel_at_16) is None
    assert seen[-1] >= 16 and seen[-1] < 16 + batch and seen[-2] < 16


def test_errors_echo_at_most_max_message_characters(served: tuple[Path, TestClient]) -> None:
    """What the client sent is echoed in the error, bounded: a 20,000-character agent spec,
    path or move gives one line of at most MAX_MESSAGE characters, cut with '…'."""
    from taluva_ai.web.errors import MAX_MESSAGE

    _, client = served
    huge = "mcts:" + "x" * 20_000
    msgs = [
        _error(client.post("/api/analysis", json={"agent": huge, "path": "0/g.jsonl",
                                                  "ply": 4}), 400),
        _error(client.get("/api/record", params={"path": "0/" + "a" * 20_000}), 403),
    ]
    g = _new_game(client)
    msgs.append(_error(client.post(f"/api/games/{g['id']}/move",
                                   json={"move": "tile@" + "9" * 20_000}), 400))
    for msg in msgs:
        assert len(msg) == MAX_MESSAGE and msg.endswith("…"), msg[:80]
    assert msgs[0].startswith("agent: agent spec 'mcts:xxx")


def test_the_play_view_is_told_while_an_agents_first_move_compiles(
        served: tuple[Path, TestClient], monkeypatch: pytest.MonkeyPatch) -> None:
    """GET /api/compiling: null when the server compiles nothing; while it compiles (an agent's
    first move on a fresh install) the kernel, the seconds so far and about how long the moving
    agent's first move compiles, which the Play view shows ('compiling its search (first use,
    about N s; M s so far)')."""
    from taluva_ai.games import compiling
    from taluva_ai.web import play

    _, client = served
    monkeypatch.setattr(compiling, "compiling_now", lambda: None)
    r = client.get("/api/compiling", params={"agent": "greedy"})
    assert r.status_code == 200 and r.json() == {"compiling": None}
    monkeypatch.setattr(compiling, "compiling_now",
                        lambda: ("kernels.standard_apply_action", 4.26))
    for spec, about in (("greedy", 15), ("az:builtin", 35), ("mcts:sims=30", 30),
                        ("web_agents:Quick", play.FIRST_USE_DEFAULT_S), (None, 30)):
        params = {} if spec is None else {"agent": spec}
        assert client.get("/api/compiling", params=params).json() == {"compiling": {
            "kernel": "kernels.standard_apply_action", "seconds": 4.3, "about_s": about}}
