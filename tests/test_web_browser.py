"""The browser board end to end, in headless chromium driven by Selenium
(taluva_ai.web.headless): open a record and step to its end, play a whole game against
``random`` by clicks (one tile per player), ask for an analysis and see the candidate moves drawn,
a path outside the served directories refused. Skipped, with the reason, without selenium,
chromium or chromedriver (``.ci/run`` installs them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from taluva_ai.web import headless

_REASON = headless.missing_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=str(_REASON))

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden_greedy_random_seed7.jsonl"
WAIT_S = 150  # the first agent move may load (or, beside other work, compile) the kernels


def _agents_game(path: Path, seats: list[str], seed: int, **rules: Any) -> None:
    """Play a game of agents only through the board's own game code and save its record."""
    from taluva_ai.web.play import GameSession

    game = GameSession("taluva", seats, rules, seed)
    while not game.state.is_terminal():
        game.agent_move()
    game.write_record(path)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any, Path]]:
    """(base address, driver, served dir): runs/ holds g.jsonl (two players), four.jsonl (a
    whole game of four greedy players); secret.jsonl lies outside."""
    from taluva_ai.web.app import create_app

    root = tmp_path_factory.mktemp("browser")
    runs = root / "runs"
    runs.mkdir()
    (runs / "g.jsonl").write_bytes(GOLDEN.read_bytes())
    _agents_game(runs / "four.jsonl", ["greedy"] * 4, 5)
    (root / "secret.jsonl").write_bytes(GOLDEN.read_bytes())
    with headless.serve_in_thread(create_app([runs])) as base, headless.chromium() as driver:
        yield base, driver, runs


def _wait(driver: Any, what: Any, timeout: float = WAIT_S) -> Any:
    """Wait until ``what(driver)`` holds; on a timeout, the page's view (mode, address, ply,
    message) is the error's message."""
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(what)
    except Exception as e:
        state = driver.execute_script(
            "const m = document.getElementById('message');"
            "return [document.body.dataset.mode, location.hash, history.length,"
            " document.getElementById('board').dataset.ply, m ? m.textContent : null];")
        raise AssertionError(f"timed out; the page: mode, address, history length, ply, "
                             f"message = {state}") from e


def _css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def _click(driver: Any, element: Any) -> None:
    """A click on an SVG element through the page's own handler (a plain click at its
    centre may land on the level number drawn over a hex)."""
    driver.execute_script(
        "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", element)


def _text(driver: Any, element_id: str) -> str:
    return str(driver.execute_script(f"return document.getElementById('{element_id}')"
                                     ".textContent"))


def _message(driver: Any) -> str:
    return str(driver.execute_script(
        "const m = document.getElementById('message'); return m.hidden ? '' : m.textContent"))


def _start_game(driver: Any, base: str, tiles: str, seed: str, seat1: str = "random",
                rules: str = "") -> Any:
    """Start a game from the Play view's form (seat 0 human, seat 1 ``seat1``, no seat 2 or
    3, the rule options ``rules``); returns its first marked spots once the new game is
    drawn."""
    driver.get(f"{base}/#play")
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.mode") == "play")
    old = driver.execute_script("return play.game && play.game.id")
    if not driver.execute_script("return document.getElementById('new-game').open"):
        _css(driver, "#new-game summary")[0].click()  # folded while a game is shown
    seats = _css(driver, "#ng-seats .seat")
    for seat in seats[1:]:
        seat.clear()
    seats[1].send_keys(seat1)
    for field in ("#ng-tiles", "#ng-seed", "#ng-rules"):
        _css(driver, field)[0].clear()
    _css(driver, "#ng-rules")[0].send_keys(rules)
    _css(driver, "#ng-tiles")[0].send_keys(tiles)
    _css(driver, "#ng-seed")[0].send_keys(seed)
    _css(driver, "#ng-start")[0].click()
    _wait(driver, lambda d: d.execute_script("return play.game && play.game.id") not in (old, None))
    return _wait(driver, lambda d: _css(d, "#board svg .spot"))


def _hexes(driver: Any) -> int:
    return len(_css(driver, "#board svg polygon.hex"))


