"""Pictures of positions (taluva_ai.games.taluva.draw) and of a replayed record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva.draw import render_rgb, save_picture, save_pictures
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
    # the volcano's red appears only once a tile lies on the table
    red = (img[:, :, 0] > 150) & (img[:, :, 1] < 90) & (img[:, :, 2] < 90)
    red0 = (empty[:, :, 0] > 150) & (empty[:, :, 1] < 90) & (empty[:, :, 2] < 90)
    assert red.sum() > 20 and red0.sum() == 0


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
