"""A CRLF checkout (``core.autocrlf=true``, Git for Windows' default) keeps the bytes of the
files whose SHA-256 the code checks (issue 49): the committed pack (its ``state.json`` records
every file's checksum), the built-in network (``builtin-<n>p.json`` records the ONNX file's),
records and run files. ``.gitattributes`` marks them ``binary``, ``-text`` or ``eol=lf``."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACK = "packs/strong2-rt"

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(),
    reason="needs git and a git checkout")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=True).stdout


def _checked_files() -> list[str]:
    """The tracked files whose bytes are checked against a recorded SHA-256, or which hold
    such checksums: the pack, the built-in network and its description, records, JSON and
    TOML data."""
    files = _git("ls-files", "-z").split("\0")
    return sorted(f for f in files if f and (
        f.startswith("packs/") or f.endswith((".onnx", ".pt", ".npz", ".jsonl", ".jsonl.gz",
                                             ".json", ".toml"))))


def test_every_checked_file_is_kept_byte_for_byte_by_a_crlf_checkout() -> None:
    files = _checked_files()
    assert f"{PACK}/state.json" in files and "agents/alphazero/data/builtin-2p.onnx" in files
    out = _git("check-attr", "-z", "text", "eol", "--", *files).split("\0")
    attrs: dict[str, dict[str, str]] = {}
    for path, name, value in zip(out[0::3], out[1::3], out[2::3], strict=False):
        attrs.setdefault(path, {})[name] = value
    converted = [f for f in files
                 if attrs[f]["text"] != "unset" and attrs[f]["eol"] != "lf"]
    assert converted == []


def test_a_crlf_checkout_of_the_pack_and_the_builtin_network_matches_their_checksums(
        tmp_path: Path) -> None:
    """Check out (from the index, as ``git clone -c core.autocrlf=true`` would) the pack and
    the built-in network, then check every recorded SHA-256 against the copies."""
    files = [f for f in _checked_files()
             if f.startswith(f"{PACK}/") or f.startswith("agents/alphazero/data/")]
    subprocess.run(["git", "-C", str(ROOT), "-c", "core.autocrlf=true", "-c", "core.eol=crlf",
                    "checkout-index", f"--prefix={tmp_path}/", "--", *files],
                   check=True, capture_output=True)
    pack = tmp_path / PACK
    state = json.loads((pack / "state.json").read_bytes())
    assert state["files"], "the pack records its files' checksums"
    for rel, want in state["files"].items():
        assert hashlib.sha256((pack / rel).read_bytes()).hexdigest() == want, rel
    from taluva_ai.runfiles import json_sha256

    body = {k: v for k, v in state.items() if k != "sha256"}
    assert json_sha256(body) == state["sha256"]
    data = tmp_path / "agents/alphazero/data"
    for meta in sorted(data.glob("builtin-*.json")):
        info = json.loads(meta.read_bytes())
        onnx = meta.with_suffix(".onnx")
        assert hashlib.sha256(onnx.read_bytes()).hexdigest() == info["sha256"], onnx
    # what the checkout wrote is what was committed
    for f in files:
        assert (tmp_path / f).read_bytes() == (ROOT / f).read_bytes(), f
