"""Screenshots of the browser board's views for docs/web.md: the replay view with the value
graph of the game and an analysis drawn, a candidate's line stepped into, the records' index, a
Thurn und Taxis record, a solo game's score, the Play view with a tile being placed (against
mcts, its search shown), a tournament run's page, and the end of a four-player game in a
1024x700 window.

    python experiments/web_screenshots.py --out docs

Serves a temporary directory (the golden test record, a small tournament run made here with
``taluva tournament``) with ``taluva serve``'s app and drives headless chromium through
Selenium (:mod:`taluva_ai.web.headless`, as tests/test_web_browser.py does). Needs the web and
test extras and Debian's chromium and chromium-driver. Writes ``web_replay.png``,
``web_line.png``, ``web_index.png``, ``web_tnt.png``, ``web_solo.png``, ``web_play.png``,
``web_runs.png`` and ``web_small.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden_greedy_random_seed7.jsonl"
TNT = ROOT / "tests" / "data" / "tnt_golden_greedy_random_seed7.jsonl"


def _until(driver: Any, what: Any, timeout: float = 120) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(what)


def _css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def _click(driver: Any, element: Any) -> None:
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', "
                          "{bubbles: true}))", element)


def _agents_game(path: Path, seats: list[str], seed: int, **rules: Any) -> None:
    """A game of agents only, played by the board's own game code, saved as a record."""
    from taluva_ai.web.play import GameSession

    game = GameSession("taluva", seats, rules, seed)
    while not game.state.is_terminal():
        game.agent_move()
    game.write_record(path)


def _ply(driver: Any) -> str:
    return str(driver.find_element("id", "board").get_attribute("data-ply"))


def _analyse(driver: Any, spec: str) -> None:
    agent = _css(driver, "#an-agent")[0]
    agent.clear()
    agent.send_keys(spec)
    _css(driver, "#an-run")[0].click()
    _until(driver, lambda d: _css(d, "#board svg g.analysis polygon.cand"))


def shoot(out: Path) -> list[Path]:
    """Make the served directory, start the app and write the screenshots into ``out``;
    returns their paths."""
    from selenium.webdriver.support.ui import Select

    from taluva_ai.cli import main
    from taluva_ai.web import headless
    from taluva_ai.web.app import create_app

    out.mkdir(parents=True, exist_ok=True)
    written = []

    def save(driver: Any, name: str) -> None:
        time.sleep(0.5)  # the board's short fade-in over
        written.append(out / name)
        driver.save_screenshot(str(written[-1]))

    with tempfile.TemporaryDirectory(prefix="taluva-shots-") as tmp:
        runs = Path(tmp) / "runs"
        runs.mkdir()
        shutil.copy(GOLDEN, runs / "greedy_vs_random.jsonl")
        shutil.copy(TNT, runs / "thurn_und_taxis.jsonl")
        _agents_game(runs / "four_greedy.jsonl", ["greedy"] * 4, 5)
        _agents_game(runs / "solo_greedy.jsonl", ["greedy"], 2, solo=True)
        if main(["tournament", "--agents", "random", "greedy", "greedy:epsilon=0.3",
                 "--games", "4", "--seed", "1", "--out", str(runs / "t1")]) != 0:
            raise SystemExit("the tournament failed")
        with headless.serve_in_thread(create_app([runs])) as base, \
                headless.chromium(1400, 950) as driver:
            # replay: the value graph of the game, then an analysis at position 40
            driver.get(f"{base}/#replay/0/greedy_vs_random.jsonl/0")
            _until(driver, lambda d: _css(d, "#board svg"))
            agent = _css(driver, "#an-agent")[0]
            agent.clear()
            agent.send_keys("mcts:sims=100")
            _css(driver, "#ga-run")[0].click()  # the value graph first
            _until(driver, lambda d: d.find_element("id", "ga-status").text.endswith(
                " 54 / 54 positions"))
            driver.get(f"{base}/#replay/0/greedy_vs_random.jsonl/40")
            _until(driver, lambda d: _ply(d) == "40")
            _analyse(driver, "mcts:sims=400")
            save(driver, "web_replay.png")
            # the line of the best candidate, one move into it
            _css(driver, "#an-list li.cand")[0].click()
            _until(driver, lambda d: _css(d, "#board svg g.line g.line-move"))
            _css(driver, "#line-next")[0].click()
            _until(driver, lambda d: d.find_element("id", "board").get_attribute(
                "data-line-step") == "1")
            save(driver, "web_line.png")
            # the records' index
            Select(_css(driver, "#picker")[0]).select_by_value("")
            _until(driver, lambda d: [r for r in _css(d, "#records tbody tr") if r.text])
            save(driver, "web_index.png")
            # a Thurn und Taxis record, near its end
            driver.get(f"{base}/#replay/0/thurn_und_taxis.jsonl/297")
            _until(driver, lambda d: _css(d, "#board svg.tnt-board") and _ply(d) == "297")
            save(driver, "web_tnt.png")
            # a solo game's end, its score by line unfolded
            driver.get(f"{base}/#replay/0/solo_greedy.jsonl/0")
            _until(driver, lambda d: _ply(d) == "0")
            _css(driver, "#last")[0].click()
            _until(driver, lambda d: _css(d, "#solo-score") and _ply(d) != "0")
            _css(driver, "#solo-score summary")[0].click()
            save(driver, "web_solo.png")
            # play: human against mcts, a few turns in, a tile being placed
            driver.get(f"{base}/#play")
            _until(driver, lambda d: _css(d, "#ng-seats .seat"))
            seats = _css(driver, "#ng-seats .seat")
            seats[1].clear()
            seats[1].send_keys("mcts:sims=200")
            _css(driver, "#ng-seed")[0].send_keys("11")
            _css(driver, "#ng-start")[0].click()
            for _ in range(3):
                spot = _until(driver, lambda d: _css(d, "#board svg polygon.spot"))
                _click(driver, spot[len(spot) // 2])
                _until(driver, lambda d: not d.find_element("id", "tile-tools")
                       .get_attribute("hidden"))
                _css(driver, "#place")[0].click()
                _until(driver, lambda d: "to build" in d.find_element("id", "turn").text)
                spot = _until(driver, lambda d: _css(d, "#board svg polygon.spot"))
                _click(driver, spot[0])
                _until(driver, lambda d: _css(d, "#build-options button.move"))[0].click()
                _until(driver, lambda d: "click a marked spot" in
                       d.find_element("id", "turn").text)
            spot = _until(driver, lambda d: _css(d, "#board svg polygon.spot"))
            _click(driver, spot[len(spot) // 3])
            _until(driver, lambda d: _css(d, "#board svg g.preview polygon.tile-hex"))
            save(driver, "web_play.png")
            # a tournament run
            driver.get(f"{base}/#runs/0/t1")
            _until(driver, lambda d: _css(d, "#run-games li"))
            _until(driver, lambda d: all(d.execute_script("return arguments[0].complete", i)
                                         for i in _css(d, ".pictures img")))
            save(driver, "web_runs.png")
        # the end of a four-player game in a small window
        with headless.serve_in_thread(create_app([runs])) as base, \
                headless.chromium(1024, 700) as driver:
            driver.get(f"{base}/#replay/0/four_greedy.jsonl/0")
            _until(driver, lambda d: _ply(d) == "0")
            _css(driver, "#last")[0].click()
            _until(driver, lambda d: _ply(d) != "0")
            save(driver, "web_small.png")
    return written


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs", help="the folder to write the PNG files into")
    args = p.parse_args()
    for path in shoot(Path(args.out)):
        print(path)


if __name__ == "__main__":
    main()
