"""The training config's hardening (issue 46): the run's sizes have upper bounds, refused in
one line before any work (docs/alphazero.md, "Config keys"), and a ``[[schedule]]`` is
checked in time linear in its entries. No PyTorch needed."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from taluva_ai.agents.alphazero.config import ConfigError, config_from_dict, sections

#: The bounded sizes (section, key, the largest value taken), as docs/alphazero.md states them.
MOST: list[tuple[str | None, str, int]] = [
    ("selfplay", "sims", 100_000),
    ("selfplay", "fast_sims", 100_000),
    ("selfplay", "leaf_batch", 4_096),
    ("selfplay", "games", 1_000_000),
    ("selfplay", "parallel_games", 16_384),
    ("selfplay", "rollout_samples", 4_096),
    ("selfplay", "value_rollouts", 4_096),
    ("train", "batch_size", 65_536),
    ("train", "steps", 10_000_000),
    (None, "workers", 16_384),
    (None, "iterations", 1_000_000),
]


def _config(section: str | None, key: str, value: Any) -> dict[str, Any]:
    return {key: value} if section is None else {section: {key: value}}


@pytest.mark.parametrize(("section", "key", "most"), MOST)
def test_a_run_size_past_its_upper_bound_is_refused_in_one_line(section, key, most) -> None:
    with pytest.raises(ConfigError) as e:
        config_from_dict(_config(section, key, most + 1), "c.toml")
    where = "c.toml: " if section is None else f"c.toml: [{section}] "
    assert str(e.value) == (f"{where}{key} must be at most {most:_} (a bound far above any "
                            f"run's need, against typing slips), got {most + 1:_}")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(("section", "key", "most"), MOST)
def test_a_run_size_at_its_upper_bound_is_taken(section, key, most) -> None:
    cls = sections.RunConfig if section is None else sections._SECTIONS[section]
    sections.check_fields(cls(**{key: most}), "c.toml: ")  # no refusal


def test_the_bounded_keys_are_exactly_those_documented() -> None:
    owners = [(None, sections.RunConfig), *sections._SECTIONS.items()]
    bounded = {(section, f.name, f.metadata["most"])
               for section, cls in owners for f in dataclasses.fields(cls)
               if f.metadata.get("most") is not None}
    assert bounded == set(MOST)


def test_a_schedule_entry_past_an_upper_bound_is_refused() -> None:
    data = {"iterations": 3, "schedule": [{"at": 2, "selfplay": {"sims": 100_001}}]}
    with pytest.raises(ConfigError, match=r"^x\.toml: \[\[schedule\]\] at = 2: \[selfplay\] "
                                          r"sims must be at most 100_000 "):
        config_from_dict(data, "x.toml")


def test_a_schedule_is_checked_in_time_linear_in_its_entries(monkeypatch) -> None:
    """Each stage of the run (the config at each entry's iteration) is checked, made from the
    stage before by one entry: ``n`` entries apply ``n`` times, not ``n (n + 1) / 2``."""
    applied = []
    real = sections.apply_entry

    def counting(cfg: Any, entry: dict[str, Any]) -> Any:
        applied.append(entry["at"])
        return real(cfg, entry)

    monkeypatch.setattr(sections, "apply_entry", counting)
    n = 120
    schedule = [{"at": k, "train": {"lr": 1e-3 / k}} for k in range(n, 0, -1)]
    cfg = config_from_dict({"iterations": n, "schedule": schedule}, "x.toml")
    assert applied == list(range(1, n + 1))  # once each, in order
    assert [e["at"] for e in cfg.schedule] == list(range(1, n + 1))
    stages = list(cfg.stages())
    assert [at for at, _ in stages] == list(range(1, n + 1))
    assert all(stage == cfg.at(at) for at, stage in stages[::17])  # the same as at()
