"""``taluva train``: configs checked before any work, a real run killed and resumed, the run
directory's contents, SPRT, the trainer, and ``bench --net``."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from taluva_ai.agents.alphazero.config import (  # noqa: E402
    ConfigError,
    config_from_dict,
    config_to_toml,
    load_config,
)
from taluva_ai.agents.alphazero.gating import expected_score, sprt_bounds, sprt_llr  # noqa: E402
from tests.helpers import (  # noqa: E402
    finished_training_run,
    kill_running,
    micro_run_config,
    spawned_children,
    still_running,
)

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "experiments" / "configs"
#: The configs of superseded runs, kept with their history (experiments/journal/README.md).
JOURNAL_CONFIGS = ROOT / "experiments" / "journal" / "configs"


def config_path(name: str) -> Path:
    """``experiments/configs/<name>.toml``, or the journal's config of that name."""
    path = CONFIGS / f"{name}.toml"
    return path if path.exists() else JOURNAL_CONFIGS / f"{name}.toml"


def taluva(*args: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "taluva_ai.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, **kw)


@pytest.mark.parametrize("name", ["tiny", "demo", "full", "solo-demo", "tnt-demo", "strong",
                                  "strong2", "builtin-2p", "builtin-3p", "builtin-4p"])
def test_shipped_configs_load_and_round_trip(name: str) -> None:
    cfg = load_config(config_path(name))
    import tomllib

    assert config_from_dict(tomllib.loads(config_to_toml(cfg))) == cfg


@pytest.mark.parametrize("text, message", [
    ("[selfplay]\nsimz = 3\n", r"\[selfplay\]: unknown key\(s\) simz"),
    ("itrations = 3\n", r"unknown key\(s\) or section\(s\) itrations"),
    ("[network]\npreset = 'tiny'\n", r"unknown key\(s\) or section\(s\) network"),
    ("[train]\nlr = 'fast'\n", r"\[train\]: lr must be a finite number"),
    ("[selfplay]\nroot = 'best'\n", "root must be 'puct' or 'gumbel'"),
    ("[game]\ntiles_per_player = 40\n", r"\[game\]"),
    ("[net]\npreset = 'huge'\n", r"\[net\]: net preset must be one of"),
    ("[gating]\naz = 'simz=3'\n", r"\[gating\] az: unknown parameter\(s\) simz"),
    ("[anchors]\nopponents = ['nobody']\n", r"\[anchors\] opponents: unknown agent"),
    ("[anchors]\nopponents = ['az:path=runs/x/best.pt']\n",
     r"\[anchors\] opponents: fixed agents only: az:builtin is one, az:path=runs/x/best.pt "
     r"is not \(the run's own networks play the anchors, with \[anchors\] az\)$"),
    ("[anchors]\nopponents = ['mcts:time=0.1']\n",
     r"\[anchors\] opponents: mcts:time=0.1 has a time budget, which makes a run's games "
     r"depend on the machine's speed and load; drop time=\.\.\. \(a search takes a number "
     r"of simulations, sims=\.\.\., instead\)$"),
    ("[anchors]\nopponents = ['taluva_ai.agents.mcts:MCTSAgent:time=0.01']\n",
     r"\[anchors\] opponents: taluva_ai.agents.mcts:MCTSAgent:time=0.01 has a time budget"),
    ("[gating]\naz = 'sims=4,time=0.01'\n",
     r"\[gating\] az: 'sims=4,time=0.01' has a time budget"),
    ("[warm_start]\ngames = 4\nexpert = 'mcts:time=0.01'\n",
     r"\[warm_start\] expert: mcts:time=0.01 has a time budget"),
    ("[selfplay]\nopponent = 'az:builtin,time=0.5'\nopponent_share = 0.25\n",
     r"\[selfplay\] opponent: az:builtin,time=0.5 has a time budget"),
    ("[anchors]\nopponents = ['greedy ']\n",
     r"\[anchors\] opponents: 'greedy ' has white space in it"),
    ("[game]\nnum_players = 3\n[anchors]\nopponents = ['az:builtin']\n",
     r"\[anchors\] opponents: az:builtin has no network for "
     r"3-player tables \(this installation has one for 2 players\); train one: taluva train "
     r"--config experiments/configs/builtin-3p.toml$"),
    ("[selfplay]\nrollout = 'greedy'\n", "rollout and rollout_lambda go together"),
    ("seed = [1\n", "not valid TOML"),
    ("[game]\nsolo = true\n", r"\[game\]: the solo variant has one player: num_players = 1, got 2"),
    ("[replay]\nwindow_start = -1\n", r"\[replay\] window_start must be >= 0, got -1$"),
    ("[train]\nvalue_target_mix = 1.5\n",
     r"\[train\] value_target_mix must lie in \[0, 1\], got 1.5"),
    ("[train.lr_schedule]\nlate = 1e-4\n",
     r"\[train\] lr_schedule: the key 'late' is not an iteration number"),
    ("[train.lr_schedule]\n30 = -1e-4\n",
     r"\[train\] lr_schedule: iteration 30's learning rate must be a number > 0, got -0.0001"),
    ("[train.lr_schedule]\n1 = 5e-4\n01 = 1e-5\n",
     r"\[train\] lr_schedule: the keys '1' and '01' name the same iteration"),
    ("[train]\naux_weight = -1\n", r"\[train\] aux_weight must be >= 0, got -1.0"),
    ("[train]\nelimination_weight = 0\n",
     r"\[train\] elimination_weight must lie in \(0, 100\], got 0.0"),
    ("[game]\nsolo = true\nnum_players = 1\n[train]\nelimination_weight = 4\n",
     r"\[train\] elimination_weight = 4.0: the taluva-view encoding \(this game, these "
     r"options\) cannot tell which games ended with an elimination"),
    ("[game]\nname = 'thurn_und_taxis'\n[train]\nelimination_weight = 4\n",
     r"\[train\] elimination_weight = 4.0: the tnt-observation encoding"),
    ("[train]\npriority_alpha = -0.5\n",
     r"\[train\] priority_alpha must lie in \[0, 4\], got -0.5"),
    ("[train]\npriority_alpha = nan\n",
     r"\[train\]: priority_alpha must be a finite number, got nan"),
    ("[train]\npriority_alpha = 1\npriority_beta = 2\n",
     r"\[train\] priority_beta must lie in \[0, 1\], got 2"),
    ("[train]\npriority_beta = 0.5\n",
     r"\[train\] priority_beta = 0.5 corrects prioritized replay: it needs \[train\] "
     r"priority_alpha > 0"),
    ("[train]\nmax_sample_reuse = -1\n",
     r"\[train\] max_sample_reuse must be >= 0 \(0: no cap\), got -1.0"),
    ("[train]\nrollout_target_mix = 0.5\n",
     r"\[train\] rollout_target_mix = 0.5 mixes in the rollouts' result: it needs "
     r"\[selfplay\] value_rollouts > 0"),
    ("[selfplay]\nvalue_rollouts = 4\n[train]\nrollout_target_mix = 0.6\nvalue_target_mix = 0.5\n",
     r"\[train\] value_target_mix \+ rollout_target_mix must be <= 1, got 0.5 \+ 0.6"),
    ("[selfplay]\nvalue_rollouts = -1\n", r"\[selfplay\] value_rollouts must be >= 0, got -1"),
    ("[train]\naux_weight = 0.5\n",
     r"\[train\] aux_weight = 0.5 weighs the auxiliary head's loss: it needs \[net\] "
     r"aux_head = true"),
    ("[train.lr_schedule]\n30 = 'low'\n",
     r"\[train\] lr_schedule: iteration 30's learning rate must be a number > 0, got 'low'"),
])
def test_bad_configs_fail_before_any_work(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_every_declared_bound_holds_its_default_and_refuses_past_its_edge() -> None:
    """The fields declared with ``checked`` (one loop checks them all): each default lies
    within its bounds or choices, and a value just past an edge is refused in one line that
    names the section, the key, the bounds and the value."""
    import dataclasses as dc

    from taluva_ai.agents.alphazero.config import _SECTIONS, RunConfig

    owners = [(None, RunConfig), *_SECTIONS.items()]
    tried = 0
    for section, cls in owners:
        for f in dc.fields(cls):
            bounds, choices = f.metadata.get("bounds"), f.metadata.get("choices")
            if bounds is None and not choices:
                continue
            if bounds is not None:
                assert bounds.holds(f.default), (section, f.name)
                edge = bounds.lo if bounds.lo_open else bounds.lo - 1
                value: Any = int(edge) if isinstance(f.default, int) else float(edge)
                said = f"must {'be' if bounds.text.startswith('>') else 'lie in'} {bounds.text}"
            else:
                assert f.default in choices, (section, f.name)
                value, said = "nonsense", "must be '"
            data = {f.name: value} if section is None else {section: {f.name: value}}
            with pytest.raises(ConfigError) as e:
                config_from_dict(data, "c.toml")
            where = "c.toml: " if section is None else f"c.toml: [{section}] "
            assert str(e.value).startswith(f"{where}{f.name} {said}"), str(e.value)
            assert str(e.value).endswith(f"got {value!r}"), str(e.value)
            tried += 1
    assert tried >= 50


def test_cli_refuses_a_bad_config_in_one_line_and_makes_nothing(tmp_path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[selfplay]\nsimz = 3\n")
    out = tmp_path / "run"
    res = taluva("train", "--config", str(path), "--out", str(out))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].startswith("taluva train: error:")
    assert "simz" in res.stderr and "Traceback" not in res.stderr
    assert not out.exists()
    from taluva_ai.agents.alphazero.train import TrainingRun
    from taluva_ai.errors import RunConfigError

    with pytest.raises(RunConfigError, match="holds no training run"):
        TrainingRun(tmp_path)


def _wait_for(pred, timeout: float, proc: subprocess.Popen) -> None:
    t0 = time.monotonic()
    while not pred():
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"the run ended early: {err}")
        if time.monotonic() - t0 > timeout:
            raise AssertionError("timed out")
        time.sleep(0.1)


@pytest.mark.slow  # ~20 s: a real training process killed and resumed
def test_killed_run_resumes_losing_only_the_iteration_in_progress(tmp_path) -> None:
    """A real ``taluva train`` process group is killed (SIGKILL) while iteration 1 runs; the
    resumed run redoes iteration 1 only, and the run directory is complete."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "taluva_ai.cli", "train", "--config",
         str(CONFIGS / "tiny.toml"), "--out", str(out), "--no-progress"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        state = out / "state.json"
        _wait_for(lambda: state.exists(), 240, proc)
        _wait_for(lambda: (out / "selfplay" / "iter_0001").exists(), 60, proc)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    st = json.loads(state.read_text())
    assert st["iteration"] == 0
    first = (out / "checkpoints" / "iter_0000.pt").read_bytes()

    res = taluva("train", "--resume", str(out), "--no-progress")
    assert res.returncode == 0, res.stderr
    assert "resuming" in res.stderr and "finished iteration 1" in res.stdout
    st = json.loads(state.read_text())
    assert st["iteration"] == 1 and st["format"] == "taluva-ai-az-run/1"
    assert (out / "checkpoints" / "iter_0000.pt").read_bytes() == first  # kept, not redone
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [0, 1]
    last = lines[1]
    for key in ("policy_loss", "value_loss", "policy_entropy"):
        assert np.isfinite(last["train"][key])
    sp = last["selfplay"]
    assert sp["games"] == 2 and sp["samples"] > 0 and sp["sims_per_s"] > 0
    assert sp["positions_per_s"] > 0 and sp["game_length_mean"] > 10
    assert set(last["anchors"]) == {"random"} and last["anchors"]["random"]["games"] == 2
    assert last["gating"]["games"] == 2
    assert last["best_iteration"] == st["best_iteration"]
    for name in ("config.toml", "config.json", "best.pt", "latest.pt",
                 "checkpoints/trainer_0001.pt", "selfplay/iter_0001/worker_0.npz",
                 "records/iter_0001/game_0000.jsonl", "gating/iter_0001/round_0/results.json",
                 "anchors/iter_0001/random/results.json"):
        assert (out / name).is_file(), name
    assert list((out / "tb").glob("events.out.tfevents.*"))
    assert not list(out.rglob("*.part"))
    assert load_config(out / "config.toml") == load_config(CONFIGS / "tiny.toml")
    # the record replays, and the trained network plays by name
    from taluva_ai.agents import make_agent
    from taluva_ai.agents.alphazero.train import TrainingRun
    from taluva_ai.errors import RunConfigError
    from taluva_ai.games.taluva import TaluvaGame
    from taluva_ai.records import replay_record
    from taluva_ai.tournament import play_game

    assert replay_record(out / "records" / "iter_0001" / "game_0000.jsonl").is_terminal()
    torch.set_num_threads(1)
    az = make_agent(f"az:path={out / 'best.pt'},sims=4,device=cpu", seed=1)
    result = play_game(TaluvaGame(), [az, make_agent("random", seed=2)], seed=3)
    assert result.winners
    # a new run into the same directory is refused with the way to resume
    with pytest.raises(RunConfigError, match="--resume"):
        TrainingRun(out, load_config(CONFIGS / "tiny.toml"))


def test_sprt_matches_the_gsprt_formula() -> None:
    assert expected_score(0) == 0.5
    assert expected_score(191.0) == pytest.approx(0.75, abs=0.001)
    lo, hi = sprt_bounds(0.05, 0.05)
    assert hi == pytest.approx(np.log(19)) and lo == pytest.approx(-np.log(19))
    w, d, lost = 60, 20, 20
    n = w + d + lost
    s = (w + d / 2) / n
    var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + lost * s ** 2) / n
    s0, s1 = expected_score(0), expected_score(50)
    assert sprt_llr(w, d, lost, 0, 50) == pytest.approx(n * (s1 - s0) * (2 * s - s0 - s1)
                                                     / (2 * var))
    assert sprt_llr(60, 20, 20, 0, 50) > hi  # a 70% score decides for H1
    assert sprt_llr(20, 20, 60, 0, 50) < lo
    assert sprt_llr(0, 0, 0, 0, 50) == 0.0
    assert np.isfinite(sprt_llr(10, 0, 0, 0, 50))  # no variance: one virtual draw


def test_trainer_lowers_the_loss_on_a_fixed_batch() -> None:
    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import NetConfig, build_net
    from taluva_ai.agents.alphazero.train import Trainer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    enc = make_encoder("taluva", 2)
    net = build_net(enc, NetConfig("tiny", channels=8, blocks=1))
    b = 8
    batch = _random_batch(enc, b)  # its aux targets go unused: the network has no aux head
    tr = Trainer(net, TrainSection(lr=3e-3, batch_size=b), torch.device("cpu"))
    first = tr.step(batch)
    for _ in range(15):
        last = tr.step(batch)
    assert last["loss"] < 0.5 * first["loss"]
    assert first["target_entropy"] == pytest.approx(0.0, abs=1e-6)
    assert 0 < first["policy_entropy"] <= np.log(5) + 1e-5


def test_bench_net_reports_sizes_and_speeds() -> None:
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import PRESETS, NetConfig, build_net, parameter_count
    from taluva_ai.bench import bench_net

    res = bench_net(batch_sizes=(1, 4), repeats=1, min_seconds=0.0)
    enc = make_encoder("taluva", 2)
    for preset in PRESETS:
        r = res[preset]
        assert r["parameters"] == parameter_count(build_net(enc, NetConfig(preset)))
        assert set(r["latency_ms"]) == set(r["positions_per_s"]) == {"1", "4"}
        assert r["positions_per_s"]["4"] == pytest.approx(4 / r["latency_ms"]["4"] * 1e3,
                                                          rel=0.05)
    assert res["device"] == "cpu" and res["batch_sizes"] == [1, 4]


def test_train_help_and_argument_errors(capsys) -> None:
    from taluva_ai.cli import main

    with pytest.raises(SystemExit) as info:
        main(["train", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: taluva train") and "taluva train --resume" in out
    for argv, message in ((["train"], "needs --config TOML and --out DIR"),
                          (["train", "--config", "x.toml"], "needs --config TOML and --out"),
                          (["train", "--resume", "r", "--out", "o"], "give no --config or --out"),
                          (["train", "--config", "missing.toml", "--out", "o"],
                           "cannot read the config")):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0] and err[0].startswith("taluva train: error:")


def _comparable(line: dict) -> dict:
    """A metrics line without its timings and speeds."""
    drop = {"wall_s", "positions_per_s", "decisions_per_s", "sims_per_s",
            "sims_per_s_per_worker", "phase_seconds", "elapsed_s", "iteration_cpu_s", "cpu_s"}
    out = {}
    for k, v in line.items():
        if k in drop:
            continue
        out[k] = _comparable(v) if isinstance(v, dict) else v
    return out


def _cut_to_seconds(cfg: Any, tiles: int, anchor_games: int, selfplay: dict | None = None,
                    train: dict | None = None) -> Any:
    """A recipe's config cut to run in seconds, everything else as written: iterations 0-2,
    one worker, ``tiles`` tiles each, the smallest network, 2 games and 2 steps where there
    are many, anchors against greedy at iterations 0 and 2 (``anchor_games`` games); the
    ``selfplay`` and ``train`` keys on top."""
    import dataclasses as dc

    return dc.replace(
        cfg, iterations=2, workers=1,
        game=dc.replace(cfg.game, rules={"tiles_per_player": tiles}),
        net=dc.replace(cfg.net, channels=4, blocks=1, global_hidden=8, value_hidden=8),
        warm_start=dc.replace(cfg.warm_start, games=2, steps=2),
        selfplay=dc.replace(cfg.selfplay, games=2, parallel_games=2, sims=4, fast_sims=2,
                            gumbel_m=2, leaf_batch=2, records=1, **(selfplay or {})),
        replay=dc.replace(cfg.replay, window_games=4, window_start=1, window_growth=1),
        train=dc.replace(cfg.train, steps=2, batch_size=8, **(train or {})),
        anchors=dc.replace(cfg.anchors, opponents=["greedy"], games=anchor_games, every=2,
                           az="sims=2,leaf_batch=2,rollout=none,root=gumbel"))


def _assert_same_run(a: Path, b: Path, iterations: int) -> None:
    """The runs ``a`` and ``b`` wrote the same metrics lines (timings left out) and the same
    networks of iterations ``0 .. iterations - 1``."""
    la = [json.loads(x) for x in (a / "metrics.jsonl").read_text().splitlines()]
    lb = [json.loads(x) for x in (b / "metrics.jsonl").read_text().splitlines()]
    assert [_comparable(x) for x in la] == [_comparable(x) for x in lb]
    for k in range(iterations):
        sa = torch.load(a / "checkpoints" / f"iter_{k:04d}.pt", weights_only=True)
        sb = torch.load(b / "checkpoints" / f"iter_{k:04d}.pt", weights_only=True)
        for name, t in sa["state_dict"].items():
            assert torch.equal(t, sb["state_dict"][name]), (k, name)


@pytest.mark.slow
def test_same_config_same_run_and_a_resumed_run_equals_an_uninterrupted_one(tmp_path,
                                                                           monkeypatch) -> None:
    from taluva_ai.agents.alphazero.train import TrainingRun

    cfg = load_config(CONFIGS / "tiny.toml")
    a, b = tmp_path / "a", tmp_path / "b"
    TrainingRun(a, cfg, progress=False).run()

    real = TrainingRun._iteration

    def interrupted(self, k, *args):
        if k == 1:
            self._play(1, self._best(args[3]), 1, expert=False)  # some of iteration 1
            raise KeyboardInterrupt
        return real(self, k, *args)

    monkeypatch.setattr(TrainingRun, "_iteration", interrupted)
    with pytest.raises(KeyboardInterrupt):
        TrainingRun(b, cfg, progress=False).run()
    monkeypatch.setattr(TrainingRun, "_iteration", real)
    moved = tmp_path / "moved"
    b.rename(moved)  # a run directory can move: the state names checkpoints relative to it
    b = moved
    TrainingRun(b, progress=False).run()
    best = json.loads((b / "state.json").read_text())["best"]
    assert best.startswith("checkpoints/iter_") and (b / best).is_file()

    _assert_same_run(a, b, 2)
    # the run's CPU (trainer and workers): each iteration's, and the total carried over the
    # resume; the interrupted iteration's CPU is not counted
    for run in (a, b):
        lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        each = [x["iteration_cpu_s"] for x in lines]
        assert all(c > 0 for c in each)
        assert [x["cpu_s"] for x in lines] == [round(sum(each[:i + 1]), 1)
                                             for i in range(len(each))]
        assert json.loads((run / "state.json").read_text())["cpu_s"] == lines[-1]["cpu_s"]
    for rec in ("records/iter_0001/game_0000.jsonl",
                "gating/iter_0001/round_0/games/000-0000-0.jsonl"):
        # the same games; the gating records name the networks by their paths
        assert (a / rec).read_text().replace(str(a.resolve()), "RUN") == \
            (b / rec).read_text().replace(str(b.resolve()), "RUN")


@pytest.mark.slow  # two training runs of two workers, one killed and resumed (~2 min)
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_workers_of_a_killed_training_run_end_with_it_and_the_resume_is_exact(tmp_path) -> None:
    """SIGKILL of the ``taluva train`` process alone, while its two self-play workers play
    iteration 1: the workers end at once (writing nothing more), and the resumed run makes
    the networks and metrics of an uninterrupted one."""
    from taluva_ai.agents.alphazero.train import TrainingRun

    text = (CONFIGS / "tiny.toml").read_text().replace("workers = 1", "workers = 2")
    assert "workers = 2" in text
    config = tmp_path / "two.toml"
    config.write_text(text)
    ref, out = tmp_path / "ref", tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "taluva_ai.cli", "train", "--config", str(config), "--out",
         str(out), "--no-progress"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    workers: list[int] = []
    try:
        _wait_for(lambda: (out / "selfplay" / "iter_0001").exists(), 300, proc)
        _wait_for(lambda: len(spawned_children(proc.pid)) == 2, 60, proc)
        workers = spawned_children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # the main process only
        proc.wait(timeout=30)
        alive = still_running(workers, 10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        kill_running(workers)
    assert not alive, "self-play workers outlived the killed training run"
    assert json.loads((out / "state.json").read_text())["iteration"] == 0
    res = taluva("train", "--resume", str(out), "--no-progress")
    assert res.returncode == 0, res.stderr
    TrainingRun(ref, load_config(config), progress=False).run()
    _assert_same_run(ref, out, 2)


def test_train_refuses_a_directory_that_holds_something_else(tmp_path, capsys) -> None:
    """A tournament's run directory (or any non-empty one) is never taken over by training."""
    from taluva_ai.cli import main

    out = tmp_path / "t1"
    out.mkdir()
    (out / "config.json").write_text('{"format": "taluva-ai-tournament/2"}')
    with pytest.raises(SystemExit) as info:
        main(["train", "--config", str(ROOT / "experiments" / "configs" / "tiny.toml"),
              "--out", str(out)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "is not empty (it holds config.json...)" in err
    assert (out / "config.json").read_text() == '{"format": "taluva-ai-tournament/2"}'
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]


def test_az_parameter_values_in_a_config_are_checked_before_any_work() -> None:
    from taluva_ai.agents.alphazero.config import ConfigError, check_az_params

    check_az_params("sims=24,rollout=greedy,lambda=0.5", "[gating] az")  # fine
    check_az_params("sims=24,backend=onnx,threads=1", "[anchors] az")  # the az agent's own
    with pytest.raises(ConfigError, match=r"\[anchors\] az: unknown parameter\(s\) colour; "
                       r"known: backend, c, chance, device, "):
        check_az_params("colour=1", "[anchors] az")
    with pytest.raises(ConfigError, match=r"\[gating\] az: parameter sims='abc' must be"):
        check_az_params("sims=abc", "[gating] az")
    with pytest.raises(ConfigError, match=r"lambda must be a number in \[0, 1\], got 2"):
        check_az_params("lambda=2", "[anchors] az")


@pytest.mark.slow  # a solo training run with gating
def test_a_solo_run_trains_gates_on_paired_scores_and_its_model_plays(tmp_path) -> None:
    """The solo variant through the whole pipeline: one value output on the score scale,
    gating and anchors by paired seeded games, and the model by name in ``taluva play``."""
    import dataclasses

    from taluva_ai.agents.alphazero.train import TrainingRun

    cfg = load_config(CONFIGS / "tiny.toml")
    cfg = dataclasses.replace(
        cfg, game=dataclasses.replace(cfg.game, num_players=1, rules={"solo": True}),
        anchors=dataclasses.replace(cfg.anchors, opponents=["greedy"]))
    out = tmp_path / "solo"
    TrainingRun(out, cfg, progress=False).run()
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [ln["iteration"] for ln in lines] == [0, 1]
    sp = lines[1]["selfplay"]
    assert "first_seat_score" not in sp and isinstance(sp["mean_score"], float)
    g = lines[1]["gating"]
    assert g["games"] == 2 and g["wins"] + g["draws"] + g["losses"] == 2
    anchor = lines[1]["anchors"]["greedy"]
    assert anchor["games"] == 2 and "elo" not in anchor
    rows = [json.loads(x) for x in
            (out / "anchors" / "iter_0001" / "greedy" / "games" / "greedy.jsonl")
            .read_text().splitlines()]
    assert anchor["opponent_mean_score"] == sum(r["score"] for r in rows) / 2
    payload = torch.load(out / "best.pt", weights_only=True)
    assert payload["encoder"]["num_players"] == 1 and payload["encoder"]["extra_actions"] == 6
    res = taluva("play", "--solo", "--players", f"az:path={out / 'best.pt'},sims=4",
                 "--seed", "3")
    assert res.returncode == 0, res.stderr
    assert "\n  total  " in res.stdout and "result: " in res.stdout


def test_the_built_in_network_is_an_anchor(tmp_path) -> None:
    """``az:builtin`` (a fixed network) plays the run's best network in the anchor games, its
    checksum pinned in the anchor tournament; ``az:path=...`` is refused (above)."""
    from taluva_ai.agents.alphazero.builtin import load_builtin
    from taluva_ai.agents.alphazero.train import TrainingRun

    spec = "az:builtin,sims=8"
    config = tmp_path / "c.toml"
    config.write_text(micro_run_config(5, f"[gating]\nenabled = false\n\n[anchors]\n"
                                          f"opponents = ['{spec}']\ngames = 2\naz = 'sims=4'\n"))
    torch.set_num_threads(1)
    TrainingRun(tmp_path / "run", load_config(config), progress=False).run()
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [sorted(line.get("anchors") or {}) for line in lines] == [[spec], [spec]]
    anchor = lines[1]["anchors"][spec]
    assert anchor["games"] == 2 and anchor["wins"] + anchor["draws"] + anchor["losses"] == 2
    table = json.loads((tmp_path / "run" / "anchors" / "iter_0001" / "az_builtin_sims=8"
                        / "results.json").read_text())
    _, _, info = load_builtin()
    assert table["config"]["agent_files"][spec] == {"builtin": info["sha256"]}


# -- damaged run files (issue 19, B.13) --------------------------------------------------------

MICRO = micro_run_config(3, """
[gating]
enabled = false

[anchors]
opponents = []
""")


@pytest.fixture(scope="module")
def micro_run(tmp_path_factory) -> Path:
    """A finished run of two iterations (0 and 1) of a very small config."""
    return finished_training_run(tmp_path_factory, "micro", MICRO)


def _copy_run(run: Path, tmp_path: Path) -> Path:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(run, out)
    return out


def _resume(out: Path, capsys, *more: str) -> tuple[int, list[str]]:
    """``taluva train --resume OUT``: its exit status and its stderr lines (the first,
    'resuming ...', left out)."""
    from taluva_ai.cli import main

    capsys.readouterr()
    try:
        code = main(["train", "--resume", str(out), "--no-progress", *more])
    except SystemExit as e:
        code = int(e.code or 0)
    err = [line for line in capsys.readouterr().err.splitlines()
           if not line.startswith(f"taluva train: {out} ")]
    return code, err


def _damaged(out: Path, rel: str, k: int) -> str:
    """The error line of a run file whose checksum does not match."""
    return (rf"taluva train: error: {out / rel}: damaged \(its SHA-256 is [0-9a-f]{{12}}\.\.\., "
            rf"not the [0-9a-f]{{12}}\.\.\. recorded when it was written\); redo the run from "
            rf"iteration {k}: taluva train --resume {out} --redo {k}")


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_truncated_sample_file_is_named_with_the_iteration_to_redo(micro_run, tmp_path,
                                                                     capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    npz = out / "selfplay" / "iter_0001" / "worker_0.npz"
    npz.write_bytes(npz.read_bytes()[:200])  # a BadZipFile before
    code, err = _resume(out, capsys)
    assert code == 1 and len(err) == 1
    assert re.fullmatch(_damaged(out, "selfplay/iter_0001/worker_0.npz", 1), err[0]), err


def test_a_missing_sample_file_is_named_not_skipped(micro_run, tmp_path, capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    (out / "selfplay" / "iter_0000" / "worker_0.npz").unlink()  # skipped silently before
    code, err = _resume(out, capsys)
    assert (code, err) == (1, [
        f"taluva train: error: {out}/selfplay/iter_0000/worker_0.npz: missing; redo the run "
        f"from iteration 0: taluva train --resume {out} --redo 0"])


def test_a_truncated_trainer_checkpoint_is_named(micro_run, tmp_path, capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    trainer = out / "checkpoints" / "trainer_0001.pt"
    trainer.write_bytes(trainer.read_bytes()[:1000])  # ': Invalid argument' before
    code, err = _resume(out, capsys)
    assert code == 1 and len(err) == 1
    assert re.fullmatch(_damaged(out, "checkpoints/trainer_0001.pt", 1), err[0]), err


def test_a_crafted_trainer_checkpoint_is_named(micro_run, tmp_path, capsys) -> None:
    """A file that is not an optimiser state (here a pickled object torch refuses to load
    with weights_only) is named by its checksum; in a run from before the checksums (no
    'files' in state.json), by the loader."""
    out = _copy_run(micro_run, tmp_path)
    trainer = out / "checkpoints" / "trainer_0001.pt"
    torch.save({"optimizer": Path("x")}, trainer)  # a raw UnpicklingError before
    code, err = _resume(out, capsys)
    assert code == 1 and len(err) == 1
    assert re.fullmatch(_damaged(out, "checkpoints/trainer_0001.pt", 1), err[0]), err
    state = json.loads((out / "state.json").read_text())
    for key in ("files", "metrics", "sha256"):
        del state[key]
    (out / "state.json").write_text(json.dumps(state))
    code, err = _resume(out, capsys)
    assert code == 1 and len(err) == 1
    assert err[0].startswith(f"taluva train: error: {trainer}: unreadable (UnpicklingError: ")
    assert err[0].endswith(f"); redo the run from iteration 1: taluva train --resume {out} "
                           "--redo 1")


def test_a_truncated_metrics_file_is_named(micro_run, tmp_path, capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    metrics = out / "metrics.jsonl"
    metrics.write_bytes(metrics.read_bytes()[:-30])  # a raw JSONDecodeError before
    code, err = _resume(out, capsys)
    assert (code, err) == (1, [
        f"taluva train: error: {metrics}: line 2 (iteration 1) damaged (it does not match the "
        f"checksum state.json recorded); redo the run from iteration 1: taluva train --resume "
        f"{out} --redo 1"])


def test_a_flipped_byte_in_a_network_is_found(micro_run, tmp_path, capsys) -> None:
    from taluva_ai.agents.alphazero.net import CheckpointError, load_checkpoint

    out = _copy_run(micro_run, tmp_path)
    ckpt = out / "checkpoints" / "iter_0001.pt"
    good = ckpt.read_bytes()
    weights = torch.load(ckpt, weights_only=True)["state_dict"]
    name = max(weights, key=lambda n: weights[n].numel())
    at = good.find(weights[name].numpy().tobytes())  # a weight's bytes: still a valid file
    assert at > 0
    _flip(ckpt, at + 5)
    torch.load(ckpt, weights_only=True)  # it loads (silently, before)
    code, err = _resume(out, capsys)
    assert code == 1 and len(err) == 1
    assert re.fullmatch(_damaged(out, "checkpoints/iter_0001.pt", 1), err[0]), err
    # outside its run (az:path=...), the checksum saved in the checkpoint finds it
    with pytest.raises(CheckpointError, match=r"iter_0001.pt: damaged \(its weights or "
                                              r"settings do not match the checksum"):
        load_checkpoint(ckpt)
    ckpt.write_bytes(good)
    # best.pt and latest.pt are copies: restored from checkpoints/, saying so
    best = out / json.loads((out / "state.json").read_text())["best"]
    _flip(out / "best.pt", at + 5)
    code, err = _resume(out, capsys)
    assert code == 0 and len(err) == 1
    assert re.fullmatch(rf"{out / 'best.pt'}: damaged \(.*\); restored from {best}", err[0])
    assert (out / "best.pt").read_bytes() == best.read_bytes()


def test_a_damaged_file_training_does_not_read_is_named_and_the_run_goes_on(
        micro_run, tmp_path, capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    rec = out / "records" / "iter_0001" / "game_0000.jsonl"
    rec.write_text(rec.read_text() + "\n")
    code, err = _resume(out, capsys)
    assert code == 0 and len(err) == 1
    assert re.fullmatch(rf"{rec}: damaged \(.*\); training does not read it and goes on \(to "
                        rf"make it again: taluva train --resume {out} --redo 1\)", err[0]), err


def test_a_damaged_state_file_is_named(micro_run, tmp_path, capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    state = out / "state.json"
    text = state.read_text()
    assert text.count('"iteration": 1,') == 1
    state.write_text(text.replace('"iteration": 1,', '"iteration": 0,'))  # valid JSON
    code, err = _resume(out, capsys)
    assert (code, err) == (1, [
        f"taluva train: error: {state}: damaged (its content does not match its checksum); "
        f"start the run again: taluva train --resume {out} --redo 0"])
    code, err = _resume(out, capsys, "--redo", "0")  # the remedy: the same run again
    assert code == 0, err
    before = json.loads((micro_run / "state.json").read_text())
    after = json.loads(state.read_text())
    assert after["iteration"] == 1
    for rel in ("checkpoints/iter_0000.pt", "checkpoints/iter_0001.pt",
                "selfplay/iter_0001/worker_0.npz", "best.pt"):
        assert after["files"][rel] == before["files"][rel], rel


def test_a_run_from_before_the_checksums_gets_them_on_its_first_resume(micro_run, tmp_path,
                                                                       capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    recorded = json.loads((out / "state.json").read_text())
    old = {k: v for k, v in recorded.items() if k not in ("files", "metrics", "sha256")}
    (out / "state.json").write_text(json.dumps(old))
    code, err = _resume(out, capsys)
    assert code == 0 and err == [
        f"taluva train: {out / 'state.json'}: now records the checksums of the run's files "
        "(checked from the next resume on)"]
    assert json.loads((out / "state.json").read_text()) == recorded
    assert _resume(out, capsys) == (0, [])


def test_lr_schedule_is_piecewise_constant_by_iteration() -> None:
    from taluva_ai.agents.alphazero.config import TrainSection

    tr = TrainSection(lr=2e-3, lr_schedule={"60": 2e-4, "31": 5e-4})
    assert [tr.lr_at(k) for k in (0, 30, 31, 59, 60, 200)] == [2e-3, 2e-3, 5e-4, 5e-4, 2e-4,
                                                                2e-4]
    assert TrainSection(lr=1e-3).lr_at(5) == 1e-3
    assert TrainSection(lr=1e-3, lr_schedule={"0": 3e-3}).lr_at(0) == 3e-3


def _resume_one_more(micro_run: Path, tmp_path: Path, capsys, old: str, new: str
                     ) -> tuple[Path, list[dict]]:
    """A copy of ``micro_run`` whose config.toml has ``old`` replaced by ``new`` and one more
    iteration, resumed to its end: the copy and its metrics lines."""
    out = _copy_run(micro_run, tmp_path)
    text = (out / "config.toml").read_text()
    assert "iterations = 1\n" in text and old in text
    (out / "config.toml").write_text(
        text.replace("iterations = 1\n", "iterations = 2\n").replace(old, new))
    code, err = _resume(out, capsys)
    assert code == 0, err
    return out, [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]


def test_max_sample_reuse_caps_the_steps_by_the_buffer_s_size() -> None:
    from taluva_ai.agents.alphazero.config import TrainSection

    tr = TrainSection(steps=80, batch_size=256, max_sample_reuse=4.0)
    # 1,734 samples (one iteration's, as after a resume from a pack): ceil(4 * 1734 / 256) = 28
    assert [tr.steps_for(n) for n in (0, 1, 256, 1734, 5120, 5121, 20000)] == \
        [0, 1, 4, 28, 80, 80, 80]
    assert [TrainSection(steps=80).steps_for(n) for n in (0, 1, 20000)] == [0, 80, 80]


def test_a_resumed_run_takes_max_sample_reuse_from_its_config(micro_run, tmp_path,
                                                              capsys) -> None:
    assert "\n[train]\nsteps = 2\nbatch_size = 8\nmax_sample_reuse = 0.0\n" in \
        (micro_run / "config.toml").read_text()
    _, lines = _resume_one_more(micro_run, tmp_path, capsys, "max_sample_reuse = 0.0\n",
                                "max_sample_reuse = 0.05\n")
    assert [ln["train"]["steps"] for ln in lines[1:]] == [2, 1]
    assert lines[2]["train"]["buffer_samples"] <= 160  # so ceil(0.05 * samples / 8) == 1


def test_a_resumed_run_trains_at_its_config_s_learning_rate(micro_run, tmp_path,
                                                            capsys) -> None:
    """An optimiser state saved at one rate used to bring it back on resume, so an edited
    ``lr`` or ``lr_schedule`` in the run's config.toml was silently ignored."""
    out, lines = _resume_one_more(micro_run, tmp_path, capsys, "\n[train.lr_schedule]\n",
                                  "\n[train.lr_schedule]\n2 = 0.000125\n")
    base = load_config(micro_run / "config.toml").train.lr
    assert [ln["train"]["lr"] for ln in lines] == [base, base, 0.000125]
    opt = torch.load(out / "checkpoints" / "trainer_0002.pt", weights_only=True)["optimizer"]
    assert [g["lr"] for g in opt["param_groups"]] == [0.000125, 0.000125]


def test_redo_makes_the_same_iteration_again(micro_run, tmp_path, capsys) -> None:
    """The remedy a damaged file names: --redo K goes back to the end of iteration K - 1 and
    makes the same files again."""
    out = _copy_run(micro_run, tmp_path)
    before = json.loads((out / "state.json").read_text())
    npz = out / "selfplay" / "iter_0001" / "worker_0.npz"
    npz.write_bytes(b"")
    assert _resume(out, capsys)[0] == 1
    code, err = _resume(out, capsys, "--redo", "1")
    assert code == 0, err
    assert err == ["taluva train: redoing iterations 1 to 1: the files of iterations 1 "
                   "onwards are removed"]
    after = json.loads((out / "state.json").read_text())
    for rel in ("checkpoints/iter_0001.pt", "checkpoints/trainer_0001.pt",
                "selfplay/iter_0001/worker_0.npz", "records/iter_0001/game_0000.jsonl",
                "latest.pt", "best.pt", "checkpoints/iter_0000.pt"):
        assert after["files"][rel] == before["files"][rel], rel
    assert sorted(after["files"]) == sorted(before["files"])
    assert [_comparable(json.loads(x)) for x in (out / "metrics.jsonl").read_text()
            .splitlines()] == [_comparable(json.loads(x)) for x in (micro_run / "metrics.jsonl")
                               .read_text().splitlines()]
    assert {k: after[k] for k in ("iteration", "best", "best_iteration", "promotions")} == \
        {k: before[k] for k in ("iteration", "best", "best_iteration", "promotions")}
    assert _resume(out, capsys)[0] == 0  # and it resumes cleanly


def test_redo_arguments_are_checked(micro_run, tmp_path, capsys) -> None:
    from taluva_ai.cli import main

    out = _copy_run(micro_run, tmp_path)
    code, err = _resume(out, capsys, "--redo", "3")
    assert (code, err) == (2, [
        f"taluva train: error: --redo 3: {out} has finished iterations 0 to 1; give a "
        "finished iteration (or resume without --redo)"])
    with pytest.raises(SystemExit) as info:
        main(["train", "--config", "x.toml", "--out", "o", "--redo", "1"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "taluva train: error: --redo N goes with --resume DIR (it redoes iterations of a run)")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_names_the_file_and_the_resume_then_finishes(micro_run, tmp_path,
                                                                 capsys) -> None:
    """latest.pt's temporary file is /dev/full: copying the network there fails with
    ENOSPC, as on a full disk (': No space left on device' before, without the file)."""
    out = _copy_run(micro_run, tmp_path)
    cfg = out / "config.toml"
    cfg.write_text(cfg.read_text().replace("iterations = 1", "iterations = 2"))
    (out / ".latest.pt.part").symlink_to("/dev/full")
    code, err = _resume(out, capsys)
    assert (code, err) == (1, [
        f"{out / 'latest.pt'}: No space left on device; free some disk space, then continue "
        f"with: taluva train --resume {out}"])
    assert json.loads((out / "state.json").read_text())["iteration"] == 1
    assert not (out / ".latest.pt.part").exists()
    code, err = _resume(out, capsys)
    assert code == 0, err
    assert json.loads((out / "state.json").read_text())["iteration"] == 2


def test_a_growing_replay_window() -> None:
    """``[replay] window_start`` / ``window_growth``: min(window_games, start + growth * k)
    games at iteration k; without a start the window is fixed."""
    from taluva_ai.agents.alphazero.config import ReplaySection

    grows = ReplaySection(window_games=1200, window_start=336, window_growth=64)
    assert [grows.window_at(k) for k in (0, 1, 2, 13, 14, 100)] == [336, 400, 464, 1168,
                                                                      1200, 1200]
    assert ReplaySection(window_games=500).window_at(7) == 500


# -- the strong recipe (issue 20, item 4) ------------------------------------------------------


@pytest.mark.parametrize("name", ["strong", "strong2"])
def test_the_strong_recipe_runs_at_a_tiny_size(tmp_path, name: str, capsys) -> None:
    """experiments/journal/configs/strong.toml (and strong2.toml) with its sizes cut to seconds,
    everything else as written: the Gumbel root with playout cap randomisation, view radius
    11, a growing replay window, no gating (the latest network is the best) and anchors at
    lambda 0; strong2 adds a 1x1 stem, the aux head and a step schedule of the rate."""
    from taluva_ai.agents.alphazero.train import TrainingRun

    cfg = load_config(JOURNAL_CONFIGS / f"{name}.toml")
    v2 = name == "strong2"
    assert (cfg.net.stem_kernel, cfg.net.aux_head) == ((1, True) if v2 else (3, False))
    assert cfg.train.lr_schedule == ({"30": 5e-4} if v2 else {})
    assert (cfg.selfplay.root, cfg.selfplay.full_search_prob, cfg.encoder.view_radius,
            cfg.gating.enabled, cfg.selfplay.rollout) == ("gumbel", 0.25, 11, False, "none")
    assert (cfg.replay.window_start, cfg.replay.window_growth) == (336, 64)
    cfg = _cut_to_seconds(
        cfg, tiles=4, anchor_games=2,
        # strong2 here also meets a league opponent in every game: the built-in network,
        # whose file the metrics name
        selfplay=({"opponent": "az:builtin,sims=2,leaf_batch=2", "opponent_share": 1.0}
                  if v2 else {}),
        train={"lr_schedule": {"2": 5e-4} if v2 else {}})
    out = tmp_path / "strong"
    TrainingRun(out, cfg, progress=True).run()
    # stderr is not a terminal here: the nested bars come as plain lines, no redraw codes
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    bars = [x.split(":")[0] for x in err.splitlines() if "%|" in x]
    assert bars[0] == "iterations" and "self-play 1" in bars and "train 2" in bars
    assert [x for x in err.splitlines() if x.startswith("iterations:")][-1].startswith(
        "iterations: 100%")
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [ln["iteration"] for ln in lines] == [0, 1, 2]
    assert [ln["best_iteration"] for ln in lines] == [0, 1, 2]  # no gating: always the latest
    assert all("gating" not in ln for ln in lines)
    assert [sorted(ln.get("anchors") or {}) for ln in lines] == [["greedy"], [], ["greedy"]]
    # the window grows, 1 + k games at iteration k, in whole sets of 2 games: at iteration 1
    # the newest set holds the window's 2 games and the warm start's leaves; at 2 (window 3)
    # the newest set alone does not, so the one before stays
    assert [ln["train"]["buffer_games"] for ln in lines] == [2, 2, 4]
    assert [ln["selfplay"]["games"] for ln in lines] == [2, 2, 2]
    assert [ln["train"]["lr"] for ln in lines] == [0.002, 0.002, 5e-4 if v2 else 0.002]
    assert ["aux_loss" in ln["train"] for ln in lines] == [v2] * 3
    assert [ln["selfplay"].get("opponent_games") for ln in lines] == \
        ([None, 2, 2] if v2 else [None] * 3)  # (iteration 0: the warm start's expert games)
    if v2:
        assert 0.0 <= lines[1]["selfplay"]["opponent_score"] <= 1.0
        from taluva_ai.agents.alphazero.builtin import load_builtin

        assert [ln["selfplay"].get("opponent_files") for ln in lines] == \
            [None] + [{"builtin": load_builtin()[2]["sha256"]}] * 2
        header = json.loads((out / "records" / "iter_0001" / "game_0000.jsonl").read_text()
                            .splitlines()[0])
        assert sorted(header["players"]) == ["az-selfplay:iteration=1",
                                             "az:builtin,sims=2,leaf_batch=2"]


def test_the_committed_pack_of_the_shipped_network_is_whole_and_holds_its_checkpoint() -> None:
    """packs/ keeps the run of the built-in 2-player network (docs/alphazero.md, "The built-in
    network"): the pack its description names (``source.run``) is whole (every file it lists
    has its recorded checksum, its metrics are whole), it runs the network's game and
    encoding, and it holds the shipped checkpoint itself (``source.checkpoint_sha256``), so
    ``experiments/ship_builtin.py`` can package it again."""
    from taluva_ai.agents.alphazero.builtin import load_builtin
    from taluva_ai.agents.alphazero.train import read_metrics, read_state
    from taluva_ai.runfiles import sha256_file

    info = load_builtin()[2]
    source = info["source"]
    pack = ROOT / "packs" / source["run"]
    state = read_state(pack)
    assert state is not None and state["pack"]["iteration"] == state["iteration"]
    assert {rel: sha256_file(pack / rel) for rel in state["files"]} == state["files"]
    lines, problem = read_metrics(pack, state, state["iteration"])
    assert problem is None
    assert [ln["iteration"] for ln in lines] == list(range(state["iteration"] + 1))
    cfg = load_config(pack / "config.toml")
    assert (cfg.game.name, cfg.game.num_players) == (info["game"]["name"],
                                                    info["game"]["num_players"])
    assert cfg.encoder.build_sites == bool(info["encoder_options"].get("build_sites"))
    shipped = [p for p in pack.rglob(source["checkpoint"])
               if sha256_file(p) == source["checkpoint_sha256"]]
    assert shipped, f"{pack} holds no {source['checkpoint']} with the shipped checksum"



def test_the_committed_pack_of_the_2_player_recipe_is_whole_and_runs_the_recipe() -> None:
    """packs/builtin-2p is the recipe's run in progress (experiments/journal/
    2026-12-07-builtin-2p.md), to be continued with ``taluva train --resume``: every file it
    lists has its checksum, its metrics are whole, and its config is the recipe's."""
    from taluva_ai.agents.alphazero.train import read_metrics, read_state
    from taluva_ai.runfiles import sha256_file

    pack = ROOT / "packs" / "builtin-2p"
    state = read_state(pack)
    assert state is not None and state["pack"]["iteration"] == state["iteration"] >= 8
    assert {rel: sha256_file(pack / rel) for rel in state["files"]} == state["files"]
    lines, problem = read_metrics(pack, state, state["iteration"])
    assert problem is None
    assert [ln["iteration"] for ln in lines] == list(range(state["iteration"] + 1))
    recipe = load_config(ROOT / "experiments" / "configs" / "builtin-2p.toml")
    assert load_config(pack / "config.toml") == recipe

# -- the auxiliary head (KataGo's auxiliary targets; [net] aux_head) ---------------------------


def _random_batch(enc, b: int, seed: int = 0, unknown: bool = False):
    """A batch of random planes, 5 legal ids each (the first the target), values [1, -1] and
    random aux and ownership targets (NaN and not known: ``unknown``)."""
    from taluva_ai.agents.alphazero.replay import Batch

    rng = np.random.default_rng(seed)
    mask = np.zeros((b, enc.num_actions), dtype=bool)
    target = np.zeros((b, enc.num_actions), dtype=np.float32)
    for i in range(b):
        ids = rng.choice(enc.num_actions, 5, replace=False)
        mask[i, ids] = True
        target[i, ids[0]] = 1.0
    aux = rng.random((b, enc.num_players, enc.num_aux)).astype(np.float32)
    if unknown:
        aux[:] = np.nan
    own = (rng.integers(0, 2, (b, enc.num_ownership, enc.side, enc.side)) * enc.valid) \
        .astype(np.float32)
    known = np.full(b, not unknown)
    if unknown:
        own[:] = 0.0
    return Batch(rng.integers(0, 2, (b, enc.spatial_planes, enc.side, enc.side))
                 .astype(np.float32), rng.random((b, enc.num_globals)).astype(np.float32),
                 mask, target, np.tile(np.array([[1.0, -1.0]], dtype=np.float32), (b, 1)), aux,
                 own, known)


def test_the_aux_head_learns_its_targets_and_leaves_play_unchanged() -> None:
    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import NetConfig, build_net, onnx_forward
    from taluva_ai.agents.alphazero.train import Trainer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    enc = make_encoder("taluva", 2, view_radius=5)
    plain = build_net(enc, NetConfig("tiny", channels=8, blocks=1))
    torch.manual_seed(0)
    net = build_net(enc, NetConfig("tiny", channels=8, blocks=1, aux_head=True)).eval()
    batch = _random_batch(enc, 8)
    sp, gl = torch.from_numpy(batch.spatial), torch.from_numpy(batch.globals)
    with torch.no_grad():
        logits, values, aux = net.forward_aux(sp, gl)
        same = net(sp, gl)
    assert aux.shape == (8, 2, 4) and ((aux > 0) & (aux < 1)).all()
    assert torch.equal(same[0], logits) and torch.equal(same[1], values)
    # the head's weights are all the difference: the trunk and the other heads are as built
    extra = sorted(set(net.state_dict()) - set(plain.state_dict()))
    assert extra == ["aux_fc.0.bias", "aux_fc.0.weight", "aux_fc.2.bias", "aux_fc.2.weight"]
    with pytest.raises(ValueError, match="no auxiliary head"):
        plain.forward_aux(sp, gl)
    ort = onnx_forward(net, enc, threads=1)  # the export holds no auxiliary output
    got = ort(batch.spatial, batch.globals)
    assert len(got) == 2
    np.testing.assert_allclose(got[1], values.numpy(), rtol=0, atol=1e-5)
    tr = Trainer(net, TrainSection(lr=3e-3, batch_size=8, aux_weight=2.0), torch.device("cpu"))
    first = tr.step(batch)
    for _ in range(30):
        last = tr.step(batch)
    assert last["aux_loss"] < 0.5 * first["aux_loss"]
    before = {k: v.clone() for k, v in net.state_dict().items()}
    seen = tr.evaluate(batch)  # measures without training
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in before.items())
    assert set(seen) == set(last) and seen["aux_loss"] < first["aux_loss"]
    assert first["loss"] == pytest.approx(first["policy_loss"] + first["value_loss"]
                                          + 2.0 * first["aux_loss"], rel=1e-5)
    # unknown targets (NaN: samples from before) add nothing
    blind = tr.step(_random_batch(enc, 8, seed=1, unknown=True))
    assert blind["aux_loss"] == 0.0 and np.isfinite(blind["loss"])
    assert "aux_loss" not in Trainer(plain, TrainSection(batch_size=8), torch.device("cpu")) \
        .step(batch)


@pytest.mark.parametrize(("base", "grown_heads", "head", "groups"), [
    ({}, {"aux_head": True}, "aux_fc", (2, 4)),
    ({"aux_head": True}, {"aux_head": True, "ownership_head": True}, "ownership_out", (4, 6)),
])
def test_a_training_head_is_added_to_or_dropped_from_a_checkpoint_and_its_optimiser(
        tmp_path, base, grown_heads, head, groups) -> None:
    """The aux head added to a network without one, the ownership head to one with the aux
    head (strong2's networks): the rest and its optimiser state go on and the new head starts
    fresh; dropped, the head and its optimiser groups go."""
    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import (
        CheckpointError,
        NetConfig,
        build_net,
        load_checkpoint,
        net_from_checkpoint,
        save_checkpoint,
    )
    from taluva_ai.agents.alphazero.train import Trainer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    enc = make_encoder("taluva", 2, view_radius=5)
    cpu = torch.device("cpu")
    small = NetConfig("tiny", channels=8, blocks=1, **base)
    big = NetConfig("tiny", channels=8, blocks=1, **grown_heads)
    net = build_net(enc, small)
    tr = Trainer(net, TrainSection(batch_size=8), cpu)
    tr.step(_random_batch(enc, 8))
    save_checkpoint(tmp_path / "a.pt", net, enc, small, {"name": "taluva", "options": {}})
    payload = load_checkpoint(tmp_path / "a.pt")
    grown, cfg = net_from_checkpoint(payload, tmp_path / "a.pt", enc, big)
    assert cfg == big and getattr(grown, head) is not None
    for k, v in net.state_dict().items():
        assert torch.equal(grown.state_dict()[k], v), k
    tr2 = Trainer(grown, TrainSection(batch_size=8), cpu)
    tr2.load_optimizer_state(tr.optimizer.state_dict())
    assert len(tr2.optimizer.param_groups) == groups[1]
    new = dict(grown.named_parameters())
    for name, p in net.named_parameters():  # every old parameter keeps its moments
        assert torch.equal(tr2.optimizer.state[new[name]]["exp_avg"],
                           tr.optimizer.state[p]["exp_avg"]), name
    loss = {"aux_fc": "aux_loss", "ownership_out": "ownership_loss"}[head]
    assert loss in tr2.step(_random_batch(enc, 8))
    save_checkpoint(tmp_path / "b.pt", grown, enc, big, {"name": "taluva", "options": {}})
    back, cfg = net_from_checkpoint(load_checkpoint(tmp_path / "b.pt"), tmp_path / "b.pt", enc)
    assert cfg == big
    for k, v in grown.state_dict().items():
        assert torch.equal(back.state_dict()[k], v), k
    shrunk, cfg = net_from_checkpoint(load_checkpoint(tmp_path / "b.pt"), tmp_path / "b.pt",
                                      enc, small)
    assert cfg == small and getattr(shrunk, head, None) is None
    tr3 = Trainer(shrunk, TrainSection(batch_size=8), cpu)
    tr3.load_optimizer_state(tr2.optimizer.state_dict())
    assert len(tr3.optimizer.param_groups) == groups[0]
    with pytest.raises(CheckpointError, match=r"another network shape: channels 8 "
                                              r"\(expected 16\)"):
        net_from_checkpoint(payload, tmp_path / "a.pt", enc, NetConfig("tiny", **grown_heads))


def test_the_ownership_head_learns_its_targets_and_leaves_play_unchanged() -> None:
    """KataGo's ownership target: a 1x1 convolution of the value features, one logit per
    pixel and slot; its loss is the binary cross-entropy per board pixel and slot over the
    samples with targets, checked here against a computation of its own."""
    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import NetConfig, build_net, onnx_forward
    from taluva_ai.agents.alphazero.train import Trainer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    enc = make_encoder("taluva", 2, view_radius=5)
    plain = build_net(enc, NetConfig("tiny", channels=8, blocks=1, aux_head=True))
    torch.manual_seed(0)
    net = build_net(enc, NetConfig("tiny", channels=8, blocks=1, aux_head=True,
                                   ownership_head=True)).eval()
    assert sorted(set(net.state_dict()) - set(plain.state_dict())) == [
        "ownership_out.bias", "ownership_out.weight"]
    batch = _random_batch(enc, 8)
    sp, gl = torch.from_numpy(batch.spatial), torch.from_numpy(batch.globals)
    with torch.no_grad():
        logits, values, aux, own = net.forward_train(sp, gl)
        same = net(sp, gl)
    assert own.shape == (8, 2, enc.side, enc.side) and aux.shape == (8, 2, 4)
    assert (own[:, :, ~torch.from_numpy(enc.valid.copy())] == 0).all()
    assert torch.equal(same[0], logits) and torch.equal(same[1], values)
    assert len(onnx_forward(net, enc, threads=1)(batch.spatial, batch.globals)) == 2
    tr = Trainer(net, TrainSection(lr=1e-2, batch_size=8, ownership_weight=0.5),
                 torch.device("cpu"))
    assert len(tr.optimizer.param_groups) == 6  # trunk, aux head, ownership head: 2 each
    seen = tr.evaluate(batch)
    x = own.numpy()[:, :, enc.valid]  # [B, 2, valid pixels]
    y = batch.ownership[:, :, enc.valid]
    bce = np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))
    assert seen["ownership_loss"] == pytest.approx(float(bce.mean()), rel=1e-5)
    assert seen["loss"] == pytest.approx(seen["policy_loss"] + seen["value_loss"] +
                                         seen["aux_loss"] + 0.5 * seen["ownership_loss"],
                                         rel=1e-5)
    # a target the planes give (slot 0: plane 3, slot 1: its complement) is learnt
    batch.ownership[:, 0] = batch.spatial[:, 3] * enc.valid
    batch.ownership[:, 1] = (1 - batch.spatial[:, 3]) * enc.valid
    first = tr.step(batch)
    for _ in range(60):
        last = tr.step(batch)
    assert last["ownership_loss"] < 0.5 * first["ownership_loss"]
    blind = tr.step(_random_batch(enc, 8, seed=1, unknown=True))  # no targets: no loss
    assert blind["ownership_loss"] == 0.0 and np.isfinite(blind["loss"])
    half = _random_batch(enc, 8, seed=2)
    half.ownership_known[4:] = False
    net.eval()  # as evaluate() measures
    with torch.no_grad():
        x = net.forward_train(torch.from_numpy(half.spatial),
                              torch.from_numpy(half.globals))[3].numpy()[:4][:, :, enc.valid]
    y = half.ownership[:4][:, :, enc.valid]
    bce = np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))
    assert tr.evaluate(half)["ownership_loss"] == pytest.approx(float(bce.mean()), rel=1e-5)
    huge = Trainer(net, TrainSection(batch_size=8, ownership_weight=1e308), torch.device("cpu"))
    with pytest.raises(FloatingPointError, match=r"not finite \(inf\) while each part is: "
                                                 r"value_weight 1, aux_weight 1 or "
                                                 r"ownership_weight 1e\+308 in \[train\] is too "
                                                 "large"):
        huge.step(batch)


@pytest.mark.parametrize(("selfplay", "message"), [
    ({"opponent": "greedy"}, r"\[selfplay\] opponent and opponent_share come together"),
    ({"opponent_share": 0.5}, r"\[selfplay\] opponent and opponent_share come together"),
    ({"opponent": "greedy", "opponent_share": 1.5},
     r"\[selfplay\] opponent_share must lie in \[0, 1\], got 1.5"),
    ({"opponent": "grready", "opponent_share": 0.5}, r"\[selfplay\] opponent: .*grready"),
    ({"opponent": "az:path=runs/x/best.pt", "opponent_share": 0.5},
     r"\[selfplay\] opponent: fixed agents only: az:builtin is one, az:path=runs/x/best.pt is "
     r"not \(the run's own networks play the other seats\)$"),
    # white space would let az:path=... past the check (the agent factory strips it)
    ({"opponent": " az:path=runs/x/best.pt", "opponent_share": 0.5},
     r"\[selfplay\] opponent: ' az:path=runs/x/best.pt' has white space in it; write an agent "
     r"spec without any"),
    ({"opponent": "az:builtin,sims=2,sims=3", "opponent_share": 0.5},
     r"\[selfplay\] opponent: agent spec 'az:builtin,sims=2,sims=3': parameter 'sims' is "
     "given twice$"),
    ({"opponent": "az:builtin,simz=3", "opponent_share": 0.5},
     r"\[selfplay\] opponent: agent 'az:builtin,simz=3': unknown .*parameter\(s\) simz"),
])
def test_a_league_opponent_is_checked_before_any_work(selfplay, message) -> None:
    from taluva_ai.agents.alphazero.config import validate

    with pytest.raises(ConfigError, match=message):
        validate(config_from_dict({"selfplay": selfplay, "warm_start": {"games": 0}}))
    validate(config_from_dict({"selfplay": {"opponent": "mcts:sims=50",
                                            "opponent_share": 0.25}}))
    validate(config_from_dict({"selfplay": {"opponent": "az:builtin,sims=16",
                                            "opponent_share": 0.25}}))
    with pytest.raises(ConfigError, match=r"\[selfplay\] opponent: the solo variant has no "
                                          "other seat for it to play$"):
        validate(config_from_dict({"game": {"num_players": 1, "rules": {"solo": True}},
                                   "selfplay": {"opponent": "greedy", "opponent_share": 0.5}}))
    with pytest.raises(ConfigError, match=r"\[selfplay\] opponent: az:builtin has no "
                                          r"network for 3-player "
                                          r"tables"):
        validate(config_from_dict({"game": {"num_players": 3}, "selfplay": {
            "opponent": "az:builtin", "opponent_share": 0.25}}))


def test_the_league_statistics_are_the_network_s_score_against_the_opponent() -> None:
    from taluva_ai.agents.alphazero.train import _opponent_stats

    def game(returns, seat, reason="early_victory"):
        return {"returns": returns, "opponent_seat": seat, "end_reason": reason}

    assert _opponent_stats([game([1.0, -1.0], -1)]) == {}
    got = _opponent_stats([game([1.0, -1.0], 1), game([1.0, -1.0], 0, "last_standing"),
                           game([0.0, 0.0], 0), game([1.0, -1.0], -1),
                           game([-1.0, -1.0, 1.0], 0)])  # 3 players: a network seat won
    assert got == {"opponent_games": 4, "opponent_score": round((1 + 0 + 0.5 + 1) / 4, 4),
                   "opponent_end_reasons": {"early_victory": 3, "last_standing": 1}}


@pytest.mark.parametrize(("head", "targets"), [("aux_head", "auxiliary"),
                                              ("ownership_head", "ownership")])
@pytest.mark.parametrize(("game", "players"), [("thurn_und_taxis", 2), ("taluva", 1)])
def test_a_training_head_without_its_targets_is_refused(game: str, players: int, head: str,
                                                        targets: str) -> None:
    from taluva_ai.agents.alphazero.config import validate

    data = {"game": {"name": game, "num_players": players}, "net": {head: True},
            "warm_start": {"games": 0}}
    if players == 1:
        data["game"]["solo"] = True
    with pytest.raises(ConfigError, match=rf"\[net\] {head}: the .* encoding .* has no "
                                          f"{targets} targets"):
        validate(config_from_dict(data))
    weight = head.replace("head", "weight")
    with pytest.raises(ConfigError, match=rf"\[train\] {weight} = 2.0 weighs the .* head's "
                                          rf"loss: it needs \[net\] {head} = true"):
        validate(config_from_dict({"train": {weight: 2.0}}))


def test_a_run_adds_the_aux_head_when_resumed_with_it(micro_run, tmp_path, capsys) -> None:
    """A run trained without the head (as the strong run was) adds one by editing the
    run's config.toml; the head trains from then on, the rest goes on from the checkpoint."""
    out = _copy_run(micro_run, tmp_path)
    text = (out / "config.toml").read_text()
    assert "aux_head = false\n" in text
    (out / "config.toml").write_text(text.replace("iterations = 1\n", "iterations = 2\n")
                                     .replace("aux_head = false\n", "aux_head = true\n"))
    code, err = _resume(out, capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert ["aux_loss" in ln["train"] for ln in lines] == [False, False, True]
    assert lines[2]["train"]["aux_loss"] > 0
    ckpt = torch.load(out / "checkpoints" / "iter_0002.pt", weights_only=True)
    assert ckpt["net"]["aux_head"] is True
    assert any(k.startswith("aux_fc.") for k in ckpt["state_dict"])
    # and a later resume (of a run whose head is now in its checkpoints) goes on
    (out / "config.toml").write_text((out / "config.toml").read_text()
                                     .replace("iterations = 2\n", "iterations = 3\n"))
    code, err = _resume(out, capsys)
    assert code == 0, err


def test_a_run_adds_the_ownership_head_when_resumed_with_it(micro_run, tmp_path, capsys
                                                            ) -> None:
    """The continuation recipe of docs/alphazero.md: a run's config.toml gains
    ``ownership_head = true``; from then on its training has an ownership loss, and its
    samples (recorded with ownership targets all along) feed it."""
    out = _copy_run(micro_run, tmp_path)
    text = (out / "config.toml").read_text()
    assert "ownership_head = false\n" in text
    (out / "config.toml").write_text(text.replace("iterations = 1\n", "iterations = 2\n")
                                     .replace("ownership_head = false\n",
                                              "ownership_head = true\n"))
    code, err = _resume(out, capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert ["ownership_loss" in ln["train"] for ln in lines] == [False, False, True]
    assert 0 < lines[2]["train"]["ownership_loss"] < 1
    ckpt = torch.load(out / "checkpoints" / "iter_0002.pt", weights_only=True)
    assert ckpt["net"]["ownership_head"] is True
    assert {"ownership_out.weight", "ownership_out.bias"} <= set(ckpt["state_dict"])


def test_a_1x1_stem_is_a_network_shape_of_its_own() -> None:
    """``[net] stem_kernel = 1``: the stem convolution is 1 x 1 (a ninth of the work); a
    checkpoint records it, and a run may not change it on resume."""
    from taluva_ai.agents.alphazero.config import NetConfig, validate
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import (
        CheckpointError,
        build_net,
        load_checkpoint,
        net_from_checkpoint,
        save_checkpoint,
    )

    enc = make_encoder("taluva", 2, view_radius=5)
    one = NetConfig("tiny", channels=8, blocks=1, stem_kernel=1)
    net = build_net(enc, one)
    assert tuple(net.stem.weight.shape) == (8, enc.spatial_planes, 1, 1)
    assert tuple(build_net(enc, NetConfig("tiny", channels=8, blocks=1)).stem.weight.shape) \
        == (8, enc.spatial_planes, 3, 3)
    with pytest.raises(ValueError, match="net stem_kernel must be 1 or 3, got 5"):
        NetConfig("tiny", stem_kernel=5)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "a.pt"
        save_checkpoint(path, net, enc, one, {"name": "taluva", "options": {}})
        back, cfg = net_from_checkpoint(load_checkpoint(path), path, enc)
        assert cfg.stem_kernel == 1 and tuple(back.stem.weight.shape)[2:] == (1, 1)
        with pytest.raises(CheckpointError, match=r"another network shape: stem_kernel 1 "
                                                  r"\(expected 3\)"):
            net_from_checkpoint(load_checkpoint(path), path, enc,
                                NetConfig("tiny", channels=8, blocks=1))
    with pytest.raises(ConfigError, match=r"\[net\] stem_kernel: thurn_und_taxis's network "
                                          "has no stem convolution"):
        validate(config_from_dict({"game": {"name": "thurn_und_taxis"},
                                   "net": {"stem_kernel": 1}}))


def _experiment(name: str) -> Any:
    """The module of ``experiments/<name>.py``, loaded as ``python experiments/<name>.py``
    would (the experiments folder on the path while it imports its neighbours)."""
    import importlib.util

    sys.path.insert(0, str(ROOT / "experiments"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "experiments"))
    return mod


def _view_radius_5_checkpoint(path: Path) -> Path:
    """A small network checkpoint of another encoding (view radius 5) than the micro run's."""
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import NetConfig, build_net, save_checkpoint

    small = make_encoder("taluva", 2, view_radius=5)
    config = NetConfig("tiny", channels=4, blocks=1)
    save_checkpoint(path, build_net(small, config), small, config,
                    {"name": "taluva", "options": {}})
    return path


def test_heldout_measures_networks_on_the_same_samples(micro_run, tmp_path, capsys) -> None:
    """experiments/heldout.py: each checkpoint's mean losses over every sample of the files
    named, as Trainer.evaluate gives them batch by batch."""
    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import load_checkpoint, net_from_checkpoint
    from taluva_ai.agents.alphazero.replay import ReplayBuffer, SampleSet
    from taluva_ai.agents.alphazero.train import Trainer

    heldout = _experiment("heldout")
    folder = micro_run / "selfplay" / "iter_0001"
    ckpts = [micro_run / "checkpoints" / f"iter_{k:04d}.pt" for k in (0, 1)]
    out = tmp_path / "h.json"
    assert heldout.main(["--samples", str(folder), "--checkpoints", *map(str, ckpts),
                         "--batch-size", "3", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    files = sorted(folder.glob("worker_*.npz"))
    assert res["files"] == [str(p) for p in files]
    sets = [SampleSet.load(p) for p in files]
    assert res["samples"] == sum(len(s) for s in sets) > 3
    enc = make_encoder("taluva", 2)
    buf = ReplayBuffer(enc, 100)
    for p, s in zip(files, sets, strict=True):
        buf.add(str(p), s)
    for path in ckpts:
        net, _ = net_from_checkpoint(load_checkpoint(path), path, enc)
        tr = Trainer(net, TrainSection(), torch.device("cpu"))
        figs = [(len(b.value), tr.evaluate(b)) for b in buf.batches(3)]
        n = sum(b for b, _ in figs)
        want = sum(b * f["value_loss"] for b, f in figs) / n
        assert res["networks"][str(path)]["value_loss"] == pytest.approx(want, abs=1e-5)
    assert f"{res['samples']} samples of 2 games in 1 files" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        heldout.main(["--samples", str(tmp_path / "none"), "--checkpoints", str(ckpts[0])])
    assert "none: no such file or folder" in capsys.readouterr().err
    other = _view_radius_5_checkpoint(tmp_path / "r5.pt")
    with pytest.raises(SystemExit):
        heldout.main(["--samples", str(folder), "--checkpoints", str(other)])
    assert re.search(r"worker_0\.npz: not samples of this encoding: bits is \[\d+, \d+\], the "
                     r"encoder needs \[\d+, \d+\]", capsys.readouterr().err)
    with pytest.raises(SystemExit):
        heldout.main(["--samples", str(folder), "--checkpoints", str(other), "--batch-size",
                      "0"])
    assert "must be >= 1, got 0" in capsys.readouterr().err


def test_average_checkpoints_averages_weights_and_can_recompute_batch_norm(
        micro_run, tmp_path, capsys, monkeypatch) -> None:
    """experiments/average_checkpoints.py: every float tensor the mean of the checkpoints',
    integer ones from the last; with --bn-samples the running statistics are those of the
    samples under the averaged weights; mismatched checkpoints are refused in one line."""
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import (
        load_checkpoint,
        net_from_checkpoint,
    )
    from taluva_ai.agents.alphazero.replay import ReplayBuffer, SampleSet

    mod = _experiment("average_checkpoints")
    a, b = (micro_run / "checkpoints" / f"iter_{k:04d}.pt" for k in (0, 1))
    sa, sb = load_checkpoint(a)["state_dict"], load_checkpoint(b)["state_dict"]
    out = tmp_path / "avg.pt"
    assert mod.main([str(a), str(b), "--out", str(out)]) == 0
    got = load_checkpoint(out)
    assert got["meta"]["averaged"] == [str(a), str(b)]
    floats = [k for k, t in sb.items() if t.is_floating_point()]
    assert any(not torch.equal(sa[k], sb[k]) for k in floats)  # two different networks
    for k, t in got["state_dict"].items():
        if k in floats:
            assert torch.allclose(t.double(), (sa[k].double() + sb[k].double()) / 2,
                                  atol=1e-7), k
        else:
            assert torch.equal(t, sb[k]), k
    # batch norm over the samples: the stem's running mean is the mean of its input
    folder = micro_run / "selfplay" / "iter_0001"
    sets = [SampleSet.load(p) for p in sorted(folder.glob("worker_*.npz"))]
    assert sum(len(s) for s in sets) <= 256  # one batch: a cumulative average is the mean
    out_bn = tmp_path / "avg_bn.pt"
    assert mod.main([str(a), str(b), "--out", str(out_bn), "--bn-samples", str(folder)]) == 0
    bn = load_checkpoint(out_bn)
    assert bn["meta"]["batch_norm_samples"] == sum(len(s) for s in sets)
    for k in floats:
        if "running" not in k:
            assert torch.equal(bn["state_dict"][k], got["state_dict"][k]), k
    enc = make_encoder("taluva", 2)
    net, _ = net_from_checkpoint(got, out, enc)
    seen = []
    net.stem_bn.register_forward_hook(lambda m, i, o: seen.append(i[0]))
    buf = ReplayBuffer(enc, 100)
    for i, s in enumerate(sets):
        buf.add(str(i), s)
    batch = next(iter(buf.batches(256)))
    with torch.no_grad():
        net(torch.from_numpy(batch.spatial), torch.from_numpy(batch.globals))
    want_mean = seen[0].mean(dim=(0, 2, 3))
    assert torch.allclose(bn["state_dict"]["stem_bn.running_mean"], want_mean, atol=1e-5)
    assert not torch.allclose(got["state_dict"]["stem_bn.running_mean"], want_mean, atol=1e-5)
    with pytest.raises(SystemExit):
        mod.main([str(a), "--out", str(out)])
    assert "give at least two checkpoints" in capsys.readouterr().err
    other = _view_radius_5_checkpoint(tmp_path / "r5.pt")
    with pytest.raises(SystemExit):
        mod.main([str(a), str(other), "--out", str(out)])
    assert "r5.pt: made for another encoding" in capsys.readouterr().err
    # bad input: one line each, and no checkpoint lost or written
    before = a.read_bytes()
    bad = {
        ("--out", str(a)): "is one of the checkpoints to average",
        ("--out", "."): "--out '.': not a file name",
        (str(micro_run / "checkpoints" / ".." / "checkpoints" / "iter_0000.pt"), "--out",
         str(tmp_path / "x.pt")): "named twice",
        ("--out", str(tmp_path / "x.pt"), "--bn-samples", str(folder)):
            "the files hold no sample",  # (recompute_batch_norm saw none, below)
    }
    monkeypatch.setattr(mod, "recompute_batch_norm", lambda net, buffer: 0)
    for more, why in bad.items():
        with pytest.raises(SystemExit):
            mod.main([str(a), str(b), *more])
        err = capsys.readouterr().err
        assert why in err and len(err.strip().splitlines()[-1]) > len(why), err
    assert a.read_bytes() == before and not (tmp_path / "x.pt").exists()
    with pytest.raises(ValueError, match=r"^b: tensor 'w' holds NaN"):
        mod.average_state_dicts([{"w": torch.zeros(2)}, {"w": torch.tensor([0.0, float("nan")])}],
                                ["a", "b"])
    with pytest.raises(ValueError, match=r"^b: tensor 'x' is not in the first checkpoint "
                       r"\(a network with other heads\)"):
        mod.average_state_dicts([{"w": torch.zeros(2)}, {"w": torch.zeros(2),
                                                         "x": torch.zeros(1)}], ["a", "b"])


def test_compare_shapes_trains_each_shape_alike_and_measures_it(micro_run, tmp_path,
                                                                capsys) -> None:
    """experiments/compare_shapes.py at a toy size: each shape trained from the same seed on
    the same samples, measured on the held-out ones, timed; a bad shape is one line."""
    mod = _experiment("compare_shapes")
    like = micro_run / "checkpoints" / "iter_0001.pt"
    args = ["--like", str(like), "--train", str(micro_run / "selfplay" / "iter_0000"),
            "--heldout", str(micro_run / "selfplay" / "iter_0001"), "--steps", "2",
            "--batch-size", "4"]
    out = tmp_path / "s.json"
    assert mod.main([*args, "--shapes", "tiny/channels=4/blocks=1",
                     "tiny/channels=4/blocks=1/1x1", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    three, one = (res["shapes"][s] for s in ("tiny/channels=4/blocks=1",
                                             "tiny/channels=4/blocks=1/1x1"))
    assert three["parameters"] - one["parameters"] == 8 * 29 * 4  # the stem's 3x3 -> 1x1
    assert set(three["heldout"]) >= {"policy_loss", "value_loss"}
    assert three["heldout"] != one["heldout"] and one["positions_per_cpu_s"] > 0
    from taluva_ai.agents.alphazero.replay import SampleSet

    assert res["heldout_samples"] == sum(len(SampleSet.load(p)) for p in
                                         (micro_run / "selfplay" / "iter_0001").glob("*.npz"))
    assert mod.main([*args, "--shapes", "tiny"]) == 0  # the same twice: the same figures
    first = mod.compare(like, sorted((micro_run / "selfplay" / "iter_0000").glob("*.npz")),
                        sorted((micro_run / "selfplay" / "iter_0001").glob("*.npz")),
                        ["tiny/channels=4"], 2, 4, rounds=1)
    again = mod.compare(like, sorted((micro_run / "selfplay" / "iter_0000").glob("*.npz")),
                        sorted((micro_run / "selfplay" / "iter_0001").glob("*.npz")),
                        ["tiny/channels=4"], 2, 4, rounds=1)
    assert first["shapes"]["tiny/channels=4"]["heldout"] == \
        again["shapes"]["tiny/channels=4"]["heldout"]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        mod.main([*args, "--shapes", "tiny/wide"])
    assert "shape 'tiny/wide': 'wide' is not 1x1, aux or a size=N" in capsys.readouterr().err


def test_compare_shapes_saves_networks_that_play_and_decays_the_rate(micro_run, tmp_path,
                                                                     capsys) -> None:
    """compare_shapes.py --save/--final-lr/--eval-every: the cosine's exact rates, held-out
    losses along the way ending at the final ones, and a saved checkpoint that an ``az``
    agent loads with the shape it was trained as (the auxiliary head included)."""
    import math

    mod = _experiment("compare_shapes")
    assert [mod.lr_at(k, 5, 2e-3, 1e-4) for k in (0, 2, 4)] == \
        [2e-3, 1e-4 + 0.5 * 1.9e-3 * (1 + math.cos(math.pi / 2)), 1e-4]
    assert mod.lr_at(3, 5, 2e-3, None) == 2e-3
    like = micro_run / "checkpoints" / "iter_0001.pt"
    args = ["--like", str(like), "--train", str(micro_run / "selfplay" / "iter_0000"),
            "--heldout", str(micro_run / "selfplay" / "iter_0001"), "--batch-size", "4",
            "--shapes", "tiny/channels=4/blocks=1/1x1/aux"]
    out, saved = tmp_path / "s.json", tmp_path / "nets"
    assert mod.main([*args, "--steps", "4", "--final-lr", "1e-4", "--eval-every", "2",
                     "--save", str(saved), "--json", str(out)]) == 0
    res = json.loads(out.read_text())["shapes"]["tiny/channels=4/blocks=1/1x1/aux"]
    assert [p["step"] for p in res["curve"]] == [2, 4]
    assert {k: v for k, v in res["curve"][-1].items() if k != "step"} == res["heldout"]
    assert res["curve"][0] != res["curve"][1]
    path = saved / "tiny_channels=4_blocks=1_1x1_aux.pt"
    assert res["checkpoint"] == str(path)
    from taluva_ai.agents.alphazero.net import load_checkpoint

    payload = load_checkpoint(path)
    assert payload["net"]["aux_head"] is True and payload["net"]["stem_kernel"] == 1
    assert payload["meta"]["steps"] == 4 and payload["meta"]["final_lr"] == 1e-4
    assert payload["meta"]["elimination_weight"] == 1.0
    assert "wrote " + str(path) in capsys.readouterr().out
    weighed = tmp_path / "weighed"
    assert mod.main([*args, "--steps", "2", "--elimination-weight", "4", "--save",
                     str(weighed)]) == 0
    assert load_checkpoint(weighed / path.name)["meta"]["elimination_weight"] == 4.0
    from taluva_ai.agents import make_agent
    from taluva_ai.games.taluva import TaluvaGame
    from taluva_ai.tournament import play_game

    az = make_agent(f"az:path={path},sims=4,device=cpu", seed=1)
    assert play_game(TaluvaGame(), [az, make_agent("random", seed=2)], seed=3).winners
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for bad, why in ((["--final-lr", "1"], "--final-lr in [0, --lr]"),
                     (["--elimination-weight", "0"],
                      "--elimination-weight must lie in (0, 100], got 0.0"),
                     (["--eval-every", "-1"], "--eval-every must be >= 0"),
                     (["--save", str(blocker / "nets")], f"--save {blocker / 'nets'}: "),
                     (["--json", str(blocker / "s.json")], f"--json {blocker}: "),
                     (["--json", str(tmp_path)], f"--json {tmp_path}: is a folder")):
        with pytest.raises(SystemExit):
            mod.main([*args, "--steps", "2", *bad])
        assert why in capsys.readouterr().err



def test_teacher_games_are_reproducible_resumable_and_fine_tune_from_a_checkpoint(
        micro_run, tmp_path, capsys) -> None:
    """teacher_games.py: every decision a full search of --sims, the same arguments give the
    same samples, a lost round is played again alike and a finished one is kept, other
    arguments on the same --out are refused; compare_shapes.py --init starts from the
    checkpoint's own weights."""
    from taluva_ai.agents.alphazero.net import load_checkpoint
    from taluva_ai.agents.alphazero.replay import SampleSet

    teacher = _experiment("teacher_games")
    ckpt = micro_run / "checkpoints" / "iter_0001.pt"
    args = ["--run", str(micro_run), "--checkpoint", str(ckpt), "--sims", "6", "--games", "2",
            "--rounds", "2", "--workers", "1"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert teacher.main([*args, "--out", str(a)]) == 0
    meta = json.loads((a / "teacher.json").read_text())
    assert [r["round"] for r in meta["rounds"]] == [0, 1]
    stats = json.loads((a / "round_0000" / "worker_0.json").read_text())
    assert stats["simulations"] == 6 * stats["samples"] > 0  # all full searches, all recorded
    assert [s["samples"] for s in stats["summaries"]] == \
        [s["decisions"] for s in stats["summaries"]]

    def arrays(d: Path) -> list[np.ndarray]:
        s = SampleSet.load(d / "worker_0.npz")
        return [s.bits, s.ints, s.globals, s.value, s.target, s.root_value]

    def same(x: list[np.ndarray], y: list[np.ndarray]) -> bool:
        return all(np.array_equal(u, v) for u, v in zip(x, y, strict=True))

    first = arrays(a / "round_0000")
    assert not same(first, arrays(a / "round_0001"))
    kept = (a / "round_0000" / "worker_0.npz").stat().st_mtime_ns
    lost = arrays(a / "round_0001")
    for f in (a / "round_0001").iterdir():
        f.unlink()
    stale = a / "round_0001" / ".worker_0.games"  # a journal left by an interrupted run
    stale.mkdir()
    (stale / "game_0001.json").write_text("{}")
    assert teacher.main([*args, "--out", str(a)]) == 0
    assert not stale.exists()  # the interrupted round is played again whole, so alike
    assert (a / "round_0000" / "worker_0.npz").stat().st_mtime_ns == kept
    assert same(arrays(a / "round_0001"), lost)
    assert teacher.main([*args, "--rounds", "1", "--out", str(b)]) == 0
    assert same(arrays(b / "round_0000"), first)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        teacher.main([*args[:5], "7", *args[6:], "--out", str(a)])
    assert "holds games of other arguments" in capsys.readouterr().err
    good = (a / "teacher.json").read_text()
    (a / "teacher.json").write_text(good[:40])
    with pytest.raises(SystemExit):
        teacher.main([*args, "--out", str(a)])
    assert f"{a / 'teacher.json'} is damaged" in capsys.readouterr().err
    (a / "teacher.json").write_text(good.replace('"rounds": [', '"rounds": [5, '))
    with pytest.raises(SystemExit):
        teacher.main([*args, "--out", str(a)])
    assert "not a teacher_games.py record" in capsys.readouterr().err
    (a / "teacher.json").write_text(good)
    other = tmp_path / "other.pt"  # another network under the same name is refused
    other.write_bytes(ckpt.read_bytes())
    assert teacher.main([*args[:2], "--checkpoint", str(other), *args[4:], "--rounds", "1",
                         "--out", str(tmp_path / "d")]) == 0
    other.write_bytes((micro_run / "checkpoints" / "iter_0000.pt").read_bytes())
    with pytest.raises(SystemExit):
        teacher.main([*args[:2], "--checkpoint", str(other), *args[4:], "--rounds", "1",
                      "--out", str(tmp_path / "d")])
    assert "differ in checkpoint_sha256" in capsys.readouterr().err
    afile = tmp_path / "afile"
    afile.write_text("")
    for bad, why in ((["--workers", "3", "--out", str(a)], "must not exceed --games"),
                     (["--sims", "100001", "--out", str(a)], "go up to"),
                     (["--out", ""], "a folder of its own"),
                     (["--out", str(afile)], f"--out: {afile}: File exists")):
        with pytest.raises(SystemExit):
            teacher.main([*args, *bad])
        assert why in capsys.readouterr().err
    with pytest.raises(SystemExit):
        teacher.main([*args, "--rollout", "greedy", "--out", str(tmp_path / "c")])
    assert ("--rollout and --lambda go together: --rollout greedy with --lambda 0 (give both, "
            "or neither)") in capsys.readouterr().err
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    for net, why in ((ROOT / "packs" / "strong2-rt" / "evaluated" / "iter_0160.pt",
                      "another encoding"), (junk, "junk.pt")):
        with pytest.raises(SystemExit):
            teacher.main([*args[:2], "--checkpoint", str(net), *args[4:], "--out",
                          str(tmp_path / "c")])
        assert why in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    assert teacher.main([*args, "--rounds", "1", "--rollout", "greedy", "--lambda", "0.5",
                         "--out", str(tmp_path / "c")]) == 0
    assert json.loads((tmp_path / "c" / "teacher.json").read_text())["lambda"] == 0.5
    assert not same(arrays(tmp_path / "c" / "round_0000"), first)  # rollouts move the targets

    shapes = _experiment("compare_shapes")
    shape = "tiny/channels=4/blocks=1/global_hidden=8/value_hidden=8"
    base = ["--like", str(ckpt), "--init", str(ckpt), "--train", str(a / "round_0000"),
            "--heldout", str(a / "round_0001"), "--batch-size", "4", "--steps", "1"]
    assert shapes.main([*base, "--shapes", shape, "--lr", "1e-12", "--save",
                        str(tmp_path / "nets")]) == 0
    tuned = load_checkpoint(tmp_path / "nets" / (shape.replace("/", "_") + ".pt"))
    start = load_checkpoint(ckpt)
    assert tuned["meta"]["init"] == str(ckpt)
    weights = [k for k in start["state_dict"] if not k.endswith(  # batch norm's statistics
        ("running_mean", "running_var", "num_batches_tracked"))]  # move in any training step
    assert len(weights) > 10 and tuned["state_dict"].keys() == start["state_dict"].keys()
    assert all(torch.equal(tuned["state_dict"][k], start["state_dict"][k]) for k in weights)
    for bad, why in ((["--shapes", "tiny"], "made for another network shape"),
                     (["--shapes", shape, "tiny"], "give one shape with it")):
        with pytest.raises(SystemExit):
            shapes.main([*base, *bad])
        assert why in capsys.readouterr().err
    from taluva_ai.agents.alphazero.agent import load_net
    from taluva_ai.agents.alphazero.replay import SampleBuilder

    empty = tmp_path / "empty.npz"  # a held-out file without samples: refused before training
    SampleBuilder(load_net(ckpt, torch.device("cpu"))[1]).build().save(empty)
    with pytest.raises(SystemExit):
        shapes.main([*base[:6], "--heldout", str(empty), *base[8:], "--shapes", shape])
    assert "hold no samples" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a batch larger than the training set: before training
        shapes.main([*base, "--shapes", shape, "--batch-size", "100000"])
    assert re.search(r"--batch-size 100000 is more than the \d+ training samples$",
                     capsys.readouterr().err.strip())


def test_a_resume_refuses_another_network_or_optimiser_before_removing_anything(
        micro_run, tmp_path, capsys) -> None:
    """A changed stem (or size) or optimiser in config.toml is refused in one line, even
    with --redo, which used to remove the later iterations' files first."""
    out = _copy_run(micro_run, tmp_path)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    text = (out / "config.toml").read_text()
    for old, new, message in [
            ("stem_kernel = 3\n", "stem_kernel = 1\n",
             r"another network shape: stem_kernel 3 \(expected 1\)"),
            ('optimizer = "adamw"\n', 'optimizer = "sgd"\n',
             r"trainer_000[01]\.pt: the optimiser state of iteration [01] is adamw's; the run's "
             r"\[train\] optimizer is sgd, which a run may not change")]:
        assert old in text
        (out / "config.toml").write_text(text.replace(old, new))
        for more in ((), ("--redo", "1")):
            code, err = _resume(out, capsys, *more)
            assert code == 1 and len(err) == 1 and re.search(message, err[0]), err
            assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_a_diverged_network_stops_the_run_and_keeps_nothing_of_the_iteration(
        micro_run, tmp_path, capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    text = (out / "config.toml").read_text()
    (out / "config.toml").write_text(
        text.replace("iterations = 1\n", "iterations = 2\n")
        .replace("\n[train.lr_schedule]\n", "\n[train.lr_schedule]\n2 = 1e30\n"))
    code, err = _resume(out, capsys)
    assert code == 1
    assert err[-1] == (f"taluva train: error: the training loss is not finite (nan) at learning "
                       f"rate 1e+30: the network diverged, so nothing of this iteration is "
                       f"kept; lower [train] lr (or the lr_schedule) in the run's config.toml "
                       f"and resume: taluva train --resume {out}")
    assert not (out / "checkpoints" / "iter_0002.pt").exists()
    assert json.loads((out / "state.json").read_text())["iteration"] == 1


def test_a_run_starts_from_another_run_s_network_with_build_sites_added(micro_run,
                                                                         tmp_path) -> None:
    """``[warm_start] init``: iteration 0 is the given network, widened to the encoder's
    build-site globals with zero weights (nothing else changed), and the run plays and trains
    on from it; a checkpoint that is missing is refused before the run directory is made."""
    from taluva_ai.agents.alphazero.net import CheckpointError, load_checkpoint
    from taluva_ai.agents.alphazero.train import TrainingRun

    init = micro_run / "checkpoints" / "iter_0001.pt"
    text = MICRO.replace('games = 2\nexpert = "heuristic"\nsteps = 2\n',
                         f'games = 0\nsteps = 0\ninit = "{init}"\n')
    assert text != MICRO
    text += "\n[encoder]\nbuild_sites = true\n"
    config = tmp_path / "init.toml"
    config.write_text(text)
    out = tmp_path / "run"
    TrainingRun(out, load_config(config), progress=False).run()
    first = load_checkpoint(out / "checkpoints" / "iter_0000.pt")
    source = load_checkpoint(init)
    assert first["encoder"] == {**source["encoder"], "num_globals": 24, "build_sites": True}
    for key, value in source["state_dict"].items():
        got = first["state_dict"][key]
        if key == "globals_mlp.0.weight":
            assert torch.equal(got[:, :20], value) and not got[:, 20:].any()
        else:
            assert torch.equal(got, value), key
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [0, 1]
    assert lines[1]["selfplay"]["games"] == 2 and lines[1]["train"]["steps"] == 2
    missing = tmp_path / "none.toml"
    missing.write_text(text.replace(str(init), str(tmp_path / "no.pt")))
    with pytest.raises(CheckpointError, match=r"^\[warm_start\] init: checkpoint .*no\.pt: "):
        TrainingRun(tmp_path / "run2", load_config(missing), progress=False)
    assert not (tmp_path / "run2").exists()


def test_redo_0_of_a_run_with_init_starts_from_its_copy_and_checks_it_before_removing(
        micro_run, tmp_path, monkeypatch, capsys) -> None:
    """A run keeps a copy of its ``[warm_start] init`` (``init.pt``): ``--redo 0`` makes the
    same networks after the original changed (so does a pack of the run, which carries the
    copy), and a copy that is gone (with the original) is refused before any file of the run
    is removed; a relative ``init`` that is not there says where it was looked up."""
    from taluva_ai.agents.alphazero.net import CheckpointError
    from taluva_ai.agents.alphazero.train import INIT_NAME, TrainingRun, pack_run

    source = tmp_path / "source.pt"
    shutil.copyfile(micro_run / "checkpoints" / "iter_0001.pt", source)
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "init.toml"
    config.write_text(MICRO.replace('games = 2\nexpert = "heuristic"\nsteps = 2\n',
                                    'games = 0\nsteps = 0\ninit = "source.pt"\n'))
    out = tmp_path / "run"

    def contents() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    TrainingRun(out, load_config(config), progress=False).run()
    assert (out / INIT_NAME).read_bytes() == source.read_bytes()
    made = {p.name: p.read_bytes() for p in (out / "checkpoints").iterdir()}
    pack_run(out, tmp_path / "pack")
    assert (tmp_path / "pack" / INIT_NAME).read_bytes() == source.read_bytes()
    shutil.copyfile(micro_run / "checkpoints" / "iter_0000.pt", source)  # another network
    TrainingRun(out, None, progress=False, redo=0).run()
    assert {p.name: p.read_bytes() for p in (out / "checkpoints").iterdir()} == made
    TrainingRun(tmp_path / "pack", None, progress=False, redo=0).run()
    assert {p.name: p.read_bytes() for p in (tmp_path / "pack" / "checkpoints").iterdir()
            if p.name in made} == made
    # a damaged copy: a pack leaves it out (keeping the copy an earlier pack holds), and
    # --redo 0 refuses it with the remedy, before any file is removed
    good = (out / INIT_NAME).read_bytes()
    pack_run(out, tmp_path / "pack2")
    (out / INIT_NAME).write_bytes(good[:3000])
    capsys.readouterr()
    pack_run(out, tmp_path / "pack2")
    assert re.fullmatch(r"checkpoint .*init\.pt: .*; left out of the pack \(only --redo 0 "
                        r"reads it\)\n", capsys.readouterr().err)
    assert (tmp_path / "pack2" / INIT_NAME).read_bytes() == good

    def refused(message: str) -> None:  # a --redo 0 refused before any file is removed
        before = contents()
        with pytest.raises(CheckpointError, match=message):
            TrainingRun(out, None, progress=False, redo=0)
        assert contents() == before

    refused(r"^\[warm_start\] init: checkpoint .*init\.pt: .*; put a copy of the network the "
            r"run started from there \(source\.pt\)$")
    source.unlink()
    (out / INIT_NAME).unlink()
    refused(rf"^\[warm_start\] init \(a relative path, looked up from {re.escape(str(tmp_path))}"
            r"\): checkpoint source\.pt: no such file")
    config.write_text(config.read_text().replace('init = "source.pt"', 'init = " x.pt"'))
    with pytest.raises(ConfigError, match=r"\[warm_start\] init must be a checkpoint path"):
        load_config(config)


def test_a_resume_refuses_build_sites_the_run_s_networks_lack(micro_run, tmp_path,
                                                             capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    text = (out / "config.toml").read_text()
    assert "[encoder]\nview_radius = 0\nbuild_sites = false\n" in text
    (out / "config.toml").write_text(text.replace("build_sites = false", "build_sites = true"))
    code, err = _resume(out, capsys)
    assert code == 1
    assert err == [f"taluva train: error: checkpoint {out / 'checkpoints' / 'iter_0001.pt'}: "
                   "made for another encoding: num_globals 20 (expected 24); build_sites None "
                   "(expected True)"]


def test_prioritized_replay_weights_scale_each_sample_s_losses() -> None:
    import dataclasses

    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import NetConfig, build_net
    from taluva_ai.agents.alphazero.replay import Batch
    from taluva_ai.agents.alphazero.train import Trainer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    enc = make_encoder("taluva", 2, view_radius=5)
    net = build_net(enc, NetConfig("tiny", channels=8, blocks=1, aux_head=True,
                                   ownership_head=True))
    tr = Trainer(net, TrainSection(batch_size=4), torch.device("cpu"))
    batch = _random_batch(enc, 4)
    plain = tr.evaluate(batch)
    ones = tr.evaluate(dataclasses.replace(batch, weight=np.ones(4, dtype=np.float32)))
    assert ones == plain
    # only sample 2 counts, at weight 0.5: each loss is half of sample 2's alone, over 4
    w = np.array([0, 0, 0.5, 0], dtype=np.float32)
    got = tr.evaluate(dataclasses.replace(batch, weight=w))
    alone = tr.evaluate(Batch(*(None if f is None else f[2:3] for f in (
        batch.spatial, batch.globals, batch.mask, batch.target, batch.value, batch.aux,
        batch.ownership, batch.ownership_known))))
    for k in ("policy_loss", "value_loss", "aux_loss", "ownership_loss"):
        assert got[k] == pytest.approx(0.5 * alone[k] / 4, rel=1e-5), k
    assert got["loss"] == pytest.approx(got["policy_loss"] + got["value_loss"]
                                        + got["aux_loss"] + got["ownership_loss"], rel=1e-5)


def test_the_trainer_draws_its_batches_with_the_config_s_priority() -> None:
    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import NetConfig, build_net
    from taluva_ai.agents.alphazero.train import Trainer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    enc = make_encoder("taluva", 2, view_radius=5)
    net = build_net(enc, NetConfig("tiny", channels=8, blocks=1))
    calls = []

    class Buffer:
        def sample(self, *args):
            calls.append(args[2:])
            return _random_batch(enc, 4)

    cfg = TrainSection(batch_size=4, priority_alpha=1.5, priority_beta=0.25,
                       elimination_weight=3.0)
    Trainer(net, cfg, torch.device("cpu")).train(Buffer(), 2, np.random.default_rng(0))
    assert calls == [(0.0, 0.0, 1.5, 0.25, 3.0)] * 2


def test_replay_priorities_reports_the_share_drawn_of_each_kind_of_sample(
        micro_run, tmp_path, capsys) -> None:
    """experiments/replay_priorities.py: shares of the draws by kind, from the samples'
    priorities and their games' ends."""
    from taluva_ai.agents.alphazero.replay import SampleSet, replay_priority

    rp = _experiment("replay_priorities")
    folder = micro_run / "selfplay" / "iter_0001"
    out = tmp_path / "p.json"
    assert rp.main([str(folder), "--alpha", "0", "2", "--last", "2", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    sets = [SampleSet.load(p) for p in sorted(folder.glob("worker_*.npz"))]
    pr = np.concatenate([replay_priority(s) for s in sets])
    assert res["samples"] == len(pr) and res["games"] == 2 and res["last"] == 2
    uniform, squared = res["alphas"]["0.0"], res["alphas"]["2.0"]
    whole = ("games with an elimination", "other games")
    assert sum(f["samples"] for k, f in uniform.items() if k in whole) == len(pr)
    for kinds in (uniform, squared):
        assert sum(f["share_drawn"] for k, f in kinds.items()
                   if k in whole) == pytest.approx(1.0, abs=2e-4)
    for f in uniform.values():
        assert f["share_drawn"] == f["share_uniform"] == round(f["samples"] / len(pr), 4)
    # the last 2 samples of each of the 2 games, drawn by priority squared
    tail = np.concatenate([np.isin(np.arange(len(s)), [
        i for g in np.unique(s.game) for i in np.flatnonzero(s.game == g)[-2:]]) for s in sets])
    want = (pr[tail] ** 2).sum() / (pr ** 2).sum()
    got = sum(f["share_drawn"] for k, f in squared.items() if k.startswith("last 2"))
    assert got == pytest.approx(want, abs=2e-4)
    assert "samples of 2 games" in capsys.readouterr().out
    # the games' ends come from Taluva's auxiliary targets
    aux = np.zeros((3, 2, 4), dtype=np.float32)
    aux[0, 0] = [0, 0.5, 0.5, 1]   # out of huts with both other kinds left: eliminated
    aux[1, 0] = [0, 0, 0.5, 1]     # huts and temples all built: early victory
    aux[2, 1] = [0.5, 0, 0, 1]
    np.testing.assert_array_equal(rp.eliminated_games(aux), [True, False, False])
    with pytest.raises(ValueError, match=r"shape \[3, 2, 3\]: not Taluva's"):
        rp.eliminated_games(aux[:, :, :3])
    with pytest.raises(SystemExit):
        rp.main([str(folder), "--alpha", "5"])
    assert "--alpha must lie in [0, 4]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        rp.main([str(tmp_path / "none")])
    assert "none: no such file or folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        rp.main([str(folder), "--json", str(tmp_path)])
    assert "is a folder; give a file name" in capsys.readouterr().err
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(SystemExit):
        rp.main([str(folder), "--json", str(blocker / "p.json")])
    assert f"--json {blocker / 'p.json'}: " in capsys.readouterr().err
    with pytest.raises(ValueError, match="written before they were recorded"):
        rp.eliminated_games(np.zeros((3, 2, 0), dtype=np.float32))


SCHEDULED = micro_run_config(5, """
[gating]
enabled = false

[anchors]
opponents = []

[[schedule]]
at = 2
train.lr = 0.0003
selfplay.sims = 6

[[schedule]]
at = 3
train.lr = 0.0001
selfplay.value_rollouts = 2
train.rollout_target_mix = 0.5
""").replace("iterations = 1", "iterations = 3")


def test_a_schedule_changes_settings_at_its_iterations_and_a_resume_across_it_is_exact(
        tmp_path, monkeypatch) -> None:
    """A ``[[schedule]]`` of two entries (iterations 2 and 3): the metrics say what was in
    force, and a run interrupted in iteration 2 and again in iteration 3, resumed each time,
    makes the same networks and metrics as one uninterrupted run."""
    from taluva_ai.agents.alphazero.train import TrainingRun

    assert "iterations = 3" in SCHEDULED
    config = tmp_path / "scheduled.toml"
    config.write_text(SCHEDULED)
    cfg = load_config(config)
    torch.set_num_threads(1)
    a, b = tmp_path / "a", tmp_path / "b"
    TrainingRun(a, cfg, progress=False).run()
    la = [json.loads(x) for x in (a / "metrics.jsonl").read_text().splitlines()]
    assert [line["train"]["lr"] for line in la[1:]] == [cfg.train.lr, 0.0003, 0.0001]
    assert [line.get("schedule") for line in la] == [
        {}, {}, {"train.lr": 0.0003, "selfplay.sims": 6},
        {"train.lr": 0.0001, "selfplay.sims": 6, "selfplay.value_rollouts": 2,
         "train.rollout_target_mix": 0.5}]

    real = TrainingRun._iteration
    stops = [2, 3]

    def interrupted(self, k, *args):
        if stops and k == stops[0]:
            stops.pop(0)
            self._play(k, self._best(args[3]), 1, expert=False)  # some of iteration k
            raise KeyboardInterrupt
        return real(self, k, *args)

    monkeypatch.setattr(TrainingRun, "_iteration", interrupted)
    with pytest.raises(KeyboardInterrupt):
        TrainingRun(b, cfg, progress=False).run()
    with pytest.raises(KeyboardInterrupt):
        TrainingRun(b, progress=False).run()  # resumed at 2, stopped in 3
    TrainingRun(b, progress=False).run()
    assert not stops
    _assert_same_run(a, b, 4)
    assert not (b / "config_history.jsonl").exists()  # the schedule is no hand edit
    assert load_config(b / "config.toml") == cfg  # the run directory keeps the schedule


def test_bad_schedules_fail_before_any_work() -> None:
    import tomllib

    base = tomllib.loads(SCHEDULED)
    del base["schedule"]
    for entry, message in [
            ({"at": 0, "train": {"lr": 1e-3}}, "at must be an iteration number from 1 to "
                                               "iterations (3), got 0"),
            ({"at": 4, "train": {"lr": 1e-3}}, "got 4"),
            ({"at": 2, "net": {"channels": 8}}, "'net' cannot be scheduled"),
            ({"at": 2, "train": {"lrr": 1e-3}}, "unknown key(s) lrr"),
            ({"at": 2, "train": {"lr": "fast"}}, "lr must be a finite number, got 'fast'"),
            ({"at": 2, "train": {"optimizer": "sgd"}}, "train.optimizer cannot be scheduled"),
            ({"at": 2}, "changes nothing"),
            ({"at": 2, "selfplay": {"rollout": "greedy"}},
             "[[schedule]] at = 2: [selfplay] rollout and rollout_lambda go together")]:
        with pytest.raises(ConfigError) as e:
            config_from_dict({**base, "schedule": [entry]}, "x.toml")
        assert message in str(e.value), (entry, str(e.value))
    with pytest.raises(ConfigError, match="another entry is also at iteration 2"):
        config_from_dict({**base, "schedule": [{"at": 2, "train": {"lr": 1e-3}},
                                               {"at": 2, "selfplay": {"sims": 3}}]}, "x")


def test_a_hand_edit_of_a_run_s_config_is_recorded_and_said(micro_run, tmp_path,
                                                            capsys) -> None:
    out = _copy_run(micro_run, tmp_path)
    text = (out / "config.toml").read_text()
    assert "iterations = 1\n" in text and "lr = 0.001\n" in text
    (out / "config.toml").write_text(text.replace("iterations = 1\n", "iterations = 2\n")
                                     .replace("lr = 0.001\n", "lr = 0.0005\n"))
    capsys.readouterr()
    from taluva_ai.cli import main
    assert main(["train", "--resume", str(out), "--no-progress"]) in (0, None)
    err = capsys.readouterr().err
    assert f"taluva train: {out} goes on at iteration 2 of 2 (iterations 0-1 are kept): " \
           "iteration 2 is played from its start" in err
    assert f"taluva train: {out} config.toml was changed by hand: from iteration 2, " \
           "iterations 1 -> 2, train.lr 0.001 -> 0.0005 (recorded in config_history.jsonl)" \
           in err
    history = [json.loads(x) for x in (out / "config_history.jsonl").read_text().splitlines()]
    assert [(h["iteration"], h["changed"]) for h in history] == [
        (2, {"iterations": [1, 2], "train.lr": [0.001, 0.0005]})]
    assert history[0]["config"]["train"]["lr"] == 0.0005


@pytest.mark.parametrize("finished", ["0 and 1", "0"])
def test_a_missing_state_file_stops_the_resume_when_iterations_have_finished(
        micro_run, tmp_path, capsys, finished: str) -> None:
    """Also when only iteration 0 finished (its metrics line is written just before
    state.json) and iteration 1 left no file: the resume is refused, not started again from
    scratch."""
    out = _copy_run(micro_run, tmp_path)
    (out / "state.json").unlink()
    sign = out / "checkpoints" / "iter_0001.pt"
    if finished == "0":
        for p in set(out.glob("*/*_0001*")):
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        sign = out / "metrics.jsonl"
        sign.write_bytes(sign.read_bytes().split(b"\n")[0] + b"\n")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, err = _resume(out, capsys)
    assert code == 1
    assert err == [f"taluva train: error: {out / 'state.json'}: missing, although the run has "
                   f"finished iterations ({sign} exists); restore it, or start the run again: "
                   f"taluva train --resume {out} --redo 0"]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_state_file_without_its_checksum_is_refused(micro_run, tmp_path, capsys) -> None:
    """A state that records the files' checksums but lost its own ``sha256`` (a hand edit)
    is damaged; only a state from before the checksums has none."""
    out = _copy_run(micro_run, tmp_path)
    state = json.loads((out / "state.json").read_text())
    del state["sha256"]
    state["best_iteration"] = 0
    (out / "state.json").write_text(json.dumps(state))
    code, err = _resume(out, capsys)
    assert code == 1
    assert err == [f"taluva train: error: {out / 'state.json'}: damaged (its sha256 is "
                   "missing, though it records the checksums of the run's files); start the "
                   f"run again: taluva train --resume {out} --redo 0"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize(("name", "kind"), [("state.json", "zero"), ("state.json", "fifo"),
                                            ("metrics.jsonl", "zero"),
                                            ("metrics.jsonl", "fifo")])
def test_a_run_file_that_is_not_a_regular_file_is_refused_in_one_line(
        micro_run, tmp_path, capsys, name: str, kind: str) -> None:
    """A symbolic link to /dev/zero (reading it whole filled the memory) or a FIFO (opening
    it waited for a writer) in place of state.json or metrics.jsonl."""
    out = _copy_run(micro_run, tmp_path)
    path = out / name
    path.unlink()
    if kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)
    what = "a character device" if kind == "zero" else "a FIFO"
    code, err = _resume(out, capsys)
    assert code == 1
    if name == "state.json":
        assert err == [f"taluva train: error: {path}: unreadable (not a regular file "
                       f"({what})); start the run again: taluva train --resume {out} --redo 0"]
    else:
        assert err == [f"taluva train: error: {path}: unreadable (not a regular file "
                       f"({what})); redo the run from iteration 0: taluva train --resume "
                       f"{out} --redo 0"]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_builtin_recipes_run_at_a_tiny_size(tmp_path, players: int) -> None:
    """experiments/configs/builtin-<n>p.toml with its sizes cut to seconds and its schedule
    moved from iteration 31 to 2, everything else as written: build-site inputs, greedy
    rollouts in the self-play search and rollout value targets, then no search rollouts and a
    lower rate; the metrics say which settings were in force."""
    import dataclasses as dc

    from taluva_ai.agents.alphazero.train import TrainingRun

    cfg = load_config(CONFIGS / f"builtin-{players}p.toml")
    assert cfg.game.num_players == players and cfg.encoder.build_sites
    assert (cfg.selfplay.rollout, cfg.selfplay.value_rollouts, cfg.train.rollout_target_mix) \
        == ("greedy", 16, 0.5)
    assert [e["at"] for e in cfg.schedule] == [31, 130]
    assert cfg.at(31).selfplay.rollout == "none" and cfg.at(130).train.lr == 2e-4
    cfg = dc.replace(
        _cut_to_seconds(cfg, tiles=3, anchor_games=players,
                        selfplay={"value_rollouts": 2, "rollout_samples": 2}),
        schedule=({**cfg.schedule[0], "at": 2},))
    out = tmp_path / "recipe"
    TrainingRun(out, cfg, progress=False).run()
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [ln["iteration"] for ln in lines] == [0, 1, 2]
    assert [ln["train"]["lr"] for ln in lines] == [2e-3, 2e-3, 5e-4]
    assert [ln["schedule"] for ln in lines] == [{}, {}, {
        "selfplay.rollout": "none", "selfplay.rollout_lambda": 0.0, "train.lr": 5e-4}]
    leaf = [torch.load(out / "checkpoints" / f"iter_{k:04d}.pt", weights_only=True)["meta"]
            ["leaf"]["rollout"] for k in range(3)]
    assert leaf == ["greedy", "greedy", "none"]
    assert [sorted(ln.get("anchors") or {}) for ln in lines] == [["greedy"], [], ["greedy"]]


def test_an_older_state_file_stops_the_resume_instead_of_removing_later_iterations(
        micro_run, tmp_path, capsys) -> None:
    """state.json records iteration 1 while files of iteration 3 are there (a state.json
    restored from a copy): the resume would remove iterations 2 and 3; it stops instead,
    naming the remedy, and changes nothing."""
    out = _copy_run(micro_run, tmp_path)
    later = out / "checkpoints" / "iter_0003.pt"
    later.write_bytes((out / "checkpoints" / "iter_0001.pt").read_bytes())
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, err = _resume(out, capsys)
    assert code == 1
    assert err == [f"taluva train: error: {out / 'state.json'}: records iteration 1, but {later} "
                   "is of a later iteration than 2 (the one a stop could have left): it is an "
                   "older state.json than the run's; restore the run's own, or redo the run "
                   f"from iteration 2, removing the later ones: taluva train --resume {out} "
                   "--redo 2"]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_hand_edit_of_the_seed_or_the_game_stops_the_resume(micro_run, tmp_path,
                                                               capsys) -> None:
    """A run keeps its seed and its game: editing them in config.toml (the hostile pass
    changed tile_preview, board_radius, seed) is refused before anything changes; a damaged
    config history is named and restarts, it does not stop the run."""
    out = _copy_run(micro_run, tmp_path)
    text = (out / "config.toml").read_text()
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for old, new, key, was, now in (("seed = 3\n", "seed = 4\n", "seed", 3, 4),
                                    ("num_players = 2\n", "num_players = 3\n",
                                     "game.num_players", 2, 3)):
        assert old in text
        (out / "config.toml").write_text(text.replace(old, new))
        code, err = _resume(out, capsys)
        assert (code, err) == (2, [
            f"taluva train: error: {out / 'config.toml'}: {key} was changed by hand from "
            f"{was!r} to {now!r}; a run keeps its seed and its game (its games and networks so "
            "far were made under them): put it back, or start a new run from this one's "
            "network ([warm_start] init)"])
        (out / "config.toml").write_text(text)
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    (out / "config_history.jsonl").write_bytes(b"\xff\xfe not json\n")
    (out / "config.toml").write_text(text.replace("iterations = 1\n", "iterations = 2\n"))
    code, err = _resume(out, capsys)
    assert code in (0, None)
    assert err[0].startswith(f"taluva train: {out / 'config_history.jsonl'}: unreadable (")
    assert err[0].endswith("); the config's history restarts from here")
