"""``name=`` labels in agent specs (cutechess-cli's ``name=``): two copies of one agent are two
specs, so a candidate can meet two or three copies of one opponent at a 3- or 4-player table
(the measure of the 3- and 4-player recipes, docs/alphazero.md)."""

from __future__ import annotations

import json

import pytest

from taluva_ai.agents import make_agent, spec_key


def test_a_label_is_not_passed_to_the_agent_and_makes_another_spec() -> None:
    a = make_agent("greedy", seed=3)
    b = make_agent("greedy:name=copy-2", seed=3)
    assert b.name == "greedy:name=copy-2" and a.name == "greedy"
    assert spec_key("greedy") != spec_key("greedy:name=copy-2")
    assert make_agent("mcts:sims=7,name=m.1", seed=0).config.sims == 7


@pytest.mark.parametrize("spec", ["greedy:name=", "greedy:name=a b", "greedy:name=" + "x" * 41,
                                  "mcts:sims=4,name=a/b", "greedy:name=3"])
def test_a_bad_label_is_refused_in_one_line(spec: str) -> None:
    with pytest.raises(ValueError, match=r"^agent .*: name=.* must be a label of 1 to 40 "
                                         r"letters, digits, '\.', '_' or '-'$"):
        make_agent(spec, seed=0)


def test_a_candidate_meets_two_copies_of_one_opponent_at_a_3_player_table(tmp_path) -> None:
    from taluva_ai.tournament import run_tournament

    specs = ["random", "random:name=r2", "greedy"]
    table = run_tournament(specs, 6, tmp_path / "t", players_per_game=3, seed=4,
                           gauntlet="greedy", progress=False)
    assert sorted(table["agents"]) == sorted(specs)
    assert all(table["agents"][s]["games"] == 6 for s in specs)
    lines = [json.loads(x) for x in (tmp_path / "t" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    # every seating rotation of each deal: the candidate sits in each seat twice
    seats = [line["seats"].index("greedy") for line in lines]
    assert sorted(seats) == [0, 0, 1, 1, 2, 2]


def test_a_module_spec_calls_nothing_but_an_agent_class(tmp_path) -> None:
    """A ``package.module:Name`` spec read from a file someone else made (a tournament's
    config.json, a training pack's anchors) must not call any function it names: only a
    subclass of Agent is constructed (the hostile pass truncated a file through
    ``logging:basicConfig`` on a tournament's resume)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    for spec in (f"logging:basicConfig:filename={victim},filemode=w",
                 "collections:OrderedDict", "pathlib:Path"):
        name = spec.split(":")[0] + "." + spec.split(":")[1]
        with pytest.raises(ValueError, match=rf"^agent .*: {name} is not a subclass of "
                                             r"taluva_ai\.agents\.Agent \(nothing was called\)$"):
            make_agent(spec, seed=0)
    assert victim.read_text() == "keep"
    assert make_agent("taluva_ai.agents.simple:RandomAgent", seed=1).act is not None
