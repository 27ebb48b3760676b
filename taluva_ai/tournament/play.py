"""Playing one game between agents, for any game of :mod:`taluva_ai.protocol`.

:func:`play_game` plays one game (and writes its record): chance nodes are resolved by the
state's seeded draw, each seat's agent is reset with its seed from :func:`agent_seeds`, every
decision is timed, and with forfeits on, an agent that raises, chooses an illegal action or
runs past its time budget plus the margin (:class:`MoveTimeout`) loses the game
(:class:`Forfeit`) instead of stopping the caller. The result is a :class:`GameResult`.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import CHANCE, Game
from taluva_ai.records import MoveEvent, Outcome, RecordWriter, StateCallback, outcome_of

#: Seconds a move may run over its agent's ``time=`` budget before the agent forfeits the game
#: (cutechess-cli's ``timemargin``), unless the tournament sets another margin.
DEFAULT_TIME_MARGIN = 0.5


#: End reason of a forfeited game.
FORFEIT = "forfeit"


@dataclass(frozen=True)
class Forfeit:
    """Why a seat lost a game without finishing it.

    Attributes:
        seat: the seat that forfeited.
        reason: ``"exception"`` (``act`` or ``reset`` raised), ``"illegal_action"`` (an
            illegal action or something that is not an action id) or ``"time"`` (a move
            took longer than the agent's budget plus the margin).
        detail: the exception (``"ValueError: ..."``) or the time figures, in words.
        ply: actions applied before the failed decision (chance outcomes included).
    """

    seat: int
    reason: str
    detail: str
    ply: int

    def to_json(self) -> dict[str, Any]:
        """``{"seat", "reason", "detail", "ply"}``, as in ``results.jsonl``."""
        return asdict(self)


@dataclass(frozen=True)
class GameResult:
    """The result of one game.

    Attributes:
        returns: final value per seat (``state.returns()``; zeros for a truncated game; for a
            forfeit -1 to the forfeiting seat, ``1 / (n - 1)`` to each other seat).
        winners: seats that share first place (empty when truncated; every seat but the
            forfeiting one after a forfeit).
        end_reason: e.g. ``"early_victory"``, ``"last_standing"``, ``"tiles_out"``,
            ``"truncated"`` (:class:`taluva_ai.records.Outcome`), or ``"forfeit"``.
        places: final place per seat (0 best; after a forfeit the forfeiting seat is 1, the
            others 0).
        plies: actions applied, chance outcomes included.
        players: agent name (spec) per seat.
        seed: the game seed.
        forfeit: the :class:`Forfeit`, or None.
        time_s: seconds each seat spent in ``act`` (wall clock, ``time.perf_counter``).
        moves: decisions each seat made (a failed one included).
        max_move_s: each seat's longest decision, in seconds.
    """

    returns: tuple[float, ...]
    winners: tuple[int, ...]
    end_reason: str
    places: tuple[int, ...]
    plies: int
    players: tuple[str, ...]
    seed: int | None
    forfeit: Forfeit | None = None
    time_s: tuple[float, ...] = field(default=(), compare=False)
    moves: tuple[int, ...] = ()
    max_move_s: tuple[float, ...] = field(default=(), compare=False)


class MoveTimeout(BaseException):
    """Raised inside an agent's ``act`` when its move has run past its limit plus the margin
    (a :class:`BaseException`, like KeyboardInterrupt, so an agent's ``except Exception`` does
    not swallow it)."""


def agent_seeds(seed: int | None, num_players: int) -> list[int] | None:
    """Per-seat agent seeds derived from a game seed (``SeedSequence(seed).spawn(n)``, each
    child's first 32-bit word); None when ``seed`` is None (agents then draw fresh entropy)."""
    if seed is None:
        return None
    children = np.random.SeedSequence(seed).spawn(num_players)
    return [int(c.generate_state(1)[0]) for c in children]


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`MoveTimeout` in this thread after ``seconds`` (``signal.setitimer``;
    only in the main thread of a POSIX process, elsewhere the move is timed afterwards
    only)."""
    if (seconds is None or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise MoveTimeout

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        while True:  # the one-shot timer may fire just as the move returns: disarm anyway
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                break
            except MoveTimeout:  # the move is then over its limit, which the caller sees
                continue


def play_game(
    game: Game,
    agents: Sequence[Any],
    seed: int | None,
    record_path: str | Path | None = None,
    on_state: StateCallback | None = None,
    meta: dict[str, Any] | None = None,
    *,
    time_limits: Sequence[float | None] | None = None,
    time_margin: float = DEFAULT_TIME_MARGIN,
    forfeits: bool = False,
    deck: Sequence[str] | None = None,
) -> GameResult:
    """Play one game between ``agents`` (one per seat, seat order).

    Chance nodes are resolved by ``state.draw()`` (the deck shuffled from ``seed``); each agent
    is reset with its seat's seed from :func:`agent_seeds` before the game, so the same seed
    and agents give the same game. Every decision is timed (``time.perf_counter``, seconds).

    Args:
        game: the game (its ``num_players`` must equal ``len(agents)``).
        agents: :class:`taluva_ai.agents.Agent` objects (``act``, ``reset``, ``stats``,
            ``name``).
        seed: game seed (int), or None for a fresh random game.
        record_path: write the game record there (:mod:`taluva_ai.records`).
        on_state: ``on_state(state, event)``, called with the initial state (``event`` None)
            and after every action (:class:`~taluva_ai.records.MoveEvent`, with the agent's
            ``stats()``). ``state`` is always the same object, updated in place; the callback
            must not modify it.
        meta: stored in the record header's ``meta``.
        time_limits: per seat, the move budget in seconds (None: no limit). A move that takes
            longer than its budget plus ``time_margin`` forfeits the game (reason ``"time"``);
            in the main thread of a POSIX process the move is stopped at that point
            (:class:`MoveTimeout`), elsewhere it is timed when it returns.
        time_margin: seconds a move may run over its budget (>= 0).
        forfeits: an agent that raises (in ``reset``, ``act`` or ``stats``) or chooses an
            illegal action forfeits the game instead of the error propagating.
        deck: an explicit draw order (strings, e.g. Taluva's tile names ``"JC"``) for a game
            with a deck (``game.parse_deck``): the initial state is
            ``game.new_initial_state(seed, deck=game.parse_deck(deck))`` and the record's
            header keeps the deck; ``seed`` still seeds the agents.

    The record is written to a temporary file next to ``record_path`` and renamed onto it
    when the game is over, so an existing file is replaced only by a finished record; a
    forfeited game leaves no record (its seed replays it up to the failure). Every action is
    applied (and so validated) before its line is written.

    Returns:
        The :class:`GameResult` (``forfeit`` set, ``end_reason`` ``"forfeit"``, after a
        forfeit).

    Raises:
        ValueError: the number of agents or time limits does not match the game, a negative
            ``time_margin``, or a bad ``deck`` (or one for a game without a deck).
        taluva_ai.errors.IllegalActionError: without ``forfeits``, an agent chose an illegal
            action, or returned something that is not an action id (an integer); the message
            names the agent.
        Exception: without ``forfeits``, whatever an agent raised.
        OSError: ``record_path`` cannot be written (raised before the game starts).
    """
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"{len(agents)} agents for a game of {n} players")
    limits = list(time_limits) if time_limits is not None else [None] * n
    if len(limits) != n:
        raise ValueError(f"{len(limits)} time limits for a game of {n} players")
    if not (math.isfinite(time_margin) and time_margin >= 0):
        raise ValueError(f"time_margin must be a number >= 0, got {time_margin!r}")
    names = tuple(str(getattr(a, "name", type(a).__name__)) for a in agents)
    seeds = agent_seeds(seed, n)
    spent = [0.0] * n
    moves = [0] * n
    longest = [0.0] * n
    if deck is None:
        state = game.new_initial_state(seed=seed)
    else:
        state = game.new_initial_state(  # type: ignore[call-arg]
            seed=seed, deck=_parse_deck(game, deck))
    writer = (
        RecordWriter(record_path, game, seed, names, agent_seeds=seeds, meta=meta, atomic=True,
                     deck=deck)
        if record_path is not None else None
    )
    plies = 0
    lost: Forfeit | None = None
    try:
        for i, agent in enumerate(agents):
            try:
                agent.reset(None if seeds is None else seeds[i])
            except Exception as e:
                if not forfeits:
                    raise
                lost = Forfeit(i, "exception", f"reset: {_describe_error(e)}", 0)
                break
        if lost is None and on_state is not None:
            on_state(state, None)
        while lost is None and not state.is_terminal():
            p = state.current_player
            stats: dict[str, Any] = {}
            if p == CHANCE:
                a = state.clone().draw()  # the seeded deck decides; applied below like any action
            else:
                limit = limits[p]
                hard = None if limit is None else limit + time_margin
                moves[p] += 1
                t0 = time.perf_counter()
                try:
                    with _deadline(hard):
                        raw = agents[p].act(state)
                        stats = agents[p].stats()
                except MoveTimeout:
                    assert limit is not None  # only a limited move has a deadline
                    took = time.perf_counter() - t0
                    _add_time(spent, longest, p, took)
                    lost = Forfeit(p, "time", _late(took, limit, time_margin, stopped=True),
                                   plies)
                    break
                except Exception as e:
                    _add_time(spent, longest, p, time.perf_counter() - t0)
                    if _interrupted(e):
                        raise KeyboardInterrupt from e
                    if not forfeits:
                        raise
                    lost = Forfeit(p, "exception", _describe_error(e), plies)
                    break
                took = time.perf_counter() - t0
                _add_time(spent, longest, p, took)
                if hard is not None and limit is not None and took > hard:
                    lost = Forfeit(p, "time", _late(took, limit, time_margin), plies)
                    break
                try:
                    a = _action_id(raw, names[p], p)
                except IllegalActionError as e:
                    if not forfeits:
                        raise
                    lost = Forfeit(p, "illegal_action", str(e), plies)
                    break
            text = ""
            try:
                if writer is not None or on_state is not None:
                    try:
                        text = state.action_to_string(a)
                    except (ValueError, IndexError) as e:
                        raise IllegalActionError(
                            a, str(e), f"agent {names[p]!r} (seat {p}) chose {a}, which is "
                            f"not an action here: {e}") from None
                try:
                    state.apply(a)
                except IllegalActionError as e:
                    if p == CHANCE:
                        raise
                    raise IllegalActionError(
                        a, e.rule, f"agent {names[p]!r} (seat {p}) chose the illegal action "
                        f"{e.action}: {e.rule}") from e
            except IllegalActionError as e:
                if not forfeits or p == CHANCE:
                    raise
                lost = Forfeit(p, "illegal_action", str(e), plies)
                break
            if writer is not None:
                writer.write_notation(p, text)
            if on_state is not None:
                on_state(state, MoveEvent(plies, p, a, text, stats))
            plies += 1
        if lost is not None:
            out = _forfeit_outcome(n, lost, plies)
        elif writer is not None:
            out = writer.write_result(state)
        else:
            out = outcome_of(state, plies)
    finally:
        if writer is not None:
            writer.close()
    return GameResult(out.returns, out.winners, out.end_reason, out.places, out.plies, names,
                      seed, lost, tuple(spent), tuple(moves), tuple(longest))


def _parse_deck(game: Game, deck: Sequence[str]) -> Any:
    """``game.parse_deck(deck)``.

    Raises:
        ValueError: the game has no deck, or ``deck`` is not one of its draw orders.
    """
    parse = getattr(game, "parse_deck", None)
    if parse is None:
        raise ValueError(f"game {game.name!r} has no deck: a deal gives only its seed")
    return parse(list(deck))


def _add_time(spent: list[float], longest: list[float], seat: int, took: float) -> None:
    spent[seat] += took
    longest[seat] = max(longest[seat], took)


def _late(took: float, limit: float, margin: float, stopped: bool = False) -> str:
    what = "was stopped after" if stopped else "took"
    return (f"a move {what} {took:.3f} s; the budget is {limit:g} s and the margin "
            f"{margin:g} s")


def _describe_error(e: BaseException) -> str:
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _forfeit_outcome(n: int, lost: Forfeit, plies: int) -> Outcome:
    """The outcome of a game forfeited by ``lost.seat``: it loses to every other seat, which
    share the win."""
    returns = tuple(-1.0 if s == lost.seat else 1.0 / (n - 1) for s in range(n))
    places = tuple(1 if s == lost.seat else 0 for s in range(n))
    winners = tuple(s for s in range(n) if s != lost.seat)
    return Outcome(returns, winners, FORFEIT, places, plies)


def _action_id(action: Any, name: str, seat: int) -> int:
    """An agent's chosen action as an int; anything but an integer (a float, a numpy float, a
    bool, None, ...) is refused rather than truncated."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    raise IllegalActionError(
        action, "an action is an integer id",
        f"agent {name!r} (seat {seat}) returned {action!r} ({type(action).__name__}), not an "
        "action id (an integer)")


def _interrupted(error: BaseException) -> bool:
    """Whether ``error`` arose from a Ctrl-C: a KeyboardInterrupt in its cause or context
    chain (Numba, interrupted while compiling, raises ``RuntimeError: no compiled object
    yet``); such an error stops the run instead of counting as the agent's forfeit."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _outcome(res: GameResult) -> Outcome:
    return Outcome(res.returns, res.winners, res.end_reason, res.places, res.plies)
