"""Replay the independent engines' games (../shared/oracle: Board Game Arena and TaluvaUJF)
through our engine: every legal placement set, every legal build set, the board and the pieces
before each turn, and the end (reason, winners, pieces) must agree."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from oracle import Report, oracle_dir, read_games, replay_game

from taluva_ai.games.taluva import TaluvaState
from taluva_ai.games.taluva.state import C_BUILDING, C_LEVEL, C_OWNER, C_TERRAIN, C_TILE
from taluva_ai.games.taluva.tiles import Terrain

ORACLE = oracle_dir()

#: file -> (games, turns, placement sets compared, build sets compared). A build set is not
#: compared on a turn that eliminates its player.
EXPECTED = {
    "bga-sample/bga_eruption_expand.jsonl.gz": (5, 191, 191, 187),
    "bga-sample/bga_eruption_first.jsonl.gz": (4, 144, 144, 144),
    "bga-sample/bga_uniform_2p.jsonl.gz": (4, 96, 96, 96),
    "bga-sample/bga_uniform_2p_48tiles.jsonl.gz": (4, 166, 166, 162),
    "bga-sample/bga_uniform_3p.jsonl.gz": (4, 144, 144, 144),
    "bga-sample/bga_uniform_4p.jsonl.gz": (4, 192, 192, 192),
    "ujf-sample/ujf_supp_eruption_first.jsonl.gz": (12, 520, 520, 515),
    "ujf-sample/ujf_uniform_2p.jsonl.gz": (20, 840, 840, 823),
    "ujf-sample/ujf_uniform_3p.jsonl.gz": (10, 480, 480, 480),
    "ujf-sample/ujf_uniform_4p.jsonl.gz": (10, 480, 480, 480),
}



def test_oracle_data_is_present() -> None:
    """The fixtures ship in tests/data/oracle; a missing copy must fail, not skip."""
    assert ORACLE.is_dir(), f"oracle data not found at {ORACLE}"
    assert sorted(str(p.relative_to(ORACLE)) for p in ORACLE.glob("*/*.jsonl.gz")) == sorted(
        EXPECTED
    )

TERRAIN_NAME = {t: t.name.lower() for t in Terrain}
BUILDING_NAME = {0: None, 1: "hut", 2: "temple", 3: "tower"}


def board_of(state: TaluvaState) -> list[dict[str, Any]]:
    """Our top cells in the oracle's cell format and canonical order (q, then r)."""
    board = state.game.board
    out = []
    for c in range(state.game.num_cells):
        row = state.cells[c]
        if row[C_LEVEL] == 0:
            continue
        b = int(row[C_BUILDING])
        out.append({
            "hex": [int(board.q[c]), int(board.r[c])],
            "level": int(row[C_LEVEL]),
            "terrain": TERRAIN_NAME[Terrain(int(row[C_TERRAIN]))],
            "building": BUILDING_NAME[b],
            "owner": int(row[C_OWNER]) if b else None,
            "tile": int(row[C_TILE]),
        })
    return sorted(out, key=lambda x: tuple(x["hex"]))


def pieces_of(state: TaluvaState) -> list[dict[str, Any]]:
    return [
        {**state.supply(p), "eliminated": state.status(p).name == "ELIMINATED"}
        for p in range(state.num_players)
    ]


class StateChecker:
    """``observe`` hook for :func:`replay_game`: the board and pieces before every turn, and the
    final board, pieces and built counts, must equal the oracle's."""

    def __init__(self) -> None:
        self.boards = 0
        self.problems: list[str] = []

    def __call__(self, rec: dict[str, Any], state: TaluvaState) -> None:
        where = f"{rec['game']} {rec['type']} {rec.get('turn', '')}"
        if rec["type"] == "turn":
            board, pieces = rec["board_before"], rec["pieces_before"]
        else:
            board, pieces = rec["final_board"], rec["pieces"]
            built = [state.built(p) for p in range(state.num_players)]
            if built != rec["built"]:
                self.problems.append(f"{where}: built {built} != {rec['built']}")
        ours = board_of(state)
        theirs = sorted(board, key=lambda x: tuple(x["hex"]))
        if ours != theirs:
            diff = [x for x in ours if x not in theirs][:3]
            self.problems.append(f"{where}: board differs, ours-only {diff}")
        if pieces_of(state) != pieces:
            self.problems.append(f"{where}: pieces {pieces_of(state)} != {pieces}")
        self.boards += 1


def replay_file(rel: str, observe=None) -> tuple[int, Report]:
    path = ORACLE / rel
    source = "ujf" if rel.startswith("ujf") else "bga"
    report = Report()
    games = 0
    for records in read_games(path):
        games += 1
        replay_game(records, source, report, observe)
    return games, report


#: The largest files (about 11 s together) run with ``-m slow``; the default run keeps every BGA
#: file and one UJF file.
SLOW = {"ujf-sample/ujf_uniform_2p.jsonl.gz", "ujf-sample/ujf_uniform_3p.jsonl.gz",
        "ujf-sample/ujf_uniform_4p.jsonl.gz"}


@pytest.mark.parametrize(
    "rel",
    [pytest.param(r, marks=pytest.mark.slow) if r in SLOW else r for r in sorted(EXPECTED)],
)
def test_oracle_file_agrees(rel):
    checker = StateChecker()
    games, report = replay_file(rel, checker)
    assert report.mismatches == []
    assert checker.problems == []
    assert (games, report.turns, report.placement_sets, report.build_sets) == EXPECTED[rel]
    assert checker.boards == report.turns + games


def test_oracle_files_all_listed():
    found = {f"{p.parent.name}/{p.name}" for p in ORACLE.glob("*/*.jsonl.gz")}
    assert found == set(EXPECTED)


def _first_game(rel: str) -> list[dict[str, Any]]:
    return next(read_games(ORACLE / rel))


@pytest.mark.parametrize("tamper", ["drop_placement", "add_build", "winners", "board"])
def test_harness_reports_tampered_records(tamper):
    rel = "bga-sample/bga_uniform_2p.jsonl.gz"
    records = copy.deepcopy(_first_game(rel))
    source = "bga"
    turn = records[3]
    if tamper == "drop_placement":
        turn["legal_placements"].pop(0)
    elif tamper == "add_build":
        turn["legal_builds"].append({"kind": "tower", "hex": [40, 40]})
    elif tamper == "winners":
        end = records[-1]
        end["winners_excluding_eliminated"] = [
            p for p in range(2) if p not in end["winners_excluding_eliminated"]
        ] or [0]
    else:
        turn["board_before"][0]["level"] += 1
    report = Report()
    checker = StateChecker()
    replay_game(records, source, report, checker)
    problems = report.mismatches + checker.problems
    assert len(problems) == 1
    game_id = records[0]["game"]
    assert problems[0].startswith(game_id)
    # the untouched game replays cleanly
    clean = Report()
    clean_checker = StateChecker()
    replay_game(_first_game(rel), source, clean, clean_checker)
    assert clean.mismatches == [] and clean_checker.problems == []
