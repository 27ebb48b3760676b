"""Distributed tournaments and training on Ray (taluva_ai.parallel; docs/ray.md): the same
games and tables as the local backend, a run that moves between backends, a self-play actor
killed mid-run and a tournament task whose worker dies, on a local Ray instance of 2 CPUs.
Without Ray, only the checks of the missing-Ray message run."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from taluva_ai.errors import BackendError
from taluva_ai.parallel import (
    RAY_INSTALL,
    InlineExecutor,
    LocalBackend,
    make_backend,
    parse_ray_address,
)

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


# -- without Ray ------------------------------------------------------------------------------


def test_without_ray_the_ray_flag_says_how_to_install_it(monkeypatch, tmp_path, capsys) -> None:
    from taluva_ai.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(BackendError, match=RAY_INSTALL.replace("[", r"\[").replace("]", r"\]")):
        make_backend("auto")
    assert isinstance(make_backend(None), LocalBackend)  # the local backend needs no Ray
    for argv in (["tournament", "--agents", "random", "greedy", "--games", "2", "--out",
                  str(tmp_path / "t"), "--ray"],
                 ["train", "--config", str(ROOT / "experiments/configs/tiny.toml"), "--out",
                  str(tmp_path / "r"), "--ray", "auto"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and RAY_INSTALL in err[0], err
    assert not (tmp_path / "t").exists() and not (tmp_path / "r").exists()


@pytest.mark.parametrize("text", ["auto", "local", "10.0.0.5:6379", "ray://head:10001",
                                  "localhost:6379", "[::1]:6379"])
def test_ray_addresses(text: str) -> None:
    assert parse_ray_address(f" {text} ") == text


@pytest.mark.parametrize("text", ["", "head", "head:", ":6379", "head:99999", "http://h:1",
                                  "a b:1", "head:6379:1"])
def test_bad_ray_addresses_are_refused_with_the_accepted_forms(text: str, capsys) -> None:
    from taluva_ai.cli import main

    with pytest.raises(BackendError, match="HOST:PORT"):
        parse_ray_address(text)
    with pytest.raises(SystemExit) as e:
        main(["tournament", "--agents", "random", "greedy", "--out", "/nonexistent/x",
              "--ray", text])
    assert e.value.code == 2
    assert "is not a Ray address" in capsys.readouterr().err


def test_an_address_where_no_cluster_answers_fails_at_once(tmp_path, capsys) -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # pragma: no cover (the module's Ray would be used instead)
        pytest.skip("Ray is initialised in this process")
    from taluva_ai.cli import main

    with pytest.raises(SystemExit) as e:
        main(["tournament", "--agents", "random", "greedy", "--out", str(tmp_path / "t"),
              "--ray", "127.0.0.1:1"])
    assert e.value.code == 2
    assert "no Ray cluster answers there" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_inline_executor_runs_a_call_when_waited_for() -> None:
    ran: list[int] = []
    ex = InlineExecutor()
    a, b = ex.submit(ran.append, 1), ex.submit(ran.append, 2)
    assert ran == []
    assert ex.wait([a, b]) == [a] and ran == [1]
    assert ex.wait([a, b]) == [a]  # the finished one, nothing more run
    bad = ex.submit(int, "x")
    ex.wait([bad])
    with pytest.raises(ValueError):
        ex.result(bad)


# -- on a local Ray instance ------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_backend():
    ray = pytest.importorskip("ray")
    old = os.environ.get("PYTHONPATH")
    # Ray's workers inherit the environment: they find the tests' agents (misbehaving_agents)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), *filter(None, [old])])
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    try:
        yield make_backend("auto")  # uses the Ray of this process
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


_TIMES = ("time_s", "max_move_s", "sha256")


def _log(path: Path) -> list[dict]:
    """results.jsonl without its wall-clock fields (and the line checksum, which covers
    them)."""
    return [{k: v for k, v in json.loads(line).items() if k not in _TIMES}
            for line in path.read_text().splitlines()]


def _same_tournament(a: Path, b: Path) -> None:
    assert json.loads((a / "results.json").read_text()) == \
        json.loads((b / "results.json").read_text())
    assert _log(a / "results.jsonl") == _log(b / "results.jsonl")
    names = sorted(p.name for p in (a / "games").iterdir())
    assert names == sorted(p.name for p in (b / "games").iterdir())
    for n in names:
        assert (a / "games" / n).read_bytes() == (b / "games" / n).read_bytes(), n


def test_tournament_on_ray_equals_the_local_one(ray_backend, tmp_path) -> None:
    from taluva_ai.tournament import run_tournament

    agents = ["random", "greedy:epsilon=0.3"]
    kw = dict(games=4, seed=7, progress=False, plots=False)
    local = run_tournament(agents, out_dir=tmp_path / "local", concurrency=1, **kw)
    ray = run_tournament(agents, out_dir=tmp_path / "ray", concurrency=2, backend=ray_backend,
                         **kw)
    assert ray == local and local["games"] == 4
    _same_tournament(tmp_path / "local", tmp_path / "ray")


def test_a_ray_task_raises_its_own_error_in_one_line(ray_backend) -> None:
    ex = ray_backend.executor(1)
    try:
        bad = ex.submit(int, "x")
        ex.wait([bad])
        with pytest.raises(ValueError) as info:
            ex.result(bad)
    finally:
        ex.close()
    assert type(info.value) is ValueError  # not Ray's wrapper with the remote traceback
    assert str(info.value) == "invalid literal for int() with base 10: 'x'"


def test_a_tournament_task_whose_worker_dies_is_retried_and_counted_once(ray_backend,
                                                                         tmp_path) -> None:
    from taluva_ai.tournament import run_tournament

    token = uuid.uuid4().hex
    marker = Path(__import__("tempfile").gettempdir()) / f"taluva-exit-once-{token}"
    agents = ["random", f"misbehaving_agents:ExitOnce:at=3,token={token}"]
    kw = dict(games=4, seed=3, progress=False, plots=False)
    try:
        ray = run_tournament(agents, out_dir=tmp_path / "ray", concurrency=2,
                             backend=ray_backend, **kw)
        assert marker.exists()  # a worker did die
        # the same games here (the marker now exists, so no process exits)
        local = run_tournament(agents, out_dir=tmp_path / "local", concurrency=1, **kw)
    finally:
        marker.unlink(missing_ok=True)
    ids = [e["id"] for e in _log(tmp_path / "ray" / "results.jsonl")]
    assert len(ids) == len(set(ids)) == 4 and ray["games"] == 4
    assert not list((tmp_path / "ray" / "games").glob(".*.part"))
    assert ray == local
    _same_tournament(tmp_path / "local", tmp_path / "ray")


def test_cli_tournament_on_ray(ray_backend, tmp_path, capsys) -> None:
    from taluva_ai.cli import main

    out = tmp_path / "t"
    assert main(["tournament", "--agents", "random", "greedy", "--games", "2", "--out",
                 str(out), "--ray", "--no-plots", "--no-progress"]) == 0
    assert json.loads((out / "results.json").read_text())["games"] == 2
    assert "greedy" in capsys.readouterr().out


def _files(run: Path) -> set[str]:
    """The run directory's files (TensorBoard's event file names hold a time and a pid)."""
    return {str(p.relative_to(run)) for p in run.rglob("*")
            if p.is_file() and "tb" not in p.relative_to(run).parts}


@pytest.mark.slow  # ~30 s: two short training runs and a killed Ray actor
def test_training_moves_between_backends_and_survives_a_killed_actor(ray_backend, tmp_path,
                                                                     monkeypatch) -> None:
    """Run A: iteration 0 here, iteration 1 on Ray with its self-play actor killed after its
    first game; run B: iteration 0 on Ray, iteration 1 here. Both finish with the same files;
    the killed actor's games that had been written are kept, not played again."""
    pytest.importorskip("torch")
    import ray

    from taluva_ai import parallel
    from taluva_ai.agents.alphazero.config import load_config
    from taluva_ai.agents.alphazero.replay import SampleSet
    from taluva_ai.agents.alphazero.train import TrainingRun

    cfg = load_config(ROOT / "experiments" / "configs" / "tiny.toml")
    cfg = dataclasses.replace(cfg, selfplay=dataclasses.replace(
        cfg.selfplay, games=3, parallel_games=1, records=3))
    real = TrainingRun._iteration

    def stop_at_1(self, k, *args):
        if k == 1:
            raise KeyboardInterrupt
        return real(self, k, *args)

    def first_half(out: Path, backend) -> None:
        monkeypatch.setattr(TrainingRun, "_iteration", stop_at_1)
        with pytest.raises(KeyboardInterrupt):
            TrainingRun(out, cfg, progress=False, backend=backend).run()
        monkeypatch.setattr(TrainingRun, "_iteration", real)
        assert json.loads((out / "state.json").read_text())["iteration"] == 0

    executors: list = []
    init = parallel.RayExecutor.__init__

    def keep(self, *args, **kw):
        init(self, *args, **kw)
        executors.append(self)

    monkeypatch.setattr(parallel.RayExecutor, "__init__", keep)

    a, b = tmp_path / "a", tmp_path / "b"
    first_half(a, None)
    journal = a / "selfplay" / "iter_0001" / ".worker_0.games"
    seen: list[str] = []
    stop = threading.Event()

    def killer() -> None:
        while not stop.is_set():
            written = sorted(p.name for p in journal.glob("game_*.json"))
            actors = executors[-1].actors if executors else []
            if written and actors:
                seen.extend(written)
                ray.kill(actors[0], no_restart=False)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        state = TrainingRun(a, progress=False, backend=ray_backend).run()
    finally:
        stop.set()
        thread.join()
    assert state["iteration"] == 1 and seen
    stats = json.loads((a / "selfplay" / "iter_0001" / "worker_0.json").read_text())
    recovered = [f"game_{g:04d}.json" for g in stats["recovered_games"]]
    assert set(seen) <= set(recovered), (seen, stats["recovered_games"])
    assert stats["games"] == 3 and sorted(s["game"] for s in stats["summaries"]) == [0, 1, 2]
    samples = SampleSet.load(a / "selfplay" / "iter_0001" / "worker_0.npz")
    assert samples.games == 3 and sorted(set(samples.game.tolist())) == [0, 1, 2]
    assert not journal.exists()
    line = json.loads((a / "metrics.jsonl").read_text().splitlines()[1])
    assert line["selfplay"]["recovered_games"] == len(recovered) and "gating" in line
    assert "anchors" in line

    first_half(b, ray_backend)
    state = TrainingRun(b, progress=False).run()
    assert state["iteration"] == 1
    assert _files(a) == _files(b)
    # iteration 0 (expert games, then training) is the same here and on Ray
    import torch

    sa, sb = (torch.load(d / "checkpoints" / "iter_0000.pt", weights_only=True)["state_dict"]
              for d in (a, b))
    assert all(torch.equal(t, sb[name]) for name, t in sa.items())


