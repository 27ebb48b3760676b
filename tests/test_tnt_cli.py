"""``taluva play/replay/tournament/bench --game thurn_und_taxis`` and the baseline players."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taluva_ai import make_game
from taluva_ai.cli import main
from taluva_ai.tournament import make_agent, play_game

GOLDEN = Path(__file__).parent / "data" / "tnt_golden_greedy_random_seed7.jsonl"


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return int(info.value.code or 0)


def test_play_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = tmp_path / "g.jsonl"
    assert main(["play", "--game", "thurn_und_taxis", "--players", "greedy", "random",
                 "--seed", "7", "--record", str(rec)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "thurn_und_taxis: 2 players, seed 7"
    assert out[1] == "seat 0  greedy        20 points (carriage 7, tiles 14, 4 houses left)"
    assert out[3] == "result: carriage_7 after 300 plies; winners: seat 0 (greedy)"
    assert rec.read_bytes() == GOLDEN.read_bytes()
    assert main(["replay", str(rec)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"record OK: {rec}"


@pytest.mark.parametrize(("argv", "message"), [
    (["play", "--game", "thurn_und_taxis", "--players", "random", "random", "--ranked"],
     "--ranked is not an option of --game thurn_und_taxis"),
    (["play", "--players", "random", "random", "--max-rounds", "5"],
     "--max-rounds is not an option of --game taluva"),
    (["play", "--game", "chess", "--players", "random", "random"], "unknown game 'chess'"),
    (["play", "--game", "thurn_und_taxis", "--players", "random", "random", "--max-rounds",
      "0"], "max_rounds must be an integer in 1..10000"),
])
def test_bad_arguments_exit_2_with_one_line(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_options_reach_the_game(tmp_path: Path) -> None:
    rec = tmp_path / "g.jsonl"
    assert main(["play", "--game", "thurn_und_taxis", "--players", "random", "random",
                 "random", "--seed", "1", "--max-rounds", "3", "--all-provinces-rule",
                 "exclude_baiern", "--no-route-tile-fallback", "--record", str(rec)]) == 0
    head = json.loads(rec.read_text().splitlines()[0])
    assert head["rules"] == {"num_players": 3, "all_provinces_rule": "exclude_baiern",
                             "route_tile_fallback": False, "max_rounds": 3}
    assert json.loads(rec.read_text().splitlines()[-1])["end_reason"] == "truncated"


def test_tournament_runs_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "--game", "thurn_und_taxis", "--agents", "random", "greedy",
            "--games", "4", "--out", str(tmp_path / "t"), "--no-progress", "--bootstrap", "50"]
    assert main(argv) == 0
    table = json.loads((tmp_path / "t" / "results.json").read_text())
    assert table["games"] == 4 and table["agents"]["greedy"]["score"] == 1.0
    cfg = json.loads((tmp_path / "t" / "config.json").read_text())
    assert cfg["game"] == "thurn_und_taxis"
    first = capsys.readouterr().out
    assert main(argv) == 0  # every record is kept: the same table
    assert capsys.readouterr().out == first


def test_bench_json_has_the_engine_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--game", "thurn_und_taxis", "--json", "--games", "2",
                 "--repeats", "1"]) == 0
    res = json.loads(capsys.readouterr().out)
    e = res["engine"]
    assert e["game"] == "thurn_und_taxis"
    assert set(e["games_per_s"]) == set(e["games_per_cpu_s"]) == {"2", "3", "4"}
    assert e["legal_mask_us"] > 0 and e["apply_us"] >= 0 and e["positions"] > 1000
    assert e["truncated_share"] == {"2": 1.0, "3": 1.0, "4": 1.0}
    assert "machine" in res


def test_greedy_beats_random_in_2_player_games() -> None:
    game = make_game("thurn_und_taxis")
    wins = 0
    for i in range(20):
        agents = [make_agent("greedy"), make_agent("random")]
        seat = i % 2
        res = play_game(game, agents if seat == 0 else agents[::-1], 1000 + i)
        wins += res.winners == (seat,)
    assert wins >= 18  # docs/thurn_und_taxis.md: 200 of 200 in the measured tournament
