"""The browser board runs only what its user chose (issue 49; docs/web.md, Security): agent
specs over HTTP limited to the registered agents (``module:Class`` only from modules the server
allows), every costly search parameter bounded, a move stopped when its client leaves or the
server stops, state-changing requests only from the page itself (JSON, its own Origin and
Host), bodies refused while they stream in, pictures sandboxed, saves never through a link."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from taluva_ai import web  # noqa: E402
from taluva_ai.web.app import MAX_BODY_BYTES, create_app  # noqa: E402
from taluva_ai.web.errors import WebError  # noqa: E402
from taluva_ai.web.play import GameSession  # noqa: E402

TESTS = Path(__file__).parent
ROOT = TESTS.parent
GOLDEN = TESTS / "data" / "golden_greedy_random_seed7.jsonl"
BASE = "http://127.0.0.1:8000"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "g.jsonl").write_bytes(GOLDEN.read_bytes())
    return runs


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file that ``logging.basicConfig(filename=..., filemode="w")`` would truncate."""
    f = tmp_path / "victim.txt"
    f.write_text("precious\n", encoding="utf-8")
    return f


def _client(runs: Path, **kw: Any) -> TestClient:
    return TestClient(create_app([runs], **kw), base_url=BASE, raise_server_exceptions=False)


