"""Checking a training config's agent specs (``[anchors] opponents``, ``[selfplay] opponent``)
reads their names and parameters only: a ``package.module:Class`` spec is never imported,
called or constructed while the config is checked (issue 49)."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import pytest

from taluva_ai.agents.alphazero.config import ConfigError, load_config


@pytest.mark.parametrize("key", ["[anchors]\nopponents = ['{spec}']\n",
                                 "[selfplay]\nopponent = '{spec}'\nopponent_share = 0.25\n"])
def test_checking_a_module_spec_calls_nothing(tmp_path: Path, key: str) -> None:
    target = tmp_path / "created-by-basicConfig.log"
    spec = f"logging:basicConfig:filename={target},filemode=w"
    config = tmp_path / "c.toml"
    config.write_text(key.format(spec=spec), encoding="utf-8")
    handlers = list(logging.getLogger().handlers)
    with contextlib.suppress(ConfigError):  # refused or accepted: either way, nothing ran
        load_config(config)
    assert not target.exists()
    assert logging.getLogger().handlers == handlers


@pytest.mark.parametrize(("spec", "message"), [
    ("no such:Class", "has white space in it"),
    ("pkg..mod:Class", r"unknown agent 'pkg\.\.mod'"),
    ("pkg.mod:9Class", r"unknown agent 'pkg\.mod'"),
    ("pkg.mod:Class:sims", "parameter 'sims' is not key=value"),
    ("pkg.mod:Class:time=0.5", "has a time budget"),
])
def test_a_module_spec_is_checked_by_its_form(tmp_path: Path, spec: str, message: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f"[anchors]\nopponents = ['{spec}']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(config)


def test_a_well_formed_module_spec_is_accepted_without_importing_it(tmp_path: Path) -> None:
    import sys

    config = tmp_path / "c.toml"
    config.write_text("[anchors]\nopponents = ['nosuchpkg_xyz.bots:Bot:sims=8', 'greedy']\n",
                      encoding="utf-8")
    cfg = load_config(config)
    assert cfg.anchors.opponents == ["nosuchpkg_xyz.bots:Bot:sims=8", "greedy"]
    assert "nosuchpkg_xyz" not in sys.modules
