"""The board as SVG (taluva_ai.games.taluva.svg) and ``taluva replay --svg``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from taluva_ai.cli import main
from taluva_ai.errors import RecordError
from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva.state import C_BUILDING, C_LEVEL, C_OWNER
from taluva_ai.games.taluva.svg import changed_cells, state_svg
from taluva_ai.games.taluva.tiles import tile_name
from taluva_ai.pictures import save_svgs
from taluva_ai.records import replay_record

DATA = Path(__file__).parent / "data"
#: ``taluva play --players greedy random --seed 7 --record ...``: 81 plies, early victory.
GOLDEN = DATA / "golden_greedy_random_seed7.jsonl"
TNT = DATA / "tnt_golden_greedy_random_seed7.jsonl"


def _classes(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg.encode("utf-8"))
    return [e for e in root.iter() if e.get("class") == cls]


def test_initial_and_first_tile() -> None:
    st = TaluvaGame().new_initial_state(seed=1)
    empty = state_svg(st)
    assert _classes(empty, "hex") == [] and "empty table" in empty
    tile = st.draw()
    in_hand = _classes(state_svg(st), "in-hand")
    assert len(in_hand) == 1 and in_hand[0].get("data-tile") == tile_name(tile)
    before = st.cells.copy()
    st.apply("tile@0,0:SE")
    changed = changed_cells(before, st.cells)
    assert changed.size == 3
    svg = state_svg(st, ["ann", "bob"], "tile@0,0:SE", changed)
    hexes = _classes(svg, "hex")
    assert sorted((int(h.get("data-q")), int(h.get("data-r"))) for h in hexes) == sorted(
        st.game.board.hex(int(c)) for c in changed)
    assert [h.get("data-level") for h in hexes] == ["1", "1", "1"]
    assert len(_classes(svg, "last")) == 3
    assert len(_classes(svg, "volcano-mark")) == 1
    # the tile's outline: 12 outer hex sides (3 hexes x 6 sides, less the 3 shared pairs)
    assert len(_classes(svg, "tile-edge")) == 12
    rows = _classes(svg, "seat-row")
    assert [r.get("data-seat") for r in rows] == ["0", "1"]
    assert "ann" in svg and "huts 20 · temples 3 · towers 2" in svg
    assert len(_classes(svg, "legend")) == 1


def test_names_are_escaped() -> None:
    st = TaluvaGame().new_initial_state(seed=1)
    svg = state_svg(st, ["<b>&", "x"], last="<script>")
    ET.fromstring(svg.encode("utf-8"))  # well-formed
    assert "<script>" not in svg and "&lt;b&gt;&amp;" in svg


def test_replay_svg_of_the_golden_record(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "svg"
    assert main(["replay", str(GOLDEN), "--svg", str(out)]) == 0
    assert "pictures: 82 SVG files" in capsys.readouterr().out
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [f"{i:04d}.svg" for i in range(82)]  # 81 plies + 1
    for f in files:
        ET.parse(f)  # valid XML
    final = replay_record(GOLDEN)
    cells = final.cells
    last = files[-1].read_text(encoding="utf-8")
    assert len(_classes(last, "hex")) == int((cells[:, C_LEVEL] > 0).sum()) == 69
    buildings = _classes(last, "building")
    kinds = Counter((b.get("data-kind"), b.get("data-seat")) for b in buildings)
    assert kinds == Counter({("hut", "0"): 17, ("hut", "1"): 10, ("temple", "0"): 3})
    assert len(buildings) == int((cells[:, C_BUILDING] > 0).sum())
    huts = sum(int(b.get("data-count") or 0) for b in buildings if b.get("data-kind") == "hut")
    on_board = cells[cells[:, C_BUILDING] == 1]
    assert huts == int(on_board[:, C_LEVEL].sum()) == 30
    assert int(on_board[on_board[:, C_OWNER] == 0][:, C_LEVEL].sum()) == 20  # greedy's 20 huts
    assert "last: expand@-1,-1:J" in last
    assert len(_classes(last, "last")) == 3  # the expansion's three hexes
    assert _classes(files[0].read_text(encoding="utf-8"), "hex") == []


@pytest.mark.parametrize("link", ["dir", "file", "part"])
def test_replay_svg_follows_no_symbolic_link(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             link: str) -> None:
    """A link as DIR or as one of the pictures is refused in one line, and one at a
    picture's old temporary name (``.0005.svg.part``) is not followed: the file it points to
    is never written."""
    target = tmp_path / "target.txt"
    target.write_text("keep")
    out = tmp_path / "svg"
    if link == "dir":
        real = tmp_path / "real"
        real.mkdir()
        out.symlink_to(real)
        named, reason = "", "is a symbolic link; give a real directory for the pictures"
    else:
        out.mkdir()
        name = "0005.svg" if link == "file" else ".0005.svg.part"
        (out / name).symlink_to(target)
        named = f"{out / '0005.svg'}: "
        reason = "is a symbolic link; remove it (pictures are written to files, not through " \
            "links)"
    if link == "part":
        assert main(["replay", str(GOLDEN), "--svg", str(out)]) == 0
        assert target.read_text() == "keep"
        assert len(list(out.glob("[0-9]*.svg"))) == 82 and (out / ".0005.svg.part").is_symlink()
        return
    with pytest.raises(SystemExit) as info:
        main(["replay", str(GOLDEN), "--svg", str(out)])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        f"taluva replay: error: --svg {out}: {named}{reason}"
    assert target.read_text() == "keep"
    if link == "dir":
        assert list((tmp_path / "real").iterdir()) == []
    elif link == "file":
        assert sorted(p.name for p in out.iterdir()) == ["0005.svg"]  # nothing written


def test_save_svgs_refuses_bad_records(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(GOLDEN.read_text().replace('"tile@0,0:SE"', '"tile@9,0:SE"'))
    with pytest.raises(RecordError):
        save_svgs(bad, tmp_path / "b")
    assert not (tmp_path / "b").exists()  # nothing written
    assert np.array_equal(changed_cells(None, np.zeros((3, 5))), np.zeros(0))
