"""Tournaments as chess testers expect (issue 19, A.9): the live SPRT line of the progress
bar, deal files (``--deals``: fixed tile orders, like cutechess's openings) and the PGN export
of the results for BayesElo and Ordo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taluva_ai import make_game
from taluva_ai.cli import main
from taluva_ai.errors import RunConfigError
from taluva_ai.sprt import SPRT
from taluva_ai.tournament import (
    Deal,
    export_pgn,
    pgn_result,
    pgn_text,
    read_deals,
    resume_tournament,
    run_tournament,
    schedule,
    seed_deals,
)
from taluva_ai.tournament.sprt_watch import _SprtWatch

KW: dict[str, Any] = {"rules": {"tiles_per_player": 4}, "progress": False, "plots": False}
SPECS = ["random", "greedy"]


def _entries(d: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (d / "results.jsonl").read_text().splitlines()]


def _moves(record: Path) -> list[str]:
    """A record's action and result lines (not the header, which names the seed)."""
    return record.read_text().splitlines()[1:]


# -- the live SPRT line ------------------------------------------------------------------------


def test_the_sprt_status_line_counts_the_candidates_games() -> None:
    tasks = schedule(["a", "b"], 6, 2, seed=0)
    watch = _SprtWatch(SPRT(0.0, 50.0), tasks, "b")
    assert watch.status() == "SPRT LLR 0.00 [-2.94, 2.94] 0 games W-D-L 0-0-0"
    done = {  # deal 0: b wins both; deal 1: a draw and a loss for b; deal 2: one game only
        "000-0000-0": {"seats": ["a", "b"], "places": [1, 0], "winners": [1]},
        "000-0000-1": {"seats": ["b", "a"], "places": [0, 1], "winners": [0]},
        "000-0001-0": {"seats": ["a", "b"], "places": [0, 0], "winners": [0, 1]},
        "000-0001-1": {"seats": ["b", "a"], "places": [1, 0], "winners": [1]},
        "000-0002-0": {"seats": ["a", "b"], "places": [1, 0], "winners": [1]},
    }
    assert not watch.update(done)
    assert watch.counts == [0, 1, 0, 0, 1] and watch.wdl == [2, 1, 1]
    llr = SPRT(0.0, 50.0).llr([0, 1, 0, 0, 1])
    assert watch.status() == f"SPRT LLR {llr:.2f} [-2.94, 2.94] 4 games W-D-L 2-1-1"


