"""Screenshots of the browser board's views for docs/web.md: the replay view with the value
graph of the game and an analysis drawn, a Thurn und Taxis record in the replay view, the Play
view with a tile being placed, a tournament run's page.

    python experiments/web_screenshots.py --out docs

Serves a temporary directory (the golden test record, a small tournament run made here with
``taluva tournament``) with ``taluva serve``'s app and drives headless chromium through
Selenium (:mod:`taluva_ai.web.headless`, as tests/test_web_browser.py does). Needs the web and
test extras and Debian's chromium and chromium-driver. Writes ``web_replay.png``,
``web_tnt.png``, ``web_play.png`` and ``web_runs.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
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


def shoot(out: Path) -> list[Path]:
    """Make the served directory, start the app and write the screenshots into ``out``;
    returns their paths."""
    from taluva_ai.cli import main
    from taluva_ai.web import headless
    from taluva_ai.web.app import create_app

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="taluva-shots-") as tmp:
        runs = Path(tmp) / "runs"
        runs.mkdir()
        shutil.copy(GOLDEN, runs / "greedy_vs_random.jsonl")
        shutil.copy(TNT, runs / "thurn_und_taxis.jsonl")
        if main(["tournament", "--agents", "random", "greedy", "greedy:epsilon=0.3",
                 "--games", "4", "--seed", "1", "--out", str(runs / "t1")]) != 0:
            raise SystemExit("the tournament failed")
        with headless.serve_in_thread(create_app([runs])) as base, \
                headless.chromium(1400, 950) as driver:
            # replay + analysis
            driver.get(f"{base}/?record=0/greedy_vs_random.jsonl#replay")
            _until(driver, lambda d: _css(d, "#board svg"))
            agent = _css(driver, "#an-agent")[0]
            agent.clear()
            agent.send_keys("mcts:sims=100")
            _css(driver, "#ga-run")[0].click()  # the value graph first
            _until(driver, lambda d: d.find_element("id", "ga-status").text.endswith(
                " 54 / 54 positions"))
            for _ in range(40):
                _css(driver, "#next")[0].click()
            _until(driver, lambda d: d.find_element("id", "board").get_attribute("data-ply")
                   == "40")
            agent = _css(driver, "#an-agent")[0]
            agent.clear()
            agent.send_keys("mcts:sims=400")
            _css(driver, "#an-run")[0].click()
            _until(driver, lambda d: _css(d, "#board svg g.analysis polygon.cand"))
            written.append(out / "web_replay.png")
            driver.save_screenshot(str(written[-1]))
            # a Thurn und Taxis record, near its end
            driver.get(f"{base}/?record=0/thurn_und_taxis.jsonl#replay")
            _until(driver, lambda d: _css(d, "#board svg.tnt-board"))
            _css(driver, "#last")[0].click()
            for _ in range(3):
                _css(driver, "#prev")[0].click()
            _until(driver, lambda d: d.find_element("id", "board").get_attribute("data-ply")
                   == "297")
            written.append(out / "web_tnt.png")
            driver.save_screenshot(str(written[-1]))
            # play: human vs greedy, a few turns in, a tile being placed
            driver.get(f"{base}/#play")
            seats = _css(driver, "#ng-seats .seat")
            seats[1].clear()
            seats[1].send_keys("greedy")
            _css(driver, "#ng-seed")[0].send_keys("11")
            _css(driver, "#ng-start")[0].click()
            for _ in range(3):
                spot = _until(driver, lambda d: _css(d, "#board svg polygon.spot"))
                driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', "
                                      "{bubbles: true}))", spot[len(spot) // 2])
                _until(driver, lambda d: not d.find_element("id", "tile-tools")
                       .get_attribute("hidden"))
                _css(driver, "#place")[0].click()
                _until(driver, lambda d: "to build" in d.find_element("id", "turn").text)
                spot = _until(driver, lambda d: _css(d, "#board svg polygon.spot"))
                driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', "
                                      "{bubbles: true}))", spot[0])
                _until(driver, lambda d: _css(d, "#build-options button.move"))[0].click()
                _until(driver, lambda d: "click a marked spot" in
                       d.find_element("id", "turn").text)
            spot = _until(driver, lambda d: _css(d, "#board svg polygon.spot"))
            driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', "
                                  "{bubbles: true}))", spot[len(spot) // 3])
            _until(driver, lambda d: _css(d, "#board svg g.preview polygon"))
            written.append(out / "web_play.png")
            driver.save_screenshot(str(written[-1]))
            # a tournament run
            driver.get(f"{base}/?run=0/t1#runs")
            _until(driver, lambda d: _css(d, "#run-games li"))
            _until(driver, lambda d: all(d.execute_script("return arguments[0].complete", i)
                                         for i in _css(d, ".pictures img")))
            written.append(out / "web_runs.png")
            driver.save_screenshot(str(written[-1]))
    return written


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs", help="the folder to write the PNG files into")
    args = p.parse_args()
    for path in shoot(Path(args.out)):
        print(path)


if __name__ == "__main__":
    main()
