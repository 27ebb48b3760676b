"""``taluva train --pack RUN OUT``: a run's small state, without its replay data, continued
elsewhere with ``taluva train --resume OUT`` (issue 20, item 4)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tests.helpers import finished_training_run, micro_run_config  # noqa: E402

#: Two iterations (0 and 1) of a very small config, with gating and anchors (their table
#: travels with a pack).
TINY = micro_run_config(5, """
[gating]
games = 2
threshold = 1.0
az = "sims=2,leaf_batch=2"

[anchors]
opponents = ["random"]
games = 2
every = 0
az = "sims=2,leaf_batch=2"
""")

#: What a pack of the run holds (the best network is iteration 0's: the candidate of
#: iteration 1 is not promoted under threshold 1.0, so the pack carries both networks).
PACKED = ["anchors/iter_0001/random/results.json", "best.pt", "checkpoints/iter_0000.pt",
          "checkpoints/iter_0001.pt", "checkpoints/trainer_0001.pt", "config.json",
          "config.toml", "latest.pt", "metrics.jsonl", "state.json"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return finished_training_run(tmp_path_factory, "pack", TINY)


@pytest.fixture(scope="module")
def pack(run) -> Path:
    from taluva_ai.agents.alphazero.train import pack_run

    out = run.parent / "pack"
    pack_run(run, out)
    return out


@pytest.fixture(scope="module")
def continued(pack) -> Path:
    """The pack, resumed for one more iteration (iteration 2)."""
    from taluva_ai.cli import main

    out = pack.parent / "continued"
    shutil.copytree(pack, out)
    _one_more(out)
    assert main(["train", "--resume", str(out), "--no-progress"]) == 0
    return out


def _one_more(out: Path) -> None:
    cfg = out / "config.toml"
    cfg.write_text(cfg.read_text().replace("iterations = 1", "iterations = 2"))


def _files(d: Path) -> dict[str, str]:
    """The SHA-256 of every file under ``d`` but hidden ones, by path."""
    return {f.relative_to(d).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(d.rglob("*"))
            if f.is_file() and not any(p.startswith(".") for p in f.relative_to(d).parts)}


def _cli(capsys, *argv: str) -> tuple[int, list[str], list[str]]:
    """``taluva *argv``: exit status, stdout lines, stderr lines ('taluva train: DIR
    (resuming) ...' left out)."""
    from taluva_ai.cli import main

    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    cap = capsys.readouterr()
    err = [line for line in cap.err.splitlines()
           if not re.match(r"taluva train: \S+ \((resuming|new run)\)", line)]
    return code, cap.out.splitlines(), err


def test_a_pack_holds_only_the_small_state(run, tmp_path, capsys) -> None:
    out = tmp_path / "pack"
    code, lines, err = _cli(capsys, "train", "--pack", str(run), str(out))
    assert (code, err) == (0, [])
    assert sorted(_files(out)) == PACKED
    assert not (out / ".lock").exists()
    # state.json records exactly the files the pack holds, with the run's checksums
    full = json.loads((run / "state.json").read_text())
    state = json.loads((out / "state.json").read_text())
    assert sorted(state["files"]) == [p for p in PACKED if p.endswith((".pt", "results.json"))]
    for rel, digest in state["files"].items():
        assert digest == full["files"][rel] == _files(out)[rel], rel
    left = [rel for rel in full["files"] if rel not in state["files"]]
    assert all(rel.startswith(("selfplay/", "records/", "gating/", "anchors/"))
               for rel in left if rel != "checkpoints/trainer_0000.pt")
    assert any(rel.endswith(".npz") for rel in left)  # the replay data stays behind
    line1 = json.loads((run / "metrics.jsonl").read_text().splitlines()[1])
    assert state["pack"] == {
        "iteration": 1, "run": full["metrics"][0], "source": str(run.resolve()),
        "replay_games": line1["train"]["buffer_games"],
        "replay_samples": line1["train"]["buffer_samples"],
        "left_out_files": len(left),
        "left_out_bytes": sum((run / rel).stat().st_size for rel in left)}
    assert state["pack"]["replay_games"] == 4  # 2 warm-start games and 2 self-play games
    assert {k: v for k, v in state.items() if k not in ("files", "pack", "sha256")} == \
        {k: v for k, v in full.items() if k not in ("files", "sha256")}
    assert (state["best_iteration"], state["iteration"]) == (0, 1)
    assert (out / "best.pt").read_bytes() == (run / "checkpoints" / "iter_0000.pt").read_bytes()
    assert (out / "latest.pt").read_bytes() == (run / "checkpoints" / "iter_0001.pt").read_bytes()
    assert (out / "metrics.jsonl").read_bytes() == (run / "metrics.jsonl").read_bytes()
    # small: four copies of the networks (two of them best.pt and latest.pt), the optimiser
    # state, and a few small files
    total = sum((out / p).stat().st_size for p in PACKED)
    assert total - sum((out / p).stat().st_size for p in PACKED if p.endswith(".pt")) < 20_000
    assert total < sum(f.stat().st_size for f in run.rglob("*") if f.is_file()) / 2
    # what it printed: each file with its size, then the total
    assert lines[0] == f"packed iteration 1 of {run} into {out}:"
    assert len(lines) == 2 + len(PACKED) + 1
    assert [line.split()[-1] for line in lines[1:1 + len(PACKED)]] == [
        "config.toml", "config.json", "metrics.jsonl", "checkpoints/iter_0000.pt",
        "checkpoints/iter_0001.pt", "checkpoints/trainer_0001.pt",
        "anchors/iter_0001/random/results.json", "latest.pt", "best.pt", "state.json"]
    assert all(line.startswith("  wrote ") for line in lines[1:1 + len(PACKED)])
    assert re.fullmatch(rf"{len(PACKED)} files, \d+\.\d kB in all; left out: {len(left)} run "
                        r"files, \d+\.\d kB: the replay data \(4 games, \d+ samples in the "
                        r"buffer\), game records, tournament games, older networks, tb/",
                        lines[-2]), lines[-2]
    assert lines[-1] == f"continue the run (on any machine) with: taluva train --resume {out}"


def test_packing_twice_is_idempotent_and_other_directories_are_refused(
        run, pack, continued, tmp_path, capsys) -> None:
    out = tmp_path / "pack"
    shutil.copytree(pack, out)
    before = _files(out)
    (out / "notes.txt").write_text("mine\n")  # not a run file: left alone
    code, lines, err = _cli(capsys, "train", "--pack", str(run), str(out))
    assert (code, err) == (0, [])
    assert all(line.startswith("  unchanged ") for line in lines[1:1 + len(PACKED)])
    assert _files(out) == {**before, "notes.txt": _files(out)["notes.txt"]}
    # what an interrupted resume of the pack left is removed by a new pack
    (out / "selfplay" / "iter_0002").mkdir(parents=True)
    (out / "selfplay" / "iter_0002" / "worker_0.npz").write_bytes(b"x")
    (out / "latest.pt").write_bytes(b"damaged")
    code, lines, err = _cli(capsys, "train", "--pack", str(run), str(out))
    assert (code, err) == (0, [])
    assert [line.split()[-1] for line in lines if line.startswith("  wrote ")] == ["latest.pt"]
    assert _files(out) == {**before, "notes.txt": _files(out)["notes.txt"]}
    assert not (out / "selfplay").exists()

    def refused(target: Path, why: str) -> None:
        code, lines, err = _cli(capsys, "train", "--pack", str(run), str(target))
        assert (code, lines) == (2, [])
        assert err == [f"taluva train: error: {target} exists and is not an earlier pack of "
                       f"{run} ({why}); pack into a new or empty directory"]

    other = tmp_path / "other"
    other.mkdir()
    (other / "data.csv").write_text("1\n")
    refused(other, "it holds data.csv and no state.json")
    shutil.copytree(run, tmp_path / "copy")
    refused(tmp_path / "copy", "it holds a training run, not a pack")
    refused(continued, "it was packed at iteration 1 and has been trained on since (to "
            "iteration 2)")
    state = json.loads((out / "state.json").read_text())
    state["pack"]["run"] = "0" * 64
    (out / "state.json").write_text(json.dumps(state))
    refused(out, f"it is a pack of another run (of {run.resolve()})")
    code, _, err = _cli(capsys, "train", "--pack", str(run), str(run))
    assert (code, err) == (2, [f"taluva train: error: {run} is the run itself; pack it into "
                               "another directory"])
    code, _, err = _cli(capsys, "train", "--pack", str(run), str(out), "--resume", str(run))
    assert (code, err) == (2, ["taluva train: error: --pack RUN OUT goes with no --resume (it "
                               "copies a run's state; continue the pack with: taluva train "
                               "--resume OUT)"])
    code, _, err = _cli(capsys, "train", "--pack", str(tmp_path / "none"), str(out))
    assert (code, err) == (2, [f"taluva train: error: {tmp_path / 'none'}: no such directory "
                               "(the run to pack)"])


def test_a_resumed_pack_rebuilds_its_buffer_and_runs_one_more_iteration(
        pack, continued, tmp_path, capsys) -> None:
    lines = [json.loads(x) for x in (continued / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [0, 1, 2]
    # the buffer started empty: iteration 2 trained on its own two games only
    assert (lines[2]["selfplay"]["games"], lines[2]["train"]["buffer_games"]) == (2, 2)
    assert lines[2]["train"]["buffer_samples"] == lines[2]["selfplay"]["samples"]
    state = json.loads((continued / "state.json").read_text())
    assert state["iteration"] == 2
    assert state["pack"] == json.loads((pack / "state.json").read_text())["pack"]
    assert "selfplay/iter_0002/worker_0.npz" in state["files"]
    assert not (continued / "selfplay" / "iter_0001").exists()
    # the line on stderr, once, when the pack is resumed
    out = tmp_path / "again"
    shutil.copytree(pack, out)
    _one_more(out)
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--no-progress")
    assert (code, err) == (0, [
        f"taluva train: {out} goes on at iteration 2 of 2 (iterations 0-1 are kept): iteration "
        "2 is played from its start, whatever an interrupted run had done of it",
        f"taluva train: {out} config.toml was changed by hand: from iteration 2, iterations 1 "
        "-> 2 (recorded in config_history.jsonl)",
        f"taluva train: {out} is a pack of iteration 1 without its replay data (the samples "
        f"of 4 games ({state['pack']['replay_samples']} samples) in its replay buffer were not "
        "carried): the buffer starts empty and is rebuilt from the self-play of iteration 2 "
        "on"])
    # ... and reproducibly: the same pack continued twice makes the same networks and samples
    again = json.loads((out / "state.json").read_text())["files"]
    for rel in MADE:
        assert again[rel] == state["files"][rel] == _files(out)[rel], rel
    # a later resume rebuilds the same buffer (from iteration 2 on), without the line
    cfg = out / "config.toml"
    cfg.write_text(cfg.read_text().replace("iterations = 2", "iterations = 3"))
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--no-progress")
    assert (code, err) == (0, [  # no pack line; the second hand edit recorded after the first
        f"taluva train: {out} goes on at iteration 3 of 3 (iterations 0-2 are kept): iteration "
        "3 is played from its start, whatever an interrupted run had done of it",
        f"taluva train: {out} config.toml was changed by hand: from iteration 3, iterations 2 "
        "-> 3 (recorded in config_history.jsonl)"])
    history = [json.loads(x) for x in (out / "config_history.jsonl").read_text().splitlines()]
    assert [(h["iteration"], h["changed"]) for h in history] == [
        (2, {"iterations": [1, 2]}), (3, {"iterations": [2, 3]})]
    last = json.loads((out / "metrics.jsonl").read_text().splitlines()[3])
    assert last["train"]["buffer_games"] == 4  # iterations 2 and 3


def test_a_damaged_file_in_a_pack_is_named_with_its_remedy(run, pack, tmp_path,
                                                           capsys) -> None:
    out = tmp_path / "pack"
    shutil.copytree(pack, out)
    _one_more(out)
    trainer = out / "checkpoints" / "trainer_0001.pt"
    trainer.write_bytes(trainer.read_bytes()[:1000])
    remedy = (f"it came with the pack of iteration 1: pack the run again: taluva train --pack "
              f"{run.resolve()} {out}")
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--no-progress")
    assert code == 1 and len(err) == 1
    assert re.fullmatch(rf"taluva train: error: {trainer}: damaged \(its SHA-256 is "
                        rf"[0-9a-f]{{12}}\.\.\., not the [0-9a-f]{{12}}\.\.\. recorded when it "
                        rf"was written\); {re.escape(remedy)}", err[0]), err
    (out / "checkpoints" / "iter_0000.pt").unlink()  # the best network
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--no-progress")
    assert code == 1 and len(err) == 2
    assert err[0] == f"taluva train: error: {out}/checkpoints/iter_0000.pt: missing; {remedy}"
    # the remedy: pack again (the failed resume changed nothing)
    code, _, err = _cli(capsys, "train", "--pack", str(run), str(out))
    assert (code, err) == (0, [])
    assert _files(out) == _files(pack)  # config.toml too: the run's
    # a damaged anchor table (training does not read it) is named and the run goes on
    table = out / "anchors" / "iter_0001" / "random" / "results.json"
    table.write_text(table.read_text() + " ")
    _one_more(out)
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--no-progress")
    assert code == 0 and len(err) == 4
    assert re.fullmatch(rf"{table}: damaged \(.*\); training does not read it and goes on "
                        rf"\({re.escape(remedy)}\)", err[0]), err
    assert err[1].startswith(f"taluva train: {out} goes on at iteration 2 of 2 ")
    assert err[2] == (f"taluva train: {out} config.toml was changed by hand: from iteration "
                      "2, iterations 1 -> 2 (recorded in config_history.jsonl)")
    assert err[3].startswith(f"taluva train: {out} is a pack of iteration 1 without")
    # a state.json that does not match its checksum
    state = out / "state.json"
    code, _, err = _cli(capsys, "train", "--pack", str(run), str(out))
    assert code == 2  # trained on since: no longer a pack to replace
    shutil.rmtree(out)
    shutil.copytree(pack, out)
    state.write_text(state.read_text().replace('"elapsed_s": ', '"elapsed_s": 1'))
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--no-progress")
    assert (code, err) == (1, [f"taluva train: error: {state}: damaged (its content does not "
                               f"match its checksum); {remedy}"])


#: What iteration 2 makes that does not depend on the run directory's path or the time.
MADE = ["checkpoints/iter_0002.pt", "checkpoints/trainer_0002.pt", "latest.pt", "best.pt",
        "selfplay/iter_0002/worker_0.npz", "records/iter_0002/game_0000.jsonl"]


def test_redo_before_the_pack_is_refused(continued, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    shutil.copytree(continued, out)
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--redo", "1", "--no-progress")
    assert (code, err) == (2, [f"taluva train: error: --redo 1: {out} was packed at iteration "
                               "1 and holds no files of the iterations before; give an "
                               "iteration after 1 (or 0 to start the run again)"])
    before = json.loads((out / "state.json").read_text())
    code, _, err = _cli(capsys, "train", "--resume", str(out), "--redo", "2", "--no-progress")
    assert code == 0
    assert err[0] == ("taluva train: redoing iterations 2 to 2: the files of iterations 2 "
                      "onwards are removed")
    assert err[1].startswith(f"taluva train: {out} is a pack of iteration 1 without its "
                             "replay data")
    after = json.loads((out / "state.json").read_text())["files"]
    assert sorted(after) == sorted(before["files"])
    for rel in MADE:
        assert after[rel] == before["files"][rel], rel
