"""The browser board's app (taluva_ai.web.app, ``taluva serve``) through Starlette's TestClient:
the listing, replay and board routes, the path checks, one-line JSON errors."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

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
    client = TestClient(create_app([runs]), raise_server_exceptions=False)
    return runs, client


def _error(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert list(body) == ["error"] and "\n" not in body["error"]
    assert "Traceback" not in resp.text
    return str(body["error"])


def test_page_and_static_files(served: tuple[Path, TestClient]) -> None:
    _, client = served
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for name, kind in (("app.js", "javascript"), ("style.css", "text/css")):
        assert f"/static/{name}" in page.text
        resp = client.get(f"/static/{name}")
        assert resp.status_code == 200 and kind in resp.headers["content-type"]


def test_listing_has_only_records_inside(served: tuple[Path, TestClient]) -> None:
    runs, client = served
    data = client.get("/api/records").json()
    assert data["dirs"] == [str(runs.resolve())]
    assert [r["path"] for r in data["records"]] == ["0/bad.jsonl", "0/g.jsonl",
                                                    "0/sub/tnt.jsonl"]


def test_record_and_every_board(served: tuple[Path, TestClient]) -> None:
    _, client = served
    rec = client.get("/api/record", params={"path": "0/g.jsonl"}).json()
    assert rec["game"] == "taluva" and rec["players"] == ["greedy", "random"]
    assert rec["positions"] == 82 and len(rec["moves"]) == 81
    assert rec["moves"][:3] == [{"ply": 0, "player": "chance", "notation": "draw:JS"},
                                {"ply": 1, "player": 0, "notation": "tile@0,0:SE"},
                                {"ply": 2, "player": 0, "notation": "hut@-1,0"}]
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


def test_thurn_und_taxis_opens_and_steps(served: tuple[Path, TestClient]) -> None:
    pytest.importorskip("matplotlib")
    _, client = served
    rec = client.get("/api/record", params={"path": "0/sub/tnt.jsonl"}).json()
    assert rec["game"] == "thurn_und_taxis" and rec["positions"] == 301
    resp = client.get("/api/board", params={"path": "0/sub/tnt.jsonl", "ply": 10})
    assert resp.status_code == 200 and b"<svg" in resp.content


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


def test_serve_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[tuple[Any, str, int]] = []
    monkeypatch.setattr(web, "run_server", lambda app, host, port: calls.append(
        (app, host, port)))
    assert main(["serve", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "open http://127.0.0.1:8000/" in out and err == ""
    assert calls[0][1:] == ("127.0.0.1", 8000)
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