def _descendants(pid: int) -> dict[int, tuple[bytes, bytes]]:
    """The living descendants of ``pid``: ``{pid: (command line, start time)}``."""
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                rest = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()
                cmd = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if rest[0] != b"Z":
                procs[int(name)] = (int(rest[1]), cmd, rest[19])
    out, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for p, (pp, cmd, start) in procs.items():
            if pp == parent and p not in out:
                out[p] = (cmd, start)
                todo.append(p)
    return out


def _alive(pid: int, start: bytes) -> bool:
    try:
        rest = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except OSError:
        return False
    return rest[0] != b"Z" and rest[19] == start


@pytest.mark.slow  # ~20-40 s: a Ray instance started and its driver killed
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_driver_leaves_no_ray_process_of_its_own(tmp_path) -> None:
    """SIGKILL of a driver that started a local Ray instance (``--ray local``): its Ray
    processes end within seconds. Ray ends the driver's children with it, but the raylet's
    agents (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``) outlived the run by a minute or
    more, reporting their raylet's death to the dead GCS; RayBackend's reaper kills them."""
    import signal
    import subprocess

    pytest.importorskip("ray")
    from taluva_ai.parallel import RAY_OWNER_ENV

    driver = subprocess.Popen(
        [sys.executable, "-c", "import time; from taluva_ai.parallel import RayBackend; "
         "b = RayBackend('local'); b.connect(); print('up', flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        assert driver.stdout is not None and driver.stdout.readline() == b"up\n"
        agents: dict[int, tuple[bytes, bytes]] = {}
        deadline = time.monotonic() + 120
        while len(agents) < 2 and time.monotonic() < deadline:  # the raylet starts them
            agents = {p: v for p, v in _descendants(driver.pid).items() if v[0].startswith(
                (b"ray::DashboardAgent", b"ray::RuntimeEnvAgent"))}
            time.sleep(0.5)
        assert len(agents) == 2, agents
        time.sleep(3)  # the reaper notes them every 2 s
        ours = _descendants(driver.pid)
        assert RAY_OWNER_ENV.encode() not in Path(f"/proc/{driver.pid}/environ").read_bytes()
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    deadline = time.monotonic() + 15
    while any(_alive(p, v[1]) for p, v in ours.items()) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {p: v[0][:40] for p, v in ours.items() if _alive(p, v[1])}
    assert not left, left
