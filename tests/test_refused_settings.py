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
from taluva_ai.cli import main
from taluva_ai.envs import EnvStateError, TaluvaEnv, TaluvaVectorEnv
from taluva_ai.sprt import parse_sprt
from taluva_ai.tournament import MAX_GAMES, run_tournament, schedule

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


@pytest.mark.parametrize(("spec", "key", "value"), [
    ("mcts:sims=1_0", "sims", "1_0"), ("mcts:sims=\u0661\u0660", "sims", "\u0661\u0660"),
    ("mcts:sims=\uff11\uff10", "sims", "\uff11\uff10"), ("greedy:epsilon=0.1_5", "epsilon",
                                                         "0.1_5"),
    ("mcts:c=\u0661.5", "c", "\u0661.5"),
])
def test_a_number_in_a_spec_is_written_in_ascii_digits(spec: str, key: str, value: str) -> None:
    """Python's int() and float() read '1_0' as 10 and other scripts' digits ('\u0661\u0660'
    Arabic-Indic, '\uff11\uff10' fullwidth) as digits; a spec refuses them in one line."""
    want = f"agent spec {spec!r}: parameter {key}={value!r} is not a number written in ASCII " \
        "digits (0-9, without '_')"
    for f in (make_agent, parse_agent_spec, spec_key):
        with pytest.raises(ValueError) as e:
            f(spec)
        assert str(e.value) == want
    assert parse_agent_spec("mcts:sims=10,c=-1.5e-1,time=.5") == (
        "mcts", {"sims": 10, "c": -0.15, "time": 0.5})


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


# -- issue 49: bounds and one-line errors ------------------------------------------------------


