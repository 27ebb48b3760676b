"""A tournament's settings, as files.

A tournament file (TOML, the CLI's ``--config``; docs/tournaments.md) gives settings for a
run (:func:`read_tournament_file`); the settings that define a run's games are written to its
run directory's ``config.json`` with their checksum (:func:`tournament_config`) and read back,
checked, by a resume or a look at the run (:func:`read_config`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from taluva_ai.errors import RunConfigError
from taluva_ai.runfiles import MAX_CONFIG_BYTES, json_sha256, read_regular
from taluva_ai.tournament.play import DEFAULT_TIME_MARGIN

#: Value of ``config.json``'s ``format`` field in a tournament directory.
TOURNAMENT_FORMAT = "taluva-ai-tournament/2"


def tournament_config(
    agent_specs: Sequence[str],
    games: int,
    players_per_game: int,
    seed: int,
    game_name: str,
    rules: dict[str, Any],
    gauntlet: str | None = None,
    sprt: dict[str, Any] | None = None,
    time_margin: float = DEFAULT_TIME_MARGIN,
    deals_sha256: str | None = None,
    agent_files: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The settings that define a tournament's games (``out_dir/config.json``); with a deal
    file, ``deals_sha256`` is the SHA-256 of the deals played (``out_dir/deals.jsonl``);
    ``agent_files``: agent spec -> ``{file: SHA-256}`` of the agents that read files (their
    networks, :func:`pinned_files`), left out when no agent does."""
    extra: dict[str, Any] = {} if deals_sha256 is None else {"deals_sha256": deals_sha256}
    files = {s: dict(f) for s, f in (agent_files or {}).items() if f}
    if files:
        extra["agent_files"] = files
    return {
        "format": TOURNAMENT_FORMAT,
        "game": game_name,
        "rules": rules,
        "agents": list(agent_specs),
        "gauntlet": gauntlet,
        "games_per_group": games,
        "players_per_game": players_per_game,
        "seed": seed,
        "sprt": sprt,
        "time_margin_s": float(time_margin),
        **extra,
    }


#: Keys of a tournament file (TOML) and the types of their values.
TOURNAMENT_FILE_KEYS: dict[str, tuple[type, ...]] = {
    "agents": (list,), "gauntlet": (str, dict), "games": (int,), "players_per_game": (int,),
    "concurrency": (int,), "seed": (int,), "out": (str,), "sprt": (dict,),
    "time_margin": (int, float), "bootstrap": (int,), "rules": (dict,), "defer": (list,),
    "deals": (str,),
}


def read_tournament_file(path: str | Path) -> dict[str, Any]:
    """The settings of a tournament file (TOML, read with :mod:`tomllib`; docs/tournaments.md).

    Top-level keys (all optional): ``agents`` (a list of specs, or of tables ``{agent =
    "mcts", sims = 400, ...}`` whose other keys are the agent's parameters), ``gauntlet`` (a
    spec or such a table), ``games``, ``players_per_game``, ``concurrency``, ``seed``,
    ``out``, ``time_margin``, ``bootstrap``, ``sprt`` (a table: ``elo0``, ``elo1``, ``alpha``,
    ``beta``, ``model``), ``rules`` (a table of the game's options, e.g.
    ``tiles_per_player = 12``), ``defer`` (agents whose games are played last, as in
    ``agents``; see :func:`run_tournament`) and ``deals`` (a deal file, relative to the
    current directory as ``out`` is).

    Returns:
        The settings, agents and gauntlet as spec strings (``"mcts:sims=400,..."``).

    Raises:
        ValueError: the file is not valid TOML, has an unknown key or a value of a wrong
            type; the message names the file and the key.
        OSError: the file cannot be read.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    p = Path(path)
    try:
        data = tomllib.loads(read_regular(p, "a config", MAX_CONFIG_BYTES).decode("utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{p}: not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: not UTF-8 text: {e}") from None
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in TOURNAMENT_FILE_KEYS:
            raise ValueError(f"{p}: unknown key {key!r}; known: "
                             f"{', '.join(TOURNAMENT_FILE_KEYS)}")
        want = TOURNAMENT_FILE_KEYS[key]
        if isinstance(value, bool) or not isinstance(value, want):
            words: dict[type, str] = {str: "a string", dict: "a table", list: "an array"}
            names = " or ".join("a number" if t is float else "an integer" if t is int
                                else words[t] for t in want if not (t is int and float in want))
            raise ValueError(f"{p}: {key} must be {names}, got {value!r}")
        if key in ("agents", "defer"):
            items = cast(list[Any], value)
            out[key] = [_spec_of(item, f"{p}: {key}[{i}]") for i, item in enumerate(items)]
        elif key == "gauntlet":
            out[key] = _spec_of(value, f"{p}: gauntlet")
        else:
            out[key] = value
    return out


def _spec_of(item: Any, where: str) -> str:
    """An agent spec from a tournament file's entry: a string, or a table ``{agent = name,
    key = value, ...}``."""
    if isinstance(item, str):
        return item
    if not isinstance(item, dict) or not isinstance(item.get("agent"), str):
        raise ValueError(f"{where}: an agent is a spec string or a table with an 'agent' name, "
                         f"got {item!r}")
    params = []
    for key, v in item.items():
        if key == "agent":
            continue
        if isinstance(v, bool):
            text = "true" if v else "false"
        elif isinstance(v, (int, float)):
            text = repr(v)
        elif isinstance(v, str) and not any(c in v for c in ",=:"):
            text = v
        else:
            raise ValueError(f"{where}: parameter {key} = {v!r} must be a number, a boolean "
                             "or a string without ',', '=' or ':'")
        params.append(f"{key}={text}")
    return item["agent"] + (":" + ",".join(params) if params else "")


def read_config(path: Path) -> dict[str, Any]:
    """A tournament's ``config.json``.

    Raises:
        RunConfigError: missing, unreadable, not an object, or of another format.
    """
    if not path.exists():
        raise RunConfigError(f"{path}: no such file; is {path.parent} a tournament's run "
                             "directory?")
    try:
        cfg = json.loads(read_regular(path))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise RunConfigError(f"{path}: unreadable ({e}); use another --out") from None
    except OSError as e:
        raise RunConfigError(f"{path}: unreadable ({e.strerror or e}); use another "
                             "--out") from None
    if not isinstance(cfg, dict):
        raise RunConfigError(f"{path}: unreadable (a JSON {type(cfg).__name__}, not "
                             "a tournament's settings object); use another --out")
    if "sha256" in cfg:  # written with the checksum of its settings (older runs: without)
        digest = cfg.pop("sha256")
        if digest != json_sha256(cfg):
            raise RunConfigError(
                f"{path}: damaged (its settings do not match the checksum written with "
                "them); run the tournament's command again with another --out")
    return cfg