def test_the_progress_bar_shows_the_sprt_line_up_to_the_decision(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = run_tournament(["greedy:epsilon=0.5", "greedy"], 400, tmp_path, seed=0,
                           sprt=SPRT(0.0, 50.0), **{**KW, "progress": True})
    sp = table["sprt"]
    counted = [e for e in _entries(tmp_path) if e["deal"] < sp["games"] // 2]
    mine = [e["places"][e["seats"].index("greedy")] for e in counted]
    theirs = [e["places"][1 - e["seats"].index("greedy")] for e in counted]
    w = sum(m < t for m, t in zip(mine, theirs, strict=True))
    d = sum(m == t for m, t in zip(mine, theirs, strict=True))
    l_ = sum(m > t for m, t in zip(mine, theirs, strict=True))
    assert (w, d, l_) == (31, 8, 3) and sp["games"] == 42  # the same run as the docs' example
    err = capsys.readouterr().err
    final = f"SPRT LLR {sp['llr']:.2f} [-2.94, 2.94] 42 games W-D-L {w}-{d}-{l_} H1"
    assert final in err.split("\r")[-1] or final in err.splitlines()[-1]
    assert "SPRT LLR 0.00 [-2.94, 2.94] 0 games W-D-L 0-0-0" in err


# -- deal files --------------------------------------------------------------------------------


def test_two_runs_with_one_deal_file_play_the_same_deals(tmp_path: Path) -> None:
    a = tmp_path / "a"
    run_tournament(SPECS, 4, a, seed=3, **KW)
    deals = read_deals(a / "deals.jsonl")
    game = make_game("taluva", num_players=2, tiles_per_player=4)
    assert deals == seed_deals(game, 3, 2)  # the run's deals, with their tile orders
    assert len(deals) == 2 and all(len(d.deck or ()) == 48 for d in deals)
    b = tmp_path / "b"
    table = run_tournament(SPECS, 4, b, seed=99, deals=a / "deals.jsonl", **KW)
    assert (b / "deals.jsonl").read_bytes() == (a / "deals.jsonl").read_bytes()
    cfg = json.loads((b / "config.json").read_text())
    assert cfg["seed"] == 99 and len(cfg["deals_sha256"]) == 64
    assert "deals_sha256" not in json.loads((a / "config.json").read_text())
    for rec in sorted((a / "games").iterdir()):  # the same games, move by move
        assert _moves(b / "games" / rec.name) == _moves(rec)
        header = json.loads((b / "games" / rec.name).read_text().splitlines()[0])
        assert header["deck"] == list(deals[int(rec.name[4:8])].deck or ())
    keep = ("seats", "places", "winners", "end_reason", "plies")
    assert ([{k: e[k] for k in keep} for e in _entries(b)]
            == [{k: e[k] for k in keep} for e in _entries(a)])
    # a resume reads the run's deals.jsonl; a changed one is refused
    assert resume_tournament(b, progress=False, plots=False) == table
    (b / "deals.jsonl").write_text((a / "deals.jsonl").read_text().replace('"JJ"', '"LL"', 1))
    with pytest.raises(RunConfigError, match=r"deals.jsonl: not the deals of this run"):
        resume_tournament(b, progress=False, plots=False)


def test_a_hand_written_deal_fixes_the_tile_order(tmp_path: Path) -> None:
    deck = ["LL", "RR", "SS", "CC", "JJ", "LR", "LS", "LC"]
    f = tmp_path / "deals.jsonl"
    f.write_text(json.dumps({"seed": 5, "deck": deck}) + "\n\n")  # a blank line is skipped
    run_tournament(SPECS, 2, tmp_path / "run", deals=f, **KW)
    for rec in (tmp_path / "run" / "games").iterdir():
        draws = [json.loads(x)["action"] for x in _moves(rec) if '"chance"' in x]
        assert draws == [f"draw:{t}" for t in deck]  # 8 tiles: 4 per player


@pytest.mark.parametrize(("line", "message"), [
    ('{"seed": 1, "tiles": []}', "line 1: unknown key 'tiles'; a deal has deal, seed, deck"),
    ('{"seed": -1}', r"line 1: seed must be an integer in 0 \.\. 2\*\*64 - 1, got -1"),
    ('{"seed": 1, "deck": ["JX"]}', r"line 1: deck: deck\[0\]: 'JX' is not a tile name"),
    ('{"deal": 1, "seed": 1}', "line 1: deal must be 0"),
    ("[1]", "line 1: a deal is a JSON object"),
    ("{", "line 1: not JSON"),
    ("", "no deal"),
])
def test_a_bad_deal_file_is_refused_in_one_line(tmp_path: Path, line: str,
                                                message: str) -> None:
    f = tmp_path / "deals.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(ValueError, match=message):
        run_tournament(SPECS, 2, tmp_path / "run", deals=f, **KW)
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_too_few_deals_or_a_deck_for_a_game_without_one(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="deals: the deals given holds 1 deals; 4 games per "
                       "group of 2 players need 2"):
        run_tournament(SPECS, 4, tmp_path / "x", deals=[Deal(1)], **KW)
    with pytest.raises(ValueError, match="game 'thurn_und_taxis' has no deck"):
        run_tournament(SPECS, 2, tmp_path / "y", game_name="thurn_und_taxis",
                       deals=[{"seed": 1, "deck": ["JC"]}], progress=False, plots=False)


def test_the_cli_plays_a_deal_file_and_names_a_bad_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["tournament", "--agents", *SPECS, "--games", "2", "--tiles-per-player", "4",
            "--no-progress", "--no-plots"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    assert "deals: " in capsys.readouterr().out
    deals = str(tmp_path / "a" / "deals.jsonl")
    assert main([*base, "--seed", "7", "--deals", deals, "--out", str(tmp_path / "b")]) == 0
    assert _entries(tmp_path / "b") == [
        {**e, "time_s": f["time_s"], "max_move_s": f["max_move_s"], "sha256": f["sha256"],
         "record_sha256": f["record_sha256"]}  # records of run b name their deck
        for e, f in zip(_entries(tmp_path / "a"), _entries(tmp_path / "b"), strict=True)]
    with pytest.raises(SystemExit) as e:
        main(["tournament", "--resume", str(tmp_path / "b"), "--deals", deals])
    assert e.value.code == 2 and "--deals" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([*base, "--deals", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "c")])
    assert e.value.code == 2
    assert "none.jsonl: No such file or directory" in capsys.readouterr().err


# -- PGN ---------------------------------------------------------------------------------------


def test_pgn_results() -> None:
    assert [pgn_result(p) for p in ([0, 1], [1, 0], [0, 0], [-1, -1])] == [
        "1-0", "0-1", "1/2-1/2", "*"]
    text = pgn_text("taluva", [
        {"id": "000-0003-1", "deal": 3, "seats": ['b"x', "a"], "places": [1, 0],
         "forfeit": {"seat": 0, "reason": "time"}},
    ])
    assert text == ('[Event "taluva-ai taluva tournament"]\n[Site "taluva-ai"]\n'
                    '[Date "????.??.??"]\n[Round "4"]\n[White "b\\"x"]\n[Black "a"]\n'
                    '[Result "0-1"]\n[GameId "000-0003-1"]\n[Termination "time forfeit"]\n'
                    "\n0-1\n\n")
    with pytest.raises(ValueError, match="PGN holds 2-player games"):
        pgn_text("taluva", [{"id": "x", "deal": 0, "seats": ["a", "b", "c"],
                             "places": [0, 1, 1]}])


def test_a_run_writes_its_games_as_pgn_and_the_command_exports_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_tournament([*SPECS, "greedy:epsilon=0.5"], 2, tmp_path / "t", seed=1, **KW)
    text = (tmp_path / "t" / "games.pgn").read_text()
    entries = _entries(tmp_path / "t")
    assert text.count("[Result ") == len(entries) == 6
    for e in entries:
        white, black = e["seats"]
        block = (f'[White "{white}"]\n[Black "{black}"]\n[Result "{pgn_result(e["places"])}"]'
                 f'\n[GameId "{e["id"]}"]')
        assert block in text
    assert export_pgn(tmp_path / "t") == text
    assert main(["pgn", str(tmp_path / "t")]) == 0
    assert capsys.readouterr().out == text
    assert main(["pgn", str(tmp_path / "t"), "--out", str(tmp_path / "x.pgn")]) == 0
    assert (tmp_path / "x.pgn").read_text() == text
    run_tournament([*SPECS, "greedy:epsilon=0.5"], 3, tmp_path / "t3", players_per_game=3,
                   **KW)
    assert not (tmp_path / "t3" / "games.pgn").exists()
    with pytest.raises(SystemExit) as e:
        main(["pgn", str(tmp_path / "t3")])
    assert e.value.code == 2
    assert "3-player games; PGN holds 2-player games" in capsys.readouterr().err


def test_a_tournament_file_names_its_deal_file(tmp_path: Path) -> None:
    run_tournament(SPECS, 2, tmp_path / "a", seed=4, **KW)
    toml = tmp_path / "t.toml"
    toml.write_text(f'agents = ["random", "greedy"]\ngames = 2\nout = "{tmp_path / "b"}"\n'
                    f'deals = "{tmp_path / "a" / "deals.jsonl"}"\n[rules]\ntiles_per_player = 4\n')
    assert main(["tournament", "--config", str(toml), "--no-progress", "--no-plots"]) == 0
    assert ((tmp_path / "b" / "deals.jsonl").read_bytes()
            == (tmp_path / "a" / "deals.jsonl").read_bytes())
    assert "deals_sha256" in json.loads((tmp_path / "b" / "config.json").read_text())
