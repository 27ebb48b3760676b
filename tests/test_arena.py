"""Arena (play_game, run_tournament) and ratings: determinism, resume, exact tables."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.agents import make_agent, match_specs, spec_key
from taluva_ai.errors import IllegalActionError, RunConfigError
from taluva_ai.ratings import (
    bradley_terry_elo,
    elo_with_intervals,
    openskill_ratings,
    pairwise_scores,
)
from taluva_ai.tournament import agent_seeds, deal_seed, play_game, run_tournament, schedule

# -- play_game ----------------------------------------------------------------------------------


def _draws(path: Path) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["type"] == "action" and obj["player"] == "chance":
            out.append(obj["action"])
    return out


def test_play_game_is_deterministic_and_the_seed_fixes_the_tiles(tmp_path: Path) -> None:
    game = make_game("taluva")
    a = play_game(game, [make_agent("greedy"), make_agent("random")], 3, tmp_path / "a.jsonl")
    b = play_game(game, [make_agent("greedy"), make_agent("random")], 3, tmp_path / "b.jsonl")
    assert a == b
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    play_game(game, [make_agent("random"), make_agent("random")], 3, tmp_path / "c.jsonl")
    da, dc = _draws(tmp_path / "a.jsonl"), _draws(tmp_path / "c.jsonl")
    k = min(len(da), len(dc))
    assert k >= 20
    assert da[:k] == dc[:k]  # other players, same deck order
    deck = game.new_initial_state(seed=3).deck  # type: ignore[attr-defined]
    from taluva_ai.games.taluva.tiles import tile_name

    assert da == [f"draw:{tile_name(int(t))}" for t in deck[: len(da)]]


def test_play_game_result_and_callbacks() -> None:
    game = make_game("taluva", num_players=3, tiles_per_player=4)
    events = []
    res = play_game(game, [make_agent("random"), make_agent("greedy"), make_agent("random")],
                    5, on_state=lambda s, e: events.append(e))
    assert events[0] is None
    assert len(events) == res.plies + 1 == 12 * 3 + 1
    assert [e.player for e in events[1:4]] == [-1, 0, 0]
    assert res.players == ("random", "greedy", "random")
    assert res.end_reason == "tiles_out"
    assert math.isclose(sum(res.returns), 0.0, abs_tol=1e-12)
    with pytest.raises(ValueError, match="2 agents for a game of 3 players"):
        play_game(game, [make_agent("random")] * 2, 1)


def test_agent_seeds_derive_from_the_game_seed() -> None:
    assert agent_seeds(None, 2) is None
    s = agent_seeds(7, 3)
    assert s == agent_seeds(7, 3)
    assert s is not None and len(set(s)) == 3
    assert s[:2] == agent_seeds(7, 2)


def test_schedule_shares_deals_across_rotations_and_groups() -> None:
    tasks = schedule(["a", "b", "c"], 3, 2, seed=4)
    assert len(tasks) == 3 * 2 * 2  # 3 pairs x 2 deals x 2 rotations (3 rounded up to 4)
    assert [t.game_id for t in tasks[:4]] == ["000-0000-0", "000-0000-1", "000-0001-0",
                                              "000-0001-1"]
    assert tasks[0].seats == ("a", "b") and tasks[1].seats == ("b", "a")
    assert tasks[0].seed == tasks[1].seed == deal_seed(4, 0)
    assert tasks[4].seed == tasks[0].seed  # pair (a, c) plays the same deals
    t3 = schedule(["a", "b", "c", "d"], 1, 3, seed=0)
    assert len(t3) == 4 * 3
    assert [t.seats for t in t3[:3]] == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]


# -- tournaments ----------------------------------------------------------------------------------

TINY = {"agent_specs": ["random", "greedy"], "games": 4, "seed": 3, "bootstrap": 200,
        "progress": False}


def _tree(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((d / "games").iterdir())}


def test_tiny_tournament_same_across_concurrency_and_resumable(tmp_path: Path) -> None:
    r1 = run_tournament(out_dir=tmp_path / "c1", concurrency=1, **TINY)  # type: ignore[arg-type]
    r2 = run_tournament(out_dir=tmp_path / "c2", concurrency=2, **TINY)  # type: ignore[arg-type]
    assert r1 == r2
    assert _tree(tmp_path / "c1") == _tree(tmp_path / "c2")
    text = (tmp_path / "c1" / "results.json").read_text()
    assert text == (tmp_path / "c2" / "results.json").read_text()
    assert json.loads(text) == r1
    assert sorted(_tree(tmp_path / "c1")) == [f"000-000{d}-{r}.jsonl" for d in (0, 1)
                                              for r in (0, 1)]
    pair = dict(r1["pairs"][0])
    paired = pair.pop("paired")
    assert pair == {"agents": ["random", "greedy"], "games": 4,
                    "wins": {"random": 0, "greedy": 4}, "draws": 0, "truncated": 0,
                    "score": {"random": 0.0, "greedy": 1.0},
                    "pentanomial": [2, 0, 0, 0, 0], "incomplete_pairs": 0}
    assert paired["pairs"] == 2 and paired["los"] == 0.0
    # 4-0 with one virtual draw: 400 log10(4.5 / 0.5)
    assert r1["agents"]["greedy"]["elo"] == round(400 * math.log10(9.0), 1) == 381.7
    assert r1["agents"]["random"]["elo"] == 0.0
    assert r1["agents"]["random"]["elo_ci95"] == [0.0, 0.0]
    assert r1["elo_anchor"] == "random"
    assert "openskill" not in r1["agents"]["greedy"]

    # resume: a deleted record and a record cut before its result line are played again
    games = tmp_path / "c1" / "games"
    before = _tree(tmp_path / "c1")
    (games / "000-0001-0.jsonl").unlink()
    cut = games / "000-0000-1.jsonl"
    cut.write_text("".join(cut.read_text().splitlines(keepends=True)[:-1]))
    (tmp_path / "c1" / "results.json").unlink()
    r3 = run_tournament(out_dir=tmp_path / "c1", concurrency=1, **TINY)  # type: ignore[arg-type]
    assert r3 == r1
    assert _tree(tmp_path / "c1") == before
    assert (tmp_path / "c1" / "results.json").read_text() == text


def test_a_pair_played_alone_replays_the_round_robins_games_of_that_pair(
    tmp_path: Path,
) -> None:
    # Deals and agent seeds depend on the tournament seed, the deal and the seat, not on the
    # other agents: one pair of a ladder can be checked without playing the whole ladder.
    kw = {"games": 2, "seed": 5, "progress": False, "plots": False}
    run_tournament(["random", "greedy", "greedy:epsilon=0.5"], out_dir=tmp_path / "all",
                   **kw)  # type: ignore[arg-type]
    run_tournament(["greedy", "greedy:epsilon=0.5"], out_dir=tmp_path / "pair",
                   **kw)  # type: ignore[arg-type]
    for rotation in (0, 1):  # group 002 of the round robin is group 000 of the pair
        lines = [(tmp_path / d / "games" / f"{g}-0000-{rotation}.jsonl").read_text().splitlines()
                 for d, g in (("all", "002"), ("pair", "000"))]
        headers = [json.loads(x[0]) for x in lines]
        assert headers[0]["meta"]["id"] != headers[1]["meta"]["id"]
        for h in headers:
            del h["meta"]
        assert headers[0] == headers[1]
        assert lines[0][1:] == lines[1][1:]


def test_spec_key_compares_name_and_typed_parameters() -> None:
    assert spec_key("mcts:sims=400,rollout=greedy") == spec_key(" mcts: rollout=greedy ,sims=400.0")
    assert spec_key("mcts:sims=400") != spec_key("mcts:sims=401")
    assert spec_key("mcts") != spec_key("mcts:sims=400")
    assert spec_key("pkg.mod:Agent:depth=2") == ("pkg.mod:Agent", (("depth", 2),))
    assert spec_key("pkg.mod:Agent") != spec_key("pkg.mod:Other")
    assert match_specs(["greedy", "mcts:rollout=random,sims=4", "x", "greedy"],
                       ["random", "greedy", "mcts:sims=4,rollout=random"]) == (
        ["greedy", "mcts:sims=4,rollout=random"], ["x"])
    with pytest.raises(ValueError, match=re.escape("agent spec 'pkg.mod:Agent:depth': parameter")):
        spec_key("pkg.mod:Agent:depth")
    spec = "tests.misbehaving_agents:Crasher:x"
    with pytest.raises(ValueError, match=re.escape(f"agent spec {spec!r}: parameter 'x'")):
        make_agent(spec)


def test_defer_changes_the_play_order_only(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import taluva_ai.tournament.runner as runner

    played: list[list[str]] = []
    stream = runner._play_stream

    def spy(todo, *args, **kwargs):  # type: ignore[no-untyped-def]
        todo = list(todo)  # an iterator: the schedule is computed game by game
        played.append([t.game_id for t in todo])
        return stream(todo, *args, **kwargs)

    monkeypatch.setattr(runner, "_play_stream", spy)
    specs = ["random", "greedy", "greedy:epsilon=0.5"]
    kw = {"games": 2, "seed": 3, "progress": False, "plots": False}
    plain = run_tournament(specs, out_dir=tmp_path / "plain", **kw)  # type: ignore[arg-type]
    later = run_tournament(specs, out_dir=tmp_path / "defer", defer=["greedy"],
                           **kw)  # type: ignore[arg-type]
    # groups (random, greedy), (random, eps), (greedy, eps): the greedy games go last
    assert played == [["000-0000-0", "000-0000-1", "001-0000-0", "001-0000-1",
                       "002-0000-0", "002-0000-1"],
                      ["001-0000-0", "001-0000-1", "000-0000-0", "000-0000-1",
                       "002-0000-0", "002-0000-1"]]
    assert later == plain
    assert _tree(tmp_path / "defer") == _tree(tmp_path / "plain")
    def log(d: str) -> list[dict[str, object]]:  # results in game-id order, times left out
        lines = (tmp_path / d / "results.jsonl").read_text().splitlines()
        return [{k: v for k, v in json.loads(x).items() if "_s" not in k and k != "sha256"}
                for x in lines]

    assert log("defer") == log("plain")
    # a spec spelt otherwise (spaces, 0.50 for 0.5) names the same agent
    run_tournament(["random", "greedy:epsilon=0.5", "greedy"], out_dir=tmp_path / "defer2",
                   defer=[" greedy: epsilon=0.50"], **kw)  # type: ignore[arg-type]
    assert played[-1] == ["001-0000-0", "001-0000-1", "000-0000-0", "000-0000-1",
                          "002-0000-0", "002-0000-1"]
    with pytest.raises(ValueError, match="defer: 'mcts' is not one of the agents"):
        run_tournament(specs, out_dir=tmp_path / "bad", defer=["mcts"],
                       **kw)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="defer: agent spec 'greedy:eps': parameter 'eps' is not "
                                         "key=value"):
        run_tournament(specs, out_dir=tmp_path / "bad", defer=["greedy:eps"],
                       **kw)  # type: ignore[arg-type]


def test_interim_table_reads_the_games_finished_so_far(tmp_path: Path) -> None:
    from taluva_ai.tournament import interim_table

    specs = ["random", "greedy", "greedy:epsilon=0.5"]
    full = run_tournament(specs, 2, tmp_path, seed=3, progress=False,
                          plots=False)  # type: ignore[arg-type]
    t = interim_table(tmp_path)
    assert t["scheduled_games"] == 6 and t["games"] == 6
    assert {k: t[k] for k in ("agents", "pairs")} == {k: full[k] for k in ("agents", "pairs")}
    log = tmp_path / "results.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(x for x in lines if not x.startswith('{"id": "002-')))
    t = interim_table(tmp_path)  # the (greedy, eps) pair not played yet
    assert t["games"] == 4 and t["scheduled_games"] == 6
    assert [p["games"] for p in t["pairs"]] == [2, 2]
    assert t["agents"]["greedy"]["games"] == 2
    log.write_text(lines[0] + lines[1])  # epsilon-greedy has no finished game: no rating
    t = interim_table(tmp_path)
    assert t["games"] == 2 and t["agents"]["greedy:epsilon=0.5"]["games"] == 0
    assert t["agents"]["greedy:epsilon=0.5"]["elo"] is None
    assert t["agents"]["greedy:epsilon=0.5"]["elo_ci95"] is None
    assert t["agents"]["greedy"]["elo"] > 0
    with pytest.raises(RunConfigError, match="no such file"):
        interim_table(tmp_path / "nothing")
    bad = json.loads(lines[0])
    bad["places"] = [7, 9]
    log.write_text(json.dumps(bad) + "\n")  # changed on disk: its checksum tells
    t = interim_table(tmp_path)
    assert t["games"] == 0
    del bad["sha256"]
    log.write_text(json.dumps(bad) + "\n")  # a line without a checksum (older runs)
    with pytest.raises(RunConfigError, match=r"results.jsonl: .*places \[7, 9\]"):
        interim_table(tmp_path)


def test_resume_refuses_other_settings(tmp_path: Path) -> None:
    run_tournament(out_dir=tmp_path, **TINY)  # type: ignore[arg-type]
    other = dict(TINY, seed=4)
    with pytest.raises(RunConfigError, match="seed"):
        run_tournament(out_dir=tmp_path, **other)  # type: ignore[arg-type]
    with pytest.raises(RunConfigError, match="rules"):
        run_tournament(out_dir=tmp_path, rules={"ranked": True}, **TINY)  # type: ignore[arg-type]
    with pytest.raises(RunConfigError, match="agents"):
        run_tournament(out_dir=tmp_path, **dict(TINY, agent_specs=["greedy", "random"]))  # type: ignore[arg-type]


def test_tournament_argument_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="distinct"):
        run_tournament(["random", "random"], 2, tmp_path)
    with pytest.raises(ValueError, match="unknown agent"):
        run_tournament(["random", "nobody"], 2, tmp_path)
    with pytest.raises(ValueError, match="2 agents for games of 3 players"):
        run_tournament(["random", "greedy"], 2, tmp_path, players_per_game=3)
    assert not (tmp_path / "config.json").exists()


def test_three_player_tournament_has_openskill(tmp_path: Path) -> None:
    specs = ["random", "greedy", "greedy:epsilon=0.5"]
    r = run_tournament(specs, 3, tmp_path, players_per_game=3, seed=1, bootstrap=100,
                       rules={"tiles_per_player": 6}, progress=False)
    assert r["games"] == 3
    assert r["config"]["rules"]["num_players"] == 3
    assert [p["agents"] for p in r["pairs"]] == [["random", "greedy"],
                                                 ["random", "greedy:epsilon=0.5"],
                                                 ["greedy", "greedy:epsilon=0.5"]]
    assert len(r["groups"]) == 1
    g = r["groups"][0]
    assert g["agents"] == specs and g["games"] == 3
    assert sum(g["wins"].values()) == 3 + g["draws"]
    for a in specs:
        o = r["agents"][a]["openskill"]
        assert set(o) == {"mu", "sigma", "ordinal"}
        assert o["ordinal"] == pytest.approx(o["mu"] - 3 * o["sigma"], abs=5e-3)
        assert r["agents"][a]["games"] == 3
    assert r == json.loads((tmp_path / "results.json").read_text())
    again = run_tournament(specs, 3, tmp_path, players_per_game=3, seed=1, bootstrap=100,
                           rules={"tiles_per_player": 6}, progress=False)
    assert again == r


# -- ratings ---------------------------------------------------------------------------------------


def test_bradley_terry_two_agents_is_the_logit_of_the_score() -> None:
    w = np.array([[0.0, 1.0], [3.0, 0.0]])
    elo = bradley_terry_elo(w, prior_draws=0.0)
    assert elo[0] == 0.0
    assert elo[1] == pytest.approx(400 * math.log10(3.0), abs=1e-4)
    elo = bradley_terry_elo(w, prior_draws=1.0)
    assert elo[1] == pytest.approx(400 * math.log10(3.5 / 1.5), abs=1e-4)
    elo = bradley_terry_elo(w, anchor=1, prior_draws=0.0)
    assert elo[1] == 0.0 and elo[0] == pytest.approx(-400 * math.log10(3.0), abs=1e-4)


def test_bradley_terry_three_agents_consistent_strengths() -> None:
    # win odds 2:1 (a over b) and 2:1 (b over c), 4:1 (a over c) fit exactly
    w = np.array([[0, 20, 40], [10, 0, 20], [10, 10, 0]], dtype=float)
    elo = bradley_terry_elo(w, prior_draws=0.0)
    step = 400 * math.log10(2.0)
    assert elo.tolist() == pytest.approx([0.0, -step, -2 * step], abs=1e-3)
    with pytest.raises(ValueError):
        bradley_terry_elo(np.zeros((2, 3)))


def test_pairwise_scores_from_places() -> None:
    # seats hold agents 2, 0, 1; places: agent 2 first, agents 0 and 1 share second
    w = pairwise_scores(3, [2, 0, 1], [0, 1, 1])
    assert w.tolist() == [[0, 0.5, 0], [0.5, 0, 0], [1, 1, 0]]
    assert pairwise_scores(2, [0, 1], [-1, -1]).tolist() == [[0, 0], [0, 0]]


def test_elo_intervals_cover_the_estimate_and_are_seeded() -> None:
    rng = np.random.default_rng(0)
    per_game = np.zeros((40, 2, 2))
    for g in range(40):
        a_wins = rng.random() < 0.7
        per_game[g, 0 if a_wins else 1, 1 if a_wins else 0] = 1.0
    elo, lo, hi = elo_with_intervals(per_game, [0] * 40, anchor=1, bootstrap=100, seed=5)
    assert lo[0] < elo[0] < hi[0]
    assert lo[1] == hi[1] == elo[1] == 0.0
    again = elo_with_intervals(per_game, [0] * 40, anchor=1, bootstrap=100, seed=5)
    assert again[1].tolist() == lo.tolist() and again[2].tolist() == hi.tolist()


def test_openskill_orders_by_places() -> None:
    r = openskill_ratings(3, [([0, 1, 2], [0, 1, 2])] * 5 + [([0, 1, 2], [-1, -1, -1])])
    assert r[0]["mu"] > r[1]["mu"] > r[2]["mu"]
    assert r[0]["sigma"] < 25 / 3 and r[2]["sigma"] < 25 / 3
    assert r == openskill_ratings(3, [([0, 1, 2], [0, 1, 2])] * 5)  # undecided game skipped


# -- robustness: agents that misbehave, corrupted run directories, concurrent runs ----------------


class _Fixed:
    """An agent that returns ``value`` once a build is due, else plays like ``random``."""

    def __init__(self, value: object, name: str = "bad") -> None:
        self.value = value
        self.name = name
        self.inner = make_agent("random")

    def reset(self, seed: int | None) -> None:
        self.inner.reset(seed)

    def act(self, state: object) -> object:
        return self.value

    def stats(self) -> dict[str, object]:
        return {}


@pytest.mark.parametrize("value", [9504.7, np.float64(3.0), True, None, "tile@0,0:N"])
def test_play_game_refuses_an_action_that_is_not_an_integer(tmp_path: Path,
                                                            value: object) -> None:
    game = make_game("taluva", tiles_per_player=2)
    rec = tmp_path / "g.jsonl"
    with pytest.raises(IllegalActionError) as info:
        play_game(game, [_Fixed(value), make_agent("random")], 1, record_path=rec)
    assert str(info.value) == (f"agent 'bad' (seat 0) returned {value!r} "
                               f"({type(value).__name__}), not an action id (an integer)")
    assert not rec.exists() and list(tmp_path.iterdir()) == []  # no record, no temporary file


def test_an_illegal_action_is_refused_before_it_is_written(tmp_path: Path) -> None:
    game = make_game("taluva", tiles_per_player=2)
    rec = tmp_path / "g.jsonl"
    rec.write_text("an older record\n")
    build = game.num_actions - 1  # a build id: never legal at the tile step
    with pytest.raises(IllegalActionError, match=rf"^agent 'bad' \(seat 0\) chose the illegal "
                       rf"action {build}: a build during the tile step \(place the tile first\)$"):
        play_game(game, [_Fixed(build), make_agent("random")], 1, record_path=rec)
    assert rec.read_text() == "an older record\n"  # not truncated by the failed game
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl"]
    seen: list[str] = []
    with pytest.raises(IllegalActionError, match="seat 0"):
        play_game(game, [_Fixed(10**9), make_agent("random")], 1,
                  on_state=lambda s, e: seen.append(e.notation if e else "start"))
    assert seen == ["start", "draw:CJ"]  # the illegal action never reached the callback


SMALL = {"agent_specs": ["random", "greedy"], "games": 6, "seed": 5, "bootstrap": 20,
         "progress": False, "rules": {"tiles_per_player": 3}}


def _corrupt(path: Path, how: str) -> None:
    lines = path.read_text().splitlines()
    res = json.loads(lines[-1])
    if how == "flipped":  # a consistent but wrong result: read_result alone accepts it
        res["returns"] = res["returns"][::-1]
        res["places"] = res["places"][::-1]
        res["winners"] = [1 - w for w in res["winners"]]
        lines[-1] = json.dumps(res)
    elif how == "garbage":
        lines[5] = "garbage"
    elif how == "deleted":  # the last action gone, the result's plies adjusted
        del lines[-2]
        res["plies"] -= 1
        lines[-1] = json.dumps(res)
    elif how == "end_reason":
        res["end_reason"] = "early_victory"
        lines[-1] = json.dumps(res)
    elif how == "winners":
        res["winners"] = [7]
        lines[-1] = json.dumps(res)
    elif how == "draws":  # two different draws swapped: not the deal's seeded deck
        draws = [i for i, line in enumerate(lines) if '"chance"' in line]
        i = draws[0]
        j = next(k for k in draws if json.loads(lines[k])["action"]
                 != json.loads(lines[i])["action"])
        a, b = json.loads(lines[i]), json.loads(lines[j])
        a["action"], b["action"] = b["action"], a["action"]
        lines[i], lines[j] = json.dumps(a), json.dumps(b)
    path.write_text("".join(line + "\n" for line in lines))


def test_resume_replays_every_kept_record_and_plays_corrupted_ones_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run_tournament(out_dir=tmp_path, **SMALL)  # type: ignore[arg-type]
    before = _tree(tmp_path)
    assert sorted(before) == [f"000-000{d}-{r}.jsonl" for d in range(3) for r in (0, 1)]
    games = tmp_path / "games"
    hows = ["flipped", "garbage", "deleted", "end_reason", "winners", "draws"]
    for name, how in zip(sorted(before), hows, strict=True):
        _corrupt(games / name, how)
    (games / ".000-0000-0.jsonl.1234abcd.part").write_text("left by a killed worker\n")
    (tmp_path / "results.json").unlink()
    capsys.readouterr()
    again = run_tournament(out_dir=tmp_path, **SMALL)  # type: ignore[arg-type]
    assert again == first
    assert _tree(tmp_path) == before
    assert sorted(p.name for p in games.iterdir()) == sorted(before)  # .part file removed
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{games / name}: {why}; playing this game again" for name, why in zip(
        sorted(before), [
            "line 20: field 'winners': the record says [0], the replay gives [1]",
            "line 6: field 'json': not valid JSON: Expecting value (column 1)",
            "line 19: field 'type': a result line after ply 16, but the game is not over "
            "(player 1 to move)",
            "line 20: field 'end_reason': the record says 'early_victory', the replay gives "
            "'tiles_out'",
            "line 20: field 'winners': the record says [7], the replay gives [1]",
            "line 2: field 'action': 'draw:CR' does not follow the seeded deck: the deal draws "
            "'draw:RL' here",
        ], strict=True)]


def test_resume_replays_a_record_of_another_game(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run_tournament(out_dir=tmp_path, **SMALL)  # type: ignore[arg-type]
    before = _tree(tmp_path)
    games = tmp_path / "games"
    # a valid record, but of another game (deal 1) under deal 0's name
    (games / "000-0000-0.jsonl").write_bytes(before["000-0001-0.jsonl"])
    capsys.readouterr()
    run_tournament(out_dir=tmp_path, **SMALL)  # type: ignore[arg-type]
    assert _tree(tmp_path) == before
    assert capsys.readouterr().err == (
        f"{games / '000-0000-0.jsonl'}: line 1: the header is not this game's (it differs "
        "in: seed, agent_seeds, meta); playing this game again\n")


def test_a_run_directory_is_locked_while_a_tournament_runs(tmp_path: Path) -> None:
    import fcntl
    import os

    tmp_path.mkdir(exist_ok=True)
    fd = os.open(tmp_path / ".lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(RunConfigError, match=r"is in use by another tournament"):
            run_tournament(out_dir=tmp_path, **SMALL)  # type: ignore[arg-type]
        assert not (tmp_path / "config.json").exists()
    finally:
        os.close(fd)
    r = run_tournament(out_dir=tmp_path, **dict(SMALL, games=2))  # type: ignore[arg-type]
    assert r["games"] == 2


def test_tournament_path_and_argument_errors_come_before_any_game(tmp_path: Path) -> None:
    small = dict(SMALL, games=2)
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunConfigError, match="file: not a directory"):
        run_tournament(out_dir=tmp_path / "file", **small)  # type: ignore[arg-type]
    cases = {
        "games": lambda d: (d / "games").write_text("x"),
        "config": lambda d: (d / "config.json").mkdir(),
        "list": lambda d: (d / "config.json").write_text("[1, 2]"),
        "results": lambda d: (d / "results.json").mkdir(),
        "record": lambda d: (d / "games" / "000-0000-1.jsonl").mkdir(parents=True),
    }
    messages = {
        "games": "games: not a directory",
        "config": "config.json: unreadable (not a regular file (a directory))",
        "list": "config.json: unreadable (a JSON list, not a tournament's settings object)",
        "results": "results.json: not a file",
        "record": "000-0000-1.jsonl: not a file",
    }
    for key, make in cases.items():
        d = tmp_path / key
        d.mkdir()
        make(d)
        with pytest.raises(RunConfigError, match=messages[key].replace("(", r"\(")
                           .replace(")", r"\)")):
            run_tournament(out_dir=d, **small)  # type: ignore[arg-type]
        assert not list(d.glob("games/*.jsonl")) or key == "record"
    with pytest.raises(ValueError, match="distinct"):
        run_tournament([" random", "random "], 2, tmp_path / "x")
    with pytest.raises(ValueError, match="bootstrap must be an integer >= 0, got -1"):
        run_tournament(["random", "greedy"], 2, tmp_path / "x", bootstrap=-1)
    with pytest.raises(ValueError, match="out_dir: empty path"):
        run_tournament(["random", "greedy"], 2, "")
    assert not (tmp_path / "x").exists()


def test_tournament_table_refuses_games_that_do_not_fit() -> None:
    from taluva_ai.ratings import tournament_table

    good: dict[str, object] = {"id": "000-0000-0", "group": ["a", "b"], "seats": ["a", "b"],
                               "places": [0, 1],
                               "winners": [0], "end_reason": "tiles_out"}
    assert tournament_table(["a", "b"], [good], 2, bootstrap=0)["games"] == 1
    cases: list[tuple[dict[str, object], str]] = [
        ({"winners": [7]}, "winners [7] are not distinct seats 0..1"),
        ({"places": [0]}, "places [0] are not 2 places"),
        ({"seats": ["a", "c"]}, "seats ['a', 'c'] are not 2 agents of the tournament"),
    ]
    for change, message in cases:
        with pytest.raises(ValueError, match=r"game '000-0000-0': " + re.escape(message)):
            tournament_table(["a", "b"], [{**good, **change}], 2, bootstrap=0)


def test_arena_is_a_deprecated_re_export_of_the_tournament_package() -> None:
    """``taluva_ai.arena`` (deprecated) still gives what code imported from it: every public
    name of ``taluva_ai.tournament`` (the same objects) and the run lock and SIGTERM handling
    of ``taluva_ai.runfiles``."""
    import taluva_ai.arena as arena
    import taluva_ai.runfiles as runfiles
    import taluva_ai.tournament as tournament

    for name in ("run_tournament", "resume_tournament", "play_game", "make_agent", "schedule",
                 "read_deals", "export_pgn", "interim_table", "read_tournament_file",
                 "time_budget", "MAX_GAMES", "DEFAULT_TIME_MARGIN", "GameResult"):
        assert name in tournament.__all__, name
    for name in tournament.__all__:
        assert getattr(arena, name) is getattr(tournament, name), name
    assert arena.run_lock is runfiles.run_lock
    assert arena.sigterm_as_interrupt is runfiles.sigterm_as_interrupt
    assert "deprecated" in (arena.__doc__ or "").lower()