def test_open_a_record_and_step_to_the_end(site: tuple[str, Any, Path]) -> None:
    from selenium.webdriver.common.keys import Keys

    base, driver, _ = site
    driver.get(f"{base}/?record=0/g.jsonl#replay")
    _wait(driver, lambda d: _text(d, "where") == "position 0 / 81")
    _wait(driver, lambda d: _css(d, "#board svg"))
    for ply in (1, 2):
        _css(driver, "#next")[0].click()
        _wait(driver, lambda d, p=ply: d.find_element("id", "board").get_attribute(
            "data-ply") == str(p))
    assert _hexes(driver) == 3
    body = _css(driver, "body")[0]
    body.send_keys(Keys.END)
    _wait(driver, lambda d: _text(d, "where") == "position 81 / 81")
    _wait(driver, lambda d: _hexes(d) == 69)
    assert _css(driver, "#moves li.current")[0].text == "P0 expand@-1,-1:J"
    assert _message(driver) == ""


def test_play_a_whole_game_against_random_by_clicks(site: tuple[str, Any, Path]) -> None:
    base, driver, runs = site
    spot = _start_game(driver, base, "1", "3")
    assert len(spot) == 1 and spot[0].get_attribute("data-q") == "0"
    _click(driver, spot[0])
    _wait(driver, lambda d: _text(d, "tile-choice").startswith("tile@0,0:N "))
    _css(driver, "body")[0].send_keys("q")  # turn the tile counter-clockwise: N -> NW
    _wait(driver, lambda d: _text(d, "tile-choice").startswith("tile@0,0:NW "))
    _css(driver, "#rot-right")[0].click()  # and back
    assert _text(driver, "tile-choice").startswith("tile@0,0:N ")
    _css(driver, "#place")[0].click()
    _wait(driver, lambda d: d.find_element("id", "board").get_attribute("data-ply") == "2")
    # the build step: the volcano is no spot; a click there is explained, nothing played
    volcano = _css(driver, '#board svg polygon.hex[data-q="0"][data-r="0"]')[0]
    _click(driver, volcano)
    _wait(driver, lambda d: _message(d).startswith("hut@0,0 is not legal here"))
    assert driver.find_element("id", "board").get_attribute("data-ply") == "2"
    spots = _css(driver, "#board svg polygon.spot")
    assert len(spots) == 2
    _click(driver, spots[0])
    button = _wait(driver, lambda d: _css(d, "#build-options button.move"))[0]
    built = button.text
    assert built.startswith("hut@")
    button.click()
    _wait(driver, lambda d: d.find_element("id", "board").get_attribute("data-over") == "true")
    assert _text(driver, "result") == \
        "tiles_out after 6 plies; winners: seat 0 (human), seat 1 (random)"
    _css(driver, "#save")[0].click()
    link = _wait(driver, lambda d: _css(d, "#saved-link"))[0]
    saved = list((runs / "web-games").glob("*.jsonl"))
    assert len(saved) == 1
    link.click()
    _wait(driver, lambda d: _text(d, "where") == "position 0 / 6")
    assert [li.text for li in _css(driver, "#moves li")][:3] == [
        "draw:CS", "P0 tile@0,0:N", f"P0 {built}"]


def test_analysis_draws_candidate_moves(site: tuple[str, Any, Path]) -> None:
    from selenium.webdriver.common.keys import Keys

    base, driver, _ = site
    driver.get(f"{base}/?record=0/g.jsonl#replay")
    _wait(driver, lambda d: _text(d, "where") == "position 0 / 81")
    body = _css(driver, "body")[0]
    for _ in range(4):
        body.send_keys(Keys.ARROW_RIGHT)
    _wait(driver, lambda d: d.find_element("id", "board").get_attribute("data-ply") == "4")
    agent = _css(driver, "#an-agent")[0]
    agent.clear()
    agent.send_keys("mcts:sims=30")
    _css(driver, "#an-run")[0].click()
    _wait(driver, lambda d: _css(d, "#board svg g.analysis polygon.cand"))
    items = _css(driver, "#an-list li.cand")
    assert items and items[0].text.startswith("tile@")
    assert _text(driver, "an-status").startswith("mcts:sims=30: 30 simulations")
    # an error is shown on the page, in one line
    agent.clear()
    agent.send_keys("greedy")
    _css(driver, "#an-run")[0].click()
    _wait(driver, lambda d: _message(d).startswith("analysis: agent 'greedy' does not search"))


