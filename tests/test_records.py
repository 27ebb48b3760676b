"""Game records (taluva_ai.records): round trip, the golden record, and precise errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from taluva_ai import make_game
from taluva_ai.agents import make_agent
from taluva_ai.errors import RecordError
from taluva_ai.records import (
    RECORD_FORMAT,
    RecordWriter,
    read_header,
    read_result,
    replay_record,
)
from taluva_ai.tournament import play_game

GOLDEN = Path(__file__).parent / "data" / "golden_greedy_random_seed7.jsonl"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _edit(tmp_path: Path, lineno: int, **changes: object) -> Path:
    """The golden record with fields of line ``lineno`` (1-based) changed."""
    lines = _lines(GOLDEN)
    obj = json.loads(lines[lineno - 1])
    obj.update(changes)
    lines[lineno - 1] = json.dumps(obj)
    return _write(tmp_path / "edited.jsonl", lines)


def _error(path: Path) -> RecordError:
    with pytest.raises(RecordError) as info:
        replay_record(path)
    return info.value


def _refused(tmp_path: Path, lineno: int, field: str, **changes: object) -> RecordError:
    """The error of replaying the golden record with ``changes`` to line ``lineno``, which
    names that line and ``field``."""
    e = _error(_edit(tmp_path, lineno, **changes))
    assert (e.line, e.field) == (lineno, field)
    return e


# -- the golden record --------------------------------------------------------------------------


def test_golden_record_replays_to_its_result() -> None:
    state = replay_record(GOLDEN)
    assert state.is_terminal()
    assert state.ply == 81
    assert state.winners() == [0]
    assert state.end_reason.name == "EARLY_VICTORY"
    assert state.returns().tolist() == [1.0, -1.0]
    assert state.built(0) == {"huts": 20, "temples": 3, "towers": 0}
    assert state.built(1) == {"huts": 14, "temples": 0, "towers": 0}
    assert state.destroyed_huts(1) == 4
    h = read_header(GOLDEN)
    assert (h.game, h.seed, h.players) == ("taluva", 7, ("greedy", "random"))
    assert h.agent_seeds == (1201125462, 3618983171)
    res = read_result(GOLDEN)
    assert res is not None
    assert (res.winners, res.end_reason, res.places, res.plies) == ((0,), "early_victory",
                                                                    (0, 1), 81)
    lines = _lines(GOLDEN)
    assert len(lines) == 83
    assert lines[1] == '{"type": "action", "ply": 0, "player": "chance", "action": "draw:JS"}'
    assert lines[2] == '{"type": "action", "ply": 1, "player": 0, "action": "tile@0,0:SE"}'


def test_playing_the_same_seed_reproduces_the_golden_record_byte_for_byte(
    tmp_path: Path,
) -> None:
    game = make_game("taluva")
    out = tmp_path / "again.jsonl"
    res = play_game(game, [make_agent("greedy"), make_agent("random")], 7, record_path=out)
    assert out.read_bytes() == GOLDEN.read_bytes()
    assert res.players == ("greedy", "random")
    assert (res.winners, res.end_reason, res.plies) == ((0,), "early_victory", 81)


# -- round trips --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 3, "ranked": True, "tiles_per_player": 6},
        {"num_players": 4, "tile_preview": True, "tiles_per_player": 5},
        {"num_players": 2, "no_lake_building": True, "new_hut_isolated": False},
    ],
)
def test_round_trip_write_then_replay(tmp_path: Path, options: dict[str, object]) -> None:
    game = make_game("taluva", **options)
    n = game.num_players
    agents = [make_agent("random" if i % 2 else "greedy") for i in range(n)]
    seen = []
    path = tmp_path / "g.jsonl"
    res = play_game(game, agents, 11, record_path=path,
                    on_state=lambda s, e: seen.append(s.to_position_string()))
    final = seen[-1]
    replayed: list[str] = []
    state = replay_record(path, on_state=lambda s, e: replayed.append(s.to_position_string()))
    assert replayed == seen
    assert state.to_position_string() == final
    assert tuple(state.returns().tolist()) == res.returns
    assert state.ply == res.plies == len(_lines(path)) - 2
    assert read_header(path).rules == game.options()


def test_writer_checks_its_arguments(tmp_path: Path) -> None:
    game = make_game("taluva")
    with pytest.raises(ValueError, match="3 names for 2 seats"):
        RecordWriter(tmp_path / "x.jsonl", game, 1, ["a", "b", "c"])
    state = game.new_initial_state(seed=1)
    with RecordWriter(tmp_path / "y.jsonl", game, 1, ["a", "b"]) as w, \
            pytest.raises(ValueError, match="not over"):
        w.write_result(state)


# -- corrupted records: each error names its line and field ------------------------------------


def test_bad_json(tmp_path: Path) -> None:
    lines = _lines(GOLDEN)
    lines[4] = '{"type": "action", "ply": 3, "player": "chance", "action": "draw:RJ"'
    e = _error(_write(tmp_path / "bad.jsonl", lines))
    assert (e.line, e.field) == (5, "json")
    assert "not valid JSON" in str(e)


def test_not_an_object_and_unknown_type(tmp_path: Path) -> None:
    lines = _lines(GOLDEN)
    lines[9] = "[1, 2]"
    assert (_error(_write(tmp_path / "a.jsonl", lines)).line, "json") == (10, "json")
    _refused(tmp_path, 10, "type", type="move")


def test_illegal_tile_placement(tmp_path: Path) -> None:
    e = _refused(tmp_path, 6, "action", action="tile@20,0:N")
    assert "not legal" in e.reason


def test_illegal_build_on_a_volcano(tmp_path: Path) -> None:
    _refused(tmp_path, 7, "action", action="hut@0,0")


def test_malformed_notation(tmp_path: Path) -> None:
    _refused(tmp_path, 7, "action", action="hut@0")


def test_draw_of_a_tile_with_no_copy_left(tmp_path: Path) -> None:
    # LL has one copy; line 2 draws JS. Drawing LL twice (lines 2 and 5) must fail at line 5.
    lines = _lines(GOLDEN)
    first = json.loads(lines[1])
    first["action"] = "draw:LL"
    lines[1] = json.dumps(first)
    second = json.loads(lines[4])
    second["action"] = "draw:LL"
    lines[4] = json.dumps(second)
    e = _error(_write(tmp_path / "d.jsonl", lines))
    assert (e.line, e.field) == (5, "action")


def test_wrong_player(tmp_path: Path) -> None:
    e = _refused(tmp_path, 6, "player", player=0)
    assert "seat 1 is to move" in e.reason
    _refused(tmp_path, 5, "player", player=1)
    _refused(tmp_path, 6, "player", player="chance")


def test_wrong_ply(tmp_path: Path) -> None:
    _refused(tmp_path, 12, "ply", ply=12)


def test_missing_and_unknown_fields(tmp_path: Path) -> None:
    lines = _lines(GOLDEN)
    obj = json.loads(lines[3])
    del obj["ply"]
    lines[3] = json.dumps(obj)
    e = _error(_write(tmp_path / "m.jsonl", lines))
    assert (e.line, e.field) == (4, "ply")
    _refused(tmp_path, 4, "comment", comment="hi")
    _refused(tmp_path, 1, "colour", colour="red")


def test_bad_header(tmp_path: Path) -> None:
    e = _refused(tmp_path, 1, "format", format="taluva-ai-record/9")
    assert RECORD_FORMAT in e.reason
    _refused(tmp_path, 1, "game", game="chess")
    _refused(tmp_path, 1, "rules", rules={"num_players": 2, "speed": 3})
    _refused(tmp_path, 1, "rules", rules={"num_players": 5})
    _refused(tmp_path, 1, "players", players=["greedy"])
    _refused(tmp_path, 1, "seed", seed="7")
    _refused(tmp_path, 2, "type", type="header")


def test_wrong_result(tmp_path: Path) -> None:
    e = _refused(tmp_path, 83, "winners", winners=[1])
    assert e.reason == "the record says [1], the replay gives [0]"
    _refused(tmp_path, 83, "returns", returns=[-1.0, 1.0])
    _refused(tmp_path, 83, "end_reason", end_reason="tiles_out")
    _refused(tmp_path, 83, "plies", plies=80)
    _refused(tmp_path, 83, "places", places="0,1")


def test_truncated_file(tmp_path: Path) -> None:
    lines = _lines(GOLDEN)
    e = _error(_write(tmp_path / "t.jsonl", lines[:50]))
    assert (e.line, e.field) == (51, "type")
    assert "ends after line 50 without a result line" in e.reason
    assert read_result(tmp_path / "t.jsonl") is None
    # cut in the middle of the last line
    data = GOLDEN.read_bytes()
    (tmp_path / "cut.jsonl").write_bytes(data[: len(data) - 20])
    e = _error(tmp_path / "cut.jsonl")
    assert (e.line, e.field) == (83, "json")
    # a result line before the game is over
    res = lines[-1]
    e = _error(_write(tmp_path / "early.jsonl", [*lines[:40], res]))
    assert (e.line, e.field) == (41, "type")
    assert "not over" in e.reason


def test_lines_after_the_end(tmp_path: Path) -> None:
    lines = _lines(GOLDEN)
    extra = '{"type": "action", "ply": 81, "player": "chance", "action": "draw:JC"}'
    e = _error(_write(tmp_path / "a.jsonl", [*lines[:-1], extra, lines[-1]]))
    assert (e.line, e.field) == (83, "type")
    assert "the game is over" in e.reason
    e = _error(_write(tmp_path / "b.jsonl", [*lines, lines[-1]]))
    assert (e.line, e.field) == (84, "type")


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("", encoding="utf-8")
    e = _error(tmp_path / "e.jsonl")
    assert (e.line, e.field) == (1, "type")


def test_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        replay_record(tmp_path / "none.jsonl")


# -- hostile records: every one a RecordError naming the line and field, never a crash ----------


def _header(**changes: object) -> str:
    obj = json.loads(_lines(GOLDEN)[0])
    obj.update(changes)
    return json.dumps(obj)


@pytest.mark.parametrize(
    ("first", "field", "reason"),
    [
        (_header(seed=-1), "seed", "expected a non-negative integer or null, got -1"),
        (_header(rules={"num_players": 2.0}), "rules", "num_players must be an integer, got 2.0"),
        (_header(rules={"num_players": {"a": [1]}}), "rules",
         "num_players must be an integer, got {'a': [1]}"),
        (_header(rules=1), "rules", "expected an object of rule options"),
        (_header(rules={"name": "x"}), "rules", "unknown rule option 'name'"),
        (_header(rules={"num_players": 2, "speed": 3}), "rules", "unknown rule option(s): speed"),
        ('{"type": "header", "seed": ' + "1" * 5000 + "}", "json", "not valid JSON: "),
        ("[" * 100_000, "json", "not valid JSON: nested too deeply"),
    ],
)
def test_hostile_header(tmp_path: Path, first: str, field: str, reason: str) -> None:
    e = _error(_write(tmp_path / "h.jsonl", [first, *_lines(GOLDEN)[1:]]))
    assert (e.line, e.field) == (1, field)
    assert e.reason.startswith(reason) and (reason.endswith(": ") or e.reason == reason)


def test_hostile_action_lines(tmp_path: Path) -> None:
    lines = _lines(GOLDEN)
    lines[9] = "[" * 100_000
    e = _error(_write(tmp_path / "n.jsonl", lines))
    assert (e.line, e.field, e.reason) == (10, "json", "not valid JSON: nested too deeply")
    _refused(tmp_path, 83, "returns", returns=[10**400, -1.0])


def test_a_tile_placement_at_a_chance_node_is_refused(tmp_path: Path) -> None:
    # line 5 is a chance node; the text's parse alone would give an id that is also a tile type
    e = _refused(tmp_path, 5, "action", action="tile@0,-32:SW")
    assert e.reason.startswith("'tile@0,-32:SW' is a tile placement at a chance node: expected "
                               "a chance outcome, e.g. 'draw:")
    e = _refused(tmp_path, 5, "action", action="hut@1,0")
    assert e.reason.startswith("'hut@1,0' is a build at a chance node")


def test_a_draw_at_the_tile_step_is_refused(tmp_path: Path) -> None:
    e = _error(_edit(tmp_path, 3, action="draw:JC"))
    assert (e.line, e.field, e.reason) == (
        3, "action", "'draw:JC' is a draw at the tile step (seat 0 to move): chance outcomes "
        "belong only at chance nodes")
    e = _refused(tmp_path, 4, "action", action="draw:JS")
    assert e.reason.startswith("'draw:JS' is a draw at the build step")


def test_seeded_draws_are_checked_on_request(tmp_path: Path) -> None:
    replay_record(GOLDEN, seeded_draws=True)
    lines = _lines(GOLDEN)
    a, b = json.loads(lines[1]), json.loads(lines[4])  # draw:JS, then another tile
    assert a["action"] != b["action"]
    a["action"], b["action"] = b["action"], a["action"]
    lines[1], lines[4] = json.dumps(a), json.dumps(b)
    path = _write(tmp_path / "s.jsonl", lines)
    with pytest.raises(RecordError) as info:
        replay_record(path, seeded_draws=True)
    assert (info.value.line, info.value.field) == (2, "action")
    assert info.value.reason == (f"{a['action']!r} does not follow the seeded deck: the deal "
                                 "draws 'draw:JS' here")


def test_atomic_writer_replaces_the_file_only_when_the_game_is_over(tmp_path: Path) -> None:
    game = make_game("taluva", tiles_per_player=1)
    path = tmp_path / "r.jsonl"
    path.write_text("old\n")
    state = game.new_initial_state(seed=2)
    with RecordWriter(path, game, 2, ["a", "b"], atomic=True) as w:
        w.write_action(state, state.clone().draw())
        state.draw()
        assert path.read_text() == "old\n"
        assert len(list(tmp_path.glob(".r.jsonl.*.part"))) == 1
    assert path.read_text() == "old\n"  # closed before the result: nothing replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]
    state = game.new_initial_state(seed=2)
    with RecordWriter(path, game, 2, ["a", "b"], atomic=True) as w:
        while not state.is_terminal():
            a = state.clone().draw() if state.current_player < 0 else state.legal_actions()[0]
            w.write_action(state, a)
            state.apply(a)
        w.write_result(state)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]
    assert replay_record(path).is_terminal()


def test_writer_refuses_paths_that_cannot_be_files(tmp_path: Path) -> None:
    game = make_game("taluva")
    with pytest.raises(IsADirectoryError):
        RecordWriter(tmp_path, game, 1, ["a", "b"], atomic=True)
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError) as info:
        RecordWriter(tmp_path / "f" / "g" / "r.jsonl", game, 1, ["a", "b"])
    assert info.value.filename == str(tmp_path / "f")


# -- bounded reading (issue 49) -----------------------------------------------------------------


@pytest.mark.parametrize("where", [1, 5, "last"])
def test_a_line_longer_than_the_bound_is_refused_without_reading_it_whole(
    tmp_path: Path, where: int | str
) -> None:
    import tracemalloc

    from taluva_ai.records import MAX_LINE_BYTES

    lines = _lines(GOLDEN)
    at = len(lines) if where == "last" else int(where)
    lines[at - 1] = '{"type": "action", "action": "' + "x" * (40 * MAX_LINE_BYTES) + '"}'
    path = _write(tmp_path / "long.jsonl", lines)
    replay_record(GOLDEN)  # the game's first use (kernels, caches) is not the reader's
    tracemalloc.start()
    try:
        for read in (replay_record, read_header, read_result):
            if read is read_header and at != 1:
                continue
            if read is read_result:
                assert read_result(path) is None
                continue
            with pytest.raises(RecordError) as info:
                read(path)
            assert info.value.line == at and info.value.field == "json"
            assert f"a line longer than {MAX_LINE_BYTES} bytes" in info.value.reason
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * MAX_LINE_BYTES  # the 40 MiB line was never held whole


def test_a_line_of_the_bound_is_read(tmp_path: Path) -> None:
    from taluva_ai.records import MAX_LINE_BYTES

    lines = _lines(GOLDEN)
    header = json.loads(lines[0])
    header["meta"] = {"pad": ""}
    pad = MAX_LINE_BYTES - len(json.dumps(header))
    header["meta"] = {"pad": "p" * pad}
    lines[0] = json.dumps(header)
    assert len(lines[0]) == MAX_LINE_BYTES
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b"".join(line.encode() + b"\r\n" for line in lines))
    assert replay_record(path).is_terminal()
    assert read_header(path).meta == {"pad": "p" * pad}
    assert read_result(path) is not None


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_record_that_is_not_a_regular_file_is_refused_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    import os
    import subprocess

    if kind == "fifo":
        path = tmp_path / "fifo.jsonl"
        os.mkfifo(path)  # no writer: opening it to read would wait for one
        what = "a FIFO"
    elif kind == "device":
        path = Path("/dev/zero")  # endless: reading it whole ran out of memory
        what = "a character device"
    else:
        path = tmp_path
        what = "a directory"
    for read in (replay_record, read_header, read_result):
        with pytest.raises(OSError) as info:
            read(path)
        assert info.value.strerror == f"not a regular file ({what}); a record is a file"
    proc = subprocess.run(
        ["taluva", "replay", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr == f"{path}: cannot read the record: not a regular file ({what}); a " \
        "record is a file\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_record_or_run_file_is_never_written_onto_a_fifo_or_a_directory(tmp_path, capsys
                                                                          ) -> None:
    """A write through a temporary file and a rename would replace a FIFO or a device (as
    root, /dev/null itself) with a regular file: refused in one line, the FIFO left as it is."""
    import stat as st

    from taluva_ai.cli import main
    from taluva_ai.runfiles import write_atomic

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["play", "--players", "random", "random", "--seed", "1", "--record",
                 str(fifo)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"{fifo}: cannot write the record: is a FIFO, not a regular file: give a file's path")
    with pytest.raises(OSError, match="is a FIFO, not a regular file"):
        write_atomic(fifo, "x")
    with pytest.raises(IsADirectoryError, match="is a directory, not a file"):
        write_atomic(tmp_path, "x")
    assert st.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]  # no temporary file left


def test_replay_prints_a_record_s_names_without_terminal_control_sequences(tmp_path,
                                                                          capsys) -> None:
    """A crafted record's player name could set the window title or clear the screen of the
    terminal ``taluva replay`` prints to (the hostile pass): control characters are shown as
    escapes."""
    from taluva_ai.cli import main

    rec = tmp_path / "g.jsonl"
    assert main(["play", "--players", "greedy", "random", "--seed", "2", "--record",
                 str(rec)]) == 0
    lines = rec.read_text().splitlines()
    header = json.loads(lines[0])
    header["players"][0] = "evil\x1b]0;pwned\x07\x1b[2J"
    rec.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    capsys.readouterr()
    assert main(["replay", str(rec)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J" in out
