"""The OpenSpiel games against a hostile or careless user (issue 49; docs/openspiel.md):
serialized states are text, loaded by replaying their history and never unpickled, and crafted
strings are refused in one line; a resample carries only the sampled hidden cards and tiles, in
its history, strings and tensors; information-state strings are cached; tree reuse through
``AgentBot``; ``chance_outcomes`` away from a chance node. Run when open_spiel is installed."""

from __future__ import annotations

import base64
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import taluva_ai.openspiel as tos  # noqa: E402
from taluva_ai.protocol import make_game  # noqa: E402
from tests.helpers import play_openspiel  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "openspiel.md"


_play = play_openspiel


def _same_state(a, b, players: int) -> None:
    assert str(a) == str(b)
    assert a.history() == b.history() and a.move_number() == b.move_number()
    assert a.current_player() == b.current_player()
    for p in range(players):
        assert a.information_state_string(p) == b.information_state_string(p)
        assert a.observation_string(p) == b.observation_string(p)
        assert a.observation_tensor(p) == b.observation_tensor(p)


# -- serialization ------------------------------------------------------------------------------


@pytest.mark.parametrize("game_string, steps", [
    ("python_taluva(tiles_per_player=4)", 0),  # the first chance node
    ("python_taluva(tiles_per_player=4)", 7),  # mid-game, at a decision
    ("python_taluva(tiles_per_player=4)", 99),  # the end
    ("python_taluva(players=3,tile_preview=True,tiles_per_player=4)", 5),
    ("python_taluva(players=3,tile_preview=True,tiles_per_player=4)", 9),
    ("python_thurn_und_taxis(max_rounds=4)", 0),
    ("python_thurn_und_taxis(max_rounds=4)", 2),  # dealing the display: chance nodes
    ("python_thurn_und_taxis(max_rounds=4)", 41),
    ("python_thurn_und_taxis(players=3,max_rounds=3)", 120),
])
def test_serialize_round_trip(game_string, steps):
    game = pyspiel.load_game(game_string)
    state = _play(game.new_initial_state(), steps, seed=steps)
    text = state.serialize()
    assert "__dict__" not in text
    back = game.deserialize_state(text)
    _same_state(back, state, game.num_players())
    assert back.serialize() == text
    # the copy plays on exactly as the original
    _play(back, 15, seed=1)
    _play(state, 15, seed=1)
    _same_state(back, state, game.num_players())


def test_chance_node_round_trip_in_both_games():
    for game_string in ("python_taluva(tiles_per_player=3)", "python_thurn_und_taxis"):
        game = pyspiel.load_game(game_string)
        state = _play(game.new_initial_state(), 3)
        while not state.is_chance_node():
            _play(state, 1, seed=len(state.history()))
        back = game.deserialize_state(state.serialize())
        assert back.is_chance_node() and back.chance_outcomes() == state.chance_outcomes()
        _same_state(back, state, game.num_players())


