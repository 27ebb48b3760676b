"""Pictures of positions (taluva_ai.games.taluva.draw) and of a replayed record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva.draw import render_rgb, save_picture
from taluva_ai.pictures import save_pictures
from taluva_ai.records import RecordWriter


def _record(path: Path) -> int:
    game = TaluvaGame(tiles_per_player=2)
    st = game.new_initial_state(seed=3)
    rng = np.random.default_rng(3)
    plies = 0
    with RecordWriter(path, game, 3, ["random", "random"]) as w:
        while not st.is_terminal():
            if st.current_player == -1:
                a = int(st.deck[int(st.meta[3])])
            else:
                legal = st.legal_actions()
                a = int(legal[rng.integers(legal.size)])
            w.write_action(st, a)
            st.apply(a)
            plies += 1
        w.write_result(st)
    return plies


def test_render_rgb_shows_the_island() -> None:
    game = TaluvaGame()
    st = game.new_initial_state(seed=0)
    empty = render_rgb(st, size=160)
    st.draw()
    st.apply(int(st.legal_actions()[0]))
    img = render_rgb(st, size=160)
    assert img.shape == (160, 160, 3) and img.dtype == np.uint8
    # the volcano's red appears on the board (above the legend) once a tile lies on the table
    board = slice(0, int(0.8 * 160))
    red = (img[board, :, 0] > 150) & (img[board, :, 1] < 90) & (img[board, :, 2] < 90)
    red0 = (empty[board, :, 0] > 150) & (empty[board, :, 1] < 90) & (empty[board, :, 2] < 90)
    assert red.sum() > 20 and red0.sum() == 0
    # the legend (under the board) shows the terrain colours in both
    for im in (img, empty):
        legend = im[int(0.85 * 160):]
        assert ((legend[:, :, 0] > 150) & (legend[:, :, 1] < 90) & (legend[:, :, 2] < 90)).any()


def _two_tiles():
    st = TaluvaGame().new_initial_state(seed=7)
    for a in ("draw:JS", "tile@0,0:SE", "hut@-1,0", "draw:RJ", "tile@1,-1:SW"):
        st.apply(a)
    return st


def test_pictures_outline_tiles_and_write_coordinates_and_a_legend() -> None:
    """issue 19 A.6: a thick outline around each tile (not between the hexes of one tile),
    every hex's q,r and level, a legend of terrains, pieces and seats."""
    import matplotlib.pyplot as plt

    from taluva_ai.games.taluva.draw import draw_state, tile_edges

    st = TaluvaGame().new_initial_state(seed=7)
    st.apply("draw:JS")
    st.apply("tile@0,0:SE")
    assert len(tile_edges(st)) == 12  # 3 hexes x 6 sides - 3 shared sides counted twice
    st = _two_tiles()
    # two tiles of 12 sides each, touching along 2 sides (drawn once each)
    assert len(tile_edges(st)) == 22
    fig = draw_state(st)
    try:
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert sorted(texts[0::2]) == sorted(["0,0", "-1,0", "0,-1", "1,-1", "2,-2", "2,-1"])
        assert texts[1::2] == ["1"] * 6  # levels
        labels = [t.get_text() for t in fig.texts]
        assert labels == ["volcano", "jungle", "clearing", "sand", "rock", "lake",
                          "hut (1 per level)", "temple", "tower", "tile outline", "seat 0",
                          "seat 1"]
        assert fig.axes[0].get_title() == st.summary()
    finally:
        plt.close(fig)


def test_save_pictures(tmp_path: Path) -> None:
    rec = tmp_path / "game.jsonl"
    plies = _record(rec)
    files = save_pictures(rec, tmp_path / "svg", "svg")
    assert len(files) == plies + 1
    assert files[0].name == "0000.svg" and files[-1].name == f"{plies:04d}.svg"
    assert files[1].read_text().lstrip().startswith("<?xml")
    png = save_pictures(rec, tmp_path / "png", "png", decisions_only=True)
    assert len(png) == 1 + plies - 4  # 4 chance draws left out
    assert png[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="'svg' or 'png'"):
        save_pictures(rec, tmp_path, "gif")
    assert save_picture(TaluvaGame().new_initial_state(seed=1), tmp_path / "x.png").exists()
