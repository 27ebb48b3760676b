"""``[[schedule]]``: the settings a run changes at given iterations, checked (what a
schedule may change, and each entry's values read as its sections' fields;
:mod:`taluva_ai.agents.alphazero.config`).
"""

from __future__ import annotations

from typing import Any

from taluva_ai.agents.alphazero.config.sections import (
    _SECTIONS,
    ConfigError,
    build_section,
)

#: The sections a ``[[schedule]]`` entry may change: what an iteration does. The game, the
#: encoder, the network and the warm start make the run's networks what they are (a
#: checkpoint of another shape could not continue), and the top-level keys are the run's own.
SCHEDULABLE = ("selfplay", "replay", "train", "gating", "anchors")


#: Keys of those sections that a schedule may not change, and why.
_UNSCHEDULABLE = {
    ("train", "optimizer"): "the optimiser's state carries over from one iteration to the "
                            "next; start a new run from the network ([warm_start] init)",
    ("train", "lr_schedule"): "set train.lr in the schedule instead",
}


def _schedule(data: Any, source: str, iterations: int) -> tuple[dict[str, Any], ...]:
    """Check ``[[schedule]]`` (a list of tables, each ``at = N`` and ``section.key = value``
    pairs of :data:`SCHEDULABLE`) and return it sorted by ``at``, values typed as the
    sections' fields."""
    where = f"{source}: [[schedule]]"
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ConfigError(f"{where} must be an array of tables ([[schedule]] entries), got "
                          f"{data!r}")
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for n, raw in enumerate(data, 1):
        w = f"{where} entry {n}"
        at = raw.get("at")
        if not isinstance(at, int) or isinstance(at, bool) or not 1 <= at <= max(iterations, 1):
            raise ConfigError(f"{w}: at must be an iteration number from 1 to iterations "
                              f"({iterations}), got {at!r}")
        if at in seen:
            raise ConfigError(f"{w}: another entry is also at iteration {at}; merge them")
        seen.add(at)
        entry: dict[str, Any] = {"at": at}
        for section, keys in raw.items():
            if section == "at":
                continue
            if section not in SCHEDULABLE or not isinstance(keys, dict):
                raise ConfigError(f"{w} (at = {at}): {section!r} cannot be scheduled; an entry "
                                  f"sets section.key = value for the sections "
                                  f"{', '.join(SCHEDULABLE)}")
            if not keys:
                continue
            for key in keys:
                if (section, key) in _UNSCHEDULABLE:
                    raise ConfigError(f"{w} (at = {at}): {section}.{key} cannot be scheduled: "
                                      f"{_UNSCHEDULABLE[section, key]}")
            cls = _SECTIONS[section]
            built = build_section(cls, dict(keys), f"{w} (at = {at}): [{section}]")
            entry[section] = {k: getattr(built, k) for k in keys}
        if len(entry) == 1:
            raise ConfigError(f"{w} (at = {at}): changes nothing; give section.key = value "
                              "pairs, e.g. train.lr = 5e-4")
        out.append(entry)
    return tuple(sorted(out, key=lambda e: e["at"]))