def test_value_graph_of_a_game(site: tuple[str, Any, Path]) -> None:
    base, driver, _ = site
    driver.get(f"{base}/?record=0/g.jsonl#replay")
    _wait(driver, lambda d: _text(d, "where") == "position 0 / 81")
    agent = _css(driver, "#an-agent")[0]
    agent.clear()
    agent.send_keys("greedy")
    _css(driver, "#ga-run")[0].click()
    _wait(driver, lambda d: _message(d).startswith(
        "game analysis: agent 'greedy' does not search"))
    agent.clear()
    agent.send_keys("mcts:sims=10")
    _css(driver, "#ga-run")[0].click()
    _wait(driver, lambda d: _text(d, "ga-status") == "mcts:sims=10: 54 / 54 positions")
    assert _message(driver) == ""
    assert len(_css(driver, "#graph svg polyline.seat")) == 1  # two players: seat 0's value
    # in seat 0's colour on the board (white, outlined), with a swatch in the legend
    assert _css(driver, "#graph svg polyline.seat")[0].get_attribute("stroke") == "#ffffff"
    swatch = _css(driver, "#graph .graph-legend .swatch")[0]
    assert driver.execute_script("return getComputedStyle(arguments[0]).backgroundColor",
                                 swatch) == "rgb(255, 255, 255)"
    points = _css(driver, "#graph svg circle[data-ply]")
    assert len(points) == 54
    # a click on the graph goes to that ply, and the graph marks it
    target = points[10]
    ply = target.get_attribute("data-ply")
    driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true,"
        " clientX: r.x + r.width / 2, clientY: r.y + r.height / 2}))", target)
    _wait(driver, lambda d: d.find_element("id", "board").get_attribute("data-ply") == ply)
    now = _css(driver, "#graph svg line.now")[0]
    assert now.get_attribute("x1") == _css(
        driver, f'#graph svg circle[data-ply="{ply}"]')[0].get_attribute("cx")


def test_a_path_outside_is_refused(site: tuple[str, Any, Path]) -> None:
    base, driver, _ = site
    driver.get(f"{base}/?record=0/../secret.jsonl#replay")
    _wait(driver, lambda d: _message(d).startswith("refused path '0/../secret.jsonl'"))
    assert _css(driver, "#board svg") == []


def _ply(driver: Any) -> str:
    return str(driver.find_element("id", "board").get_attribute("data-ply"))


def _first_tile(driver: Any, base: str) -> None:
    """A new game (two tiles a player, seed 3, seat 1 random), its first tile placed on the
    first marked spot: position 2 is shown."""
    spot = _start_game(driver, base, "2", "3")
    _click(driver, spot[0])
    _wait(driver, lambda d: not _css(d, "#tile-tools")[0].get_attribute("hidden"))
    _css(driver, "#place")[0].click()
    _wait(driver, lambda d: _ply(d) == "2")


def test_a_late_record_position_does_not_draw_over_the_game(site: tuple[str, Any, Path]
                                                            ) -> None:
    """Back to a record, then forward to the game before the record's position has come from
    the server (slowed here by 1.5 s): the game's board stays, the late answer is dropped (it
    once drew the record's position over the game, on a loaded machine)."""
    import time

    base, driver, _ = site
    driver.get(f"{base}/#replay/0/g.jsonl/30")
    _wait(driver, lambda d: _text(d, "where") == "position 30 / 81" and _ply(d) == "30")
    _first_tile(driver, base)
    driver.execute_script(
        "const f = window.fetch; window.fetch = (url, ...a) => String(url).startsWith("
        "'/api/position?') ? new Promise((r) => setTimeout(r, 1500)).then(() => f(url, ...a))"
        " : f(url, ...a);")
    driver.back()
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.mode") == "replay"
          and _text(d, "where") == "position 30 / 81")
    driver.forward()
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.mode") == "play"
          and _ply(d) == "2")
    time.sleep(2.5)  # the record's position arrives meanwhile
    assert driver.execute_script("return document.body.dataset.mode") == "play"
    assert _ply(driver) == "2"


