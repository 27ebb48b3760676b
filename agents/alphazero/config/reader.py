"""Reading a training config: the TOML file read (:func:`load_config`), each section built
and checked (:func:`config_from_dict`, :func:`validate`: the rules that tie fields
together, the game, encoder and agent specs built once), and written back
(:func:`config_to_toml`; :mod:`taluva_ai.agents.alphazero.config`).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from taluva_ai.agents.alphazero.config.schedule import _schedule
from taluva_ai.agents.alphazero.config.sections import (
    _SECTIONS,
    AZ_NO_MCTS_PARAMETERS,
    AZ_OWN_PARAMETERS,
    BUILTIN,
    ConfigError,
    RunConfig,
    TrainSection,
    build_section,
    check_fields,
)
from taluva_ai.runfiles import MAX_CONFIG_BYTES, read_regular


def config_from_dict(data: dict[str, Any], source: str = "config") -> RunConfig:
    """Build and check a :class:`RunConfig` from a nested dict (a parsed TOML file).

    In ``[game]``, keys other than ``name`` and ``num_players`` are rule options (gathered
    into ``rules``).

    Raises:
        ConfigError: an unknown section or key, a wrong type, a value out of range, or rule
            and encoder options the game refuses.
    """
    data = dict(data)
    schedule = data.pop("schedule", None)  # read once iterations is known
    cfg: RunConfig = build_section(RunConfig, data, source)
    if schedule is not None:
        cfg = dataclasses.replace(cfg, schedule=_schedule(schedule, source, cfg.iterations))
    validate(cfg, source)
    for at, stage in cfg.stages():  # each stage of the run is a whole, valid config
        validate(stage, f"{source}: [[schedule]] at = {at}")
    return cfg


def load_config(path: str | Path) -> RunConfig:
    """Read and check a TOML config file.

    Raises:
        ConfigError: unreadable file, bad TOML, or a bad key or value (named).
    """
    p = Path(path)
    try:
        data = tomllib.loads(read_regular(p, "a config", MAX_CONFIG_BYTES).decode("utf-8"))
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the config ({e.strerror or e})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: not valid TOML ({e})") from None
    return config_from_dict(data, str(p))


def _need(cond: bool, source: str, message: str) -> None:
    if not cond:
        raise ConfigError(f"{source}: {message}")


def validate(cfg: RunConfig, source: str = "config") -> None:
    """Each field's bounds or choices (declared with :func:`checked`, made by
    :func:`check_fields`), the rules that tie fields together, and the game, encoder,
    network and agent specs built once (so a bad option fails here, before any work).

    Raises:
        ConfigError: the first problem found, named.
    """
    s = source
    check_fields(cfg, f"{s}: ")
    for name in _SECTIONS:
        check_fields(getattr(cfg, name), f"{s}: [{name}] ")
    sp, tr, ga, an, ws = cfg.selfplay, cfg.train, cfg.gating, cfg.anchors, cfg.warm_start
    _need((sp.rollout == "none") == (sp.rollout_lambda == 0.0), s,
          "[selfplay] rollout and rollout_lambda go together: rollout='none' with "
          "rollout_lambda=0, or a rollout with rollout_lambda > 0")
    _need(bool(sp.opponent) == (sp.opponent_share > 0), s,
          "[selfplay] opponent and opponent_share come together: an opponent spec and a "
          f"share above 0 (got opponent = {sp.opponent!r}, opponent_share = "
          f"{sp.opponent_share})")
    _need(cfg.net.aux_head or tr.aux_weight == TrainSection.aux_weight, s,
          f"[train] aux_weight = {tr.aux_weight} weighs the auxiliary head's loss: it needs "
          f"[net] aux_head = true")
    _need(cfg.net.ownership_head or tr.ownership_weight == TrainSection.ownership_weight, s,
          f"[train] ownership_weight = {tr.ownership_weight} weighs the ownership head's loss: "
          f"it needs [net] ownership_head = true")
    _need(tr.priority_alpha > 0 or tr.priority_beta == TrainSection.priority_beta, s,
          f"[train] priority_beta = {tr.priority_beta} corrects prioritized replay: it needs "
          "[train] priority_alpha > 0")
    _need(tr.value_target_mix + tr.rollout_target_mix <= 1.0, s,
          f"[train] value_target_mix + rollout_target_mix must be <= 1, got "
          f"{tr.value_target_mix} + {tr.rollout_target_mix}")
    _need(tr.rollout_target_mix == 0 or sp.value_rollouts > 0, s,
          f"[train] rollout_target_mix = {tr.rollout_target_mix} mixes in the rollouts' "
          f"result: it needs [selfplay] value_rollouts > 0")
    seen: dict[int, str] = {}
    for key, value in tr.lr_schedule.items():
        _need(key.isascii() and key.isdigit(), s,
              f"[train] lr_schedule: the key {key!r} is not an iteration number (0, 1, ...)")
        _need(int(key) not in seen, s, f"[train] lr_schedule: the keys {seen.get(int(key))!r} "
              f"and {key!r} name the same iteration")
        seen[int(key)] = key
        _need(not isinstance(value, bool) and isinstance(value, (int, float))
              and math.isfinite(value) and value > 0, s,
              f"[train] lr_schedule: iteration {key}'s learning rate must be a number > 0, "
              f"got {value!r}")
    _need(ga.elo1 > ga.elo0, s, "[gating] elo1 must be greater than elo0")
    _need(len(set(an.opponents)) == len(an.opponents), s, "[anchors] opponents must be distinct")
    _need(ws.init == ws.init.strip(), s,
          f"[warm_start] init must be a checkpoint path or \"\" (none), got {ws.init!r}")
    _need(ws.expert == "heuristic" or ws.expert.split(":")[0] == "mcts", s,
          f"[warm_start] expert must be 'heuristic' or an mcts:... spec, got {ws.expert!r}")
    _need(cfg.device == "auto" or cfg.device.split(":")[0] in ("cpu", "cuda", "mps"), s,
          f"device must be auto, cpu or cuda[:N], got {cfg.device!r}")
    _build_parts(cfg, s)


def _build_parts(cfg: RunConfig, s: str) -> None:
    """Make the game, encoder, network size and agent specs once, turning their errors into
    ConfigErrors."""
    from taluva_ai.agents.base import make_agent
    from taluva_ai.protocol import make_game

    _need(not cfg.game.rules.get("solo") or cfg.game.num_players == 1, s,
          f"[game]: the solo variant has one player: num_players = 1, got "
          f"{cfg.game.num_players}")
    try:
        game = make_game(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.rules)
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{s}: [game]: {e}") from None
    try:
        encoder = make_encoder_for(cfg)
    except ValueError as e:
        raise ConfigError(f"{s}: [encoder]: {e}") from None
    try:
        cfg.net.sizes()
    except ValueError as e:
        raise ConfigError(f"{s}: [net]: {e}") from None
    problem = cfg.net.problem_with(encoder, cfg.game.name)
    _need(problem is None, s, str(problem))
    if cfg.train.elimination_weight != TrainSection.elimination_weight:
        import numpy as np

        probe = np.zeros((1, max(cfg.game.num_players, 1), encoder.num_aux), dtype=np.float32)
        _need(encoder.num_aux > 0 and encoder.eliminated(probe) is not None, s,
              f"[train] elimination_weight = {cfg.train.elimination_weight}: the "
              f"{encoder.name} encoding (this game, these options) cannot tell which games "
              "ended with an elimination")
    if cfg.warm_start.games and cfg.warm_start.expert == "heuristic":
        state = game.new_initial_state(seed=0)
        _need(hasattr(state, "heuristic_values"), s, "[warm_start] expert='heuristic' needs a "
              "game with heuristic_values(); give an mcts:... expert")
    if cfg.selfplay.value_rollouts or cfg.selfplay.rollout != "none":
        state = game.new_initial_state(seed=0)
        _need(hasattr(state, "rollout"), s, f"[selfplay]: the {cfg.game.name} game has no "
              "compiled rollout (state.rollout()): rollout and value_rollouts need one")
    if cfg.warm_start.games and cfg.warm_start.expert != "heuristic":
        _refuse_time_budget(cfg.warm_start.expert, f"{s}: [warm_start] expert")
        try:
            agent = make_agent(cfg.warm_start.expert, seed=0)
        except ValueError as e:
            raise ConfigError(f"{s}: [warm_start] expert: {e}") from None
        _need(hasattr(agent, "root_policy"), s, "[warm_start] expert must be an MCTS agent")
    if cfg.selfplay.opponent:
        _need(cfg.game.num_players > 1, s, "[selfplay] opponent: the solo variant has no other "
              "seat for it to play")
        _check_fixed_agent(cfg.selfplay.opponent, "[selfplay] opponent", game, s,
                           "the run's own networks play the other seats")
    for op in cfg.anchors.opponents:
        _check_fixed_agent(op, "[anchors] opponents", game, s,
                           "the run's own networks play the anchors, with [anchors] az")
    for name, params in (("gating", cfg.gating.az), ("anchors", cfg.anchors.az)):
        check_az_params(params, f"{s}: [{name}] az")


def _check_fixed_agent(spec: str, key: str, game: Any, where: str, why: str) -> None:
    """Check an agent spec of a config key that takes fixed agents (``[anchors] opponents``,
    ``[selfplay] opponent``): any agent but ``az``, and ``az:builtin`` (the packaged network,
    a fixed one, for 2-player Taluva only), written without white space (the spec is also the
    player's name in the tournaments and records). A registered agent is made once with
    seed 0; a ``package.module:Class`` spec is checked by its form and parameters only:
    checking it imports, calls and constructs nothing (the run makes it when it plays).

    Raises:
        ConfigError: white space in the spec, a malformed spec, ``az:path=...`` (a run's file,
            which may change), a time budget (``time=...``: the games would not repeat), or
            a spec that does not make an agent for ``game`` (one line, naming ``key``)."""
    from taluva_ai.agents.base import (
        known_agents,
        make_agent,
        parse_agent_spec,
        spec_key,
    )

    _need(not any(c.isspace() for c in spec), where,
          f"{key}: {spec!r} has white space in it; write an agent spec without any (e.g. "
          "az:builtin,sims=64)")
    head, _, rest = spec.partition(":")
    if head not in known_agents():
        cls_name = rest.partition(":")[0]
        _need(bool(head) and all(p.isidentifier() for p in head.split("."))
              and cls_name.isidentifier(), where,
              f"{key}: unknown agent {head!r}; known: {', '.join(known_agents())}, or "
              "package.module:Class")
        try:
            spec_key(spec)  # the parameters' form; nothing is imported
        except ValueError as e:
            raise ConfigError(f"{where}: {key}: {e}") from None
        _refuse_time_budget(spec, f"{where}: {key}")
        return
    try:
        name, params = parse_agent_spec(spec)
    except ValueError as e:
        raise ConfigError(f"{where}: {key}: {e}") from None
    _need(name != "az" or str(params.get("path")) == BUILTIN, where,
          f"{key}: fixed agents only: az:builtin is one, {spec} is not ({why})")
    _refuse_time_budget(spec, f"{where}: {key}")
    try:
        agent = make_agent(spec, seed=0)
        check_game = getattr(agent, "check_game", None)
        if check_game is not None:  # az:builtin: 2-player Taluva only
            check_game(game)
    except (ValueError, ImportError, AttributeError) as e:  # CheckpointError is a ValueError
        raise ConfigError(f"{where}: {key}: {e}") from None


def _refuse_time_budget(spec: str, where: str, shown: str | None = None) -> None:
    """Refuse an agent spec with a time budget (``time=S``, however the agent is named):
    a run's games would depend on the machine's speed and load, so they would not repeat.
    ``shown``: what the message quotes (default ``spec``).

    Raises:
        ConfigError: the spec has one (one line, naming ``where``)."""
    from taluva_ai.agents.base import time_budget

    try:
        budget = time_budget(spec)  # the arena's own reading of time=, however it is named
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None
    _need(budget is None, where,
          f"{spec if shown is None else shown} has a time budget, which makes a run's games "
          "depend on the machine's speed and load; drop time=... (a search takes a number "
          "of simulations, sims=..., instead)")


def check_az_params(params: str, where: str) -> None:
    """Check ``az`` agent parameters (``"sims=32,rollout=greedy"``) without a checkpoint.

    Raises:
        ConfigError: a malformed or unknown parameter, ``path`` given (the run sets it), or
            a time budget (the games would not repeat).
    """
    from taluva_ai.agents.base import parse_agent_spec
    from taluva_ai.agents.mcts import MCTSConfig

    try:
        _, p = parse_agent_spec("az:" + params if params else "az")
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None
    if "path" in p or "seed" in p:
        raise ConfigError(f"{where}: path and seed are set by the run, not here")
    _refuse_time_budget("az:" + params if params else "az", where, repr(params))
    own = set(AZ_OWN_PARAMETERS) - {"path"}
    mcts = {f.name for f in dataclasses.fields(MCTSConfig)} - {*AZ_NO_MCTS_PARAMETERS,
                                                               "compiled"}
    bad = sorted(set(p) - own - mcts)
    if bad:
        raise ConfigError(f"{where}: unknown parameter(s) {', '.join(bad)}; known: "
                          f"{', '.join(sorted(own | mcts))}")
    try:  # the values too, before any work (MCTSConfig checks types and ranges)
        MCTSConfig(**{k: v for k, v in p.items() if k in mcts and k not in own})
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None
    lam = p.get("lambda", 0.0)
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
        raise ConfigError(f"{where}: lambda must be a number in [0, 1], got {lam!r}")


def make_encoder_for(cfg: RunConfig) -> Any:
    """The run's network encoder (``[encoder]`` options, 0 meaning the default)."""
    from taluva_ai.agents.alphazero.encoder import make_encoder

    opts = {k: v for k, v in dataclasses.asdict(cfg.encoder).items() if v}
    return make_encoder(cfg.game.name, cfg.game.num_players, **opts)


def config_to_toml(cfg: RunConfig) -> str:
    """The config as TOML text (the run directory's ``config.toml``; written by ``tomli_w``),
    with the rule options among ``[game]``'s keys; reading it back gives the same config."""
    import tomli_w

    d = cfg.to_dict()
    schedule = d.pop("schedule", [])
    game = d["game"]
    game.update({k: v for k, v in game.pop("rules").items() if v is not None})
    text = tomli_w.dumps(d)
    for entry in schedule:  # as written by hand: [[schedule]], at, then section.key = value
        text += f"\n[[schedule]]\nat = {entry['at']}\n"
        for section, keys in entry.items():
            if section != "at":
                text += "".join(f"{section}.{tomli_w.dumps({k: v})}" for k, v in keys.items())
    return text