def _error(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert list(body) == ["error"] and "\n" not in body["error"]
    return str(body["error"])


# -- agent specs ------------------------------------------------------------------------------


def test_a_module_spec_as_a_seat_or_an_analysis_is_refused_and_runs_nothing(
        runs: Path, victim: Path, made: list[str]) -> None:
    client = _client(runs)
    handlers = list(logging.getLogger().handlers)
    spec = f"logging:basicConfig:filename={victim},filemode=w"
    msg = _error(client.post("/api/games", json={"seats": ["human", spec]}), 403)
    assert msg.startswith(f"seats[1]: {spec!r} names a Python class (module:Class)")
    assert "--allow-agent-module logging" in msg
    for route, body in [
        ("/api/analysis", {"agent": spec, "path": "0/g.jsonl", "ply": 4}),
        ("/api/analysis", {"agent": spec, "path": "0/g.jsonl", "ply": 4, "background": True}),
        ("/api/analysis/game", {"agent": spec, "path": "0/g.jsonl"}),
    ]:
        assert _error(client.post(route, json=body), 403).startswith(f"agent: {spec!r} names")
    for other in ("os:system:command=true", "logging.config:fileConfig:fname=x",
                  "nope:X"):
        _error(client.post("/api/games", json={"seats": [other, "human"]}), 403)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert logging.getLogger().handlers == handlers
    assert made == []


def test_only_the_modules_the_server_allows_play(runs: Path, victim: Path) -> None:
    assert _error(_client(runs).post("/api/games", json={"seats": ["web_agents:Quick",
                                                                   "human"]}), 403)
    client = _client(runs, agent_modules=["web_agents"])
    g = client.post("/api/games", json={"seats": ["web_agents:Quick", "human"],
                                        "rules": {"tiles_per_player": 1}, "seed": 1})
    assert g.status_code == 200, g.text
    moved = client.post(f"/api/games/{g.json()['id']}/agent", json={})
    assert moved.status_code == 200 and moved.json()["ply"] > g.json()["ply"]
    assert _error(client.post("/api/games", json={"seats": ["web_agents:Quick:sims=50000",
                                                            "human"]}), 400) == \
        "seats[0]: sims must be an integer 1..20000 on the board, got 50000"
    spec = f"logging:basicConfig:filename={victim},filemode=w"
    assert "the modules allowed are web_agents" in \
        _error(client.post("/api/games", json={"seats": [spec, "human"]}), 403)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    with pytest.raises(ValueError, match="not a dotted module name"):
        create_app([runs], agent_modules=["web agents"])


def test_a_file_parameter_of_an_allowed_class_names_a_served_file(runs: Path,
                                                                   made: list[str]) -> None:
    (runs / "w.pt").write_bytes(b"weights")
    client = _client(runs, agent_modules=["web_agents"])
    g = client.post("/api/games", json={"seats": ["web_agents:Quick:path=0/w.pt,sims=3",
                                                  "human"]})
    assert g.status_code == 200, g.text
    assert made == [f"web_agents:Quick:path={(runs / 'w.pt').resolve()},sims=3"]
    _error(client.post("/api/games", json={"seats": ["web_agents:Quick:path=/etc/passwd",
                                                     "human"]}), 400)


def test_serve_passes_its_hosts_and_modules_to_the_app(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from taluva_ai.cli import main

    apps: list[Any] = []
    monkeypatch.setattr(web, "listen", lambda host, port: socket.socket())
    monkeypatch.setattr(web, "run_server", lambda app, sock: apps.append(app))
    assert main(["serve", str(tmp_path), "--port", "9000", "--allow-host", "box.lan",
                 "--allow-agent-module", "web_agents"]) == 0
    assert "WARNING: the page may run Python classes of web_agents" in capsys.readouterr().err
    for base, status in (("http://box.lan:9000", 200), ("http://localhost:9000", 200),
                         ("http://127.0.0.1:9000", 200), ("http://evil.example:9000", 403),
                         ("http://box.lan:9001", 403)):
        client = TestClient(apps[0], base_url=base, raise_server_exceptions=False)
        assert client.get("/api/records").status_code == status, base
    client = TestClient(apps[0], base_url="http://box.lan:9000")
    assert client.post("/api/games", json={"seats": ["web_agents:Quick", "human"]}
                       ).status_code == 200
    for bad in (["--allow-host", "box.lan:80"], ["--allow-host", "a b"],
                ["--allow-agent-module", "web agents"]):
        with pytest.raises(SystemExit) as e:
            main(["serve", str(tmp_path), *bad])
        assert e.value.code == 2
        assert "taluva serve: error: --allow-" in capsys.readouterr().err


@pytest.mark.parametrize(("spec", "message"), [
    ("openspiel:sims=20000,rollouts=100000",
     "rollouts must be an integer 1..100 on the board, got 100000"),
    ("openspiel:sims=1000,rollouts=50",
     "sims x rollouts must be at most 20000 on the board (each simulation plays rollouts "
     "random games), got 1000 x 50 = 50000"),
    ("openspiel:rollouts=60", "sims x rollouts must be at most 20000 on the board"),
    ("mcts:samples=100000", "samples must be an integer 1..64 on the board, got 100000"),
    ("mcts:leaf_batch=1000000", "leaf_batch must be an integer 1..256 on the board"),
    ("az:builtin,threads=64", "threads must be an integer 1..8 on the board, got 64"),
    ("az:builtin,samples=65", "samples must be an integer 1..64 on the board, got 65"),
    ("mcts:sims=99999999999999999999", "sims must be an integer 1..20000 on the board"),
    ("mcts:sims=2.5", "sims must be an integer 1..20000 on the board, got 2.5"),
    ("ismcts:time=1e308", "time must be a number of seconds in (0, 60] on the board"),
    ("mcts:time=inf", "time must be a number of seconds in (0, 60] on the board"),
])
def test_costly_search_parameters_are_bounded(runs: Path, made: list[str], spec: str,
                                              message: str) -> None:
    client = _client(runs)
    got = _error(client.post("/api/games", json={"seats": ["human", spec]}), 400)
    assert got.startswith(f"seats[1]: {message}"), got
    got = _error(client.post("/api/analysis", json={"agent": spec, "path": "0/g.jsonl",
                                                    "ply": 4}), 400)
    assert got.startswith(f"agent: {message}"), got
    assert made == []


def test_a_checkpoint_plays_only_from_under_the_served_directories(
        runs: Path, tmp_path: Path) -> None:
    client = _client(runs)
    outside = tmp_path / "outside.pt"
    outside.write_bytes(b"not a checkpoint")
    (runs / "link.pt").symlink_to(outside)
    for path, status, start in [
        ("0/missing.pt", 404, "seats[1]: checkpoint: no checkpoint '0/missing.pt'"),
        ("0/../outside.pt", 403, "seats[1]: checkpoint: refused path '0/../outside.pt'"),
        ("0/link.pt", 403, "seats[1]: checkpoint: refused path '0/link.pt': it leads outside"),
        ("0/g.jsonl", 403, "seats[1]: checkpoint: refused path '0/g.jsonl'"),
        (str(outside), 400, "seats[1]: the board plays only the built-in network "
                            "(az:builtin), not a file outside the served directories"),
    ]:
        got = _error(client.post("/api/games", json={"seats": ["human", f"az:path={path}"]}),
                     status)
        assert got.startswith(start), got


def test_a_checkpoint_under_a_served_directory_plays(runs: Path) -> None:
    torch = pytest.importorskip("torch")
    from taluva_ai.agents.alphazero.config import NetConfig
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import build_net, save_checkpoint

    torch.manual_seed(0)
    enc = make_encoder("taluva", 2)
    config = NetConfig("tiny", channels=8, blocks=1)
    (runs / "run").mkdir()
    save_checkpoint(runs / "run" / "best.pt", build_net(enc, config), enc, config,
                    {"name": "taluva", "options": {}}, {"iteration": 0})
    client = _client(runs)
    spec = "az:path=0/run/best.pt,sims=4"
    g = client.post("/api/games", json={"seats": [spec, "human"],
                                        "rules": {"tiles_per_player": 1}, "seed": 2})
    assert g.status_code == 200, g.text
    assert g.json()["seats"] == [spec, "human"]
    moved = client.post(f"/api/games/{g.json()['id']}/agent", json={})
    assert moved.status_code == 200, moved.text


# -- requests from other sites ----------------------------------------------------------------


def test_cross_site_and_non_json_requests_are_refused_and_do_nothing(
        runs: Path, victim: Path, made: list[str]) -> None:
    client = _client(runs)
    spec = f"logging:basicConfig:filename={victim},filemode=w"
    body = json.dumps({"seats": ["human", spec]})
    game = {"seats": ["human", "random"], "seed": 1}
    # a form or a no-cors fetch of another page: text/plain, no preflight
    assert _error(client.post("/api/games", content=body,
                              headers={"Content-Type": "text/plain"}), 415) == \
        "a POST request must be sent as application/json, got 'text/plain'"
    _error(client.post("/api/games", content=json.dumps(game),
                       headers={"Content-Type": "text/plain;charset=UTF-8"}), 415)
    _error(client.post("/api/games", content=json.dumps(game)), 415)
    _error(client.post("/api/games", content=json.dumps(game),
                       headers={"Content-Type": "application/x-www-form-urlencoded"}), 415)
    # another origin, even with the right type
    assert _error(client.post("/api/games", json=game,
                              headers={"Origin": "http://evil.example"}), 403).startswith(
        "refused a request from origin 'http://evil.example'")
    _error(client.post("/api/games", json=game, headers={"Origin": "null"}), 403)
    _error(client.post("/api/games", json=game, headers={"Origin": "http://127.0.0.1:9999"}),
           403)
    _error(client.post("/api/games", json=game, headers={"Sec-Fetch-Site": "cross-site"}), 403)
    _error(client.delete("/api/analysis/x", headers={"Origin": "http://evil.example", **JSON}),
           403)
    _error(client.delete("/api/analysis/x"), 415)
    assert made == []
    assert victim.read_text(encoding="utf-8") == "precious\n"
    # the page itself: its own origin, JSON
    ok = client.post("/api/games", json=game, headers={"Origin": BASE,
                                                        "Sec-Fetch-Site": "same-origin"})
    assert ok.status_code == 200, ok.text
    assert made == ["random"]
    assert _error(client.delete("/api/analysis/x", headers=JSON), 404)


def test_dns_rebinding_another_host_name_is_refused(runs: Path) -> None:
    client = _client(runs)
    assert _error(client.get("/api/records", headers={"Host": "evil.example:8000"}),
                  403).startswith("refused Host 'evil.example:8000': this server answers only")
    _error(client.post("/api/games", json={"seats": ["random", "random"]},
                       headers={"Host": "evil.example:8000",
                                "Origin": "http://evil.example:8000"}), 403)
    for host in ("127.0.0.1:8000", "localhost:1234", "[::1]:80", "localhost"):
        assert client.get("/api/records", headers={"Host": host}).status_code == 200, host
    served = _client(runs, hosts=web.served_hosts("127.0.0.1", 8000))
    assert served.get("/api/records", headers={"Host": "localhost:8000"}).status_code == 200
    _error(served.get("/api/records", headers={"Host": "localhost:9000"}), 403)
    wide = _client(runs, hosts=web.served_hosts("0.0.0.0", 8000, ["box.lan"]))
    for host, status in (("192.168.1.5:8000", 200), ("box.lan:8000", 200),
                         ("[fe80::1]:8000", 200), ("evil.example:8000", 403),
                         ("192.168.1.5:9000", 403)):
        assert wide.get("/api/records", headers={"Host": host}).status_code == status, host


def test_every_answer_says_nosniff_and_no_frames(runs: Path) -> None:
    resp = _client(runs).get("/")
    assert resp.headers["x-content-type-options"] == "nosniff"
    assert resp.headers["x-frame-options"] == "DENY"


# -- bodies -----------------------------------------------------------------------------------


def _scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "client": ("127.0.0.1", 40000),
            "server": ("127.0.0.1", 8000),
            "headers": [(b"host", b"127.0.0.1:8000"), *headers]}


def _call(app: Any, scope: dict[str, Any], messages: Any) -> tuple[int, bytes, int]:
    """Run the ASGI app on ``scope`` with the request ``messages`` (an iterator); the status,
    the body and how many messages the app read."""
    sent: list[dict[str, Any]] = []
    read = 0

    async def receive() -> dict[str, Any]:
        nonlocal read
        try:
            msg = next(messages)
        except StopIteration:
            return {"type": "http.disconnect"}
        read += 1
        return dict(msg)

    async def send(msg: dict[str, Any]) -> None:
        sent.append(msg)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return int(start["status"]), body, read


def test_a_body_over_the_limit_is_refused_while_it_streams(runs: Path) -> None:
    app = create_app([runs])
    chunk = 16 * 1024
    chunks = ({"type": "http.request", "body": b" " * chunk, "more_body": i < 999}
              for i in range(1000))  # 16 MB, its length never declared
    status, body, read = _call(app, _scope("POST", "/api/games", [
        (b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")]), chunks)
    assert status == 413 and json.loads(body) == {
        "error": f"request body over {MAX_BODY_BYTES} bytes"}
    assert read == MAX_BODY_BYTES // chunk + 1  # the first chunk past the limit, no more
    # a declared length over the limit: refused before a byte is read
    status, _, read = _call(app, _scope("POST", "/api/games", [
        (b"content-type", b"application/json"), (b"content-length", b"300000000")]),
        iter([{"type": "http.request", "body": b"{}", "more_body": True}]))
    assert (status, read) == (413, 0)


def test_a_client_leaving_in_the_middle_of_its_body_is_no_server_error(runs: Path) -> None:
    app = create_app([runs])
    messages = iter([{"type": "http.request", "body": b'{"seats": [', "more_body": True},
                     {"type": "http.disconnect"}])
    status, body, _ = _call(app, _scope("POST", "/api/games", [
        (b"content-type", b"application/json")]), messages)  # raises nothing: no traceback
    assert status == 400 and json.loads(body) == {
        "error": "the client closed the connection in the middle of its request body"}


# -- pictures and saves -----------------------------------------------------------------------


def test_pictures_are_served_sandboxed(runs: Path) -> None:
    (runs / "evil.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><script>'
                                   'fetch("/api/games")</script></svg>', encoding="utf-8")
    client = _client(runs)
    for url, params in (("/api/picture", {"path": "0/evil.svg"}),
                        ("/api/board", {"path": "0/g.jsonl", "ply": "3"})):
        resp = client.get(url, params=params)
        assert resp.status_code == 200 and resp.headers["content-type"].startswith(
            "image/svg+xml")
        assert resp.headers["content-security-policy"] == "sandbox"
        assert resp.headers["x-content-type-options"] == "nosniff"


def _finished_game(client: TestClient) -> str:
    g = client.post("/api/games", json={"seats": ["random", "random"],
                                        "rules": {"tiles_per_player": 1}, "seed": 5}).json()
    while not g["over"]:
        g = client.post(f"/api/games/{g['id']}/agent", json={}).json()
    return str(g["id"])


def test_a_save_never_follows_a_link_out_of_the_served_directory(
        runs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (runs / "web-games").symlink_to(outside, target_is_directory=True)
    client = _client(runs)
    gid = _finished_game(client)
    got = _error(client.post(f"/api/games/{gid}/save", json={"dir": 0}), 403)
    assert got.startswith(f"refused to save: {runs.resolve() / 'web-games'} is a symbolic "
                          "link")
    assert list(outside.iterdir()) == []
    (runs / "web-games").unlink()
    saved = client.post(f"/api/games/{gid}/save", json={"dir": 0})
    assert saved.status_code == 200 and saved.json()["path"].startswith("0/web-games/")


# -- stopping a move --------------------------------------------------------------------------


def test_an_interrupted_move_stops_and_leaves_the_game_as_it_was() -> None:
    import web_agents

    from taluva_ai.web.cancel import CancelFlag
    from taluva_ai.web.specs import AgentPolicy

    web_agents.SPINNING.clear()
    web_agents.STOPPED.clear()
    session = GameSession("taluva", ["web_agents:Spinner", "human"], {"tiles_per_player": 1},
                          seed=1, policy=AgentPolicy(("web_agents",)))
    before = session.view()
    cancel = CancelFlag()
    errors: list[WebError] = []

    def move() -> None:
        try:
            with session.locked():
                session.agent_move(cancel)
        except WebError as e:
            errors.append(e)

    worker = threading.Thread(target=move, daemon=True)
    worker.start()
    assert web_agents.SPINNING.wait(30)
    cancel.interrupt()
    worker.join(10)
    assert not worker.is_alive() and web_agents.STOPPED.is_set()
    assert [e.status for e in errors] == [503]
    assert errors[0].message.startswith("seat 0 (web_agents:Spinner): its move was cancelled")
    assert session.view() == before
    with session.locked(wait=0.1):  # the lock is free again
        pass


def test_a_client_that_leaves_stops_its_agents_search(runs: Path) -> None:
    import web_agents

    from taluva_ai.web import headless

    web_agents.SPINNING.clear()
    web_agents.STOPPED.clear()
    app = create_app([runs], agent_modules=["web_agents"])
    with headless.serve_in_thread(app) as base, httpx.Client(base_url=base) as client:
        g = client.post("/api/games", json={"seats": ["web_agents:Spinner", "human"],
                                            "rules": {"tiles_per_player": 1}})
        assert g.status_code == 200, g.text
        with pytest.raises(httpx.ReadTimeout):
            client.post(f"/api/games/{g.json()['id']}/agent", json={}, timeout=1.0)
        assert web_agents.SPINNING.is_set()
        assert web_agents.STOPPED.wait(10)  # the search stopped when its client left
        again = client.get(f"/api/games/{g.json()['id']}", timeout=10)
        assert again.status_code == 200 and again.json()["ply"] == g.json()["ply"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_stops_the_server_while_an_agent_searches(runs: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}
    proc = subprocess.Popen([sys.executable, "-m", "taluva_ai.cli", "serve", str(runs),
                             "--port", str(port), "--allow-agent-module", "web_agents"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{base}/api/records", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.3)
        g = httpx.post(f"{base}/api/games", json={"seats": ["web_agents:Spinner", "human"]},
                       timeout=30).json()

        def ask() -> None:  # a client that stays: only the stop can end this move
            with contextlib.suppress(httpx.HTTPError):
                httpx.post(f"{base}/api/games/{g['id']}/agent", json={}, timeout=60)

        threading.Thread(target=ask, daemon=True).start()
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)  # before the fix: the search held the server for ever
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("index", ["²", "٠", "０"])
def test_a_directory_index_is_ascii_digits(runs: Path, index: str) -> None:
    """``²`` passed ``str.isdigit`` and then failed ``int`` (a 500); Arabic-Indic digits
    opened directory 0 under another name (the hostile pass)."""
    client = _client(runs)
    for route in (f"/api/record?path={index}/g.jsonl", f"/api/board?path={index}/g.jsonl&ply=0"):
        resp = client.get(route)
        assert resp.status_code == 400, (route, resp.text)
        assert resp.json()["error"] == f"path must be '<dir index>/<file>', got '{index}/g.jsonl'"
    assert client.get("/api/record?path=0/g.jsonl").status_code == 200