def test_the_address_keeps_the_view(site: tuple[str, Any, Path]) -> None:
    """Reload, back and forward show the same record position and the same game; changing only
    the hash switches the view."""
    from selenium.webdriver.common.keys import Keys

    base, driver, _ = site
    driver.get(f"{base}/#replay/0/g.jsonl/30")
    _wait(driver, lambda d: _text(d, "where") == "position 30 / 81")
    body = _css(driver, "body")[0]
    body.send_keys(Keys.ARROW_RIGHT)
    _wait(driver, lambda d: _ply(d) == "31")
    assert driver.execute_script("return location.hash") == "#replay/0/g.jsonl/31"
    driver.refresh()
    _wait(driver, lambda d: _text(d, "where") == "position 31 / 81" and _ply(d) == "31")
    # a game: started, a tile placed, reloaded
    _first_tile(driver, base)
    gid = driver.execute_script("return play.game.id")
    assert driver.execute_script("return location.hash") == f"#play/{gid}/2"
    moves = [li.text for li in _css(driver, "#moves li")]
    driver.refresh()
    _wait(driver, lambda d: _ply(d) == "2" and _css(d, "#board svg polygon.spot"))
    assert driver.execute_script("return play.game.id") == gid
    assert [li.text for li in _css(driver, "#moves li")] == moves
    # a look back at the game's first position, kept in the address too
    _css(driver, "body")[0].send_keys(Keys.ARROW_LEFT)
    _wait(driver, lambda d: _ply(d) == "1" and not _css(d, "#board svg polygon.spot"))
    assert driver.execute_script("return location.hash") == f"#play/{gid}/1"
    driver.refresh()
    _wait(driver, lambda d: _ply(d) == "1" and _text(d, "turn").startswith("looking back"))
    _css(driver, "body")[0].send_keys(Keys.END)
    _wait(driver, lambda d: _ply(d) == "2" and _css(d, "#board svg polygon.spot"))
    # back: the replay position before the game; forward: the game again
    driver.back()
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.mode") == "replay")
    _wait(driver, lambda d: _text(d, "where") == "position 31 / 81")
    driver.forward()
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.mode") == "play"
          and _ply(d) == "2")
    # only the hash changed: the view follows
    driver.execute_script("location.hash = '#replay/0/g.jsonl/5'")
    _wait(driver, lambda d: _text(d, "where") == "position 5 / 81" and _ply(d) == "5")
    assert _message(driver) == ""


def _fill(driver: Any, element: Any) -> str:
    """The colour an element is painted with (its computed fill, ``rgb(...)``)."""
    return str(driver.execute_script("return getComputedStyle(arguments[0]).fill", element))


def _preview(driver: Any) -> list[tuple[str, str, str]]:
    """The tile drawn at the chosen spot: (q, r, painted colour) per hex, the volcano first."""
    return [(e.get_attribute("data-q"), e.get_attribute("data-r"), _fill(driver, e))
            for e in sorted(_css(driver, "#board svg g.preview polygon.tile-hex"),
                            key=lambda e: "volcano" not in (e.get_attribute("class") or ""))]


