"""The browser board keeps hidden information hidden (docs/web.md): in a game played on the
page, a person sees their own hand and the chance outcomes dealt to them, nothing of another
seat's; an analysis never searches from a seat whose hand the page does not show."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("starlette")

from taluva_ai.web.analysis import search_position
from taluva_ai.web.errors import WebError
from taluva_ai.web.play import SPECTATOR, GameSession


def _hands(svg: str) -> dict[str, str]:
    rows = re.findall(r'<g class="seat-row" data-seat="(\d)">(.*?)</g>', svg)
    return {seat: re.sub("<[^>]+>", " ", row).split("hand:")[1].strip() for seat, row in rows}


def _play_until(session: GameSession, done: Any, limit: int = 400) -> None:
    """Human seats play their first legal move, agents theirs, until ``done()``."""
    for _ in range(limit):
        if done() or session.state.is_terminal():
            return
        if session.agents[session.state.current_player] is None:
            legal = session.state.legal_actions()
            session.play(session.state.action_to_string(int(legal[0])))
        else:
            session.agent_move()
    raise AssertionError("not reached")


def _hidden_draws(session: GameSession) -> list[int]:
    return [i for i, seen in enumerate(session.seen) if seen is not None]


def test_cards_dealt_to_another_seat_are_shown_as_question_marks() -> None:
    s = GameSession("thurn_und_taxis", ["human", "random"], {}, seed=1)
    _play_until(s, lambda: any(s.seen[i] == (1,) for i in _hidden_draws(s)))
    view = s.view()
    for i, entry in enumerate(view["history"]):
        full = s.history[i][1]
        if s.seen[i] == (1,):  # dealt to the agent's hand
            assert entry["notation"] == "deal:?" and full.startswith("deal:") and full != "deal:?"
        else:  # public, or dealt to the human
            assert entry["notation"] == full
    last = view["history"][-1]["notation"]
    assert f"last: {last}" in view["svg"]
    hands = _hands(view["svg"])
    assert re.fullmatch(r"\d+ cards?", hands["1"]) and not re.fullmatch(r"\d+ cards?", hands["0"])


def test_agents_only_show_everything_and_hot_seat_shows_the_human_to_move() -> None:
    s = GameSession("thurn_und_taxis", ["random", "random"], {}, seed=2)
    _play_until(s, lambda: len(_hidden_draws(s)) >= 2)
    assert s.viewer() is None
    assert [e["notation"] for e in s.view()["history"]] == [t for _, t in s.history]
    hot = GameSession("thurn_und_taxis", ["human", "random", "human"], {}, seed=3)
    _play_until(hot, lambda: hot.state.current_player == 1)
    assert hot.viewer() == SPECTATOR  # the agent moves: no seat's hand
    assert all(re.fullmatch(r"\d+ cards?", h) for h in _hands(hot.view()["svg"]).values())
    _play_until(hot, lambda: hot.state.current_player == 2)
    assert hot.viewer() == 2
    hands = _hands(hot.view()["svg"])
    assert not re.fullmatch(r"\d+ cards?", hands["2"])
    assert re.fullmatch(r"\d+ cards?", hands["0"]) and re.fullmatch(r"\d+ cards?", hands["1"])


def test_an_analysis_on_an_agents_turn_with_hidden_hands_is_refused() -> None:
    s = GameSession("thurn_und_taxis", ["human", "random"], {}, seed=1)
    _play_until(s, lambda: s.state.current_player == 1)
    with pytest.raises(WebError) as e:
        s.analysis_position()
    assert (e.value.status, e.value.message) == (
        409, "seat 1 (random) is to move and holds hidden information (its hand): analyse on "
        "your own turn")
    _play_until(s, lambda: s.state.current_player == 0)
    assert s.analysis_position().current_player == 0
    taluva = GameSession("taluva", ["human", "random"], {}, seed=1)  # nothing hidden
    _play_until(taluva, lambda: taluva.state.current_player == 1)
    assert taluva.analysis_position().current_player == 1


def test_a_hidden_information_search_reports_progress_and_stops_on_cancel() -> None:
    """Thurn und Taxis positions are searched on one determinization, in chunks, so a cancel
    stops them (they used to run whole)."""
    import threading

    from taluva_ai.agents import make_agent
    from taluva_ai.web import analysis

    s = GameSession("thurn_und_taxis", ["human", "random"], {}, seed=1)
    state = s.analysis_position()
    seen: list[int] = []
    cancel = threading.Event()

    def progress(done: int) -> None:
        seen.append(done)
        cancel.set()

    agent = make_agent("mcts:sims=5000", seed=0)
    assert search_position(agent, state, cancel=cancel, on_sims=progress) is None
    assert seen == [analysis.CHUNK_SIMS]
    agent = make_agent("mcts:sims=30", seed=0)
    action, values = search_position(agent, state)
    assert action in state.legal_actions() and values[0] is not None
