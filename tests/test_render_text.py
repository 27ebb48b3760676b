"""The text picture of a Taluva position (issue 19 A.6): hex rows offset by half a hex,
coordinates under every hex, a legend, colour on terminals (``--no-color``, ``NO_COLOR``)."""

from __future__ import annotations

import io

import pytest

from taluva_ai.cli import main
from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva.render import legend_text, render_text, use_color


def _position():
    st = TaluvaGame().new_initial_state(seed=7)
    for a in ("draw:JS", "tile@0,0:SE", "hut@-1,0", "draw:RJ", "tile@1,-1:SW"):
        st.apply(a)
    return st


BOARD = """\
ply 5 | build | player 1 | P0 h19 t3 w2 | P1 h20 t3 w2
r=-2               J1
                   q=+2
r=-1      J1    V1    R1
          q=+0  q=+1  q=+2
r=+0   S1h0  V1
       q=-1  q=+0"""

LEGEND = """\
legend: V volcano  J jungle  C clearing  S sand  R rock  L lake
        J2h1: jungle, level 2 (two tiles stacked), huts of seat 1 (a hut hex holds as many \
huts as its level)
        h hut(s), T temple, W tower, then the owner's seat: h0 h1 (seats 0..1)
        r=row (southwards), q= under each hex; actions name hexes q,r: hut@-1,0, \
tile@0,0:SE"""


def test_the_legend_names_the_table_s_seats() -> None:
    four = legend_text(players=4).splitlines()
    assert four[2].endswith("owner's seat: h0 h1 h2 h3 (seats 0..3)")
    solo = legend_text(players=1).splitlines()
    assert solo[1].startswith("        J2h0: jungle, level 2 (two tiles stacked), your huts")
    assert solo[2].endswith("owner's seat: h0 (yours, the solo player's)")
    from taluva_ai.protocol import make_game

    st = make_game("taluva", solo=True).new_initial_state(seed=1)
    assert str(st).endswith("\n" + legend_text(players=1))


def test_rows_are_offset_by_half_a_hex_with_coordinates_and_a_legend() -> None:
    st = _position()
    assert render_text(st, legend=False) == BOARD
    assert str(st) == BOARD + "\n" + LEGEND
    assert st.to_text() == str(st)
    # (1,-1) lies between its south-western (0,0) and south-eastern (1,0)... neighbours:
    # every row is shifted by half a hex (3 characters) from the one above
    lines = BOARD.splitlines()
    assert lines[3].index("V1") - lines[5].index("V1") == 3
    assert lines[1].index("J1") - lines[3].index("R1") == -3


def test_the_empty_table_says_so() -> None:
    st = TaluvaGame().new_initial_state(seed=7)
    assert render_text(st, legend=False).splitlines()[1] == "(empty table: no tile placed yet)"


def test_colour_marks_terrains_and_owners_and_nothing_else_changes() -> None:
    st = _position()
    text = render_text(st, color=True)
    assert "\x1b[48;5;221m\x1b[30m S1\x1b[0m\x1b[1;30;107mh0\x1b[0m" in text  # sand, seat 0
    assert "\x1b[48;5;160m\x1b[97m V1   \x1b[0m" in text  # volcano
    plain = text
    for code in ("\x1b[48;5;221m", "\x1b[48;5;22m", "\x1b[48;5;160m", "\x1b[48;5;247m",
                 "\x1b[48;5;33m", "\x1b[48;5;113m", "\x1b[30m", "\x1b[97m", "\x1b[0m",
                 "\x1b[2m", "\x1b[1;30;107m", "\x1b[1;97;40m", "\x1b[1;30;48;5;208m",
                 "\x1b[1;97;48;5;92m"):
        plain = plain.replace(code, "")
    assert [line.rstrip() for line in plain.splitlines()] == str(st).splitlines()
    assert "\x1b" not in str(st) and "\x1b" not in legend_text()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert use_color(_Tty())
    assert not use_color(io.StringIO())  # a pipe or a file
    assert not use_color(_Tty(), no_color=True)  # --no-color
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(_Tty())
    monkeypatch.setenv("NO_COLOR", "")  # no-color.org: set and not empty
    assert use_color(_Tty())
    monkeypatch.setenv("TERM", "dumb")
    assert not use_color(_Tty())


@pytest.mark.parametrize("flags", [[], ["--no-color"]])
def test_play_show_prints_the_legend_once_and_colours_a_terminal(
        flags: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = _Tty()
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr("sys.stdout", out)
    assert main(["play", "--players", "greedy", "random", "--seed", "7", "--show",
                 "--tiles-per-player", "2", *flags]) == 0
    text = out.getvalue()
    assert text.count("legend: ") == 1
    assert ("\x1b[" in text) is (not flags)
    assert "q=+0" in text