def test_the_tile_is_drawn_where_it_would_go(site: tuple[str, Any, Path]) -> None:
    """The chosen spot shows the tile in hand with its terrains and its volcano's facing;
    turning it redraws it (R clockwise, Shift+R back)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    base, driver, _ = site
    spot = _start_game(driver, base, "1", "3")
    in_hand = sorted(_fill(driver, e) for e in _css(driver, ".in-hand polygon"))
    assert len(in_hand) == 3 and len(set(in_hand)) >= 2
    _click(driver, spot[0])
    _wait(driver, lambda d: len(_preview(d)) == 3)
    north = _preview(driver)
    assert sorted(f for _, _, f in north) == in_hand  # the terrains of the tile in hand
    assert north[0][:2] == ("0", "0") and north[0][2] == "rgb(192, 57, 43)"  # the volcano
    assert {(q, r) for q, r, _ in north[1:]} == {("-1", "1"), ("0", "1")}
    assert len(_css(driver, "#board svg g.preview polygon.preview-facing")) == 1
    _css(driver, "body")[0].send_keys("r")  # clockwise: N -> NE
    _wait(driver, lambda d: _text(d, "tile-choice").startswith("tile@0,0:NE "))
    turned = _preview(driver)
    assert {(q, r) for q, r, _ in turned[1:]} == {("-1", "0"), ("-1", "1")}
    assert sorted(f for _, _, f in turned) == in_hand
    ActionChains(driver).key_down(Keys.SHIFT).send_keys("r").key_up(Keys.SHIFT).perform()
    _wait(driver, lambda d: _text(d, "tile-choice").startswith("tile@0,0:N "))
    assert _preview(driver) == north


def test_a_candidate_shows_its_line(site: tuple[str, Any, Path]) -> None:
    """A click on an analysis's candidate numbers its line on the board; → steps through it
    (the board after each of its moves), Esc comes back to the position analysed."""
    from selenium.webdriver.common.keys import Keys

    base, driver, _ = site
    driver.get(f"{base}/#replay/0/g.jsonl/4")
    _wait(driver, lambda d: _ply(d) == "4")
    agent = _css(driver, "#an-agent")[0]
    agent.clear()
    agent.send_keys("mcts:sims=200")
    _css(driver, "#an-run")[0].click()
    first = _wait(driver, lambda d: _css(d, "#an-list li.cand"))[0]
    move = first.text.split()[0]
    pv = _css(driver, "#an-list li.cand .pv")[0].text
    assert pv.startswith("→ hut@") or pv.startswith("→ temple@")  # the build that follows
    first.click()
    marks = _wait(driver, lambda d: _css(d, "#board svg g.line g.line-move"))
    assert marks[0].get_attribute("data-step") == "1"
    assert marks[0].find_element("css selector", "title").get_attribute("textContent") \
        == f"1. P1 {move}"
    steps = len(driver.execute_script("return analysed.res.candidates[0].line"))
    assert len(marks) == steps  # every move of the line names a hex here
    body = _css(driver, "body")[0]
    body.send_keys(Keys.ARROW_RIGHT)
    _wait(driver, lambda d: d.find_element("id", "board").get_attribute("data-line-step") == "1")
    assert _text(driver, "line-status") == f"line of {move}: step 1 / {steps}: {move}"
    assert _hexes(driver) == 6  # the tile of the line is on the board
    assert len(_css(driver, "#board svg g.line g.line-move")) == steps - 1
    body.send_keys(Keys.ESCAPE)
    _wait(driver, lambda d: _css(d, "#line-bar")[0].get_attribute("hidden") is not None
          and _hexes(d) == 3 and _css(d, "#board svg g.analysis polygon.cand"))
    assert _ply(driver) == "4" and _message(driver) == ""


def test_an_agents_search_is_shown_in_play(site: tuple[str, Any, Path]) -> None:
    """After an agent's move in Play: its search's top moves and line, and the value graph."""
    base, driver, _ = site
    spot = _start_game(driver, base, "2", "3", seat1="mcts:sims=30")
    _click(driver, spot[0])
    _wait(driver, lambda d: not _css(d, "#tile-tools")[0].get_attribute("hidden"))
    _css(driver, "#place")[0].click()
    _wait(driver, lambda d: _ply(d) == "2")
    _click(driver, _css(driver, "#board svg polygon.spot")[0])
    _wait(driver, lambda d: _css(d, "#build-options button.move"))[0].click()
    _wait(driver, lambda d: _ply(d) == "5")  # the agent moved (after a draw)
    head = _wait(driver, lambda d: _css(d, "#agent-stats .stats-head"))[0].text
    assert head.startswith("seat 1 (mcts:sims=30) played tile@") and "30 simulations" in head
    assert len(_css(driver, "#agent-stats .stats-top tr")) >= 2
    assert _css(driver, "#agent-stats .pv")[0].text.startswith("line: tile@")
    assert len(_css(driver, "#graph svg circle[data-ply]")) == 1
    assert "seat 0 (human)" in _css(driver, "#graph .graph-legend")[0].text


def _view_box(driver: Any) -> str:
    return str(driver.execute_script(
        "return document.querySelector('#board svg').getAttribute('viewBox')"))


def _smallest_font(driver: Any, selector: str) -> float:
    """The smallest computed font size (px) of the elements under ``selector`` that show
    text."""
    return float(driver.execute_script(
        "let least = 99; for (const root of document.querySelectorAll(arguments[0]))"
        " for (const e of [root, ...root.querySelectorAll('*')]) {"
        "  const text = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());"
        "  const r = e.getBoundingClientRect();"
        "  const size = parseFloat(getComputedStyle(e).fontSize);"
        "  if (text && r.width > 0) least = Math.min(least, size);"
        " } return least;", selector))


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1080)])
def test_a_large_board_stays_readable(site: tuple[str, Any, Path], size: tuple[int, int]) -> None:
    """The end of a four-player game at 1024x700 and 1920x1080: the seats and the legend are
    HTML text beside the board (at least 11 px), the board fills its box and zooms, the
    controls stay in view, the heat map stays on the board."""
    from selenium.webdriver.common.keys import Keys

    base, driver, _ = site
    driver.set_window_size(*size)
    try:
        driver.get(f"{base}/#replay/0/four.jsonl/0")
        _wait(driver, lambda d: _ply(d) == "0")
        _css(driver, "body")[0].send_keys(Keys.END)
        last = driver.execute_script("return view.positions - 1")
        _wait(driver, lambda d: _ply(d) == str(last))
        assert _css(driver, "#board svg g.panel") == []  # the panel is HTML now
        rows = _css(driver, "#panel .seat-row")
        assert len(rows) == 4 and _css(driver, "#panel .legend .legend-item")
        for where in ("#panel", "#moves", "#analysis", "#replay-controls"):
            assert _smallest_font(driver, where) >= 11, where
        # the page does not scroll: the controls and the analysis stay where they are
        assert driver.execute_script("return document.scrollingElement.scrollTop") == 0
        height = driver.execute_script("return window.innerHeight")
        for button in ("#an-run", "#last", "#ga-run"):
            r = driver.execute_script("return arguments[0].getBoundingClientRect().bottom",
                                      _css(driver, button)[0])
            assert 0 < r <= height, button
        # the board: a hex is drawn large enough to read, and the wheel and buttons zoom it
        board = _css(driver, "#board")[0]
        hex_px = driver.execute_script(
            "return document.querySelector('#board svg polygon.hex').getBoundingClientRect()"
            ".width")
        assert hex_px >= 12
        whole = _view_box(driver)
        _css(driver, "#zoom-in")[0].click()
        zoomed = _view_box(driver)
        assert float(zoomed.split()[2]) < float(whole.split()[2])
        assert driver.execute_script(
            "return document.querySelector('#board svg polygon.hex').getBoundingClientRect()"
            ".width") > hex_px
        driver.execute_script(
            "arguments[0].dispatchEvent(new WheelEvent('wheel', {deltaY: 300, bubbles: true,"
            " cancelable: true, clientX: arguments[0].getBoundingClientRect().x + 50,"
            " clientY: arguments[0].getBoundingClientRect().y + 50}))", board)
        _css(driver, "#zoom-fit")[0].click()
        assert _view_box(driver) == whole
        # the level cue: a ring on every hex above the first level
        high = len(_css(driver, "#board svg polygon.hex:not([data-level='1'])"))
        assert high and len(_css(driver, "#board svg g.levels polygon.level-ring")) >= high
        # an analysis's heat map lies inside the board's box
        _css(driver, "body")[0].send_keys(Keys.ARROW_LEFT)
        _wait(driver, lambda d: _ply(d) == str(last - 1))
        agent = _css(driver, "#an-agent")[0]
        agent.clear()
        agent.send_keys("mcts:sims=50")
        _css(driver, "#an-run")[0].click()
        _wait(driver, lambda d: _css(d, "#board svg g.analysis polygon.cand"))
        inside = driver.execute_script(
            "const b = document.getElementById('board').getBoundingClientRect();"
            "return [...document.querySelectorAll('#board svg g.analysis polygon.cand')]"
            ".every(p => { const r = p.getBoundingClientRect();"
            " return r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1"
            " && r.bottom <= b.bottom + 1; })")
        assert inside
    finally:
        driver.set_window_size(1400, 900)


def test_a_solo_game_shows_its_score(site: tuple[str, Any, Path]) -> None:
    """A solo game in Play: its running score, its band and the score to beat beside the
    board, updated as it is played."""
    base, driver, _ = site
    spot = _start_game(driver, base, "", "3", seat1="", rules='{"solo": true}')
    score = _wait(driver, lambda d: _css(d, "#panel #solo-score .score"))[0]
    assert score.text == "score -64 so far: lost"
    assert _css(driver, "#solo-score .to-beat")[0].text == "to beat: 40 (a win), 104 to go"
    assert "draw pile 30" in _css(driver, "#solo-score .seat-small")[0].text
    _click(driver, spot[0])
    _wait(driver, lambda d: not _css(d, "#tile-tools")[0].get_attribute("hidden"))
    _css(driver, "#place")[0].click()
    _wait(driver, lambda d: _ply(d) == "3")
    # the same score, drawn again after the move (the placement scores nothing yet)
    assert _css(driver, "#solo-score .score")[0].text == "score -64 so far: lost"
    # the box step names no hex: its moves are buttons, each saying what it does
    assert _text(driver, "turn").endswith("choose the piece to put into the box (below)")
    box = _wait(driver, lambda d: _css(d, '#build-options button[data-move="box:hut"]'))[0]
    assert box.get_attribute("title").startswith("put a hut into the box (solo: the cost of")
    assert "box:temple: put a temple into the box" in _text(driver, "move-help")
    box.click()
    _wait(driver, lambda d: _ply(d) == "4")
    _click(driver, _css(driver, '#board svg polygon.spot[data-q="-3"][data-r="-3"]')[0])
    _wait(driver, lambda d: _css(d, "#build-options button.move"))[0].click()
    _wait(driver, lambda d: _ply(d) == "6")  # the founding and the next draw
    assert _css(driver, "#solo-score .score")[0].text == "score -61 so far: lost"
    assert _css(driver, "#solo-score .to-beat")[0].text == "to beat: 40 (a win), 101 to go"
    assert _message(driver) == ""


def test_thurn_und_taxis_cities_are_clicked_in_play(site: tuple[str, Any, Path]) -> None:
    """Thurn und Taxis in Play: the cities a move names are marked on the map; a click on one
    offers its moves, with the moves that name no city, each saying what it does."""
    from selenium.webdriver.support.ui import Select

    base, driver, _ = site
    driver.get(f"{base}/#play")
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.mode") == "play")
    if not driver.execute_script("return document.getElementById('new-game').open"):
        _css(driver, "#new-game summary")[0].click()
    Select(_css(driver, "#ng-game")[0]).select_by_visible_text("thurn_und_taxis")
    try:
        spots = _start_game(driver, base, "", "3")
        cities = sorted(str(s.get_attribute("data-city")) for s in spots)
        assert cities == ["augsburg", "innsbruck", "sigmaringen", "stuttgart", "zuerich"]
        assert _text(driver, "turn").endswith("click a marked city, or choose a move below")
        supply = _css(driver, '#build-options button[data-move="take:supply"]')[0]
        assert supply.get_attribute("title") == "take the top card of the face-down supply"
        _click(driver, _css(driver, '#board svg circle.spot[data-city="augsburg"]')[0])
        take = _wait(driver, lambda d: _css(
            d, '#build-options button[data-move="take:augsburg"]'))[0]
        assert take.get_attribute("title") == "take the augsburg card from the display into " \
            "your hand"
        assert _css(driver, "#move-select") == []  # buttons, no list of notation strings
        take.click()
        _wait(driver, lambda d: "P0 take:augsburg" in d.execute_script(
            "return [...document.querySelectorAll('#moves li')].map(li => li.textContent)"))
        assert _message(driver) == ""
    finally:
        driver.get(f"{base}/#play")
        if not driver.execute_script("return document.getElementById('new-game').open"):
            _css(driver, "#new-game summary")[0].click()
        Select(_css(driver, "#ng-game")[0]).select_by_visible_text("taluva")


def test_the_smaller_points(site: tuple[str, Any, Path]) -> None:
    """The records' index (players, result), only game records listed, a favicon, draws
    stepped over or analysed after, "empty table" clear of the first spot, spots and the last
    action in two colours."""
    from selenium.webdriver.support.ui import Select

    base, driver, runs = site
    (runs / "results.jsonl").write_text('{"id": "g"}\n', encoding="utf-8")
    driver.get(f"{base}/#replay/0/g.jsonl/3")
    driver.refresh()  # the records listed again
    _wait(driver, lambda d: _ply(d) == "3")
    Select(_css(driver, "#picker")[0]).select_by_value("")  # no record: the index
    _wait(driver, lambda d: d.execute_script("return location.hash") == "#replay")
    rows = _wait(driver, lambda d: [r for r in _css(d, "#records tbody tr") if r.text])
    texts = driver.execute_script(
        "return [...document.querySelectorAll('#records tbody tr')].map(r => r.textContent)")
    assert not any("results.jsonl" in t for t in texts)
    four = next(r for r, t in zip(rows, texts, strict=True) if t.startswith("four.jsonl"))
    assert "greedy, greedy, greedy, greedy" in four.text and "winners: seat" in four.text
    options = driver.execute_script(
        "return [...document.querySelectorAll('#picker option')].map(o => o.value)")
    assert "0/results.jsonl" not in options and "0/four.jsonl" in options
    icon = driver.execute_script("return document.querySelector('link[rel=icon]').href")
    assert icon.startswith("data:image/svg+xml,")
    four.find_element("css selector", "a").click()
    _wait(driver, lambda d: _ply(d) == "0" and _text(d, "where").startswith("position 0 / "))
    # draws: stepped over when asked; an analysis asked at one runs after it
    driver.get(f"{base}/#replay/0/g.jsonl/2")
    _wait(driver, lambda d: _ply(d) == "2")
    agent = _css(driver, "#an-agent")[0]
    agent.clear()
    agent.send_keys("mcts:sims=20")
    _css(driver, "#next")[0].click()  # position 3: the next tile is drawn
    _wait(driver, lambda d: _ply(d) == "3")
    _css(driver, "#an-run")[0].click()
    _wait(driver, lambda d: _ply(d) == "4" and _css(d, "#an-list li.cand"))
    assert _text(driver, "an-status").startswith(
        "position 3 is a chance draw (draw:RJ): stepped to position 4, after it. ")
    _css(driver, "#skip-draws")[0].click()
    _css(driver, "#prev")[0].click()  # 3 is a draw: to 2
    _wait(driver, lambda d: _ply(d) == "2")
    _css(driver, "#skip-draws")[0].click()
    # a new game: "empty table" is said above the first spot, not over it
    spot = _start_game(driver, base, "1", "3")[0]
    empty = _css(driver, "#board svg text.empty-table")[0]
    a, b = (driver.execute_script("return arguments[0].getBoundingClientRect()", e)
            for e in (empty, spot))
    assert a["bottom"] <= b["top"] or a["top"] >= b["bottom"]
    _click(driver, spot)
    _wait(driver, lambda d: not _css(d, "#tile-tools")[0].get_attribute("hidden"))
    _css(driver, "#place")[0].click()
    _wait(driver, lambda d: _ply(d) == "2" and _css(d, "#board svg polygon.last"))
    stroke = "return getComputedStyle(arguments[0]).stroke"
    last = driver.execute_script(stroke, _css(driver, "#board svg polygon.last")[0])
    legal = driver.execute_script(stroke, _css(driver, "#board svg polygon.spot")[0])
    assert last == "rgb(230, 0, 126)" and legal != last


def test_the_play_view_says_while_an_agents_first_move_compiles(
        site: tuple[str, Any, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """While an agent's move waits on the server compiling the engine's kernels (its first use
    on a fresh install), the turn line says so with the time so far; then the move is shown.
    The compiling is simulated (the kernels here are cached): an agent whose move waits, and
    the server's :func:`~taluva_ai.games.compiling.compiling_now` saying it compiles."""
    import threading

    from taluva_ai.agents import Agent, make_agent, register_agent
    from taluva_ai.agents import base as agent_base
    from taluva_ai.games import compiling

    go = threading.Event()

    class Waits(Agent):
        def __init__(self, seed: int | None = None) -> None:
            self.inner = make_agent("random", seed=seed)

        def reset(self, seed: int | None = None) -> None:
            self.inner.reset(seed)

        def act(self, state: Any) -> int:
            go.wait(60)
            return int(self.inner.act(state))

        def stats(self) -> dict[str, Any]:
            return {}

    register_agent("webtest_waits", Waits, "a test agent whose move waits for the test")
    monkeypatch.setattr(compiling, "compiling_now", lambda: ("kernels.standard_apply_action",
                                                             7.4))
    try:
        base, driver, _ = site
        driver.get(f"{base}/#play")
        _wait(driver, lambda d: d.execute_script("return document.body.dataset.mode") == "play")
        if not driver.execute_script("return document.getElementById('new-game').open"):
            _css(driver, "#new-game summary")[0].click()
        seats = _css(driver, "#ng-seats .seat")
        for seat in seats:
            seat.clear()
        seats[0].send_keys("webtest_waits")
        seats[1].send_keys("random")
        for field, value in (("#ng-rules", ""), ("#ng-tiles", "1"), ("#ng-seed", "3")):
            _css(driver, field)[0].clear()
            _css(driver, field)[0].send_keys(value)
        _css(driver, "#ng-start")[0].click()
        said = _wait(driver, lambda d: "compiling" in _text(d, "turn") and _text(d, "turn"))
        assert said.startswith("seat 0 (webtest_waits) is thinking… compiling its search "
                               "(first use, about 30 s; 7 s so far)")
        monkeypatch.setattr(compiling, "compiling_now", lambda: None)
        go.set()
        _wait(driver, lambda d: _ply(d) != "0" and "compiling" not in _text(d, "turn"))
    finally:
        go.set()
        site[1].execute_script(  # seat 0 as the form starts (the other tests leave it so)
            "document.querySelector('#ng-seats .seat').value = 'human'")
        agent_base._AGENTS.pop("webtest_waits", None)
        agent_base._ABOUT.pop("webtest_waits", None)
