"""Settings that used to be silently ignored are obeyed or refused in one line naming the
setting (issue 19, B.14), and the smaller defects of B.15."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.agents import make_agent, parse_agent_spec, spec_key
from taluva_ai.arena import MAX_GAMES, run_tournament, schedule
from taluva_ai.cli import main
from taluva_ai.envs import EnvStateError, TaluvaEnv, TaluvaVectorEnv
from taluva_ai.sprt import parse_sprt

# -- B.14 ---------------------------------------------------------------------------------------


def test_rules_num_players_of_a_tournament_file_is_obeyed(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_text(f'agents = ["random", "greedy", "greedy:epsilon=0.5"]\ngames = 3\n'
                 f'out = "{tmp_path / "t3"}"\n[rules]\nnum_players = 3\ntiles_per_player = 2\n')
    assert main(["tournament", "--config", str(f), "--no-progress", "--no-plots"]) == 0
    cfg = json.loads((tmp_path / "t3" / "config.json").read_text())
    assert cfg["players_per_game"] == 3 and cfg["rules"]["num_players"] == 3
    record = next((tmp_path / "t3" / "games").glob("*.jsonl"))
    header = json.loads(record.read_text().splitlines()[0])
    assert header["rules"]["num_players"] == 3 and len(header["players"]) == 3


@pytest.mark.parametrize(("text", "flags"), [
    ("players_per_game = 2\n[rules]\nnum_players = 3\n", []),
    ("[rules]\nnum_players = 3\n", ["--players-per-game", "2"]),
])
def test_rules_num_players_that_contradicts_players_per_game_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, flags: list[str]
) -> None:
    f = tmp_path / "t.toml"
    f.write_text(f'agents = ["random", "greedy", "greedy:epsilon=0.5"]\n'
                 f'out = "{tmp_path / "x"}"\n' + text)
    with pytest.raises(SystemExit) as info:
        main(["tournament", "--config", str(f), "--no-progress", *flags])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"taluva tournament: error: --config: {f}: [rules] num_players = 3 "
                       "differs from players_per_game = 2; give the number of players once")
    assert not (tmp_path / "x").exists()


def test_run_tournament_refuses_contradicting_num_players(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^rules: num_players=3 differs from "
                                         r"players_per_game=2; give it once$"):
        run_tournament(["random", "greedy"], 2, tmp_path / "x", rules={"num_players": 3})


@pytest.mark.parametrize("rules", [{"num_players": 5}, {"num_players": 3}])
def test_envs_refuse_a_num_players_in_the_rules_that_differs(rules: dict[str, int]) -> None:
    from taluva_ai.envs.pettingzoo_env import TaluvaAECEnv

    want = f"rules: num_players={rules['num_players']} differs from num_players=2; give the " \
           "number of seats once, as num_players"
    for make in (lambda: TaluvaVectorEnv(2, rules=rules),
                 lambda: TaluvaEnv(opponents=["random"], rules=rules),
                 lambda: TaluvaAECEnv(num_players=2, rules=rules)):
        with pytest.raises(ValueError) as e:
            make()
        assert str(e.value) == want


def test_a_self_play_env_takes_its_seats_from_the_rules() -> None:
    env = TaluvaEnv(rules={"num_players": 3})
    assert env.rules.num_players == 3
    env.reset(seed=0)
    assert env.state.num_players == 3


@pytest.mark.parametrize("spec", ["mcts:sims=10,sims=20", "greedy:epsilon=0.1, epsilon=0.1"])
def test_an_agent_spec_with_a_key_twice_is_refused(spec: str) -> None:
    key = "sims" if spec.startswith("mcts") else "epsilon"
    want = f"agent spec {spec!r}: parameter {key!r} is given twice"
    for f in (make_agent, parse_agent_spec, spec_key):
        with pytest.raises(ValueError) as e:
            f(spec)
        assert str(e.value) == want


def test_vector_env_reset_refuses_an_unknown_option() -> None:
    venv = TaluvaVectorEnv(3)
    venv.reset(seed=1)
    before = venv._meta.copy()
    with pytest.raises(ValueError) as e:
        venv.reset(options={"reset_maks": np.array([True, False, False])})
    assert str(e.value) == "reset options: unknown key 'reset_maks'; known: reset_mask"
    assert np.array_equal(venv._meta, before)  # no game was reset
    from taluva_ai.envs.solo_env import TaluvaSoloVectorEnv

    solo = TaluvaSoloVectorEnv(2)
    with pytest.raises(ValueError, match="unknown key 'mask'"):
        solo.reset(options={"mask": np.array([True, True])})


def test_train_refuses_cuda_without_cuda_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = Path(__file__).parent.parent / "experiments" / "configs" / "tiny.toml"
    text = cfg.read_text().replace('device = "cpu"', 'device = "cuda"')
    assert 'device = "cuda"' in text
    f = tmp_path / "cuda.toml"
    f.write_text(text)
    with pytest.raises(SystemExit) as info:
        main(["train", "--config", str(f), "--out", str(tmp_path / "run"), "--no-progress"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["taluva train: error: config: device 'cuda': CUDA is not available on this "
                   "machine; use device = \"auto\" or \"cpu\""]


def test_a_schedule_is_computed_game_by_game() -> None:
    tracemalloc.start()
    try:
        tasks = schedule(["a", "b", "c"], 10_000_000, 2, seed=4)
        size = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert size < 100_000  # bytes: no list of 30 million games
    assert len(tasks) == 3 * 5_000_000 * 2
    last = tasks[-1]
    assert (last.game_id, last.seats, last.deal) == ("002-4999999-1", ("c", "b"), 4_999_999)
    assert tasks.position(last.game_id) == len(tasks) - 1 and last in tasks
    assert "002-4999999-1" in tasks.ids and "003-0000-0" not in tasks.ids
    assert [t.game_id for t in tasks[2:4]] == ["000-0001-0", "000-0001-1"]


def test_a_long_tournament_allocates_only_what_it_plays(tmp_path: Path) -> None:
    """10 million games per pair: the SPRT stops it after a few deals; the schedule took no
    memory (before, the whole list of games was made first: 1.3 GB)."""
    sprt = parse_sprt(["elo0=0", "elo1=400", "model=logistic"])
    tracemalloc.start()
    try:
        table = run_tournament(["random", "greedy"], 10_000_000, tmp_path / "t", seed=1,
                               rules={"tiles_per_player": 4}, sprt=sprt, progress=False,
                               plots=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert table["sprt"]["decision"] == "H1" and table["sprt"]["max_games"] == 10_000_000
    assert table["games"] == 10
    assert peak < 200_000_000


@pytest.mark.parametrize("games", [MAX_GAMES + 1, 10**22])
def test_absurd_game_counts_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        games: int) -> None:
    with pytest.raises(SystemExit) as info:
        main(["tournament", "--agents", "random", "greedy", "--games", str(games),
              "--out", str(tmp_path / "x"), "--no-progress"])
    assert info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"taluva tournament: error: --games must be in 1..{MAX_GAMES} (games per group), got "
        f"{games}")
    with pytest.raises(ValueError, match=rf"^games must be an integer in 1\.\.{MAX_GAMES} "):
        run_tournament(["random", "greedy"], games, tmp_path / "y")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


# -- B.15 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("player", [5, 2, -1])
def test_observation_of_a_seat_that_does_not_exist(player: int) -> None:
    s = make_game("taluva").new_initial_state(seed=1)
    with pytest.raises(ValueError) as e:
        s.observation(player)
    assert str(e.value) == f"player must be a seat 0..1, got {player}"


def test_pettingzoo_step_after_the_end_says_game_over() -> None:
    from taluva_ai.envs.pettingzoo_env import TaluvaAECEnv

    env = TaluvaAECEnv(num_players=2, rules={"num_players": 2, "tiles_per_player": 2})
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(obs["action_mask"].nonzero()[0][0]))
    assert env.agents == []
    for action in (0, None):
        with pytest.raises(EnvStateError) as e:
            env.step(action)
        assert str(e.value) == ("the game is over (every agent is done): call reset() to "
                                "start a new one")


def test_game_pettingzoo_step_after_the_end_says_game_over() -> None:
    from taluva_ai.envs.game_pettingzoo import GameAECEnv

    env = GameAECEnv("thurn_und_taxis", num_players=2, max_rounds=1)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(obs["action_mask"].nonzero()[0][0]))
    with pytest.raises(EnvStateError, match="the game is over"):
        env.step(0)


def test_vector_env_ignores_the_action_of_an_autoreset_slot() -> None:
    venv = TaluvaVectorEnv(2, rules={"tiles_per_player": 2})
    obs, _ = venv.reset(seed=3)
    rng = np.random.default_rng(0)
    done = np.zeros(2, dtype=bool)
    for _ in range(200):
        mask = obs["action_mask"]
        act = np.array([int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in mask])
        obs, _, term, trunc, _ = venv.step(act)
        done = term | trunc
        if done.any():
            break
    assert done.any()
    mask = obs["action_mask"]
    act = np.array([-1 if d else int(np.flatnonzero(m)[0]) for d, m in zip(done, mask,
                                                                             strict=True)])
    obs, rewards, term, trunc, info = venv.step(act)  # the finished game restarts
    assert not (term | trunc)[done].any() and (rewards[done] == 0).all()
    assert (info["step_kind"][done] == 1).all()
    act = np.full(2, -1)
    with pytest.raises(IndexError, match="action -1 of env 0 is outside the action space"):
        venv.step(act)  # a live game's -1 is still refused
