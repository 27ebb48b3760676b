"""Thurn und Taxis notation, position strings, game records and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.errors import (
    ActionOutOfRangeError,
    IllegalActionError,
    NotationError,
    PositionError,
    RecordError,
    WrongStepError,
)
from taluva_ai.games.thurn_und_taxis import actions as A
from taluva_ai.records import replay_record
from taluva_ai.tournament import make_agent, play_game
from tests.tnt_helpers import scenario

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "tnt_golden_greedy_random_seed7.jsonl"


def test_every_action_id_round_trips_through_its_notation() -> None:
    game = make_game("thurn_und_taxis")
    texts = set()
    for a in range(A.NUM_ACTIONS):
        text = A.action_to_string(a)
        texts.add(text)
        assert A.parse(text) == ("action", a)
        assert game.string_to_action(text) == a  # type: ignore[attr-defined]
        assert A.parse("  " + text.upper() + " ") == ("action", a)
    assert len(texts) == A.NUM_ACTIONS
    for c in range(22):
        assert A.parse(A.chance_to_string(c)) == ("chance", c)
    assert A.action_to_string(A.A_EXTEND) == "extend:ingolstadt@augsburg"
    assert A.parse("extend:wuerzburg@stuttgart")[1] - A.A_EXTEND >= 0


@pytest.mark.parametrize(("text", "match"), [
    ("", "unknown action kind"), ("take", "needs an argument"), ("take:paris", "not a city"),
    ("extend:ulm", "expected extend:<city>@<end city>"), ("extend:lodz@ulm", "no road joins"),
    ("pass:now", "takes no argument"), ("close:nowhere", "neither per_province"),
    ("draw:ulm", "unknown action kind"), ("deal:", "needs an argument"),
])
def test_malformed_notation_is_refused_with_what_is_expected(text: str, match: str) -> None:
    with pytest.raises(NotationError, match=match):
        A.parse(text)


def test_bad_input_raises_its_error_and_leaves_the_state_untouched() -> None:
    s = scenario(routes={0: ["carlsruhe", "stuttgart"]}, hands={0: ["nuernberg", "lodz"]})
    before = s.to_position_string()
    cases: list[tuple[object, type[Exception], str]] = [
        ("extend:lodz@stuttgart", NotationError, "no road"),
        ("extend:ulm@stuttgart", IllegalActionError, "no ulm card in hand"),
        ("start:lodz", IllegalActionError, "the player has a route"),
        ("take:ulm", WrongStepError, "during the play step"),
        ("house:ulm", WrongStepError, "during the play step"),
        ("deal:ulm", WrongStepError, "chance outcome"),
        (-1, ActionOutOfRangeError, "0 to 326"),
        (327, ActionOutOfRangeError, "0 to 326"),
        (True, NotationError, "int id or notation"),
        (3.0, NotationError, "int id or notation"),
        ("bogus", NotationError, "unknown action kind"),
    ]
    for action, err, match in cases:
        with pytest.raises(err, match=match):
            s.apply(action)  # type: ignore[arg-type]
        assert s.to_position_string() == before, action
    assert s.history() == []


def test_chance_nodes_refuse_actions_and_missing_cards() -> None:
    s = make_game("thurn_und_taxis").new_initial_state(seed=1)
    with pytest.raises(WrongStepError, match="chance node"):
        s.apply("take:supply")
    with pytest.raises(ActionOutOfRangeError):
        s.apply(22)
    s2 = scenario(step="draw", hands={0: ["ulm"]}, display=["lodz"])
    s2.apply("take:supply")
    s2.cards[0, 9] = 0  # no lodz in the supply
    s2.cards[1, 9] += 1
    with pytest.raises(IllegalActionError, match="no lodz card is left in the supply"):
        s2.apply("deal:lodz")
    done = scenario(step="terminal")
    with pytest.raises(WrongStepError, match="over"):
        done.apply("pass")
    with pytest.raises(WrongStepError, match="no chance node"):
        scenario().draw()


def test_undo_restores_every_step() -> None:
    s = make_game("thurn_und_taxis").new_initial_state(seed=4)
    rng = np.random.default_rng(4)
    seen = [s.to_position_string()]
    for _ in range(120):
        if s.current_player < 0:
            s.draw()
        else:
            legal = s.legal_actions()
            s.apply(int(legal[rng.integers(legal.size)]))
        seen.append(s.to_position_string())
    for want in reversed(seen[:-1]):
        s.undo()
        assert s.to_position_string() == want
    with pytest.raises(IndexError):
        s.undo()


def test_position_strings_round_trip_along_games() -> None:
    for n in (2, 3, 4):
        game = make_game("thurn_und_taxis", num_players=n)
        s = game.new_initial_state(seed=n)
        rng = np.random.default_rng(n)
        while not s.is_terminal() and s.ply < 400:
            text = s.to_position_string()
            back = game.state_from_position(text)  # type: ignore[attr-defined]
            assert back.to_position_string() == text
            assert np.array_equal(back.legal_actions(), s.legal_actions())
            if s.current_player < 0:
                s.draw()
            else:
                legal = s.legal_actions()
                s.apply(int(legal[rng.integers(legal.size)]))


def test_malformed_position_strings_name_the_field() -> None:
    game = make_game("thurn_und_taxis")
    text = game.new_initial_state(seed=1).to_position_string()
    bad = {
        "players": text.replace("players=2", "players=3"),
        "supply": text.replace("supply=3333", "supply=2333"),
        "step": text.replace("step=chance", "step=dance"),
        "routes": text.replace("routes=/", "routes=lodz-ulm/"),
        "tnt": text.replace("tnt=1", "tnt=9"),
        "seed": ";".join(x for x in text.split(";") if not x.startswith("seed=")),
    }
    for field, t in bad.items():
        with pytest.raises(PositionError) as e:
            game.state_from_position(t)  # type: ignore[attr-defined]
        assert e.value.field == field, (field, str(e.value))


def _golden_record(path: Path) -> None:
    game = make_game("thurn_und_taxis")
    play_game(game, [make_agent("greedy"), make_agent("random")], 7, record_path=path)


def test_a_played_game_replays_and_the_same_seed_gives_the_same_record(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    _golden_record(path)
    state = replay_record(path, seeded_draws=True)
    assert state.is_terminal()
    assert path.read_bytes() == GOLDEN.read_bytes()


def test_golden_record_replays_to_its_result() -> None:
    lines = GOLDEN.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["game"] == "thurn_und_taxis" and head["players"] == ["greedy", "random"]
    result = json.loads(lines[-1])
    state = replay_record(GOLDEN)
    assert result["winners"] == state.winners() == [0]  # type: ignore[attr-defined]
    assert result["end_reason"] in ("carriage_7", "last_house")


def _edit(tmp_path: Path, lineno: int, action: str) -> Path:
    lines = GOLDEN.read_text().splitlines()
    obj = json.loads(lines[lineno - 1])
    obj["action"] = action
    lines[lineno - 1] = json.dumps(obj)
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_bad_records_name_the_line_and_field(tmp_path: Path) -> None:
    lines = GOLDEN.read_text().splitlines()
    chance_line = next(i for i, t in enumerate(lines, 1) if '"chance"' in t)
    move_line = next(i for i, t in enumerate(lines, 1) if '"player": 0' in t)
    for line, action, match in (
        (move_line, "take:paris", "not a city"),
        (move_line, "house:ulm", "not legal here|during the"),
        (move_line, "deal:ulm", "chance outcomes belong only at chance nodes"),
        (chance_line, "take:supply", "expected a chance outcome"),
    ):
        with pytest.raises(RecordError) as e:
            replay_record(_edit(tmp_path, line, action))
        assert e.value.line == line and e.value.field == "action"
        assert e.match(match)
