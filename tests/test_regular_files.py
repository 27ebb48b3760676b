"""Input and run files are read only if they are regular files, up to a size (issue 49): a
``--config``, a ``--deals`` file, a tournament's ``config.json``, a training run's
``state.json``, ``metrics.jsonl``, ``config.json`` and ``config.toml``, a solo ladder's
``config.json`` and result files go through
:func:`taluva_ai.runfiles.read_regular`, which refuses a FIFO (opening it would wait for a
writer), a device (a symbolic link to ``/dev/zero`` filled the memory), a directory, and a
file over its cap, in one line naming the file. The training run's files are tested in
tests/test_alphazero_train.py (they need a run)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from taluva_ai.cli import main
from taluva_ai.runfiles import MAX_CONFIG_BYTES, open_regular, read_regular
from taluva_ai.tournament import run_tournament

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(),
                                reason="needs FIFOs and /dev/zero")

KINDS = {"fifo": "a FIFO", "zero": "a character device", "dir": "a directory",
         "dirlink": "a directory"}


def _special(tmp_path: Path, kind: str, name: str = "f") -> Path:
    """A path of ``kind`` in ``tmp_path``: a FIFO, a symbolic link to /dev/zero, a directory,
    or a symbolic link to a directory."""
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "dir":
        path.mkdir()
    else:
        (tmp_path / f"{name}.d").mkdir()
        path.symlink_to(tmp_path / f"{name}.d")
    return path


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_only_a_regular_file_is_read(tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    for read in (read_regular, open_regular):
        with pytest.raises(OSError) as info:
            read(path, "a config")
        assert (info.value.errno, info.value.strerror, info.value.filename) == (
            errno.EINVAL, f"not a regular file ({KINDS[kind]}); a config is a file", str(path))
    with pytest.raises(OSError) as info:
        read_regular(path)
    assert info.value.strerror == f"not a regular file ({KINDS[kind]})"


def test_a_file_over_the_cap_is_refused_and_a_link_to_a_file_is_read(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    link = tmp_path / "link"
    link.symlink_to(f)
    assert read_regular(link, "a config", max_bytes=10) == b"x" * 10
    with pytest.raises(OSError) as info:
        read_regular(link, "a config", max_bytes=9)
    assert (info.value.errno, info.value.strerror, info.value.filename) == (
        errno.EFBIG, "larger than 9 bytes, more than a config may have", str(link))


@pytest.mark.parametrize("kind", [*sorted(KINDS), "big"])
def test_a_tournament_config_that_is_not_a_regular_file_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    if kind == "big":
        path = tmp_path / "big.toml"
        path.write_bytes(b"#" * (MAX_CONFIG_BYTES + 1))
        reason = f"larger than {MAX_CONFIG_BYTES} bytes, more than a config may have"
    else:
        path = _special(tmp_path, kind)
        reason = f"not a regular file ({KINDS[kind]}); a config is a file"
    with pytest.raises(SystemExit) as info:
        main(["tournament", "--agents", "random", "greedy", "--out", str(tmp_path / "x"),
              "--config", str(path), "--no-progress"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        f"taluva tournament: error: --config: {path}: {reason}"
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_deal_file_that_is_not_a_regular_file_is_refused_in_one_line(
        tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    with pytest.raises(ValueError) as info:
        run_tournament(["random", "greedy"], 2, tmp_path / "run", deals=path,
                       progress=False, plots=False)
    assert str(info.value) == \
        f"deals: {path}: not a regular file ({KINDS[kind]}); a deal file is a file"
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_tournament_run_s_config_json_that_is_not_a_regular_file_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    path = _special(run, kind, "config.json")
    with pytest.raises(SystemExit) as info:
        main(["tournament", "--resume", str(run), "--no-progress"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"taluva tournament: error: {path}: unreadable (not a regular file ({KINDS[kind]})); "
        "use another --out")


@pytest.mark.parametrize("kind", ["fifo", "zero", "dir"])
def test_a_training_config_that_is_not_a_regular_file_is_refused_in_one_line(
        tmp_path: Path, kind: str) -> None:
    pytest.importorskip("torch")
    from taluva_ai.agents.alphazero.config import ConfigError, load_config

    path = _special(tmp_path, kind)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == \
        f"{path}: cannot read the config (not a regular file ({KINDS[kind]}); a config is a file)"


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_solo_ladder_s_config_json_that_is_not_a_regular_file_is_refused(
        tmp_path: Path, kind: str) -> None:
    from taluva_ai.solo_ladder import SoloLadderConfig, play

    out = tmp_path / "ladder"
    out.mkdir()
    path = _special(out, kind, "config.json")
    with pytest.raises(OSError) as info:
        play(SoloLadderConfig(agents=["random"], games=1, out=str(out)))
    assert (info.value.strerror, info.value.filename) == (
        f"not a regular file ({KINDS[kind]})", str(path))