def test_state_from_engine_round_trip():
    """A state made from an engine position starts its history there: the text carries that
    start, so it round-trips too."""
    engine = make_game("thurn_und_taxis", max_rounds=4).new_initial_state(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        if engine.current_player < 0:
            engine.draw()
        else:
            engine.apply(int(rng.choice(engine.legal_actions())))
    game = tos.openspiel_game(engine.game)
    state = _play(game.state_from_engine(engine), 12)
    assert len(state.history()) == 12
    back = game.deserialize_state(state.serialize())
    _same_state(back, state, 2)


def test_module_serialize_game_and_state():
    game = pyspiel.load_game("python_thurn_und_taxis(max_rounds=3)")
    state = _play(game.new_initial_state(), 25)
    text = tos.serialize_game_and_state(game, state)
    g2, s2 = tos.deserialize_game_and_state(text)
    assert str(g2) == str(game)
    _same_state(s2, state, 2)
    # OpenSpiel's own (C++) functions still work on these games
    _, s3 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    _same_state(s3, state, 2)
    with pytest.raises(tos.SerializedStateError, match="not python_taluva or python_thurn_und"):
        tos.deserialize_game_and_state(text.replace("python_thurn_und_taxis(", "kuhn_poker("))


@pytest.mark.parametrize(("old", "new", "reason"), [
    (",players=2,", ",players=9,", "num_players must be 2, 3 or 4, got 9"),
    ("(board_radius=32,", "(board_radius=-3,", "board_radius must be an integer in 4..100, got -3"),
    (",players=2,", ",players=x,", "Wrong type for parameter players. Expected type: kInt, got "
     "kString with x"),
    (",players=2,", ",players=2,bogus=1,", "Unknown parameter 'bogus'. Available parameters are: "
     "board_radius, destroyed_huts_return, early_victory_kinds, new_hut_isolated, "
     "no_lake_building, players, ranked, tiebreak_towers_first, tile_preview, tiles_per_player"),
])
def test_a_bad_game_parameter_of_a_serialized_game_is_a_serialized_state_error(
        old: str, new: str, reason: str) -> None:
    """A parameter of [Game] that the rules refuse (a RuleError before) or OpenSpiel refuses
    (a bare SpielError): the adapter's SerializedStateError, naming the parameter."""
    game = pyspiel.load_game("python_taluva")
    text = tos.serialize_game_and_state(game, game.new_initial_state())
    assert text.count(old) == 1
    with pytest.raises(tos.SerializedStateError) as info:
        tos.deserialize_game_and_state(text.replace(old, new))
    assert isinstance(info.value, pyspiel.SpielError)
    assert str(info.value) == \
        f"serialized game and state refused: a parameter of [Game] python_taluva: {reason}"


class _Marker:
    """Unpickling this writes a file (what a crafted pickle could do, harmlessly)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.write_text, (Path(self.path), "pwned"))


def _pickle_form(path: Path) -> str:
    payload = base64.b64encode(pickle.dumps({"_core": _Marker(str(path))})).decode()
    return f"history=\nmove_number=0\n__dict__={payload}"


def test_a_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "marker.txt"
    for game_string in ("python_taluva", "python_thurn_und_taxis"):
        game = pyspiel.load_game(game_string)
        for text in (_pickle_form(marker),
                     # OpenSpiel's own form of a real state
                     pyspiel.serialize_game_and_state(game, game.new_initial_state())
                     .split("[State]\n", 1)[1]):
            with pytest.raises(tos.SerializedStateError, match="__dict__=") as info:
                game.deserialize_state(text)
            assert isinstance(info.value, pyspiel.SpielError)
            assert isinstance(info.value, ValueError)
            assert "\n" not in str(info.value)
    assert not marker.exists()


def _valid(game_string: str = "python_thurn_und_taxis(max_rounds=3)", steps: int = 20):
    game = pyspiel.load_game(game_string)
    state = _play(game.new_initial_state(), steps)
    return game, state.serialize().split("\n")


@pytest.mark.parametrize("edit, message", [
    (lambda L: ["history=-1:999999999,0:-77", *L[1:]],
     r"history item 1: action 999999999 is outside 0\.\.21$"),
    (lambda L: ["history=-1:3,0:-77", *L[1:]], r"history item 2: action -77 is outside"),
    (lambda L: ["history=7:1", *L[1:]], r"history item 1: player 7 is not -1 \(chance\)"),
    (lambda L: ["history=-1:3,x", *L[1:]], r"history item 2: 'x' is not 'player:action'$"),
    (lambda L: ["history=-1:" + "9" * 400, *L[1:]], r"history item 1: '-1:9+\.\.\.' is not"),
    (lambda L: [L[0], "move_number=19", *L[2:]], r"move_number: 19, but the history has 20"),
    (lambda L: [L[0], "move_number=-20", *L[2:]], r"move_number: '-20' is not a count$"),
    (lambda L: [L[0], "move_number=2٠", *L[2:]], r"move_number: '2\u0660' is not a count"),
    (lambda L: [L[0], "move_number=1e9", *L[2:]], r"move_number: '1e9' is not a count$"),
    (lambda L: [L[0].replace("history=", "history=0:3,", 1), L[1].replace("20", "21"), *L[2:]],
     r"history item 1: 0:3, but chance is to move$"),
    (lambda L: [L[0].rsplit(",", 1)[0], "move_number=19", *L[2:3], L[3]],
     r"position: not the position the history leads to from start$"),
    (lambda L: [*L[:2], "start=tnt=1;players=9", *L[3:]], r"^python_thurn_und_taxis: "
     r"serialized state refused: start: "),
    (lambda L: L[:3], r"expected 4 lines \(history=, move_number=, start=, position=\), got 3"),
    (lambda L: [*L, "extra=1"], r"expected 4 lines"),
    (lambda L: [L[1], L[0], *L[2:]], r"line 1: expected 'history=...', got 'move_number=20'$"),
])
def test_crafted_strings_are_refused_in_one_line(edit, message):
    game, lines = _valid()
    with pytest.raises(tos.SerializedStateError, match=message) as info:
        game.deserialize_state("\n".join(edit(lines)))
    text = str(info.value)
    assert "\n" not in text and len(text) < 400
    assert text.startswith("python_thurn_und_taxis: serialized state refused: ")


def test_illegal_history_and_odd_inputs_are_refused():
    game, lines = _valid("python_taluva(tiles_per_player=3)", 6)
    # a placement id that is not legal here (the engine's message, clipped)
    bad = lines[0].replace("history=", "history=", 1).split(",")
    bad[1] = bad[1].split(":")[0] + ":5"
    with pytest.raises(tos.SerializedStateError,
                       match=r"history item 2: illegal action tile@0,-32:NE: the first tile's"):
        game.deserialize_state("\n".join([",".join(bad), *lines[1:]]))
    with pytest.raises(tos.SerializedStateError, match="expected a str, got bytes"):
        game.deserialize_state(b"history=")
    with pytest.raises(tos.SerializedStateError, match="characters, more than"):
        game.deserialize_state("x" * (tos.MAX_SERIALIZED_CHARS + 1))
    too_long = "history=" + ",".join(["-1:0"] * 1000)
    with pytest.raises(tos.SerializedStateError, match=r"1000 actions, more than a game has"):
        game.deserialize_state("\n".join([too_long, *lines[1:]]))


# -- resampling ----------------------------------------------------------------------------------


def _draws_seen(state, seat: int) -> list[str]:
    """The draws in the first line of ``seat``'s information state string (``?``: one the
    seat has not seen)."""
    return state.information_state_string(seat).split("\n")[0].split(" ")[2:]


def _assert_seat_knows_the_same(a, b, seat: int) -> None:
    """``seat`` cannot tell ``a`` from ``b``: its information state strings and observation
    tensors are equal."""
    assert a.information_state_string(seat) == b.information_state_string(seat)
    assert a.observation_tensor(seat) == b.observation_tensor(seat)


def _tnt_with_hidden_cards(seed: int = 5):
    """A Thurn und Taxis state at a decision where seat 0 has not seen at least three cards
    that seat 1 drew from the supply."""
    game = pyspiel.load_game("python_thurn_und_taxis(max_rounds=6)")
    for attempt in range(20):
        state = game.new_initial_state()
        rng = np.random.default_rng([seed, attempt])
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            if _draws_seen(state, 0).count("?") >= 3:
                return game, state
            state.apply_action(int(rng.choice(state.legal_actions())))
    raise AssertionError("no such state in 20 games")


def test_resample_history_and_strings_hold_only_sampled_cards():
    game, state = _tnt_with_hidden_cards(seed=2)
    truth1 = state.information_state_string(1)
    hidden = [i for i, t in enumerate(_draws_seen(state, 0)) if t == "?"]
    sampler = np.random.default_rng(0).random
    other_deals = 0
    for _ in range(12):
        other = state.resample_from_infostate(0, sampler)
        # seat 0 knows the same; its strings and tensors are unchanged
        _assert_seat_knows_the_same(other, state, 0)
        # the history holds the sampled deal: replayed from the initial state it leads to the
        # resample, not to the true state
        replay = game.new_initial_state()
        for a in other.history():
            replay.apply_action(a)
        # the same position; only the seed of later draws differs: the resample's own (the
        # true one would replay the true deal from the public line)
        assert re.sub(r";seed=\d+;", ";", str(replay)) == re.sub(r";seed=\d+;", ";", str(other))
        assert re.search(r";seed=(\d+);", str(other)).group(1) != \
            re.search(r";seed=(\d+);", str(state)).group(1)
        back = game.deserialize_state(other.serialize())
        assert str(back) == str(other) and back.history() == other.history()
        # seat 1's string shows the sampled cards, as its tensor does
        tokens1 = _draws_seen(other, 1)
        for i in hidden:
            assert tokens1[i] == other.action_to_string(-1, other.history()[i])
        if str(other) != str(state):
            other_deals += 1
            assert other.history() != state.history()
            assert other.information_state_string(1) != truth1
            assert other.observation_tensor(1) != state.observation_tensor(1)
    assert other_deals >= 6  # most resamples deal other cards


def test_resample_depends_only_on_what_the_player_knows():
    """Two states that differ only in what seat 0 has not seen give the same resample from the
    same draw of the sampler: nothing of the true deal reaches it."""
    _, state = _tnt_with_hidden_cards(seed=5)
    sampler = np.random.default_rng(1).random
    twins = [state]
    while len(twins) < 3:
        twin = state.resample_from_infostate(0, sampler)
        if str(twin) != str(state):
            twins.append(twin)
    for u in (0.1, 0.37, 0.9):
        out = [s.resample_from_infostate(0, lambda u=u: u) for s in twins]
        assert len({str(o) for o in out}) == 1
        assert len({tuple(o.history()) for o in out}) == 1
        assert len({o.information_state_string(1) for o in out}) == 1


def test_resample_of_taluva_preview_redraws_held_tiles():
    from taluva_ai.games.taluva.state import P_HAND

    game = pyspiel.load_game("python_taluva(players=3,tile_preview=True,tiles_per_player=6)")
    state = _play(game.new_initial_state(), 12, seed=4)  # 3 draws, then 3 turns of 3 steps
    assert state.current_player() == 0  # seats 1 and 2 hold tiles seat 0 has not seen
    view0 = _draws_seen(state, 0)
    true_held = {q: int(state.engine_state.players[q, P_HAND]) for q in (1, 2)}
    sampler = np.random.default_rng(2).random
    redrawn = 0
    for _ in range(15):
        other = state.resample_from_infostate(0, sampler)
        _assert_seat_knows_the_same(other, state, 0)
        _same_state(game.deserialize_state(other.serialize()), other, 3)
        for q in (1, 2):
            held = int(other.engine_state.players[q, P_HAND])
            view = _draws_seen(other, q)
            # the seat's last draw unseen by seat 0: in the history and in its own string, the
            # tile it now holds in the resample
            last = max(i for i, t in enumerate(view) if view0[i] == "?" and t != "?")
            assert other.history()[last] == held
            assert view[last] == other.action_to_string(-1, held)
            if held != true_held[q]:
                redrawn += 1
                assert other.information_state_string(q) != state.information_state_string(q)
                assert other.observation_string(q) != state.observation_string(q)
    assert redrawn > 0


@pytest.mark.parametrize("name, options, steps", [
    ("thurn_und_taxis", {"max_rounds": 20}, 80),
    ("taluva", {"tile_preview": True, "num_players": 4, "tiles_per_player": 6}, 16),
])
def test_resample_of_a_state_from_an_engine_position(name, options, steps):
    """A state made by ``state_from_engine`` starts where other seats already hold cards or
    tiles seat 0 has not seen: they are dealt again in the resample's start, which stays a
    valid position (the resample round-trips)."""
    engine = make_game(name, **options).new_initial_state(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        if engine.current_player < 0:
            engine.draw()
        else:
            engine.apply(int(rng.choice(engine.legal_actions())))
    game = tos.openspiel_game(engine.game)
    n = game.num_players()
    sampler = np.random.default_rng(3).random
    other_deals = 0
    for more in (0, 3, 20):
        state = _play(game.state_from_engine(engine), more, seed=more)
        for _ in range(4):
            other = state.resample_from_infostate(0, sampler)
            _assert_seat_knows_the_same(other, state, 0)
            _same_state(game.deserialize_state(other.serialize()), other, n)
            other_deals += str(other) != str(state)
    assert other_deals >= 6


# -- information-state cache --------------------------------------------------------------------


def test_information_state_strings_are_cached_per_position_and_seat():
    game = pyspiel.load_game("python_thurn_und_taxis(max_rounds=20)")
    state = _play(game.new_initial_state(), 60)
    assert not state.is_terminal()
    first = state.information_state_text(0)
    assert state.information_state_text(0) is first  # cached
    assert state.observation_text(1) is state.observation_text(1)
    assert state.information_state_string(0) == first
    clone = state.clone()
    _play(clone, 1, seed=3)  # a new position: the clone's strings are its own
    assert clone.information_state_text(0) != first
    assert state.information_state_text(0) is first
    # built step by step, the strings equal those of a state built in one go
    fresh = game.deserialize_state(clone.serialize())
    for p in range(2):
        assert fresh.information_state_string(p) == clone.information_state_string(p)


# -- tree reuse through AgentBot ----------------------------------------------------------------


def test_agent_bot_reuses_the_mcts_tree():
    game = pyspiel.load_game("python_taluva(tiles_per_player=3)")
    state = _play(game.new_initial_state(), 1)
    bot = tos.AgentBot("mcts:sims=40,reuse_tree=true", player_id=0, seed=1)
    bot.restart_at(state)
    state.apply_action(bot.step(state))
    assert bot.agent.stats()["simulations"] == 40
    # the build step of the same turn: the subtree of the placement is kept
    assert state.current_player() == 0
    state.apply_action(bot.step(state))
    assert bot.agent.stats()["simulations"] > 40


# -- chance_outcomes away from a chance node ----------------------------------------------------


@pytest.mark.parametrize("game_string", ["python_taluva(tiles_per_player=2)",
                                         "python_thurn_und_taxis(max_rounds=2)"])
def test_chance_outcomes_at_a_decision_is_a_spiel_error(game_string):
    state = _play(pyspiel.load_game(game_string).new_initial_state(), 1)
    while state.is_chance_node():
        _play(state, 1)
    with pytest.raises(pyspiel.SpielError, match=r"^chance_outcomes\(\): not a chance node "
                                                 r"\(seat \d is to move\)$"):
        state.chance_outcomes()
    _play(state, 10_000)
    assert state.is_terminal()
    with pytest.raises(pyspiel.SpielError, match=r"not a chance node \(the game is over\)$"):
        state.chance_outcomes()


def test_docs_warn_about_the_cpp_bots_and_name_the_refusals():
    text = DOCS.read_text(encoding="utf-8")
    assert "pyspiel.MCTSBot" in text and "open_spiel.python.algorithms.mcts" in text
    assert "SerializedStateError" in text and "deserialize_game_and_state" in text


def test_the_cached_information_state_strings_hold_one_text_per_seat() -> None:
    """Asking every seat's string after every action keeps one cached text per seat on the
    line, not one per step (which held the whole line at every step: 702 MB for a 4-player
    Thurn und Taxis game), and every string still equals one built from scratch."""
    game = pyspiel.load_game("python_thurn_und_taxis(players=3)")
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    for _ in range(300):
        if state.is_terminal():
            break
        for p in range(3):
            state.information_state_string(p)
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    texts = [step.texts for step in tos._steps(state._core.log) if step.texts]
    assert sum(len(t) for t in texts) <= 3  # at most a seat's text each, all on the newest
    fresh = game.deserialize_state(state.serialize())
    for p in range(3):
        assert state.information_state_string(p) == fresh.information_state_string(p)
