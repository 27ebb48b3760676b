"""The built-in network's ladder rows in docs/benchmarks.md quote their results files.

Each row names its `docs/data/builtin_*_results.json`; the score, the percentage, the paired
Elo with its interval and the pentanomial counts written beside that name must be the file's.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = (ROOT / "docs" / "benchmarks.md").read_text()
NETWORK = "az:builtin"


def _bullet_naming(path: str) -> str:
    """The Markdown bullet of docs/benchmarks.md that names ``path`` (it and its wrapped lines)."""
    bullets = re.split(r"\n(?=- )|\n\n", BENCHMARKS)
    found = [b for b in bullets if f"`{path}`" in b]
    assert len(found) == 1, f"{path} is named in {len(found)} bullets of docs/benchmarks.md"
    return " ".join(found[0].split())


@pytest.mark.parametrize("row", ["greedy", "mcts400", "mcts1600"])
def test_the_ladder_row_quotes_its_results_file(row):
    path = f"docs/data/builtin_{row}_results.json"
    table = json.loads((ROOT / path).read_text())
    (pair,) = table["pairs"]
    a, b = pair["agents"]
    assert NETWORK in (a, b)
    other = b if a == NETWORK else a
    wins, losses = pair["wins"][NETWORK], pair["wins"][other]
    assert (wins + losses + pair["draws"], pair["incomplete_pairs"]) == (200, 0)
    paired = pair["paired"]
    elo, (lo, hi) = paired["elo"], paired["elo_ci95"]
    penta = pair["pentanomial"]
    if a != NETWORK:
        elo, lo, hi, penta = -elo, -hi, -lo, penta[::-1]
    text = _bullet_naming(path)
    assert f"{wins}-{losses}, {100 * (wins + 0.5 * pair['draws']) / 200:.1f}%" in text
    assert f"paired Elo {elo:+.0f} [{lo:+.0f}, {hi:+.0f}]" in text
    assert "pentanomial " + " / ".join(map(str, penta)) in text
