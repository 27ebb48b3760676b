"""The solo variant through the tools: notation, records, the CLI (play --solo, bench --solo),
the players (greedy one-ply values, MCTS with the score's normalization) and the ladder
script's smoke run."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from taluva_ai.agents import make_agent
from taluva_ai.cli import main
from taluva_ai.games.taluva import Step
from taluva_ai.games.taluva.actions import SOLO_OPTIONS, Action, ActionKind, decode, encode
from taluva_ai.records import replay_record
from taluva_ai.tournament import play_game
from tests.helpers import random_step
from tests.solo_helpers import solo_game, start, tile_at

GAME = solo_game()


def test_solo_notation_round_trips():
    h = GAME.num_cells
    for k, (kind, option) in enumerate(SOLO_OPTIONS):
        a = Action(kind, option=option)
        assert Action.parse(str(a)) == a
        assert encode(a, GAME.board) == 14 * h + k
        assert decode(14 * h + k, GAME.board, solo=True) == a
        assert GAME.action_to_string(14 * h + k) == str(a)
    with pytest.raises(Exception, match="action ids run from 0"):
        decode(14 * h, GAME.board)  # not in a multiplayer game
    with pytest.raises(Exception, match="option is one of"):
        Action(ActionKind.BOX, option="pile")


def test_records_of_solo_games_replay(tmp_path: Path):
    path = tmp_path / "solo.jsonl"
    res = play_game(GAME, [make_agent("greedy")], 5, record_path=path)
    state = replay_record(path, seeded_draws=True)
    assert state.is_terminal() and state.score() == res.returns[0]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["rules"]["solo"] is True
    assert any(x.get("action", "").startswith("bonus:") for x in lines)


def test_greedy_values_are_running_scores_after_one_ply():
    s = start(GAME, tile="RS")
    ids, vals = s.heuristic_values()
    assert ids.tolist() == s.legal_actions().tolist()
    a = tile_at("RS", (0, -2), (-1, -2), (-1, -1))  # class 3: a bonus tile counts as taken
    j = ids.tolist().index(s.parse_action(a))
    c = s.clone()
    c.apply(a)
    assert c.step is Step.BONUS
    c.apply("bonus:faceup")  # the face-up tile is on offer: taken from the bonus stack
    assert vals[j] == c.score()
    b = s.clone()
    b.apply(a)
    ids2, vals2 = b.heuristic_values()
    assert dict(zip((b.action_to_string(int(x)) for x in ids2), vals2.tolist(), strict=True)) \
        == {"bonus:pile": b.score() + 1, "bonus:faceup": b.score() + 2, "bonus:stop": b.score()}


def test_mcts_plays_solo_with_scores_as_values():
    s = start(GAME, tile="RS")
    agent = make_agent("mcts:sims=30,rollout=greedy,prior_temperature=1", seed=1)
    a = agent.act(s)
    assert a in set(s.legal_actions().tolist())
    st = agent.stats()
    assert st["simulations"] == 30
    assert -60 < st["root_value"] < 100  # a score (value_normalization undone), not +-1
    assert s.value_normalization() == (40.0, 20.0)
    py = make_agent("mcts:sims=30,rollout=greedy,prior_temperature=1,compiled=false", seed=1)
    assert py.act(s) in set(s.legal_actions().tolist())
    assert -60 < py.stats()["root_value"] < 100


def test_greedy_rollout_policy_and_its_priors():
    s = start(GAME, tile="RS")
    ids, vals = s.prior_values()
    assert ids.tolist() == s.legal_actions().tolist()
    j = ids.tolist().index(s.parse_action(tile_at("RS", (0, -2), (-1, -2), (-1, -1))))
    assert vals[j] == 2.0  # class 3: a bonus tile
    scores = [GAME.new_initial_state(seed=i).rollout("greedy", seed=i)[0] for i in range(3)]
    assert all(isinstance(x, float) for x in scores)
    assert GAME.new_initial_state(seed=0).rollout("greedy", seed=4)[0] == \
        GAME.new_initial_state(seed=0).rollout("greedy", seed=4)[0]


def test_play_solo_show_prints_the_breakdown(capsys: pytest.CaptureFixture[str]):
    assert main(["play", "--solo", "--players", "greedy", "--seed", "3", "--show"]) == 0
    out = capsys.readouterr().out
    assert "taluva: solo, seed 3" in out and "bonus:" in out
    table = out[out.index("score (docs/solo_rules.md, section 5):"):].splitlines()
    assert len(table) == 1 + 13 + 1 + 1  # title, 13 lines, total, result
    points = [int(line.split()[-1]) for line in table[1:14]]
    total_line = table[14].split()
    assert total_line[0] == "total" and int(total_line[1]) == sum(points)
    assert table[15].startswith("result: ")


def test_play_solo_bad_arguments(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as e:
        main(["play", "--solo", "--players", "greedy", "random"])
    assert e.value.code == 2 and "one player" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["play", "--players", "greedy", "random", "--solo-option", "contacts=hexes"])
    assert e.value.code == 2 and "needs --solo" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["play", "--solo", "--players", "greedy", "--solo-option", "contacts=sides"])
    assert e.value.code == 2 and "contacts must be one of" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["play", "--solo", "--players", "greedy", "--solo-option", "num_players=2"])
    assert e.value.code == 2 and "'num_players' is not a solo option; known: bonus_any_source" \
        in capsys.readouterr().err
    assert main(["play", "--solo", "--players", "random", "--seed", "1", "--solo-option",
                 "pattern_overlap=disjoint", "--solo-option", "volcano_in_T=false"]) == 0


def test_bench_solo_json(capsys: pytest.CaptureFixture[str]):
    assert main(["bench", "--solo", "--json", "--games", "3", "--repeats", "1"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) == {"solo", "machine"}
    assert res["solo"]["games"] == 3 and res["solo"]["games_per_s"] > 0
    assert res["solo"]["decisions_per_game"] > 10


def test_solo_ladder_smoke(tmp_path: Path):
    pytest.importorskip("matplotlib")
    from taluva_ai import solo_ladder as ladder

    cfg = dataclasses.replace(ladder.SMOKE, out=str(tmp_path))
    table = ladder.run(cfg)
    assert list(table["agents"]) == cfg.agents
    for a in table["agents"].values():
        assert a["games"] == 2 and a["ci95"][0] <= a["mean"] <= a["ci95"][1]
        assert sum(a["bands"].values()) == pytest.approx(1.0)
        assert sum(a["lines"].values()) == pytest.approx(a["mean"])
    assert (tmp_path / "solo_ladder.png").stat().st_size > 0
    # resumable: a rerun plays nothing new and gives the same table
    again = ladder.run(cfg)
    assert again == table
    rows = (tmp_path / "games" / "greedy.jsonl").read_text().splitlines()
    assert len(rows) == 2
    with pytest.raises(ValueError, match="a ladder with another seed"):
        ladder.run(dataclasses.replace(cfg, seed=5))
    for bad, words in [(dataclasses.replace(cfg, games=0), "games and concurrency must be"),
                       (dataclasses.replace(cfg, agents=["bogus"]), "unknown agent"),
                       (dataclasses.replace(cfg, out=str(tmp_path / "config.json")),
                        "is a file")]:
        with pytest.raises(ValueError, match=words):
            ladder.run(bad)
    assert not (tmp_path / "games" / "bogus.jsonl").exists()
    # a line cut short by a kill is dropped on resume; a bad line is named
    games = tmp_path / "games" / "random.jsonl"
    games.write_text(games.read_text() + '{"seed": 3, "sco')
    assert ladder.run(cfg) == table
    games.write_text(games.read_text() + "oops\n")
    with pytest.raises(ValueError, match=r"random.jsonl, line 3: not a solo game result"):
        ladder.run(cfg)
    games.write_text("\n".join(games.read_text().splitlines()[:2]) + "\n")
    # another agent extends the ladder: only its games are played
    more = ladder.run(dataclasses.replace(cfg, agents=[*cfg.agents, "greedy:epsilon=0.5"]))
    assert list(more["agents"]) == [*cfg.agents, "greedy:epsilon=0.5"]
    assert {a: more["agents"][a] for a in cfg.agents} == table["agents"]
    assert len((tmp_path / "games" / "greedy.jsonl").read_text().splitlines()) == 2


def test_same_seed_same_solo_game_for_every_player():
    for spec in ("random", "greedy"):
        a = play_game(GAME, [make_agent(spec)], 9)
        b = play_game(GAME, [make_agent(spec)], 9)
        assert a.returns == b.returns and a.plies == b.plies
    assert np.isfinite(a.returns[0])


def test_position_strings_of_solo_games_round_trip():
    from taluva_ai.errors import PositionError
    from taluva_ai.games.taluva.position import parse_position

    rng = np.random.default_rng(2)
    s = GAME.new_initial_state(seed=2)
    checked = 0
    while not s.is_terminal():
        random_step(s, rng)
        text = s.to_position_string()
        t = parse_position(GAME, text)
        assert t.to_position_string() == text
        assert np.array_equal(t.legal_actions(), s.legal_actions())
        checked += 1
    assert checked > 20 and ";solo=" in text
    bad = text.replace(";solo=", ";solo=9")  # the draw pile count off
    with pytest.raises(PositionError):
        parse_position(GAME, bad)
    # each counter has its range (a huge "tiles under the pile" once corrupted memory)
    head, counters = text.rsplit(";solo=", 1)
    for j, value, words in [(11, 100000, "counter 12 (tiles under the pile)"),
                            (2, 99, "counter 3 (face-up tile)"),
                            (4, 4, "counter 5 (tiles this turn)")]:
        xs = counters.split(".")
        xs[j] = str(value)
        with pytest.raises(PositionError, match=re.escape(words)):
            parse_position(GAME, head + ";solo=" + ".".join(xs))
    mid = parse_position(GAME, text)  # an early position: the pile is not empty
    assert mid.to_position_string() == text


def test_solo_paired_head_to_head():
    from taluva_ai.solo_ladder import paired

    a = [{"seed": s, "score": x} for s, x in [(0, 40), (1, 35), (2, 50), (3, 41)]]
    b = [{"seed": s, "score": x} for s, x in [(0, 38), (1, 35), (2, 52), (3, 30)]]
    assert paired(a, b) == {"games": 4, "wins": 2, "draws": 1, "losses": 1, "score": 0.625}
    assert paired(b, a)["score"] == 0.375
    with pytest.raises(ValueError, match="same seeds"):
        paired(a, b[::-1])
