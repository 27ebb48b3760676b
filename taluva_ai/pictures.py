"""SVG pictures of any game's positions and records, through each game's ``svg`` module.

A game draws itself as SVG text in ``taluva_ai.games.<game name>.svg``, a module with
``position_svg(state, players, last, previous, extra, player) -> str`` (Taluva:
:mod:`taluva_ai.games.taluva.svg`; Thurn und Taxis: :mod:`taluva_ai.games.thurn_und_taxis.svg`).
This module finds that module by the state's game name (``state.game.name``) and serves the
browser board (``taluva serve``) and ``taluva replay RECORD --svg DIR`` with one code path; a
game without an ``svg`` module is shown as its text (``str(state)``) in an SVG.
"""

from __future__ import annotations

import errno
import importlib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from taluva_ai.protocol import GameState
from taluva_ai.runfiles import write_atomic
from taluva_ai.svgtext import xml_text


def svg_module(game_name: str) -> ModuleType | None:
    """``taluva_ai.games.<game_name>.svg``, or None when the game has no SVG picture."""
    try:
        return importlib.import_module(f"taluva_ai.games.{game_name}.svg")
    except ModuleNotFoundError:
        return None


def text_svg(state: GameState, last: str | None = None) -> str:
    """The state's text (``str(state)``) and the last action, as an SVG document."""
    lines = str(state).splitlines() + ([f"last: {last}"] if last else [])
    body = "".join(f'<text x="8" y="{18 * (i + 1)}">{xml_text(t)}</text>'
                   for i, t in enumerate(lines))
    width = 8 * max((len(t) for t in lines), default=10) + 16
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{18 * len(lines) + 12}" font-family="monospace" font-size="13" '
            f'xml:space="preserve">{body}</svg>')


def position_svg(state: GameState, players: Sequence[str] | None = None,
                 last: str | None = None, previous: GameState | None = None,
                 extra: Sequence[Any] = (), player: int | None = None) -> str:
    """The SVG picture of ``state`` (module docstring).

    Args:
        state: a state of any registered game.
        players: a name per seat (default ``seat 0``, ...).
        last: the notation of the action that led to ``state``, written beside the board.
        previous: the state before that action (a copy); what the action changed is marked.
            None marks nothing.
        extra: game-specific places to keep in view (Taluva: hexes ``(q, r)`` off the island
            where the page marks legal spots).
        player: the seat whose hidden information is shown (Thurn und Taxis: whose hand);
            None shows the full state.

    Returns:
        The SVG document as text.
    """
    module = svg_module(str(getattr(getattr(state, "game", None), "name", "")))
    if module is None:
        return text_svg(state, last)
    return str(module.position_svg(state, players, last, previous, extra, player))


def record_svgs(record_path: str | Path) -> list[tuple[str, str | None]]:
    """Replay a game record (:func:`taluva_ai.records.replay_record`, which checks it) and draw
    every position (:func:`position_svg`): ``(svg, notation of the action that led to it)``
    per position, the initial one first (notation None), then one after each action, chance
    draws included.

    Raises:
        taluva_ai.errors.RecordError: a malformed record.
        OSError: the file cannot be read.
    """
    from taluva_ai.records import read_header, replay_record

    header = read_header(record_path)
    out: list[tuple[str, str | None]] = []
    prev: list[GameState | None] = [None]

    def on_state(state: GameState, event: Any) -> None:
        last = None if event is None else event.notation
        out.append((position_svg(state, header.players, last, prev[0]), last))
        prev[0] = state.clone()

    replay_record(record_path, on_state)
    return out


def _refuse_link(path: Path, what: str) -> None:
    """Refuse a symbolic link where a picture or its directory goes: writing through it
    would write wherever it points.

    Raises:
        OSError: ``errno.ELOOP``, naming ``path``."""
    if path.is_symlink():
        raise OSError(errno.ELOOP, f"is a symbolic link; {what}", str(path))


def _picture_dir(out_dir: str | Path) -> Path:
    """``out_dir``, created if need be; refused if it is a symbolic link."""
    out = Path(out_dir)
    _refuse_link(out, "give a real directory for the pictures")
    out.mkdir(parents=True, exist_ok=True)
    return out


def save_svgs(record_path: str | Path, out_dir: str | Path) -> list[Path]:
    """Write :func:`record_svgs` to ``out_dir/0000.svg`` (the initial position), then
    ``0001.svg`` ... (after each action, numbered by the actions applied); creates ``out_dir``.
    Each file is written atomically (:func:`taluva_ai.runfiles.write_atomic`, through a new
    temporary file) into the real directory: no symbolic link is followed.

    Returns:
        The files written, in order.

    Raises:
        taluva_ai.errors.RecordError: a malformed record (nothing is written).
        OSError: the record cannot be read or a file cannot be written; ``out_dir`` or one of
            the files to write is a symbolic link (``errno.ELOOP``, naming it; nothing is
            written).
    """
    pictures = record_svgs(record_path)
    out = _picture_dir(out_dir)
    paths = [out / f"{i:04d}.svg" for i in range(len(pictures))]
    for path in paths:  # before any is written
        _refuse_link(path, "remove it (pictures are written to files, not through links)")
    for path, (svg, _) in zip(paths, pictures, strict=True):
        write_atomic(path, svg, exclusive=True)
    return paths


def save_pictures(record_path: str | Path, out_dir: str | Path, fmt: str = "svg",
                  decisions_only: bool = False) -> list[Path]:
    """Replay a Taluva game record (:func:`taluva_ai.records.replay_record`, which checks
    it) and write one matplotlib picture per position
    (:func:`taluva_ai.games.taluva.draw.save_picture`; ``taluva replay --png``):
    ``out_dir/0000.<fmt>`` for the initial position, then one after each action (chance draws
    included unless ``decisions_only``), named by the number of actions applied; the title is
    the summary line and the last action.

    Args:
        fmt: ``"svg"`` or ``"png"``.

    Returns:
        The files written, in order.

    Raises:
        ValueError: an unknown format.
        taluva_ai.errors.RecordError: a malformed record.
        OSError: a file cannot be written; ``out_dir`` or a file to write is a symbolic link
            (``errno.ELOOP``, naming it).
    """
    from taluva_ai.games.taluva.draw import save_picture
    from taluva_ai.records import replay_record

    if fmt not in ("svg", "png"):
        raise ValueError(f"picture format must be 'svg' or 'png', got {fmt!r}")
    out = _picture_dir(out_dir)
    written: list[Path] = []

    def on_state(state: GameState, event: Any) -> None:
        if event is None:
            title = f"{state.summary()}"  # type: ignore[attr-defined]
            name = "0000"
        else:
            if decisions_only and event.player < 0:
                return
            title = f"{state.summary()}\nlast: {event.notation}"  # type: ignore[attr-defined]
            name = f"{event.ply + 1:04d}"
        path = out / f"{name}.{fmt}"
        _refuse_link(path, "remove it (pictures are written to files, not through links)")
        written.append(save_picture(state, path, title=title))

    replay_record(record_path, on_state)
    return written


__all__ = ["position_svg", "record_svgs", "save_pictures", "save_svgs", "svg_module",
           "text_svg", "xml_text"]
