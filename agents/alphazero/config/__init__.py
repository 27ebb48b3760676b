"""Training-run configuration: TOML files (``experiments/configs/*.toml``) read into frozen
dataclasses, every key checked before any work starts.

A config file has top-level keys (:class:`RunConfig`: ``seed``, ``iterations``, ``workers``,
``device``, ``torch_threads``) and the sections ``[game]``, ``[encoder]``, ``[net]``,
``[warm_start]``, ``[selfplay]``, ``[replay]``, ``[train]``, ``[gating]``, ``[anchors]``; each
section's keys are the fields of its dataclass (:mod:`.sections`), and every key is optional
(the defaults are those of the dataclass). docs/alphazero.md lists them all.

The package: :mod:`.sections` (the dataclasses, their checks, and :func:`build_section`, the
one reader of a table into its dataclass), :mod:`.schedule` (``[[schedule]]``), :mod:`.reader`
(the TOML file read and checked, :func:`validate`, written back). Every name is imported from
here.

An unknown section or key, a value of the wrong type or out of range fails with a
:class:`ConfigError` naming the file, the section and the key.
"""

from __future__ import annotations

from taluva_ai.agents.alphazero.config.reader import (
    check_az_params,
    config_from_dict,
    config_to_toml,
    load_config,
    make_encoder_for,
    validate,
)
from taluva_ai.agents.alphazero.config.schedule import (
    SCHEDULABLE,
)
from taluva_ai.agents.alphazero.config.sections import (
    _SECTIONS,
    AZ_DEFAULTS,
    AZ_NO_MCTS_PARAMETERS,
    AZ_OWN_PARAMETERS,
    BUILTIN,
    BUILTIN_DEFAULTS,
    NET_SIZE_LIMITS,
    PRESETS,
    AnchorsSection,
    Bounds,
    ConfigError,
    EncoderSection,
    GameSection,
    GatingSection,
    NetConfig,
    NetSection,
    ReplaySection,
    RunConfig,
    SelfPlaySection,
    TrainSection,
    WarmStartSection,
    apply_entry,
    az_spec_parameters,
    build_section,
    check_fields,
    checked,
)

__all__ = ["AZ_DEFAULTS", "AZ_NO_MCTS_PARAMETERS", "AZ_OWN_PARAMETERS", "BUILTIN",
           "BUILTIN_DEFAULTS", "NET_SIZE_LIMITS", "PRESETS", "SCHEDULABLE", "_SECTIONS",
           "AnchorsSection", "Bounds", "ConfigError", "EncoderSection", "GameSection",
           "GatingSection", "NetConfig", "NetSection", "ReplaySection", "RunConfig",
           "SelfPlaySection", "TrainSection", "WarmStartSection", "apply_entry",
           "az_spec_parameters", "build_section", "check_az_params", "check_fields", "checked",
           "config_from_dict", "config_to_toml", "load_config", "make_encoder_for", "validate"]