@pytest.mark.parametrize(("spec", "message"), [
    ("mcts:sims=99999999999999999999",
     "parameter sims=99999999999999999999 must be an integer in 1..10000000"),
    ("mcts:time=1e308", "parameter time=1e+308 must be a positive number of seconds (at most "
                        "86400)"),
    ("mcts:sims=10,time=86401", "parameter time=86401 must be a positive number of seconds (at "
                                "most 86400)"),
    ("ismcts:sims=10000001", "parameter sims=10000001 must be an integer in 1..10000000"),
    ("ismcts:time=1e9", "parameter time=1000000000.0 must be a positive number of seconds (at "
                        "most 86400)"),
    ("az:builtin,sims=99999999999999999999",
     "parameter sims=99999999999999999999 must be an integer in 1..10000000"),
    ("az:builtin,time=1e308", "parameter time=1e+308 must be a positive number of seconds (at "
                              "most 86400)"),
    ("mcts:samples=1000000", "parameter samples=1000000 must be an integer in 1..10000"),
    ("mcts:leaf_batch=100000000", "parameter leaf_batch=100000000 must be an integer in "
                                  "1..65536"),
    ("openspiel:sims=99999999999999999999",
     "parameter sims=99999999999999999999 must be an integer in 1..10000000"),
    ("openspiel:sims=20000,rollouts=100000",
     "parameter rollouts=100000 must be an integer in 1..10000"),
])
def test_absurd_search_budgets_are_refused_in_one_line(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        make_agent(spec)
    assert str(info.value) == f"agent {spec!r}: {message}"


@pytest.mark.parametrize("spec", ["mcts:sims=99999999999999999999", "mcts:time=1e308",
                                  "openspiel:sims=20000,rollouts=100000"])
def test_the_cli_refuses_absurd_budgets_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    for argv in (["play", "--players", spec, "random"],
                 ["tournament", "--agents", spec, "random", "--games", "2", "--out",
                  str(tmp_path / "t"), "--no-progress"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"taluva {argv[0]}: error: ")
        assert f"agent {spec!r}: parameter " in err[-1]
    assert not (tmp_path / "t").exists()


def test_the_search_configs_bound_their_budgets_for_python_callers() -> None:
    from taluva_ai.agents import ISMCTSConfig, MCTSConfig
    from taluva_ai.tournament import time_budget

    for make in (lambda: MCTSConfig(sims=10**20), lambda: MCTSConfig(time=1e308),
                 lambda: MCTSConfig(samples=10**9), lambda: MCTSConfig(leaf_batch=10**9),
                 lambda: ISMCTSConfig(sims=10**20), lambda: ISMCTSConfig(time=1e308)):
        with pytest.raises(ValueError, match=r"(sims|time|samples|leaf_batch) must be"):
            make()
    with pytest.raises(ValueError, match=r"time must be a positive number of seconds \(at "
                                         r"most 86400\), got 1e\+308$"):
        time_budget("misbehaving_agents:Sleeper:time=1e308")
    assert MCTSConfig(sims=10_000_000).sims == 10_000_000  # the limit itself is allowed
    assert time_budget("mcts:time=86400") == 86400.0


def test_an_az_gating_spec_with_an_absurd_budget_is_refused() -> None:
    from taluva_ai.agents.alphazero.config import ConfigError, check_az_params

    with pytest.raises(ConfigError, match=r"^c\.toml: \[gating\] az: sims must be at most "
                                          r"10000000, got 99999999999999999999$"):
        check_az_params("sims=99999999999999999999", "c.toml: [gating] az")


@pytest.mark.parametrize(("spec", "message"), [
    ("greedy:epsilon=x", "parameter epsilon='x' must be int or float"),
    ("greedy:epsilon=true", "parameter epsilon=True must be int or float"),
    ("mcts:sims=1.5", "parameter sims=1.5 must be int"),
    ("mcts:c=abc", "parameter c='abc' must be int or float"),
    ("mcts:reuse_tree=1", "parameter reuse_tree=1 must be bool"),
    ("ismcts:c=x", "parameter c='x' must be int or float"),
    ("openspiel:solve=yes", "parameter solve='yes' must be bool"),
    ("openspiel:uct_c=x", "parameter uct_c='x' must be int or float"),
    ("az:builtin,threads=two", "parameter threads='two' must be int"),
])
def test_a_parameter_of_the_wrong_type_is_named_with_its_value_and_type(
    spec: str, message: str
) -> None:
    with pytest.raises(ValueError) as info:
        make_agent(spec)
    assert str(info.value) == f"agent {spec!r}: {message}"


def test_a_long_spec_is_cut_in_its_error() -> None:
    spec = "greedy:epsilon=" + "x" * 1_000_000
    with pytest.raises(ValueError) as info:
        make_agent(spec)
    message = str(info.value)
    assert len(message) < 400 and "(1000015 characters)" in message
    assert message.endswith("(1000000 characters) must be int or float")


def test_az_path_of_a_directory_says_it_is_a_directory(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    with pytest.raises(ValueError) as info:
        make_agent(f"az:path={tmp_path}")
    from taluva_ai.errors import echo  # the spec is quoted as errors quote input (cut if long)

    assert str(info.value) == (
        f"agent {echo(f'az:path={tmp_path}')}: checkpoint {tmp_path}: is a directory, not a "
        "checkpoint "
        f"file (give the .pt file in it, e.g. {tmp_path / 'best.pt'})")
    with pytest.raises(ValueError, match=r": no such file$"):
        make_agent(f"az:path={tmp_path / 'none.pt'}")


@pytest.mark.parametrize(("key", "value", "most"), [
    ("channels", 100000, 512), ("blocks", 10**6, 80), ("global_hidden", 10**9, 4096),
    ("value_hidden", 4097, 4096), ("channels", -1, 512),
])
def test_absurd_network_sizes_are_refused_in_one_line(key: str, value: int, most: int) -> None:
    from taluva_ai.agents.alphazero.config import ConfigError, config_from_dict

    with pytest.raises(ConfigError) as info:
        config_from_dict({"net": {key: value}}, "c.toml")
    assert str(info.value) == (f"c.toml: [net]: net {key} must be an integer in 0..{most} "
                               f"(0: the preset's value), got {value}")


def test_a_network_size_of_0_is_the_preset_s() -> None:
    from taluva_ai.agents.alphazero.config import PRESETS, NetConfig, config_from_dict

    cfg = config_from_dict({"net": {"preset": "small", "channels": 0, "blocks": 0}}, "c.toml")
    sizes = NetConfig(**cfg.net.__dict__).sizes()
    assert sizes == PRESETS["small"]
    big = NetConfig("tiny", channels=512, blocks=80, global_hidden=4096, value_hidden=4096)
    assert big.sizes()["channels"] == 512  # the limits themselves are allowed
