"""The smallest complete game of docs/adding-a-game.md (experiments/example_game.py) works with
the registry, the arena, records, tournaments and MCTS without touching them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from taluva_ai import make_game
from taluva_ai.errors import IllegalActionError, RecordError
from taluva_ai.protocol import known_games
from taluva_ai.records import replay_record
from taluva_ai.tournament import make_agent, play_game, run_tournament

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def nim() -> None:
    spec = importlib.util.spec_from_file_location("example_game",
                                                  ROOT / "experiments" / "example_game.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["example_game"] = mod
    spec.loader.exec_module(mod)


def test_registered_and_played_with_a_record(tmp_path: Path) -> None:
    assert "nim" in known_games()
    game = make_game("nim", big=True)
    res = play_game(game, [make_agent("mcts:sims=30,prior=none"), make_agent("random")], 7,
                    record_path=tmp_path / "n.jsonl")
    final = replay_record(tmp_path / "n.jsonl", seeded_draws=True)
    assert final.is_terminal() and tuple(final.returns()) == res.returns
    lines = (tmp_path / "n.jsonl").read_text().splitlines()
    assert '"roll:' in lines[1] and '"take:' in lines[2]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], lines[1].replace("roll:", "take:"), *lines[2:]]) + "\n")
    with pytest.raises(RecordError, match="expected a chance outcome"):
        replay_record(bad)


def test_a_tournament_and_mcts_strength(tmp_path: Path) -> None:
    table = run_tournament(["random", "mcts:sims=60,prior=none"], 6, tmp_path, seed=1,
                           rules={"big": True}, game_name="nim", bootstrap=0, progress=False)
    assert table["games"] == 6
    assert table["agents"]["mcts:sims=60,prior=none"]["score"] >= 4 / 6


def test_illegal_moves_are_refused() -> None:
    s = make_game("nim").new_initial_state(seed=0)
    s.apply("roll:1")
    with pytest.raises(IllegalActionError, match="at most 1"):
        s.apply("take:2")
